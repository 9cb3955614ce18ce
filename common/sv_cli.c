// SPDX-License-Identifier: Apache-2.0
/*
 * The command line from the sv_config table: getopt_long's tables, the passes, --help, --features.
 * See sv_cli.h. The library writes only to the FILE * it is given (getopt's own messages are off).
 */
#include "sv_cli.h"

#include <errno.h>
#include <getopt.h>
#include <string.h>

#include "sv_json.h"

#ifndef SVKIT_VERSION
#define SVKIT_VERSION "0"
#endif

/* Options of one program at most: getopt_long's table is built on the stack. */
#define CLI_MAX_OPTS 128
/* getopt_long's val for the option of row i (short options return their letter). */
#define CLI_VAL_BASE 0x1000

#define HELP_COL 27   /* where the help text of an option starts */
#define HELP_WIDTH 108 /* where it wraps */

struct cli_opts {
	struct option lo[CLI_MAX_OPTS + 1];
	const struct sv_cfg_key *row[CLI_MAX_OPTS];
	char shorts[2 + 2 * CLI_MAX_OPTS];
	unsigned n;
};

static bool has_opt(const struct sv_cfg_key *k)
{
	return k->opt.name != NULL;
}

static int opts_build(const struct sv_cfg_key *tab, struct cli_opts *o)
{
	size_t ns = 0;

	memset(o, 0, sizeof(*o));
	o->shorts[ns++] = ':'; /* a missing argument is ':', not '?': two messages */
	for (const struct sv_cfg_key *k = tab; k->name; k++) {
		if (!has_opt(k))
			continue;
		if (o->n == CLI_MAX_OPTS)
			return -ENOMEM;
		o->lo[o->n] = (struct option){ k->opt.name, k->opt.arg ? required_argument : no_argument, NULL,
					       CLI_VAL_BASE + (int)o->n };
		o->row[o->n++] = k;
		if (k->opt.short_name) {
			o->shorts[ns++] = (char)k->opt.short_name;
			if (k->opt.arg)
				o->shorts[ns++] = ':';
		}
	}
	return 0;
}

static bool has_id(const struct sv_cfg_key *tab, int id)
{
	for (const struct sv_cfg_key *k = tab; k->name; k++)
		if (has_opt(k) && k->opt.id == id)
			return true;
	return false;
}

static const struct sv_cfg_key *opts_row(const struct cli_opts *o, int c)
{
	if (c >= CLI_VAL_BASE && c < CLI_VAL_BASE + (int)o->n)
		return o->row[c - CLI_VAL_BASE];
	for (unsigned i = 0; i < o->n; i++)
		if (o->row[i]->opt.short_name == c)
			return o->row[i];
	return NULL;
}

/* The next option of @argv; NULL at the end. *@bad: getopt refused one (said on @err). */
static const struct sv_cfg_key *next_opt(const struct sv_cli_prog *p, const struct cli_opts *o, int argc,
					 char **argv, FILE *err, bool *bad)
{
	int c = getopt_long(argc, argv, o->shorts, o->lo, NULL);
	const char *arg = argv[optind - 1];

	*bad = false;
	if (c == -1)
		return NULL;
	if (c == '?' || c == ':') {
		/* a short option's letter is in optopt; a long option is the word getopt just passed */
		if (optopt && optopt < CLI_VAL_BASE)
			fprintf(err, "%s: option '-%c' %s\n", p->name, optopt,
				c == ':' ? "needs an argument" : "is not known");
		else
			fprintf(err, "%s: option '%s' %s\n", p->name, arg,
				c == ':' ? "needs an argument" : "is not known (or ambiguous)");
		fprintf(err, "Try '%s --help'.\n", p->name);
		*bad = true;
		return NULL;
	}
	return opts_row(o, c);
}

/* The key an option sets (its own row, or the path it names); NULL: none. */
static const struct sv_cfg_key *target_key(const struct sv_cli_prog *p, const struct sv_cfg_key *row)
{
	if (row->type != SV_CFG_CLI)
		return row;
	return row->opt.key ? sv_config_find_path(p->tab, row->opt.key) : NULL;
}

/* Sets the key @row names (if any), then calls the hook (id > 0). 0, or -EINVAL said on @err. */
static int apply(const struct sv_cli_prog *p, const struct sv_cfg_key *row, const char *arg, void *obj,
		 struct sv_cli *cli, FILE *err)
{
	struct sv_cfg_error cerr = { 0 };
	const char *path = row->type == SV_CFG_CLI ? row->opt.key : row->name;
	const char *value = arg ? arg : row->opt.value ? row->opt.value : "true";

	switch (row->opt.id) {
	case SV_CLI_SET:
		if (sv_config_set(p->tab, obj, arg, &cerr)) {
			fprintf(err, "%s: %s\n", p->name, cerr.text);
			return -EINVAL;
		}
		return 0;
	case SV_CLI_PRINT_CONFIG:
		cli->print_config = true;
		return 0;
	case SV_CLI_READY_FILE:
		cli->ready_file = arg;
		return 0;
	default:
		break;
	}
	if (path && sv_config_set_value(p->tab, obj, path, value, &cerr))
		goto bad;
	if (row->opt.id > 0 && p->option && p->option(p->ctx, row, arg, &cerr))
		goto bad;
	return 0;
bad:
	if (row->opt.short_name)
		fprintf(err, "%s: --%s (-%c): %s\n", p->name, row->opt.name, row->opt.short_name, cerr.msg);
	else
		fprintf(err, "%s: --%s: %s\n", p->name, row->opt.name, cerr.msg);
	return -EINVAL;
}

/* One pass over @argv applying the options whose SV_OPT_EARLY flag is @early. */
static int apply_pass(const struct sv_cli_prog *p, const struct cli_opts *o, int argc, char **argv, void *obj,
		      struct sv_cli *cli, bool early, FILE *err)
{
	const struct sv_cfg_key *row;
	bool bad;

	optind = 0;
	while ((row = next_opt(p, o, argc, argv, err, &bad))) {
		if (row->opt.id < 0 && row->opt.id != SV_CLI_SET && row->opt.id != SV_CLI_PRINT_CONFIG &&
		    row->opt.id != SV_CLI_READY_FILE)
			continue; /* the first pass's */
		if (!!(row->opt.flags & SV_OPT_EARLY) != early)
			continue;
		if (apply(p, row, row->opt.arg ? optarg : NULL, obj, cli, err))
			return -EINVAL;
	}
	return bad ? -EINVAL : 0;
}

int sv_cli_parse(const struct sv_cli_prog *p, int argc, char **argv, void *obj, struct sv_cli *cli, FILE *out,
		 FILE *err)
{
	struct cli_opts o;
	struct sv_cfg_error cerr = { 0 };
	const struct sv_cfg_key *row;
	bool bad;
	int rc;

	memset(cli, 0, sizeof(*cli));
	if (opts_build(p->tab, &o)) {
		fprintf(err, "%s: more than %d options\n", p->name, CLI_MAX_OPTS);
		return -ENOMEM;
	}
	opterr = 0;
	/* Pass 1: what ends the run at once, and the file, wherever they stand. */
	optind = 0;
	while ((row = next_opt(p, &o, argc, argv, err, &bad))) {
		switch (row->opt.id) {
		case SV_CLI_HELP:
			sv_cli_help(p, obj, out);
			return SV_CLI_DONE;
		case SV_CLI_VERSION:
			fprintf(out, "%s (svkit) %s\n", p->name, SVKIT_VERSION);
			return SV_CLI_DONE;
		case SV_CLI_FEATURES:
			return sv_cli_features(p, out) ? -EIO : SV_CLI_DONE;
		case SV_CLI_HELP_CONFIG:
			fprintf(out, "%s configuration keys (YAML%s):\n", p->name,
				has_id(p->tab, SV_CLI_SET) ? "; the same paths work with --set KEY=VALUE" : "");
			sv_config_help(p->tab, out);
			return SV_CLI_DONE;
		case SV_CLI_CONFIG:
			cli->config = optarg;
			break;
		default:
			break;
		}
	}
	if (bad)
		return -EINVAL;
	if (cli->config && sv_config_load_file(p->tab, obj, cli->config, &cerr)) {
		fprintf(err, "%s: %s\n", p->name, cerr.text);
		return -EINVAL;
	}
	rc = apply_pass(p, &o, argc, argv, obj, cli, true, err);
	if (rc)
		return rc;
	if (p->loaded && p->loaded(p->ctx, obj, cli->config, err))
		return -EINVAL;
	rc = apply_pass(p, &o, argc, argv, obj, cli, false, err);
	if (rc)
		return rc;
	cli->operands = optind;
	if (optind < argc && !p->operands) {
		fprintf(err, "%s: unexpected argument '%s'\nTry '%s --help'.\n", p->name, argv[optind], p->name);
		return -EINVAL;
	}
	return SV_CLI_RUN;
}

int sv_cli_exit(int rc)
{
	if (rc == SV_CLI_DONE || rc == SV_CLI_RUN)
		return SV_EXIT_OK;
	return rc == -EINVAL ? SV_EXIT_USAGE : SV_EXIT_RUNTIME;
}

int sv_cli_uint(const struct sv_cfg_key *row, const char *arg, uint64_t *v, struct sv_cfg_error *err)
{
	char range[80];

	if (sv_parse_uint64(arg, v)) {
		snprintf(err->msg, sizeof(err->msg), "'%.200s' is not an unsigned integer", arg);
		return -EINVAL;
	}
	if (!sv_config_format_range(row, range, sizeof(range)) && ((double)*v < row->min || (double)*v > row->max)) {
		snprintf(err->msg, sizeof(err->msg), "%.100s is out of range %s", arg, range);
		return -EINVAL;
	}
	return 0;
}

/* ---- --help ---- */

/* A space that wrap() does not break at: the values and default stay together. */
#define NBSP '\x01'

/* Writes @text from column @col (the cursor is there), wrapped at HELP_WIDTH; explicit newlines kept. */
static void wrap(FILE *f, const char *text, int col)
{
	int at = col;

	while (*text) {
		size_t word = strcspn(text, " \n");

		if (at > col && at + 1 + (int)word > HELP_WIDTH) {
			fprintf(f, "\n%*s", col, "");
			at = col;
		} else if (at > col) {
			fputc(' ', f);
			at++;
		}
		for (size_t i = 0; i < word; i++)
			fputc(text[i] == NBSP ? ' ' : text[i], f);
		at += (int)word;
		text += word;
		if (*text == '\n') {
			fprintf(f, "\n%*s", col, "");
			at = col;
		}
		while (*text == ' ' || *text == '\n')
			text++;
	}
	fputc('\n', f);
}

static void help_row(const struct sv_cli_prog *p, const void *obj, const struct sv_cfg_key *row, FILE *f)
{
	const struct sv_cfg_key *key = target_key(p, row);
	const char *help = row->help ? row->help : key ? key->help : "";
	char head[96], values[96] = "", text[1536], defv[128], suffix[256] = "";
	int n;

	if (!has_opt(row)) { /* a heading */
		fprintf(f, "%s\n", row->help);
		return;
	}
	if (row->opt.short_name)
		n = snprintf(head, sizeof(head), "  -%c, --%s%s%s", row->opt.short_name, row->opt.name,
			     row->opt.arg ? " " : "", row->opt.arg ? row->opt.arg : "");
	else
		n = snprintf(head, sizeof(head), "      --%s%s%s", row->opt.name, row->opt.arg ? " " : "",
			     row->opt.arg ? row->opt.arg : "");
	if (row->opt.arg) {
		/* what the argument may be, and what it is when the option is not given */
		const struct sv_cfg_key *v = key ? key : row;
		const char *path = row->type == SV_CFG_CLI ? row->opt.key : row->name;
		const char *def = NULL;

		/* the default: what the key holds before the options (the program's defaults) */
		if (key && !sv_config_get(p->tab, obj, path, defv, sizeof(defv)) && defv[0])
			def = defv;

		sv_config_format_values(v, values, sizeof(values));
		if (def && values[0])
			snprintf(suffix, sizeof(suffix), "(%s, default %s)", values, def);
		else if (def || values[0])
			snprintf(suffix, sizeof(suffix), "(%s%s)", def ? "default " : "", def ? def : values);
		for (char *c = suffix; *c; c++)
			if (*c == ' ')
				*c = NBSP;
		/* first: on the option's line, whatever the help's length (scripts and people look there) */
		snprintf(text, sizeof(text), "%s%s%s", suffix, suffix[0] ? " " : "", help);
	} else {
		snprintf(text, sizeof(text), "%s", help);
	}
	fputs(head, f);
	if (n + 2 > HELP_COL) {
		fputs("  ", f);
		n += 2;
	} else {
		fprintf(f, "%*s", HELP_COL - n, "");
		n = HELP_COL;
	}
	(void)n;
	wrap(f, text, HELP_COL);
}

void sv_cli_help(const struct sv_cli_prog *p, const void *obj, FILE *f)
{
	const char *u = p->usage;

	/* each form of the synopsis on its own line, aligned under the first */
	for (bool first = true; *u; first = false) {
		size_t len = strcspn(u, "\n");

		fprintf(f, "%s%.*s\n", first ? "Usage: " : "       ", (int)len, u);
		u += len + (u[len] == '\n');
	}
	if (p->about)
		fprintf(f, "%s\n", p->about);
	fputc('\n', f);
	for (const struct sv_cfg_key *k = p->tab; k->name; k++)
		if (has_opt(k) || (k->type == SV_CFG_CLI && k->help))
			help_row(p, obj, k, f);
	if (p->epilog)
		fprintf(f, "\n%s", p->epilog);
}

int sv_cli_features(const struct sv_cli_prog *p, FILE *f)
{
	struct sv_json j;

	sv_json_init(&j, f, 0);
	sv_json_object_begin(&j);
	sv_json_kv_str(&j, "tool", p->name);
	sv_json_kv_str(&j, "version", SVKIT_VERSION);
	sv_json_key(&j, "options");
	sv_json_array_begin(&j);
	for (const struct sv_cfg_key *k = p->tab; k->name; k++)
		if (has_opt(k))
			sv_json_string(&j, k->opt.name);
	sv_json_array_end(&j);
	sv_json_key(&j, "features");
	sv_json_array_begin(&j);
	for (const char *const *s = p->features; s && *s; s++)
		sv_json_string(&j, *s);
	sv_json_array_end(&j);
	sv_json_object_end(&j);
	return sv_json_end(&j);
}

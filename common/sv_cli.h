/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Every program's command line from its sv_config table (STYLE.md 9 and 11; after xdp-tools' DEFINE_OPTION
 * and linuxptp's config_tab). A row that carries an option (struct sv_cfg_opt) gives getopt_long its entry,
 * --help its line (the argument, the row's help, its values and default) and --features its name. A key
 * row's option sets the key through the table's own parser, so that the file, the command line, --help and
 * --print-config accept and say the same values. Options that are not keys (--help, -c FILE, --read FILE
 * ...) are rows too (SV_CFG_CLI): one table lists every option of a program.
 *
 * sv_cli_parse() reads -c FILE first wherever it stands, loads it over the defaults, applies the options
 * flagged SV_OPT_EARLY, calls the program's loaded() hook, then applies the other options in command-line
 * order (a later one wins). Messages go to the FILE * given, as "PROGRAM: --OPTION (-O): what is wrong".
 *
 * The exit status of every program: SV_EXIT_OK, SV_EXIT_RUNTIME, SV_EXIT_USAGE (README, the man pages).
 */
#ifndef SV_CLI_H
#define SV_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sv_config.h"

enum sv_exit {
	SV_EXIT_OK = 0,	     /* done (also when stopped by SIGINT/SIGTERM) */
	SV_EXIT_RUNTIME = 1, /* a run-time failure, or an output not written in full */
	SV_EXIT_USAGE = 2,   /* a usage or configuration error: retrying does not help */
};

/* The options sv_cli handles itself (struct sv_cfg_opt.id < 0). */
enum sv_cli_id {
	SV_CLI_HELP = -1,	  /* --help: writes the help, done */
	SV_CLI_VERSION = -2,	  /* --version: "PROGRAM (svkit) VERSION", done */
	SV_CLI_FEATURES = -3,	  /* --features: one JSON line for scripts (below), done */
	SV_CLI_CONFIG = -4,	  /* -c FILE: loaded before the other options */
	SV_CLI_SET = -5,	  /* --set KEY=VALUE: any key, by its path (sv_config_set) */
	SV_CLI_PRINT_CONFIG = -6, /* --print-config: sv_cli.print_config (the program prints when resolved) */
	SV_CLI_HELP_CONFIG = -7,  /* --help-config: writes every key (sv_config_help), done */
	SV_CLI_READY_FILE = -8,	  /* --ready-file PATH: sv_cli.ready_file (sv_ready.h) */
};

/* Option flags (struct sv_cfg_opt.flags). */
#define SV_OPT_EARLY 0x1u /* applied right after the file, before the program's loaded() hook */

/* A row of the command line alone: --@l / -@s taking @a (NULL: a flag); when @k names a key path, the
 * option sets it (to the argument, or to @v for a flag); @i > 0: the program's hook sees it, < 0: sv_cli's. */
#define SV_CLI_ROW(l, s, a, k, v, i, fl, h)                                                              \
	{ .name = l, .type = SV_CFG_CLI, .min = 1, .max = 0, .help = h,                                  \
	  .opt = { .name = l, .short_name = s, .arg = a, .value = v, .key = k, .id = i, .flags = fl } }
/* An option for the program's hook alone. */
#define SV_CLI_OPT(l, s, a, i, h) SV_CLI_ROW(l, s, a, NULL, NULL, i, 0, h)
/* ... whose argument is a number in lo..hi (the hook reads it with sv_cli_uint). */
#define SV_CLI_OPT_RANGE(l, s, a, i, lo, hi, h)                                                          \
	{ .name = l, .type = SV_CFG_CLI, .min = lo, .max = hi, .help = h,                                \
	  .opt = { .name = l, .short_name = s, .arg = a, .id = i } }
/* A flag that sets key @k to @v (e.g. -q: status=false). */
#define SV_CLI_FLAG(l, s, k, v, h) SV_CLI_ROW(l, s, NULL, k, v, 0, 0, h)
/* An option that sets key path @k to its argument (help NULL: the key's help). */
#define SV_CLI_KEY(l, s, a, k, h) SV_CLI_ROW(l, s, a, k, NULL, 0, 0, h)
/* A heading in --help between groups of options. */
#define SV_CLI_HEADING(text) { .name = "", .type = SV_CFG_CLI, .min = 1, .max = 0, .help = text }

/* The rows every program has. */
#define SV_CLI_ROW_HELP SV_CLI_OPT("help", 'h', NULL, SV_CLI_HELP, "this help")
#define SV_CLI_ROW_VERSION SV_CLI_OPT("version", 'V', NULL, SV_CLI_VERSION, "the version")
#define SV_CLI_ROW_FEATURES                                                                              \
	SV_CLI_OPT("features", 0, NULL, SV_CLI_FEATURES,                                                 \
		   "one JSON line for scripts: the tool, its version, every option it takes and what this build " \
		   "has (features)")
#define SV_CLI_ROW_CONFIG(s)                                                                             \
	SV_CLI_OPT("config", s, "FILE", SV_CLI_CONFIG,                                                   \
		   "YAML configuration (the keys: --print-config); the options override it")
#define SV_CLI_ROW_PRINT_CONFIG                                                                          \
	SV_CLI_OPT("print-config", 0, NULL, SV_CLI_PRINT_CONFIG,                                         \
		   "print the effective configuration as YAML (which --config reads back the same) and exit")
#define SV_CLI_ROW_HELP_CONFIG SV_CLI_OPT("help-config", 0, NULL, SV_CLI_HELP_CONFIG, "list every configuration key and exit")
/* The rows every program's table ends with. */
#define SV_CLI_ROWS_END SV_CLI_ROW_PRINT_CONFIG, SV_CLI_ROW_FEATURES, SV_CLI_ROW_HELP, SV_CLI_ROW_VERSION, SV_CFG_KEY_END
#define SV_CLI_ROW_READY_FILE                                                                            \
	SV_CLI_OPT("ready-file", 0, "PATH", SV_CLI_READY_FILE,                                           \
		   "create PATH (atomically: READY=1, MAINPID=, STATUS= lines) once ready, remove it when "      \
		   "stopping; with NOTIFY_SOCKET set (systemd Type=notify) READY=1 goes there too")

/* What a program says about itself; the rows say the rest. */
struct sv_cli_prog {
	const char *name;	      /* "svpub" */
	const char *usage;	      /* the synopsis after "Usage: ", forms separated by '\n' */
	const char *about;	      /* what the program does: a paragraph before the options */
	const char *epilog;	      /* after the options: what the rows cannot say, exit status, EXAMPLES */
	const struct sv_cfg_key *tab; /* the keys and every option */
	const char *const *features;  /* --features: what this build has (NULL-terminated, or NULL) */
	bool operands;		      /* operands are taken (sv_cli.operands); else one is a usage error */
	/* Called for each option whose row has opt.id > 0, in command-line order, after the key it names was
	 * set. 0, or -EINVAL with err->msg saying what is wrong (sv_cli names the option). */
	int (*option)(void *ctx, const struct sv_cfg_key *row, const char *arg, struct sv_cfg_error *err);
	/* Called once the file is loaded and the SV_OPT_EARLY options applied. 0, or -EINVAL said on @f. */
	int (*loaded)(void *ctx, void *obj, const char *config, FILE *f);
	void *ctx;
};

struct sv_cli {
	const char *config;	/* -c FILE; NULL: none */
	const char *ready_file; /* --ready-file PATH; NULL: none */
	bool print_config;	/* --print-config given */
	int operands;		/* index in argv of the first operand (getopt_long moved them last) */
};

/* sv_cli_parse(): go on, or the program is done (--help, --version, --features, --help-config: exit 0). */
#define SV_CLI_RUN 0
#define SV_CLI_DONE 1

/*
 * Parses @argv over @obj (which holds the table's defaults: sv_config_defaults) as the header says. Output
 * asked for (--help ...) goes to @out, messages to @err. Returns SV_CLI_RUN, SV_CLI_DONE, -EINVAL (a usage
 * or configuration error, said) or -ENOMEM; sv_cli_exit() turns it into the exit status.
 */
int sv_cli_parse(const struct sv_cli_prog *p, int argc, char **argv, void *obj, struct sv_cli *cli, FILE *out,
		 FILE *err);

/* The exit status for sv_cli_parse()'s result: SV_CLI_DONE 0, -EINVAL SV_EXIT_USAGE, else SV_EXIT_RUNTIME. */
int sv_cli_exit(int rc);

/* Writes --help: the synopsis, about, one line per option (wrapped at 108 columns: the values its key takes
 * and its default, read from @obj, then the row's help), headings, epilog. */
void sv_cli_help(const struct sv_cli_prog *p, const void *obj, FILE *f);

/* Writes --features: {"tool": NAME, "version": V, "options": [long names], "features": [...]} and a newline. */
int sv_cli_features(const struct sv_cli_prog *p, FILE *f);

/* Reads @arg as an unsigned integer in @row's range (SV_CLI_OPT_RANGE; sv_parse_uint64's syntax). 0, or
 * -EINVAL with err->msg saying why. */
int sv_cli_uint(const struct sv_cfg_key *row, const char *arg, uint64_t *v, struct sv_cfg_error *err);

#endif /* SV_CLI_H */

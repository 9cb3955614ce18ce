// SPDX-License-Identifier: Apache-2.0
/*
 * svreport: joins the records of svpub, svtrace and every svsub into one per-hop latency report
 * (terminal, JSON, self-contained HTML). See svreport.h for the engine.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sv_cli.h"
#include "sv_config.h"
#include "sv_log.h"
#include "svreport.h"

/* svreport's keys and options: one table (sv_config.h, sv_cli.h); svreport --config FILE loads the keys. */
struct report_config {
	char budgets[256], html[256], comtrade[256], csv[256], cyclictest[256];
	bool json, quiet, verdict_exit;
	int expect;			/* 0 all, 1 seen */
	double window;			/* s */
	uint64_t max_frames, exact_limit;
};

/* --verdict-exit's statuses besides SV_EXIT_OK (PASS, NONE) */
enum { REPORT_EXIT_FAIL = 3, REPORT_EXIT_UNSYNCHRONISED = 4 };

enum { OPT_GUEST = 1, OPT_ALIAS, OPT_LABEL, OPT_SETUP };

static const char *const expect_names[] = { "all", "seen", NULL };

/* No default in the rows of window, max_frames, exact_limit: svr_cfg_defaults() has them (main). */
#define C struct report_config
static const struct sv_cfg_key report_table[] = {
	SV_CFG_KEY_STRING(C, budgets, "budgets", "",
			  "YAML budgets; empty = max of T0-T4 250us, of T1-T2b 100us, of T3-T4 100us",
			  SV_OPT("budgets", 'b', "FILE")),
	SV_CFG_KEY_STRING(C, html, "html", "", "write one self-contained HTML report with SVG plots; empty = none",
			  SV_OPT("html", 'H', "FILE")),
	SV_CFG_KEY_STRING(C, comtrade, "comtrade", "",
			  "plot this COMTRADE disturbance record (.cfg or .cff, svsub --comtrade) in the HTML report: the "
			  "phase currents around the trigger, the trip marked; empty = none",
			  SV_OPT("comtrade", 0, "FILE")),
	SV_CFG_KEY_BOOL(C, json, "json", "false", "print the report as one JSON object on stdout (summary goes to stderr)",
			SV_OPT("json", 'j', NULL)),
	SV_CFG_KEY_STRING(C, csv, "csv", "", "export every per-frame record as CSV (pandas: pd.read_csv); empty = none",
			  SV_OPT("csv", 'c', "FILE")),
	SV_CFG_KEY_STRING(C, cyclictest, "cyclictest", "",
			  "cyclictest -q -h N --histfile output (or its summary) as the host baseline; empty = none",
			  SV_OPT("cyclictest", 'C', "FILE")),
	SV_CLI_OPT("guest", 'g', "NAME=FILE", OPT_GUEST,
		   "records of guest NAME (svsub in a VM); other files name their guests by their GUEST names "
		   "(svtrace) or their host name"),
	SV_CLI_OPT("alias", 'a', "[HOST:]FROM=TO", OPT_ALIAS,
		   "call guest FROM (an svtrace egress port, a host name) TO; HOST: only in the records of host HOST "
		   "(two hypervisors' same-named ports, two guests)"),
	SV_CLI_OPT("label", 'l', "GUEST=TEXT", OPT_LABEL,
		   "what guest GUEST stands for (e.g. its traffic class), shown beside it"),
	SV_CLI_OPT("setup", 's', "TEXT", OPT_SETUP,
		   "a line on how the run was set up (e.g. the switch it went through), shown at the top of the "
		   "report; repeat for more (at most 8)"),
	SV_CFG_KEY_ENUM(C, expect, "expect", expect_names, "all",
			"the streams each guest must get: all (a bridge floods every stream to every guest) or seen: "
			"those it has a record of (per-stream switch rules, as svtrace --expect seen); frames of the "
			"others are not lost toward it",
			SV_OPT("expect", 'e', "all|seen")),
	SV_CFG_KEY_DOUBLE(C, window, "window", 0.1, 600, NULL, "join window in seconds: how late a record may still join",
			  SV_OPT("window", 'w', "S")),
	SV_CFG_KEY_UINT(C, max_frames, "max_frames", 1024, 1ull << 40, NULL, "frames held in the window at most",
			SV_OPT("max-frames", 0, "N")),
	SV_CFG_KEY_UINT(C, exact_limit, "exact_limit", 0, 1ull << 40, NULL,
			"per-frame values kept for exact percentiles", SV_OPT("exact-limit", 0, "N")),
	SV_CFG_KEY_BOOL(C, quiet, "quiet", "false", "no terminal summary", SV_OPT("quiet", 'q', NULL)),
	SV_CFG_KEY_BOOL(C, verdict_exit, "verdict_exit", "false",
			"exit 0 PASS or NONE, 3 FAIL, 4 UNSYNCHRONISED instead of 0 whatever the verdict",
			SV_OPT("verdict-exit", 0, NULL)),
	SV_CLI_ROW_CONFIG(0),
	SV_CLI_ROWS_END,
};
#undef C

static const char about[] =
	"Joins the records of svpub (T0), svtrace (T1, T2a, T2b) and each svsub (T3, T4) per frame on\n"
	"(svID, TAI second, smpCnt) and reports, per hop of the SEAPATH latency model and end to end, per\n"
	"guest and per stream: count, lost, min/p50/p99/p99.9/p99.99/max, pacing, the tracer's why-late list,\n"
	"and PASS/FAIL against latency budgets (UNSYNCHRONISED when the clocks cannot be trusted, NONE when\n"
	"nothing could be checked). A guest that received nothing while frames were lost toward it FAILs.\n"
	"A record its tool rotated (FILE, FILE.1, FILE.2 ...: --record-size) is read whole from FILE.\n"
	"Frames that fell where a tool could not write its records (a full disk: its UNWRITTEN records, or an\n"
	"older tool's END count, taken as its tail) are \"not recorded\" at that tool's points, never lost.";
static const char epilog[] =
	"Exit status: 0 report written (whatever the verdict), 1 a file could not be read, 2 usage error (also:\n"
	"the same record given twice, or two runs' records under one guest name).\n"
	"With --verdict-exit the status is 0 PASS or NONE (nothing to check), 3 FAIL, 4 UNSYNCHRONISED.\n"
	"\n"
	"EXAMPLES\n"
	"  # The lab's records, one HTML and one JSON report\n"
	"  svreport --html report.html --json pub.rec trace.rec -g vm1=vm1.rec -g vm2=vm2.rec > report.json\n"
	"  # Records copied from several hosts, own budgets, cyclictest baseline\n"
	"  svreport -b budgets.yaml -C cyclictest.hist hv/*.rec vm*/svsub.rec\n"
	"  # Per-frame records as CSV for pandas\n"
	"  svreport -q --csv frames.csv pub.rec\n"
	"  # Two guests of a lab, each labelled with the setup it stands for\n"
	"  svreport -g g1=g1.rec -g g2=g2.rec -l 'g1=SV own class' -l 'g2=SV shares bulk class' pub.rec trace.rec\n";

/* --guest, --alias, --label: NAME=VALUE arguments, and --setup lines, kept in order. */
struct report_cli {
	const char *guests[SVR_MAX_FILES], *aliases[32], *labels[SVR_MAX_GUESTS], *setup[SVR_MAX_SETUP];
	unsigned nguests, naliases, nlabels, nsetup;
};

_Static_assert(SVR_MAX_SETUP == 8, "--setup's help");

static int report_option(void *ctx, const struct sv_cfg_key *row, const char *arg, struct sv_cfg_error *err)
{
	struct report_cli *rc = ctx;

	if (row->opt.id == OPT_SETUP) {
		if (rc->nsetup >= SVR_MAX_SETUP || strlen(arg) >= SVR_SETUP_SIZE) {
			snprintf(err->msg, sizeof(err->msg), "at most %d lines of < %d characters, got '%.100s'",
				 SVR_MAX_SETUP, SVR_SETUP_SIZE, arg);
			return -EINVAL;
		}
		rc->setup[rc->nsetup++] = arg;
		return 0;
	}
	const char **list = row->opt.id == OPT_GUEST ? rc->guests : row->opt.id == OPT_ALIAS ? rc->aliases : rc->labels;
	unsigned *n = row->opt.id == OPT_GUEST ? &rc->nguests : row->opt.id == OPT_ALIAS ? &rc->naliases : &rc->nlabels;
	unsigned max = row->opt.id == OPT_GUEST ? SVR_MAX_FILES : row->opt.id == OPT_ALIAS ? 32 : SVR_MAX_GUESTS;

	if (*n >= max || !strchr(arg, '=') || arg[0] == '=') {
		snprintf(err->msg, sizeof(err->msg), "wants %s (at most %u), got '%.100s'", row->opt.arg, max, arg);
		return -EINVAL;
	}
	list[(*n)++] = arg;
	return 0;
}

/* The budgets (defaults, else @path's); their clock tolerance goes into @cfg. Returns 0, or the exit status: a
 * budgets file that says something wrong is a usage error (2); one that cannot be read, as any other file that
 * cannot be read (the cyclictest file, the records), a runtime failure (1). */
static int load_budgets(const char *path, struct svr_budgets *b, struct svr_cfg *cfg)
{
	char errbuf[700];
	int err;

	svr_budgets_default(b);
	if (path && (err = svr_budgets_load(b, path, errbuf, sizeof(errbuf)))) {
		fprintf(stderr, "svreport: budgets: %s\n", errbuf);
		return err == -EINVAL ? SV_EXIT_USAGE : SV_EXIT_RUNTIME;
	}
	if (b->clock_tolerance_ns >= 0)
		cfg->clock_tolerance_ns = b->clock_tolerance_ns;
	return 0;
}

/* The cyclictest baseline and the disturbance record, when given. Returns 0 or SV_EXIT_RUNTIME (not readable). */
static int load_baselines(const char *ct_path, struct svr_cyclic *ct, const char *dr_path, struct sv_ct_data *dr)
{
	char errbuf[700];
	int err;

	if (dr_path) {
		char msg[300];

		err = sv_ct_read(dr, dr_path, msg, sizeof(msg));
		if (err) {
			fprintf(stderr, "svreport: --comtrade %s: %s\n", dr_path, msg[0] ? msg : strerror(-err));
			return SV_EXIT_RUNTIME;
		}
	}
	if (ct_path && svr_cyclic_load(ct, ct_path, errbuf, sizeof(errbuf))) {
		fprintf(stderr, "svreport: cyclictest: %s\n", errbuf);
		return SV_EXIT_RUNTIME;
	}
	return 0;
}

/* The hops the budgets name are kept even when not consecutive. */
static void keep_budget_hops(struct svr *r, const struct svr_budgets *b)
{
	uint8_t pairs[SVR_MAX_BUDGETS][2];

	for (unsigned i = 0; i < b->n; i++) {
		pairs[i][0] = b->b[i].from;
		pairs[i][1] = b->b[i].to;
	}
	svr_set_budget_pairs(r, (const uint8_t(*)[2])pairs, b->n);
}

/* --alias [HOST:]FROM=TO and --label GUEST=TEXT (checked for '=' by report_option). Returns 0 or SV_EXIT_USAGE. */
static int name_guests(struct svr *r, const char *const *aliases, unsigned naliases, const char *const *labels,
		       unsigned nlabels)
{
	for (unsigned i = 0; i < naliases; i++) {
		char from[160];
		const char *eq = strchr(aliases[i], '=');

		snprintf(from, sizeof(from), "%.*s", (int)(eq - aliases[i]), aliases[i]);
		if (svr_add_alias(r, from, eq + 1)) {	/* a FROM cut to 159 octets is still refused */
			fprintf(stderr, "svreport: --alias '%s': FROM is 1..127 characters ([HOST:]NAME), TO 1..63\n",
				aliases[i]);
			return SV_EXIT_USAGE;
		}
	}
	for (unsigned i = 0; i < nlabels; i++) {
		char name[64];
		const char *eq = strchr(labels[i], '=');

		snprintf(name, sizeof(name), "%.*s", (int)(eq - labels[i]), labels[i]);
		if ((size_t)(eq - labels[i]) >= sizeof(name) || svr_set_guest_label(r, name, eq + 1)) {
			fprintf(stderr, "svreport: --label '%s': guest names are 1..63 characters, texts < %d\n", labels[i],
				SVR_LABEL_SIZE);
			return SV_EXIT_USAGE;
		}
	}
	return 0;
}

/* The --guest NAME=FILE records, then the others; a rotated run's parts given too are read once
 * (svr_add_files). Returns 0, SV_EXIT_RUNTIME (not readable) or SV_EXIT_USAGE (the same record twice, two
 * runs under one guest). */
static int add_records(struct svr *r, const char *const *guests, unsigned nguests, const char *const *files,
		       unsigned nfiles)
{
	unsigned n = 0, max = nguests + nfiles;
	const char **paths = calloc(max, sizeof(*paths)), **gnames = calloc(max, sizeof(*gnames));
	char (*names)[64] = calloc(nguests ? nguests : 1, sizeof(*names));
	int err = -ENOMEM;

	if (paths && gnames && names) {
		for (unsigned i = 0; i < nguests; i++) {
			const char *eq = strchr(guests[i], '=');

			snprintf(names[i], sizeof(names[i]), "%.*s", (int)(eq - guests[i]), guests[i]);
			paths[n] = eq + 1;
			gnames[n++] = names[i];
		}
		for (unsigned i = 0; i < nfiles; i++)
			paths[n++] = files[i];
		err = svr_add_files(r, paths, gnames, n);
	}
	free(paths);
	free(gnames);
	free(names);
	if (!err)
		return 0;
	if (err == -E2BIG)
		fprintf(stderr, "svreport: too many files (at most %d; a rotated run counts once)\n", SVR_MAX_FILES);
	else
		fprintf(stderr, "svreport: %s\n", err == -ENOMEM || !svr_nfiles(r) ? strerror(-err)
							 : svr_file(r, svr_nfiles(r) - 1)->errmsg);
	return err == -EEXIST ? SV_EXIT_USAGE : SV_EXIT_RUNTIME;
}

/* What the run found wrong with the inputs: files read up to a fault, aliases that renamed nothing. */
static void say_after_run(struct svr *r, const char *const *aliases, unsigned naliases)
{
	for (unsigned i = 0; i < svr_nfiles(r); i++)
		if (svr_file(r, i)->err)
			fprintf(stderr, "svreport: %s (records before the fault are used)\n", svr_file(r, i)->errmsg);
	for (unsigned i = 0; i < naliases; i++) {
		const char *from = svr_alias_unused(r, i);

		if (from)
			fprintf(stderr, "svreport: warning: --alias %s: no record names a guest '%s'%s\n", aliases[i], from,
				strchr(from, ':') ? " (HOST is the host name in the record's header, as the file list shows it)"
						  : "");
	}
}

/* The terminal summary (on stderr when the JSON goes to stdout), the JSON, the HTML. Returns 0 or -EIO. */
static int write_reports(struct svr *r, const struct svr_budgets *b, const struct svr_eval *ev,
			 const struct svr_cyclic *ct, const struct sv_ct_data *dr, bool json, bool quiet,
			 const char *html_path)
{
	FILE *h;

	if (!quiet)
		svr_write_text(r, b, ev, ct, json ? stderr : stdout);
	if (json && svr_write_json(r, b, ev, ct, stdout)) {
		fprintf(stderr, "svreport: cannot write the JSON report\n");
		return -EIO;
	}
	if (!html_path)
		return 0;
	h = fopen(html_path, "we");
	if (!h) {
		fprintf(stderr, "svreport: %s: %s\n", html_path, strerror(errno));
		return -EIO;
	}
	if (svr_write_html(r, b, ev, ct, dr, h) | fclose(h)) {
		fprintf(stderr, "svreport: %s: write failed\n", html_path);
		return -EIO;
	}
	return 0;
}

/* --verdict-exit: 0 PASS or NONE (nothing to check), 3 FAIL, 4 UNSYNCHRONISED. */
static int verdict_status(enum svr_verdict v)
{
	return v == SVR_PASS || v == SVR_NONE ? SV_EXIT_OK : v == SVR_FAIL ? REPORT_EXIT_FAIL : REPORT_EXIT_UNSYNCHRONISED;
}

int main(int argc, char **argv)
{
	static struct report_config rcfg;
	static struct report_cli rc;
	const struct sv_cli_prog prog = {
		.name = "svreport", .usage = "svreport [OPTIONS] RECORDS...", .about = about, .epilog = epilog,
		.tab = report_table, .operands = true, .option = report_option, .ctx = &rc,
	};
	const char *budget_path, *html_path, *csv_path, *ct_path, *dr_path;
	static struct sv_ct_data dr;
	static struct svr_budgets budgets;
	static struct svr_cyclic ct;
	static struct svr_eval ev;
	struct sv_cfg_error cerr;
	struct svr_cfg cfg;
	struct sv_cli cli;
	struct svr *r = NULL;
	FILE *csv = NULL;
	int ret, err;

	sv_log_set(sv_log_stderr, NULL, SV_LOG_WARN);
	svr_cfg_defaults(&cfg);
	if (sv_config_defaults(report_table, &rcfg, &cerr)) {
		fprintf(stderr, "svreport: internal error: %s\n", cerr.text);
		return SV_EXIT_RUNTIME;
	}
	/* the engine's defaults, as the options say them */
	rcfg.window = (double)cfg.window_ns / 1e9;
	rcfg.max_frames = cfg.max_frames;
	rcfg.exact_limit = cfg.exact_limit;
	err = sv_cli_parse(&prog, argc, argv, &rcfg, &cli, stdout, stderr);
	if (err)
		return sv_cli_exit(err);
	if (cli.print_config)
		return sv_config_print(report_table, &rcfg, stdout) ? SV_EXIT_RUNTIME : SV_EXIT_OK;
	if (cli.operands >= argc && !rc.nguests) {
		fprintf(stderr, "svreport: no record files given\nTry 'svreport --help'.\n");
		return SV_EXIT_USAGE;
	}
	budget_path = rcfg.budgets[0] ? rcfg.budgets : NULL;
	html_path = rcfg.html[0] ? rcfg.html : NULL;
	csv_path = rcfg.csv[0] ? rcfg.csv : NULL;
	ct_path = rcfg.cyclictest[0] ? rcfg.cyclictest : NULL;
	dr_path = rcfg.comtrade[0] ? rcfg.comtrade : NULL;
	cfg.window_ns = (int64_t)(rcfg.window * 1e9);
	cfg.max_frames = rcfg.max_frames;
	cfg.exact_limit = rcfg.exact_limit;
	cfg.expect_seen = rcfg.expect == 1;

	err = load_budgets(budget_path, &budgets, &cfg);
	if (!err)
		err = load_baselines(ct_path, &ct, dr_path, &dr);
	if (err)
		return err;
	err = svr_create(&r, &cfg);
	if (err) {
		fprintf(stderr, "svreport: %s\n", strerror(-err));
		return SV_EXIT_RUNTIME;
	}
	keep_budget_hops(r, &budgets);
	for (unsigned i = 0; i < rc.nsetup; i++)
		svr_add_setup(r, rc.setup[i]);	/* checked by report_option */
	ret = name_guests(r, rc.aliases, rc.naliases, rc.labels, rc.nlabels);
	if (!ret)
		ret = add_records(r, rc.guests, rc.nguests, (const char *const *)argv + cli.operands,
				  (unsigned)(argc - cli.operands));
	if (ret)
		goto out;
	ret = SV_EXIT_RUNTIME;
	if (csv_path) {
		csv = fopen(csv_path, "we");
		if (!csv) {
			fprintf(stderr, "svreport: %s: %s\n", csv_path, strerror(errno));
			goto out;
		}
		svr_set_csv(r, csv);
	}
	err = svr_run(r);
	say_after_run(r, rc.aliases, rc.naliases);
	svr_evaluate(r, &budgets, &ev);
	if (write_reports(r, &budgets, &ev, &ct, dr_path ? &dr : NULL, rcfg.json, rcfg.quiet, html_path))
		goto out;
	if (csv && fclose(csv)) {
		csv = NULL;
		fprintf(stderr, "svreport: %s: write failed\n", csv_path);
		goto out;
	}
	csv = NULL;
	ret = err ? SV_EXIT_RUNTIME : SV_EXIT_OK;
	if (!ret && rcfg.verdict_exit)
		ret = verdict_status(ev.verdict);
out:
	if (csv)
		fclose(csv);
	svr_destroy(r);
	return ret;
}

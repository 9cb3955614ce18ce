// SPDX-License-Identifier: Apache-2.0
/*
 * svreport: joins the records of svpub, svtrace and every svsub into one per-hop latency report
 * (terminal, JSON, self-contained HTML). See svreport.h for the engine.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sv_config.h"
#include "sv_log.h"
#include "svreport.h"

static void usage(FILE *f)
{
	fprintf(f,
"Usage: svreport [OPTIONS] RECORDS...\n"
"Joins the records of svpub (T0), svtrace (T1, T2a, T2b) and each svsub (T3, T4) per frame on\n"
"(svID, TAI second, smpCnt) and reports, per hop of the SEAPATH latency model and end to end, per\n"
"guest and per stream: count, lost, min/p50/p99/p99.9/p99.99/max, pacing, the tracer's why-late list,\n"
"and PASS/FAIL against latency budgets (UNSYNCHRONISED when the clocks cannot be trusted, NONE when\n"
"nothing could be checked). A guest that received nothing while frames were lost toward it FAILs.\n"
"A record its tool rotated (FILE, FILE.1, FILE.2 ...: --record-size) is read whole from FILE.\n"
"Frames that fell where a tool could not write its records (a full disk: its UNWRITTEN records, or an\n"
"older tool's END count, taken as its tail) are \"not recorded\" at that tool's points, never lost.\n"
"\n"
"  -b, --budgets FILE      YAML budgets (default: max of T0-T4 250us, of T1-T2b 100us, of T3-T4 100us)\n"
"  -H, --html FILE         write one self-contained HTML report with SVG plots\n"
"      --comtrade FILE      plot this COMTRADE disturbance record (.cfg or .cff, svsub --comtrade) in the\n"
"                           HTML report: the phase currents around the trigger, the trip marked\n"
"  -j, --json              print the report as one JSON object on stdout (summary goes to stderr)\n"
"  -c, --csv FILE          export every per-frame record as CSV (pandas: pd.read_csv)\n"
"  -C, --cyclictest FILE   cyclictest -q -h N --histfile output (or its summary) as the host baseline\n"
"  -g, --guest NAME=FILE   records of guest NAME (svsub in a VM); other files name their guests by\n"
"                          their GUEST names (svtrace) or their host name\n"
"  -a, --alias [HOST:]FROM=TO\n"
"                          call guest FROM (an svtrace egress port, a host name) TO; HOST: only in\n"
"                          the records of host HOST (two hypervisors' same-named ports, two guests)\n"
"  -l, --label GUEST=TEXT  what guest GUEST stands for (e.g. its traffic class), shown beside it\n"
"  -s, --setup TEXT        a line on how the run was set up (e.g. the switch it went through), shown at\n"
"                          the top of the report; repeat for more (at most 8)\n"
"  -e, --expect all|seen   the streams each guest must get: all (default: a bridge floods every stream\n"
"                          to every guest) or seen: those it has a record of (per-stream switch rules,\n"
"                          as svtrace --expect seen); frames of the others are not lost toward it\n"
"  -w, --window S          join window in seconds (default 3): how late a record may still join\n"
"      --max-frames N      frames held in the window at most (default 4194304)\n"
"      --exact-limit N     per-frame values kept for exact percentiles (default 33554432)\n"
"  -q, --quiet             no terminal summary\n"
"      --verdict-exit      exit 0 PASS or NONE, 3 FAIL, 4 UNSYNCHRONISED instead of 0 whatever the verdict\n"
"  -h, --help              this text\n"
"  -V, --version           version\n"
"\n"
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
"  svreport -g g1=g1.rec -g g2=g2.rec -l 'g1=SV own class' -l 'g2=SV shares bulk class' pub.rec trace.rec\n");
}

static int parse_u64(const char *s, uint64_t *out, const char *what)
{
	if (sv_parse_uint64(s, out)) {
		fprintf(stderr, "svreport: %s: '%s' is not a number\n", what, s);
		return -EINVAL;
	}
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
		return err == -EINVAL ? 2 : 1;
	}
	if (b->clock_tolerance_ns >= 0)
		cfg->clock_tolerance_ns = b->clock_tolerance_ns;
	return 0;
}

/* The cyclictest baseline and the disturbance record, when given. Returns 0 or 1 (not readable). */
static int load_baselines(const char *ct_path, struct svr_cyclic *ct, const char *dr_path, struct sv_ct_data *dr)
{
	char errbuf[700];
	int err;

	if (dr_path) {
		char msg[300];

		err = sv_ct_read(dr, dr_path, msg, sizeof(msg));
		if (err) {
			fprintf(stderr, "svreport: --comtrade %s: %s\n", dr_path, msg[0] ? msg : strerror(-err));
			return 1;
		}
	}
	if (ct_path && svr_cyclic_load(ct, ct_path, errbuf, sizeof(errbuf))) {
		fprintf(stderr, "svreport: cyclictest: %s\n", errbuf);
		return 1;
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

/* --alias [HOST:]FROM=TO and --label GUEST=TEXT (checked for '=' by the option parser). Returns 0 or 2. */
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
			return 2;
		}
	}
	for (unsigned i = 0; i < nlabels; i++) {
		char name[64];
		const char *eq = strchr(labels[i], '=');

		snprintf(name, sizeof(name), "%.*s", (int)(eq - labels[i]), labels[i]);
		if ((size_t)(eq - labels[i]) >= sizeof(name) || svr_set_guest_label(r, name, eq + 1)) {
			fprintf(stderr, "svreport: --label '%s': guest names are 1..63 characters, texts < %d\n", labels[i],
				SVR_LABEL_SIZE);
			return 2;
		}
	}
	return 0;
}

/* The --guest NAME=FILE records, then the others; a rotated run's parts given too are read once
 * (svr_add_files). Returns 0, 1 (not readable) or 2 (the same record twice, two runs under one guest). */
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
	return err == -EEXIST ? 2 : 1;
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
	return v == SVR_PASS || v == SVR_NONE ? 0 : v == SVR_FAIL ? 3 : 4;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"budgets", required_argument, NULL, 'b'}, {"html", required_argument, NULL, 'H'},
		{"json", no_argument, NULL, 'j'},	   {"csv", required_argument, NULL, 'c'},
		{"cyclictest", required_argument, NULL, 'C'}, {"guest", required_argument, NULL, 'g'},
		{"alias", required_argument, NULL, 'a'},   {"window", required_argument, NULL, 'w'},
		{"label", required_argument, NULL, 'l'},   {"setup", required_argument, NULL, 's'},
		{"expect", required_argument, NULL, 'e'},
		{"max-frames", required_argument, NULL, 1}, {"exact-limit", required_argument, NULL, 2},
		{"verdict-exit", no_argument, NULL, 3},	   {"quiet", no_argument, NULL, 'q'},
		{"comtrade", required_argument, NULL, 4},
		{"help", no_argument, NULL, 'h'},	   {"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	const char *budget_path = NULL, *html_path = NULL, *csv_path = NULL, *ct_path = NULL, *dr_path = NULL;
	static struct sv_ct_data dr;
	const char *guests[SVR_MAX_FILES], *aliases[32], *labels[SVR_MAX_GUESTS], *setup[SVR_MAX_SETUP];
	unsigned nguests = 0, naliases = 0, nlabels = 0, nsetup = 0;
	bool json = false, quiet = false, verdict_exit = false;
	static struct svr_budgets budgets;
	static struct svr_cyclic ct;
	static struct svr_eval ev;
	struct svr_cfg cfg;
	struct svr *r = NULL;
	FILE *csv = NULL;
	int c, ret = 1, err;
	double w;

	sv_log_set(sv_log_stderr, NULL, SV_LOG_WARN);
	svr_cfg_defaults(&cfg);
	while ((c = getopt_long(argc, argv, "b:H:jc:C:g:a:l:s:e:w:qhV", opts, NULL)) != -1) {
		uint64_t u;

		switch (c) {
		case 'b':
			budget_path = optarg;
			break;
		case 'H':
			html_path = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'c':
			csv_path = optarg;
			break;
		case 'C':
			ct_path = optarg;
			break;
		case 4:
			dr_path = optarg;
			break;
		case 'g':
			if (nguests >= SVR_MAX_FILES || !strchr(optarg, '=') || optarg[0] == '=') {
				fprintf(stderr, "svreport: --guest wants NAME=FILE, got '%s'\n", optarg);
				return 2;
			}
			guests[nguests++] = optarg;
			break;
		case 'a':
			if (naliases >= 32 || !strchr(optarg, '=') || optarg[0] == '=') {
				fprintf(stderr, "svreport: --alias wants FROM=TO, got '%s'\n", optarg);
				return 2;
			}
			aliases[naliases++] = optarg;
			break;
		case 'l':
			if (nlabels >= SVR_MAX_GUESTS || !strchr(optarg, '=') || optarg[0] == '=') {
				fprintf(stderr, "svreport: --label wants GUEST=TEXT (at most %d), got '%s'\n",
					SVR_MAX_GUESTS, optarg);
				return 2;
			}
			labels[nlabels++] = optarg;
			break;
		case 'e':
			if (strcmp(optarg, "all") && strcmp(optarg, "seen")) {
				fprintf(stderr, "svreport: --expect wants all or seen, got '%s'\n", optarg);
				return 2;
			}
			cfg.expect_seen = !strcmp(optarg, "seen");
			break;
		case 's':
			if (nsetup >= SVR_MAX_SETUP || strlen(optarg) >= SVR_SETUP_SIZE) {
				fprintf(stderr, "svreport: --setup: at most %d lines of < %d characters, got '%s'\n",
					SVR_MAX_SETUP, SVR_SETUP_SIZE, optarg);
				return 2;
			}
			setup[nsetup++] = optarg;
			break;
		case 'w':
			if (sv_parse_double(optarg, &w) || w < 0.1 || w > 600) {
				fprintf(stderr, "svreport: --window: '%s' is not a number of seconds in 0.1..600\n",
					optarg);
				return 2;
			}
			cfg.window_ns = (int64_t)(w * 1e9);
			break;
		case 1:
			if (parse_u64(optarg, &u, "--max-frames"))
				return 2;
			cfg.max_frames = u;
			break;
		case 2:
			if (parse_u64(optarg, &u, "--exact-limit"))
				return 2;
			cfg.exact_limit = u;
			break;
		case 3:
			verdict_exit = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("svreport %s\n", SVKIT_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc && !nguests) {
		fprintf(stderr, "svreport: no record files given\n");
		usage(stderr);
		return 2;
	}

	err = load_budgets(budget_path, &budgets, &cfg);
	if (!err)
		err = load_baselines(ct_path, &ct, dr_path, &dr);
	if (err)
		return err;
	err = svr_create(&r, &cfg);
	if (err) {
		fprintf(stderr, "svreport: %s\n", strerror(-err));
		return 1;
	}
	keep_budget_hops(r, &budgets);
	for (unsigned i = 0; i < nsetup; i++)
		svr_add_setup(r, setup[i]);	/* checked above */
	ret = name_guests(r, aliases, naliases, labels, nlabels);
	if (!ret)
		ret = add_records(r, guests, nguests, (const char *const *)argv + optind, (unsigned)(argc - optind));
	if (ret)
		goto out;
	ret = 1;
	if (csv_path) {
		csv = fopen(csv_path, "we");
		if (!csv) {
			fprintf(stderr, "svreport: %s: %s\n", csv_path, strerror(errno));
			goto out;
		}
		svr_set_csv(r, csv);
	}
	err = svr_run(r);
	say_after_run(r, aliases, naliases);
	svr_evaluate(r, &budgets, &ev);
	if (write_reports(r, &budgets, &ev, &ct, dr_path ? &dr : NULL, json, quiet, html_path))
		goto out;
	if (csv && fclose(csv)) {
		csv = NULL;
		fprintf(stderr, "svreport: %s: write failed\n", csv_path);
		goto out;
	}
	csv = NULL;
	ret = err ? 1 : 0;
	if (!ret && verdict_exit)
		ret = verdict_status(ev.verdict);
out:
	if (csv)
		fclose(csv);
	svr_destroy(r);
	return ret;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svsub: IEC 61850-9-2 Sampled Values subscriber.
 *
 * Every source (a capture file here; AF_XDP / AF_PACKET through svrx when built with svsub_rx) delivers
 * frames as struct svsub_frame to one pipeline (svsub_proc: decode -> track -> outputs); the final summary
 * is the same whatever the source (svsub_summary).
 */
#include <errno.h>
#include <net/if.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sv_clock.h"
#include "sv_json.h"
#include "sv_log.h"
#include "sv_pcap.h"
#include "svsub_proc.h"
#include "svsub_rec.h"
#include "svsub_scl.h"
#include "svsub_comtrade.h"
#include "svsub_summary.h"
#include "svsub_track.h"
#include "svapp.h" /* app: applications, -c FILE */
#ifdef SVSUB_HAVE_RX
#include "svrx.h"
#include "svrx_live.h" /* rx: live loop, receive options */
#endif

#define PROG "svsub"

enum { EXIT_RUNTIME = 1, EXIT_USAGE = 2 };

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

struct opts {
	const char *read;
	const char *interface;
	const char *backend;
	const char *write;
	const char *record; /* per-sample records (svsub_rec) */
	double duration_s;	/* live: 0 = until SIGINT/SIGTERM */
	bool duration_set;	/* --duration given (even 0) */
	bool jsonl;
	bool json;
	bool cli_jsonl, cli_json; /* given on the command line: they override the file's other output */
	bool histograms;
	bool quiet;
	bool verbose;
	bool clock_trusted; /* --clock-trusted: ignore adjtimex's STA_UNSYNC */
	struct svsub_track_cfg track;
	/* app: application (--app) and configuration file (-c) */
	const char *app;
	struct svapp_params app_params;
	bool print_config;
#ifdef SVSUB_HAVE_RX
	struct svrx_live_opts rx; /* rx: --interface-b, --xdp-mode, ... */
#endif
};

/* The accepted values of a configuration key (svapp_config.c: one source for the file, the options and
 * this help). */
struct key_ranges {
	char duration[48], max_streams[48], nominal_hz[48], wrap[48], reorder[48], resync[48], max_latency[48];
	char clock_tolerance[48];
	char pickup[48], trip_samples[48], dropoff[48], current_lsb[48], record_size[48];
	char record_flush[48], record_sync[48], record_min_free[48];
};

static void usage(FILE *f)
{
	struct key_ranges r;

	svsub_config_range("duration", r.duration, sizeof(r.duration));
	svsub_config_range("max_streams", r.max_streams, sizeof(r.max_streams));
	svsub_config_range("nominal_hz", r.nominal_hz, sizeof(r.nominal_hz));
	svsub_config_range("wrap", r.wrap, sizeof(r.wrap));
	svsub_config_range("reorder_window", r.reorder, sizeof(r.reorder));
	svsub_config_range("resync_run", r.resync, sizeof(r.resync));
	svsub_config_range("max_latency_ms", r.max_latency, sizeof(r.max_latency));
	svsub_config_range("clock_tolerance_us", r.clock_tolerance, sizeof(r.clock_tolerance));
	svsub_config_range("pickup", r.pickup, sizeof(r.pickup));
	svsub_config_range("trip_samples", r.trip_samples, sizeof(r.trip_samples));
	svsub_config_range("dropoff", r.dropoff, sizeof(r.dropoff));
	svsub_config_range("current_lsb", r.current_lsb, sizeof(r.current_lsb));
	svsub_config_range("record_size_mib", r.record_size, sizeof(r.record_size));
	svsub_config_range("record_flush_ms", r.record_flush, sizeof(r.record_flush));
	svsub_config_range("record_sync_ms", r.record_sync, sizeof(r.record_sync));
	svsub_config_range("record_min_free_mib", r.record_min_free, sizeof(r.record_min_free));
	fprintf(f,
"Usage: " PROG " --read FILE [--jsonl] [--json] [--app NAME] [options]\n"
"       " PROG " --interface IF [--backend af_xdp|af_packet] [--duration S] [--jsonl] [--json] [--app NAME]\n"
"                [options]\n"
"\n"
"Decodes IEC 61850-9-2 Sampled Values (EtherType 0x88BA, with or without 802.1Q tag) strictly, tracks every\n"
"stream (APPID, svID): lost samples (smpCnt gaps, across wraps), duplicates, out of order, counter resets,\n"
"confRev/smpSynch changes, simulation bit, quality, inter-arrival time and, for synchronised streams\n"
"(smpSynch 2), latency = receive time - sample time.\n"
"\n"
"Sources:\n"
"  -r, --read FILE          read a pcap or pcapng capture (Ethernet); '-' reads stdin\n"
"  -i, --interface IF       receive live on IF%s\n"
"      --backend NAME       af_xdp (default) or af_packet\n"
"      --duration S         live: stop after S seconds (%s; 0 = until SIGINT/SIGTERM: the\n"
"                           default)\n"
"Outputs:\n"
"      --jsonl              one JSON object per ASDU on stdout (malformed frames: {frame, error, offset});\n"
"                           the text summary then goes to stderr\n"
"      --json               the final summary as one JSON object on stdout (with --jsonl or --app,\n"
"                           whose JSON lines share stdout: one more line among them)\n"
"  -w, --write FILE         save the SV frames with their receive time (.pcapng: pcapng, else pcap, ns)\n"
"      --record FILE        per-sample records for svreport: T3 (receive) and, live with --app, T4 (the\n"
"                           application has returned from the frame's samples); no T4 without --app\n"
"      --record-size MIB    a new part of the record every MIB MiB (%s, default " SV_REC_SIZE_MIB_DEFAULT "; 0 = one file):\n"
"                           FILE is the newest, FILE.1 the one before; svreport reads them from FILE\n"
"      --record-keep N|all  rotated parts kept besides FILE, the oldest deleted first (default " SV_REC_KEEP_DEFAULT "; 8 streams\n"
"                           at 4000 frames/s write about 15 GB an hour; all: only the floor deletes)\n"
"      --record-flush-ms MS a partial block is written once its records waited MS (%s, default\n"
"                           " SV_REC_FLUSH_MS_DEFAULT "; 0 = only full blocks): a killed svsub loses at most that\n"
"      --record-sync-ms MS  fdatasync the record every MS (%s, default " SV_REC_SYNC_MS_DEFAULT ": never), for a\n"
"                           host that may lose power; it may delay the receive loop by the disk's latency\n"
"      --record-min-free MIB  free-space floor of the record's filesystem (%s, default " SV_REC_MIN_FREE_MIB_DEFAULT "; 0 =\n"
"                           none): below it the run's oldest parts are deleted, then blocks held back.\n"
"                           A full disk never stops receiving or the application: blocks that cannot be\n"
"                           written are counted (stderr, --json record, the file's UNWRITTEN and END\n"
"                           records), later ones are tried\n"
"      --histograms         add inter-arrival and latency histograms to the text summary\n"
"  -q, --quiet              no text summary, no status lines\n"
"  -v, --verbose            log more on stderr\n"
"Stream tracking:\n"
"      --max-streams N      stream table size (%s, default %u); more streams are counted as overflow.\n"
"                           A slot is ~85 KiB of address space; memory is taken as streams come (live:\n"
"                           mapped ahead of them, so that a new stream does not page-fault)\n"
"      --nominal-hz HZ      nominal frequency for smpRate in samples per period (%s, default 50)\n"
"      --wrap N             smpCnt wraps at N for every stream (%s; 0 = stated, else learned: the\n"
"                           default)\n"
"      --reorder-window N   samples behind the newest that count as late/duplicate (%s; 0 = wrap/2:\n"
"                           the default)\n"
"      --resync-run N       consecutive backward samples that confirm a counter restart (%s; 0 = %u:\n"
"                           the default)\n"
"      --max-latency-ms MS  larger latencies are outliers (a frame held back, or a clock off by more):\n"
"                           counted with the largest and when (first, last), kept out of the latency\n"
"                           histogram (%s; 0 = 500: the default)\n"
"      --clock-tolerance-us US  negative latencies down to -US are clock granularity (%s, default 20)\n"
"                           The clock is declared not synchronised, and the latency not reported, only on\n"
"                           evidence about the clock: a latency below -US (received before it was sampled),\n"
"                           outliers in more than half of the samples (a clock off shifts them all), or\n"
"                           the host clock unsynchronised (adjtimex STA_UNSYNC) without --clock-trusted\n"
"      --clock-trusted      live: treat the host clock as synchronised even when adjtimex reports it\n"
"                           unsynchronised (publisher and subscriber share this clock: one host, netns\n"
"                           tests); the other evidence still applies; the JSON summary says so\n"
"                           (source.clock_trusted). Off by default\n"
"Application (app):\n"
"      --app NAME           feed every accepted sample to NAME: overcurrent (ANSI 50, one JSON line per\n"
"                           trip on stdout; the text summary then goes to stderr), phasor\n"
"      --pickup A           overcurrent: pickup per phase, primary A RMS (%s, default 1000)\n"
"      --trip-samples N     overcurrent: consecutive samples over pickup to trip (%s; 0 = a quarter\n"
"                           cycle, 20 at 80 samples/cycle: the default)\n"
"      --dropoff R          overcurrent: reset when every phase is below R x pickup (%s, default 0.95)\n"
"      --no-block-test      overcurrent: do not block on test quality or simulated samples\n"
"      --current-lsb A      amperes per LSB of the current channels (%s; 0 = the dataset's scale, 0.001\n"
"                           for 9-2LE: the default)\n"
"COMTRADE (IEEE C37.111-2013):\n"
"      --comtrade DIR       write a record into DIR around each trip of --app overcurrent: trigger = the\n"
"                           pickup (first sample over pickup), status channels PICKUP, TRIP, INCEPTION,\n"
"                           MISSING (lost samples, marked as missing data) and per channel _INVALID/_TEST;\n"
"                           times in UTC with tmq_code/leapsec from the clock; written off the receive thread\n"
"      --comtrade-format F  binary32 (default: raw counts, a = scale), float32 (primary values), ascii\n"
"      --comtrade-cff       one .cff per record instead of .cfg + .dat + .hdr\n"
"      --comtrade-pre MS    record before the trigger (default 100)\n"
"      --comtrade-post MS   record after the trigger (default 200; extended to the trip)\n"
"      --comtrade-range FROM,TO  also one record per stream of seconds FROM..TO after its first sample\n"
"                           (at most 60 s; without --app only this one)\n"
"SCL (IEC 61850-6):\n"
"      --scl FILE           check every stream against its control block in FILE (SCD, CID, ...): APPID,\n"
"                           MAC, VLAN, confRev, datSet, nofASDU, smpRate, smpMod, dataset length; streams\n"
"                           expected and never seen are missing. The blocks' datasets and scale factors\n"
"                           read the values (after -c's datasets); live, their APPIDs and groups go into the\n"
"                           receive filter unless --appid / --group are given\n"
"      --ied NAME           expect the streams IED NAME takes (ExtRef, LSVS, IEDName), or publishes when it\n"
"                           takes none; default: every block of the file that has an SMV address\n"
"Configuration:\n"
"  -c, --config FILE        YAML configuration (keys: --print-config); command-line options override it.\n"
"                           Only there: datasets, what seqData holds per stream (svsub(1), DATASETS;\n"
"                           configs/sub-datasets.yaml). Undeclared, 64 octets are read as 9-2LE and other\n"
"                           lengths are not read: no value, no quality claimed\n"
"      --print-config       print the effective configuration as YAML and exit\n"
"  -h, --help               this help\n"
"  -V, --version            version\n",
#ifdef SVSUB_HAVE_RX
		"",
#else
		" (not built in: svsub_rx back-ends absent)",
#endif
		r.duration, r.record_size, r.record_flush, r.record_sync, r.record_min_free, r.max_streams,
		SVSUB_TRACK_MAX_STREAMS_DEFAULT, r.nominal_hz, r.wrap, r.reorder, r.resync, SVSUB_TRACK_RESYNC_RUN_DEFAULT,
		r.max_latency, r.clock_tolerance, r.pickup, r.trip_samples, r.dropoff,
		r.current_lsb);
#ifdef SVSUB_HAVE_RX
	svrx_live_usage(f); /* rx: live receive options, before the exit status and examples */
#endif
	fprintf(f,
"\n"
"Exit status: 0 the source was read (even with malformed frames), 1 it could not be read or an output\n"
"failed (also records not all written: receiving went on, the summary says how many and why), 2 usage\n"
"error.\n"
"\n"
"EXAMPLES\n"
"  " PROG " --read tests/data/sv92le_omicron_50hz_fault_Z1_seapath.pcap\n"
"  " PROG " --read capture.pcapng --jsonl | jq -c 'select(.svID==\"MU01\") | [.smpCnt, .values[0]]'\n"
"  " PROG " --read capture.pcap --json | jq '.streams[] | {svID, lost, duplicates}'\n"
"  " PROG " --interface eth1 --backend af_packet --duration 10 --json --write rx.pcapng\n"
"  " PROG " --read tests/data/sv92le_omicron_50hz_fault_Z1_seapath.pcap --app overcurrent --pickup 1000\n"
"  " PROG " -c configs/sub-overcurrent.yaml --interface eth1 --print-config\n"
"  " PROG " -c configs/sub-datasets.yaml --read capture.pcap --jsonl   # seqData read as declared\n"
"  " PROG " --read capture.pcap --scl station.scd --ied PROT1 --json | jq .scl   # SCL checks\n"
"  " PROG " --read tests/data/sv92le_omicron_50hz_fault_Z1_seapath.pcap --app overcurrent --comtrade /tmp/dr\n");
}

enum {
	OPT_BACKEND = 256,
	OPT_DURATION,
	OPT_JSONL,
	OPT_JSON,
	OPT_HISTOGRAMS,
	OPT_MAX_STREAMS,
	OPT_NOMINAL_HZ,
	OPT_WRAP,
	OPT_REORDER,
	OPT_RESYNC,
	OPT_MAX_LATENCY,
	OPT_CLOCK_TOLERANCE,
	OPT_CLOCK_TRUSTED,
	OPT_RECORD,
	OPT_RECORD_SIZE,
	OPT_RECORD_KEEP,
	OPT_RECORD_FLUSH,
	OPT_RECORD_SYNC,
	OPT_RECORD_MIN_FREE,
	OPT_APP, /* app */
	OPT_PICKUP,
	OPT_TRIP_SAMPLES,
	OPT_DROPOFF,
	OPT_NO_BLOCK_TEST,
	OPT_CURRENT_LSB,
	OPT_PRINT_CONFIG,
	OPT_SCL,
	OPT_IED,
	OPT_COMTRADE,
	OPT_COMTRADE_FORMAT,
	OPT_COMTRADE_CFF,
	OPT_COMTRADE_PRE,
	OPT_COMTRADE_POST,
	OPT_COMTRADE_RANGE,
};

/* svsub -c FILE: loaded before the options, which override it; the effective configuration is what
 * --print-config prints. The options below write into it too. */
static struct svsub_file_config file_cfg;
/* its datasets, as the tracker takes them (checked with the file) */
static struct svsub_dataset_rule dataset_rules[SVSUB_CFG_MAX_DATASETS];
static bool cli_source;

/* Options that mirror a key of the configuration table: parsed through the table (svsub_config_set_opt),
 * so the file, the command line and --help accept the same values, and copied to the options from
 * file_cfg after the command line (apply_config_keys). */
static const struct {
	int opt;
	const char *key;
} key_opts[] = {
	{ OPT_DURATION, "duration" },		{ OPT_MAX_STREAMS, "max_streams" },
	{ OPT_NOMINAL_HZ, "nominal_hz" },	{ OPT_WRAP, "wrap" },
	{ OPT_REORDER, "reorder_window" },	{ OPT_RESYNC, "resync_run" },
	{ OPT_MAX_LATENCY, "max_latency_ms" },	{ OPT_CLOCK_TOLERANCE, "clock_tolerance_us" },
	{ OPT_PICKUP, "pickup" },
	{ OPT_TRIP_SAMPLES, "trip_samples" },	{ OPT_DROPOFF, "dropoff" },
	{ OPT_CURRENT_LSB, "current_lsb" },	{ OPT_RECORD_SIZE, "record_size_mib" },
	{ OPT_RECORD_KEEP, "record_keep" },	{ OPT_RECORD_FLUSH, "record_flush_ms" },
	{ OPT_RECORD_SYNC, "record_sync_ms" },	{ OPT_RECORD_MIN_FREE, "record_min_free_mib" },
	{ OPT_SCL, "scl" },			{ OPT_IED, "ied" },
	{ OPT_COMTRADE, "comtrade" },		{ OPT_COMTRADE_FORMAT, "comtrade_format" },
	{ OPT_COMTRADE_PRE, "comtrade_pre_ms" },	{ OPT_COMTRADE_POST, "comtrade_post_ms" },
	{ OPT_COMTRADE_RANGE, "comtrade_range" },
};

static const char *key_of_opt(int c)
{
	for (size_t i = 0; i < sizeof(key_opts) / sizeof(key_opts[0]); i++)
		if (key_opts[i].opt == c)
			return key_opts[i].key;
	return NULL;
}

static const char *opt_name(const struct option *longopts, int c)
{
	for (const struct option *lo = longopts; lo->name; lo++)
		if (lo->val == c)
			return lo->name;
	return "?";
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "read", required_argument, NULL, 'r' },
		{ "interface", required_argument, NULL, 'i' },
		{ "backend", required_argument, NULL, OPT_BACKEND },
		{ "duration", required_argument, NULL, OPT_DURATION },
		{ "jsonl", no_argument, NULL, OPT_JSONL },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "write", required_argument, NULL, 'w' },
		{ "record", required_argument, NULL, OPT_RECORD },
		{ "record-size", required_argument, NULL, OPT_RECORD_SIZE },
		{ "record-keep", required_argument, NULL, OPT_RECORD_KEEP },
		{ "record-flush-ms", required_argument, NULL, OPT_RECORD_FLUSH },
		{ "record-sync-ms", required_argument, NULL, OPT_RECORD_SYNC },
		{ "record-min-free", required_argument, NULL, OPT_RECORD_MIN_FREE },
		{ "histograms", no_argument, NULL, OPT_HISTOGRAMS },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "max-streams", required_argument, NULL, OPT_MAX_STREAMS },
		{ "nominal-hz", required_argument, NULL, OPT_NOMINAL_HZ },
		{ "wrap", required_argument, NULL, OPT_WRAP },
		{ "reorder-window", required_argument, NULL, OPT_REORDER },
		{ "resync-run", required_argument, NULL, OPT_RESYNC },
		{ "max-latency-ms", required_argument, NULL, OPT_MAX_LATENCY },
		{ "clock-tolerance-us", required_argument, NULL, OPT_CLOCK_TOLERANCE },
		{ "clock-trusted", no_argument, NULL, OPT_CLOCK_TRUSTED },
		{ "app", required_argument, NULL, OPT_APP }, /* app */
		{ "pickup", required_argument, NULL, OPT_PICKUP },
		{ "trip-samples", required_argument, NULL, OPT_TRIP_SAMPLES },
		{ "dropoff", required_argument, NULL, OPT_DROPOFF },
		{ "no-block-test", no_argument, NULL, OPT_NO_BLOCK_TEST },
		{ "current-lsb", required_argument, NULL, OPT_CURRENT_LSB },
		{ "comtrade", required_argument, NULL, OPT_COMTRADE },
		{ "comtrade-format", required_argument, NULL, OPT_COMTRADE_FORMAT },
		{ "comtrade-cff", no_argument, NULL, OPT_COMTRADE_CFF },
		{ "comtrade-pre", required_argument, NULL, OPT_COMTRADE_PRE },
		{ "comtrade-post", required_argument, NULL, OPT_COMTRADE_POST },
		{ "comtrade-range", required_argument, NULL, OPT_COMTRADE_RANGE },
		{ "scl", required_argument, NULL, OPT_SCL },
		{ "ied", required_argument, NULL, OPT_IED },
		{ "config", required_argument, NULL, 'c' },
		{ "print-config", no_argument, NULL, OPT_PRINT_CONFIG },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
#ifdef SVSUB_HAVE_RX
		SVRX_LIVE_LONGOPTS, /* rx */
#endif
		{ 0 },
	};
	char msg[256];
	int c;

	while ((c = getopt_long(argc, argv, "r:i:w:qvhVc:", longopts, NULL)) != -1) {
		const char *key = key_of_opt(c);

		if (key) {
			if (svsub_config_set_opt(&file_cfg, key, optarg, msg, sizeof(msg))) {
				fprintf(stderr, PROG ": --%s: %s\n", opt_name(longopts, c), msg);
				return -EINVAL;
			}
			o->duration_set |= c == OPT_DURATION;
			continue;
		}
		switch (c) {
		case 'r':
			o->read = optarg;
			break;
		case 'i':
			o->interface = optarg;
			break;
		case OPT_BACKEND:
			if (strcmp(optarg, "af_xdp") && strcmp(optarg, "af_packet")) {
				fprintf(stderr, PROG ": --backend: '%s' is not af_xdp or af_packet\n", optarg);
				return -EINVAL;
			}
			o->backend = optarg;
			break;
		case OPT_JSONL:
			o->jsonl = o->cli_jsonl = true;
			break;
		case OPT_JSON:
			o->json = o->cli_json = true;
			break;
		case 'w':
			o->write = optarg;
			break;
		case OPT_RECORD:
			o->record = optarg;
			break;
		case OPT_HISTOGRAMS:
			o->histograms = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'v':
			o->verbose = true;
			break;
		case OPT_CLOCK_TRUSTED:
			o->clock_trusted = true;
			break;
		case OPT_APP: /* app */
			if (!svapp_find(optarg)) {
				fprintf(stderr, PROG ": --app: no application '%s' (overcurrent, phasor)\n", optarg);
				return -EINVAL;
			}
			o->app = optarg;
			break;
		case OPT_COMTRADE_CFF:
			file_cfg.comtrade_cff = true;
			break;
		case OPT_NO_BLOCK_TEST:
			o->app_params.no_block_test = true;
			break;
		case 'c':
			break; /* loaded before the options (svsub_config_prescan) so that they override it */
		case OPT_PRINT_CONFIG:
			o->print_config = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			printf(PROG " (svkit) %s\n", SVKIT_VERSION);
			exit(0);
		default:
#ifdef SVSUB_HAVE_RX
			/* rx: receive options */
			if (c != '?' && c != ':') {
				int r = svrx_live_parse_opt(&o->rx, c, optarg);

				if (r == 0)
					break;
				if (r == -EINVAL)
					return -EINVAL;
			}
#endif
			fprintf(stderr, "Try '" PROG " --help'.\n");
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, PROG ": unexpected argument '%s'\nTry '" PROG " --help'.\n", argv[optind]);
		return -EINVAL;
	}
	if (!o->print_config && !!o->read == !!o->interface) {
		fprintf(stderr, PROG ": give exactly one of --read FILE or --interface IF\nTry '" PROG " --help'.\n");
		return -EINVAL;
	}
	if (o->read && (o->backend || o->duration_set)) {
		fprintf(stderr, PROG ": --backend and --duration apply to --interface only\n");
		return -EINVAL;
	}
#ifndef SVSUB_HAVE_RX
	if (o->interface) {
		fprintf(stderr, PROG ": live receive (--interface) is not built into this svsub\n");
		return -EINVAL;
	}
#endif
	return 0;
}

static void set_str(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src ? src : "");
}

static int load_config_file(int argc, char **argv, struct opts *o)
{
	struct sv_cfg_error cerr = { 0 };
	const char *path = svsub_config_prescan(argc, argv, &cli_source);
	struct svsub_file_config *c = &file_cfg;
	int err;

	if (svsub_config_init(c))
		return -EINVAL;
	if (!path)
		return 0;
	err = sv_config_load_file(svsub_config_table, c, path, &cerr);
	if (err) {
		if (err == -EINVAL)
			fprintf(stderr, PROG ": %s\n", cerr.text);
		else
			fprintf(stderr, PROG ": %s: %s\n", path, strerror(-err));
		return err;
	}
	err = svsub_config_check(c, path, cerr.text, sizeof(cerr.text));
	if (err) {
		fprintf(stderr, PROG ": %s\n", cerr.text);
		return err;
	}
	err = svsub_config_datasets(c, dataset_rules, &o->track.ndatasets, cerr.path, sizeof(cerr.path), cerr.msg,
				    sizeof(cerr.msg));
	if (err) { /* svsub_config_check said it first */
		fprintf(stderr, PROG ": %s: %s: %s\n", path, cerr.path, cerr.msg);
		return err;
	}
	/* A source named on the command line replaces the file's. */
	if (!cli_source) {
		o->read = c->read[0] ? c->read : NULL;
		o->interface = c->interface[0] ? c->interface : NULL;
	}
	o->write = c->write[0] ? c->write : NULL;
	o->json = c->json;
	o->jsonl = c->jsonl;
	o->histograms = c->histograms;
	o->quiet = c->quiet;
	o->app = c->app[0] ? c->app : NULL;
	if (o->app && !svapp_find(o->app)) {
		fprintf(stderr, PROG ": %s: app: no application '%s' (overcurrent, phasor)\n", path, o->app);
		return -EINVAL;
	}
	o->app_params.no_block_test = !c->block_test;
	o->clock_trusted = c->clock_trusted;
	return 0;
}

/* After the command line: the keys its options share with the file (key_opts), from file_cfg where both
 * wrote them. */
static void apply_config_keys(struct opts *o)
{
	const struct svsub_file_config *c = &file_cfg;

	o->duration_s = c->duration;
	o->app_params.pickup_a = c->pickup;
	o->app_params.trip_samples = c->trip_samples;
	o->app_params.dropoff_ratio = c->dropoff;
	o->app_params.current_lsb_a = c->current_lsb;
	o->track.nominal_hz = (uint16_t)c->nominal_hz;
	o->track.wrap = c->wrap;
	o->track.max_streams = c->max_streams;
	o->track.reorder_window = c->reorder_window;
	o->track.resync_run = c->resync_run;
	o->track.max_latency_ns = (int64_t)(c->max_latency_ms * 1e6);
	o->track.clock_tolerance_ns = (int64_t)(c->clock_tolerance_us * 1e3 + 0.5);
	o->track.datasets = dataset_rules;
}

/* stdout carries one kind of output that a machine can parse: the summary object (--json), or JSON lines
 * (--jsonl, an application's events); with both, the summary is one more line (compact) among them,
 * so stdout stays JSON lines (a service with --json and an app in its file still starts). A command-line
 * --json / --jsonl replaces the file's other one. */
static void check_outputs(struct opts *o)
{
	if (o->cli_json && !o->cli_jsonl)
		o->jsonl = false;
	if (o->cli_jsonl && !o->cli_json)
		o->json = false;
}

/* After the options: live-only keys of the file apply when the source is live and the command line
 * did not set them; --print-config prints and returns 1. */
static int finish_config(struct opts *o)
{
	static struct svsub_file_config out;
	struct svsub_file_config *c = &file_cfg;

	if (o->interface && !o->backend)
		o->backend = svsub_cfg_backend_names[c->backend];
	if (!o->print_config)
		return 0;
	/* A copy: the options' strings may point into file_cfg. */
	out = *c;
	c = &out;
	set_str(c->read, sizeof(c->read), o->read);
	set_str(c->interface, sizeof(c->interface), o->interface);
	c->backend = o->backend && !strcmp(o->backend, "af_packet") ? SVSUB_CFG_AF_PACKET : SVSUB_CFG_AF_XDP;
	c->duration = o->duration_s;
	set_str(c->write, sizeof(c->write), o->write);
	c->json = o->json;
	c->jsonl = o->jsonl;
	c->histograms = o->histograms;
	c->quiet = o->quiet;
	set_str(c->app, sizeof(c->app), o->app);
	c->pickup = o->app_params.pickup_a;
	c->trip_samples = o->app_params.trip_samples;
	c->dropoff = o->app_params.dropoff_ratio;
	c->block_test = !o->app_params.no_block_test;
	c->current_lsb = o->app_params.current_lsb_a;
	c->nominal_hz = o->track.nominal_hz ? o->track.nominal_hz : 50;
	c->wrap = o->track.wrap;
	c->max_streams = o->track.max_streams ? o->track.max_streams : SVSUB_TRACK_MAX_STREAMS_DEFAULT;
	c->reorder_window = o->track.reorder_window;
	c->resync_run = o->track.resync_run;
	c->max_latency_ms = (double)o->track.max_latency_ns / 1e6;
	c->clock_trusted = o->clock_trusted;
	if (sv_config_print(svsub_config_table, &out, stdout) || fflush(stdout))
		return -EIO;
	return 1;
}

/* --comtrade DIR: the recorder, its windows and clock state. */
static struct svsub_comtrade *comtrade;

static int parse_range(const char *s, double *from, double *to)
{
	char a[32], b[32];
	const char *comma = strchr(s, ',');

	if (!comma || (size_t)(comma - s) >= sizeof(a) || strlen(comma + 1) >= sizeof(b))
		return -EINVAL;
	snprintf(a, sizeof(a), "%.*s", (int)(comma - s), s);
	snprintf(b, sizeof(b), "%s", comma + 1);
	return sv_parse_double(a, from) || sv_parse_double(b, to) ? -EINVAL : 0;
}

static int setup_comtrade(const struct opts *o, const struct sv_clock_sync *sync)
{
	struct svsub_comtrade_cfg cc = {
		.dir = file_cfg.comtrade,
		.format = (uint8_t)file_cfg.comtrade_format,
		.cff = file_cfg.comtrade_cff,
		.pre_s = file_cfg.comtrade_pre_ms / 1e3,
		.post_s = file_cfg.comtrade_post_ms / 1e3,
		.nominal_hz = o->track.nominal_hz ? o->track.nominal_hz : 50,
		.live = o->interface != NULL,
		.source = o->read ? o->read : o->interface,
	};
	int err;

	if (file_cfg.comtrade_range[0]) {
		cc.range = true;
		if (parse_range(file_cfg.comtrade_range, &cc.range_from_s, &cc.range_to_s) || cc.range_from_s < 0 ||
		    cc.range_to_s <= cc.range_from_s || cc.range_to_s - cc.range_from_s > SVSUB_CT_MAX_RANGE_S) {
			fprintf(stderr, PROG ": --comtrade-range: '%s' is not FROM,TO seconds with 0 <= FROM < TO, at most %g s "
				"apart\n", file_cfg.comtrade_range, SVSUB_CT_MAX_RANGE_S);
			return -EINVAL;
		}
	} else if (!o->app || strcmp(o->app, "overcurrent")) {
		fprintf(stderr, PROG ": --comtrade: records are made around the trips of --app overcurrent, or over "
			"--comtrade-range FROM,TO\n");
		return -EINVAL;
	}
	if (sync) {
		cc.tai_offset_ns = (int64_t)sync->tai_offset_s * 1000000000;
		cc.clock_synchronised = sv_clock_sync_ok(sync);
		cc.max_error_ns = sync->maxerror_ns;
		if (sync->tai_unset && !o->quiet)
			fprintf(stderr, PROG ": --comtrade: this host's TAI offset is unset (CLOCK_TAI = REALTIME): record "
				"times are REALTIME, not converted from TAI, and marked unreliable (tmq_code F)\n");
	}
	err = svsub_comtrade_create(&comtrade, &cc);
	if (err)
		fprintf(stderr, PROG ": --comtrade %s: %s\n", cc.dir, strerror(-err));
	return err;
}

/* --scl FILE: the file's control blocks, the checker, their datasets after the configuration's. */
static struct sv_scl *scl_file;
static struct svsub_scl *scl_check;
static struct svsub_dataset_rule *scl_rules;

static int setup_scl(struct opts *o)
{
	struct sv_scl_error err;
	char msg[512];
	unsigned n;
	int rc;

	rc = sv_scl_load(&scl_file, file_cfg.scl, &err);
	if (rc) {
		fprintf(stderr, PROG ": --scl: %s\n", err.text);
		return rc;
	}
	rc = svsub_scl_create(&scl_check, scl_file, file_cfg.ied[0] ? file_cfg.ied : NULL, msg, sizeof(msg));
	if (rc) {
		fprintf(stderr, PROG ": --ied: %s\n", rc == -ENOENT ? msg : strerror(-rc));
		return rc;
	}
	/* the configuration's datasets first (they override), then the blocks' */
	n = o->track.ndatasets;
	scl_rules = calloc(n + scl_file->ncb + 1, sizeof(*scl_rules));
	if (!scl_rules)
		return -ENOMEM;
	memcpy(scl_rules, dataset_rules, n * sizeof(*scl_rules));
	n += svsub_scl_dataset_rules(scl_check, scl_rules + n, scl_file->ncb);
	o->track.datasets = scl_rules;
	o->track.ndatasets = n;
#ifdef SVSUB_HAVE_RX
	/* rx: the expected streams into the receive filter, unless the command line chose */
	if (o->interface && !o->rx.cfg.n_appids)
		o->rx.cfg.n_appids = svsub_scl_appids(scl_check, o->rx.cfg.appids, SVRX_MAX_APPIDS);
	if (o->interface && !o->rx.cfg.n_groups)
		o->rx.cfg.n_groups = svsub_scl_groups(scl_check, o->rx.cfg.groups, SVRX_MAX_GROUPS);
#endif
	if (!o->quiet) {
		struct svsub_scl_counts c;

		svsub_scl_counts(scl_check, &c);
		fprintf(stderr, PROG ": %s: %u streams expected%s%s%s, %u errors in the file (listed in the summary)\n",
			scl_file->file, c.expected, file_cfg.ied[0] ? " by IED " : "", file_cfg.ied,
			file_cfg.ied[0] ? "" : " (every block with an SMV address)", c.errors);
	}
	return 0;
}

static void install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGXFSZ, SIG_IGN); /* a file size limit is a full disk: EFBIG, counted (sv_record.h) */
}

/* Why the read of --read FILE did not reach the end of the file (NULL: it did): the summary is then partial
 * and says so. */
static const char *read_stopped;

/* Reads every frame of the capture into the pipeline. Returns 0, or -errno when the file could not be read
 * (to the end). */
static int run_read(const struct opts *o, struct svsub_proc *p, struct sv_pcap_reader *r)
{
	struct sv_pcap_pkt pkt;
	int rc = 0;

	(void)o;
	while (!(stop_requested && (read_stopped = "stopped by a signal")) && (rc = sv_pcap_next(r, &pkt)) == 1) {
		/* the record's time bounds, on the wall's time: a clock read every 4096 frames */
		if (!(pkt.index & 4095))
			svsub_proc_tick(p, sv_clock_gettime_ns(CLOCK_MONOTONIC));
		struct svsub_frame f = {
			.data = pkt.data,
			.len = pkt.caplen,
			.wire_len = pkt.origlen,
			.index = pkt.index,
			.rx_ns = pkt.ts_ns,
			.vlan_oob = SVSUB_VLAN_OOB_NONE,
		};

		rc = svsub_proc_frame(p, &f);
		if (rc == -EIO) {
			read_stopped = "an output failed";
			return rc;
		}
	}
	if (rc < 0)
		read_stopped = sv_pcap_read_error(r);
	return rc < 0 ? rc : 0;
}

/* stderr: what the summary does not cover, or covers with clamped times. */
static void report_read_end(const struct opts *o, struct svsub_proc *p, struct sv_pcap_reader *r)
{
	struct svsub_proc_counts n;

	svsub_proc_counts(p, &n);
	if (read_stopped)
		fprintf(stderr, PROG ": %s: the read stopped before the end of the file (%s): the summary covers its "
			"first %" PRIu64 " frames only\n", o->read, read_stopped, n.frames);
	if (sv_pcap_ts_clamped(r))
		fprintf(stderr, PROG ": %s: %" PRIu64 " frames with a timestamp beyond 2116 or before 1823, clamped "
			"there: their latency and inter-arrival time are not real\n", o->read, sv_pcap_ts_clamped(r));
}

#ifdef SVSUB_HAVE_RX
/* rx: the live loop lives in svrx_live.c (one or two interfaces, receive-path latency, back-end counters). */
static struct svrx_live *live_rx;

static int run_live(struct opts *o, struct svsub_proc *p)
{
	int err;

	o->rx.cfg.ifname = o->interface;
	if (o->backend && svrx_backend_parse(o->backend, &o->rx.cfg.backend))
		return -EINVAL;
	o->rx.duration_s = o->duration_s;
	o->rx.status = !o->quiet;
	err = svrx_live_open(&live_rx, &o->rx, o->quiet);
	if (err)
		return err;
	return svrx_live_run(live_rx, p, &stop_requested);
}
#endif

static int print_json_summary(const struct opts *o, struct svsub_proc *p, struct sv_pcap_reader *r,
			      const struct sv_clock_sync *sync, const struct sv_record_writer_stats *rec_st)
{
	struct sv_json j;

	sv_json_init(&j, stdout, o->jsonl || o->app ? 0 : SV_JSON_PRETTY); /* among JSON lines: one line */
	sv_json_object_begin(&j);
	sv_json_key(&j, "source");
	sv_json_object_begin(&j);
	if (o->read) {
		sv_json_kv_str(&j, "mode", "read");
		sv_json_kv_str(&j, "file", o->read);
		sv_json_kv_str(&j, "format", r ? sv_pcap_format_name(r) : NULL);
		if (r && sv_pcap_resolution_ns(r))
			sv_json_kv_uint(&j, "ts_resolution_ns", sv_pcap_resolution_ns(r));
		else
			sv_json_kv_null(&j, "ts_resolution_ns");
		/* The capture's clock and its sync state are not in the file: latencies are only as good as it. */
		sv_json_kv_str(&j, "rx_clock", "capture");
		sv_json_kv_null(&j, "host_clock_synchronised");
		/* a truncated or damaged file, a signal: the counts below cover only what was read */
		sv_json_kv_bool(&j, "read_complete", !read_stopped);
		sv_json_kv_str(&j, "read_error", read_stopped);
		sv_json_kv_uint(&j, "ts_clamped", r ? sv_pcap_ts_clamped(r) : 0);
	} else {
		sv_json_kv_str(&j, "mode", "live");
		sv_json_kv_str(&j, "interface", o->interface);
		sv_json_kv_str(&j, "backend", o->backend ? o->backend : "af_xdp");
		if (sync)
			sv_json_kv_bool(&j, "host_clock_synchronised", sv_clock_sync_ok(sync));
		else
			sv_json_kv_null(&j, "host_clock_synchronised");
		/* --clock-trusted: latencies were computed although adjtimex may say unsynchronised */
		sv_json_kv_bool(&j, "clock_trusted", o->clock_trusted);
#ifdef SVSUB_HAVE_RX
		if (live_rx)
			svrx_live_json(live_rx, &j); /* rx: "rx": [...], "rx_to_app_ns" */
#endif
	}
	sv_json_object_end(&j);
	svsub_summary_json_body(&j, p);
	sv_json_key(&j, "record"); /* what reached the disk: null without --record */
	sv_record_stats_json(&j, o->record, rec_st);
	if (scl_check)
		svsub_scl_json(scl_check, &j);
	if (comtrade)
		svsub_comtrade_json(comtrade, &j);
	sv_json_object_end(&j);
	return sv_json_end(&j);
}

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	struct svsub_proc_cfg pcfg = { 0 };
	struct sv_pcap_reader *r = NULL;
	struct sv_pcap_writer *w = NULL;
	struct svsub_proc *p = NULL;
	struct svapp *app = NULL; /* app */
	struct svsub_rec *rec = NULL;
	struct sv_record_writer_stats rec_st;
	struct sv_clock_sync sync, *syncp = NULL;
	int err, ret = 0;

#ifdef SVSUB_HAVE_RX
	svrx_live_opts_init(&o.rx); /* rx */
#endif
	svapp_params_init(&o.app_params); /* app */
	if (load_config_file(argc, argv, &o))
		return EXIT_USAGE;
	if (parse_args(argc, argv, &o))
		return EXIT_USAGE;
	apply_config_keys(&o);
	check_outputs(&o);
	err = finish_config(&o);
	if (err)
		return err > 0 ? 0 : EXIT_RUNTIME; /* printed the configuration, or could not */
	sv_log_set(sv_log_stderr, (void *)PROG, o.verbose ? SV_LOG_DEBUG : SV_LOG_WARN);
	install_signals();
	if (file_cfg.scl[0] && setup_scl(&o))
		return EXIT_USAGE;

	if (o.interface && sv_clock_sync_read(&sync) == 0) {
		syncp = &sync;
		o.track.host_unsync = !sv_clock_sync_ok(&sync) && !o.clock_trusted;
		if (!sv_clock_sync_ok(&sync) && !o.quiet) {
			char buf[256];

			sv_clock_sync_format(&sync, buf, sizeof(buf));
			fprintf(stderr, PROG ": host clock: %s: %s\n", buf,
				o.clock_trusted ? "trusted anyway (--clock-trusted): latencies are reported"
						: "latencies will be marked unsynchronised");
		}
	}
	if (o.read) {
		err = sv_pcap_open_read(&r, o.read);
		if (err)
			return EXIT_RUNTIME; /* logged with the reason */
	}
	if (o.write) {
		err = sv_pcap_open_write(&w, o.write, sv_pcap_format_for_path(o.write), 0, o.interface);
		if (err) {
			ret = EXIT_RUNTIME;
			goto out_close_reader;
		}
	}
	if (file_cfg.comtrade[0]) {
		err = setup_comtrade(&o, syncp);
		if (err) {
			ret = err == -EINVAL ? EXIT_USAGE : EXIT_RUNTIME;
			goto out_close_writer;
		}
		o.app_params.hooks = svsub_comtrade_hooks(comtrade);
	}
	if (o.app || comtrade) { /* app */
		o.app_params.nominal_hz = o.track.nominal_hz ? o.track.nominal_hz : 50;
		o.app_params.max_streams = o.track.max_streams;
		o.app_params.rx_clock_tai = o.interface != NULL; /* svrx stamps on TAI */
		err = svapp_create(&app, o.app, &o.app_params, stdout);
		if (err) {
			fprintf(stderr, PROG ": --app %s: %s\n", o.app ? o.app : "(none)", strerror(-err));
			ret = EXIT_RUNTIME;
			goto out_close_writer;
		}
		pcfg.app = app;
	}
	pcfg.scl = scl_check;
	pcfg.jsonl = o.jsonl ? stdout : NULL;
	pcfg.write = w;
	pcfg.track = o.track;
	pcfg.track.prefault = o.interface != NULL; /* live: no page faults on the per-packet path */
	pcfg.app_clock = -1;
	if (o.record) {
		struct svsub_rec_cfg rc = {
			.path = o.record,
			/* live: svrx stamps every frame on TAI; offline: the capture's own clock, taken as REALTIME */
			.clock = o.interface ? SV_CLOCK_TAI : SV_CLOCK_REALTIME,
			.rx_ts_src = SV_TS_SOFTWARE, /* live frames name their own source (svrx) */
			.ifindex = o.interface ? if_nametoindex(o.interface) : 0,
			/* T4 (DESIGN.md): the guest application got the sample: with --app only (without one
			 * there is no application, and a T3-T4 budget would judge svsub's own bookkeeping);
			 * live only, on the receive clock */
			.app_points = o.interface && o.app,
			/* record_keep checked with the configuration (svsub_config_set_opt / _check) */
			.opts = SV_REC_OPTS_OF(&file_cfg),
		};

		err = svsub_rec_open(&rec, &rc);
		if (err) {
			fprintf(stderr, PROG ": --record %s: %s\n", o.record, strerror(-err));
			ret = EXIT_RUNTIME;
			goto out_close_writer;
		}
		pcfg.rec = rec;
		pcfg.app_clock = o.interface && o.app ? SV_CLOCK_TAI : -1;
	}
	err = svsub_proc_create(&p, &pcfg);
	if (err == -ENOMEM) {
		uint32_t ms = pcfg.track.max_streams ? pcfg.track.max_streams : SVSUB_TRACK_MAX_STREAMS_DEFAULT;

		/* the stream table is the large part: say what it asked for */
		fprintf(stderr, PROG ": cannot set up: %s: --max-streams %u reserves %.1f MiB of address space (%zu "
			"KiB a stream, memory taken only as streams come; vm.overcommit_memory=2 or ulimit -v charge "
			"all of it)\n", strerror(-err), ms, (double)svsub_track_table_bytes(ms) / 1048576.0,
			svsub_track_table_bytes(1) / 1024);
		ret = EXIT_RUNTIME;
		goto out_close_writer;
	} else if (err) {
		fprintf(stderr, PROG ": cannot set up: %s\n", strerror(-err));
		ret = EXIT_RUNTIME;
		goto out_close_writer;
	}

	if (o.read) {
		err = run_read(&o, p, r);
		report_read_end(&o, p, r); /* even with -q: the summary is partial */
	} else {
#ifdef SVSUB_HAVE_RX
		err = run_live(&o, p);
#else
		err = -ENOTSUP;
#endif
	}
	if (err) {
		if (err == -EIO && svsub_proc_output_error(p))
			fprintf(stderr, PROG ": output failed: %s\n", strerror(EIO));
#ifdef SVSUB_HAVE_RX
		else if (o.interface && !live_rx) /* could not open (logged why); the live loop says its own */
			fprintf(stderr, PROG ": receive failed on %s: %s\n", o.interface, strerror(-err));
#else
		else if (o.interface)
			fprintf(stderr, PROG ": receive failed on %s: %s\n", o.interface, strerror(-err));
#endif
		/* a read error was logged by sv_pcap with the file name */
		ret = EXIT_RUNTIME;
	}
	if (w && sv_pcap_close_write(w))
		ret = EXIT_RUNTIME;
	w = NULL;
	/* The record's last block and END now (also after SIGINT/SIGTERM), so that the summaries say what
	 * reached the disk. */
	if (rec) {
		int rerr = svsub_rec_close(rec, &rec_st);

		rec = NULL;
		if (rerr)
			ret = EXIT_RUNTIME;
		if (rerr && rerr != -EIO)
			fprintf(stderr, PROG ": --record %s: %s\n", o.record, strerror(-rerr));
	}
	if (comtrade && svsub_comtrade_close(comtrade))
		ret = EXIT_RUNTIME; /* said by the writer, counted in the summary */

	/* Whatever happened, say what was received. */
	if (o.json) {
		if (print_json_summary(&o, p, r, syncp, o.record ? &rec_st : NULL))
			ret = EXIT_RUNTIME;
	} else if (!o.quiet) {
		FILE *out = o.jsonl || o.app ? stderr : stdout;

		if (svsub_summary_print(out, p, o.histograms) || (scl_check && svsub_scl_print(scl_check, out)))
			ret = EXIT_RUNTIME;
		if (comtrade)
			svsub_comtrade_print(comtrade, out);
	}
	if (svsub_proc_output_error(p) || fflush(stdout) || ferror(stdout))
		ret = EXIT_RUNTIME;
	if (o.record && (!o.quiet || sv_record_stats_incomplete(&rec_st))) { /* stderr, whatever else goes out */
		char line[512];

		sv_record_stats_format(&rec_st, line, sizeof(line));
		fprintf(stderr, PROG ": record %s: %s\n", o.record, line);
	}

	svapp_destroy(app); /* app: per-stream summary lines (before the tracker: they name its streams) */
	app = NULL;
	svsub_proc_destroy(p);
	if (app && (fflush(stdout) || ferror(stdout)))
		ret = EXIT_RUNTIME;
#ifdef SVSUB_HAVE_RX
	if (live_rx && !o.quiet)
		svrx_live_print(live_rx, stderr); /* rx: kernel counters, receive-path latency */
	svrx_live_close(live_rx);	  /* detaches the XDP program */
#endif
out_close_writer:
	svsub_rec_close(rec, NULL); /* set-up failed after it was opened: nothing recorded */
	svapp_destroy(app); /* app: NULL when destroyed above */
	if (w)
		sv_pcap_close_write(w);
out_close_reader:
	sv_pcap_close_read(r);
	svsub_scl_destroy(scl_check);
	sv_scl_free(scl_file);
	svsub_comtrade_free(comtrade);
	free(scl_rules);
	return ret;
}

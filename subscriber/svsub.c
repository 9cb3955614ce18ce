/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svsub: IEC 61850-9-2 Sampled Values subscriber.
 *
 * Every source (a capture file here; AF_XDP / AF_PACKET through svrx when built with svsub_rx) delivers
 * frames as struct svsub_frame to one pipeline (svsub_proc: decode -> track -> outputs); the final summary
 * is the same whatever the source (svsub_summary).
 */
#include <errno.h>
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
#include "svsub_summary.h"
#include "svsub_track.h"
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
	double duration_s;
	bool jsonl;
	bool json;
	bool histograms;
	bool quiet;
	bool verbose;
	struct svsub_track_cfg track;
#ifdef SVSUB_HAVE_RX
	struct svrx_live_opts rx; /* rx: --interface-b, --xdp-mode, ... */
#endif
};

static void usage(FILE *f)
{
	fprintf(f,
"Usage: " PROG " --read FILE [--jsonl | --json] [options]\n"
"       " PROG " --interface IF [--backend af_xdp|af_packet] [--duration S] [--json] [options]\n"
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
"      --duration S         stop after S seconds (live; default: until SIGINT/SIGTERM)\n"
"Outputs:\n"
"      --jsonl              one JSON object per ASDU on stdout (malformed frames: {frame, error, offset});\n"
"                           the text summary then goes to stderr\n"
"      --json               the final summary as one JSON object on stdout\n"
"  -w, --write FILE         save the SV frames with their receive time (.pcapng: pcapng, else pcap, ns)\n"
"      --histograms         add inter-arrival and latency histograms to the text summary\n"
"  -q, --quiet              no text summary, no status lines\n"
"  -v, --verbose            log more on stderr\n"
"Stream tracking:\n"
"      --max-streams N      stream table size (default %u); more streams are counted as overflow\n"
"      --nominal-hz HZ      nominal frequency for smpRate in samples per period (default 50)\n"
"      --wrap N             smpCnt wraps at N (1..65536) for every stream (default: stated, else learned)\n"
"      --reorder-window N   samples behind the newest that count as late/duplicate (default: wrap/2)\n"
"      --resync-run N       consecutive backward samples that confirm a counter restart (default %u)\n"
"      --max-latency-ms MS  larger latencies mark the clock unsynchronised (default 500)\n"
"  -h, --help               this help\n"
"  -V, --version            version\n"
"\n"
"Exit status: 0 the source was read (even with malformed frames), 1 it could not be read or an output\n"
"failed, 2 usage error.\n"
"\n"
"EXAMPLES\n"
"  " PROG " --read tests/data/sv92le_omicron_50hz_fault_Z1_seapath.pcap\n"
"  " PROG " --read capture.pcapng --jsonl | jq -c 'select(.svID==\"MU01\") | [.smpCnt, .values[0]]'\n"
"  " PROG " --read capture.pcap --json | jq '.streams[] | {svID, lost, duplicates}'\n"
"  " PROG " --interface eth1 --backend af_packet --duration 10 --json --write rx.pcapng\n",
#ifdef SVSUB_HAVE_RX
		"",
#else
		" (not built in: svsub_rx back-ends absent)",
#endif
		SVSUB_TRACK_MAX_STREAMS_DEFAULT, SVSUB_TRACK_RESYNC_RUN_DEFAULT);
#ifdef SVSUB_HAVE_RX
	svrx_live_usage(f); /* rx */
#endif
}

/* Strict unsigned parse: decimal or 0x-hex, whole string, within [min, max]. */
static int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_double(const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	if (!s || !*s || *s == ' ')
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !(v >= min && v <= max))
		return -EINVAL;
	*out = v;
	return 0;
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
};

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
		{ "histograms", no_argument, NULL, OPT_HISTOGRAMS },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "max-streams", required_argument, NULL, OPT_MAX_STREAMS },
		{ "nominal-hz", required_argument, NULL, OPT_NOMINAL_HZ },
		{ "wrap", required_argument, NULL, OPT_WRAP },
		{ "reorder-window", required_argument, NULL, OPT_REORDER },
		{ "resync-run", required_argument, NULL, OPT_RESYNC },
		{ "max-latency-ms", required_argument, NULL, OPT_MAX_LATENCY },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
#ifdef SVSUB_HAVE_RX
		SVRX_LIVE_LONGOPTS, /* rx */
#endif
		{ 0 },
	};
	uint64_t u;
	double d;
	int c;

	while ((c = getopt_long(argc, argv, "r:i:w:qvhV", longopts, NULL)) != -1) {
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
		case OPT_DURATION:
			if (parse_double(optarg, 0.001, 1e9, &o->duration_s)) {
				fprintf(stderr, PROG ": --duration: '%s' is not a number of seconds > 0\n", optarg);
				return -EINVAL;
			}
			break;
		case OPT_JSONL:
			o->jsonl = true;
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case 'w':
			o->write = optarg;
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
		case OPT_MAX_STREAMS:
			if (parse_u64(optarg, 1, 1u << 20, &u)) {
				fprintf(stderr, PROG ": --max-streams: '%s' is not in 1..1048576\n", optarg);
				return -EINVAL;
			}
			o->track.max_streams = (uint32_t)u;
			break;
		case OPT_NOMINAL_HZ:
			if (parse_u64(optarg, 1, 1000, &u)) {
				fprintf(stderr, PROG ": --nominal-hz: '%s' is not in 1..1000\n", optarg);
				return -EINVAL;
			}
			o->track.nominal_hz = (uint16_t)u;
			break;
		case OPT_WRAP:
			if (parse_u64(optarg, 2, 65536, &u)) {
				fprintf(stderr, PROG ": --wrap: '%s' is not in 2..65536\n", optarg);
				return -EINVAL;
			}
			o->track.wrap = (uint32_t)u;
			break;
		case OPT_REORDER:
			if (parse_u64(optarg, 1, 65535, &u)) {
				fprintf(stderr, PROG ": --reorder-window: '%s' is not in 1..65535\n", optarg);
				return -EINVAL;
			}
			o->track.reorder_window = (uint32_t)u;
			break;
		case OPT_RESYNC:
			if (parse_u64(optarg, 2, 65536, &u)) {
				fprintf(stderr, PROG ": --resync-run: '%s' is not in 2..65536\n", optarg);
				return -EINVAL;
			}
			o->track.resync_run = (uint32_t)u;
			break;
		case OPT_MAX_LATENCY:
			if (parse_double(optarg, 0.001, 999, &d)) {
				fprintf(stderr, PROG ": --max-latency-ms: '%s' is not in 0.001..999\n", optarg);
				return -EINVAL;
			}
			o->track.max_latency_ns = (int64_t)(d * 1e6);
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
	if (!!o->read == !!o->interface) {
		fprintf(stderr, PROG ": give exactly one of --read FILE or --interface IF\nTry '" PROG " --help'.\n");
		return -EINVAL;
	}
	if (o->read && (o->backend || o->duration_s > 0)) {
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

static void install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* Reads every frame of the capture into the pipeline. Returns 0, or -errno when the file could not be read
 * (to the end). */
static int run_read(const struct opts *o, struct svsub_proc *p, struct sv_pcap_reader *r)
{
	struct sv_pcap_pkt pkt;
	int rc = 0;

	(void)o;
	while (!stop_requested && (rc = sv_pcap_next(r, &pkt)) == 1) {
		struct svsub_frame f = {
			.data = pkt.data,
			.len = pkt.caplen,
			.wire_len = pkt.origlen,
			.index = pkt.index,
			.rx_ns = pkt.ts_ns,
			.vlan_oob = SVSUB_VLAN_OOB_NONE,
		};

		rc = svsub_proc_frame(p, &f);
		if (rc == -EIO)
			return rc;
	}
	return rc < 0 ? rc : 0;
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
			      const struct sv_clock_sync *sync)
{
	struct sv_json j;

	sv_json_init(&j, stdout, SV_JSON_PRETTY);
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
	} else {
		sv_json_kv_str(&j, "mode", "live");
		sv_json_kv_str(&j, "interface", o->interface);
		sv_json_kv_str(&j, "backend", o->backend ? o->backend : "af_xdp");
		if (sync)
			sv_json_kv_bool(&j, "host_clock_synchronised", sv_clock_sync_ok(sync));
		else
			sv_json_kv_null(&j, "host_clock_synchronised");
#ifdef SVSUB_HAVE_RX
		if (live_rx)
			svrx_live_json(live_rx, &j); /* rx: "rx": [...], "rx_to_app_ns" */
#endif
	}
	sv_json_object_end(&j);
	svsub_summary_json_body(&j, p);
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
	struct sv_clock_sync sync, *syncp = NULL;
	int err, ret = 0;

#ifdef SVSUB_HAVE_RX
	svrx_live_opts_init(&o.rx); /* rx */
#endif
	if (parse_args(argc, argv, &o))
		return EXIT_USAGE;
	sv_log_set(sv_log_stderr, (void *)PROG, o.verbose ? SV_LOG_DEBUG : SV_LOG_WARN);
	install_signals();

	if (o.interface && sv_clock_sync_read(&sync) == 0) {
		syncp = &sync;
		o.track.host_unsync = !sv_clock_sync_ok(&sync);
		if (o.track.host_unsync && !o.quiet) {
			char buf[256];

			sv_clock_sync_format(&sync, buf, sizeof(buf));
			fprintf(stderr, PROG ": host clock: %s: latencies will be marked unsynchronised\n", buf);
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
	pcfg.jsonl = o.jsonl ? stdout : NULL;
	pcfg.write = w;
	pcfg.track = o.track;
	err = svsub_proc_create(&p, &pcfg);
	if (err) {
		fprintf(stderr, PROG ": cannot set up: %s\n", strerror(-err));
		ret = EXIT_RUNTIME;
		goto out_close_writer;
	}

	if (o.read) {
		err = run_read(&o, p, r);
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
		else if (o.interface)
			fprintf(stderr, PROG ": receive failed on %s: %s\n", o.interface, strerror(-err));
		/* a read error was logged by sv_pcap with the file name */
		ret = EXIT_RUNTIME;
	}
	if (w && sv_pcap_close_write(w))
		ret = EXIT_RUNTIME;
	w = NULL;

	/* Whatever happened, say what was received. */
	if (o.json) {
		if (print_json_summary(&o, p, r, syncp))
			ret = EXIT_RUNTIME;
	} else if (!o.quiet) {
		if (svsub_summary_print(o.jsonl ? stderr : stdout, p, o.histograms))
			ret = EXIT_RUNTIME;
	}
	if (svsub_proc_output_error(p) || fflush(stdout) || ferror(stdout))
		ret = EXIT_RUNTIME;

	svsub_proc_destroy(p);
#ifdef SVSUB_HAVE_RX
	if (live_rx && !o.quiet)
		svrx_live_print(live_rx, stderr); /* rx: kernel counters, receive-path latency */
	svrx_live_close(live_rx);	  /* detaches the XDP program */
#endif
out_close_writer:
	if (w)
		sv_pcap_close_write(w);
out_close_reader:
	sv_pcap_close_read(r);
	return ret;
}

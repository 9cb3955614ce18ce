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
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sv_clock.h"
#include "sv_json.h"
#include "sv_log.h"
#include "sv_metrics_http.h"
#include "sv_pcap.h"
#include "svsub_proc.h"
#include "svsub_rec.h"
#include "svsub_scl.h"
#include "svsub_comtrade.h"
#include "svsub_metrics.h"
#include "svsub_summary.h"
#include "svsub_track.h"
#include "svapp.h" /* app: applications, the keys and options */
#include "sv_cli.h"
#include "sv_ready.h"
#include "sv_soak.h"
#include "svrx.h" /* the receive filter's limits */
#ifdef SVSUB_HAVE_RX
#include "svrx.h"
#include "svrx_live.h" /* rx: live loop, receive options */
#endif

#define PROG "svsub"

static volatile sig_atomic_t stop_requested;

/* What main() runs from: the effective configuration (file_cfg) as the pipeline takes it. */
struct opts {
	const char *read;
	const char *interface;
	const char *backend; /* live: "af_xdp" or "af_packet"; NULL offline */
	const char *write;
	const char *record; /* per-sample records (svsub_rec) */
	struct sv_soak_opts soak; /* --soak: intervals and windows instead (svsub_rec) */
	double duration_s;	/* live: 0 = until SIGINT/SIGTERM */
	bool jsonl;
	bool json;
	bool histograms;
	bool quiet;
	bool clock_trusted; /* ignore adjtimex's STA_UNSYNC */
	struct svsub_track_cfg track;
	/* app: application (--app) and its parameters */
	const char *app;
	struct svapp_params app_params;
	/* --appid, --group: the receive filter (live) */
	uint16_t appids[SVRX_MAX_APPIDS];
	unsigned n_appids;
	uint8_t groups[SVRX_MAX_GROUPS][6];
	unsigned n_groups;
#ifdef SVSUB_HAVE_RX
	struct svrx_live_opts rx; /* rx: the live loop's options */
#endif
};

/* What the rows of svsub_config_table cannot say. */
static const char usage_text[] = PROG " --read FILE [--jsonl] [--json] [--app NAME] [options]\n"
	PROG " --interface IF [--backend af_xdp|af_packet] [--duration S] [--jsonl] [--json] [--app NAME] [options]";
static const char about[] =
	"Decodes IEC 61850-9-2 Sampled Values (EtherType 0x88BA: untagged, one 802.1Q tag or two (QinQ), or in an HSR\n"
	"tag) strictly, tracks every stream (APPID, svID): lost samples (smpCnt gaps, across wraps), duplicates, out\n"
	"of order, counter resets, confRev/smpSynch changes, simulation bit, quality, inter-arrival time and, for\n"
	"synchronised streams (smpSynch 2), latency = receive time - sample time. The configuration file (-c) holds\n"
	"every key below (--print-config) and, only there, datasets: what seqData holds per stream (svsub(1),\n"
	"DATASETS; configs/sub-datasets.yaml). Undeclared, 64 octets are read as 9-2LE and other lengths are not\n"
	"read: no value, no quality claimed.";
static const char epilog[] =
	"A link that goes down (or an interface that is down at start) is waited for: said once on stderr and\n"
	"counted (source.rx[].link_down); an interface that disappears ends the run (exit 1).\n"
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
	"  " PROG " --read tests/data/sv92le_omicron_50hz_fault_Z1_seapath.pcap --app overcurrent --comtrade /tmp/dr\n";
#ifdef SVSUB_HAVE_RX
static const char *const features[] = { "live", "af_xdp", "af_packet", NULL };
#else
static const char *const features[] = { NULL };
#endif

/* svsub -c FILE and the options: the effective configuration (--print-config prints it). */
static struct svsub_file_config file_cfg;
/* its datasets, as the tracker takes them (checked with the file) */
static struct svsub_dataset_rule dataset_rules[SVSUB_CFG_MAX_DATASETS];

/* What the hooks learn from the command line. */
struct sub_cli {
	struct opts *o;
	bool source;		  /* --read or --interface given: the file's source is replaced */
	bool cli_json, cli_jsonl; /* given: each replaces the file's other output */
	const char *live_only;	  /* --backend or --duration given (the first) */
	bool verbose;
};

/* The rows with an id (svapp.h): called by sv_cli after the key the row names was set. */
static int sub_option(void *ctx, const struct sv_cfg_key *row, const char *arg, struct sv_cfg_error *err)
{
	struct sub_cli *sc = ctx;
	struct opts *o = sc->o;
	uint64_t v;

	switch (row->opt.id) {
	case SVSUB_OPT_READ:
	case SVSUB_OPT_INTERFACE:
		if (!sc->source) { /* the first source named here replaces the file's */
			sc->source = true;
			if (row->opt.id == SVSUB_OPT_READ)
				file_cfg.interface[0] = '\0';
			else
				file_cfg.read[0] = '\0';
		}
		break;
	case SVSUB_OPT_LIVE_ONLY:
		if (!sc->live_only)
			sc->live_only = row->opt.name;
		break;
	case SVSUB_OPT_JSON:
		sc->cli_json = true;
		break;
	case SVSUB_OPT_JSONL:
		sc->cli_jsonl = true;
		break;
	case SVSUB_OPT_APP:
		if (!svapp_find(arg)) {
			snprintf(err->msg, sizeof(err->msg), "no application '%.64s' (overcurrent, phasor)", arg);
			return -EINVAL;
		}
		break;
	case SVSUB_OPT_APPID:
		if (sv_cli_uint(row, arg, &v, err))
			return -EINVAL;
		if (o->n_appids == SVRX_MAX_APPIDS) {
			snprintf(err->msg, sizeof(err->msg), "at most %d", SVRX_MAX_APPIDS);
			return -EINVAL;
		}
		o->appids[o->n_appids++] = (uint16_t)v;
		break;
	case SVSUB_OPT_GROUP:
		if (o->n_groups == SVRX_MAX_GROUPS) {
			snprintf(err->msg, sizeof(err->msg), "at most %d", SVRX_MAX_GROUPS);
			return -EINVAL;
		}
		if (sv_parse_mac(arg, o->groups[o->n_groups])) {
			snprintf(err->msg, sizeof(err->msg), "'%.64s' is not a MAC address (xx:xx:xx:xx:xx:xx)", arg);
			return -EINVAL;
		}
		o->n_groups++;
		break;
	case SVSUB_OPT_VERBOSE:
		sc->verbose = true;
		break;
	}
	return 0;
}

/* After -c FILE: what the table cannot check (the datasets build, the application exists). */
static int sub_loaded(void *ctx, void *obj, const char *path, FILE *f)
{
	struct sub_cli *sc = ctx;
	struct svsub_file_config *c = obj;
	struct sv_cfg_error cerr = { 0 };

	if (!path)
		return 0;
	if (svsub_config_check(c, path, cerr.text, sizeof(cerr.text))) {
		fprintf(f, PROG ": %s\n", cerr.text);
		return -EINVAL;
	}
	if (svsub_config_datasets(c, dataset_rules, &sc->o->track.ndatasets, cerr.path, sizeof(cerr.path), cerr.msg,
				  sizeof(cerr.msg))) { /* svsub_config_check said it first */
		fprintf(f, PROG ": %s: %s: %s\n", path, cerr.path, cerr.msg);
		return -EINVAL;
	}
	if (c->app[0] && !svapp_find(c->app)) {
		fprintf(f, PROG ": %s: app: no application '%s' (overcurrent, phasor)\n", path, c->app);
		return -EINVAL;
	}
	return 0;
}

/* After the command line: the rules across options, then @o from file_cfg. 0, or -EINVAL said. */
static int opts_from_config(struct opts *o, const struct sub_cli *sc, bool print_config)
{
	const struct svsub_file_config *c = &file_cfg;

	o->read = c->read[0] ? c->read : NULL;
	o->interface = c->interface[0] ? c->interface : NULL;
	if (!print_config && !!o->read == !!o->interface) {
		fprintf(stderr, PROG ": give exactly one of --read FILE or --interface IF\nTry '" PROG " --help'.\n");
		return -EINVAL;
	}
	if (c->soak && (!c->record[0] || !o->interface) && !print_config) {
		fprintf(stderr, PROG ": --soak needs --record FILE and --interface IF (live: its records are on TAI)\n");
		return -EINVAL;
	}
	if (o->read && sc->live_only) {
		fprintf(stderr, PROG ": --%s applies to --interface only (live)\n", sc->live_only);
		return -EINVAL;
	}
#ifndef SVSUB_HAVE_RX
	if (o->interface) {
		fprintf(stderr, PROG ": live receive (--interface) is not built into this svsub\n");
		return -EINVAL;
	}
#endif
	/* stdout carries one kind of output that a machine can parse: the summary object (--json), or JSON
	 * lines (--jsonl, an application's events); with both, the summary is one more line (compact) among
	 * them, so stdout stays JSON lines (a service with --json and an app in its file still starts). A
	 * command-line --json / --jsonl replaces the file's other one. */
	if (sc->cli_json && !sc->cli_jsonl)
		file_cfg.jsonl = false;
	if (sc->cli_jsonl && !sc->cli_json)
		file_cfg.json = false;
	o->backend = o->interface ? svsub_cfg_backend_names[c->backend] : NULL;
	o->write = c->write[0] ? c->write : NULL;
	o->record = c->record[0] ? c->record : NULL;
	o->soak = SV_SOAK_OPTS_OF(c);
	o->duration_s = c->duration;
	o->json = c->json;
	o->jsonl = c->jsonl;
	o->histograms = c->histograms;
	o->quiet = c->quiet;
	o->clock_trusted = c->clock_trusted;
	o->app = c->app[0] ? c->app : NULL;
	o->app_params.no_block_test = !c->block_test;
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
#ifdef SVSUB_HAVE_RX
	/* rx: the receive keys, as svrx takes them (svapp_config.c: the same enums) */
	o->rx.ifname_b = c->interface_b[0] ? c->interface_b : NULL;
	o->rx.cfg.xdp_mode = (enum svrx_xdp_mode)c->xdp_mode;
	o->rx.cfg.zerocopy = (enum svrx_tristate)c->zerocopy;
	o->rx.cfg.queue = c->queue;
	o->rx.cfg.frames = c->umem_frames;
	o->rx.cfg.need_wakeup = c->need_wakeup;
	o->rx.cfg.busy_poll_us = c->busy_poll_us;
	o->rx.cfg.promiscuous = c->promiscuous;
#endif
	return 0;
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
	/* the expected streams into the receive filter, unless the command line chose */
	if (o->interface && !o->n_appids)
		o->n_appids = svsub_scl_appids(scl_check, o->appids, SVRX_MAX_APPIDS);
	if (o->interface && !o->n_groups)
		o->n_groups = svsub_scl_groups(scl_check, o->groups, SVRX_MAX_GROUPS);
	if (!o->quiet) {
		struct svsub_scl_counts c;

		svsub_scl_counts(scl_check, &c);
		fprintf(stderr, PROG ": %s: %u streams expected%s%s%s, %u errors in the file (listed in the summary)\n",
			scl_file->file, c.expected, file_cfg.ied[0] ? " by IED " : "", file_cfg.ied,
			file_cfg.ied[0] ? "" : " (every block with an SMV address)", c.errors);
	}
	return 0;
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

/* READY=1 and the ready file (sv_ready.h): the source is open. */
static void say_ready(const struct opts *o)
{
	char status[320];
	int err;

	if (o->read)
		snprintf(status, sizeof(status), "reading %.256s", o->read);
	else
		snprintf(status, sizeof(status), "receiving on %.64s%s%.64s (%s)", o->interface,
			 file_cfg.interface_b[0] ? " and " : "", file_cfg.interface_b, o->backend);
	err = sv_ready_set(status);
	if (err)
		fprintf(stderr, PROG ": --ready-file / NOTIFY_SOCKET: %s\n", strerror(-err));
}

/* --metrics: the registry, the server, the pipeline's families (svsub_metrics.h). */
static struct sv_metrics_run metrics;
static struct svsub_metrics sub_metrics;

/* Registers the pipeline's families (the receive back-end's: run_live) before serving. 0 or -errno (said). */
static int metrics_setup(const struct opts *o, struct svsub_proc *p, const char *host)
{
	int err = sv_metrics_run_init(&metrics, PROG, host);

	if (!err)
		err = svsub_metrics_register(&sub_metrics, metrics.m, p, o->interface ? o->interface : "read");
	if (err)
		fprintf(stderr, PROG ": --metrics: cannot set up: %s\n", strerror(-err));
	return err;
}

/* Starts the server once every family is registered. 0 or -errno (said by the server with the address). */
static int metrics_serve(const struct opts *o)
{
	int err;

	if (!metrics.m)
		return 0;
	err = sv_metrics_run_serve(&metrics, file_cfg.metrics);
	if (!err && !o->quiet)
		fprintf(stderr, PROG ": metrics on http://%s/metrics\n", metrics.address);
	return err;
}

/* The run has ended and every counter is final: one last scrape (--metrics-linger), then the server stops. */
static void metrics_end(void)
{
	stop_requested = 0; /* a second ^C ends the linger */
	sv_metrics_run_end(&metrics, file_cfg.metrics_linger, &stop_requested);
	sv_metrics_run_free(&metrics);
}

#ifdef SVSUB_HAVE_RX
/* rx: the live loop lives in svrx_live.c (one or two interfaces, receive-path latency, back-end counters). */
static struct svrx_live *live_rx;

static int run_live(struct opts *o, struct svsub_proc *p)
{
	int err;

	o->rx.cfg.ifname = o->interface;
	o->rx.cfg.backend = (enum svrx_backend)file_cfg.backend; /* the same order (svapp_config.c) */
	memcpy(o->rx.cfg.appids, o->appids, o->n_appids * sizeof(o->appids[0]));
	o->rx.cfg.n_appids = o->n_appids;
	memcpy(o->rx.cfg.groups, o->groups, o->n_groups * sizeof(o->groups[0]));
	o->rx.cfg.n_groups = o->n_groups;
	o->rx.duration_s = o->duration_s;
	o->rx.status = !o->quiet;
	err = svrx_live_open(&live_rx, &o->rx, o->quiet);
	if (err)
		return err;
	if (metrics.m) { /* --metrics: the back-end's families, then serve */
		err = svrx_live_metrics(live_rx, metrics.m, sub_metrics.hop, &metrics.health);
		if (err) {
			fprintf(stderr, PROG ": --metrics: cannot set up: %s\n", strerror(-err));
			return err;
		}
		err = metrics_serve(o);
		if (err)
			return err;
	}
	say_ready(o); /* sockets bound, the XDP program attached */
	return svrx_live_run(live_rx, p, &stop_requested);
}
#endif

/* --soak: what the intervals and the flight recorder wrote (svsub_rec_close fills it) */
static struct sv_soak_stats soak_st;

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
	sv_json_key(&j, "soak"); /* null without --soak */
	if (o->soak.on && rec_st)
		sv_soak_stats_json(&j, &soak_st);
	else
		sv_json_null(&j);
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
	struct sub_cli sc = { .o = &o };
	char host[SV_METRICS_HOST_SIZE];
	const struct sv_cli_prog prog = {
		.name = PROG, .usage = usage_text, .about = about, .epilog = epilog, .tab = svsub_config_table,
		.features = features, .option = sub_option, .loaded = sub_loaded, .ctx = &sc,
	};
	struct sv_cli cli;
	int err, ret = SV_EXIT_OK;

#ifdef SVSUB_HAVE_RX
	svrx_live_opts_init(&o.rx); /* rx */
#endif
	svapp_params_init(&o.app_params); /* app */
	if (svsub_config_init(&file_cfg)) {
		fprintf(stderr, PROG ": internal error: bad configuration defaults\n");
		return SV_EXIT_RUNTIME;
	}
	err = sv_cli_parse(&prog, argc, argv, &file_cfg, &cli, stdout, stderr);
	if (err)
		return sv_cli_exit(err);
	if (opts_from_config(&o, &sc, cli.print_config))
		return SV_EXIT_USAGE;
	if (cli.print_config)
		return sv_config_print(svsub_config_table, &file_cfg, stdout) || fflush(stdout) ? SV_EXIT_RUNTIME
											: SV_EXIT_OK;
	if (sv_ready_init(cli.ready_file)) {
		fprintf(stderr, PROG ": --ready-file: %s\n", strerror(ENAMETOOLONG));
		return SV_EXIT_USAGE;
	}
	sv_log_set(sv_log_stderr, (void *)PROG, sc.verbose ? SV_LOG_DEBUG : SV_LOG_WARN);
	sv_ready_signals(&stop_requested);
	if (file_cfg.scl[0] && setup_scl(&o))
		return SV_EXIT_USAGE;

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
			return SV_EXIT_RUNTIME; /* logged with the reason */
	}
	if (o.write) {
		err = sv_pcap_open_write(&w, o.write, sv_pcap_format_for_path(o.write), 0, o.interface);
		if (err) {
			ret = SV_EXIT_RUNTIME;
			goto out_close_reader;
		}
	}
	if (file_cfg.comtrade[0]) {
		err = setup_comtrade(&o, syncp);
		if (err) {
			ret = err == -EINVAL ? SV_EXIT_USAGE : SV_EXIT_RUNTIME;
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
			ret = SV_EXIT_RUNTIME;
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
			/* record_keep checked by the table (sv_record_check_keep) */
			.opts = SV_REC_OPTS_OF(&file_cfg),
			.soak = &o.soak,
			.max_streams = o.track.max_streams,
			.soak_stats = &soak_st,
			.metrics = file_cfg.metrics[0] ? &metrics.health : NULL,
			.host = file_cfg.host[0] ? file_cfg.host : NULL,
		};

		err = svsub_rec_open(&rec, &rc);
		if (err) {
			fprintf(stderr, PROG ": --record %s: %s\n", o.record, strerror(-err));
			ret = SV_EXIT_RUNTIME;
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
		ret = SV_EXIT_RUNTIME;
		goto out_close_writer;
	} else if (err) {
		fprintf(stderr, PROG ": cannot set up: %s\n", strerror(-err));
		ret = SV_EXIT_RUNTIME;
		goto out_close_writer;
	}

	if (file_cfg.metrics[0] && metrics_setup(&o, p, sv_metrics_host(file_cfg.host, host, sizeof(host)))) {
		ret = SV_EXIT_RUNTIME;
		goto out_destroy;
	}
	if (o.read) {
		err = metrics_serve(&o);
		if (err) {
			ret = SV_EXIT_RUNTIME;
			goto out_destroy;
		}
		say_ready(&o);
		err = run_read(&o, p, r);
		sv_ready_stopping(NULL);
		report_read_end(&o, p, r); /* even with -q: the summary is partial */
	} else {
#ifdef SVSUB_HAVE_RX
		err = run_live(&o, p);
#else
		err = -ENOTSUP;
#endif
		sv_ready_stopping(NULL);
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
		ret = SV_EXIT_RUNTIME;
	}
	if (w && sv_pcap_close_write(w))
		ret = SV_EXIT_RUNTIME;
	w = NULL;
	/* The record's last block and END now (also after SIGINT/SIGTERM), so that the summaries say what
	 * reached the disk. */
	if (rec) {
		int rerr = svsub_rec_close(rec, &rec_st);

		rec = NULL;
		if (rerr)
			ret = SV_EXIT_RUNTIME;
		if (rerr && rerr != -EIO)
			fprintf(stderr, PROG ": --record %s: %s\n", o.record, strerror(-rerr));
	}
	if (comtrade && svsub_comtrade_close(comtrade))
		ret = SV_EXIT_RUNTIME; /* said by the writer, counted in the summary */

	/* Whatever happened, say what was received. */
	if (o.json) {
		if (print_json_summary(&o, p, r, syncp, o.record ? &rec_st : NULL))
			ret = SV_EXIT_RUNTIME;
	} else if (!o.quiet) {
		FILE *out = o.jsonl || o.app ? stderr : stdout;

		if (svsub_summary_print(out, p, o.histograms) || (scl_check && svsub_scl_print(scl_check, out)))
			ret = SV_EXIT_RUNTIME;
		if (comtrade)
			svsub_comtrade_print(comtrade, out);
	}
	if (svsub_proc_output_error(p) || fflush(stdout) || ferror(stdout))
		ret = SV_EXIT_RUNTIME;
	if (o.record && (!o.quiet || sv_record_stats_incomplete(&rec_st))) { /* stderr, whatever else goes out */
		char line[512];

		sv_record_stats_format(&rec_st, line, sizeof(line));
		fprintf(stderr, PROG ": record %s: %s\n", o.record, line);
		if (o.soak.on) {
			sv_soak_stats_format(&soak_st, line, sizeof(line));
			fprintf(stderr, PROG ": record %s: %s\n", o.record, line);
		}
	}

out_destroy:
	metrics_end(); /* the totals are final: one last scrape, then the server stops (before the pipeline) */
	svapp_destroy(app); /* app: per-stream summary lines (before the tracker: they name its streams) */
	app = NULL;
	svsub_proc_destroy(p);
	if (app && (fflush(stdout) || ferror(stdout)))
		ret = SV_EXIT_RUNTIME;
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

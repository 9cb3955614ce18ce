// SPDX-License-Identifier: Apache-2.0
/*
 * svtrace: follows every SV frame through the hypervisor with eBPF (bpf/svtrace.bpf.c) and reports
 * per-hop latency (T1 ingress -> T2a egress -> T2b taken by the guest's feeder), missing and dropped
 * frames with the kernel's reason, and for late frames which thread held the feeder's CPU.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>

#include "sv_cli.h"
#include "sv_clock.h"
#include "sv_config.h"
#include "sv_codec.h"
#include "sv_json.h"
#include "sv_log.h"
#include "sv_metrics_http.h"
#include "sv_ready.h"
#include "sv_record.h"
#include "sv_stats.h"
#include "svtrace.h"
#include "svtrace_corr.h"
#include "svtrace_events.h"
#include "svtrace_hlog.h"
#include "svtrace_metrics.h"
#include "svtrace_out.h"
#include "svtrace_ports.h"
#include "svtrace_rec.h"
#include "svtrace_scan.h"
#include "svtrace_setup.h"
#include "svtrace_streams.h"
#include "svtrace_sys.h"


#define MAX_EGRESS SVTRACE_PORTS_MAX_EGRESS

_Static_assert(MAX_EGRESS == 15, "the help and the man page say at most 15 egress interfaces");

/* ---- options: svtrace's one table of keys and options (sv_config.h, sv_cli.h) ---- */

/* What -c FILE and the options set; --print-config prints it. */
struct svtrace_config {
	char ingress[64];		/* names are checked by ports_parse (IFNAMSIZ) */
	char egress[512];		/* IF,IF... or all */
	char netns[256];
	uint32_t duration;		/* s, 0 = until a signal */
	bool live;
	uint32_t interval;		/* s */
	char record[256];
	uint32_t record_size_mib, record_flush_ms, record_sync_ms, record_min_free_mib;
	char record_keep[16];
	bool json;
	uint32_t threshold_us;
	uint32_t appid;			/* 0 = every APPID */
	char svid[SV_MAX_ID_LEN + 1];	/* "" = every svID */
	uint32_t timeout_ms;
	uint32_t ringbuf_kb;
	uint32_t table;
	uint32_t log_entries;
	bool raw_tp, sched_wakeup;
	char ovsdb[128];		/* unix:PATH, "" = Open vSwitch's default */
	int expect;			/* 0 all, 1 seen */
	int why;			/* 0 on, 1 off */
	uint32_t why_rate;		/* decompositions a second and CPU, 0 no limit */
	bool why_faults;
	char host[SV_METRICS_HOST_SIZE];	/* --host: the records' and metrics' host name ("" gethostname) */
	char metrics[SV_METRICS_ADDR_SIZE];	/* --metrics ADDR:PORT ("" off) */
	double metrics_linger;			/* --metrics-linger S */
};

enum { OPT_VERBOSE = 1 };

static const char *const expect_names[] = { "all", "seen", NULL };
static const char *const why_names[] = { "on", "off", NULL };

/* ovsdb: "" or unix:PATH, a socket's path (sun_path: < 108 octets). */
static int check_ovsdb(const char *v, char *msg, size_t n)
{
	if (!*v || (!strncmp(v, "unix:", 5) && v[5] && strlen(v) - 5 < 108))
		return 0;
	snprintf(msg, n, "'%.100s' is not unix:PATH (the database's socket, as ovs-vsctl --db)", v);
	return -EINVAL;
}

_Static_assert(SVTRACE_HLOG_ENTRIES == 16384, "the log_entries row's default");
#define C struct svtrace_config
static const struct sv_cfg_key svtrace_table[] = {
	SV_CFG_KEY_STRING(C, ingress, "ingress", "", "ingress interface (NIC, or the lab's uplink veth)",
			  SV_OPT("ingress", 'i', "IF")),
	SV_CFG_KEY_STRING(C, egress, "egress", "",
			  "egress interfaces toward the guests (tap, vnet, veth), comma-separated, or 'all' (every "
			  "interface of the namespace but the ingress, lo and bridge/bond/team/OVS masters, listed on "
			  "stderr; on an Open vSwitch bridge, its ports but the internal one, from the database); at "
			  "most 15",
			  SV_OPT("egress", 'e', "LIST")),
	SV_CFG_KEY_STRING(C, ovsdb, "ovsdb", "",
			  "the Open vSwitch database --egress all asks; empty = $OVS_RUNDIR/db.sock, else "
			  "/var/run/openvswitch/db.sock, when the socket exists",
			  .check = check_ovsdb, SV_OPT("ovsdb", 0, "unix:PATH")),
	SV_CFG_KEY_ENUM(C, expect, "expect", expect_names, "all",
			"the streams each egress port must carry: all (a bridge floods SV multicast), or seen: those "
			"it carried once (per-stream flows, as on Open vSwitch); a frame of an expected stream that "
			"never reaches the port is missing there",
			SV_OPT("expect", 0, "all|seen")),
	SV_CFG_KEY_STRING(C, netns, "netns", "",
			  "the interfaces live in network namespace NAME (ip netns); empty = ours",
			  SV_OPT("netns", 'n', "NAME")),
	SV_CFG_KEY_UINT(C, duration, "duration", 0, 100u * 365 * 86400, "0",
			"stop after S seconds; 0 = run until SIGINT/SIGTERM", SV_OPT("duration", 'd', "S")),
	SV_CFG_KEY_BOOL(C, live, "live", "false", "print a histogram per hop to stderr every interval",
			SV_OPT("live", 'l', NULL)),
	SV_CFG_KEY_UINT(C, interval, "interval", 1, 3600, "1", "live interval in seconds", SV_OPT("interval", 'I', "S")),
	SV_CFG_KEY_STRING(C, record, "record", "",
			  "write per-frame records (svkit record format, TAI clock) to FILE. A full disk never stops "
			  "tracing: blocks that cannot be written are counted (summary, --json record, the file's "
			  "UNWRITTEN and END records), later ones are tried; empty = none",
			  SV_OPT("record", 'r', "FILE")),
	SV_REC_CFG_ROWS(C, "--record", SV_REC_OPTS),
	SV_CFG_KEY_BOOL(C, json, "json", "false", "print the final summary as one JSON object on stdout",
			SV_OPT("json", 'j', NULL)),
	SV_CFG_KEY_UINT(C, threshold_us, "threshold_us", 0, 60000000, "1000",
			"frames with T1->T2b above N us are late and attributed; 0 = late detection off",
			SV_OPT("threshold-us", 't', "N")),
	SV_CFG_KEY_ENUM(C, why, "why", why_names, "on",
			"why late: split each late frame's hops into causes that add up to them (steal, hard IRQ, "
			"softirq, qdisc/backlog, run queue with the task that held the CPU, blocked, running, "
			"unexplained); its hooks (IRQ, softirq, net_dev_queue tracepoints) are attached only "
			"with late detection on (--threshold-us > 0)",
			SV_OPT("why", 0, "on|off")),
	SV_CFG_KEY_UINT(C, why_rate, "why_rate", 0, 1000000, "200",
			"why late: at most N late frames decomposed a second on each CPU (a quarter second's worth "
			"at once); more are listed without decomposition and counted (a walk costs up to tens of "
			"microseconds in the receiving thread: a guest that falls behind makes every frame late); "
			"0 = no limit",
			SV_OPT("why-rate", 0, "N")),
	SV_CFG_KEY_BOOL(C, why_faults, "why_faults", "false",
			"why late: count the carriers' page faults in each hop (the page_fault tracepoints: a run on "
			"every page fault of the machine)",
			SV_OPT("why-faults", 0, NULL)),
	SV_CFG_KEY_UINT(C, appid, "appid", 0, 0xffff, "0", "only this APPID (0x4000 or 16384); 0 = every APPID",
			SV_OPT("appid", 'a', "X")),
	SV_CFG_KEY_STRING(C, svid, "svid", "",
			  "only this svID (exact match, up to 129 characters; BPF keeps 64 octets: longer svIDs are "
			  "matched on those and their length, and reported); empty = every svID",
			  SV_OPT("svid", 's', "S")),
	SV_CFG_KEY_UINT(C, timeout_ms, "timeout_ms", 10, 60000, "1500", "incomplete frames older than N ms count as missing",
			SV_OPT("timeout-ms", 0, "N")),
	SV_CFG_KEY_UINT(C, ringbuf_kb, "ringbuf_kb", 4, 1u << 20, "8192", "BPF ring buffer size, KiB",
			.flags = SV_CFG_POW2, SV_OPT("ringbuf-kb", 0, "N")),
	SV_CFG_KEY_UINT(C, table, "table", 1024, 1u << 24, "32768", "frame copies tracked between T2a and T2b at once",
			SV_OPT("table", 0, "N")),
	SV_CFG_KEY_UINT(C, log_entries, "log_entries", 64, 1u << 20, "16384", "hop log entries per CPU",
			.flags = SV_CFG_POW2, SV_OPT("log-entries", 0, "N")),
	SV_CFG_KEY_BOOL(C, raw_tp, "raw_tp", "false", "use raw_tp even where tp_btf is available",
			SV_OPT("raw-tp", 0, NULL)),
	SV_CFG_KEY_BOOL(C, sched_wakeup, "sched_wakeup", "false",
			"time feeders' waits with sched_wakeup even where the scheduler's run-queue stamps are "
			"available (the default takes them from sched_info)",
			SV_OPT("sched-wakeup", 0, NULL)),
	SV_METRICS_HOST_CFG_ROW(C),
	SV_CLI_HEADING("Metrics for Prometheus (docs/metrics.md):"),
	SV_METRICS_CFG_ROWS(C),
	SV_CLI_OPT("verbose", 'v', NULL, OPT_VERBOSE, "libbpf and debug messages"),
	SV_CLI_ROW_CONFIG('c'),
	SV_CLI_ROW_READY_FILE,
	SV_CLI_ROWS_END,
};
#undef C

static const char usage_text[] = "svtrace --ingress IF --egress IF[,IF...]|all [options]";
static const char about[] =
	"Follows every IEC 61850-9-2 SV frame through this host with eBPF tracepoints: T1 ingress ->\n"
	"T2a egress toward each guest -> T2b taken by the guest's feeder thread (or dropped, with the kernel's\n"
	"reason), with per-hop latency histograms and, for late frames, which thread held the feeder's CPU.";
static const char epilog[] =
	"Needs CAP_BPF and CAP_PERFMON (or root). Hops: T1-T2a, T2a-T2b, T1-T2b, per egress interface.\n"
	"Exit status: 0 done (also when stopped by SIGINT/SIGTERM, even during set-up), 1 run-time failure\n"
	"(also records not all written: tracing went on, the summary says how many and why), 2 usage error.\n"
	"\n"
	"EXAMPLES\n"
	"  # Lab: bridge in namespace hv, uplink veth up0, guest ports vm1p and vm2p, live histograms\n"
	"  svtrace --netns hv --ingress up0 --egress vm1p,vm2p --live\n"
	"  # Soak test on a SEAPATH host: 24 h of records (every part, down to the free-space floor),\n"
	"  # frames over 500 us attributed\n"
	"  svtrace -i enp1s0 -e vnet0,vnet1 -d 86400 -r /var/log/svtrace.rec --record-keep all -t 500\n"
	"  # One stream, summary as JSON for a CI job\n"
	"  svtrace -i eth1 -e all --svid MU01 --duration 10 --json > trace.json\n"
	"  # Open vSwitch with per-stream flows: the bridge's ports from its database, each stream where it goes\n"
	"  svtrace -i enp1s0 -e all --expect seen -d 3600 -r /var/log/svtrace.rec\n";

/* What the run takes from the configuration (opts_from). */
struct opts {
	const char *ingress;
	char egress_arg[512];		/* ports_parse cuts it */
	const char *netns;
	const char *record;
	const char *svid;
	const char *ovsdb;		/* --ovsdb: the Open vSwitch database asked by --egress all */
	const char *ready_file;		/* --ready-file (sv_ready.h) */
	const char *host;		/* --host, NULL: gethostname */
	const char *metrics;		/* --metrics ADDR:PORT, NULL: off */
	double metrics_linger;
	int64_t duration_ns;		/* 0 = until a signal */
	int64_t threshold_ns;
	int64_t interval_ns;
	int64_t timeout_ns;
	uint32_t appid;
	uint32_t ringbuf_bytes;
	uint32_t table;
	uint32_t log_entries;	/* hop log entries per CPU (a power of two) */
	struct sv_record_opts rec;	/* --record-size, --record-keep, --record-flush-ms, ... */
	bool live, json, raw_tp, sched_wakeup, verbose;
	bool expect_seen;		/* --expect seen: a stream is expected at the ports it reached */
	bool why;			/* --why on */
	uint32_t why_rate;		/* --why-rate */
	bool why_faults;		/* --why-faults */
};

static int trace_option(void *ctx, const struct sv_cfg_key *row, const char *arg, struct sv_cfg_error *err)
{
	(void)arg;
	(void)err;
	if (row->opt.id == OPT_VERBOSE)
		((struct opts *)ctx)->verbose = true;
	return 0;
}

/* The command line and -c FILE into @o (the config's strings stay in @c). Returns SV_CLI_RUN, SV_CLI_DONE
 * (--help ..., or --print-config printed) or the exit status' negative errno (said on stderr). */
static int parse_opts(int argc, char **argv, struct svtrace_config *c, struct opts *o)
{
	const struct sv_cli_prog prog = { .name = "svtrace", .usage = usage_text, .about = about, .epilog = epilog,
					  .tab = svtrace_table, .option = trace_option, .ctx = o };
	struct svtrace_config d;
	struct sv_cfg_error cerr;
	struct sv_cli cli;
	int rc;

	memset(o, 0, sizeof(*o));
	memset(c, 0, sizeof(*c));
	if (sv_config_defaults(svtrace_table, c, &cerr) || sv_config_defaults(svtrace_table, &d, &cerr)) {
		fprintf(stderr, "svtrace: internal error: %s\n", cerr.text);
		return -EFAULT;
	}
	rc = sv_cli_parse(&prog, argc, argv, c, &cli, stdout, stderr);
	if (rc)
		return rc;
	if (cli.print_config)
		return sv_config_print(svtrace_table, c, stdout) ? -EIO : SV_CLI_DONE;
	if (!c->ingress[0]) {
		fprintf(stderr, "svtrace: --ingress IF is required (see --help)\n");
		return -EINVAL;
	}
	if (!c->egress[0]) {
		fprintf(stderr, "svtrace: --egress: no interface named (IF[,IF...] or all; it is required, see --help)\n");
		return -EINVAL;
	}
	if (c->ovsdb[0] && strcmp(c->egress, "all")) {
		fprintf(stderr, "svtrace: --ovsdb is asked only by --egress all: name the egress interfaces or drop it\n");
		return -EINVAL;
	}
	if (!c->record[0] && (c->record_size_mib != d.record_size_mib || strcmp(c->record_keep, d.record_keep) ||
			      c->record_flush_ms != d.record_flush_ms || c->record_sync_ms != d.record_sync_ms ||
			      c->record_min_free_mib != d.record_min_free_mib)) {
		fprintf(stderr, "svtrace: --record-size, --record-keep, --record-flush-ms, --record-sync-ms and "
			"--record-min-free are about --record FILE, not given\n");
		return -EINVAL;
	}
	if (strlen(c->svid) > SVTRACE_SVID_MAX)
		fprintf(stderr, "svtrace: warning: --svid has %zu characters: BPF keeps the first %d octets of an "
			"svID, so streams are matched on those and the length; streams whose svIDs differ only past "
			"octet %d are taken for this one\n", strlen(c->svid), SVTRACE_SVID_MAX, SVTRACE_SVID_MAX);
	o->ingress = c->ingress;
	snprintf(o->egress_arg, sizeof(o->egress_arg), "%s", c->egress);
	o->netns = c->netns[0] ? c->netns : NULL;
	o->record = c->record[0] ? c->record : NULL;
	o->svid = c->svid[0] ? c->svid : NULL;
	o->ovsdb = c->ovsdb[0] ? c->ovsdb : NULL;
	o->expect_seen = c->expect == 1;
	o->why = c->why == 0;
	o->why_rate = c->why_rate;
	o->why_faults = c->why_faults;
	o->ready_file = cli.ready_file;
	o->host = c->host[0] ? c->host : NULL;
	o->metrics = c->metrics[0] ? c->metrics : NULL;
	o->metrics_linger = c->metrics_linger;
	o->duration_ns = (int64_t)c->duration * SV_NSEC_PER_SEC;
	o->threshold_ns = (int64_t)c->threshold_us * SV_NSEC_PER_USEC;
	o->interval_ns = (int64_t)c->interval * SV_NSEC_PER_SEC;
	o->timeout_ns = (int64_t)c->timeout_ms * SV_NSEC_PER_MSEC;
	o->appid = c->appid;
	o->ringbuf_bytes = c->ringbuf_kb * 1024;
	o->table = c->table;
	o->log_entries = c->log_entries;
	o->rec = SV_REC_OPTS_OF(c);
	o->rec.host = c->host[0] ? c->host : NULL; /* --host: the records' header too */
	o->live = c->live;
	o->json = c->json;
	o->raw_tp = c->raw_tp;
	o->sched_wakeup = c->sched_wakeup;
	return SV_CLI_RUN;
}

/* ---- end of the options ---- */

/* The run: svtrace's modules, wired together by main(). */
struct tracer {
	struct opts o;
	struct svtrace_ports ports;
	struct svtrace_corr *corr;			/* the statistics and the late list */
	struct svtrace_rec *rec;			/* --record, else NULL */
	struct svtrace_streams streams;
	struct svtrace_events ev;
	struct svtrace_scan scan;
	struct svtrace_hlog *hlog;
	struct svtrace_setup *bpf;			/* the skeleton */
	struct sv_clock_xlate to_tai;
	struct sv_record_writer_stats rec_st;	/* the record's final counts (closed before the summaries) */
	uint64_t rec_refused;			/* records the writer refused as invalid (a bug) */
	bool rec_closed;
	struct sv_metrics_run metrics;		/* --metrics: registry, server */
	struct svtrace_metrics tm;		/* svtrace's families */
	int64_t t_start_mono, t_last_expire, t_last_live, t_last_merge, t_last_ports;
};

static volatile sig_atomic_t stop_flag;

static int64_t mono_now(void)
{
	return sv_clock_now_ns(SV_CLOCK_MONOTONIC);
}

/* svtrace_corr's late frames into the record (opened after it), if any. */
static void on_late(void *ctx, const struct svtrace_late *l)
{
	svtrace_rec_late(((struct tracer *)ctx)->rec, l);
	svtrace_metrics_late(&((struct tracer *)ctx)->tm, l);
}

/* --metrics: what needs a system call (BPF's counters, the record's), copied for the metrics thread. */
static void metrics_tick(struct tracer *t, const uint64_t *cnt)
{
	uint64_t now_cnt[SVTRACE_CNT_NR];

	if (!t->metrics.m)
		return;
	if (!cnt) {
		svtrace_setup_counters(t->bpf, now_cnt);
		cnt = now_cnt;
	}
	svtrace_metrics_tick(&t->tm, cnt);
	svtrace_rec_metrics(t->rec, &t->metrics.health);
}

/* --metrics: the families, then the server. 0 or -errno (said). */
static int metrics_start(struct tracer *t)
{
	char host[SV_METRICS_HOST_SIZE];
	int err = sv_metrics_run_init(&t->metrics, "svtrace", sv_metrics_host(t->o.host, host, sizeof(host)));

	if (!err)
		err = svtrace_metrics_register(&t->tm, t->metrics.m, &t->metrics.health, t->corr, &t->ports,
					       &t->ev.events);
	if (err) {
		fprintf(stderr, "svtrace: --metrics: cannot set up: %s\n", strerror(-err));
		return err;
	}
	err = sv_metrics_run_serve(&t->metrics, t->o.metrics);
	if (!err)
		fprintf(stderr, "svtrace: metrics on http://%s/metrics\n", t->metrics.address);
	return err;
}

/* --metrics: the totals are final: one last scrape (--metrics-linger), then the server stops. */
static void metrics_end(struct tracer *t)
{
	stop_flag = 0; /* a second ^C ends the linger */
	sv_metrics_run_end(&t->metrics, t->o.metrics_linger, &stop_flag);
	sv_metrics_run_free(&t->metrics);
}

/* BPF's stream frame counts and new streams (every stream's identity, also those seen only at T1). */
static void streams_sync(struct tracer *t)
{
	svtrace_setup_streams_sync(t->bpf, &t->streams, t->corr);
}

/* The timeout scans (@all: the stop's, every open frame resolved). */
static void scan(struct tracer *t, int64_t now, bool all)
{
	svtrace_scan_inflight(&t->scan, &t->ev, now, all);
	svtrace_scan_track(&t->scan, &t->ev, now, all);
	svtrace_setup_scan_hash(t->bpf, &t->scan, &t->ev, now, all);
}

/* What the output reads, BPF's counters as they are now. */
static void out_view(struct tracer *t, struct svtrace_out *o)
{
	*o = (struct svtrace_out){
		.ports = &t->ports, .streams = &t->streams, .corr = t->corr, .probes = svtrace_setup_probes(t->bpf),
		.events = t->ev.events, .upcalls = t->ev.upcalls,
		.filtered = t->ev.filtered + svtrace_hlog_filtered(t->hlog), .hlog_copies = svtrace_hlog_copies(t->hlog),
		.threshold_ns = t->o.threshold_ns, .expect_seen = t->o.expect_seen, .record = t->o.record,
		.rec_st = t->rec_closed ? &t->rec_st : NULL, .rec_refused = t->rec_refused, .ev = &t->ev,
		.why_steal_ns = svtrace_setup_why_steal(t->bpf),
	};
	svtrace_setup_counters(t->bpf, o->cnt);
}

static void print_live(struct tracer *t)
{
	struct svtrace_out o;

	streams_sync(t);
	svtrace_hlog_drain(t->hlog);
	svtrace_hlog_merge(t->hlog);
	out_view(t, &o);
	svtrace_out_live(&o, stderr);
}

/* Every second: each port still the interface BPF compares against (svtrace_ports_watch); one re-created
 * is named again in the records under its new ifindex. */
static void ports_watch(struct tracer *t)
{
	uint32_t followed = svtrace_ports_watch(&t->ports, t->o.netns, svtrace_setup_port_ifindex(t->bpf),
						svtrace_setup_port_netns(t->bpf));

	for (unsigned i = 0; followed; i++, followed >>= 1)
		if (followed & 1)
			svtrace_rec_port_name(t->rec, i);
}

/* A signal came during set-up: say so (the caller ends cleanly, exit 0). */
static bool setup_stopped(const char *when)
{
	if (!stop_flag)
		return false;
	fprintf(stderr, "svtrace: stopped by a signal %s: nothing was traced\n", when);
	return true;
}

int main(int argc, char **argv)
{
	static struct svtrace_config cfg;
	struct tracer t = { 0 };
	struct svtrace_corr_cfg cc;
	struct svtrace_setup_cfg sc;
	struct svtrace_hlog_cfg hc;
	struct svtrace_out out;
	char missing[64];
	int64_t now, t_end;
	int err, ret = SV_EXIT_RUNTIME;

	/* SIGINT/SIGTERM stop the run cleanly from the start: a signal during set-up (the BPF load takes about a
	 * second) ends it with a message and a well-ended record */
	sv_ready_signals(&stop_flag);
	err = parse_opts(argc, argv, &cfg, &t.o);
	if (err)
		return sv_cli_exit(err);
	if (sv_ready_init(t.o.ready_file)) {
		fprintf(stderr, "svtrace: --ready-file: %s\n", strerror(ENAMETOOLONG));
		return SV_EXIT_USAGE;
	}
	sv_log_set(sv_log_stderr, NULL, t.o.verbose ? SV_LOG_DEBUG : SV_LOG_INFO);
	svtrace_setup_log(t.o.verbose);
	if (svtrace_ports_parse(&t.ports, t.o.ingress, t.o.egress_arg))
		return SV_EXIT_USAGE;
	if (svtrace_check_caps(missing, sizeof(missing))) {
		fprintf(stderr, "svtrace: missing privileges: %s (run as root, or setcap cap_bpf,cap_perfmon+ep)\n",
			missing);
		return SV_EXIT_RUNTIME;
	}
	err = svtrace_ports_resolve(&t.ports, t.o.netns, t.o.egress_arg, t.o.ovsdb);
	if (err)
		return err == -EINVAL ? SV_EXIT_USAGE : SV_EXIT_RUNTIME;
	if (setup_stopped("before set-up"))
		return SV_EXIT_OK;
	cc = (struct svtrace_corr_cfg){ .nports = t.ports.n, .late_ns = t.o.threshold_ns, .late_max = 256,
					.max_streams = 256, .no_interval = !t.o.live, .on_late = on_late, .ctx = &t };
	err = svtrace_corr_new(&t.corr, &cc);
	if (err) {
		fprintf(stderr, "svtrace: correlation tables: %s\n", strerror(-err));
		return SV_EXIT_RUNTIME;
	}
	err = sv_clock_xlate_mono_to_tai(&t.to_tai);
	if (err) {
		fprintf(stderr, "svtrace: cannot measure MONOTONIC -> TAI: %s\n", strerror(-err));
		goto out_corr;
	}
	if (t.o.record && svtrace_rec_open(&t.rec, t.o.record, &t.o.rec, &t.ports, t.corr, &t.to_tai))
		goto out_corr;
	/* from here a stop during set-up still ends the record well (END) */
	if (setup_stopped("during set-up")) {
		ret = SV_EXIT_OK;
		goto out_rec;
	}
	sc = (struct svtrace_setup_cfg){
		.ports = &t.ports, .netns = t.o.netns, .raw_tp = t.o.raw_tp, .sched_wakeup = t.o.sched_wakeup,
		.expect_seen = t.o.expect_seen, .per_frame = t.o.record != NULL, .why = t.o.why,
		.why_rate = t.o.why_rate, .why_faults = t.o.why_faults, .appid = t.o.appid, .svid = t.o.svid,
		.timeout_ns = t.o.timeout_ns, .threshold_ns = t.o.threshold_ns, .table = t.o.table,
		.log_entries = t.o.log_entries, .ringbuf_bytes = t.o.ringbuf_bytes,
	};
	err = svtrace_setup_load(&t.bpf, &sc);
	if (err) {
		fprintf(stderr, "svtrace: cannot load the BPF programs: %s%s\n", strerror(-err),
			err == -EPERM ? " (CAP_BPF/CAP_PERFMON, or kernel.unprivileged_bpf_disabled)" : "");
		goto out_rec;
	}
	if (setup_stopped("while the BPF programs loaded")) {
		ret = SV_EXIT_OK;
		goto out_bpf;
	}
	svtrace_streams_init(&t.streams, t.corr, t.rec, t.o.svid, svtrace_setup_stream_key, t.bpf);
	t.ev = (struct svtrace_events){ .streams = &t.streams, .corr = t.corr, .rec = t.rec, .nports = t.ports.n,
					.late_ns = t.o.threshold_ns };
	t.scan = (struct svtrace_scan){ .timeout_ns = t.o.timeout_ns, .all_ports = t.ports.all,
					.ports_of = t.o.expect_seen ? svtrace_setup_stream_ports : NULL,
					.ports_ctx = t.bpf };
	hc = (struct svtrace_hlog_cfg){ .nports = t.ports.n, .streams = &t.streams, .corr = t.corr };
	err = svtrace_setup_map(t.bpf, &t.scan, &hc);
	if (!err)
		err = svtrace_hlog_new(&t.hlog, &hc);
	if (err) {
		fprintf(stderr, "svtrace: cannot map the BPF tables: %s\n", strerror(-err));
		goto out_bpf;
	}
	err = svtrace_setup_ring(t.bpf, svtrace_events_handle, &t.ev);
	if (err) {
		fprintf(stderr, "svtrace: ring buffer: %s\n", strerror(-err));
		goto out_bpf;
	}
	err = svtrace_setup_attach(t.bpf);
	if (err) {
		fprintf(stderr, "svtrace: setup failed: %s\n", strerror(-err));
		goto out_bpf;
	}
	if (t.o.metrics && metrics_start(&t))
		goto out_bpf;
	svtrace_setup_print_probes(t.bpf, stderr);
	if (!t.o.threshold_ns)
		fprintf(stderr, "svtrace: late detection off (--threshold-us 0)\n");
	fprintf(stderr, "svtrace: ingress %s (ifindex %u), %u egress, netns inode %u; ring %u KiB; tracing...\n",
		t.ports.port[0].name, t.ports.port[0].ifindex, t.ports.n, t.ports.port[0].netns_ino,
		t.o.ringbuf_bytes / 1024);
	{
		char status[96];

		/* the programs are attached: READY=1, the ready file (sv_ready.h) */
		snprintf(status, sizeof(status), "tracing %s and %u egress", t.ports.port[0].name, t.ports.n);
		err = sv_ready_set(status);
		if (err)
			fprintf(stderr, "svtrace: --ready-file / NOTIFY_SOCKET: %s\n", strerror(-err));
	}

	t.t_start_mono = t.t_last_expire = t.t_last_live = t.t_last_merge = t.t_last_ports = mono_now();
	t_end = t.o.duration_ns ? t.t_start_mono + t.o.duration_ns : INT64_MAX;
	while (!stop_flag) {
		/* BPF never wakes us per event: sleep, then drain what waits (one pass). 10 ms with
		 * --record (an event per frame copy: 64k/s fill 5 MiB/s of ring); else 200 ms (only
		 * drops, late and missing frames are events, and BPF wakes us when a CPU's hop log is half
		 * full). Each drain of the hop log first touches the histograms' lines that the traffic
		 * evicted since the last one: the fewer drains, the cheaper each copy. */
		err = svtrace_setup_poll(t.bpf, t.o.record ? 10 : 200);
		if (err) {
			fprintf(stderr, "svtrace: ring buffer poll: %s\n", strerror(-err));
			break;
		}
		svtrace_hlog_drain(t.hlog);
		now = mono_now();
		svtrace_rec_tick(t.rec, now); /* the record's time bounds: a syscall only when one is due */
		if (now - t.t_last_expire >= 500 * SV_NSEC_PER_MSEC) {
			streams_sync(&t);
			scan(&t, now, false);
			t.t_last_expire = now;
		}
		/* 32-bit BPF buckets: take their growth long before one can wrap */
		if (now - t.t_last_merge >= SVTRACE_HIST_MERGE_S * SV_NSEC_PER_SEC) {
			streams_sync(&t);
			svtrace_hlog_merge(t.hlog);
			t.t_last_merge = now;
		}
		if (t.o.live && now - t.t_last_live >= t.o.interval_ns) {
			print_live(&t);
			t.t_last_live = now;
		}
		if (now - t.t_last_ports >= SV_NSEC_PER_SEC) {
			ports_watch(&t);
			metrics_tick(&t, NULL);
			t.t_last_ports = now;
		}
		if (now >= t_end)
			break;
	}
	/* Clean stop: detach in stages so that nothing new arrives and no frame is cut, drain, resolve,
	 * report. The run's length ends where the stop began. */
	ret = SV_EXIT_OK;
	now = mono_now();
	sv_ready_stopping(NULL);
	svtrace_setup_stop(t.bpf, t.hlog);
	streams_sync(&t);
	svtrace_hlog_merge(t.hlog);
	scan(&t, mono_now(), true);
	svtrace_rec_summaries(t.rec, t.t_start_mono, now);
	if (t.rec) {
		/* the last block and END now, so that the summaries say what reached the disk */
		err = svtrace_rec_close(t.rec, &t.rec_st, &t.rec_refused);
		t.rec = t.ev.rec = t.streams.rec = NULL;
		t.rec_closed = true;
		if (err)
			fprintf(stderr, "svtrace: record file '%s': %s\n", t.o.record, strerror(-err));
		if (err || sv_record_stats_incomplete(&t.rec_st))
			ret = SV_EXIT_RUNTIME;
	}
	out_view(&t, &out);
	metrics_tick(&t, out.cnt); /* the final values: the summaries' */
	sv_metrics_health_record_stats(t.metrics.m ? &t.metrics.health : NULL, t.rec_closed ? &t.rec_st : NULL);
	svtrace_out_summary(&out, stderr);
	if (t.o.json && svtrace_out_json(&out, stdout, now - t.t_start_mono)) {
		fprintf(stderr, "svtrace: JSON output failed\n");
		ret = SV_EXIT_RUNTIME;
	}
out_bpf:
	metrics_end(&t); /* before the statistics its series read are freed */
	svtrace_setup_free(t.bpf);
	svtrace_hlog_free(t.hlog);
out_rec:
	if (t.rec) {
		err = svtrace_rec_close(t.rec, NULL, NULL);
		if (err) {
			fprintf(stderr, "svtrace: record file '%s': %s\n", t.o.record, strerror(-err));
			ret = SV_EXIT_RUNTIME;
		}
	}
out_corr:
	svtrace_corr_free(t.corr);
	svtrace_drop_reasons_free();
	return ret;
}

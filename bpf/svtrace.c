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
#include "sv_ready.h"
#include "sv_record.h"
#include "sv_stats.h"
#include "svtrace.h"
#include "svtrace.skel.h"
#include "svtrace_corr.h"
#include "svtrace_ovsdb.h"
#include "svtrace_sys.h"

_Static_assert(sizeof(struct svtrace_copy) == SVTRACE_COPY_SIZE, "svtrace_copy ABI");
_Static_assert(sizeof(struct svtrace_late_ev) == SVTRACE_LATE_SIZE, "svtrace_late_ev ABI");
_Static_assert(sizeof(struct svtrace_stream_key) == 68 && sizeof(struct svtrace_stream_val) == 16, "stream ABI");
_Static_assert(sizeof(struct svtrace_frame_key) == 8 && sizeof(struct svtrace_inflight) == 24, "frame ABI");
_Static_assert(sizeof(struct svtrace_track) == SVTRACE_TRACK_SIZE, "track ABI");
_Static_assert(SVTRACE_HIST_SUB_BITS == SV_STATS_SUB_BITS, "BPF histograms use sv_stats' buckets");
_Static_assert(SVTRACE_HOPS == SVTRACE_HOP_NR, "hops");

#define MAX_EGRESS (SVTRACE_CORR_MAX_PORTS - 1)
/* At the stop, T1 is detached first; frames it saw get this long to reach T2a before T2a is detached,
 * and then as long again (at least) to be taken (svtrace_stop). Copies still untaken after that and
 * younger than --timeout-ms are in flight at the stop, not missing. */
#define STOP_GRACE_NS (20 * SV_NSEC_PER_MSEC)
#define STOP_DRAIN_NS (100 * SV_NSEC_PER_MSEC)

_Static_assert(MAX_EGRESS == 15, "the help and the man page say at most 15 egress interfaces");

struct port_info {
	char name[16];
	uint32_t ifindex;
	uint32_t netns_ino;
	bool gone;		/* not in its namespace now (deleted, renamed; seen by ports_watch) */
	uint32_t recreated;	/* times it came back under a new ifindex or namespace, followed */
};

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
};

enum { OPT_VERBOSE = 1 };

static const char *const expect_names[] = { "all", "seen", NULL };

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
	if (!c->ingress[0] || !c->egress[0]) {
		fprintf(stderr, "svtrace: --ingress and --egress are required (see --help)\n");
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
	o->ready_file = cli.ready_file;
	o->duration_ns = (int64_t)c->duration * SV_NSEC_PER_SEC;
	o->threshold_ns = (int64_t)c->threshold_us * SV_NSEC_PER_USEC;
	o->interval_ns = (int64_t)c->interval * SV_NSEC_PER_SEC;
	o->timeout_ns = (int64_t)c->timeout_ms * SV_NSEC_PER_MSEC;
	o->appid = c->appid;
	o->ringbuf_bytes = c->ringbuf_kb * 1024;
	o->table = c->table;
	o->log_entries = c->log_entries;
	o->rec = SV_REC_OPTS_OF(c);
	o->live = c->live;
	o->json = c->json;
	o->raw_tp = c->raw_tp;
	o->sched_wakeup = c->sched_wakeup;
	return SV_CLI_RUN;
}

/* ---- end of the options ---- */

/*
 * A stage: the hop log's values of one (stream, port, hop) since the last merge, in sv_stats' own
 * buckets (exact: count, sum, min, max). The log holds only values below SVTRACE_HIST_LIMIT_NS, so
 * SVTRACE_HIST_BUCKETS buckets; 32-bit counts (merged every SVTRACE_HIST_MERGE_S s at most: far from
 * 2^32). Each drain touches the stages' lines again after the traffic evicted them: half the octets of
 * an sv_stats' 64-bit buckets is half the misses.
 */
struct hstage {
	uint64_t count, sum;
	uint32_t min, max, top, pad;
	uint32_t bucket[SVTRACE_HIST_BUCKETS];
};

/* A BPF stream id as user space knows it. */
struct tstream {
	int corr;		/* correlation index, -1 not resolved yet, -2 filtered out */
	bool seen;
	uint16_t last_smp, max_smp;
	uint16_t vlan_tci;
	uint32_t rate;		/* learned from the smpCnt wrap, 0 unknown */
	struct hstage *stage;	/* [(port - 1) * SVTRACE_HOPS + hop]: hop log values not merged yet */
};

struct tracer {
	struct opts o;
	struct tstream strm[SVTRACE_MAX_STREAMS];
	uint32_t all_ports;	/* bit p for egress port p */
	uint64_t unknown_streams, upcalls;
	volatile struct svtrace_inflight *inflight;	/* the BPF array, mmap()ed; NULL if that failed */
	size_t inflight_bytes;
	volatile uint64_t *incomplete;			/* its slots' "not complete" bits (mmap) */
	size_t incomplete_bytes;
	volatile struct svtrace_track *track;		/* "track", mmap()ed (timeout scan) */
	uint64_t *track_rel;				/* "track_rel", mmap()ed (the scan's releases) */
	size_t track_bytes, track_rel_bytes;
	uint32_t track_n;
	volatile struct svtrace_hist *hist;		/* in-BPF histograms, mmap()ed (NULL: --record) */
	size_t hist_bytes;
	struct svtrace_hist *hist_prev;			/* what was merged already */
	volatile struct svtrace_hent *hlog;		/* the hop log, mmap()ed (NULL: --record) */
	volatile struct svtrace_hlog_pos *hlog_pos;
	size_t hlog_bytes, hlog_pos_bytes;
	unsigned hlog_cpus;
	uint64_t hlog_copies;				/* copies read from the hop log */
	int64_t t_last_merge;
	uint32_t scan_cursor;				/* next quarter of "track" to scan */
	struct sv_stats *tmp;				/* one delta at a time */
	uint32_t nids;		/* BPF stream ids below this may be in use */
	struct svtrace_bpf *skel;
	struct ring_buffer *rb;
	struct bpf_link *links[32];
	const char *link_prog[32];	/* each link's program name (the stop detaches by stage) */
	unsigned nlinks;
	const char *tracepoints[32];	/* each tracepoint attached at start (the stop's detaches aside) */
	unsigned ntracepoints;
	struct svtrace_corr *corr;
	struct sv_record_writer *rec;
	struct sv_clock_xlate to_tai;
	struct port_info port[SVTRACE_CORR_MAX_PORTS];	/* [0] ingress, [1..n] egress */
	unsigned nports;				/* egress count */
	const char *attach_mode;
	bool wait_from_rq;		/* feeders' waits from sched_info (no sched_wakeup program) */
	int64_t preempt_from_rq;	/* svtrace_preempt_from_rq(): 0, carriers also in interrupts */
	bool opt_ovs, opt_tun, opt_vhost, opt_direct;
	char ovs_bridge[64], ovs_datapath[16];	/* --egress all from an Open vSwitch database, else "" */
	char opt_ovs_why[64], opt_tun_why[64], opt_vhost_why[64], opt_direct_why[64];
	uint64_t events, events_svid_filtered;
	uint64_t rec_refused;		/* records the writer refused (invalid: a bug); a full disk is the writer's count */
	struct sv_record_writer_stats rec_st;	/* the record's final counts (closed before the summaries) */
	bool rec_closed;
	uint16_t svid_wire_len[SVTRACE_MAX_STREAMS];	/* by correlation index; > 64: truncated */
	uint32_t reasons_named[32];	/* drop reasons given a NAME record (first 32) */
	unsigned nreasons_named;
	int64_t t_start_mono, t_last_expire, t_last_live, t_last_ports;
};

static volatile sig_atomic_t stop_flag;

static bool libbpf_verbose, libbpf_quiet;

/* libbpf's messages: debug with -v; warnings, except while optional probes are tried (their failure is
 * expected on many kernels and is reported once, in svtrace's own words). */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (!libbpf_verbose && (level == LIBBPF_DEBUG || libbpf_quiet))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* Port @i's side, for messages: port 0 is the ingress. */
static const char *port_kind(unsigned i)
{
	return i ? "egress" : "ingress";
}

/* The command line's interface names (usage errors, before anything is looked up): the egress list
 * into t->port[1..] (empty for "all"). Returns 0 or -EINVAL, said on stderr. */
static int ports_parse(struct tracer *t)
{
	char names[MAX_EGRESS][16];
	char *save = NULL, *tok;
	int n = 0;

	if (strlen(t->o.ingress) >= 16) {
		fprintf(stderr, "svtrace: --ingress: interface name too long: '%s' (at most 15 characters)\n",
			t->o.ingress);
		return -EINVAL;
	}
	if (strcmp(t->o.egress_arg, "all")) {
		for (tok = strtok_r(t->o.egress_arg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			if (n >= MAX_EGRESS) {
				fprintf(stderr, "svtrace: --egress: at most %d egress interfaces\n", MAX_EGRESS);
				return -EINVAL;
			}
			if (strlen(tok) >= 16) {
				fprintf(stderr, "svtrace: --egress: interface name too long: '%s' (at most 15 "
					"characters)\n", tok);
				return -EINVAL;
			}
			if (!strcmp(tok, t->o.ingress)) {
				fprintf(stderr, "svtrace: --egress: '%s' is the ingress interface (--ingress): it cannot "
					"also be an egress\n", tok);
				return -EINVAL;
			}
			for (int j = 0; j < n; j++) {
				if (!strcmp(names[j], tok)) {
					fprintf(stderr, "svtrace: --egress: interface '%s' given twice\n", tok);
					return -EINVAL;
				}
			}
			snprintf(names[n++], 16, "%s", tok);
		}
		if (!n) {
			fprintf(stderr, "svtrace: --egress: no interface named (IF[,IF...] or all; see --help)\n");
			return -EINVAL;
		}
	}
	snprintf(t->port[0].name, 16, "%s", t->o.ingress);
	for (int i = 0; i < n; i++)
		memcpy(t->port[i + 1].name, names[i], 16);
	t->nports = (unsigned)n;
	return 0;
}

/* Entering --netns NAME failed for lack of privilege (setns(2) wants CAP_SYS_ADMIN, which svtrace.service
 * does not grant by default): say so, instead of an interface "not found". True when it said it. */
static bool netns_denied(const char *netns, int err)
{
	if (!netns || (err != -EPERM && err != -EACCES))
		return false;
	fprintf(stderr, "svtrace: entering network namespace '%s': %s: setns(2) needs CAP_SYS_ADMIN (for "
		"svtrace.service: CapabilityBoundingSet=CAP_SYS_ADMIN in a drop-in)\n", netns, strerror(-err));
	return true;
}

/* The database --egress all asks: --ovsdb, else Open vSwitch's own default (ovs-vsctl's: $OVS_RUNDIR/db.sock,
 * else /var/run/openvswitch/db.sock) when that socket exists; NULL when there is none. */
static const char *ovsdb_socket(const struct tracer *t, char *buf, size_t size)
{
	const char *dir = getenv("OVS_RUNDIR");

	if (t->o.ovsdb)
		return t->o.ovsdb;
	snprintf(buf, size, "unix:%s/db.sock", dir && *dir ? dir : "/var/run/openvswitch");
	return access(buf + 5, F_OK) ? NULL : buf;
}

/* Port types that carry frames to a guest through a kernel interface svtrace can trace. */
static bool ovs_port_traceable(const char *type)
{
	static const char *const ok[] = { "", "system", "tap", "afxdp", "afxdp-nonpmd" };

	for (unsigned i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (!strcmp(type, ok[i]))
			return true;
	return false;
}

/*
 * --egress all on an Open vSwitch bridge: the ports of the bridge that holds the ingress, asked of its
 * database (in the netdev datapath they have no kernel master, and its internal port is a tap like a
 * guest's), but the ingress, the internal port, ports of kinds without a kernel interface here
 * (patch, tunnels, dpdk) and names not in the namespace. Returns how many (into names[]), -ESRCH when
 * there is no database or the ingress is not an Open vSwitch port (the kernel's list is used), or
 * -errno when --ovsdb was given and could not be read (said).
 */
static int ovs_egress(struct tracer *t, char (*names)[16], char *skipped, size_t skipped_size)
{
	struct svtrace_ovs_iface ifs[64];
	struct svtrace_ovs_bridge br;
	char sock[128], why[160];
	const char *db = ovsdb_socket(t, sock, sizeof(sock));
	size_t sl = 0;
	uint32_t idx;
	int err, n = 0;

	if (!db)
		return -ESRCH;
	err = svtrace_ovsdb_bridge_of(db, t->o.ingress, 3000, &br, ifs, 64, why, sizeof(why));
	if (err == -ESRCH) {
		if (t->o.ovsdb)
			fprintf(stderr, "svtrace: --egress all: '%s' is not a port of an Open vSwitch bridge in %s: "
				"interfaces listed from the kernel\n", t->o.ingress, db);
		return -ESRCH;
	}
	if (err) {
		bool said = err == -EPROTO || err == -EBADMSG;	/* the reply's own reason is in why */

		fprintf(stderr, "svtrace: --egress all: Open vSwitch database %s: %s%s\n", db,
			said ? why : strerror(-err), t->o.ovsdb ? "" : " (interfaces listed from the kernel)");
		return t->o.ovsdb ? (said ? -EIO : err) : -ESRCH;
	}
	skipped[0] = 0;
	for (unsigned i = 0; i < br.nifaces - br.nlong && i < 64; i++) {
		const char *why_out = NULL;

		if (!strcmp(ifs[i].name, t->o.ingress))
			continue;
		if (!strcmp(ifs[i].type, "internal"))
			why_out = "internal";
		else if (!ovs_port_traceable(ifs[i].type))
			why_out = ifs[i].type;
		else if ((err = svtrace_ifindex(t->o.netns, ifs[i].name, &idx)) == -EPERM || err == -EACCES)
			return err;	/* entering --netns is refused: said by the caller */
		else if (err)
			why_out = "not in this namespace";
		if (why_out) {
			int k = snprintf(skipped + sl, skipped_size - sl, "%s%s (%s)", sl ? ", " : "", ifs[i].name, why_out);

			if (k > 0 && (size_t)k < skipped_size - sl)
				sl += (size_t)k;
			continue;
		}
		if (n < MAX_EGRESS)
			memcpy(names[n], ifs[i].name, 16);
		n++;
	}
	if (br.nlong || br.nifaces > 64)
		fprintf(stderr, "svtrace: --egress all: bridge %s has %u interfaces, %u with names over 15 characters: only "
			"%u looked at\n", br.name, br.nifaces, br.nlong, br.nifaces - br.nlong < 64 ? br.nifaces - br.nlong : 64);
	snprintf(t->ovs_bridge, sizeof(t->ovs_bridge), "%s", br.name);
	snprintf(t->ovs_datapath, sizeof(t->ovs_datapath), "%s", br.datapath_type);
	fprintf(stderr, "svtrace: --egress all: Open vSwitch bridge %s (%s datapath; database %s)\n", br.name,
		br.datapath_type, db);
	return n;
}

/* The interfaces' ifindex and namespace (and the list of --egress all). Returns 0, -EINVAL (usage: the
 * same interface twice, too many for "all") or another -errno (run time: a namespace or interface that
 * is not there), said on stderr. */
static int resolve_ports(struct tracer *t)
{
	char names[MAX_EGRESS][16], skipped[512];
	uint32_t ino;
	int n = 0, err;

	err = svtrace_netns_ino(t->o.netns, &ino);
	if (err) {
		fprintf(stderr, "svtrace: network namespace '%s': %s\n", t->o.netns ? t->o.netns : "(own)",
			err == -ENOENT ? "no such namespace (see 'ip netns list')" : strerror(-err));
		return err == -EINVAL ? -ENOENT : err;
	}
	if (!strcmp(t->o.egress_arg, "all")) {
		n = ovs_egress(t, names, skipped, sizeof(skipped));
		if (n != -ESRCH && n < 0)
			return netns_denied(t->o.netns, n) ? n : n == -EINVAL ? -EIO : n;
		if (n == -ESRCH)
			n = svtrace_list_ifaces(t->o.netns, t->o.ingress, names, MAX_EGRESS, skipped, sizeof(skipped));
		if (n < 0) {
			if (netns_denied(t->o.netns, n))
				return n;
			fprintf(stderr, "svtrace: --egress all: cannot list the interfaces: %s\n", strerror(-n));
			return n == -EINVAL ? -EIO : n;
		}
		/* what was left out: lo and masters (the kernel's list), or the bridge's other ports (OVS) */
		const char *others = t->ovs_bridge[0] ? "of the bridge's ports" : "interfaces";
		const char *but = t->ovs_bridge[0] ? "the ingress and its internal port" : "the ingress, lo and masters";

		if (n > MAX_EGRESS) {
			fprintf(stderr, "svtrace: --egress all: %d %s besides %s, at most %d can be traced: name them "
				"with --egress IF,IF,...\n", n, others, but, MAX_EGRESS);
			return -EINVAL;
		}
		if (!n) {
			fprintf(stderr, "svtrace: --egress all: no interface besides %s%s%s\n", but,
				skipped[0] ? ": left out " : "", skipped);
			return -ENODEV;
		}
		fprintf(stderr, "svtrace: --egress all: ");
		for (int i = 0; i < n; i++)
			fprintf(stderr, "%s%s", i ? "," : "", names[i]);
		fprintf(stderr, " (left out: the ingress %s%s%s%s)\n", t->o.ingress, t->ovs_bridge[0] ? "" : ", lo",
			skipped[0] ? ", " : "", skipped);
		for (int i = 0; i < n; i++)
			memcpy(t->port[i + 1].name, names[i], 16);
		t->nports = (unsigned)n;
	}
	for (unsigned i = 0; i <= t->nports; i++) {
		err = svtrace_ifindex(t->o.netns, t->port[i].name, &t->port[i].ifindex);
		if (netns_denied(t->o.netns, err))
			return err;
		if (err) {
			fprintf(stderr, "svtrace: %s interface '%s' not found in %s%s%s\n",
				port_kind(i), t->port[i].name,
				t->o.netns ? "network namespace '" : "this network namespace",
				t->o.netns ? t->o.netns : "", t->o.netns ? "'" : "");
			return -ENODEV;
		}
		t->port[i].netns_ino = ino;
		for (unsigned j = 0; j < i; j++) {
			if (t->port[j].ifindex == t->port[i].ifindex) {
				/* two names of one interface (an altname) */
				fprintf(stderr, "svtrace: %s interface '%s' is the %s interface '%s' (ifindex %u) again\n",
					port_kind(i), t->port[i].name, port_kind(j), t->port[j].name, t->port[j].ifindex);
				return -EINVAL;
			}
		}
	}
	return 0;
}

static int64_t mono_now(void)
{
	return sv_clock_now_ns(SV_CLOCK_MONOTONIC);
}

/* ---- streams: BPF ids -> correlation index, sample rate ---- */

/* The nominal rates of IEC 61869-9 / 9-2LE (sv_dataset.h profiles): a provisional wrap before the
 * stream's own wrap has been seen. */
static const uint32_t std_rates[] = { 4000, 4800, 12800, 14400, 15360 };

static uint32_t stream_rate(const struct tstream *s)
{
	if (s->rate)
		return s->rate;
	for (unsigned i = 0; i < sizeof(std_rates) / sizeof(std_rates[0]); i++)
		if (s->max_smp < std_rates[i])
			return std_rates[i];
	return 65536;
}

static void rec_stream(struct tracer *t, const struct tstream *ts)
{
	struct sv_rec_stream s = { .stream = (uint32_t)ts->corr, .vlan = 0xFFFF, .asdus = 0 };
	const uint8_t *svid;
	size_t len;
	uint16_t appid;

	if (!t->rec || svtrace_corr_stream(t->corr, (unsigned)ts->corr, &appid, &svid, &len, NULL) || !len)
		return;
	s.appid = appid;
	s.svid_len = (uint8_t)len;
	memcpy(s.svid, svid, len);
	if (ts->vlan_tci)
		s.vlan = ts->vlan_tci & 0x0FFF;
	/* A learned wrap is the rate of a synchronised stream (smpCnt counts samples in the second). */
	s.sample_rate = ts->rate;
	s.smp_wrap = ts->rate;
	if (sv_record_define_stream(t->rec, &s) == -EINVAL)
		t->rec_refused++;
}

/*
 * smpCnt wrap: when the count falls back by more than half of what it reached, a second has turned and
 * the largest count seen + 1 is the rate (IEC 61850-9-2 §8.5.2: smpCnt counts the samples of the second
 * when synchronised). A larger count later raises it again (a lost top-of-second frame).
 */
static void stream_learn(struct tracer *t, struct tstream *s, uint16_t smp)
{
	if (smp > s->max_smp)
		s->max_smp = smp;
	if (s->seen && s->last_smp > 64 && smp < s->last_smp / 2 && s->max_smp + 1u > s->rate) {
		s->rate = s->max_smp + 1u;
		rec_stream(t, s);
	}
	if (s->rate && smp >= s->rate) {
		s->rate = 0;	/* proven wrong: learn again at the next wrap */
		rec_stream(t, s);
	}
	s->last_smp = smp;
	s->seen = true;
}

/* Finds BPF stream @id in the "streams" map (once per stream) and gives it a correlation index. */
static struct tstream *stream_first(struct tracer *t, uint32_t id)
{
	struct svtrace_stream_key k, next, *prev = NULL;
	struct svtrace_stream_val v;
	int fd = bpf_map__fd(t->skel->maps.streams), idx;
	struct tstream *s = &t->strm[id];
	size_t kept;

	if (s->corr == -2)
		return NULL;	/* filtered out (--svid) or over the limit */
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(fd, &k, &v) || v.id != id)
			continue;
		/* k.svid_len is the length on the wire; BPF kept at most SVTRACE_SVID_MAX octets */
		kept = k.svid_len > SVTRACE_SVID_MAX ? SVTRACE_SVID_MAX : k.svid_len;
		if (!kept)
			return NULL;
		if (t->o.svid && (k.svid_len != strlen(t->o.svid) || memcmp(k.svid, t->o.svid, kept))) {
			s->corr = -2;
			return NULL;
		}
		idx = svtrace_corr_stream_add(t->corr, k.appid, k.svid, kept);
		if (idx < 0) {
			s->corr = -2;
			return NULL;
		}
		s->corr = idx;
		if (k.svid_len > SVTRACE_SVID_MAX && idx < SVTRACE_MAX_STREAMS && !t->svid_wire_len[idx]) {
			t->svid_wire_len[idx] = k.svid_len;
			fprintf(stderr, "svtrace: warning: stream APPID 0x%04x svID '%.*s...' has %u octets, svtrace keeps "
				"the first %d: its records carry them and will not join with svpub's or svsub's "
				"(svID_truncated in --json)\n", k.appid, (int)kept, (const char *)k.svid, k.svid_len,
				SVTRACE_SVID_MAX);
		}
		rec_stream(t, s);
		if (id + 1 > t->nids)
			t->nids = id + 1;
		return s;
	}
	t->unknown_streams++;
	return NULL;
}

/* Per log entry: known ids are one array index (inline); the first time, stream_first(). */
static inline struct tstream *stream_of(struct tracer *t, uint32_t id)
{
	if (id >= SVTRACE_MAX_STREAMS)
		return NULL;
	if (t->strm[id].corr >= 0)
		return &t->strm[id];
	return stream_first(t, id);
}

/* T1 frames of BPF stream @id: the per-CPU counts summed. */
static uint64_t stream_frames(struct tracer *t, uint32_t id)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t vals[1024], sum = 0;

	if (ncpu <= 0 || ncpu > 1024 ||
	    bpf_map__lookup_elem(t->skel->maps.stream_frames, &id, sizeof(id), vals, sizeof(uint64_t) * ncpu, 0))
		return 0;
	for (int i = 0; i < ncpu; i++)
		sum += vals[i];
	return sum;
}

/* Stream frame counts at T1 (kept in BPF); also names streams seen only at T1. */
static void streams_sync(struct tracer *t)
{
	struct svtrace_stream_key k, next, *prev = NULL;
	struct svtrace_stream_val v;
	int fd = bpf_map__fd(t->skel->maps.streams);
	struct tstream *s;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(fd, &k, &v) || v.id >= SVTRACE_MAX_STREAMS)
			continue;
		if (v.id + 1 > t->nids)
			t->nids = v.id + 1;
		s = stream_of(t, v.id);
		if (s)
			svtrace_corr_stream_set_frames(t->corr, (unsigned)s->corr, stream_frames(t, v.id));
	}
}

/* ---- records ---- */

static void rec_point(struct tracer *t, const struct tstream *s, unsigned point, uint64_t t_mono,
		      int64_t tai_sec, uint16_t smp, uint32_t ifindex, uint32_t netns, unsigned guest,
		      unsigned flags, uint32_t reason, uint32_t cpu, uint32_t tid)
{
	struct sv_rec_event r = {
		.point = (uint8_t)point, .stream = (uint32_t)s->corr,
		.t_ns = sv_clock_xlate_apply(&t->to_tai, (int64_t)t_mono), .tai_sec = (uint32_t)tai_sec,
		.smp_cnt = smp, .ts_src = SV_TS_BPF, .ifindex = ifindex, .netns = netns,
		.guest = (uint16_t)guest, .flags = (uint16_t)flags, .reason = (uint16_t)reason,
		.cpu = (uint16_t)cpu, .tid = tid, .seq = 0,
	};

	if (sv_record_write_event(t->rec, &r) == -EINVAL)
		t->rec_refused++;
}

/* A NAME record (SV_REC_NAME_DROP_REASON) the first time a drop reason is written: the kernel's numbering
 * changes between kernels; svkit's own reasons are named by sv_rec_reason_name(). */
static void rec_reason_name(struct tracer *t, uint32_t reason, const char *name)
{
	struct sv_rec_name n = { .name_kind = SV_REC_NAME_DROP_REASON, .id = reason };

	for (unsigned i = 0; i < t->nreasons_named; i++)
		if (t->reasons_named[i] == reason)
			return;
	if (t->nreasons_named >= sizeof(t->reasons_named) / sizeof(t->reasons_named[0]))
		return;
	t->reasons_named[t->nreasons_named++] = reason;
	snprintf(n.name, sizeof(n.name), "%s", name);
	if (sv_record_define_name(t->rec, &n) == -EINVAL)
		t->rec_refused++;
}

static void rec_drop(struct tracer *t, const struct tstream *s, unsigned point, const struct svtrace_copy *e,
		     int64_t tai_sec)
{
	const char *name = svtrace_drop_reason_name(e->reason);
	struct sv_rec_drop d = {
		.point = (uint8_t)point, .stream = (uint32_t)s->corr,
		.t_ns = sv_clock_xlate_apply(&t->to_tai, (int64_t)e->t2b_ns), .tai_sec = (uint32_t)tai_sec,
		.smp_cnt = e->smpcnt, .reason = (uint16_t)e->reason, .ifindex = e->ifindex2b,
		.netns = e->netns2b, .guest = e->port, .cpu = e->cpu2b, .tid = e->tid2b,
	};

	snprintf(d.reason_name, sizeof(d.reason_name), "%s", name ? name : "unknown");
	rec_reason_name(t, e->reason, d.reason_name);
	if (sv_record_write_drop(t->rec, &d) == -EINVAL)
		t->rec_refused++;
}

/*
 * A frame seen upstream (T1, or T2a) and never at @point of port @p (svtrace's "missing", not a drop: no
 * DROP record): an EVENT at that point and port flagged DROPPED with reason SV_REASON_MISSING (svreport
 * counts it as loss there, not as a drop). t_ns is the last time the frame was seen (@t_mono: its T1, or
 * its T2a), ts_src none: no timestamp was taken at @point.
 */
static void rec_missing(struct tracer *t, const struct tstream *s, unsigned point, unsigned p, uint64_t t_mono,
			int64_t tai_sec, uint16_t smp)
{
	int64_t t_ns = sv_clock_xlate_apply(&t->to_tai, (int64_t)t_mono);
	struct sv_rec_event r = {
		.point = (uint8_t)point, .stream = (uint32_t)s->corr, .t_ns = t_ns, .tai_sec = (uint32_t)tai_sec,
		.smp_cnt = smp, .ts_src = SV_TS_NONE, .ifindex = t->port[p].ifindex, .netns = t->port[p].netns_ino,
		.guest = (uint16_t)p, .flags = SV_REC_F_DROPPED, .reason = (uint16_t)SV_REASON_MISSING,
	};

	rec_reason_name(t, SV_REASON_MISSING, sv_rec_reason_name(SV_REASON_MISSING));
	if (sv_record_write_event(t->rec, &r) == -EINVAL)
		t->rec_refused++;
}

/*
 * The run's totals at the end: one SUMMARY record per (stream, egress port, hop), the whole run as one
 * period (tai_sec: the run's first TAI second, period_ms: its length), also for a port that saw nothing
 * (frames 0, lost = frames seen upstream and never there). lost = missing, dropped = dropped with a
 * reason; unwanted copies and copies in flight at the stop are in neither. count/percentiles: the hop's
 * latency.
 */
static void rec_summaries(struct tracer *t, int64_t now_mono)
{
	static const uint8_t from[SVTRACE_HOP_NR] = { SV_POINT_T1, SV_POINT_T2A, SV_POINT_T1 };
	static const uint8_t to[SVTRACE_HOP_NR] = { SV_POINT_T2A, SV_POINT_T2B, SV_POINT_T2B };
	int64_t start = sv_clock_xlate_apply(&t->to_tai, t->t_start_mono);
	int64_t ms = (now_mono - t->t_start_mono + SV_NSEC_PER_MSEC - 1) / SV_NSEC_PER_MSEC;

	if (!t->rec)
		return;
	for (unsigned i = 0; i < svtrace_corr_nstreams(t->corr); i++) {
		for (unsigned p = 1; p <= t->nports; p++) {
			for (unsigned h = 0; h < SVTRACE_HOP_NR; h++) {
				const struct svtrace_hop_stats *hs = svtrace_corr_stream_hop(t->corr, i, p, h);
				struct sv_rec_summary r = {
					.point = to[h], .stream = i, .from_point = from[h], .guest = (uint16_t)p,
					.tai_sec = (uint32_t)sv_ns_to_sec_floor(start),
					.period_ms = ms > UINT32_MAX ? UINT32_MAX : ms < 1 ? 1 : (uint32_t)ms,
				};

				if (!hs)
					continue;
				sv_rec_summary_fill(&r, &hs->lat);
				r.frames = hs->frames;
				r.lost = hs->missing;
				r.dropped = hs->dropped;
				if (sv_record_write_summary(t->rec, &r) == -EINVAL)
					t->rec_refused++;
			}
		}
	}
}

/* Every point of one copy: T1 (by the copy that carries it), T2a, and the end (taken or dropped). */
static void rec_copy(struct tracer *t, const struct tstream *s, const struct svtrace_copy *e,
		     enum svtrace_copy_outcome oc)
{
	uint64_t t_ref = e->t1_ns ? e->t1_ns : e->t2a_ns ? e->t2a_ns : e->t2b_ns;
	struct sv_sample_time st;
	int64_t tai_sec;
	uint32_t p = e->port;

	/* The join key is the SAMPLE's second (the frame seen at 00.0001 may carry a sample of the
	 * second before), from smpCnt and the stream's rate (sv_sample_align). */
	if (!sv_sample_align(sv_clock_xlate_apply(&t->to_tai, (int64_t)t_ref), e->smpcnt, stream_rate(s),
			     SV_SAMPLE_AHEAD_NS_DEFAULT, &st))
		tai_sec = st.tai_sec;
	else
		tai_sec = sv_ns_to_sec_floor(sv_clock_xlate_apply(&t->to_tai, (int64_t)t_ref));
	if (e->t1_ns && (e->flags & SVTRACE_F_T1_FIRST))
		rec_point(t, s, SV_POINT_T1, e->t1_ns, tai_sec, e->smpcnt, t->port[0].ifindex,
			  t->port[0].netns_ino, SV_REC_GUEST_NONE, 0, 0, e->cpu1, e->tid1);
	if (oc == SVTRACE_COPY_MISSING_T2A) {
		/* one event, a mask of ports (e->reason) */
		for (unsigned q = 1; q <= t->nports; q++)
			if (e->reason & (1u << q))
				rec_missing(t, s, SV_POINT_T2A, q, e->t1_ns, tai_sec, e->smpcnt);
		return;
	}
	if (p < 1 || p > t->nports)
		return;
	if (e->t2a_ns)
		rec_point(t, s, SV_POINT_T2A, e->t2a_ns, tai_sec, e->smpcnt, t->port[p].ifindex,
			  t->port[p].netns_ino, p, 0, 0, e->cpu2a, e->tid2a);
	switch (oc) {
	case SVTRACE_COPY_TAKEN:
	case SVTRACE_COPY_UNWANTED:
		rec_point(t, s, SV_POINT_T2B, e->t2b_ns, tai_sec, e->smpcnt, e->ifindex2b, e->netns2b, p,
			  e->flags & SVTRACE_F_LATE ? SV_REC_F_LATE : 0, 0, e->cpu2b, e->tid2b);
		break;
	case SVTRACE_COPY_MISSING_T2B:
		rec_missing(t, s, SV_POINT_T2B, p, e->t2a_ns, tai_sec, e->smpcnt);
		break;
	case SVTRACE_COPY_DROPPED:
		rec_drop(t, s, SV_POINT_T2B, e, tai_sec);
		rec_point(t, s, SV_POINT_T2B, e->t2b_ns, tai_sec, e->smpcnt, e->ifindex2b, e->netns2b, p,
			  SV_REC_F_DROPPED, e->reason, e->cpu2b, e->tid2b);
		break;
	case SVTRACE_COPY_PORT_DROP:
		rec_drop(t, s, SV_POINT_T2A, e, tai_sec);
		rec_point(t, s, SV_POINT_T2A, e->t2b_ns, tai_sec, e->smpcnt, e->ifindex2b, e->netns2b, p,
			  SV_REC_F_DROPPED, e->reason, e->cpu2b, e->tid2b);
		break;
	default:
		break;
	}
}

static void on_late(void *ctx, const struct svtrace_late *l)
{
	struct tracer *t = ctx;
	/* The part of the feeder's wait within the hop (svtrace_wait_in_hop); none: no holder, t_ns the
	 * late point's time. */
	struct sv_rec_thread r = {
		.point = SV_POINT_T2B, .stream = l->stream,
		.t_ns = sv_clock_xlate_apply(&t->to_tai, l->wait_ns ? l->wait_from_ns : l->t_mono_ns),
		.wait_ns = l->wait_ns,
		.smp_cnt = l->smpcnt, .feeder_tid = l->feeder_tid, .holder_pid = l->holder_pid,
		.holder_policy = (uint8_t)l->holder_policy, .holder_prio = (uint8_t)l->holder_prio,
		.cause = l->holder_pid ? SV_WAIT_RUNQUEUE : SV_WAIT_UNKNOWN, .guest = (uint16_t)l->port,
		.ifindex = t->port[l->port].ifindex,
	};

	if (!t->rec)
		return;
	memcpy(r.feeder_comm, l->feeder_comm, 16);
	memcpy(r.holder_comm, l->holder_comm, 16);
	r.feeder_comm[15] = r.holder_comm[15] = 0;
	if (sv_record_write_thread(t->rec, &r) == -EINVAL)
		t->rec_refused++;
	/* no carrier, or it is the feeder with the very wait just written (a netdev datapath's thread that
	 * also delivered the frame into the guest's namespace) */
	if (!l->carrier_tid || (l->carrier_tid == l->feeder_tid && l->carrier_wait_from_ns == l->wait_from_ns &&
				l->carrier_wait_ns == l->wait_ns))
		return;
	/* The thread that carried it from T1 to T2a (a user-space switch's), at the point it ended: T2a. */
	r = (struct sv_rec_thread){
		.point = SV_POINT_T2A, .stream = l->stream,
		.t_ns = sv_clock_xlate_apply(&t->to_tai, l->carrier_wait_ns ? l->carrier_wait_from_ns : l->t_mono_ns),
		.wait_ns = l->carrier_wait_ns, .smp_cnt = l->smpcnt, .feeder_tid = l->carrier_tid,
		.holder_pid = l->carrier_holder_pid, .holder_policy = (uint8_t)l->carrier_holder_policy,
		.holder_prio = (uint8_t)l->carrier_holder_prio,
		.cause = l->carrier_holder_pid ? SV_WAIT_RUNQUEUE : SV_WAIT_UNKNOWN, .guest = (uint16_t)l->port,
		.ifindex = t->port[l->port].ifindex,
	};
	memcpy(r.feeder_comm, l->carrier_comm, 16);
	memcpy(r.holder_comm, l->carrier_holder_comm, 16);
	r.feeder_comm[15] = r.holder_comm[15] = 0;
	if (sv_record_write_thread(t->rec, &r) == -EINVAL)
		t->rec_refused++;
}

/* The record file's name of port @i's current ifindex (svreport names the hops by it). */
static void port_name_record(struct tracer *t, unsigned i)
{
	struct sv_rec_name n = { .name_kind = SV_REC_NAME_IFINDEX, .id = t->port[i].ifindex,
				 .netns = t->port[i].netns_ino };

	if (!t->rec)
		return;
	snprintf(n.name, sizeof(n.name), "%s", t->port[i].name);
	sv_record_define_name(t->rec, &n);
}

static int rec_open(struct tracer *t)
{
	struct sv_record_writer_cfg cfg = {
		.path = t->o.record, .tool = "svtrace", .clock = SV_CLOCK_TAI,
	};
	int err = sv_record_cfg_opts(&cfg, &t->o.rec);

	if (!err)
		err = sv_record_writer_open(&t->rec, &cfg);

	if (err) {
		fprintf(stderr, "svtrace: cannot create record file '%s': %s\n", t->o.record, strerror(-err));
		return err;
	}
	for (unsigned i = 0; i <= t->nports; i++) {
		struct sv_rec_name g = { .name_kind = SV_REC_NAME_GUEST, .id = i };

		snprintf(g.name, sizeof(g.name), "%s", t->port[i].name);
		port_name_record(t, i);
		if (i)
			sv_record_define_name(t->rec, &g);
	}
	return 0;
}

/* ---- events ---- */

/* NOT_SPECIFIED or UNHANDLED_PROTO in the guest's namespace: the copy reached the guest and nobody
 * there wanted it (no socket for 0x88BA, an XDP_PASS nobody reads) - not a loss on the host's path. */
static bool drop_is_unwanted(const struct svtrace_copy *e)
{
	const char *name = svtrace_drop_reason_name(e->reason);

	if (!name)
		return false;
	if (!strcmp(name, "UNHANDLED_PROTO"))
		return true;
	return !strcmp(name, "NOT_SPECIFIED") && (e->flags & SVTRACE_F_OTHER_NS);
}

/* A taken copy from the hop log without a stage: its hops only (no names, no record: --record has no
 * log). Times relative to a T2a of 2^32 (any base: only the differences count). */
static void hop_copy(struct tracer *t, struct tstream *s, unsigned port, uint32_t d1, uint32_t d2)
{
	const int64_t t2a = 1ll << 32;
	struct svtrace_copy_obs o = { .outcome = SVTRACE_COPY_TAKEN, .stream = (unsigned)s->corr, .port = port,
				      .t1_ns = d1 == SVTRACE_HLOG_NO_T1 ? 0 : t2a - d1, .t2a_ns = t2a,
				      .t2b_ns = t2a + d2 };

	svtrace_corr_copy(t->corr, &o);
}

/* One resolved copy: statistics, late list, records. No allocation, no syscall (records: a write(2)
 * when a block is full). */
static void copy_account(struct tracer *t, const struct svtrace_copy *e, enum svtrace_copy_outcome oc,
			 const char *feeder_comm, const char *holder_comm, uint64_t wait_end_ns,
			 const struct svtrace_carrier *carrier)
{
	struct svtrace_copy_obs o;
	struct tstream *s = stream_of(t, e->stream);

	if (!s) {
		t->events_svid_filtered++;
		return;
	}
	/* The wrap is learned from copies in arrival order; a missing copy is reported when its slot is
	 * reused (a thousand frames later): its old smpCnt would look like a wrap. */
	if (oc != SVTRACE_COPY_MISSING_T2A && oc != SVTRACE_COPY_MISSING_T2B)
		stream_learn(t, s, e->smpcnt);
	if (!s->vlan_tci && e->vlan_tci)
		s->vlan_tci = e->vlan_tci;
	o = (struct svtrace_copy_obs){
		.outcome = oc, .stream = (unsigned)s->corr, .port = e->port, .smpcnt = e->smpcnt,
		.t1_ns = (int64_t)e->t1_ns, .t2a_ns = (int64_t)e->t2a_ns, .t2b_ns = (int64_t)e->t2b_ns,
		.reason = e->reason, .feeder_tid = e->feeder_tid, .feeder_comm = feeder_comm,
		.wait_ns = e->wait_ns, .holder_pid = e->holder_pid, .holder_comm = holder_comm,
		.holder_policy = e->holder_policy, .holder_prio = e->holder_prio,
		.wait_end_ns = (int64_t)wait_end_ns,
	};
	if (carrier)
		o.carrier = *carrier;
	if (oc == SVTRACE_COPY_MISSING_T2A) {
		/* one event, a mask of ports */
		for (unsigned p = 1; p <= t->nports; p++) {
			if (!(e->reason & (1u << p)))
				continue;
			o.port = p;
			svtrace_corr_copy(t->corr, &o);
		}
	} else {
		svtrace_corr_copy(t->corr, &o);
	}
	if (t->rec)
		rec_copy(t, s, e, oc);
}

static int handle_event(void *ctx, void *data, size_t size)
{
	struct tracer *t = ctx;
	const struct svtrace_copy *e = data;
	const struct svtrace_late_ev *l = data;
	char fc[17] = "", hc[17] = "", cc[17] = "", chc[17] = "";
	struct svtrace_carrier carrier = { 0 };
	enum svtrace_copy_outcome oc;
	uint64_t wait_end = 0;

	if (size < sizeof(*e))
		return 0;
	t->events++;
	switch (e->type) {
	case SVTRACE_EV_TAKEN:
		oc = SVTRACE_COPY_TAKEN;
		break;
	case SVTRACE_EV_DROP:
		oc = drop_is_unwanted(e) ? SVTRACE_COPY_UNWANTED : SVTRACE_COPY_DROPPED;
		break;
	case SVTRACE_EV_PORT_DROP:
		if (e->port == 0)
			return 0;	/* BPF counts the ingress's (SVTRACE_CNT_INGRESS_DROP) */
		oc = SVTRACE_COPY_PORT_DROP;
		break;
	case SVTRACE_EV_MISSING:
		oc = SVTRACE_COPY_MISSING_T2A;
		break;
	case SVTRACE_EV_UPCALL:
		t->upcalls++;
		return 0;
	default:
		return 0;
	}
	if ((e->flags & SVTRACE_F_LATE) && size >= sizeof(*l)) {
		memcpy(fc, l->feeder_comm, 16);
		memcpy(hc, l->holder_comm, 16);
		wait_end = l->wait_end_ns;
		if (e->flags & SVTRACE_F_CARRIED) {
			memcpy(cc, l->carrier_comm, 16);
			memcpy(chc, l->carrier_holder_comm, 16);
			carrier = (struct svtrace_carrier){
				.tid = e->tid2a, .comm = cc, .wait_ns = l->carrier_wait_ns,
				.wait_end_ns = (int64_t)l->carrier_wait_end_ns, .holder_pid = l->carrier_holder_pid,
				.holder_comm = chc, .holder_policy = l->carrier_holder_policy,
				.holder_prio = l->carrier_holder_prio,
			};
		}
	}
	copy_account(t, e, oc, fc, hc, wait_end, &carrier);
	return 0;
}

/*
 * What BPF cannot report by itself: frames still in "inflight" (T1 seen, some port never reached T2a)
 * and skbs still in "tracked" (T2a seen, never freed) after the timeout - or all of them at the end.
 * Both maps normally hold only the frames of the last microseconds; keys are gathered first, then
 * resolved and deleted (BPF may race with an entry: at worst one frame loses its T1).
 */
#define SCAN_BATCH 4096

static void scan_inflight(struct tracer *t, int64_t now, bool all)
{
	if (!t->inflight || !t->incomplete)
		return;
	/* Only the slots whose bit in "incomplete" is set (a frame still waiting for a port): a frame that
	 * reached every port needs nothing, and reading all of a stream's slots every pass pulled ~4000
	 * lines a second from the CPU that writes them (which then had to take them back). */
	for (uint32_t id = 0; id < t->nids; id++) {
		uint32_t expect = t->all_ports;

		/* --expect seen: the ports this stream has reached (BPF's "stream_ports") */
		if (t->o.expect_seen && bpf_map__lookup_elem(t->skel->maps.stream_ports, &id, sizeof(id), &expect,
							     sizeof(expect), 0))
			expect = 0;
		expect &= t->all_ports;
		for (uint32_t wi = 0; wi < SVTRACE_INFLIGHT_SLOTS / 64; wi++) {
			uint32_t base = id * SVTRACE_INFLIGHT_SLOTS + wi * 64;
			uint64_t bits = __atomic_load_n(&t->incomplete[base / 64], __ATOMIC_RELAXED);

			for (; bits; bits &= bits - 1) {
				uint32_t i = base + (uint32_t)__builtin_ctzll(bits);	/* slot, and bit in "incomplete" */
				volatile struct svtrace_inflight *v = &t->inflight[i];
				struct svtrace_copy e = { 0 };
				uint64_t t1 = v->t1_ns;
				uint32_t miss;

				if (!t1 || (!all && now - (int64_t)t1 <= t->o.timeout_ns))
					continue;
				miss = expect & ~(v->seen | v->predrop);
				e.flags = v->seen ? 0 : SVTRACE_F_T1_FIRST;
				e.smpcnt = v->smpcnt;
				e.tid1 = v->tid1;
				e.cpu1 = v->cpu1;
				v->t1_ns = 0;	/* free the slot (BPF may race: at worst one frame loses its T1) */
				__atomic_fetch_and(&t->incomplete[i / 64], ~(1ull << (i & 63)), __ATOMIC_RELAXED);
				if (!miss)
					continue;
				e.type = SVTRACE_EV_MISSING;
				e.stream = id;
				e.reason = miss;
				e.t1_ns = t1;
				copy_account(t, &e, SVTRACE_COPY_MISSING_T2A, NULL, NULL, 0, NULL);
			}
		}
	}
}

/* A copy seen at T2a and not taken: missing at T2b, or (at the stop, younger than the timeout) in flight. */
static void track_missing(struct tracer *t, const struct svtrace_track *tp, enum svtrace_copy_outcome oc)
{
	struct svtrace_copy e = { 0 };

	e.type = SVTRACE_EV_TAKEN;
	e.port = (uint8_t)tp->port;
	e.flags = tp->flags | SVTRACE_F_NOT_FREED;
	e.stream = tp->stream;
	e.smpcnt = tp->smpcnt;
	e.vlan_tci = tp->vlan_tci;
	e.t1_ns = tp->t1_ns;
	e.t2a_ns = tp->t2a_ns;
	e.tid1 = tp->tid1;
	e.tid2a = tp->tid2a;
	e.cpu1 = tp->cpu1;
	e.cpu2a = tp->cpu2a;
	copy_account(t, &e, oc, NULL, NULL, 0, NULL);
}

/* An untaken copy passed T2a longer than the timeout ago at @now. */
static bool copy_expired(const struct tracer *t, const struct svtrace_track *tp, int64_t now)
{
	return now - (int64_t)tp->t2a_ns > t->o.timeout_ns;
}

/* An untaken copy at @now: missing once expired, else (only the stop's scan sees those) still in flight. */
static enum svtrace_copy_outcome copy_fate(const struct tracer *t, const struct svtrace_track *tp, int64_t now)
{
	return copy_expired(t, tp, now) ? SVTRACE_COPY_MISSING_T2B : SVTRACE_COPY_IN_FLIGHT_T2B;
}

static void scan_tracked(struct tracer *t, int64_t now, bool all)
{
	static uint64_t keys[SCAN_BATCH];
	uint64_t *prev = NULL;
	struct svtrace_track tp;
	int fd = bpf_map__fd(t->skel->maps.tracked);
	unsigned n = 0;
	uint32_t from = 0, to = t->track_n;

	/* A quarter of the table per pass (a full sweep every 2 s): reading all of it every 500 ms costs
	 * more than the events (~2 MiB of cache lines BPF is writing). The final pass takes all. */
	if (!all && t->track_n >= 4) {
		from = t->scan_cursor;
		to = from + t->track_n / 4;
		t->scan_cursor = to >= t->track_n ? 0 : to;
	}
	/* The direct-mapped array, through mmap: a live copy (svtrace.h: its release word is not its
	 * claim word) is released by a compare-and-exchange of the release word, so a free racing with
	 * the scan wins (a new claim of the slot changes the slot, caught by the copy's check). */
	for (uint32_t i = from; t->track && i < to; i++) {
		volatile struct svtrace_track *v = &t->track[i];
		uint64_t skb = v->skb, rel, cw;
		uint16_t st = v->state;

		if (!skb)	/* never claimed: its release word not read */
			continue;
		rel = t->track_rel[i];
		cw = svtrace_claim_word(skb, st);
		if (rel == cw)
			continue;
		memcpy(&tp, (const void *)v, sizeof(tp));
		if (tp.skb != skb || tp.state != st || (!all && !copy_expired(t, &tp, now)))
			continue;
		if (!__sync_bool_compare_and_swap(&t->track_rel[i], rel, cw))
			continue;
		track_missing(t, &tp, copy_fate(t, &tp, now));
	}
	/* The fallback hash (normally empty). */
	while (n < SCAN_BATCH && !bpf_map_get_next_key(fd, prev, &keys[n])) {
		prev = &keys[n];
		n++;
	}
	for (unsigned i = 0; i < n; i++) {
		if (bpf_map_lookup_elem(fd, &keys[i], &tp))
			continue;
		if (!all && !copy_expired(t, &tp, now))
			continue;
		if (bpf_map_delete_elem(fd, &keys[i]))
			continue;
		__sync_fetch_and_sub(&t->skel->bss->tracked_live, 1);
		track_missing(t, &tp, copy_fate(t, &tp, now));
	}
}

/* ---- the hop log and the in-BPF histograms -> svtrace_corr ---- */

/*
 * The staging histograms of stream @s, allocated the first time it has a log entry (not per copy). A
 * drain touches the histogram lines that the traffic evicted since the last one: one histogram per
 * (stream, port, hop) here, merged into the stream's and the port's at each merge (hists_merge), halves
 * the lines of adding each value to both. NULL if the allocation failed.
 */
static struct hstage *stage_of(struct tracer *t, struct tstream *s)
{
	if (!s->stage)
		s->stage = calloc(t->nports * SVTRACE_HOPS, sizeof(*s->stage));
	return s->stage;
}

/* One value (< SVTRACE_HIST_LIMIT_NS) into a stage. */
static inline void stage_add(struct hstage *g, uint32_t v)
{
	uint32_t i = sv_stats_index(v);

	g->bucket[i]++;
	if (i >= g->top)
		g->top = i + 1;
	if (!g->count++ || v < g->min)
		g->min = v;
	if (v > g->max)
		g->max = v;
	g->sum += v;
}

/* Latencies accounted elsewhere (a stage, a BPF histogram's growth) into the port's and stream @s's hop. */
static void hop_merge(struct tracer *t, const struct tstream *s, unsigned port, unsigned hop,
		      const struct sv_stats *lat)
{
	svtrace_corr_hop_merge(t->corr, -1, port, hop, lat);
	if (s)
		svtrace_corr_hop_merge(t->corr, s->corr, port, hop, lat);
}

/* Adds the staged values to the stream's and the port's statistics (through t->tmp), and empties the
 * stages. */
static void stage_merge(struct tracer *t)
{
	struct sv_stats *st = t->tmp;

	for (uint32_t id = 0; id < t->nids && id < SVTRACE_MAX_STREAMS; id++) {
		struct tstream *s = &t->strm[id];

		if (!s->stage || s->corr < 0)
			continue;
		for (unsigned k = 0; k < t->nports * SVTRACE_HOPS; k++) {
			struct hstage *g = &s->stage[k];

			if (!g->count)
				continue;
			sv_stats_init(st);
			for (uint32_t i = 0; i < g->top; i++)
				st->bucket[i] = g->bucket[i];
			st->top = g->top;
			st->count = g->count;
			st->min = g->min;
			st->max = g->max;
			st->sum_lo = g->sum;
			hop_merge(t, s, k / SVTRACE_HOPS + 1, k % SVTRACE_HOPS, st);
			memset(g->bucket, 0, g->top * sizeof(g->bucket[0]));
			g->count = g->sum = 0;
			g->min = g->max = g->top = 0;
		}
	}
}

/* Reads what every CPU's hop log holds (svtrace.h) into the stages (or, without one, the hop statistics):
 * each entry is a taken copy, accounted as the copy's event would be. */
static void hlog_drain(struct tracer *t)
{
	if (!t->hlog)
		return;
	for (unsigned cpu = 0; cpu < t->hlog_cpus; cpu++) {
		volatile struct svtrace_hlog_pos *hp = &t->hlog_pos[cpu];
		uint64_t head = __atomic_load_n(&hp->head, __ATOMIC_ACQUIRE), tail = hp->tail;

		for (; tail < head; tail++) {
			uint64_t w = t->hlog[(size_t)cpu * t->o.log_entries + (tail & (t->o.log_entries - 1))].w;
			uint32_t d1 = svtrace_hent_d1(w), d2 = svtrace_hent_d2(w), p = svtrace_hent_port(w);
			struct tstream *s = stream_of(t, svtrace_hent_stream(w));
			struct hstage *st;

			if (!s) {
				t->events_svid_filtered++;
				continue;
			}
			/* Values within the stages' range (BPF logs no others; checked, not trusted) */
			if (p >= 1 && p <= t->nports && d2 < SVTRACE_HIST_LIMIT_NS &&
			    (d1 == SVTRACE_HLOG_NO_T1 || d1 + (uint64_t)d2 < SVTRACE_HIST_LIMIT_NS) &&
			    (st = stage_of(t, s))) {
				st += (p - 1) * SVTRACE_HOPS;
				if (d1 != SVTRACE_HLOG_NO_T1) {
					stage_add(&st[SVTRACE_HOP_T1_T2A], d1);
					stage_add(&st[SVTRACE_HOP_T1_T2B], d1 + d2);
				}
				stage_add(&st[SVTRACE_HOP_T2A_T2B], d2);
				continue;
			}
			/* No stage (bad port: counted there; a value out of range; no memory): as the copy's
			 * event would be */
			hop_copy(t, s, p, d1, d2);
		}
		t->hlog_copies += tail - hp->tail;
		__atomic_store_n(&hp->tail, tail, __ATOMIC_RELEASE);
	}
}

/*
 * The growth of BPF histogram @k since the last merge (32-bit buckets: modulo 2^32), as an sv_stats in
 * t->tmp. The buckets are sv_stats' own; each bucket's growth is added at its middle (the sum: BPF keeps
 * none); min/max: the exact running ones where they fall in the delta's first/last bucket, else that
 * bucket's bound.
 * Returns the delta's count.
 */
static uint64_t hist_delta(struct tracer *t, unsigned k)
{
	volatile struct svtrace_hist *c = &t->hist[k];
	struct svtrace_hist *pv = &t->hist_prev[k];
	struct sv_stats *st = t->tmp;
	int64_t cmin = c->nmin ? (int64_t)~c->nmin : -1, cmax = (int64_t)c->max, lo, hi;
	uint32_t first = UINT32_MAX, last = 0;

	sv_stats_init(st);
	for (uint32_t i = 0; i < SVTRACE_HIST_BUCKETS; i++) {
		uint32_t cur = c->bucket[i], d = cur - pv->bucket[i];

		if (!d)
			continue;
		pv->bucket[i] = cur;
		lo = sv_stats_bucket_lo(i);
		sv_stats_add_n(st, lo + (sv_stats_bucket_hi(i) - lo) / 2, d);
		if (first == UINT32_MAX)
			first = i;
		last = i;
	}
	if (!st->count)
		return 0;
	lo = sv_stats_bucket_lo(first);
	st->min = cmin >= lo && cmin <= sv_stats_bucket_hi(first) ? cmin : lo;
	hi = sv_stats_bucket_hi(last);
	st->max = cmax >= sv_stats_bucket_lo(last) && cmax <= hi ? cmax : hi;
	return st->count;
}

/* Adds what BPF accounted since the last call to the stream statistics and, summed, to the port's. */
static void hists_merge(struct tracer *t)
{
	unsigned np = t->nports;

	stage_merge(t);
	if (!t->hist)
		return;
	for (uint32_t id = 0; id < t->nids && id < SVTRACE_MAX_STREAMS; id++) {
		struct tstream *s = stream_of(t, id);

		for (unsigned p = 1; p <= np; p++) {
			for (unsigned h = 0; h < SVTRACE_HOPS; h++) {
				if (!hist_delta(t, (id * np + p - 1) * SVTRACE_HOPS + h))
					continue;
				hop_merge(t, s, p, h, t->tmp);
			}
		}
	}
}

/* ---- output ---- */

static uint64_t counter_sum(struct tracer *t, uint32_t idx)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t vals[1024], sum = 0;

	if (ncpu <= 0 || ncpu > 1024)
		return 0;
	if (bpf_map__lookup_elem(t->skel->maps.counters, &idx, sizeof(idx), vals, sizeof(uint64_t) * ncpu, 0))
		return 0;
	for (int i = 0; i < ncpu; i++)
		sum += vals[i];
	return sum;
}

static void print_live(struct tracer *t)
{
	char line[256];
	struct sv_stats_summary s;

	streams_sync(t);
	hlog_drain(t);
	hists_merge(t);
	fprintf(stderr, "\n%s svtrace: events %" PRIu64 ", lost %" PRIu64 ", streams %u\n", "----",
		t->events, counter_sum(t, SVTRACE_CNT_LOST), svtrace_corr_nstreams(t->corr));
	for (unsigned p = 1; p <= t->nports; p++) {
		for (unsigned h = 0; h < SVTRACE_HOP_NR; h++) {
			const struct svtrace_hop_stats *hs = svtrace_corr_hop_interval(t->corr, p, h);

			sv_stats_summarize(&hs->lat, &s);
			sv_stats_summary_format(&s, line, sizeof(line));
			fprintf(stderr, "%s-%s egress %s: frames %" PRIu64 " missing %" PRIu64 " dropped %" PRIu64
				" %s\n", svtrace_hop_from(h), svtrace_hop_to(h), t->port[p].name, hs->frames,
				hs->missing, hs->dropped, line);
			if (hs->lat.count)
				sv_stats_print_log2(&hs->lat, stderr, 1000, NULL);
		}
	}
	svtrace_corr_interval_reset(t->corr);
}

static void json_hop(struct sv_json *j, struct tracer *t, unsigned p, unsigned h,
		     const struct svtrace_hop_stats *hs)
{
	unsigned nr;
	const struct svtrace_reason_count *rc = svtrace_corr_reasons(t->corr, p, &nr);

	sv_json_object_begin(j);
	sv_json_kv_str(j, "from", svtrace_hop_from(h));
	sv_json_kv_str(j, "to", svtrace_hop_to(h));
	sv_json_kv_str(j, "egress", t->port[p].name);
	sv_json_kv_uint(j, "frames", hs->frames);
	sv_json_kv_uint(j, "missing", hs->missing);
	sv_json_kv_uint(j, "dropped", hs->dropped);
	sv_json_kv_uint(j, "unwanted", hs->unwanted);
	sv_json_kv_uint(j, "in_flight_at_stop", hs->in_flight);
	if (hs->dropped && h != SVTRACE_HOP_T1_T2B) {
		sv_json_key(j, "drop_reasons");
		sv_json_object_begin(j);
		for (unsigned i = 0; i < nr; i++) {
			const char *n = svtrace_drop_reason_name(rc[i].reason);
			char num[24];

			snprintf(num, sizeof(num), "%u", rc[i].reason);
			sv_json_kv_uint(j, n ? n : num, rc[i].count);
		}
		sv_json_object_end(j);
	}
	sv_json_key(j, "latency_ns");
	sv_stats_json(j, &hs->lat);
	sv_json_object_end(j);
}

/* svID_truncated (always) and, when truncated, svID_octets: the length on the wire. */
static void json_svid_trunc(struct sv_json *j, const struct tracer *t, unsigned corr)
{
	bool trunc = corr < SVTRACE_MAX_STREAMS && t->svid_wire_len[corr] > SVTRACE_SVID_MAX;

	sv_json_kv_bool(j, "svID_truncated", trunc);
	if (trunc)
		sv_json_kv_uint(j, "svID_octets", t->svid_wire_len[corr]);
}

static int print_json(struct tracer *t, int64_t elapsed_ns)
{
	const struct svtrace_corr_counters *cc = svtrace_corr_counters(t->corr);
	const struct svtrace_late *late;
	struct sv_json j;
	unsigned nlate;

	sv_json_init(&j, stdout, 0);
	sv_json_object_begin(&j);
	sv_json_kv_str(&j, "tool", "svtrace");
	sv_json_kv_str(&j, "version", SVKIT_VERSION);
	sv_json_kv_double(&j, "duration_s", (double)elapsed_ns / 1e9);
	sv_json_key(&j, "probes");
	sv_json_object_begin(&j);
	sv_json_kv_str(&j, "base", t->attach_mode);
	sv_json_kv_str(&j, "wait", t->wait_from_rq ? "sched_info" : "sched_wakeup");
	sv_json_key(&j, "tracepoints");
	sv_json_array_begin(&j);
	for (unsigned i = 0; i < t->ntracepoints; i++)
		sv_json_string(&j, t->tracepoints[i]);
	sv_json_array_end(&j);
	sv_json_kv_bool(&j, "ovs", t->opt_ovs);
	sv_json_kv_bool(&j, "tun_net_xmit", t->opt_tun);
	sv_json_kv_bool(&j, "dev_direct_xmit", t->opt_direct);
	sv_json_kv_bool(&j, "vhost_handle_rx", t->opt_vhost);
	sv_json_object_end(&j);
	sv_json_kv_uint(&j, "events", t->events);
	sv_json_kv_uint(&j, "events_lost", counter_sum(t, SVTRACE_CNT_LOST));
	sv_json_kv_uint(&j, "parse_errors", counter_sum(t, SVTRACE_CNT_PARSE_ERR));
	sv_json_kv_uint(&j, "frames_walked", counter_sum(t, SVTRACE_CNT_WALKS));
	sv_json_kv_uint(&j, "copies_logged", t->hlog_copies);
	sv_json_kv_uint(&j, "copies_bpf_hist", counter_sum(t, SVTRACE_CNT_AGGREGATED));
	sv_json_kv_uint(&j, "track_collisions", counter_sum(t, SVTRACE_CNT_TRACK_COLL));
	sv_json_kv_uint(&j, "track_full", counter_sum(t, SVTRACE_CNT_TRACK_FULL));
	sv_json_kv_uint(&j, "stale_skbs", counter_sum(t, SVTRACE_CNT_STALE));
	sv_json_kv_uint(&j, "ovs_upcalls_frames", t->upcalls);
	sv_json_kv_uint(&j, "streams_full", counter_sum(t, SVTRACE_CNT_STREAMS_FULL));
	sv_json_kv_uint(&j, "events_filtered", t->events_svid_filtered);
	sv_json_kv_uint(&j, "orphans", cc->orphans);
	sv_json_kv_uint(&j, "evicted_timeout", cc->evicted_timeout);
	sv_json_kv_uint(&j, "evicted_reuse", cc->evicted_reuse);
	sv_json_kv_uint(&j, "evicted_full", cc->evicted_full);
	sv_json_kv_uint(&j, "streams_overflow", cc->streams_overflow);
	sv_json_key(&j, "ports_gone");	/* interfaces away at the end of the run (ports_watch) */
	sv_json_array_begin(&j);
	for (unsigned i = 0; i <= t->nports; i++)
		if (t->port[i].gone)
			sv_json_string(&j, t->port[i].name);
	sv_json_array_end(&j);
	sv_json_key(&j, "ports_recreated");	/* re-created during the run and followed */
	sv_json_array_begin(&j);
	for (unsigned i = 0; i <= t->nports; i++) {
		if (!t->port[i].recreated)
			continue;
		sv_json_object_begin(&j);
		sv_json_kv_str(&j, "name", t->port[i].name);
		sv_json_kv_uint(&j, "times", t->port[i].recreated);
		sv_json_kv_uint(&j, "ifindex", t->port[i].ifindex);
		sv_json_kv_uint(&j, "netns", t->port[i].netns_ino);
		sv_json_object_end(&j);
	}
	sv_json_array_end(&j);
	sv_json_kv_str(&j, "expect", t->o.expect_seen ? "seen" : "all");
	/* --egress all from an Open vSwitch database: which bridge, which datapath */
	sv_json_key(&j, "ovs_bridge");
	if (t->ovs_bridge[0]) {
		sv_json_object_begin(&j);
		sv_json_kv_str(&j, "name", t->ovs_bridge);
		sv_json_kv_str(&j, "datapath", t->ovs_datapath);
		sv_json_object_end(&j);
	} else {
		sv_json_null(&j);
	}
	sv_json_key(&j, "ingress");
	sv_json_object_begin(&j);
	sv_json_kv_str(&j, "name", t->port[0].name);
	sv_json_kv_uint(&j, "ifindex", t->port[0].ifindex);
	sv_json_kv_uint(&j, "netns", t->port[0].netns_ino);
	sv_json_kv_uint(&j, "dropped", counter_sum(t, SVTRACE_CNT_INGRESS_DROP));
	/* freed by the ingress's own stack as unhandled: the copy a user-space switch did not take */
	sv_json_kv_uint(&j, "unhandled", counter_sum(t, SVTRACE_CNT_INGRESS_UNHANDLED));
	sv_json_object_end(&j);
	sv_json_key(&j, "hops");
	sv_json_array_begin(&j);
	for (unsigned p = 1; p <= t->nports; p++)
		for (unsigned h = 0; h < SVTRACE_HOP_NR; h++)
			json_hop(&j, t, p, h, svtrace_corr_hop(t->corr, p, h));
	sv_json_array_end(&j);
	sv_json_key(&j, "streams");
	sv_json_array_begin(&j);
	for (unsigned s = 0; s < svtrace_corr_nstreams(t->corr); s++) {
		const uint8_t *svid;
		size_t len;
		uint16_t appid;
		uint64_t frames;

		svtrace_corr_stream(t->corr, s, &appid, &svid, &len, &frames);
		sv_json_object_begin(&j);
		sv_json_key(&j, "svID");
		sv_json_string_n(&j, (const char *)svid, len);
		json_svid_trunc(&j, t, s);
		sv_json_kv_uint(&j, "appid", appid);
		sv_json_kv_uint(&j, "frames", frames);
		sv_json_key(&j, "hops");
		sv_json_array_begin(&j);
		for (unsigned p = 1; p <= t->nports; p++) {
			for (unsigned h = 0; h < SVTRACE_HOP_NR; h++) {
				const struct svtrace_hop_stats *hs = svtrace_corr_stream_hop(t->corr, s, p, h);

				if (!hs)
					continue;
				sv_json_object_begin(&j);
				sv_json_kv_str(&j, "from", svtrace_hop_from(h));
				sv_json_kv_str(&j, "to", svtrace_hop_to(h));
				sv_json_kv_str(&j, "egress", t->port[p].name);
				sv_json_kv_uint(&j, "frames", hs->frames);
				sv_json_kv_uint(&j, "missing", hs->missing);
				sv_json_kv_uint(&j, "dropped", hs->dropped);
				sv_json_kv_uint(&j, "in_flight_at_stop", hs->in_flight);
				sv_json_key(&j, "latency_ns");
				sv_stats_json(&j, &hs->lat);
				sv_json_object_end(&j);
			}
		}
		sv_json_array_end(&j);
		sv_json_object_end(&j);
	}
	sv_json_array_end(&j);
	svtrace_corr_late_sort(t->corr);
	late = svtrace_corr_late(t->corr, &nlate);
	sv_json_kv_bool(&j, "late_detection", t->o.threshold_ns != 0);
	sv_json_kv_uint(&j, "late_total", cc->late_total);
	sv_json_kv_int(&j, "threshold_ns", t->o.threshold_ns);
	sv_json_key(&j, "late");
	sv_json_array_begin(&j);
	for (unsigned i = 0; i < nlate; i++) {
		const struct svtrace_late *l = &late[i];
		const uint8_t *svid;
		size_t len;
		char hop[16];

		svtrace_corr_stream(t->corr, l->stream, NULL, &svid, &len, NULL);
		snprintf(hop, sizeof(hop), "%s-%s", svtrace_hop_from(l->hop), svtrace_hop_to(l->hop));
		sv_json_object_begin(&j);
		sv_json_key(&j, "svID");
		sv_json_string_n(&j, (const char *)svid, len);
		json_svid_trunc(&j, t, l->stream);
		sv_json_kv_uint(&j, "smpCnt", l->smpcnt);
		sv_json_kv_str(&j, "hop", hop);
		sv_json_kv_str(&j, "egress", t->port[l->port].name);
		sv_json_kv_int(&j, "hop_ns", l->hop_ns);
		sv_json_kv_str(&j, "feeder_thread", l->feeder_comm);
		sv_json_kv_uint(&j, "feeder_tid", l->feeder_tid);
		/* wait_ns: the part of the feeder's wait within the hop; the rest of hop_ns is unexplained */
		sv_json_kv_int(&j, "wait_ns", l->wait_ns);
		sv_json_kv_int(&j, "feeder_wait_ns", l->feeder_wait_ns);
		sv_json_kv_bool(&j, "wait_end_known", l->wait_end_known);
		sv_json_kv_int(&j, "unexplained_ns", l->hop_ns > l->wait_ns ? l->hop_ns - l->wait_ns : 0);
		if (l->holder_comm[0] && l->wait_ns) {
			sv_json_kv_str(&j, "holder_thread", l->holder_comm);
			sv_json_kv_uint(&j, "holder_pid", l->holder_pid);
			sv_json_kv_str(&j, "holder_policy", sv_sched_policy_name(l->holder_policy));
			sv_json_kv_uint(&j, "holder_prio", l->holder_prio);
		} else {
			sv_json_kv_null(&j, "holder_thread");
			sv_json_kv_null(&j, "holder_pid");
			sv_json_kv_null(&j, "holder_policy");
			sv_json_kv_null(&j, "holder_prio");
		}
		/* the thread that carried it from T1 to T2a (a user-space switch's), null when none did */
		if (l->carrier_tid) {
			sv_json_kv_str(&j, "carrier_thread", l->carrier_comm[0] ? l->carrier_comm : NULL);
			sv_json_kv_str(&j, "carrier_role", svtrace_thread_role(l->carrier_comm));
			sv_json_kv_uint(&j, "carrier_tid", l->carrier_tid);
			sv_json_kv_int(&j, "carrier_wait_ns", l->carrier_wait_ns);
			sv_json_kv_int(&j, "carrier_whole_wait_ns", l->carrier_whole_wait_ns);
			if (l->carrier_holder_pid) {
				sv_json_kv_str(&j, "carrier_holder_thread", l->carrier_holder_comm);
				sv_json_kv_uint(&j, "carrier_holder_pid", l->carrier_holder_pid);
				sv_json_kv_str(&j, "carrier_holder_policy", sv_sched_policy_name(l->carrier_holder_policy));
				sv_json_kv_uint(&j, "carrier_holder_prio", l->carrier_holder_prio);
			} else {
				sv_json_kv_null(&j, "carrier_holder_thread");
			}
		} else {
			sv_json_kv_null(&j, "carrier_thread");
		}
		sv_json_object_end(&j);
	}
	sv_json_array_end(&j);
	sv_json_key(&j, "record"); /* what reached the disk: null without --record */
	sv_record_stats_json(&j, t->o.record, t->rec_closed ? &t->rec_st : NULL);
	sv_json_object_end(&j);
	return sv_json_end(&j);
}

/*
 * Every second: is each port still the interface BPF compares against? An interface re-created under
 * the same name (a guest's tap at a VM restart during a soak test, or its namespace replaced) is
 * followed: its new ifindex and namespace inode go into BPF's filter (global data, rewritten in place;
 * netns first, so a frame that sees half the change matches no port), its new ifindex is named in the
 * records, and it is said on stderr. An interface gone (deleted, renamed away, its namespace gone) is
 * said once; its frames count as missing at that port until it comes back. Never silent.
 */
static void ports_watch(struct tracer *t)
{
	uint32_t ino = 0, idx = 0;
	int err = svtrace_netns_ino(t->o.netns, &ino);
	volatile uint32_t *bpf_ifindex = t->skel->data_ports->port_ifindex;
	volatile uint32_t *bpf_netns = t->skel->data_ports->port_netns;

	for (unsigned i = 0; i <= t->nports; i++) {
		struct port_info *p = &t->port[i];
		const char *kind = port_kind(i);

		if (err || svtrace_ifindex(t->o.netns, p->name, &idx)) {
			if (!p->gone)
				fprintf(stderr, "svtrace: %s interface '%s' (ifindex %u) %s: its frames are not followed "
					"until it comes back\n", kind, p->name, p->ifindex,
					err ? "is gone with its network namespace" : "is gone (deleted or renamed)");
			p->gone = true;
			continue;
		}
		if (!p->gone && idx == p->ifindex && ino == p->netns_ino)
			continue;
		fprintf(stderr, "svtrace: %s interface '%s' re-created (ifindex %u -> %u%s): followed\n", kind,
			p->name, p->ifindex, idx, ino != p->netns_ino ? ", in a new network namespace" : "");
		bpf_netns[i] = ino;
		bpf_ifindex[i] = idx;
		p->ifindex = idx;
		p->netns_ino = ino;
		p->gone = false;
		p->recreated++;
		port_name_record(t, i);
	}
}

static void print_summary(struct tracer *t)
{
	char line[256];
	struct sv_stats_summary s;

	char late[64];

	if (t->o.threshold_ns)
		snprintf(late, sizeof(late), "%" PRIu64 " late (> %" PRId64 " us)", svtrace_corr_counters(t->corr)->late_total,
			 t->o.threshold_ns / 1000);
	else
		snprintf(late, sizeof(late), "late detection off");
	fprintf(stderr, "svtrace: %" PRIu64 " events, %" PRIu64 " copies counted in BPF, %" PRIu64 " lost, %u streams, %"
		PRIu64 " parse errors, %s\n", t->events,
		t->hlog_copies + counter_sum(t, SVTRACE_CNT_AGGREGATED), counter_sum(t, SVTRACE_CNT_LOST),
		svtrace_corr_nstreams(t->corr), counter_sum(t, SVTRACE_CNT_PARSE_ERR), late);
	for (unsigned i = 0; i <= t->nports; i++) {
		if (t->port[i].recreated)
			fprintf(stderr, "svtrace: %s interface '%s' was re-created %u time(s) during the run and followed "
				"(%s)\n", port_kind(i), t->port[i].name, t->port[i].recreated,
				i ? "frames toward it while it was away count as missing at it"
				  : "frames that came in while it was away were not seen");
		if (t->port[i].gone)
			fprintf(stderr, "svtrace: %s interface '%s' was away at the end of the run: its counts stop "
				"where it went\n", port_kind(i), t->port[i].name);
	}
	if (counter_sum(t, SVTRACE_CNT_TRACK_COLL) || counter_sum(t, SVTRACE_CNT_TRACK_FULL))
		fprintf(stderr, "svtrace: skb table: %" PRIu64 " slot collisions (overflow table), %" PRIu64
			" copies not tracked (both full: --table)\n", counter_sum(t, SVTRACE_CNT_TRACK_COLL),
			counter_sum(t, SVTRACE_CNT_TRACK_FULL));
	for (unsigned p = 1; p <= t->nports; p++) {
		for (unsigned h = 0; h < SVTRACE_HOP_NR; h++) {
			const struct svtrace_hop_stats *hs = svtrace_corr_hop(t->corr, p, h);

			sv_stats_summarize(&hs->lat, &s);
			sv_stats_summary_format(&s, line, sizeof(line));
			fprintf(stderr, "  %s-%s %-10s frames=%" PRIu64 " missing=%" PRIu64 " dropped=%" PRIu64
				"%s%.0" PRIu64 " %s\n", svtrace_hop_from(h), svtrace_hop_to(h), t->port[p].name,
				hs->frames, hs->missing, hs->dropped, hs->in_flight ? " in_flight_at_stop=" : "",
				hs->in_flight, line);
		}
	}
	if (t->rec_closed) {
		char rl[512];

		sv_record_stats_format(&t->rec_st, rl, sizeof(rl));
		fprintf(stderr, "svtrace: record %s: %s\n", t->o.record, rl);
		if (t->rec_refused)
			fprintf(stderr, "svtrace: record %s: %" PRIu64 " records refused as invalid (a bug: please report)\n",
				t->o.record, t->rec_refused);
	}
}

/* ---- setup ---- */

static void *map_mmap(struct bpf_map *m, size_t *bytes)
{
	long pg = sysconf(_SC_PAGESIZE);
	size_t n = (size_t)bpf_map__value_size(m) * bpf_map__max_entries(m);
	void *p;

	n = (n + (size_t)pg - 1) / (size_t)pg * (size_t)pg;
	p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(m), 0);
	if (p == MAP_FAILED)
		return NULL;
	*bytes = n;
	return p;
}

/* The skb table (timeout scan) and the histograms, read in place. */
static int maps_mmap(struct tracer *t)
{
	struct svtrace_bpf *sk = t->skel;

	t->track = map_mmap(sk->maps.track, &t->track_bytes);
	t->track_rel = map_mmap(sk->maps.track_rel, &t->track_rel_bytes);
	t->incomplete = map_mmap(sk->maps.incomplete, &t->incomplete_bytes);
	if (!t->track || !t->track_rel || !t->incomplete)
		return -errno;
	if (t->o.record)
		return 0;
	t->hist = map_mmap(sk->maps.hist, &t->hist_bytes);
	if (!t->hist)
		return -errno;
	t->hlog = map_mmap(sk->maps.hlog, &t->hlog_bytes);
	t->hlog_pos = map_mmap(sk->maps.hlog_pos, &t->hlog_pos_bytes);
	if (!t->hlog || !t->hlog_pos)
		return -errno;
	t->hlog_cpus = bpf_map__max_entries(sk->maps.hlog_pos);
	/* Allocated once, here: nothing on the event path (pages of streams never seen stay untouched). */
	t->hist_prev = calloc(bpf_map__max_entries(sk->maps.hist), sizeof(*t->hist_prev));
	t->tmp = malloc(sizeof(*t->tmp));
	if (!t->hist_prev || !t->tmp)
		return -ENOMEM;
	return 0;
}

static void maps_unmap(struct tracer *t)
{
	if (t->track)
		munmap((void *)t->track, t->track_bytes);
	if (t->track_rel)
		munmap(t->track_rel, t->track_rel_bytes);
	t->track_rel = NULL;
	if (t->incomplete)
		munmap((void *)t->incomplete, t->incomplete_bytes);
	t->incomplete = NULL;
	if (t->hist)
		munmap((void *)t->hist, t->hist_bytes);
	if (t->hlog)
		munmap((void *)t->hlog, t->hlog_bytes);
	if (t->hlog_pos)
		munmap((void *)t->hlog_pos, t->hlog_pos_bytes);
	t->hlog = NULL;
	t->hlog_pos = NULL;
	free(t->hist_prev);
	free(t->tmp);
	t->track = NULL;
	t->hist = NULL;
}

static void choose_programs(struct tracer *t)
{
	struct svtrace_bpf *sk = t->skel;
	bool btf = !t->o.raw_tp && svtrace_have_vmlinux_btf();
	struct bpf_program *btf_progs[] = { sk->progs.btf_netif_receive_skb, sk->progs.btf_net_dev_start_xmit,
					    sk->progs.btf_consume_skb, sk->progs.btf_kfree_skb,
					    sk->progs.btf_sched_wakeup, sk->progs.btf_sched_switch };
	struct bpf_program *raw_progs[] = { sk->progs.raw_netif_receive_skb, sk->progs.raw_net_dev_start_xmit,
					    sk->progs.raw_consume_skb, sk->progs.raw_kfree_skb,
					    sk->progs.raw_sched_wakeup, sk->progs.raw_sched_switch };

	for (unsigned i = 0; i < sizeof(btf_progs) / sizeof(btf_progs[0]); i++) {
		bpf_program__set_autoload(btf_progs[i], btf);
		bpf_program__set_autoload(raw_progs[i], !btf);
	}
	/* The scheduler's own stamps (task sched_info, the run queue's clock) make sched_wakeup
	 * unnecessary: one hook fewer on every wake-up of the machine, and no CPU writing another's line. */
	t->wait_from_rq = !t->o.sched_wakeup && svtrace_have_sched_info();
	if (t->wait_from_rq) {
		bpf_program__set_autoload(sk->progs.btf_sched_wakeup, false);
		bpf_program__set_autoload(sk->progs.raw_sched_wakeup, false);
	}
	t->attach_mode = btf ? "tp_btf" : "raw_tp";
	/* whether T2a runs for an interrupt, not for the thread it interrupted (a carrier is a thread) */
	t->preempt_from_rq = svtrace_preempt_from_rq();
	/* Optional: present only with the module loaded / the symbol in the kernel. */
	t->opt_ovs = svtrace_have_tracepoint("openvswitch", "ovs_dp_upcall", "openvswitch");
	if (!t->opt_ovs)
		snprintf(t->opt_ovs_why, sizeof(t->opt_ovs_why), "openvswitch tracepoints absent");
	bpf_program__set_autoload(sk->progs.ovs_dp_upcall, t->opt_ovs);
	bpf_program__set_autoload(sk->progs.ovs_do_execute_action,
				  t->opt_ovs && svtrace_have_tracepoint("openvswitch", "ovs_do_execute_action",
									"openvswitch"));
	t->opt_tun = svtrace_have_ksym("tun_net_xmit");
	if (!t->opt_tun)
		snprintf(t->opt_tun_why, sizeof(t->opt_tun_why), "tun_net_xmit not in kallsyms (tun not loaded)");
	bpf_program__set_autoload(sk->progs.kp_tun_net_xmit, t->opt_tun);
	/* T2a of AF_XDP copy-mode transmits (Open vSwitch afxdp ports) and PACKET_QDISC_BYPASS sockets */
	{
		int err = svtrace_fentry_probe("__dev_direct_xmit");

		t->opt_direct = !err;
		if (err)
			snprintf(t->opt_direct_why, sizeof(t->opt_direct_why), "fentry %s: %s",
				 err == -ENOENT ? "target not in the kernel's BTF" : "refused by this kernel",
				 strerror(-err));
	}
	bpf_program__set_autoload(sk->progs.fe_dev_direct_xmit, t->opt_direct);
	t->opt_vhost = svtrace_have_ksym("handle_rx");
	if (!t->opt_vhost)
		snprintf(t->opt_vhost_why, sizeof(t->opt_vhost_why), "handle_rx not in kallsyms (vhost_net not loaded)");
	bpf_program__set_autoload(sk->progs.kp_vhost_handle_rx, t->opt_vhost);
}

static int open_and_load(struct tracer *t)
{
	unsigned ncpu = (unsigned)libbpf_num_possible_cpus();	/* per-CPU hop logs and positions */
	struct svtrace_bpf *sk;
	int err;

	for (int attempt = 0; attempt < 2; attempt++) {
		sk = svtrace_bpf__open();
		if (!sk)
			return -errno;
		t->skel = sk;
		choose_programs(t);
		if (attempt) {
			/* First load failed with optional programs: they are what this kernel refuses. */
			t->opt_ovs = t->opt_tun = t->opt_vhost = t->opt_direct = false;
			snprintf(t->opt_direct_why, sizeof(t->opt_direct_why), "load failed");
			bpf_program__set_autoload(sk->progs.fe_dev_direct_xmit, false);
			snprintf(t->opt_ovs_why, sizeof(t->opt_ovs_why), "load failed");
			snprintf(t->opt_tun_why, sizeof(t->opt_tun_why), "load failed");
			snprintf(t->opt_vhost_why, sizeof(t->opt_vhost_why), "load failed");
			bpf_program__set_autoload(sk->progs.ovs_dp_upcall, false);
			bpf_program__set_autoload(sk->progs.ovs_do_execute_action, false);
			bpf_program__set_autoload(sk->progs.kp_tun_net_xmit, false);
			bpf_program__set_autoload(sk->progs.kp_vhost_handle_rx, false);
		}
		sk->rodata->appid_filter = t->o.appid;
		sk->rodata->stale_ns = (uint64_t)t->o.timeout_ns;
		sk->rodata->late_ns = (uint64_t)t->o.threshold_ns;
		/* waits long enough to matter for a late frame get their end stamped (rare switches) */
		sk->rodata->wait_stamp_ns = t->o.threshold_ns ? (uint64_t)t->o.threshold_ns / 8 + 1 : 0;
		/* The interface filter, compared inline in BPF (port 0 = ingress). */
		sk->rodata->nr_ports = t->nports + 1;
		for (unsigned i = 0; i <= t->nports; i++) {
			sk->data_ports->port_ifindex[i] = t->port[i].ifindex;
			sk->data_ports->port_netns[i] = t->port[i].netns_ino;
		}
		sk->rodata->all_ports = t->all_ports;
		sk->rodata->learn_ports = t->o.expect_seen;
		sk->rodata->preempt_from_rq = t->preempt_from_rq;
		{
			int64_t r = svtrace_drop_reason_value("UNHANDLED_PROTO");

			sk->rodata->reason_unhandled = r >= 0 ? (uint32_t)r : ~0u;
		}
		/* Direct-mapped skb table: a power of two; the fallback hash an eighth of it. */
		t->track_n = 1024;
		while (t->track_n < t->o.table)
			t->track_n <<= 1;
		bpf_map__set_max_entries(sk->maps.track, t->track_n);
		bpf_map__set_max_entries(sk->maps.track_claim, t->track_n);
		bpf_map__set_max_entries(sk->maps.track_rel, t->track_n);
		sk->rodata->track_mask = t->track_n - 1;
		bpf_map__set_max_entries(sk->maps.tracked, t->track_n / 8);
		/* Histograms per (stream, egress port, hop); --record: every copy is an event (records are
		 * per frame), the histograms stay unused (one entry). */
		sk->rodata->per_frame = t->o.record ? 1 : 0;
		if (!t->o.record) {
			bpf_map__set_max_entries(sk->maps.hist, SVTRACE_MAX_STREAMS * t->nports * SVTRACE_HOPS);
			/* the hop log: one ring per possible CPU */
			bpf_map__set_max_entries(sk->maps.hlog, ncpu * t->o.log_entries);
			sk->rodata->hlog_mask = t->o.log_entries - 1;
		}
		/* one position per possible CPU, with or without a log: the programs' per-CPU hot words live
		 * there (svtrace.bpf.c, struct sv_cpu_hot) */
		bpf_map__set_max_entries(sk->maps.hlog_pos, ncpu);
		if (t->o.svid) {
			size_t kept = strlen(t->o.svid) > SVTRACE_SVID_MAX ? SVTRACE_SVID_MAX : strlen(t->o.svid);

			/* the length on the wire and the octets BPF keeps (stream_first checks the same) */
			sk->rodata->svid_filter_len = (uint32_t)strlen(t->o.svid);
			memcpy((void *)sk->rodata->svid_filter, t->o.svid, kept);
		}
		sk->rodata->nr_cpus = ncpu;
		sk->rodata->wait_from_rq = t->wait_from_rq;
		bpf_map__set_max_entries(sk->maps.events, t->o.ringbuf_bytes);
		/* A refusal caused by an optional program is retried without them: stay quiet the first time. */
		libbpf_quiet = !attempt && (t->opt_ovs || t->opt_tun || t->opt_vhost || t->opt_direct);
		err = svtrace_bpf__load(sk);
		libbpf_quiet = false;
		if (!err)
			return 0;
		svtrace_bpf__destroy(sk);
		t->skel = NULL;
		if (!t->opt_ovs && !t->opt_tun && !t->opt_vhost && !t->opt_direct)
			return err;
	}
	return err;
}

static int attach_all(struct tracer *t)
{
	struct bpf_object *obj = t->skel->obj;
	struct bpf_program *prog;
	struct bpf_link *link;

	bpf_object__for_each_program(prog, obj) {
		const char *name = bpf_program__name(prog);
		bool optional = !strncmp(name, "ovs_", 4) || !strncmp(name, "kp_", 3) || !strncmp(name, "fe_", 3);

		if (!bpf_program__autoload(prog))
			continue;
		libbpf_quiet = optional;
		link = bpf_program__attach(prog);
		libbpf_quiet = false;
		if (!link) {
			int err = -errno;

			if (!optional) {
				fprintf(stderr, "svtrace: cannot attach %s: %s\n", name, strerror(-err));
				return err;
			}
			/* kprobes/fentry refused (lockdown, no kprobe support): say so, go on without. */
			if (!strcmp(name, "fe_dev_direct_xmit")) {
				t->opt_direct = false;
				snprintf(t->opt_direct_why, sizeof(t->opt_direct_why), "attach failed: %s",
					 strerror(-err));
			} else if (!strcmp(name, "kp_tun_net_xmit")) {
				t->opt_tun = false;
				snprintf(t->opt_tun_why, sizeof(t->opt_tun_why), "attach failed: %s", strerror(-err));
			} else if (!strcmp(name, "kp_vhost_handle_rx")) {
				t->opt_vhost = false;
				snprintf(t->opt_vhost_why, sizeof(t->opt_vhost_why), "attach failed: %s",
					 strerror(-err));
			} else {
				t->opt_ovs = false;
				snprintf(t->opt_ovs_why, sizeof(t->opt_ovs_why), "attach failed: %s", strerror(-err));
			}
			continue;
		}
		if (t->nlinks < sizeof(t->links) / sizeof(t->links[0])) {
			const char *sec = bpf_program__section_name(prog);

			t->link_prog[t->nlinks] = name;
			t->links[t->nlinks++] = link;
			/* tp_btf/NAME or raw_tp/NAME (kprobes are not tracepoints) */
			if (!strncmp(sec, "tp_btf/", 7) || !strncmp(sec, "raw_tp/", 7))
				t->tracepoints[t->ntracepoints++] = strchr(sec, '/') + 1;
		} else {
			bpf_link__destroy(link);
		}
	}
	return 0;
}

static void detach_all(struct tracer *t)
{
	while (t->nlinks)
		bpf_link__destroy(t->links[--t->nlinks]);
}

/* Detaches the programs whose name ends with @suffix ("netif_receive_skb": T1). */
static void detach_named(struct tracer *t, const char *suffix)
{
	size_t ls = strlen(suffix);

	for (unsigned i = 0; i < t->nlinks;) {
		const char *name = t->link_prog[i];
		size_t ln = name ? strlen(name) : 0;

		if (ln >= ls && !strcmp(name + ln - ls, suffix)) {
			bpf_link__destroy(t->links[i]);
			t->nlinks--;
			t->links[i] = t->links[t->nlinks];
			t->link_prog[i] = t->link_prog[t->nlinks];
			continue;
		}
		i++;
	}
}

/* Drains the ring and the hop logs for @ns. */
static void drain_for(struct tracer *t, int64_t ns)
{
	int64_t end = mono_now() + ns;

	do {
		ring_buffer__poll(t->rb, 5);
		hlog_drain(t);
	} while (mono_now() < end);
}

/*
 * A clean stop while frames flow: no frame T1 saw is lost by the stop itself. T1 first (BPF then
 * ignores copies at T2a without a T1: frames that came in after the end); its frames get
 * STOP_GRACE_NS to reach T2a (the bridge forwards them within microseconds); then T2a; the copies get
 * STOP_DRAIN_NS to be taken; then the rest. What is still open after that is resolved by the caller:
 * frames without T2a on a port are missing there; copies not taken are missing when older than
 * --timeout-ms, else in flight at the stop (counted apart).
 */
static void stop_tracing(struct tracer *t)
{
	t->skel->bss->stopping = 1;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	detach_named(t, "netif_receive_skb");
	drain_for(t, STOP_GRACE_NS);
	detach_named(t, "net_dev_start_xmit");
	detach_named(t, "dev_direct_xmit");	/* the other T2a (kprobe) */
	drain_for(t, STOP_DRAIN_NS);
	detach_all(t);
	ring_buffer__consume(t->rb);
	hlog_drain(t);
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
	libbpf_set_print(libbpf_print);
	libbpf_verbose = t.o.verbose;
	if (ports_parse(&t))
		return SV_EXIT_USAGE;
	if (svtrace_check_caps(missing, sizeof(missing))) {
		fprintf(stderr, "svtrace: missing privileges: %s (run as root, or setcap cap_bpf,cap_perfmon+ep)\n",
			missing);
		return SV_EXIT_RUNTIME;
	}
	err = resolve_ports(&t);
	if (err)
		return err == -EINVAL ? SV_EXIT_USAGE : SV_EXIT_RUNTIME;
	if (setup_stopped("before set-up"))
		return SV_EXIT_OK;
	for (unsigned i = 0; i < SVTRACE_MAX_STREAMS; i++)
		t.strm[i].corr = -1;
	for (unsigned p = 1; p <= t.nports; p++)
		t.all_ports |= 1u << p;
	/* The frame table of svtrace_corr is not used: frames are correlated in BPF (svtrace_corr_copy). */
	cc = (struct svtrace_corr_cfg){ .nports = t.nports, .capacity = 16, .timeout_ns = t.o.timeout_ns,
					.late_ns = t.o.threshold_ns, .late_max = 256, .max_streams = 256,
					.no_interval = !t.o.live, .on_late = on_late, .ctx = &t };
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
	if (t.o.record && rec_open(&t))
		goto out_corr;
	/* from here a stop during set-up still ends the record well (END) */
	if (setup_stopped("during set-up")) {
		ret = SV_EXIT_OK;
		goto out_rec;
	}
	err = open_and_load(&t);
	if (err) {
		fprintf(stderr, "svtrace: cannot load the BPF programs: %s%s\n", strerror(-err),
			err == -EPERM ? " (CAP_BPF/CAP_PERFMON, or kernel.unprivileged_bpf_disabled)" : "");
		goto out_rec;
	}
	if (setup_stopped("while the BPF programs loaded")) {
		ret = SV_EXIT_OK;
		goto out_skel;
	}
	t.inflight_bytes = (size_t)bpf_map__value_size(t.skel->maps.inflight) *
			   bpf_map__max_entries(t.skel->maps.inflight);
	t.inflight = mmap(NULL, t.inflight_bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
			  bpf_map__fd(t.skel->maps.inflight), 0);
	if (t.inflight == MAP_FAILED) {
		t.inflight = NULL;
		fprintf(stderr, "svtrace: warning: cannot map the frame table (%s): frames that never reach "
			"T2a are only counted when their slot is reused\n", strerror(errno));
	}
	err = maps_mmap(&t);
	if (err) {
		fprintf(stderr, "svtrace: cannot map the BPF tables: %s\n", strerror(-err));
		goto out_skel;
	}
	t.rb = ring_buffer__new(bpf_map__fd(t.skel->maps.events), handle_event, &t, NULL);
	if (!t.rb) {
		fprintf(stderr, "svtrace: ring buffer: %s\n", strerror(errno));
		goto out_skel;
	}
	err = attach_all(&t);
	if (err) {
		fprintf(stderr, "svtrace: setup failed: %s\n", strerror(-err));
		goto out_rb;
	}
	fprintf(stderr, "svtrace: probes: base %s (net, skb, sched tracepoints): on; feeders' waits from %s\n",
		t.attach_mode, t.wait_from_rq ? "sched_info and the run-queue clock (sched_wakeup not needed)" :
		"sched_wakeup");
	fprintf(stderr, "svtrace: tracepoints:");
	for (unsigned i = 0; i < t.ntracepoints; i++)
		fprintf(stderr, " %s", t.tracepoints[i]);
	fputc('\n', stderr);
	fprintf(stderr, "svtrace: probe openvswitch: %s%s%s\n", t.opt_ovs ? "on" : "off (",
		t.opt_ovs ? "" : t.opt_ovs_why, t.opt_ovs ? "" : ")");
	fprintf(stderr, "svtrace: probe kprobe tun_net_xmit: %s%s%s\n", t.opt_tun ? "on" : "off (",
		t.opt_tun ? "" : t.opt_tun_why, t.opt_tun ? "" : ")");
	fprintf(stderr, "svtrace: probe fentry __dev_direct_xmit (T2a of AF_XDP copy-mode transmits): %s%s%s\n",
		t.opt_direct ? "on" : "off (", t.opt_direct ? "" : t.opt_direct_why, t.opt_direct ? "" : ")");
	fprintf(stderr, "svtrace: probe kprobe vhost handle_rx: %s%s%s\n", t.opt_vhost ? "on" : "off (",
		t.opt_vhost ? "" : t.opt_vhost_why, t.opt_vhost ? "" : ")");
	if (!t.o.threshold_ns)
		fprintf(stderr, "svtrace: late detection off (--threshold-us 0)\n");
	fprintf(stderr, "svtrace: ingress %s (ifindex %u), %u egress, netns inode %u; ring %u KiB; tracing...\n",
		t.port[0].name, t.port[0].ifindex, t.nports, t.port[0].netns_ino, t.o.ringbuf_bytes / 1024);
	{
		char status[96];

		/* the programs are attached: READY=1, the ready file (sv_ready.h) */
		snprintf(status, sizeof(status), "tracing %s and %u egress", t.port[0].name, t.nports);
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
		err = ring_buffer__poll(t.rb, t.o.record ? 10 : 200);
		if (err < 0 && err != -EINTR) {
			fprintf(stderr, "svtrace: ring buffer poll: %s\n", strerror(-err));
			break;
		}
		ring_buffer__consume(t.rb);
		hlog_drain(&t);
		now = mono_now();
		sv_record_tick(t.rec, now); /* the record's time bounds: a syscall only when one is due */
		if (now - t.t_last_expire >= 500 * SV_NSEC_PER_MSEC) {
			streams_sync(&t);
			scan_inflight(&t, now, false);
			scan_tracked(&t, now, false);
			t.t_last_expire = now;
		}
		/* 32-bit BPF buckets: take their growth long before one can wrap */
		if (now - t.t_last_merge >= SVTRACE_HIST_MERGE_S * SV_NSEC_PER_SEC) {
			streams_sync(&t);
			hists_merge(&t);
			t.t_last_merge = now;
		}
		if (t.o.live && now - t.t_last_live >= t.o.interval_ns) {
			print_live(&t);
			t.t_last_live = now;
		}
		if (now - t.t_last_ports >= SV_NSEC_PER_SEC) {
			ports_watch(&t);
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
	stop_tracing(&t);
	streams_sync(&t);
	hists_merge(&t);
	scan_inflight(&t, mono_now(), true);
	scan_tracked(&t, mono_now(), true);
	rec_summaries(&t, now);
	if (t.rec) {
		/* the last block and END now, so that the summaries say what reached the disk */
		err = sv_record_writer_close_stats(t.rec, &t.rec_st);
		t.rec = NULL;
		t.rec_closed = true;
		if (err)
			fprintf(stderr, "svtrace: record file '%s': %s\n", t.o.record, strerror(-err));
		if (err || sv_record_stats_incomplete(&t.rec_st))
			ret = SV_EXIT_RUNTIME;
	}
	print_summary(&t);
	if (t.o.json && print_json(&t, now - t.t_start_mono)) {
		fprintf(stderr, "svtrace: JSON output failed\n");
		ret = SV_EXIT_RUNTIME;
	}
out_rb:
	ring_buffer__free(t.rb);
out_skel:
	detach_all(&t);
	if (t.inflight)
		munmap((void *)t.inflight, t.inflight_bytes);
	maps_unmap(&t);
	svtrace_bpf__destroy(t.skel);
out_rec:
	if (t.rec) {
		err = sv_record_writer_close(t.rec);
		if (err) {
			fprintf(stderr, "svtrace: record file '%s': %s\n", t.o.record, strerror(-err));
			ret = SV_EXIT_RUNTIME;
		}
	}
out_corr:
	svtrace_corr_free(t.corr);
	for (unsigned i = 0; i < SVTRACE_MAX_STREAMS; i++)
		free(t.strm[i].stage);
	svtrace_drop_reasons_free();
	return ret;
}

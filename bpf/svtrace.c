// SPDX-License-Identifier: Apache-2.0
/*
 * svtrace: follows every SV frame through the hypervisor with eBPF (bpf/svtrace.bpf.c) and reports
 * per-hop latency (T1 ingress -> T2a egress -> T2b taken by the guest's feeder), missing and dropped
 * frames with the kernel's reason, and for late frames which thread held the feeder's CPU.
 */
#include <errno.h>
#include <getopt.h>
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

#include "sv_clock.h"
#include "sv_codec.h"
#include "sv_json.h"
#include "sv_log.h"
#include "sv_record.h"
#include "sv_stats.h"
#include "svtrace.h"
#include "svtrace_corr.h"
#include "svtrace_events.h"
#include "svtrace_hlog.h"
#include "svtrace_out.h"
#include "svtrace_ports.h"
#include "svtrace_rec.h"
#include "svtrace_scan.h"
#include "svtrace_setup.h"
#include "svtrace_streams.h"
#include "svtrace_sys.h"

#define MAX_EGRESS SVTRACE_PORTS_MAX_EGRESS

/* Exit codes (README): 0 success (also a stop by signal), 1 run-time failure, 2 usage error. */
#define EXIT_RUNTIME 1
#define EXIT_USAGE 2
_Static_assert(MAX_EGRESS == 15, "the help and the man page say at most 15 egress interfaces");

struct opts {
	const char *ingress;
	char *egress_arg;
	const char *netns;
	const char *record;
	const char *svid;
	const char *ovsdb;		/* --ovsdb: the Open vSwitch database asked by --egress all */
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
	int64_t t_start_mono, t_last_expire, t_last_live, t_last_merge, t_last_ports;
};

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: svtrace --ingress IF --egress IF[,IF...]|all [options]\n"
"Follows every IEC 61850-9-2 SV frame through this host with eBPF tracepoints: T1 ingress ->\n"
"T2a egress toward each guest -> T2b taken by the guest's feeder thread (or dropped, with the kernel's\n"
"reason), with per-hop latency histograms and, for late frames, which thread held the feeder's CPU.\n"
"\n"
"  -i, --ingress IF          ingress interface (NIC, or the lab's uplink veth)\n"
"  -e, --egress LIST         egress interfaces toward the guests (tap, vnet, veth), comma-separated, or\n"
"                            'all' (every interface of the namespace but the ingress, lo and\n"
"                            bridge/bond/team/OVS masters, listed on stderr; on an Open vSwitch\n"
"                            bridge, its ports but the internal one, from the database); at most 15\n"
"      --ovsdb unix:PATH     the Open vSwitch database --egress all asks (default: $OVS_RUNDIR/db.sock,\n"
"                            else /var/run/openvswitch/db.sock, when the socket exists)\n"
"      --expect all|seen     the streams each egress port must carry: all (default: a bridge floods SV\n"
"                            multicast), or seen: those it carried once (per-stream flows, as on Open\n"
"                            vSwitch); a frame of an expected stream that never reaches the port is\n"
"                            missing there\n"
"  -n, --netns NAME          the interfaces live in network namespace NAME (ip netns), default ours\n"
"  -d, --duration S          stop after S seconds (default: run until SIGINT/SIGTERM)\n"
"  -l, --live                print a histogram per hop to stderr every interval\n"
"  -I, --interval S          live interval in seconds (default 1)\n"
"  -r, --record FILE         write per-frame records (svkit record format, TAI clock) to FILE\n"
"      --record-size MIB     start a new part of the record every MIB MiB (default " SV_REC_SIZE_MIB_DEFAULT "; 0 never):\n"
"                            FILE is the newest, FILE.1 the one before it, and so on\n"
"      --record-keep N|all   rotated parts kept besides FILE, the oldest deleted first (default " SV_REC_KEEP_DEFAULT ";\n"
"                            8 x 4000 frames/s to two guests write about 35 GB an hour; all: only the\n"
"                            free-space floor deletes)\n"
"      --record-flush-ms MS  a partial block is written once its records waited MS (default " SV_REC_FLUSH_MS_DEFAULT ";\n"
"                            0 = only full blocks): a killed svtrace loses at most that\n"
"      --record-sync-ms MS   fdatasync the record every MS (default " SV_REC_SYNC_MS_DEFAULT ": never), for a host that\n"
"                            may lose power\n"
"      --record-min-free MIB free-space floor of the record's filesystem (default " SV_REC_MIN_FREE_MIB_DEFAULT "; 0 none):\n"
"                            below it the run's oldest parts are deleted, then blocks held back. A full\n"
"                            disk never stops tracing: blocks that cannot be written are counted (summary,\n"
"                            --json record, the file's UNWRITTEN and END records), later ones are tried\n"
"  -j, --json                print the final summary as one JSON object on stdout\n"
"  -t, --threshold-us N      frames with T1->T2b above N us are late and attributed (default 1000;\n"
"                            0: late detection off)\n"
"  -a, --appid X             only this APPID (0x4000 or 16384)\n"
"  -s, --svid S              only this svID (exact match, 1 to 129 characters; BPF keeps 64 octets:\n"
"                            longer svIDs are matched on those and their length, and reported)\n"
"      --timeout-ms N        incomplete frames older than N ms count as missing (default 1500)\n"
"      --ringbuf-kb N        BPF ring buffer size, power of two >= 4 (default 8192)\n"
"      --table N             frame copies tracked between T2a and T2b at once (default 32768)\n"
"      --log-entries N       hop log entries per CPU, a power of two >= 64 (default 16384)\n"
"      --raw-tp              use raw_tp even where tp_btf is available\n"
"      --sched-wakeup        time feeders' waits with sched_wakeup even where the scheduler's run-queue\n"
"                            stamps are available (the default takes them from sched_info)\n"
"  -v, --verbose             libbpf and debug messages\n"
"  -h, --help                this help\n"
"  -V, --version             print the version\n"
"\n"
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
"  svtrace -i enp1s0 -e all --expect seen -d 3600 -r /var/log/svtrace.rec\n");
}

static int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	if (!s || !*s || *s == '-')
		return -EINVAL;
	v = strtoull(s, &end, 0);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	enum { OPT_TIMEOUT = 256, OPT_RINGBUF, OPT_TABLE, OPT_RAWTP, OPT_LOG, OPT_WAKEUP, OPT_RSIZE, OPT_RKEEP,
	       OPT_RFLUSH, OPT_RSYNC, OPT_RFREE, OPT_OVSDB, OPT_EXPECT };
	static const struct option lo[] = {
		{ "ingress", required_argument, NULL, 'i' },
		{ "egress", required_argument, NULL, 'e' },
		{ "netns", required_argument, NULL, 'n' },
		{ "duration", required_argument, NULL, 'd' },
		{ "live", no_argument, NULL, 'l' },
		{ "interval", required_argument, NULL, 'I' },
		{ "record", required_argument, NULL, 'r' },
		{ "record-size", required_argument, NULL, OPT_RSIZE },
		{ "record-keep", required_argument, NULL, OPT_RKEEP },
		{ "record-flush-ms", required_argument, NULL, OPT_RFLUSH },
		{ "record-sync-ms", required_argument, NULL, OPT_RSYNC },
		{ "record-min-free", required_argument, NULL, OPT_RFREE },
		{ "json", no_argument, NULL, 'j' },
		{ "threshold-us", required_argument, NULL, 't' },
		{ "appid", required_argument, NULL, 'a' },
		{ "svid", required_argument, NULL, 's' },
		{ "timeout-ms", required_argument, NULL, OPT_TIMEOUT },
		{ "ringbuf-kb", required_argument, NULL, OPT_RINGBUF },
		{ "table", required_argument, NULL, OPT_TABLE },
		{ "log-entries", required_argument, NULL, OPT_LOG },
		{ "raw-tp", no_argument, NULL, OPT_RAWTP },
		{ "sched-wakeup", no_argument, NULL, OPT_WAKEUP },
		{ "ovsdb", required_argument, NULL, OPT_OVSDB },
		{ "expect", required_argument, NULL, OPT_EXPECT },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	const char *want = "";	/* what the option takes, for the error */
	bool rotation = false;	/* a --record-* option given */
	uint64_t v;
	int c;

	*o = (struct opts){ .threshold_ns = 1000000, .interval_ns = SV_NSEC_PER_SEC,
			    .timeout_ns = 1500 * SV_NSEC_PER_MSEC, .ringbuf_bytes = 8u << 20, .table = 32768,
			    .log_entries = SVTRACE_HLOG_ENTRIES };
	sv_record_opts_default(&o->rec);
	while ((c = getopt_long(argc, argv, "i:e:n:d:lI:r:jt:a:s:vhV", lo, NULL)) != -1) {
		switch (c) {
		case 'i':
			o->ingress = optarg;
			break;
		case 'e':
			o->egress_arg = optarg;
			break;
		case 'n':
			o->netns = optarg;
			break;
		case 'd':
			want = "seconds, 1 or more";
			if (parse_u64(optarg, 1, 100u * 365 * 86400, &v))
				goto bad;
			o->duration_ns = (int64_t)v * SV_NSEC_PER_SEC;
			break;
		case 'l':
			o->live = true;
			break;
		case 'I':
			want = "seconds, 1 to 3600";
			if (parse_u64(optarg, 1, 3600, &v))
				goto bad;
			o->interval_ns = (int64_t)v * SV_NSEC_PER_SEC;
			break;
		case 'r':
			o->record = optarg;
			break;
		case OPT_RSIZE:
			want = "MiB, 0 (one file) or 1 to 1048576";
			if (parse_u64(optarg, 0, 1u << 20, &v))
				goto bad;
			o->rec.size_mib = (uint32_t)v;
			rotation = true;
			break;
		case OPT_RKEEP: {
			uint32_t keep;

			want = SV_REC_KEEP_SYNTAX;
			if (sv_record_parse_keep(optarg, &keep))
				goto bad;
			o->rec.keep = optarg;
			rotation = true;
			break;
		}
		case OPT_RFLUSH:
		case OPT_RSYNC:
			want = "milliseconds, 0 to 3600000";
			if (parse_u64(optarg, 0, c == OPT_RFLUSH ? SV_REC_FLUSH_MS_MAX : SV_REC_SYNC_MS_MAX, &v))
				goto bad;
			*(c == OPT_RFLUSH ? &o->rec.flush_ms : &o->rec.sync_ms) = (uint32_t)v;
			rotation = true;
			break;
		case OPT_RFREE:
			want = "MiB, 0 to 16777216";
			if (parse_u64(optarg, 0, SV_REC_MIN_FREE_MIB_MAX, &v))
				goto bad;
			o->rec.min_free_mib = (uint32_t)v;
			rotation = true;
			break;
		case 'j':
			o->json = true;
			break;
		case 't':
			want = "microseconds, 0 to 60000000";
			if (parse_u64(optarg, 0, 60000000, &v))
				goto bad;
			o->threshold_ns = (int64_t)v * SV_NSEC_PER_USEC;
			break;
		case 'a':
			want = "1 to 0xFFFF";
			if (parse_u64(optarg, 1, 0xFFFF, &v))
				goto bad;
			o->appid = (uint32_t)v;
			break;
		case 's':
			want = "1 to 129 characters (IEC 61850-9-2 svID)";
			if (!*optarg || strlen(optarg) > SV_MAX_ID_LEN)
				goto bad;
			o->svid = optarg;
			break;
		case OPT_TIMEOUT:
			want = "milliseconds, 10 to 60000";
			if (parse_u64(optarg, 10, 60000, &v))
				goto bad;
			o->timeout_ns = (int64_t)v * SV_NSEC_PER_MSEC;
			break;
		case OPT_RINGBUF:
			want = "a power of two from 4 to 1048576";
			if (parse_u64(optarg, 4, 1u << 20, &v) || (v & (v - 1)))
				goto bad;
			o->ringbuf_bytes = (uint32_t)v * 1024;
			break;
		case OPT_TABLE:
			want = "1024 to 16777216";
			if (parse_u64(optarg, 1024, 1u << 24, &v))
				goto bad;
			o->table = (uint32_t)v;
			break;
		case OPT_LOG:
			want = "a power of two from 64 to 1048576";
			if (parse_u64(optarg, 64, 1u << 20, &v) || (v & (v - 1)))
				goto bad;
			o->log_entries = (uint32_t)v;
			break;
		case OPT_WAKEUP:
			o->sched_wakeup = true;
			break;
		case OPT_RAWTP:
			o->raw_tp = true;
			break;
		case OPT_OVSDB:
			want = "unix:PATH (the database's socket, as ovs-vsctl --db)";
			if (strncmp(optarg, "unix:", 5) || !optarg[5] || strlen(optarg) - 5 >= 108)
				goto bad;
			o->ovsdb = optarg;
			break;
		case OPT_EXPECT:
			want = "all or seen";
			if (strcmp(optarg, "all") && strcmp(optarg, "seen"))
				goto bad;
			o->expect_seen = !strcmp(optarg, "seen");
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			printf("svtrace %s\n", SVKIT_VERSION);
			exit(0);
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "svtrace: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	if (!o->ingress || !o->egress_arg) {
		fprintf(stderr, "svtrace: --ingress and --egress are required (see --help)\n");
		return -EINVAL;
	}
	if (o->ovsdb && strcmp(o->egress_arg, "all")) {
		fprintf(stderr, "svtrace: --ovsdb is asked only by --egress all: name the egress interfaces or drop it\n");
		return -EINVAL;
	}
	if (rotation && !o->record) {
		fprintf(stderr, "svtrace: --record-size, --record-keep, --record-flush-ms, --record-sync-ms and "
			"--record-min-free are about --record FILE, not given\n");
		return -EINVAL;
	}
	if (o->svid && strlen(o->svid) > SVTRACE_SVID_MAX)
		fprintf(stderr, "svtrace: warning: --svid has %zu characters: BPF keeps the first %d octets of an "
			"svID, so streams are matched on those and the length; streams whose svIDs differ only past "
			"octet %d are taken for this one\n", strlen(o->svid), SVTRACE_SVID_MAX, SVTRACE_SVID_MAX);
	return 0;
bad:
	for (const struct option *p = lo; p->name; p++)
		if (p->val == c)
			fprintf(stderr, "svtrace: invalid value '%s' for --%s: %s (see --help)\n", optarg, p->name,
				want);
	return -EINVAL;
}

static int64_t mono_now(void)
{
	return sv_clock_now_ns(SV_CLOCK_MONOTONIC);
}

/* svtrace_corr's late frames into the record (opened after it), if any. */
static void on_late(void *ctx, const struct svtrace_late *l)
{
	svtrace_rec_late(((struct tracer *)ctx)->rec, l);
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
		.rec_st = t->rec_closed ? &t->rec_st : NULL, .rec_refused = t->rec_refused,
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

/* SIGINT/SIGTERM stop the run cleanly from the start: a signal during set-up (the BPF load takes about a
 * second) ends it with a message and a well-ended record; no SA_RESTART, so a wait returns at once. */
static void signals_install(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGXFSZ, SIG_IGN); /* a file size limit is a full disk: EFBIG, counted (sv_record.h) */
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
	struct tracer t = { 0 };
	struct svtrace_corr_cfg cc;
	struct svtrace_setup_cfg sc;
	struct svtrace_hlog_cfg hc;
	struct svtrace_out out;
	char missing[64];
	int64_t now, t_end;
	int err, ret = EXIT_RUNTIME;

	signals_install();
	if (parse_opts(argc, argv, &t.o))
		return EXIT_USAGE;
	sv_log_set(sv_log_stderr, NULL, t.o.verbose ? SV_LOG_DEBUG : SV_LOG_INFO);
	svtrace_setup_log(t.o.verbose);
	if (svtrace_ports_parse(&t.ports, t.o.ingress, t.o.egress_arg))
		return EXIT_USAGE;
	if (svtrace_check_caps(missing, sizeof(missing))) {
		fprintf(stderr, "svtrace: missing privileges: %s (run as root, or setcap cap_bpf,cap_perfmon+ep)\n",
			missing);
		return EXIT_RUNTIME;
	}
	err = svtrace_ports_resolve(&t.ports, t.o.netns, t.o.egress_arg, t.o.ovsdb);
	if (err)
		return err == -EINVAL ? EXIT_USAGE : EXIT_RUNTIME;
	if (setup_stopped("before set-up"))
		return 0;
	cc = (struct svtrace_corr_cfg){ .nports = t.ports.n, .late_ns = t.o.threshold_ns, .late_max = 256,
					.max_streams = 256, .no_interval = !t.o.live, .on_late = on_late, .ctx = &t };
	err = svtrace_corr_new(&t.corr, &cc);
	if (err) {
		fprintf(stderr, "svtrace: correlation tables: %s\n", strerror(-err));
		return EXIT_RUNTIME;
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
		ret = 0;
		goto out_rec;
	}
	sc = (struct svtrace_setup_cfg){
		.ports = &t.ports, .raw_tp = t.o.raw_tp, .sched_wakeup = t.o.sched_wakeup,
		.expect_seen = t.o.expect_seen, .per_frame = t.o.record != NULL, .appid = t.o.appid, .svid = t.o.svid,
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
		ret = 0;
		goto out_bpf;
	}
	svtrace_streams_init(&t.streams, t.corr, t.rec, t.o.svid, svtrace_setup_stream_key, t.bpf);
	t.ev = (struct svtrace_events){ .streams = &t.streams, .corr = t.corr, .rec = t.rec, .nports = t.ports.n };
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
	svtrace_setup_print_probes(t.bpf, stderr);
	if (!t.o.threshold_ns)
		fprintf(stderr, "svtrace: late detection off (--threshold-us 0)\n");
	fprintf(stderr, "svtrace: ingress %s (ifindex %u), %u egress, netns inode %u; ring %u KiB; tracing...\n",
		t.ports.port[0].name, t.ports.port[0].ifindex, t.ports.n, t.ports.port[0].netns_ino,
		t.o.ringbuf_bytes / 1024);

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
			t.t_last_ports = now;
		}
		if (now >= t_end)
			break;
	}
	/* Clean stop: detach in stages so that nothing new arrives and no frame is cut, drain, resolve,
	 * report. The run's length ends where the stop began. */
	ret = 0;
	now = mono_now();
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
			ret = EXIT_RUNTIME;
	}
	out_view(&t, &out);
	svtrace_out_summary(&out, stderr);
	if (t.o.json && svtrace_out_json(&out, stdout, now - t.t_start_mono)) {
		fprintf(stderr, "svtrace: JSON output failed\n");
		ret = EXIT_RUNTIME;
	}
out_bpf:
	svtrace_setup_free(t.bpf);
	svtrace_hlog_free(t.hlog);
out_rec:
	if (t.rec) {
		err = svtrace_rec_close(t.rec, NULL, NULL);
		if (err) {
			fprintf(stderr, "svtrace: record file '%s': %s\n", t.o.record, strerror(-err));
			ret = EXIT_RUNTIME;
		}
	}
out_corr:
	svtrace_corr_free(t.corr);
	svtrace_drop_reasons_free();
	return ret;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svtrace's BPF side in user space: the skeleton (svtrace.skel.h) and everything that needs its maps'
 * descriptors. Loading picks tp_btf or raw_tp and the optional probes this kernel has, sets the rodata
 * knobs (filters, the port filter, table sizes); then the tables are mmap()ed for the modules that read
 * them in place (svtrace_scan, svtrace_hlog), the ring buffer goes to svtrace_events, the programs are
 * attached, and at the end they are detached in stages (no frame cut by the stop). svtrace's main() holds
 * the order, on one cleanup path (svtrace_setup_free). Messages go to stderr in svtrace's words.
 */
#ifndef SVTRACE_SETUP_H
#define SVTRACE_SETUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "svtrace.h"

struct svtrace_corr;
struct svtrace_events;
struct svtrace_hlog;
struct svtrace_hlog_cfg;
struct svtrace_ports;
struct svtrace_scan;
struct svtrace_setup;
struct svtrace_streams;

/* What the kernel let svtrace attach (the summary's "probes"). */
struct svtrace_probes {
	const char *attach_mode;	/* "tp_btf" or "raw_tp" */
	bool wait_from_rq;		/* feeders' waits from sched_info (no sched_wakeup program) */
	int64_t preempt_from_rq;	/* svtrace_preempt_from_rq(): 0, carriers also in interrupts */
	const char *tracepoints[32];	/* each tracepoint attached at start (the stop's detaches aside) */
	unsigned ntracepoints;
	bool ovs, tun, vhost, direct;	/* the optional probes: on, or off for the reason below */
	char ovs_why[64], tun_why[64], vhost_why[64], direct_why[64];
	/* why late (svtrace_why.h): the decomposition on (--why on and late detection on), its steal clock,
	 * and the hooks left out (tracepoint absent, or refused) */
	bool why;
	const char *why_steal;		/* "steal_time" (the hypervisor's), "rq" (the run queue's booking) */
	char why_off[64];		/* why it is off ("" on) */
	char why_missing[256];		/* the hooks left out, comma-separated ("" none) */
	bool why_qdisc;			/* net_dev_queue on: some egress port has a queue (not noqueue) */
};

struct svtrace_setup_cfg {
	const struct svtrace_ports *ports;	/* the port filter (kept: read again by the watch) */
	const char *netns;			/* --netns: where the ports are (NULL ours) */
	bool raw_tp;				/* --raw-tp */
	bool sched_wakeup;			/* --sched-wakeup */
	bool expect_seen;			/* --expect seen: BPF learns each stream's ports */
	bool per_frame;				/* --record: an event per copy, no hop log nor histograms */
	bool why;				/* --why on: the decomposition of late frames (with threshold_ns) */
	uint32_t why_rate;			/* --why-rate: decompositions a second and CPU (0 no limit) */
	bool why_faults;			/* --why-faults: the page fault hooks too */
	uint32_t appid;				/* 0: every APPID */
	const char *svid;			/* NULL: every svID */
	int64_t timeout_ns, threshold_ns;
	uint32_t table;				/* --table: copies tracked at once (rounded up to a power of two) */
	uint32_t log_entries;			/* --log-entries per CPU */
	uint32_t ringbuf_bytes;
};

/* libbpf's messages to stderr: debug with @verbose; warnings, but not while optional probes are tried. */
void svtrace_setup_log(bool verbose);

/* Opens the skeleton, chooses its programs, sets the knobs and loads it (once more without the optional
 * programs when the kernel refuses them). Returns 0 or -errno (not said: the caller says it). */
int svtrace_setup_load(struct svtrace_setup **s, const struct svtrace_setup_cfg *cfg);
/* Ring buffer, detaches, unmaps, destroys; NULL does nothing. */
void svtrace_setup_free(struct svtrace_setup *s);

const struct svtrace_probes *svtrace_setup_probes(const struct svtrace_setup *s);
/* The probes' lines of the start-up messages. */
void svtrace_setup_print_probes(const struct svtrace_setup *s, FILE *f);

/* Maps the tables the scans and the hop log read in place into @sc and @hc (frame table: a warning when
 * it cannot be mapped, its scan is then skipped). Returns 0 or -errno (not said). */
int svtrace_setup_map(struct svtrace_setup *s, struct svtrace_scan *sc, struct svtrace_hlog_cfg *hc);
/* The ring buffer, its events to @fn(@ctx) (svtrace_events_handle). Returns 0 or -errno (not said). */
int svtrace_setup_ring(struct svtrace_setup *s, int (*fn)(void *ctx, void *data, size_t size), void *ctx);
/* Attaches every program loaded; an optional one refused is said in the probes and left out. Returns 0 or
 * -errno (said). */
int svtrace_setup_attach(struct svtrace_setup *s);

/* Waits up to @timeout_ms for events, then reads every one that waits. Returns 0 or -errno. */
int svtrace_setup_poll(struct svtrace_setup *s, int timeout_ms);

/*
 * A clean stop while frames flow: no frame T1 saw is lost by the stop itself. T1 first (BPF then
 * ignores copies at T2a without a T1: frames that came in after the end); its frames get a grace period
 * to reach T2a; then T2a; the copies get a while to be taken; then the rest, the ring and @h drained.
 * What is still open after that is resolved by the scans' final pass.
 */
void svtrace_setup_stop(struct svtrace_setup *s, struct svtrace_hlog *h);

/* The steal the why timelines booked since the start, summed over the CPUs (ns; 0 with why off). */
uint64_t svtrace_setup_why_steal(struct svtrace_setup *s);

/* BPF's per-CPU counters (SVTRACE_CNT_*), summed. */
void svtrace_setup_counters(struct svtrace_setup *s, uint64_t cnt[SVTRACE_CNT_NR]);

/* svtrace_streams' key_of (@ctx: the svtrace_setup): id @id's identity from BPF's "streams" map. */
int svtrace_setup_stream_key(void *ctx, uint32_t id, struct svtrace_stream_key *key);
/* svtrace_scan's ports_of (@ctx: the svtrace_setup): the ports stream @id reached (BPF's "stream_ports"). */
int svtrace_setup_stream_ports(void *ctx, uint32_t id, uint32_t *ports);
/* Every stream of BPF's map into @ss (streams seen only at T1 too), with its T1 frame count into @corr. */
void svtrace_setup_streams_sync(struct svtrace_setup *s, struct svtrace_streams *ss, struct svtrace_corr *corr);
/* The fallback hash of tracked copies ("tracked"), resolved as svtrace_scan_track() resolves the array. */
void svtrace_setup_scan_hash(struct svtrace_setup *s, struct svtrace_scan *sc, struct svtrace_events *ev,
			     int64_t now, bool all);

/* The port filter's pairs in BPF's global data (svtrace_ports_watch rewrites them in place). */
volatile uint32_t *svtrace_setup_port_ifindex(struct svtrace_setup *s);
volatile uint32_t *svtrace_setup_port_netns(struct svtrace_setup *s);

#endif /* SVTRACE_SETUP_H */

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svtrace's accounting of frame copies: the frames are correlated in BPF (svtrace.h), which hands over one
 * resolved egress copy at a time (T1 ingress, T2a egress toward guest p, T2b taken by guest p's feeder,
 * or dropped, missing, in flight at the stop) or, for copies taken in time, only their hop latencies
 * (svtrace_hlog.h). This turns them into per-hop latency histograms (per egress port, per stream, and per
 * live interval), missing/dropped/unwanted counts with the drop reasons, and the list of late frames
 * with their attribution (which thread fed the guest, what held its CPU, which thread carried the frame
 * between T1 and T2a). Memory is fixed at creation but for per-stream statistics, allocated when a
 * stream is first added (at most max_streams). Pure computation: no clock reads, no I/O, no logging.
 */
#ifndef SVTRACE_CORR_H
#define SVTRACE_CORR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sv_record.h"
#include "sv_stats.h"

#define SVTRACE_CORR_MAX_PORTS 16	/* egress ports 1..15 (0 is the ingress) */
#define SVTRACE_CORR_SVID_MAX 64
#define SVTRACE_CORR_MAX_REASONS 16	/* distinct drop reasons kept per port */

enum svtrace_hop {
	SVTRACE_HOP_T1_T2A = 0,
	SVTRACE_HOP_T2A_T2B = 1,
	SVTRACE_HOP_T1_T2B = 2,
	SVTRACE_HOP_NR
};
/* "T1", "T2a" / "T2a", "T2b" ... */
const char *svtrace_hop_from(enum svtrace_hop h);
const char *svtrace_hop_to(enum svtrace_hop h);

/*
 * The thread that carried a frame between T1 and T2a when it crossed threads there (svtrace.h
 * SVTRACE_F_CARRIED: a user-space switch's thread, an upcall handler), with its last wait as measured
 * and what held its CPU meanwhile. tid 0: no carrier (forwarded in the receiving context).
 */
struct svtrace_carrier {
	uint32_t tid;
	const char *comm;		/* NULL or "": its name is not known */
	int64_t wait_ns;
	int64_t wait_end_ns;		/* 0 unknown */
	uint32_t holder_pid;
	const char *holder_comm;
	uint32_t holder_policy, holder_prio;
};

/* What kind of thread @comm names, for people reading why a frame was late: "ovs main thread" (the
 * netdev datapath forwards system ports there), "ovs pmd thread", "ovs handler (upcall)", "ovs
 * revalidator", "ksoftirqd", "napi thread", "vhost worker", "qemu", or "thread". */
const char *svtrace_thread_role(const char *comm);

struct svtrace_hop_stats {
	uint64_t frames;		/* reached `to` from `from` (latency values) */
	uint64_t missing;		/* seen at `from`, never at `to` */
	uint64_t dropped;		/* freed with a drop reason between the two */
	uint64_t unwanted;		/* (hops ending at T2b) reached the guest, freed unwanted */
	uint64_t in_flight;		/* still between `from` and `to` when tracing stopped (not missing) */
	struct sv_stats lat;		/* to - from, ns */
};

struct svtrace_reason_count {
	uint32_t reason;
	uint64_t count;
};

struct svtrace_late {
	uint32_t stream;
	uint16_t smpcnt;
	unsigned port;
	enum svtrace_hop hop;
	int64_t hop_ns;
	int64_t t_mono_ns;		/* when it was taken */
	uint32_t feeder_tid;
	char feeder_comm[16];
	int64_t wait_ns;		/* the part of the feeder's wait within the hop (svtrace_wait_in_hop) */
	int64_t wait_from_ns;		/* where that part starts (same clock as t_mono_ns), 0 if none */
	int64_t feeder_wait_ns;		/* the feeder's whole last wait, as measured */
	bool wait_end_known;		/* false: the wait's end was not stamped, wait_ns is an upper bound */
	uint32_t holder_pid;		/* 0 and holder_comm "" when no part of the wait is in the hop */
	char holder_comm[16];
	uint32_t holder_policy;
	uint32_t holder_prio;
	/* the carrier (svtrace_carrier; carrier_tid 0: none), its wait clipped to the hop T1-T2a */
	uint32_t carrier_tid;
	char carrier_comm[16];
	int64_t carrier_wait_ns;	/* the part of its wait within T1-T2a */
	int64_t carrier_wait_from_ns;	/* where that part starts, 0 if none */
	int64_t carrier_whole_wait_ns;	/* its last wait, as measured */
	uint32_t carrier_holder_pid;	/* 0 and "" when no part of its wait is in the hop */
	char carrier_holder_comm[16];
	uint32_t carrier_holder_policy, carrier_holder_prio;
	/* why late (svtrace_corr_late_why): its hops split by cause, times on CLOCK_MONOTONIC; nwhy 0: none */
	unsigned nwhy;
	struct sv_rec_why why[2];
};

/*
 * The part of a wait [wait_end_ns - wait_ns, wait_end_ns] inside the hop [hop_from_ns, hop_to_ns] (one
 * clock): the only part of a feeder's wait that can explain the hop's latency. wait_end_ns 0 (end not
 * known): the wait is assumed to end at hop_to_ns, an upper bound (min of wait and hop). *@from_ns:
 * where the overlap starts (0 when there is none). Returns the overlap in ns, 0 if none or bad input.
 */
int64_t svtrace_wait_in_hop(int64_t hop_from_ns, int64_t hop_to_ns, int64_t wait_end_ns, int64_t wait_ns,
			    int64_t *from_ns);

struct svtrace_corr_counters {
	uint64_t observations;		/* copies accounted (svtrace_corr_copy) */
	uint64_t orphans;		/* dropped on a port before T2a, with no T1 */
	uint64_t streams_overflow;	/* streams beyond max_streams (svtrace_corr_stream_add) */
	uint64_t bad_port;		/* port, stream or hop number out of range */
	uint64_t late_total;		/* frames over the threshold (the list keeps the worst) */
};

struct svtrace_corr_cfg {
	unsigned nports;		/* egress ports, 1..SVTRACE_CORR_MAX_PORTS-1 */
	int64_t late_ns;		/* T1->T2b above this goes to the late list (0: none) */
	unsigned late_max;		/* late list size (keeps the worst) */
	unsigned max_streams;
	bool no_interval;		/* keep no per-interval statistics (live mode off): a third less work */
	/* Called for each frame over the threshold, before it may be displaced from the list. */
	void (*on_late)(void *ctx, const struct svtrace_late *l);
	void *ctx;
};

struct svtrace_corr;

/* Returns 0, -EINVAL (bad cfg) or -ENOMEM. All memory is allocated here except per-stream stats. */
int svtrace_corr_new(struct svtrace_corr **c, const struct svtrace_corr_cfg *cfg);
void svtrace_corr_free(struct svtrace_corr *c);

/* Aggregate over all streams of one egress port (1..nports). NULL when out of range. */
const struct svtrace_hop_stats *svtrace_corr_hop(const struct svtrace_corr *c, unsigned port,
						 enum svtrace_hop hop);
/* Same, since the last svtrace_corr_interval_reset() (live mode). */
const struct svtrace_hop_stats *svtrace_corr_hop_interval(const struct svtrace_corr *c, unsigned port,
							  enum svtrace_hop hop);
void svtrace_corr_interval_reset(struct svtrace_corr *c);

unsigned svtrace_corr_nstreams(const struct svtrace_corr *c);
/* Stream @idx identity; svid not NUL-terminated (length in *svid_len). Returns 0 or -ENOENT. */
int svtrace_corr_stream(const struct svtrace_corr *c, unsigned idx, uint16_t *appid, const uint8_t **svid,
			size_t *svid_len, uint64_t *ingress_frames);
/* Per-stream hop statistics; NULL if absent (allocation failed or out of range). */
const struct svtrace_hop_stats *svtrace_corr_stream_hop(const struct svtrace_corr *c, unsigned idx,
							unsigned port, enum svtrace_hop hop);

/* Drop reasons seen on @port (both hops), *n entries. */
const struct svtrace_reason_count *svtrace_corr_reasons(const struct svtrace_corr *c, unsigned port,
							unsigned *n);
/* Late list, worst first after svtrace_corr_late_sort(). */
const struct svtrace_late *svtrace_corr_late(const struct svtrace_corr *c, unsigned *n);
void svtrace_corr_late_sort(struct svtrace_corr *c);
/* The decomposition @h[0..n) (n <= 2) of the late frame of stream @stream, port @port, @smpcnt taken at
 * @t_mono_ns, into its entry of the late list. Returns 0, or -ENOENT when the list does not keep it. */
int svtrace_corr_late_why(struct svtrace_corr *c, unsigned stream, unsigned port, uint16_t smpcnt, int64_t t_mono_ns,
			  const struct sv_rec_why *h, unsigned n);
const struct svtrace_corr_counters *svtrace_corr_counters(const struct svtrace_corr *c);

/* What became of one egress copy (svtrace.h svtrace_copy, resolved in BPF or by the timeout scan). */
enum svtrace_copy_outcome {
	SVTRACE_COPY_TAKEN = 1,		/* T1? -> T2a -> T2b */
	SVTRACE_COPY_UNWANTED,		/* reached the guest, nobody wanted it (not a loss) */
	SVTRACE_COPY_DROPPED,		/* T2a, then freed with a drop reason */
	SVTRACE_COPY_PORT_DROP,		/* dropped on the port before T2a */
	SVTRACE_COPY_MISSING_T2A,	/* T1 seen, never at T2a on this port */
	SVTRACE_COPY_MISSING_T2B,	/* T2a seen, never freed (taken) within the timeout */
	SVTRACE_COPY_IN_FLIGHT_T2B,	/* T2a seen, not freed yet when tracing stopped (not a loss) */
};

struct svtrace_copy_obs {
	enum svtrace_copy_outcome outcome;
	unsigned stream;		/* index from svtrace_corr_stream_add() */
	unsigned port;			/* 1..nports */
	uint16_t smpcnt;
	int64_t t1_ns, t2a_ns, t2b_ns;	/* CLOCK_MONOTONIC, 0 = not seen */
	uint32_t reason;		/* drops: kernel skb_drop_reason value */
	/* TAKEN/UNWANTED: who fed the frame to the guest (from the BPF take event), its last wait and
	 * what held its CPU meanwhile */
	uint32_t feeder_tid;
	const char *feeder_comm;	/* NULL or "": not known */
	int64_t wait_ns;
	uint32_t holder_pid;
	const char *holder_comm;
	uint32_t holder_policy;
	uint32_t holder_prio;		/* rt_priority for FIFO/RR, else nice */
	int64_t wait_end_ns;		/* end of the feeder's wait, same clock; 0 unknown */
	struct svtrace_carrier carrier;	/* TAKEN/UNWANTED: who carried it T1 -> T2a (tid 0: none) */
};

/* Index of stream (APPID, whole svID), created if new. Returns it, or -ENOSPC (counted). */
int svtrace_corr_stream_add(struct svtrace_corr *c, uint16_t appid, const uint8_t *svid, size_t svid_len);
/* Sets the stream's T1 frame count (counted in BPF). */
void svtrace_corr_stream_set_frames(struct svtrace_corr *c, unsigned idx, uint64_t frames);
/* Accounts one resolved copy on its port's three hops; a taken copy over late_ns goes to the late list
 * (and on_late). No allocation. Returns 0 or -EINVAL (bad port/stream/outcome, counted in bad_port). */
int svtrace_corr_copy(struct svtrace_corr *c, const struct svtrace_copy_obs *o);

/*
 * Merges latencies accounted elsewhere (svtrace's in-BPF histograms, as a delta since the last merge)
 * into a hop: frames += lat->count, lat merged. @stream < 0: the port's aggregate and its live
 * interval; else stream @stream's (index from svtrace_corr_stream_add()). Returns 0, -EINVAL (bad
 * port/stream/hop, counted in bad_port) or -EOVERFLOW (nothing merged).
 */
int svtrace_corr_hop_merge(struct svtrace_corr *c, int stream, unsigned port, enum svtrace_hop hop,
			   const struct sv_stats *lat);

#endif /* SVTRACE_CORR_H */

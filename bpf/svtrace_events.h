/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svtrace's events: what BPF reports through its ring buffer (svtrace.h: one svtrace_copy per resolved
 * frame copy, with names when it was late; drops, missing frames, Open vSwitch upcalls) and what the
 * table scans find (svtrace_scan.h), turned into the copy's outcome and accounted: its stream's sample
 * rate learned, its hops and late-list entry (svtrace_corr), its records (svtrace_rec). No allocation,
 * no system call (but a record block's write(2) when one is full).
 */
#ifndef SVTRACE_EVENTS_H
#define SVTRACE_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "sv_why.h"
#include "svtrace.h"
#include "svtrace_corr.h"

struct svtrace_streams;
struct svtrace_rec;

#define SVTRACE_EVENTS_RECENT 64

/* What the events need (set by the caller) and what they count. */
struct svtrace_events {
	struct svtrace_streams *streams;
	struct svtrace_corr *corr;
	struct svtrace_rec *rec;	/* NULL: no --record */
	unsigned nports;		/* egress ports 1..nports */
	uint64_t events;		/* ring events read */
	uint64_t upcalls;		/* Open vSwitch upcalls of SV frames */
	uint64_t filtered;		/* copies of streams not traced (--svid, or unknown to BPF's map) */
	/* why late (SVTRACE_EV_WHY, svtrace_why.h): the decomposition that follows a late copy's event */
	int64_t late_ns;		/* the late threshold (a hop alone over it: SV_REC_WHY_F_HOP_LATE) */
	struct sv_why_tally why;	/* every late frame decomposed: causes, dominant causes */
	uint64_t why_events;		/* decompositions read */
	uint64_t why_nested;		/* not decomposed (BPF's late path ran inside another) */
	uint64_t why_unmatched;		/* whose late copy was not a late frame here (a drop, another stream) */
	uint64_t why_bad;		/* whose causes did not add up to the hop (a bug: not written) */
	struct svtrace_events_late {	/* the last late frames, their decomposition awaited */
		uint32_t bpf_stream;
		uint16_t port, smpcnt;
		uint64_t t2b_ns;
	} recent[SVTRACE_EVENTS_RECENT];
	unsigned nrecent;		/* written (the next goes to nrecent % SVTRACE_EVENTS_RECENT) */
};

/*
 * One resolved copy @e with outcome @oc: statistics, late list, records. A MISSING_T2A copy stands for
 * every port in its mask (e->reason). The names (may be NULL) and @wait_end_ns (0 unknown) matter for a
 * late copy only; @carrier (may be NULL) is the thread that carried it from T1 to T2a.
 */
void svtrace_events_copy(struct svtrace_events *ev, const struct svtrace_copy *e, enum svtrace_copy_outcome oc,
			 const char *feeder_comm, const char *holder_comm, uint64_t wait_end_ns,
			 const struct svtrace_carrier *carrier);

/* One decomposition @w (svtrace_why.h) of the late frame it names: its hops into svtrace_corr's late list,
 * the run's tally and the records (one WHY record per hop). Frames that were not late here are counted. */
struct svtrace_why_ev;
void svtrace_events_why(struct svtrace_events *ev, const struct svtrace_why_ev *w);

/* libbpf's ring_buffer_sample_fn (@ctx: the svtrace_events): one event of @size octets at @data, an
 * svtrace_copy or, flagged late, an svtrace_late_ev, or an svtrace_why_ev. Short or unknown events are ignored. Returns 0. */
int svtrace_events_handle(void *ctx, void *data, size_t size);

#endif /* SVTRACE_EVENTS_H */

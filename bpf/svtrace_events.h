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

#include "svtrace.h"
#include "svtrace_corr.h"

struct svtrace_streams;
struct svtrace_rec;

/* What the events need (set by the caller) and what they count. */
struct svtrace_events {
	struct svtrace_streams *streams;
	struct svtrace_corr *corr;
	struct svtrace_rec *rec;	/* NULL: no --record */
	unsigned nports;		/* egress ports 1..nports */
	uint64_t events;		/* ring events read */
	uint64_t upcalls;		/* Open vSwitch upcalls of SV frames */
	uint64_t filtered;		/* copies of streams not traced (--svid, or unknown to BPF's map) */
};

/*
 * One resolved copy @e with outcome @oc: statistics, late list, records. A MISSING_T2A copy stands for
 * every port in its mask (e->reason). The names (may be NULL) and @wait_end_ns (0 unknown) matter for a
 * late copy only; @carrier (may be NULL) is the thread that carried it from T1 to T2a.
 */
void svtrace_events_copy(struct svtrace_events *ev, const struct svtrace_copy *e, enum svtrace_copy_outcome oc,
			 const char *feeder_comm, const char *holder_comm, uint64_t wait_end_ns,
			 const struct svtrace_carrier *carrier);

/* libbpf's ring_buffer_sample_fn (@ctx: the svtrace_events): one event of @size octets at @data, an
 * svtrace_copy or, flagged late, an svtrace_late_ev. Short or unknown events are ignored. Returns 0. */
int svtrace_events_handle(void *ctx, void *data, size_t size);

#endif /* SVTRACE_EVENTS_H */

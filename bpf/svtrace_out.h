/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svtrace's output, from what the run collected: the --live histograms per hop (stderr), the final
 * summary (stderr) and the --json object (stdout; its keys are svtrace(8)'s and docs/metrics.md's). Reads
 * only the state below: nothing from BPF directly (its counters come in @cnt, read by the caller).
 */
#ifndef SVTRACE_OUT_H
#define SVTRACE_OUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sv_record.h"
#include "svtrace.h"

struct svtrace_corr;
struct svtrace_events;
struct svtrace_ports;
struct svtrace_probes;
struct svtrace_streams;

struct svtrace_out {
	const struct svtrace_ports *ports;
	const struct svtrace_streams *streams;		/* svIDs truncated by BPF */
	struct svtrace_corr *corr;			/* the statistics (live: its interval is reset) */
	const struct svtrace_probes *probes;
	uint64_t cnt[SVTRACE_CNT_NR];			/* BPF's counters (svtrace_setup_counters) */
	uint64_t events;				/* ring events read */
	uint64_t upcalls;				/* Open vSwitch upcalls of SV frames */
	uint64_t filtered;				/* copies of streams not traced */
	uint64_t hlog_copies;				/* copies read from the hop log */
	int64_t threshold_ns;				/* late threshold, 0: late detection off */
	bool expect_seen;				/* --expect seen */
	const char *record;				/* --record FILE, NULL none */
	const struct sv_record_writer_stats *rec_st;	/* once the record is closed, else NULL */
	uint64_t rec_refused;				/* records the writer refused (a bug) */
	const struct svtrace_events *ev;		/* why late: its tally and counts (NULL: none) */
	uint64_t why_steal_ns;				/* steal the why timelines booked (all CPUs) */
};

/* One --live interval: a summary line and a histogram per (egress port, hop), then the interval's
 * statistics are reset; why late's line (the run's late frames so far by dominant cause). */
void svtrace_out_live(const struct svtrace_out *o, FILE *f);

/* The final summary: counts, ports re-created or gone, the skb table's overflows, one line per (egress
 * port, hop), why late (the late frames by dominant cause, the share of their time named) and what
 * reached the record. */
void svtrace_out_summary(const struct svtrace_out *o, FILE *f);

/* The final summary as one JSON object (svtrace(8) describes its keys); the run lasted @elapsed_ns.
 * Returns 0 or the output's -errno (sv_json_end). */
int svtrace_out_json(const struct svtrace_out *o, FILE *f, int64_t elapsed_ns);

#endif /* SVTRACE_OUT_H */

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svtrace's hop log and in-BPF histograms, into svtrace_corr's statistics (summary and --live modes; with
 * --record every copy is an event instead). A copy taken in time leaves its two hop latencies in its CPU's
 * hop log (svtrace.h: one 8-octet entry, a single-producer ring per CPU, mmap()ed); the drain adds them
 * to staging histograms per (stream, egress port, hop), exactly (count, sum, min, max). The merge, every
 * SVTRACE_HIST_MERGE_S seconds at most and at each --live interval, moves the stages and the growth of
 * BPF's own histograms (copies the log had no room for) into the streams' and the ports' statistics.
 *
 * The drain is svtrace's hot path (~64000 entries a second in the lab): per entry, the stream is an
 * inline array access (svtrace_streams_of) and each value one bucket increment in a stage; nothing is
 * allocated but a stream's stages, once, on its first entry.
 */
#ifndef SVTRACE_HLOG_H
#define SVTRACE_HLOG_H

#include <stdint.h>

#include "svtrace.h"

struct svtrace_corr;
struct svtrace_streams;
struct svtrace_hlog;

struct svtrace_hlog_cfg {
	unsigned nports;				/* egress ports 1..nports */
	struct svtrace_streams *streams;		/* BPF stream ids (kept, not copied) */
	struct svtrace_corr *corr;			/* where the merges go (kept) */
	/* BPF's maps, mmap()ed (kept); NULL log: no log (--record), NULL hist: no histograms */
	volatile struct svtrace_hent *log;		/* [cpu * entries + i] */
	volatile struct svtrace_hlog_pos *pos;		/* [cpu] */
	unsigned ncpus;
	uint32_t entries;				/* per CPU, a power of two (--log-entries) */
	volatile struct svtrace_hist *hist;		/* [(id * nports + port - 1) * SVTRACE_HOPS + hop] */
	uint32_t nhist;					/* histograms in @hist */
};

/* Returns 0, -EINVAL (no ports, entries not a power of two) or -ENOMEM. */
int svtrace_hlog_new(struct svtrace_hlog **h, const struct svtrace_hlog_cfg *cfg);
void svtrace_hlog_free(struct svtrace_hlog *h);

/* Reads what every CPU's log holds into the stages (a copy outside their range, or without memory for
 * its stream's stages, straight into svtrace_corr as its event would be) and frees the entries. */
void svtrace_hlog_drain(struct svtrace_hlog *h);

/* Adds the stages and BPF's histograms' growth since the last merge to the streams' and the ports'
 * statistics; empties the stages. */
void svtrace_hlog_merge(struct svtrace_hlog *h);

/* Copies read from the log so far. */
uint64_t svtrace_hlog_copies(const struct svtrace_hlog *h);
/* Entries of streams not traced (--svid, or unknown to BPF's map): not accounted. */
uint64_t svtrace_hlog_filtered(const struct svtrace_hlog *h);

#endif /* SVTRACE_HLOG_H */

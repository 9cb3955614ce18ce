/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svtrace's table scans: what BPF cannot report by itself. Frames still in "inflight" (T1 seen, some port
 * never reached T2a) and copies still in "track" (T2a seen, never freed) after --timeout-ms are missing
 * there; at the stop every one is resolved (a copy younger than the timeout is in flight, not missing).
 * Both tables normally hold only the frames of the last microseconds. The scans read BPF's arrays in
 * place (mmap: plain memory, which the tests give them), and release what they resolve the way BPF
 * does (svtrace.h); the fallback hash "tracked" is walked by the caller through its map
 * (svtrace_scan_due / svtrace_scan_resolve per entry).
 */
#ifndef SVTRACE_SCAN_H
#define SVTRACE_SCAN_H

#include <stdbool.h>
#include <stdint.h>

#include "svtrace.h"

struct svtrace_events;

/* The ports stream @id must reach (--expect seen: those it reached, BPF's "stream_ports"): 0 and
 * *@ports, or -errno (none expected). */
typedef int svtrace_scan_ports_fn(void *ctx, uint32_t id, uint32_t *ports);

struct svtrace_scan {
	/* BPF's tables, mmap()ed; a NULL table is not scanned */
	volatile struct svtrace_inflight *inflight;	/* [id * SVTRACE_INFLIGHT_SLOTS + slot] */
	volatile uint64_t *incomplete;			/* its slots' "not complete" bits */
	volatile struct svtrace_track *track;		/* track_n slots */
	uint64_t *track_rel;				/* their release words */
	uint32_t track_n;
	int64_t timeout_ns;				/* --timeout-ms */
	uint32_t all_ports;				/* bit p for egress port p */
	svtrace_scan_ports_fn *ports_of;		/* NULL: every stream is expected at every port */
	void *ports_ctx;
	uint32_t cursor;				/* next quarter of "track" to scan */
};

/* Frames of the streams below ev->streams->nids in "inflight" older than the timeout at @now (@all:
 * every one) are freed and reported missing at the expected ports they never reached. */
void svtrace_scan_inflight(struct svtrace_scan *sc, struct svtrace_events *ev, int64_t now, bool all);

/* Copies in "track" not freed and older than the timeout at @now are released and reported missing at
 * T2b; a quarter of the table per call (a full sweep every fourth call), all of it with @all (the stop:
 * a copy younger than the timeout is then in flight). */
void svtrace_scan_track(struct svtrace_scan *sc, struct svtrace_events *ev, int64_t now, bool all);

/* A copy of the fallback hash: to be resolved at @now (expired, or @all)? */
bool svtrace_scan_due(const struct svtrace_scan *sc, const struct svtrace_track *tp, int64_t now, bool all);
/* A copy taken out of the fallback hash: missing at T2b, or (younger than the timeout) in flight. */
void svtrace_scan_resolve(const struct svtrace_scan *sc, struct svtrace_events *ev, const struct svtrace_track *tp,
			  int64_t now);

#endif /* SVTRACE_SCAN_H */

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svtrace's metrics (--metrics, docs/metrics.md "svtrace"): the statistics svtrace_corr keeps (per egress port
 * and hop: frames, missing, dropped, unwanted, the latency histogram; per stream; drop reasons per port), BPF's
 * counters and the late frames by cause, read at scrape time by the metrics thread. The main loop is the only
 * writer: it copies what needs a system call (BPF's counters) and publishes new streams and drop reasons
 * (release) in svtrace_metrics_tick(), once a second and at the end; the scrape thread reads (acquire, relaxed
 * loads). Nothing is added to the BPF programs or to the per-event path but one increment per late frame.
 */
#ifndef SVTRACE_METRICS_H
#define SVTRACE_METRICS_H

#include <stdint.h>

#include "sv_metrics.h"
#include "svtrace.h"
#include "svtrace_corr.h"

struct svtrace_ports;

#define SVTRACE_METRICS_CAUSES 5	/* enum sv_rec_wait_cause */
#define SVTRACE_METRICS_MAX_STREAMS 256
#define SVTRACE_METRICS_DROP_ROWS (SVTRACE_CORR_MAX_PORTS * SVTRACE_CORR_MAX_REASONS)

struct svtrace_metrics {
	struct svtrace_corr *corr;
	const struct svtrace_ports *ports;
	struct sv_metrics_health *health;
	uint64_t cnt[SVTRACE_CNT_NR];			/* BPF's counters as of the last tick */
	unsigned nstreams;				/* streams published (release) */
	unsigned ndrops;				/* drop rows published (release) */
	struct {
		uint8_t port, idx;			/* svtrace_corr_reasons(port)[idx] */
	} drop[SVTRACE_METRICS_DROP_ROWS];
	uint64_t late[SVTRACE_CORR_MAX_PORTS][SVTRACE_HOP_NR][SVTRACE_METRICS_CAUSES];
	uint64_t recreated[SVTRACE_CORR_MAX_PORTS];
	uint64_t up[SVTRACE_CORR_MAX_PORTS];
};

/* Registers svtrace's families in @m (the health's events_lost is BPF's ring losses, in @h). @tm, @corr, @ports
 * and @events (the ring events read) must outlive the registry's use. 0 or a registration error. */
int svtrace_metrics_register(struct svtrace_metrics *tm, struct sv_metrics *m, struct sv_metrics_health *h,
			     struct svtrace_corr *corr, const struct svtrace_ports *ports, const uint64_t *events);
/* The main loop, once a second and after the stop's last merge: BPF's counters @cnt, the ports' state, new
 * streams and drop reasons. */
void svtrace_metrics_tick(struct svtrace_metrics *tm, const uint64_t cnt[SVTRACE_CNT_NR]);
/* A late frame (svtrace_corr's on_late): counted by hop, port and cause (as its THREAD record says it). */
void svtrace_metrics_late(struct svtrace_metrics *tm, const struct svtrace_late *l);

#endif /* SVTRACE_METRICS_H */

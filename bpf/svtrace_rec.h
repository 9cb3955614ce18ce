/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svtrace's records (--record FILE, svkit's record format, sv_record.h): the streams and the ports'
 * names, every point of every frame copy (T1, T2a, and the end: taken, dropped with the kernel's reason,
 * or missing), the threads that made late frames late, and the run's per-hop summaries at the end. Times
 * are taken on CLOCK_MONOTONIC and written on TAI; a frame's second is its sample's (tai_sec). Every
 * function but svtrace_rec_open() accepts a NULL handle (no --record) and does nothing; none allocates,
 * and the per-copy ones make a system call only when a block is full (sv_record_writer).
 */
#ifndef SVTRACE_REC_H
#define SVTRACE_REC_H

#include <stdint.h>

#include "sv_clock.h"
#include "sv_record.h"
#include "svtrace.h"
#include "svtrace_corr.h"

struct svtrace_ports;
struct svtrace_rec;

/*
 * Creates @path (rotation etc. from @o) and names the ports in it (their ifindex, and each egress port
 * as a guest). @ports and @corr are kept (not copied): the records read the ports' current ifindex and
 * the streams' identity and statistics from them; @to_tai is copied. Returns 0 or -errno, said on
 * stderr.
 */
int svtrace_rec_open(struct svtrace_rec **r, const char *path, const struct sv_record_opts *o,
		     const struct svtrace_ports *ports, struct svtrace_corr *corr,
		     const struct sv_clock_xlate *to_tai);

/*
 * Ends the file (its last block and END); *@st (may be NULL) what reached the disk, *@refused (may be
 * NULL) the records the writer refused as invalid (a bug, not a full disk). Frees @r. Returns 0 or the
 * writer's -errno.
 */
int svtrace_rec_close(struct svtrace_rec *r, struct sv_record_writer_stats *st, uint64_t *refused);

/* --metrics: the writer's counters into @h (sv_metrics_health_record), from the main loop. NULL @r: no-op. */
struct sv_metrics_health;
void svtrace_rec_metrics(const struct svtrace_rec *r, struct sv_metrics_health *h);

/* The record's time bounds (flush, sync) at @now_mono_ns: a system call only when one is due. */
void svtrace_rec_tick(struct svtrace_rec *r, int64_t now_mono_ns);

/* Stream @corr (svtrace_corr index) as known now: its identity, VLAN (from @vlan_tci, 0 none) and
 * learned rate (0 unknown). Written again whenever the rate changes. */
void svtrace_rec_stream(struct svtrace_rec *r, unsigned corr, uint16_t vlan_tci, uint32_t rate);

/* Port @i's current ifindex, named (svreport names the hops by it): at the start and when the port
 * was re-created. */
void svtrace_rec_port_name(struct svtrace_rec *r, unsigned i);

/*
 * Every point of one copy @e of stream @corr with outcome @oc: T1 (by the copy that carries it), T2a,
 * and the end (taken, dropped with its reason, or missing: an event flagged dropped with reason
 * "missing", no DROP record). The join key is the sample's second, from smpCnt and @rate
 * (svtrace_streams_rate).
 */
void svtrace_rec_copy(struct svtrace_rec *r, unsigned corr, uint32_t rate, const struct svtrace_copy *e,
		      enum svtrace_copy_outcome oc);

/* svtrace_corr's on_late (@ctx: the svtrace_rec, may be NULL): the feeder's THREAD record at T2b and,
 * when another thread carried the frame from T1 to T2a, the carrier's at T2a. */
void svtrace_rec_late(void *ctx, const struct svtrace_late *l);

/* A late frame's decomposition: one WHY record per hop @h[0..n) (stream, guest, smp_cnt, points set; times
 * on CLOCK_MONOTONIC, written on TAI), its sample's second from @t_ref (its first stamp) and @rate. */
void svtrace_rec_why(struct svtrace_rec *r, uint32_t rate, uint64_t t_ref, const struct sv_rec_why *h, unsigned n);

/* The run's totals: one SUMMARY record per (stream, egress port, hop), the whole run (@start_mono_ns to
 * @now_mono_ns) as one period. */
void svtrace_rec_summaries(struct svtrace_rec *r, int64_t start_mono_ns, int64_t now_mono_ns);

#endif /* SVTRACE_REC_H */

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svsub's per-sample records in the shared record format (common/sv_record.h), for svreport: per ASDU one
 * T3 event (the guest's receive timestamp, with its source) and, when an application consumed the sample,
 * one T4 event (the instant the application returned, user-space clock). Both carry the join key
 * (stream, TAI second, smpCnt); the second comes from the sample time for synchronised streams and from
 * the receive time otherwise (flagged SV_REC_F_NOT_SYNCED).
 *
 * Soak mode (cfg.soak on, live: the record's clock is TAI; sv_soak.h): the same events go to the flight
 * recorder's ring instead of the file, and per stream and point (Ts -> T3, and Ts -> T4 with an application)
 * every sample enters its interval (by its sample time, else its receive time): frames, samples, latency,
 * late (over soak_late_us), duplicates, out of order, lost, counter restarts, changes (confRev, simulation
 * bit, quality validity), taken as the tracker's counters move, so an interval holds what the summary counts
 * for its samples. A gap's lost samples count in the interval of the sample after it (the one that shows
 * it). The tracker takes back a loss when the missing sample arrives late, and a restart's run of late
 * samples; an interval keeps what it counted (the late sample counts as out of order in its own interval),
 * so over intervals lost can exceed the summary's by the out-of-order samples that filled a gap. Triggers
 * (a window of the stream around them): a latency over the threshold or an outlier, a loss, a change, a
 * counter restart. The first SVSUB_REC_SOAK_STREAMS streams (or max_streams) get intervals; the others'
 * samples are counted (soak stats: unkeyed) and go to the ring only.
 */
#ifndef SVSUB_REC_H
#define SVSUB_REC_H

#include <stdbool.h>
#include <stdint.h>

#include "sv_clock.h"
#include "sv_codec.h"
#include "sv_record.h"
#include "sv_soak.h"
#include "svsub_track.h"

struct svsub_rec;

struct svsub_rec_cfg {
	const char *path;
	enum sv_clock_id clock;	    /* clock of the receive timestamps (TAI live, the capture's offline) */
	uint8_t rx_ts_src;	    /* enum sv_ts_source of the receive timestamps */
	uint32_t ifindex;	    /* receiving interface (0 offline) */
	struct sv_record_opts opts; /* rotation, flush and sync periods, free-space floor (zero: none;
				     * opts.keep NULL: SV_REC_KEEP_DEFAULT) */
	bool app_points;	    /* write T4 events (an application is attached) */
	const struct sv_soak_opts *soak; /* soak mode when soak->on (NULL: off) */
	unsigned max_streams;	    /* soak: the tracker's table size (0: SVSUB_REC_SOAK_STREAMS) */
	struct sv_soak_stats *soak_stats; /* soak: filled by svsub_rec_close (NULL: not wanted) */
	struct sv_metrics_health *metrics; /* --metrics: the writer's counters copied here once a second */
	const char *host;	    /* the header's host name (NULL: gethostname) */
};

/* Streams that get interval summaries in soak mode (each costs ~120 KiB a point, allocated at open). */
#define SVSUB_REC_SOAK_STREAMS 64

/* Opens the writer. Returns 0, -EINVAL (record_keep), or -errno from sv_record_writer_open(). */
int svsub_rec_open(struct svsub_rec **r, const struct svsub_rec_cfg *cfg);

/*
 * Records the ASDUs of one decoded, tracked frame. @res holds the tracker's per-ASDU results; @t_app_ns is
 * when the application returned (same clock as @t_rx_ns), 0 when none. Per-packet path: no allocation, no
 * logging; a block that cannot be written (a full disk) is counted by the writer and never stops the
 * caller: receiving and the application go on. @ts_src: source of @t_rx_ns (0: the configured one).
 */
void svsub_rec_frame(struct svsub_rec *r, struct svsub_tracker *t, const struct sv_view *v,
		     const struct svsub_sample_result *res, int64_t t_rx_ns, uint8_t ts_src, int64_t t_app_ns);

/* The writer's time bounds (sv_record_tick) from the receive loop, with a time it holds (CLOCK_MONOTONIC in
 * soak mode: the intervals close and the windows are written from here). NULL: no-op. */
void svsub_rec_tick(struct svsub_rec *r, int64_t now_ns);

/* Flushes (last block, END) and closes; the final counts into @st (NULL: not wanted). Returns 0, or -EIO
 * when records were not all written (said by the counts), or the writer's error. NULL is a no-op. */
int svsub_rec_close(struct svsub_rec *r, struct sv_record_writer_stats *st);

#endif /* SVSUB_REC_H */

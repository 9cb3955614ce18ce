/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The publishing engine: streams (templates + signals), the schedule, the transmit back-end, records,
 * statistics. One scheduler thread serves every stream: at each deadline it builds the frames of every
 * stream due then and hands them to the back-end in one call per socket priority.
 *
 * Schedule (IEC 61869-9 §6.904, svkit DESIGN "Clocks"): frame k of a stream carries samples
 * n = k*asdus .. k*asdus+asdus-1 counted from the top of the start second; smpCnt = n mod rate, so
 * smpCnt is 0 at the top of every second of the configured clock and wraps at the sample rate. The
 * deadline of a frame is the instant of its last sample (sv_frame_deadline_ns), computed from
 * (second, smpCnt) and never by adding periods: no drift. Deadlines are absolute; the thread sleeps with
 * clock_nanosleep(TIMER_ABSTIME) on the configured clock.
 *
 * Late wake-ups: every frame keeps its own smpCnt. A frame handed over more than late_threshold_us after
 * its deadline is late: policy "send" sends it (counted late, with how late in the histogram), policy
 * "skip" does not (counted skipped). There is no silent catch-up burst: every frame of a burst is counted.
 */
#ifndef SVPUB_ENGINE_H
#define SVPUB_ENGINE_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include "sv_clock.h"
#include "sv_stats.h"
#include "svpub_config.h"

struct svpub;

struct svpub_totals {
	uint64_t frames;   /* handed to the back-end and accepted */
	uint64_t late;	   /* sent after deadline + threshold */
	uint64_t skipped;  /* not sent: late with policy skip */
	uint64_t stopped;  /* not sent: a STOP event */
	uint64_t outage;   /* refused: interface down or gone (ENETDOWN, ENXIO, ENODEV) */
	uint64_t tx_errors; /* other send failures */
	uint64_t overruns; /* wake-ups later than one frame period */
	uint64_t tx_timestamps;
	uint64_t tx_ts_missing;	 /* frames whose stamp never came */
	uint64_t tx_ts_disorder; /* stamps earlier than the previous stamp of the same stream */
	int64_t run_ns;		 /* from the first deadline to the last hand-over */
};

/* Builds everything from a resolved config (@c must outlive the engine). Logs what it sets up and every
 * failure. Returns 0 or -errno. */
int svpub_create(struct svpub **p, const struct svpub_config *c);

/* Publishes until the duration/count ends or *@stop becomes non-zero. A stream's count runs from its first
 * frame sent (mid-second when paced). The record's time bounds are ticked from the loop (sv_record_tick);
 * a record that cannot be written never stops it. Returns 0 or -errno (a fatal error: clock_nanosleep
 * failure, or a file back-end that cannot write: logged). */
int svpub_run(struct svpub *p, volatile sig_atomic_t *stop);

void svpub_get_totals(const struct svpub *p, struct svpub_totals *t);
const struct sv_stats *svpub_lateness(const struct svpub *p);    /* deadline -> wake-up */
const struct sv_stats *svpub_tx_lateness(const struct svpub *p); /* deadline -> TX timestamp */
const char *svpub_ts_source_name(const struct svpub *p);

/* Final summary: human text with histograms (@f: stderr), or one JSON object (@f: stdout). */
void svpub_print_summary(const struct svpub *p, FILE *f);
int svpub_print_json(const struct svpub *p, FILE *f);

/* Closes the record file if the run did not (svpub_run closes it at its end, so that the summaries give
 * its final counts), closes the back-end, frees. Returns 0, or -errno: the capture file could not be
 * written, or records were not all written (-EIO; the summary says how many and why). */
int svpub_destroy(struct svpub *p);

/* --metrics (svpub_metrics.c): the engine copies into @h once a second what lives outside its counters (the
 * record writer's, the missing TX stamps); the counters below are read in place by the metrics thread. */
struct sv_metrics_health;
void svpub_set_metrics(struct svpub *p, struct sv_metrics_health *h);
const struct svpub_totals *svpub_totals_ref(const struct svpub *p);
unsigned svpub_nstreams(const struct svpub *p);
struct svpub_stream_counters {
	const char *svid;
	uint16_t appid;
	const uint64_t *frames, *late, *skipped, *stopped, *outage, *tx_errors;
};
void svpub_stream_counters(const struct svpub *p, unsigned i, struct svpub_stream_counters *c);
/* The interface (or file) published on. */
const char *svpub_out_name(const struct svpub *p);

/* ---- pure schedule arithmetic (unit-tested) ---- */

/* Sample index n (from the start second) -> (second, smpCnt). */
static inline void svpub_sample_split(int64_t start_sec, uint64_t n, uint32_t rate, int64_t *sec, uint32_t *smp_cnt)
{
	*sec = start_sec + (int64_t)(n / rate);
	*smp_cnt = (uint32_t)(n % rate);
}

/* Instant of sample n. */
static inline int64_t svpub_sample_ns(int64_t start_sec, uint64_t n, uint32_t rate)
{
	return sv_sample_time_ns(start_sec + (int64_t)(n / rate), (uint32_t)(n % rate), rate);
}

#endif /* SVPUB_ENGINE_H */

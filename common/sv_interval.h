/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Soak mode's interval summaries: an accumulator of exact counters and latency histograms per interval, written
 * as records (INTERVAL, HIST, CLOCK: docs/record-format.md) through a record writer.
 *
 * Intervals are aligned on the TAI scale: interval k covers [k * P, (k + 1) * P) of TAI nanoseconds, P a whole
 * number of seconds, on every host. An entry (a frame, a loss, a drop) goes to the interval of the TAI time
 * the caller gives it: the frame's sample time Ts on a synchronised stream, so that svpub, svtrace and every
 * svsub put the same frame in the same interval (their summaries line up without joining frames); else its
 * time at the point converted to TAI. Only the closing of an interval depends on the tool's own clock: the
 * tool's tick clock (MONOTONIC) is converted to TAI with a conversion measured at open and again every
 * remeasure period; a move beyond the threshold is a step of the host's TAI (a PTP or NTP step) and is
 * written as a CLOCK record, and the intervals open then are flagged (docs/record-format.md "Soak records").
 *
 * Keys (stream, hop from -> to or a point, guest) are declared in a table sized at open; the counters and
 * the worst frame are kept per key and interval, the latencies per key and interval in one sv_stats each.
 * An interval is written when the tool's TAI time passes its end plus a grace period (frames arrive after
 * their sample time): one INTERVAL record per key, one HIST per (hop, guest) (the keys' histograms merged:
 * stream SV_REC_STREAM_NONE, period_ms = the interval), and at close one HIST per key for the whole run
 * (tai_sec = the run's first second, period_ms = its length).
 *
 * Memory: everything is allocated (and its pages touched) at open: three interval slots of the key table and
 * its histograms, one whole-run histogram per key. Nothing is allocated afterwards: memory is flat however
 * long the run. Per-packet cost (sv_interval_frame/_count/_drop): a comparison to find the interval, a few
 * counter increments and one sv_stats_add; no allocation, no logging, no system call. Records are written
 * only by sv_interval_tick() and sv_interval_close(), from the tool's loop. Not thread-safe: one accumulator
 * per thread (and its own record writer).
 */
#ifndef SV_INTERVAL_H
#define SV_INTERVAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "sv_clock.h"
#include "sv_record.h"

#define SV_INTERVAL_NS_DEFAULT (10 * SV_NSEC_PER_SEC)	/* the soak interval when on */
#define SV_INTERVAL_NS_MAX (3600 * SV_NSEC_PER_SEC)	/* an interval's counters fit 32 bits */
#define SV_INTERVAL_GRACE_NS_DEFAULT SV_NSEC_PER_SEC	/* frames of an interval may arrive this late */
#define SV_INTERVAL_REMEASURE_NS_DEFAULT (10 * SV_NSEC_PER_SEC)
#define SV_INTERVAL_STEP_NS_DEFAULT (10 * SV_NSEC_PER_USEC) /* a smaller move of the conversion is noise */
#define SV_INTERVAL_NO_LATENCY INT64_MIN		/* sv_interval_frame: the frame has no latency */

struct sv_interval;

/* One key of the table: a hop (from_point -> point) or a point alone (from_point SV_POINT_NONE). */
struct sv_interval_key {
	uint32_t stream;	/* stream index (defined in the record, sv_record_define_stream) */
	uint8_t from_point;	/* enum sv_point, or SV_POINT_NONE */
	uint8_t point;		/* enum sv_point */
	uint16_t guest;		/* guest / egress index, SV_REC_GUEST_NONE */
};

/* Measures the tick clock's conversion to TAI into @x (offset_ns, gap_ns, measured_from_ns). 0 or -errno. */
typedef int (*sv_interval_measure_fn)(void *ctx, struct sv_clock_xlate *x);

struct sv_interval_cfg {
	struct sv_record_writer *w;	/* the records go there (not owned; closed by the caller after
					 * sv_interval_close) */
	int64_t interval_ns;		/* whole seconds, 1 s .. SV_INTERVAL_NS_MAX; 0: SV_INTERVAL_NS_DEFAULT */
	int64_t grace_ns;		/* an interval is written when the TAI time passes its end + this;
					 * 0: SV_INTERVAL_GRACE_NS_DEFAULT; at most the interval */
	unsigned max_keys;		/* the key table's size (1..SV_REC_MAX_STREAMS * 64) */
	clockid_t tick_clock;		/* the clock of the tick times (CLOCK_MONOTONIC: never stepped) */
	enum sv_clock_id tick_clock_id;	/* the same, as CLOCK records name it (SV_CLOCK_MONOTONIC) */
	int64_t remeasure_ns;		/* the conversion is measured again this often; 0: the default, < 0:
					 * never */
	int64_t step_ns;		/* a move of the conversion beyond this plus half the two measurements'
					 * gaps is a step; 0: SV_INTERVAL_STEP_NS_DEFAULT */
	sv_interval_measure_fn measure;	/* NULL: sv_clock_xlate_measure(tick_clock -> CLOCK_TAI, 16 samples);
					 * tests and simulated runs give their own clock */
	void *measure_ctx;
};

/*
 * Allocates everything, measures the conversion (CLOCK record, flag INITIAL) and starts the run at
 * @now_tick_ns (the intervals around it get flag FIRST). Returns 0 and *a, -EINVAL (cfg), -ENOMEM, or the
 * measurement's or the writer's error.
 */
int sv_interval_open(struct sv_interval **a, const struct sv_interval_cfg *cfg, int64_t now_tick_ns);

/* Declares a key (not on the per-packet path; at start or when a stream is learned). Returns its index
 * (>= 0; the index of the same key declared before), -EINVAL (a point or hop out of range), -ENOSPC (the
 * table is full). */
int sv_interval_key_add(struct sv_interval *a, const struct sv_interval_key *k);

/* One frame (or @n identical ones) seen at a key. */
struct sv_interval_frame {
	int64_t t_tai_ns;	/* picks the interval: the sample time Ts (synchronised stream), else the
				 * frame's time at the point on TAI (sv_interval_to_tai) */
	int64_t latency_ns;	/* counted in the histogram; SV_INTERVAL_NO_LATENCY: none */
	uint32_t tai_sec;	/* the frame's join key (stream, TAI second, smpCnt): names the worst frame */
	uint16_t smp_cnt;
	uint16_t flags;		/* SV_REC_F_LATE, SV_REC_F_DUPLICATE, SV_REC_F_REORDERED are counted */
	uint32_t samples;	/* samples (ASDUs) in the frame */
	uint32_t n;		/* identical frames (0 means 1; a simulated run gives more) */
	bool why;		/* a why-late record of this frame is written (the worst frame says so) */
	bool same_frame;	/* another sample of a frame entered already at this key (a frame of several
				 * ASDUs of one stream): counts its samples and latency, not a frame */
};

/* The counters entered without a frame. */
enum sv_interval_counter {
	SV_INTERVAL_LOST = 0,	/* samples never received */
	SV_INTERVAL_MISSING,	/* frames seen upstream and never here */
	SV_INTERVAL_DUPLICATE,
	SV_INTERVAL_REORDERED,
	SV_INTERVAL_LATE,
	SV_INTERVAL_OUTLIERS,	/* latencies past the tool's limit, kept out of the histogram */
	SV_INTERVAL_ERRORS,
	SV_INTERVAL_RESTARTS,	/* sample-counter restarts */
	SV_INTERVAL_CHANGES,	/* confRev, quality or simulation changes */
	SV_INTERVAL_COUNTERS
};

/*
 * Per packet. @key: an index from sv_interval_key_add (out of range: counted in stats.bad_keys, nothing
 * else). An entry whose interval was written already (a clock step forward, a frame later than the grace)
 * or lies beyond the next interval is counted in the current one as a stray (flag STRAYS).
 * sv_interval_drop: @n frames dropped for @reason (as event.reason); the two most frequent of an interval's
 * first four reasons are named in its record, the rest are in `dropped` only.
 */
void sv_interval_frame(struct sv_interval *a, unsigned key, const struct sv_interval_frame *f);
void sv_interval_count(struct sv_interval *a, unsigned key, int64_t t_tai_ns, enum sv_interval_counter c,
		       uint64_t n);
void sv_interval_drop(struct sv_interval *a, unsigned key, int64_t t_tai_ns, uint16_t reason, uint64_t n);

/* The tick clock's time @t_tick_ns on TAI with the conversion in force (what the tool stamps its records
 * and its frames' times with, so that they move with a step as the intervals do). */
int64_t sv_interval_to_tai(const struct sv_interval *a, int64_t t_tick_ns);

/*
 * From the tool's loop, with a time it holds on the tick clock (no clock read here unless a measurement is
 * due): measures the conversion again when due (a step: a CLOCK record, the open intervals flagged STEP),
 * starts the current interval (so an interval in which nothing happened is written too, with zero counts)
 * and writes the intervals whose end + grace has passed. Returns 0 or the first writer error (the writer
 * counts what it could not write; the accumulator goes on).
 */
int sv_interval_tick(struct sv_interval *a, int64_t now_tick_ns);

struct sv_interval_stats {
	uint64_t intervals;	/* intervals written */
	uint64_t records;	/* INTERVAL records written */
	uint64_t hists;		/* HIST records written (per (hop, guest) and interval, and the whole run's) */
	uint64_t strays;	/* entries counted in another interval than their own */
	uint64_t bad_keys;	/* entries with a key index out of range (a caller's bug) */
	uint64_t steps;		/* clock steps found (CLOCK records with flag STEP) */
	uint64_t measure_errors; /* measurements that failed (the conversion kept) */
	uint64_t write_errors;	/* records the writer refused or could not write */
	int64_t to_tai_ns;	/* the conversion in force */
	size_t memory;		/* octets allocated at open (all of it) */
	unsigned keys;		/* keys declared */
	unsigned groups;	/* (hop, guest) pairs among them */
};
void sv_interval_get_stats(const struct sv_interval *a, struct sv_interval_stats *st);

/*
 * Writes every interval still open (flag LAST on the one the run stops in), then one HIST per key with
 * latencies for the whole run, and frees @a (NULL: nothing). The final counts into @st (NULL: not wanted).
 * Returns 0 or the first writer error.
 */
int sv_interval_close(struct sv_interval *a, int64_t now_tick_ns, struct sv_interval_stats *st);

#endif /* SV_INTERVAL_H */

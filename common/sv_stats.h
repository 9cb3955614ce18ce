/* SPDX-License-Identifier: Apache-2.0 */
/*
 * THE histogram type of svkit: latencies in nanoseconds (and any other non-negative int64_t).
 *
 * Buckets are log-linear (HDR histogram style): values 0..127 each have their own bucket (exact); above,
 * every power of two [2^e, 2^(e+1)) is split in 64 equal sub-buckets of width 2^(e-6). So a bucket's
 * width is at most 1/64 of its lower bound. A percentile read from buckets is reported as the middle of
 * the part of its bucket that lies within [min, max], and the error bound returned with it is half
 * that width: |reported - true| <= err <= value / 128 (0.79 %), and err = 0 below 128 ns.
 * The full non-negative int64_t range is covered: SV_STATS_BUCKETS = 3712 uint64_t counters (29 KiB),
 * all inside the struct: no allocation ever, O(1) add (one clz, a shift, an increment).
 *
 * count, min, max and sum are exact. Negative values (a latency across two unsynchronised hosts) are
 * not put in buckets: they are counted in `negative` (and the most negative kept in `negative_min`),
 * so the percentiles stay honest and the caller can report the clock problem.
 *
 * Percentile definition everywhere (buckets and exact arrays): nearest rank. For q in (0, 100], the
 * value of rank r = ceil(q/100 * n) (1-based) in the sorted data; q = 0 gives the minimum.
 *
 * Not thread-safe: one histogram per thread, merged with sv_stats_merge() when reporting.
 */
#ifndef SV_STATS_H
#define SV_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct sv_json;

#define SV_STATS_SUB_BITS 6
#define SV_STATS_SUB_COUNT (1u << SV_STATS_SUB_BITS)		 /* 64 */
#define SV_STATS_BUCKETS ((64u - SV_STATS_SUB_BITS) * SV_STATS_SUB_COUNT) /* 3712 */

struct sv_stats {
	uint64_t count;		/* values in buckets (>= 0) */
	int64_t min;		/* exact; INT64_MAX while count == 0 */
	int64_t max;		/* exact; 0 while count == 0 */
	uint64_t sum_lo;	/* exact 128-bit sum of the values (sum_hi:sum_lo) */
	uint64_t sum_hi;
	uint64_t negative;	/* values < 0, not in buckets nor in count */
	int64_t negative_min;	/* the most negative one (0 if none) */
	uint32_t top;		/* highest non-empty bucket index + 1 (scans stop there) */
	uint32_t pad_;
	uint64_t bucket[SV_STATS_BUCKETS];
};

/* Bucket index of a value >= 0. */
static inline uint32_t sv_stats_index(int64_t v)
{
	uint64_t u = (uint64_t)v;
	unsigned e, shift;

	if (u < 2u * SV_STATS_SUB_COUNT)
		return (uint32_t)u;
	e = 63u - (unsigned)__builtin_clzll(u);
	shift = e - SV_STATS_SUB_BITS;
	return shift * SV_STATS_SUB_COUNT + (uint32_t)(u >> shift);
}

/* Value range [lo, hi] of bucket @idx of a log-linear histogram with @sub_bits sub-bucket bits: sv_stats'
 * own (SV_STATS_SUB_BITS), or a coarser one kept elsewhere (svtrace's BPF per-stream histograms). */
void sv_stats_bucket_range(uint32_t idx, unsigned sub_bits, int64_t *lo, int64_t *hi);
/* Smallest value of bucket @idx (idx < SV_STATS_BUCKETS). */
int64_t sv_stats_bucket_lo(uint32_t idx);
/* Largest value of bucket @idx (inclusive). */
int64_t sv_stats_bucket_hi(uint32_t idx);

/* Empties @h (count 0, min INT64_MAX). A zeroed struct must be initialised with this before use. */
void sv_stats_init(struct sv_stats *h);

/* Empties a histogram in use, as sv_stats_init() does, clearing only the buckets below `top` (those above are 0
 * already): what an interval's sparse histogram costs to reuse. */
void sv_stats_reset(struct sv_stats *h);

/* Adds one value. O(1), no allocation, no logging: safe on the per-packet path. */
static inline void sv_stats_add(struct sv_stats *h, int64_t v)
{
	uint32_t idx;
	uint64_t old;

	if (v < 0) {
		h->negative++;
		if (v < h->negative_min)
			h->negative_min = v;
		return;
	}
	idx = sv_stats_index(v);
	h->bucket[idx]++;
	if (idx >= h->top)
		h->top = idx + 1;
	h->count++;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	old = h->sum_lo;
	h->sum_lo += (uint64_t)v;
	h->sum_hi += h->sum_lo < old;
}

/* Adds @n copies of @v. */
void sv_stats_add_n(struct sv_stats *h, int64_t v, uint64_t n);

/* dst += src (counts, min/max, sums, negatives). Returns 0, or -EOVERFLOW if a count would wrap
 * (then dst is unchanged). */
int sv_stats_merge(struct sv_stats *dst, const struct sv_stats *src);

/* Mean (sum / count) as a double; 0 when empty. */
double sv_stats_mean(const struct sv_stats *h);

/*
 * Nearest-rank percentile @q in [0, 100] from the buckets. *value is the middle of the bucket part
 * within [min, max] (min itself for q = 0, max for q = 100 - both exact, err 0); *err_ns (may be NULL)
 * bounds |value - true percentile|. Returns 0, -ENODATA when empty, -EINVAL for q outside [0, 100].
 */
int sv_stats_percentile(const struct sv_stats *h, double q, int64_t *value, int64_t *err_ns);

/* The shared summary keys (DESIGN.md): min, p50, p99, p999, p9999, max, plus count. */
struct sv_stats_summary {
	uint64_t count;
	int64_t min, p50, p99, p999, p9999, max;
	/* error bounds of p50..p9999 (0 when exact: from an array, or values < 128) */
	int64_t p50_err, p99_err, p999_err, p9999_err;
	bool exact;		/* from sv_stats_exact_summary(): no bucket error at all */
	uint64_t negative;	/* histogram's negative count (0 for arrays) */
};

/* Summary from a histogram. Empty histogram: count 0 and all values 0 (printers show "-"/null). */
void sv_stats_summarize(const struct sv_stats *h, struct sv_stats_summary *s);

/* ---- Exact percentiles from per-frame arrays (svreport) -------------------------------------- */

/* Sorts @n int64 values ascending in place: introsort (quicksort, heapsort past 2 log n depth,
 * insertion for short runs), O(n log n) worst case, no allocation (unlike glibc qsort). */
void sv_stats_sort_i64(int64_t *v, size_t n);

/* Nearest-rank percentile of an ascending array: v[ceil(q/100*n) - 1], v[0] for q = 0.
 * Returns 0, -ENODATA (n 0), -EINVAL (q outside [0, 100]). */
int sv_stats_exact_percentile(const int64_t *sorted, size_t n, double q, int64_t *value);

/* Sorts @v in place, then fills @s (exact = true, all errors 0). Values may be negative. Returns 0 or
 * -ENODATA when n is 0 (s then has count 0). */
int sv_stats_exact_summary(int64_t *v, size_t n, struct sv_stats_summary *s);

/* ---- Formatting (to buffers or to a FILE* the program passes: the library never prints itself) - */

/* Human duration from ns: "0ns", "812ns", "12.3us", "4.56ms", "1.20s" (3 significant digits above
 * 1 us). Negative values keep their sign. Returns snprintf's value. */
int sv_stats_format_ns(int64_t ns, char *buf, size_t size);

/* "count=4800 min=12.1us p50=15.0us p99=31.2us p999=40.1us p9999=40.9us max=41.0us" (values with
 * sv_stats_format_ns; "count=0" alone when empty; " negative=N" appended when N > 0; percentiles from
 * buckets get a "~" prefix: "p99=~31.2us"). Returns snprintf's value. */
int sv_stats_summary_format(const struct sv_stats_summary *s, char *buf, size_t size);

/*
 * libbpf-tools' print_log2_hist layout: one line per power of two of (value / unit_ns), from "0 -> 1"
 * to the last non-empty, with a 40-column star bar scaled to the largest line (each bucket counted at
 * its midpoint; nothing printed when empty):
 *	     usecs               : count    distribution
 *	        16 -> 31         : 2        |*                                       |
 * @unit_ns: 1 (label "nsecs"), 1000 ("usecs"), 1000000 ("msecs"); @label NULL picks it from unit_ns.
 * Returns 0 or -EIO.
 */
int sv_stats_print_log2(const struct sv_stats *h, FILE *f, int64_t unit_ns, const char *label);

/*
 * JSON object of the shared keys: {"count":N,"min":..,"p50":..,"p99":..,"p999":..,"p9999":..,"max":..}
 * in ns as integers; every value but count is null when count is 0. Adds "negative":N only when N > 0
 * and "exact":false when the percentiles come from buckets (their error bounds in "p50_err", ...). The
 * caller writes the key in front. Returns sv_json's sticky error.
 */
int sv_stats_summary_json(struct sv_json *j, const struct sv_stats_summary *s);
/* Same, from a histogram. */
int sv_stats_json(struct sv_json *j, const struct sv_stats *h);
/* The histogram itself: its non-empty buckets as an array of [lo, hi, count] (values in [lo, hi] ns),
 * so that histograms can be pooled exactly elsewhere. Returns sv_json's sticky error. */
int sv_stats_buckets_json(struct sv_json *j, const struct sv_stats *h);

/* ---- Serialisation (per-second summaries in records) ----------------------------------------- */

/*
 * Compact little-endian encoding: version byte, sub_bits, varints for count/min/max/sum/negative, then
 * (index delta, count) varint pairs of the non-empty buckets only. A histogram of one second of one
 * stream (a few dozen buckets) takes ~100 bytes. Worst case SV_STATS_SERIALIZED_MAX.
 * Returns the bytes written, or -ENOSPC when @cap is too small (nothing useful written).
 */
#define SV_STATS_SERIALIZED_MAX (64u + SV_STATS_BUCKETS * 12u)
ssize_t sv_stats_serialize(const struct sv_stats *h, uint8_t *buf, size_t cap);

/* Decodes and validates (version, ranges, bucket counts sum to count, min/max inside the first/last
 * non-empty buckets, no trailing bytes). Returns 0 or -EBADMSG (h is then empty). Never reads past
 * buf + len. */
int sv_stats_deserialize(struct sv_stats *h, const uint8_t *buf, size_t len);

/* ---- Stream counters ------------------------------------------------------------------------ */

/* Loss/duplicate/reorder counters shared by svsub, svtrace and the per-second records (DESIGN.md words:
 * lost = samples never received, counted across smpCnt wraps). */
struct sv_counters {
	uint64_t frames;	/* frames accepted for this stream */
	uint64_t samples;	/* samples (ASDUs) accepted */
	uint64_t lost;		/* samples never received (smpCnt gaps) */
	uint64_t duplicate;	/* same smpCnt received again */
	uint64_t reordered;	/* arrived after a later smpCnt */
	uint64_t late;		/* past its deadline (publisher) or latency budget (subscriber) */
	uint64_t dropped;	/* frames dropped by the tool or the kernel, with a reason elsewhere */
	uint64_t errors;	/* decode/validation errors */
};

void sv_counters_add(struct sv_counters *dst, const struct sv_counters *src);
/* Writes the counters as an object {"frames":..,"samples":..,"lost":..,...}. */
int sv_counters_json(struct sv_json *j, const struct sv_counters *c);
/* "frames=.. samples=.. lost=.. duplicate=.. reordered=.. late=.. dropped=.. errors=.." */
int sv_counters_format(const struct sv_counters *c, char *buf, size_t size);

#endif /* SV_STATS_H */

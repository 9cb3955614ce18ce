/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Clocks and sample-time arithmetic.
 *
 * Time is int64_t nanoseconds since the clock's epoch (TAI and REALTIME: 1970-01-01 on their own scale;
 * MONOTONIC: boot). Every variable that holds a timestamp says its clock in its name (t_tai_ns, ...).
 *
 * Synchronised streams (smpSynch = 2, IEC 61850-9-2 Ed 2.1 §8.5.2 / IEC 61869-9 §6.904): smpCnt restarts
 * at 0 at the top of every TAI second and counts samples within the second, so the sample instant is
 *     t_sample = second * 1e9 + floor(smpCnt * 1e9 / rate)        (exact integer arithmetic, no drift)
 * The floor loses < 1 ns against the real instant and never accumulates: every instant is computed from
 * (second, smpCnt), never by adding periods. Publisher deadlines use the same formula, so svpub's
 * schedule and svsub's Ts agree to the nanosecond.
 *
 * Host sync state comes from adjtimex(2) (what the kernel was told by ptp4l/phc2sys/chrony). TAI offset 0
 * means "never set": CLOCK_TAI then equals CLOCK_REALTIME (37 s wrong in 2024), which svkit must notice
 * and report (sv_clock_sync.tai_unset).
 */
#ifndef SV_CLOCK_H
#define SV_CLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define SV_NSEC_PER_SEC INT64_C(1000000000)
#define SV_NSEC_PER_MSEC INT64_C(1000000)
#define SV_NSEC_PER_USEC INT64_C(1000)

/* Clock identifiers as stored in records (values are part of the record format: never renumber). */
enum sv_clock_id {
	SV_CLOCK_TAI = 0,	/* CLOCK_TAI: PTP's timescale; what smpSynch=2 counts against */
	SV_CLOCK_REALTIME = 1,	/* CLOCK_REALTIME: UTC (TAI - tai_offset) */
	SV_CLOCK_MONOTONIC = 2, /* CLOCK_MONOTONIC: intervals on one host; convert to TAI once */
	SV_CLOCK_PHC = 3,	/* a NIC's PTP hardware clock (/dev/ptpN), normally TAI */
	SV_CLOCK_COUNT
};

/* "tai", "realtime", "monotonic", "phc"; "unknown" for anything else. */
const char *sv_clock_name(enum sv_clock_id id);

/* Case-insensitive parse of the names above. Returns 0, or -EINVAL. */
int sv_clock_parse(const char *name, enum sv_clock_id *out);

/* POSIX clockid of TAI/REALTIME/MONOTONIC; -EINVAL for PHC (use sv_clock_phc_open). */
int sv_clock_posix_id(enum sv_clock_id id, clockid_t *out);

static inline int64_t sv_timespec_to_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * SV_NSEC_PER_SEC + ts->tv_nsec;
}

/* Floor division: negative @ns gives tv_sec < 0 and 0 <= tv_nsec < 1e9. */
static inline struct timespec sv_ns_to_timespec(int64_t ns)
{
	struct timespec ts;
	int64_t sec = ns / SV_NSEC_PER_SEC, rem = ns % SV_NSEC_PER_SEC;

	if (rem < 0) {
		rem += SV_NSEC_PER_SEC;
		sec--;
	}
	ts.tv_sec = (time_t)sec;
	ts.tv_nsec = (long)rem;
	return ts;
}

/* Floor of @ns / 1e9 (correct for negative values too). */
static inline int64_t sv_ns_to_sec_floor(int64_t ns)
{
	int64_t s = ns / SV_NSEC_PER_SEC;

	return (ns % SV_NSEC_PER_SEC < 0) ? s - 1 : s;
}

/*
 * Now on @clock in ns (TAI, REALTIME, MONOTONIC). Returns the time (>= 0), or -EINVAL for SV_CLOCK_PHC
 * and unknown ids (PHC needs a handle: sv_clock_phc_now_ns). Cheap: one vDSO clock_gettime().
 */
int64_t sv_clock_now_ns(enum sv_clock_id clock);

/* Now on any POSIX clockid (including a PHC's FD_TO_CLOCKID), or a negative errno. */
int64_t sv_clock_gettime_ns(clockid_t cid);

/* A NIC PTP hardware clock opened from "/dev/ptpN" (or "ptpN"). */
struct sv_phc {
	int fd;
	clockid_t cid;
};
/* Returns 0, or -errno from open(2) (-ENOENT when absent). Close with sv_clock_phc_close(). */
int sv_clock_phc_open(struct sv_phc *phc, const char *dev);
void sv_clock_phc_close(struct sv_phc *phc);
static inline int64_t sv_clock_phc_now_ns(const struct sv_phc *phc)
{
	return sv_clock_gettime_ns(phc->cid);
}

/* ---- Sample-time arithmetic (pure functions, no clock reads) ---------------------------------- */

/*
 * floor(smp_cnt * 1e9 / rate): the offset of sample @smp_cnt from the top of its second.
 * Defined for any smp_cnt (smp_cnt == rate gives exactly 1e9). @rate must be > 0 (0 returns 0).
 */
static inline int64_t sv_sample_offset_ns(uint32_t smp_cnt, uint32_t rate)
{
	if (!rate)
		return 0;
	return (int64_t)(((uint64_t)smp_cnt * (uint64_t)SV_NSEC_PER_SEC) / rate);
}

/* t_sample on the TAI scale: @tai_sec * 1e9 + sv_sample_offset_ns(). */
static inline int64_t sv_sample_time_ns(int64_t tai_sec, uint32_t smp_cnt, uint32_t rate)
{
	return tai_sec * SV_NSEC_PER_SEC + sv_sample_offset_ns(smp_cnt, rate);
}

/* The absolute sample index sec * rate + smp_cnt: consecutive samples differ by exactly 1, across
 * second boundaries. Useful to join and to count gaps of any length on synchronised streams. */
static inline int64_t sv_sample_index(int64_t tai_sec, uint32_t smp_cnt, uint32_t rate)
{
	return tai_sec * (int64_t)rate + smp_cnt;
}

/*
 * Default for sv_sample_align()'s @ahead_ns: how far in the future of the receive time a sample time
 * may lie and still be "this second" (clock error between publisher and receiver). 5 ms covers any
 * PTP-synchronised pair by three orders of magnitude while leaving 995 ms for real latency.
 */
#define SV_SAMPLE_AHEAD_NS_DEFAULT (5 * SV_NSEC_PER_MSEC)

struct sv_sample_time {
	int64_t tai_sec;	/* the TAI second the sample belongs to */
	int64_t t_sample_ns;	/* sv_sample_time_ns(tai_sec, smp_cnt, rate) */
	int64_t latency_ns;	/* t_rx - t_sample, in [-ahead_ns, 1 s - ahead_ns) */
};

/*
 * Which second does a synchronised sample belong to, given when it was received (@t_rx_ns on the TAI
 * scale)? The sample was taken in the past, normally well under 1 s ago, so pick the second for which
 *     -ahead_ns <= t_rx - t_sample < 1 s - ahead_ns.
 * That handles the boundary: smpCnt = rate-1 received 100 µs after the top of second S+1 belongs to
 * second S (latency ~308 µs at 4 kHz), and smpCnt 0 received 1 µs *before* S+1 (a receiver clock
 * slightly behind) belongs to S+1 (latency -1 µs) as long as 1 µs <= @ahead_ns.
 * A latency of 1 s or more cannot be told from a smaller one by smpCnt alone (it aliases by whole
 * seconds); callers that need it must use another reference (refrTm, a publisher record).
 * Returns 0, or -EINVAL (rate 0, smp_cnt >= rate, ahead_ns outside [0, 1 s)).
 */
int sv_sample_align(int64_t t_rx_tai_ns, uint32_t smp_cnt, uint32_t rate, int64_t ahead_ns,
		    struct sv_sample_time *out);

/*
 * Publisher schedule. Frame @k (k = 0 first frame) of a stream started at the top of TAI second
 * @start_sec carries samples n = k*asdus .. k*asdus + asdus-1 (absolute index from start); each ASDU
 * is one sample and smpCnt advances by one per ASDU (IEC 61869-9 §6.904.3).
 *   - first smpCnt of frame k: (k * asdus) % rate
 *   - deadline of frame k: sample instant of its LAST ASDU (the frame cannot leave before its last
 *     sample exists); callers add their own transmit offset.
 * Computed from (second, smpCnt) of the absolute index, so frame 10^9 is as exact as frame 0.
 * Invalid parameters (rate or asdus 0, rate % asdus != 0): deadline returns -EINVAL (< 0), first_smpcnt
 * and index_at return UINT32_MAX / UINT64_MAX.
 */
int64_t sv_frame_deadline_ns(int64_t start_tai_sec, uint64_t k, uint32_t rate, uint32_t asdus);
uint32_t sv_frame_first_smpcnt(uint64_t k, uint32_t rate, uint32_t asdus);
/* First frame index whose deadline is >= @t_tai_ns (to start or resume a schedule mid-second). */
uint64_t sv_frame_index_at(int64_t start_tai_sec, int64_t t_tai_ns, uint32_t rate, uint32_t asdus);

/* ---- smpCnt wrap helpers (wrap = rate for smpSynch streams, 65536 for free-running ones) ------- */

/* Forward distance from @from to @to modulo @wrap, in [0, wrap). Values are reduced mod wrap first (only
 * when needed: on the per-sample path both are already below the wrap, and two divisions cost more than
 * the rest of the arithmetic). */
static inline uint32_t sv_smpcnt_distance(uint32_t from, uint32_t to, uint32_t wrap)
{
	if (!wrap)
		return 0;
	if (from >= wrap || to >= wrap) {
		from %= wrap;
		to %= wrap;
	}
	return to >= from ? to - from : wrap - from + to;
}

/* Signed shortest distance from @from to @to modulo @wrap, in [-(wrap/2), wrap - wrap/2). Positive when
 * @to is ahead. Used to tell a late (reordered / duplicate) frame from a gap. */
static inline int32_t sv_smpcnt_delta(uint32_t from, uint32_t to, uint32_t wrap)
{
	uint32_t d = sv_smpcnt_distance(from, to, wrap);

	return d >= wrap - wrap / 2 ? (int32_t)d - (int32_t)wrap : (int32_t)d;
}

/*
 * Samples missing between two consecutively received frames whose first smpCnt are @prev and @cur,
 * @step samples per frame (ASDUs), smpCnt wrapping at @wrap: distance - step, counted across the wrap
 * (prev 3999, cur 1, wrap 4000, step 1 -> 1 missing: smpCnt 0).
 * @elapsed_ns (the receive-time difference, or < 0 if unknown) adds the whole wraps smpCnt cannot show:
 * the reading chosen is the one closest to elapsed * rate / 1e9 samples - either "behind" (distance -
 * wrap: reordered/duplicate, returns 0) or distance + n * wrap, n >= 0.
 * Returns the count (0 when cur == prev + step). Without elapsed, cur not ahead of prev (delta <= 0:
 * duplicate or reordered) returns 0 - callers classify with sv_smpcnt_delta() first.
 */
uint64_t sv_smpcnt_gap(uint32_t prev, uint32_t cur, uint32_t step, uint32_t wrap, uint32_t rate,
		       int64_t elapsed_ns);

/* ---- Host synchronisation state --------------------------------------------------------------- */

struct sv_clock_sync {
	bool unsync;		/* STA_UNSYNC set: nobody disciplines the clock (or it was reset) */
	bool tai_unset;		/* tai_offset_s == 0: CLOCK_TAI == CLOCK_REALTIME (37 s off) */
	int state;		/* adjtimex return: TIME_OK(0), TIME_INS, TIME_DEL, TIME_OOP, TIME_WAIT,
				 * TIME_ERROR(5) */
	uint32_t status;	/* raw timex.status (STA_* bits) */
	int32_t tai_offset_s;	/* timex.tai: TAI - UTC in seconds, 0 = unset */
	int64_t maxerror_ns;	/* kernel's maximum error bound (timex.maxerror, µs -> ns) */
	int64_t esterror_ns;	/* estimated error (timex.esterror, µs -> ns) */
	int64_t offset_ns;	/* last PLL offset (timex.offset, ns or µs per STA_NANO -> ns) */
	int64_t freq_ppb;	/* frequency adjustment (timex.freq, 2^-16 ppm -> ppb) */
};

/* Reads the state with adjtimex(2), modes = 0 (read only, no privilege needed). With SVKIT_CLOCK_UNSYNC=1 in the
 * environment the state says STA_UNSYNC whatever the kernel says (a lab's namespaces share one clock: the way to
 * make one "host" unsynchronised). Returns 0 or -errno. */
int sv_clock_sync_read(struct sv_clock_sync *out);

/* True when timestamps of this host can be joined with other hosts' on the TAI scale. */
static inline bool sv_clock_sync_ok(const struct sv_clock_sync *s)
{
	return !s->unsync && !s->tai_unset && s->state != 5 /* TIME_ERROR */;
}

/*
 * One line, no newline: "synchronised, maxerror 16us, esterror 0us, tai-utc 37s, state ok"
 * or "UNSYNCHRONISED (STA_UNSYNC), maxerror 16s, esterror 16s, tai-utc UNSET (CLOCK_TAI == CLOCK_REALTIME),
 * state error". Returns snprintf's value (the length it needed).
 */
int sv_clock_sync_format(const struct sv_clock_sync *s, char *buf, size_t size);

/* ---- Converting one clock to another, measured once ------------------------------------------- */

/*
 * to = from + offset_ns. Measured by reading (from, to, from) @samples times and keeping the triple with
 * the smallest gap between the two `from` reads (least preempted); the `to` read is taken at the
 * midpoint, so the error is at most gap_ns / 2 (plus the clocks' own drift since the measurement: the
 * monotonic clock is slewed by NTP/PTP, measure again for runs over hours if it matters).
 */
struct sv_clock_xlate {
	clockid_t from;
	clockid_t to;
	int64_t offset_ns;	/* add to a `from` time to get the `to` time */
	int64_t gap_ns;		/* width of the best sample: uncertainty is gap_ns / 2 */
	int64_t measured_from_ns; /* when (on `from`) */
};

/* Returns 0, or -errno from clock_gettime, or -EINVAL (samples 0). @samples 0..: 16 is plenty. */
int sv_clock_xlate_measure(struct sv_clock_xlate *x, clockid_t from, clockid_t to, unsigned samples);
/* Convenience: MONOTONIC -> TAI. */
int sv_clock_xlate_mono_to_tai(struct sv_clock_xlate *x);

static inline int64_t sv_clock_xlate_apply(const struct sv_clock_xlate *x, int64_t from_ns)
{
	return from_ns + x->offset_ns;
}

#endif /* SV_CLOCK_H */

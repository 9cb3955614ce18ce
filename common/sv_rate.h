/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a stream's smpCnt wraps at (W) and how many samples a second it carries: the one learner of every
 * tool (svsub's tracker, svtrace's records, svreport's join). IEC 61850-9-2 §8.5.2: a synchronised stream's
 * smpCnt counts the samples of the second, so W is its rate; an unsynchronised one counts to a W of its
 * publisher's own (libiec61850: 65536, whatever smpRate it states).
 *
 * Where W comes from, in order of precedence (enum sv_rate_source):
 *   1. configured (sv_rate_init(), 1..65536): a count >= W is a violation, counted; the caller judges the
 *      count modulo W.
 *   2. stated: the rate the stream states (smpRate with smpMod, sv_sample_rate()), adopted while nothing
 *      else is known, when 1 <= rate <= 65536, no count seen so far is >= it, and no stated W was proven
 *      wrong before. A count >= a stated W proves it wrong (libiec61850 states 80 per cycle and wraps at
 *      65535): a violation, W goes back to 65536, and the stream is learned; a statement is not adopted
 *      again.
 *   3. learned: at a wrap, W = (highest count since the first or the last restart) + 1. A wrap is the
 *      count falling from a value @from >= SV_RATE_WRAP_FROM_MIN to below a quarter of it: how a second
 *      ends, not a reordering near the start of one. A later wrap or a count >= W only raises W (to the
 *      highest count + 1, to the count + 1): the lap W was learned from had lost its top counts (the last
 *      frame of the second); W never falls.
 *   4. default: W = SV_RATE_SPACE until one of the above.
 *
 * Two ways to feed it, one rule set:
 *   - sv_rate_observe(): a tool that takes counts in arrival order without judging them (svtrace): every
 *     count; a wrap is a fall from the previous count.
 *   - sv_rate_check() on every count, sv_rate_accept() on each count the caller accepted as its stream's
 *     newest, sv_rate_restart() when it confirmed a restart of the counter (a run of counts behind the
 *     newest, RFC 3550 A.1's probation: svsub's tracker): the restart is a wrap when it starts below a
 *     quarter of the highest count, else the highest count starts again from the run's end.
 *
 * The rate for sample times (sv_rate_samples()): the stated rate when the stream states one (even when its
 * W was proven wrong: that is about the counter), else a configured or learned W, else 0 (unknown).
 *
 * Every function returns what happened as SV_RATE_EV_* bits (0: nothing). O(1), no allocation: these run on
 * the per-packet path. Not thread-safe: one struct per stream, in the thread that sees its samples.
 */
#ifndef SV_RATE_H
#define SV_RATE_H

#include <stdbool.h>
#include <stdint.h>

#define SV_RATE_SPACE 65536u		/* smpCnt's 16 bits: W while nothing is known */
#define SV_RATE_WRAP_FROM_MIN 64u	/* a fall from a count below this is no wrap (start-up jitter) */

/* The values are svsub's wrap_source in its summary: never renumber. */
enum sv_rate_source {
	SV_RATE_DEFAULT = 0,	/* SV_RATE_SPACE until something is known */
	SV_RATE_STATED,
	SV_RATE_LEARNED,
	SV_RATE_CONFIGURED,
};

/* "default", "stated", "learned", "configured"; "unknown" for anything else. */
const char *sv_rate_source_name(unsigned source);

enum sv_rate_event {
	SV_RATE_EV_WRAPPED = 1u << 0,	/* a wrap while W is learned or default (it is then learned) */
	SV_RATE_EV_LEARNED = 1u << 1,	/* W learned where none was known */
	SV_RATE_EV_RAISED = 1u << 2,	/* a learned W raised: its lap had lost its top counts */
	SV_RATE_EV_STATED = 1u << 3,	/* the stream's stated rate adopted as W */
	SV_RATE_EV_VIOLATION = 1u << 4,	/* a count >= a stated or configured W (counted in violations) */
	SV_RATE_EV_WITHDRAWN = 1u << 5,	/* a stated W dropped after its violation: W is learned from now on */
};

/* W changed (what a tool that writes W in its records re-defines the stream for). */
#define SV_RATE_EV_CHANGED (SV_RATE_EV_LEARNED | SV_RATE_EV_RAISED | SV_RATE_EV_STATED | SV_RATE_EV_WITHDRAWN)

/* Per stream. Read the fields, change them only through the functions. */
struct sv_rate {
	uint32_t wrap;		/* W: counts are 0 .. W - 1 */
	uint32_t stated;	/* samples/s the stream stated last (sv_sample_rate()), 0 none */
	uint32_t max;		/* highest count accepted since the first or the last restart */
	uint32_t last;		/* the previous count sv_rate_observe() took */
	uint64_t violations;	/* counts >= a stated or configured W */
	uint8_t source;		/* enum sv_rate_source */
	bool seen;		/* a count was accepted */
};

/* A stream nothing is known of; @configured_wrap 1..SV_RATE_SPACE forces W, 0 lets it be stated or
 * learned. Returns 0 or -EINVAL (the struct is then as for 0). */
int sv_rate_init(struct sv_rate *l, uint32_t configured_wrap);

unsigned sv_rate_state_slow(struct sv_rate *l, uint32_t rate);
unsigned sv_rate_check_slow(struct sv_rate *l, uint32_t smp);

/* What the stream states in this sample: its rate (sv_sample_rate(); 0 when it states none). May adopt
 * it as W (SV_RATE_EV_STATED). */
static inline unsigned sv_rate_state(struct sv_rate *l, uint32_t rate)
{
	l->stated = rate;
	if (l->source != SV_RATE_DEFAULT || !rate || rate == l->wrap)
		return 0;
	return sv_rate_state_slow(l, rate);
}

/* Any count of the stream, before the caller judges it: one >= W is a violation of a stated or configured
 * W (SV_RATE_EV_VIOLATION, and SV_RATE_EV_WITHDRAWN for a stated one) or raises a learned one
 * (SV_RATE_EV_RAISED). Afterwards a count is < W unless W is configured. */
static inline unsigned sv_rate_check(struct sv_rate *l, uint32_t smp)
{
	return smp < l->wrap ? 0 : sv_rate_check_slow(l, smp);
}

/* The caller accepted @smp as its stream's newest count. */
static inline void sv_rate_accept(struct sv_rate *l, uint32_t smp)
{
	if (!l->seen || smp > l->max)
		l->max = smp;
	l->seen = true;
}

/* The caller confirmed that the counter restarted: a run of counts behind the newest, from @start to
 * @end. A wrap when it starts below a quarter of the highest count (>= SV_RATE_WRAP_FROM_MIN) and W is
 * learned or default: SV_RATE_EV_WRAPPED (and LEARNED or RAISED). Either way the highest count is @end
 * from now on. */
unsigned sv_rate_restart(struct sv_rate *l, uint32_t start, uint32_t end);

/* A count as it came (no judgement of order by the caller): sv_rate_check(), sv_rate_accept() and a wrap
 * when it fell from the previous count. */
unsigned sv_rate_observe(struct sv_rate *l, uint32_t smp);

/* Samples per second for sample times: stated, else a configured or learned W, else 0 (unknown).
 * sv_rate_samples_of() is the rule on copies of the fields (svsub's stream statistics). */
static inline uint32_t sv_rate_samples_of(uint32_t stated, unsigned source, uint32_t wrap)
{
	if (stated)
		return stated;
	return source == SV_RATE_CONFIGURED || source == SV_RATE_LEARNED ? wrap : 0;
}

static inline uint32_t sv_rate_samples(const struct sv_rate *l)
{
	return sv_rate_samples_of(l->stated, l->source, l->wrap);
}

/* sv_rate_samples(), else the smallest nominal rate of the standard profiles (sv_profiles) above the
 * highest count, else SV_RATE_SPACE: a provisional rate for a tool that must key a sample before the first
 * wrap (svtrace's records). */
uint32_t sv_rate_guess(const struct sv_rate *l);

/*
 * A rate another tool wrote in its records (a STREAM record's sample_rate), as a reader of them takes it
 * (svreport). A tool that defined the stream without a rate (0: not known) and later with one learned it
 * mid-run from a wrap: that rate is a candidate until the stream's next frame in the tool's records
 * confirms it (a count below it) or disproves it (a count at or above it, which the tool itself will have
 * seen too); a redefinition replaces it; at the end of the records a candidate standing is taken. A rate in
 * the tool's first definition is what it was told (stated, configured): taken at once. One struct per
 * (record file, stream), zeroed to start.
 */
struct sv_rate_claim {
	uint32_t cand;		/* candidate rate, 0 none */
	bool learning;		/* defined without a rate before: later rates are candidates */
};

/* The tool (re-)defined the stream with @rate (0 unknown). Returns the rate to take now, 0 none. */
uint32_t sv_rate_claim_define(struct sv_rate_claim *c, uint32_t rate);
/* The stream's next frame in the tool's records has count @smp: the candidate confirmed (returned) or
 * dropped (0). */
uint32_t sv_rate_claim_frame(struct sv_rate_claim *c, uint32_t smp);
/* The tool's records ended: the candidate standing (0 none). */
uint32_t sv_rate_claim_end(struct sv_rate_claim *c);

/* The rate that puts sample @smp of TAI second @sec at @t_ns to the nanosecond (sv_sample_time_ns), from a
 * record that carries the sample time (svsub's T3 once it knows the rate); 0 when none does or when it
 * cannot be told apart from its neighbours (smp < 16: from 16 on, neighbouring rates put the sample ~1 us
 * apart at 4000/s). */
uint32_t sv_rate_of_sample_time(int64_t sec, uint32_t smp, int64_t t_ns);

#endif /* SV_RATE_H */

/* SPDX-License-Identifier: Apache-2.0 */
/* The rate and wrap learner: the rules are in sv_rate.h. */
#include "sv_rate.h"

#include <errno.h>
#include <string.h>

#include "sv_clock.h"
#include "sv_dataset.h"

const char *sv_rate_source_name(unsigned source)
{
	switch (source) {
	case SV_RATE_DEFAULT:
		return "default";
	case SV_RATE_STATED:
		return "stated";
	case SV_RATE_LEARNED:
		return "learned";
	case SV_RATE_CONFIGURED:
		return "configured";
	}
	return "unknown";
}

int sv_rate_init(struct sv_rate *l, uint32_t configured_wrap)
{
	memset(l, 0, sizeof(*l));
	l->wrap = SV_RATE_SPACE;
	if (configured_wrap > SV_RATE_SPACE)
		return -EINVAL;
	if (configured_wrap) {
		l->wrap = configured_wrap;
		l->source = SV_RATE_CONFIGURED;
	}
	return 0;
}

unsigned sv_rate_state_slow(struct sv_rate *l, uint32_t rate)
{
	/* a statement proven wrong once is not trusted again, nor one the counts already contradict */
	if (rate > SV_RATE_SPACE || l->violations || (l->seen && l->max >= rate))
		return 0;
	l->wrap = rate;
	l->source = SV_RATE_STATED;
	return SV_RATE_EV_STATED;
}

unsigned sv_rate_check_slow(struct sv_rate *l, uint32_t smp)
{
	switch (l->source) {
	case SV_RATE_STATED:
		l->violations++;
		l->wrap = SV_RATE_SPACE;
		l->source = SV_RATE_DEFAULT;
		return SV_RATE_EV_VIOLATION | SV_RATE_EV_WITHDRAWN;
	case SV_RATE_CONFIGURED:
		l->violations++;
		return SV_RATE_EV_VIOLATION;
	case SV_RATE_LEARNED:
		l->wrap = smp + 1;	/* its lap had lost the top counts: W is at least this */
		return SV_RATE_EV_RAISED;
	}
	return 0;	/* default: W is smpCnt's whole space */
}

/* The count fell from @from to @to: the end of a lap (a wrap), not a reordering near its start. */
static bool is_wrap(uint32_t from, uint32_t to)
{
	return from >= SV_RATE_WRAP_FROM_MIN && to < (from + 1) / 4;
}

/* A wrap after the highest count l->max: W is at least max + 1. */
static unsigned wrapped(struct sv_rate *l)
{
	uint32_t w = l->max + 1;

	if (l->source == SV_RATE_DEFAULT) {
		l->wrap = w;
		l->source = SV_RATE_LEARNED;
		return SV_RATE_EV_WRAPPED | SV_RATE_EV_LEARNED;
	}
	if (w > l->wrap) {
		l->wrap = w;
		return SV_RATE_EV_WRAPPED | SV_RATE_EV_RAISED;
	}
	return SV_RATE_EV_WRAPPED;
}

static bool learning(const struct sv_rate *l)
{
	return l->source == SV_RATE_DEFAULT || l->source == SV_RATE_LEARNED;
}

unsigned sv_rate_restart(struct sv_rate *l, uint32_t start, uint32_t end)
{
	unsigned ev = 0;

	if (learning(l) && l->seen && is_wrap(l->max, start))
		ev = wrapped(l);
	l->max = end;
	l->seen = true;
	return ev;
}

unsigned sv_rate_observe(struct sv_rate *l, uint32_t smp)
{
	unsigned ev = sv_rate_check(l, smp);
	bool fell = l->seen && is_wrap(l->last, smp);

	sv_rate_accept(l, smp);
	l->last = smp;
	if (fell && learning(l))
		ev |= wrapped(l);
	return ev;
}

uint32_t sv_rate_guess(const struct sv_rate *l)
{
	uint32_t r = sv_rate_samples(l), best = 0;

	if (r)
		return r;
	for (unsigned i = 0; i < sv_profiles_count; i++) {
		uint32_t p = sv_profiles[i].sample_rate;

		if (p > l->max && (!best || p < best))
			best = p;
	}
	return best ? best : SV_RATE_SPACE;
}

uint32_t sv_rate_claim_define(struct sv_rate_claim *c, uint32_t rate)
{
	c->cand = 0;
	if (!rate) {
		c->learning = true;
		return 0;
	}
	if (c->learning) {
		c->cand = rate;
		return 0;
	}
	return rate;
}

uint32_t sv_rate_claim_frame(struct sv_rate_claim *c, uint32_t smp)
{
	uint32_t rate = c->cand;

	c->cand = 0;
	return smp < rate ? rate : 0;
}

uint32_t sv_rate_claim_end(struct sv_rate_claim *c)
{
	uint32_t rate = c->cand;

	c->cand = 0;
	return rate;
}

uint32_t sv_rate_of_sample_time(int64_t sec, uint32_t smp, int64_t t_ns)
{
	int64_t d = t_ns - sec * SV_NSEC_PER_SEC;
	double q;
	uint32_t rate;

	if (smp < 16 || d <= 0 || d >= SV_NSEC_PER_SEC)
		return 0;
	q = (double)smp * 1e9 / (double)d + 0.5;
	if (q < 1 || q > SV_RATE_SPACE)
		return 0;
	rate = (uint32_t)q;
	if (smp >= rate || sv_sample_time_ns(sec, smp, rate) != t_ns)
		return 0;
	return rate;
}

// SPDX-License-Identifier: Apache-2.0
/* sv_rate: the wrap and rate learner. One row per rule of the three learners it replaces (svsub's tracker,
 * svtrace's records, svreport's join): steps in, the events each step returns, and where W, its source and
 * the rate end. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sv_clock.h"
#include "sv_rate.h"

enum op { END = 0, STATE, CHECK, ACCEPT, RESTART, OBSERVE };

/* ACCEPT and OBSERVE take the counts a..b in order (b < a: a..65535 then 0..b, a lap boundary), and
 * expect the OR of their events; RESTART is start a, end b. */
struct step {
	enum op op;
	uint32_t a, b;
	unsigned ev;
};

struct row {
	const char *name;
	const char *from;	/* the learner that had the rule */
	uint32_t configured;
	struct step steps[8];
	uint32_t wrap;
	enum sv_rate_source source;
	uint32_t samples;	/* sv_rate_samples() */
	uint64_t violations;
};

#define WR SV_RATE_EV_WRAPPED
#define LE SV_RATE_EV_LEARNED
#define RA SV_RATE_EV_RAISED
#define ST SV_RATE_EV_STATED
#define VI SV_RATE_EV_VIOLATION
#define WI SV_RATE_EV_WITHDRAWN
#define SP SV_RATE_SPACE

static const struct row rows[] = {
	{ "nothing known", "all", 0, { { ACCEPT, 0, 100, 0 } }, SP, SV_RATE_DEFAULT, 0, 0 },
	/* svsub: cfg.wrap */
	{ "configured", "svsub", 1000, { { ACCEPT, 990, 999, 0 }, { CHECK, 999, 0, 0 } }, 1000, SV_RATE_CONFIGURED,
	  1000, 0 },
	{ "configured, a count beyond it", "svsub", 1000, { { CHECK, 1200, 0, VI }, { CHECK, 1300, 0, VI } }, 1000,
	  SV_RATE_CONFIGURED, 1000, 2 },
	{ "configured wins over stated", "svsub", 1000, { { STATE, 4000, 0, 0 } }, 1000, SV_RATE_CONFIGURED, 4000,
	  0 },
	{ "configured wins over a wrap", "svsub", 1000, { { ACCEPT, 900, 999, 0 }, { RESTART, 0, 7, 0 } }, 1000,
	  SV_RATE_CONFIGURED, 1000, 0 },
	/* svsub: smpRate/smpMod */
	{ "stated", "svsub", 0, { { STATE, 4000, 0, ST }, { STATE, 4000, 0, 0 }, { ACCEPT, 3990, 3999, 0 },
	  { CHECK, 0, 0, 0 } }, 4000, SV_RATE_STATED, 4000, 0 },
	{ "stated 65536: W does not change", "svsub", 0, { { STATE, 65536, 0, 0 } }, SP, SV_RATE_DEFAULT, 65536, 0 },
	{ "stated beyond smpCnt's space", "svsub", 0, { { STATE, 80000, 0, 0 } }, SP, SV_RATE_DEFAULT, 80000, 0 },
	{ "stated, contradicted by a count seen before", "svsub", 0, { { ACCEPT, 4500, 4500, 0 },
	  { STATE, 4000, 0, 0 } }, SP, SV_RATE_DEFAULT, 4000, 0 },
	{ "stated, violated (libiec61850)", "svsub", 0, { { STATE, 80 * 50, 0, ST }, { CHECK, 3999, 0, 0 },
	  { CHECK, 4000, 0, VI | WI }, { CHECK, 4001, 0, 0 } }, SP, SV_RATE_DEFAULT, 4000, 1 },
	{ "stated, violated: not adopted again", "svsub", 0, { { STATE, 4000, 0, ST }, { CHECK, 4000, 0, VI | WI },
	  { STATE, 4000, 0, 0 }, { STATE, 4800, 0, 0 } }, SP, SV_RATE_DEFAULT, 4800, 1 },
	{ "stated, then none: no rate", "svsub", 0, { { STATE, 4000, 0, ST }, { STATE, 0, 0, 0 } }, 4000,
	  SV_RATE_STATED, 0, 0 },
	{ "stated after learned: learned stays", "svsub", 0, { { ACCEPT, 4790, 4799, 0 }, { RESTART, 0, 7, WR | LE },
	  { STATE, 4000, 0, 0 } }, 4800, SV_RATE_LEARNED, 4000, 0 },
	/* svsub: a confirmed restart run is a wrap when it starts near zero */
	{ "learned from a restart at 0", "svsub", 0, { { ACCEPT, 3990, 3999, 0 }, { RESTART, 0, 7, WR | LE } }, 4000,
	  SV_RATE_LEARNED, 4000, 0 },
	{ "learned, the run started after a loss at the wrap", "svsub", 0, { { ACCEPT, 3996, 3999, 0 },
	  { RESTART, 2, 9, WR | LE } }, 4000, SV_RATE_LEARNED, 4000, 0 },
	{ "a restart mid-lap is no wrap", "svsub", 0, { { ACCEPT, 100, 110, 0 }, { RESTART, 30, 37, 0 } }, SP,
	  SV_RATE_DEFAULT, 0, 0 },
	{ "a restart resets the highest count", "svsub", 0, { { ACCEPT, 3000, 3100, 0 }, { RESTART, 1000, 1007, 0 },
	  { ACCEPT, 1008, 1999, 0 }, { RESTART, 0, 7, WR | LE } }, 2000, SV_RATE_LEARNED, 2000, 0 },
	{ "a restart under a stated W is no wrap", "svsub", 0, { { STATE, 4000, 0, ST }, { ACCEPT, 3990, 3999, 0 },
	  { RESTART, 0, 7, 0 } }, 4000, SV_RATE_STATED, 4000, 0 },
	{ "learned too small (top lost), raised by a count", "svsub", 0, { { ACCEPT, 3990, 3998, 0 },
	  { RESTART, 0, 7, WR | LE }, { ACCEPT, 8, 3998, 0 }, { CHECK, 3999, 0, RA } }, 4000, SV_RATE_LEARNED, 4000,
	  0 },
	{ "a later wrap only raises", "svsub", 0, { { ACCEPT, 4790, 4799, 0 }, { RESTART, 0, 7, WR | LE },
	  { ACCEPT, 8, 4000, 0 }, { RESTART, 0, 7, WR } }, 4800, SV_RATE_LEARNED, 4800, 0 },
	/* one wrap criterion for both ways of feeding (a fall from >= 64 to below a quarter): svsub learned
	 * any wrap, svtrace only from above 64 */
	{ "no wrap from below 64", "svtrace", 0, { { ACCEPT, 0, 40, 0 }, { RESTART, 0, 7, 0 } }, SP, SV_RATE_DEFAULT,
	  0, 0 },
	/* svtrace: counts in arrival order */
	{ "observed wrap", "svtrace", 0, { { OBSERVE, 3990, 3999, 0 }, { OBSERVE, 0, 10, WR | LE } }, 4000,
	  SV_RATE_LEARNED, 4000, 0 },
	{ "observed wrap, copies to two ports", "svtrace", 0, { { OBSERVE, 3999, 3999, 0 }, { OBSERVE, 3999, 3999, 0 },
	  { OBSERVE, 0, 0, WR | LE }, { OBSERVE, 3999, 3999, 0 }, { OBSERVE, 0, 0, WR } }, 4000, SV_RATE_LEARNED,
	  4000, 0 },
	{ "observed: a late copy is no wrap", "svtrace", 0, { { OBSERVE, 100, 200, 0 }, { OBSERVE, 99, 99, 0 } },
	  SP, SV_RATE_DEFAULT, 0, 0 },
	/* svtrace learned from a fall below half of the previous count: a restart mid-lap taught it a W */
	{ "observed: a fall mid-lap is no wrap", "svtrace", 0, { { OBSERVE, 2900, 3000, 0 },
	  { OBSERVE, 1000, 1001, 0 } }, SP, SV_RATE_DEFAULT, 0, 0 },
	{ "observed: no wrap from below 64", "svtrace", 0, { { OBSERVE, 0, 63, 0 }, { OBSERVE, 0, 1, 0 } }, SP,
	  SV_RATE_DEFAULT, 0, 0 },
	/* svtrace withdrew a learned W at a count >= W until the next wrap; svsub raised it: raised */
	{ "observed: learned too small, raised by a count", "svtrace", 0, { { OBSERVE, 3900, 3998, 0 },
	  { OBSERVE, 0, 3998, WR | LE }, { OBSERVE, 3999, 3999, RA }, { OBSERVE, 0, 5, WR } }, 4000,
	  SV_RATE_LEARNED, 4000, 0 },
	{ "observed: a lap with fewer counts does not lower W", "svtrace", 0, { { OBSERVE, 4790, 4799, 0 },
	  { OBSERVE, 0, 4000, WR | LE }, { OBSERVE, 0, 0, WR } }, 4800, SV_RATE_LEARNED, 4800, 0 },
	{ "observed across smpCnt's space", "svtrace", 0, { { OBSERVE, 65530, 5, WR | LE } }, SP, SV_RATE_LEARNED,
	  SP, 0 },
};

static void run_steps(const struct row *rw, struct sv_rate *l)
{
	for (unsigned i = 0; i < 8 && rw->steps[i].op != END; i++) {
		const struct step *s = &rw->steps[i];
		unsigned ev = 0;
		uint32_t c = s->a;

		switch (s->op) {
		case STATE:
			ev = sv_rate_state(l, s->a);
			break;
		case CHECK:
			ev = sv_rate_check(l, s->a);
			break;
		case RESTART:
			ev = sv_rate_restart(l, s->a, s->b);
			break;
		case ACCEPT:
		case OBSERVE:
			for (;;) {
				if (s->op == OBSERVE)
					ev |= sv_rate_observe(l, c);
				else
					sv_rate_accept(l, c);
				if (c == s->b)
					break;
				c = (c + 1) % SV_RATE_SPACE;
			}
			break;
		case END:
			break;
		}
		print_message("  step %u: events 0x%x (want 0x%x), W %u\n", i, ev, s->ev, l->wrap);
		assert_int_equal(ev, s->ev);
	}
}

static void test_rows(void **state)
{
	(void)state;
	for (unsigned k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
		const struct row *rw = &rows[k];
		struct sv_rate l;

		print_message("row: %s (%s)\n", rw->name, rw->from);
		assert_int_equal(sv_rate_init(&l, rw->configured), 0);
		run_steps(rw, &l);
		assert_int_equal(l.wrap, rw->wrap);
		assert_int_equal(l.source, rw->source);
		assert_int_equal(sv_rate_samples(&l), rw->samples);
		assert_int_equal(l.violations, rw->violations);
	}
}

static void test_init(void **state)
{
	struct sv_rate l;

	(void)state;
	assert_int_equal(sv_rate_init(&l, SV_RATE_SPACE + 1), -EINVAL);
	assert_int_equal(l.wrap, SV_RATE_SPACE);
	assert_int_equal(l.source, SV_RATE_DEFAULT);
	assert_int_equal(sv_rate_init(&l, SV_RATE_SPACE), 0);
	assert_int_equal(l.source, SV_RATE_CONFIGURED);
	assert_string_equal(sv_rate_source_name(SV_RATE_DEFAULT), "default");
	assert_string_equal(sv_rate_source_name(SV_RATE_STATED), "stated");
	assert_string_equal(sv_rate_source_name(SV_RATE_LEARNED), "learned");
	assert_string_equal(sv_rate_source_name(SV_RATE_CONFIGURED), "configured");
	assert_string_equal(sv_rate_source_name(9), "unknown");
}

/* svtrace keys its records before the first wrap with the standard rate above the highest count. */
static void test_guess(void **state)
{
	static const struct {
		uint32_t max, guess;
	} cases[] = {
		{ 0, 4000 }, { 960, 4000 }, { 3999, 4000 }, { 4000, 4800 }, { 4799, 4800 }, { 4800, 12800 },
		{ 12800, 14400 }, { 14400, 15360 }, { 15360, SV_RATE_SPACE }, { 60000, SV_RATE_SPACE },
	};
	struct sv_rate l;

	(void)state;
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		sv_rate_init(&l, 0);
		sv_rate_accept(&l, cases[i].max);
		assert_int_equal(sv_rate_guess(&l), cases[i].guess);
	}
	/* once known, the guess is the rate */
	sv_rate_init(&l, 0);
	for (uint32_t c = 4790; c < 4800; c++)
		sv_rate_observe(&l, c);
	sv_rate_observe(&l, 0);
	assert_int_equal(sv_rate_guess(&l), 4800);
	sv_rate_init(&l, 0);
	sv_rate_state(&l, 14400);
	assert_int_equal(sv_rate_guess(&l), 14400);
}

/* svreport: rates other tools recorded. Steps: D define with a rate (0 unknown), F a frame, E the end;
 * each returns the rate the reader takes then (0 none). */
struct claim_row {
	const char *name;
	struct {
		char op;
		uint32_t v;
		uint32_t take;
	} steps[6];
};

static const struct claim_row claim_rows[] = {
	{ "a rate in the first definition: taken", { { 'D', 4000, 4000 }, { 'F', 5, 0 } } },
	{ "learned mid-run, confirmed by the next frame", { { 'D', 0, 0 }, { 'D', 4000, 0 }, { 'F', 3, 4000 },
	  { 'F', 4, 0 } } },
	{ "learned mid-run, disproved by the next frame", { { 'D', 0, 0 }, { 'D', 3001, 0 }, { 'F', 3001, 0 },
	  { 'E', 0, 0 } } },
	{ "a redefinition replaces the candidate", { { 'D', 0, 0 }, { 'D', 3001, 0 }, { 'D', 4000, 0 },
	  { 'F', 3500, 4000 } } },
	{ "withdrawn by the tool (rate 0)", { { 'D', 0, 0 }, { 'D', 3001, 0 }, { 'D', 0, 0 }, { 'F', 3, 0 },
	  { 'E', 0, 0 } } },
	{ "standing at the end: taken", { { 'D', 0, 0 }, { 'D', 4000, 0 }, { 'E', 0, 4000 } } },
	{ "after learning, every later rate is a candidate", { { 'D', 0, 0 }, { 'D', 4000, 0 }, { 'F', 1, 4000 },
	  { 'D', 4800, 0 }, { 'F', 4000, 4800 } } },
};

static void test_claims(void **state)
{
	(void)state;
	for (unsigned k = 0; k < sizeof(claim_rows) / sizeof(claim_rows[0]); k++) {
		const struct claim_row *rw = &claim_rows[k];
		struct sv_rate_claim c;

		memset(&c, 0, sizeof(c));
		print_message("claim: %s\n", rw->name);
		for (unsigned i = 0; i < 6 && rw->steps[i].op; i++) {
			uint32_t got = rw->steps[i].op == 'D' ? sv_rate_claim_define(&c, rw->steps[i].v)
				     : rw->steps[i].op == 'F' ? sv_rate_claim_frame(&c, rw->steps[i].v)
							      : sv_rate_claim_end(&c);

			assert_int_equal(got, rw->steps[i].take);
		}
	}
}

/* svreport: a record carrying its sample time tells the rate. */
static void test_of_sample_time(void **state)
{
	static const uint32_t rates[] = { 4000, 4800, 12800, 14400, 15360, 80, 65535 };
	const int64_t sec = 1700000000;

	(void)state;
	for (unsigned i = 0; i < sizeof(rates) / sizeof(rates[0]); i++)
		for (uint32_t smp = 16; smp < rates[i]; smp += rates[i] / 7 + 1) {
			int64_t t = sv_sample_time_ns(sec, smp, rates[i]);

			assert_int_equal(sv_rate_of_sample_time(sec, smp, t), rates[i]);
			assert_int_equal(sv_rate_of_sample_time(sec, smp, t + 1), 0);	/* no rate puts it there */
		}
	assert_int_equal(sv_rate_of_sample_time(sec, 15, sv_sample_time_ns(sec, 15, 4000)), 0);	/* too close */
	assert_int_equal(sv_rate_of_sample_time(sec, 100, sec * SV_NSEC_PER_SEC), 0);	/* at the second */
	assert_int_equal(sv_rate_of_sample_time(sec, 100, (sec + 1) * SV_NSEC_PER_SEC), 0);	/* beyond it */
	assert_int_equal(sv_rate_of_sample_time(sec, 100, sec * SV_NSEC_PER_SEC - 5), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_init),
		cmocka_unit_test(test_guess),
		cmocka_unit_test(test_claims),
		cmocka_unit_test(test_of_sample_time),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

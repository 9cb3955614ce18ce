// SPDX-License-Identifier: Apache-2.0
/*
 * Why late, summed (common/sv_why.c): a frame's dominant cause and its holder, the run's tally (totals,
 * dominant causes most frequent first, the rest as "other"), the named share, the one-line summary.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "sv_why.h"

/* A hop of @len ns: @a ns to cause @ca, the rest to @cb; holder @comm (policy, prio) holding @held ns. */
static struct sv_rec_why hop(int64_t len, unsigned ca, int64_t a, unsigned cb, const char *comm, unsigned policy,
			     unsigned prio, int64_t held)
{
	struct sv_rec_why h = { .t_from_ns = 1000, .t_to_ns = 1000 + len, .holder_policy = (uint8_t)policy,
				.holder_prio = (uint8_t)prio, .holder_ns = held };

	h.ns[ca] += a;
	h.ns[cb] += len - a;
	if (comm) {
		h.holder_pid = 7;
		strncpy(h.holder_comm, comm, sizeof(h.holder_comm) - 1);
	}
	return h;
}

static void test_dominant(void **state)
{
	struct sv_rec_why h[2] = { hop(100, SV_WHY_CARRIED, 100, SV_WHY_STEAL, NULL, 0, 0, 0),
				   hop(1000, SV_WHY_RUNQUEUE, 700, SV_WHY_STEAL, "hog", 1, 90, 650) };
	struct sv_why_dom d;
	char s[96];

	(void)state;
	/* run queue 700 over steal 300 and carried 100: the holder named */
	assert_int_equal(sv_why_dominant(h, 2, &d), 700);
	assert_int_equal(d.cause, SV_WHY_RUNQUEUE);
	sv_why_dom_format(&d, s, sizeof(s));
	assert_string_equal(s, "runqueue behind hog (SCHED_FIFO 90)");
	/* the two hops' steal (300 + 0) against one hop's carried: summed over the hops */
	h[1] = hop(1000, SV_WHY_STEAL, 900, SV_WHY_UNEXPLAINED, NULL, 0, 0, 0);
	assert_int_equal(sv_why_dominant(h, 2, &d), 900);
	sv_why_dom_format(&d, s, sizeof(s));
	assert_string_equal(s, "steal");
	/* a holder whose policy was not known: its name only */
	h[1] = hop(1000, SV_WHY_RUNQUEUE, 900, SV_WHY_STEAL, "gone", SV_WHY_POLICY_UNKNOWN, 0, 900);
	sv_why_dominant(h, 2, &d);
	sv_why_dom_format(&d, s, sizeof(s));
	assert_string_equal(s, "runqueue behind gone");
	/* no time at all: unexplained */
	assert_int_equal(sv_why_dominant(h, 0, &d), 0);
	assert_int_equal(d.cause, SV_WHY_UNEXPLAINED);
}

static void test_tally(void **state)
{
	static struct sv_why_tally t;
	struct sv_rec_why h;
	char line[512];

	(void)state;
	memset(&t, 0, sizeof(t));
	sv_why_tally_format(&t, line, sizeof(line));
	assert_string_equal(line, "of 0 late frames: none");
	/* 44 steal, 2 run queue behind stress-ng, 1 unexplained (the example) */
	for (int i = 0; i < 44; i++) {
		h = hop(4000, SV_WHY_STEAL, 3900, SV_WHY_UNEXPLAINED, NULL, 0, 0, 0);
		sv_why_tally_add(&t, &h, 1);
	}
	h = hop(2000, SV_WHY_RUNQUEUE, 2000, SV_WHY_STEAL, "stress-ng", 1, 90, 2000);
	sv_why_tally_add(&t, &h, 1);
	sv_why_tally_add(&t, &h, 1);
	h = hop(1000, SV_WHY_UNEXPLAINED, 1000, SV_WHY_STEAL, NULL, 0, 0, 0);
	sv_why_tally_add(&t, &h, 1);
	sv_why_tally_sort(&t);
	sv_why_tally_format(&t, line, sizeof(line));
	assert_string_equal(line, "of 47 late frames: 44 steal, 2 runqueue behind stress-ng (SCHED_FIFO 90), 1 unexplained");
	assert_int_equal(t.frames, 47);
	assert_int_equal(t.late_ns, 44 * 4000 + 2 * 2000 + 1000);
	assert_int_equal(t.ns[SV_WHY_STEAL], 44 * 3900);
	assert_int_equal(t.ns[SV_WHY_UNEXPLAINED], 44 * 100 + 1000);
	assert_true(sv_why_named_share(&t) > 0.9701 && sv_why_named_share(&t) < 0.9702);	/* 175600 of 181000 */
	/* more dominant causes than the line tells: the rest as "other" */
	for (unsigned c = SV_WHY_SOFTIRQ; c < SV_WHY_SOFTIRQ + 8; c++) {
		h = hop(500, c, 500, SV_WHY_STEAL, NULL, 0, 0, 0);
		sv_why_tally_add(&t, &h, 1);
	}
	sv_why_tally_sort(&t);
	sv_why_tally_format(&t, line, sizeof(line));
	assert_string_equal(line, "of 55 late frames: 44 steal, 2 runqueue behind stress-ng (SCHED_FIFO 90), 1 softirq_hi, "
				  "1 softirq_timer, 1 softirq_net_tx, 1 softirq_net_rx, 5 other");
	/* the line is cut, never overrun */
	sv_why_tally_format(&t, line, 20);
	assert_int_equal(strlen(line), 19);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dominant),
		cmocka_unit_test(test_tally),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

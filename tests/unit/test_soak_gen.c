// SPDX-License-Identifier: Apache-2.0
/*
 * The synthetic soak (tests/bench/soak_gen.h, bench_soakgen) as svreport's soak tests will read it, in a short
 * version (2 hours, 1 MiB parts): every tool's file and rotated parts of one run each; guest 1's killed run
 * set aside (no END, its own run_id) and its restart; the intervals on 10 s TAI boundaries in every file, with
 * every key; svtrace's clock step (CLOCK record, +3 ms); windows kept and counted; losses in the intervals.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../bench/soak_gen.h"

struct file_sum {
	unsigned parts;
	uint64_t run_id;
	bool clean_end;		/* the live file's */
	uint64_t intervals, windows, summaries, clock_steps, lost, missing, dropped, late;
	int64_t step_ns;
	uint32_t first_sec, last_sec;
	uint32_t keys_per_interval; /* INTERVAL records of the last interval seen */
};

/* Reads FILE.N .. FILE.1, FILE (oldest first), as svreport does. */
static void read_set(const char *dir, const char *name, struct file_sum *s)
{
	char path[512];
	unsigned n = 0;
	uint32_t cur_sec = 0;

	memset(s, 0, sizeof(*s));
	for (;;) {
		snprintf(path, sizeof(path), "%s/%s.%u", dir, name, n + 1);
		if (access(path, F_OK))
			break;
		n++;
	}
	for (unsigned p = n + 1; p-- > 0;) {
		struct sv_record_reader *r;
		struct sv_rec rec;
		int ret;

		if (p)
			snprintf(path, sizeof(path), "%s/%s.%u", dir, name, p);
		else
			snprintf(path, sizeof(path), "%s/%s", dir, name);
		assert_int_equal(sv_record_reader_open(&r, path), 0);
		if (!s->run_id)
			s->run_id = sv_record_reader_header(r)->run_id;
		assert_int_equal(sv_record_reader_header(r)->run_id, s->run_id); /* one run */
		assert_int_equal(sv_record_reader_header(r)->part, n - p);
		while ((ret = sv_record_reader_next(r, &rec)) == 1) {
			switch (rec.kind) {
			case SV_REC_INTERVAL:
				assert_int_equal(rec.u.interval.tai_sec % 10, 0);
				assert_int_equal(rec.u.interval.period_ms, 10000);
				if (!s->first_sec)
					s->first_sec = rec.u.interval.tai_sec;
				if (rec.u.interval.tai_sec != cur_sec) {
					cur_sec = rec.u.interval.tai_sec;
					s->keys_per_interval = 0;
				}
				s->keys_per_interval++;
				s->last_sec = rec.u.interval.tai_sec;
				s->intervals++;
				s->lost += rec.u.interval.lost;
				s->missing += rec.u.interval.missing;
				s->dropped += rec.u.interval.dropped;
				s->late += rec.u.interval.late;
				break;
			case SV_REC_WINDOW:
				if (rec.u.window.flags & SV_REC_WINDOW_F_SUMMARY)
					s->summaries++;
				else
					s->windows++;
				break;
			case SV_REC_CLOCK:
				if (rec.u.clock.flags & SV_REC_CLOCK_F_STEP) {
					s->clock_steps++;
					s->step_ns = rec.u.clock.step_ns;
				}
				break;
			default:
				break;
			}
		}
		assert_int_equal(ret, 0);
		if (!p)
			s->clean_end = sv_record_reader_clean_end(r);
		else
			assert_true(sv_record_reader_clean_end(r)); /* a rotated part ends with END */
		sv_record_reader_close(r);
	}
	s->parts = n + 1;
}

static void test_soak_gen_short(void **state)
{
	char dir[64], cmd[128];
	struct sg_cfg g = { .dir = dir, .hours = 2, .rotate_mib = 1 };
	struct sg_result res;
	struct file_sum pub, trace, g1a, g1b, g2;
	const uint32_t sec0 = (uint32_t)SS_SEC0;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/test_soak_gen.XXXXXX");
	assert_non_null(mkdtemp(dir));
	assert_int_equal(sg_generate(&g, &res), 0);
	read_set(dir, "pub.rec", &pub);
	read_set(dir, "trace.rec", &trace);
	read_set(dir, "g2.rec", &g2);
	read_set(dir, "g1.rec", &g1b);
	read_set(dir, res.g1_aside, &g1a);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);

	/* whole runs: every interval of the 2 h with every key, several parts */
	assert_int_equal(pub.intervals, 720 * 8);
	assert_int_equal(g2.intervals, 720 * 16);
	assert_int_equal(trace.first_sec, sec0 - 10); /* its clock 3 ms behind TAI at start */
	assert_int_equal(trace.intervals, 721 * 48);
	assert_int_equal(pub.first_sec, sec0);
	assert_int_equal(pub.last_sec, sec0 + 7190);
	assert_int_equal(trace.keys_per_interval, 48);
	assert_true(pub.parts >= 2 && trace.parts >= 2 && g2.parts >= 2);
	assert_true(pub.clean_end && trace.clean_end && g2.clean_end && g1b.clean_end);
	/* the step */
	assert_int_equal(trace.clock_steps, 1);
	assert_int_equal(trace.step_ns, 3 * SV_NSEC_PER_MSEC);
	assert_int_equal(pub.clock_steps + g2.clock_steps + g1a.clock_steps + g1b.clock_steps, 0);
	/* guest 1: killed at 1 h (no END, the intervals up to its last flushed block), restarted 60 s later */
	assert_string_equal(res.g1_aside, "g1-20270115T090023Z.rec");
	assert_false(g1a.clean_end);
	assert_int_not_equal(g1a.run_id, g1b.run_id);
	assert_true(g1a.last_sec >= sec0 + 3600 - 30 && g1a.last_sec < sec0 + 3600);
	assert_int_equal(g1b.first_sec, sec0 + 3660);
	assert_int_equal(g1b.intervals, 354 * 16);
	/* windows and losses: a loss / drop / change / restart every 15 min, a late frame every 5 min */
	assert_true(pub.windows >= 5 && trace.windows >= 5 && g2.windows >= 5);
	assert_true(g2.lost > 0 && trace.missing > 0 && g2.dropped > 0 && trace.late > 0);
	assert_int_equal(g2.lost, 40 * 2); /* the faults cycle every hour: the loss at 1 h, on both keys */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_soak_gen_short),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: Apache-2.0
/* sv_clock: sample-time arithmetic at second boundaries and wraps for every profile rate, schedules,
 * wrap helpers, sync-state formatting, clock conversion. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sv_clock.h"

#define NS SV_NSEC_PER_SEC
static const uint32_t rates[] = { 4000, 4800, 12800, 15360, 14400 };
#define NRATES (sizeof(rates) / sizeof(rates[0]))

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void test_clock_names(void **state)
{
	enum sv_clock_id id;
	unsigned i;

	(void)state;
	for (i = 0; i < SV_CLOCK_COUNT; i++) {
		assert_int_equal(sv_clock_parse(sv_clock_name((enum sv_clock_id)i), &id), 0);
		assert_int_equal(id, i);
	}
	assert_string_equal(sv_clock_name(SV_CLOCK_TAI), "tai");
	assert_string_equal(sv_clock_name(SV_CLOCK_PHC), "phc");
	assert_int_equal(sv_clock_parse("TAI", &id), 0);
	assert_int_equal(id, SV_CLOCK_TAI);
	assert_int_equal(sv_clock_parse("utc", &id), -EINVAL);
	assert_string_equal(sv_clock_name((enum sv_clock_id)99), "unknown");
	assert_int_equal(sv_clock_now_ns(SV_CLOCK_PHC), -EINVAL);
	assert_true(sv_clock_now_ns(SV_CLOCK_MONOTONIC) > 0);
	assert_true(sv_clock_now_ns(SV_CLOCK_TAI) > 1500000000LL * NS);
}

static void test_timespec(void **state)
{
	static const struct {
		int64_t ns;
		long long sec;
		long nsec;
	} cases[] = {
		{ 0, 0, 0 },
		{ 1, 0, 1 },
		{ NS, 1, 0 },
		{ -1, -1, 999999999 },
		{ -NS, -1, 0 },
		{ -NS - 1, -2, 999999999 },
		{ 1700000000LL * NS + 123, 1700000000LL, 123 },
	};
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct timespec ts = sv_ns_to_timespec(cases[i].ns);

		assert_int_equal(ts.tv_sec, cases[i].sec);
		assert_int_equal(ts.tv_nsec, cases[i].nsec);
		assert_int_equal(sv_timespec_to_ns(&ts), cases[i].ns);
		assert_int_equal(sv_ns_to_sec_floor(cases[i].ns), cases[i].sec);
	}
}

/* floor(smpCnt * 1e9 / rate), exact, at both ends of the second and in between. */
static void test_sample_offset_table(void **state)
{
	static const struct {
		uint32_t rate, cnt;
		int64_t off;
	} cases[] = {
		{ 4000, 0, 0 },		{ 4000, 1, 250000 },	   { 4000, 3999, 999750000 },
		{ 4000, 4000, NS },	{ 4800, 1, 208333 },	   { 4800, 2, 416666 },
		{ 4800, 3, 625000 },	{ 4800, 4799, 999791666 }, { 12800, 1, 78125 },
		{ 12800, 12799, 999921875 }, { 15360, 1, 65104 },  { 15360, 3, 195312 },
		{ 15360, 15359, 999934895 }, { 14400, 1, 69444 },  { 14400, 7, 486111 },
		{ 14400, 14399, 999930555 }, { 0, 5, 0 },
	};
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(sv_sample_offset_ns(cases[i].cnt, cases[i].rate), cases[i].off);
}

/* Over every sample of a second at every profile rate: never drifts (within 1 ns of the real instant),
 * strictly increasing, steps of floor or ceil of the period, and the second closes at exactly 1e9. */
static void test_sample_offset_all_rates(void **state)
{
	unsigned r;

	(void)state;
	for (r = 0; r < NRATES; r++) {
		uint32_t rate = rates[r], k;
		int64_t per_floor = NS / rate, per_ceil = (NS + rate - 1) / rate, prev = -1;

		for (k = 0; k <= rate; k++) {
			int64_t off = sv_sample_offset_ns(k, rate);
			/* off <= k*1e9/rate < off + 1 */
			__int128 exact_scaled = (__int128)k * NS;

			assert_true((__int128)off * rate <= exact_scaled);
			assert_true((__int128)(off + 1) * rate > exact_scaled);
			if (k) {
				assert_true(off - prev == per_floor || off - prev == per_ceil);
			}
			prev = off;
		}
		assert_int_equal(prev, NS);
		/* sample index continuity across the second boundary */
		assert_int_equal(sv_sample_index(1000, rate - 1, rate) + 1, sv_sample_index(1001, 0, rate));
		assert_true(sv_sample_time_ns(1000, rate - 1, rate) < sv_sample_time_ns(1001, 0, rate));
	}
}

struct align_case {
	int64_t rx;
	uint32_t cnt, rate;
	int64_t ahead;
	int ret;
	int64_t sec, latency;
};

static void test_sample_align_table(void **state)
{
	const int64_t S = 1700000000LL;
	const int64_t A = SV_SAMPLE_AHEAD_NS_DEFAULT;
	const struct align_case cases[] = {
		/* last sample of S received 100 us after the top of S+1: belongs to S */
		{ (S + 1) * NS + 100000, 3999, 4000, A, 0, S, 100000 + 250000 },
		{ (S + 1) * NS + 100000, 4799, 4800, A, 0, S, 100000 + 208334 },
		{ (S + 1) * NS + 100000, 14399, 14400, A, 0, S, 100000 + 69445 },
		{ (S + 1) * NS + 100000, 15359, 15360, A, 0, S, 100000 + 65105 },
		{ (S + 1) * NS + 100000, 12799, 12800, A, 0, S, 100000 + 78125 },
		/* first sample of S+1 received 1 us early (receiver behind): S+1, latency -1 us */
		{ (S + 1) * NS - 1000, 0, 4000, A, 0, S + 1, -1000 },
		/* first sample received exactly on time */
		{ (S + 1) * NS, 0, 4800, A, 0, S + 1, 0 },
		/* mid-second */
		{ S * NS + NS / 2, 1000, 4000, A, 0, S, NS / 4 },
		/* window edges: latency exactly -ahead stays; one ns more goes to the previous second */
		{ S * NS + 250000 - A, 1, 4000, A, 0, S, -A },
		{ S * NS + 250000 - A - 1, 1, 4000, A, 0, S - 1, NS - A - 1 },
		/* ahead 0: a sample "from the future" by 1 ns is taken as almost 1 s old */
		{ S * NS - 1, 0, 4000, 0, 0, S - 1, NS - 1 },
		/* latency just under 1 s - ahead */
		{ S * NS + 250000 + NS - A - 1, 1, 4000, A, 0, S, NS - A - 1 },
		/* bad input */
		{ S * NS, 4000, 4000, A, -EINVAL, 0, 0 },
		{ S * NS, 0, 0, A, -EINVAL, 0, 0 },
		{ S * NS, 0, 4000, -1, -EINVAL, 0, 0 },
		{ S * NS, 0, 4000, NS, -EINVAL, 0, 0 },
	};
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sv_sample_time t;
		int ret = sv_sample_align(cases[i].rx, cases[i].cnt, cases[i].rate, cases[i].ahead, &t);

		assert_int_equal(ret, cases[i].ret);
		if (ret)
			continue;
		assert_int_equal(t.tai_sec, cases[i].sec);
		assert_int_equal(t.latency_ns, cases[i].latency);
		assert_int_equal(t.t_sample_ns, cases[i].rx - cases[i].latency);
	}
}

/* Property: for any true latency in [-ahead, 1 s - ahead) the second is recovered, at every rate. */
static void test_sample_align_random(void **state)
{
	unsigned i;

	(void)state;
	for (i = 0; i < 200000; i++) {
		uint32_t rate = rates[i % NRATES];
		uint32_t cnt = (uint32_t)(rnd() % rate);
		int64_t sec = 1600000000LL + (int64_t)(rnd() % 400000000ULL);
		int64_t ahead = (i & 1) ? SV_SAMPLE_AHEAD_NS_DEFAULT : (int64_t)(rnd() % 1000000);
		int64_t lat = -ahead + (int64_t)(rnd() % (uint64_t)(NS));
		int64_t ts = sv_sample_time_ns(sec, cnt, rate);
		struct sv_sample_time t;

		if (lat >= NS - ahead)
			lat -= NS;
		assert_int_equal(sv_sample_align(ts + lat, cnt, rate, ahead, &t), 0);
		assert_int_equal(t.tai_sec, sec);
		assert_int_equal(t.latency_ns, lat);
	}
}

static void test_frame_schedule(void **state)
{
	const int64_t S = 1700000000LL;
	static const struct {
		uint32_t rate, asdus;
		uint64_t k;
		int64_t dsec;
		int64_t doff;
		uint32_t first;
	} cases[] = {
		{ 4000, 1, 0, 0, 0, 0 },
		{ 4000, 1, 3999, 0, 999750000, 3999 },
		{ 4000, 1, 4000, 1, 0, 0 },
		{ 4800, 2, 0, 0, 208333, 0 },
		{ 4800, 2, 2399, 0, 999791666, 4798 },
		{ 4800, 2, 2400, 1, 208333, 0 },
		{ 14400, 6, 0, 0, 347222, 0 },
		{ 14400, 6, 2399, 0, 999930555, 14394 },
		{ 12800, 8, 1599, 0, 999921875, 12792 },
		{ 15360, 8, 1920, 1, 455729, 0 },
		/* frame 10^9 of F4800S2: last sample 2e9+1 = 416666 s + 3201 samples */
		{ 4800, 2, 1000000000ULL, 416666, 666875000, 3200 },
	};
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(sv_frame_deadline_ns(S, cases[i].k, cases[i].rate, cases[i].asdus),
				 (S + cases[i].dsec) * NS + cases[i].doff);
		assert_int_equal(sv_frame_first_smpcnt(cases[i].k, cases[i].rate, cases[i].asdus), cases[i].first);
	}
	assert_int_equal(sv_frame_deadline_ns(S, 0, 4800, 7), -EINVAL);
	assert_int_equal(sv_frame_deadline_ns(S, 0, 0, 1), -EINVAL);
	assert_int_equal(sv_frame_first_smpcnt(0, 4800, 0), UINT32_MAX);
	assert_int_equal(sv_frame_index_at(S, S * NS, 4800, 7), UINT64_MAX);
}

/* Deadlines strictly increase with steps of floor/ceil of the frame period across many seconds, and
 * sv_frame_index_at() inverts them. */
static void test_frame_schedule_continuity(void **state)
{
	static const uint32_t asdus[NRATES] = { 1, 2, 8, 8, 6 };
	const int64_t S = 1700000000LL;
	unsigned r;

	(void)state;
	for (r = 0; r < NRATES; r++) {
		uint32_t rate = rates[r], a = asdus[r];
		uint64_t fps = rate / a, k;
		int64_t period_floor = NS * a / rate, period_ceil = (NS * a + rate - 1) / rate;
		int64_t prev = sv_frame_deadline_ns(S, 0, rate, a);

		for (k = 1; k < 3 * fps + 5; k++) {
			int64_t d = sv_frame_deadline_ns(S, k, rate, a);

			assert_true(d - prev == period_floor || d - prev == period_ceil);
			prev = d;
		}
		for (k = 0; k < 2000; k++) {
			int64_t t = S * NS + (int64_t)(rnd() % (uint64_t)(5 * NS));
			uint64_t idx = sv_frame_index_at(S, t, rate, a);

			assert_true(sv_frame_deadline_ns(S, idx, rate, a) >= t);
			if (idx)
				assert_true(sv_frame_deadline_ns(S, idx - 1, rate, a) < t);
		}
		assert_int_equal(sv_frame_index_at(S, S * NS - 5, rate, a), 0);
		assert_int_equal(sv_frame_index_at(S, sv_frame_deadline_ns(S, 7, rate, a), rate, a), 7);
		assert_int_equal(sv_frame_index_at(S, sv_frame_deadline_ns(S, 7, rate, a) + 1, rate, a), 8);
	}
}

static void test_smpcnt_wrap(void **state)
{
	static const struct {
		uint32_t from, to, wrap;
		uint32_t dist;
		int32_t delta;
	} cases[] = {
		{ 0, 1, 4000, 1, 1 },		 { 3999, 0, 4000, 1, 1 },	{ 3998, 1, 4000, 3, 3 },
		{ 1, 3998, 4000, 3997, -3 },	 { 5, 5, 4000, 0, 0 },		{ 0, 2000, 4000, 2000, -2000 },
		{ 0, 1999, 4000, 1999, 1999 },	 { 4799, 0, 4800, 1, 1 },	{ 65535, 0, 65536, 1, 1 },
		{ 0, 65535, 65536, 65535, -1 }, { 14399, 5, 14400, 6, 6 },	{ 8000, 1, 4000, 1, 1 },
		{ 3, 4, 0, 0, 0 },
	};
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(sv_smpcnt_distance(cases[i].from, cases[i].to, cases[i].wrap), cases[i].dist);
		assert_int_equal(sv_smpcnt_delta(cases[i].from, cases[i].to, cases[i].wrap), cases[i].delta);
	}
}

static void test_smpcnt_gap(void **state)
{
	static const struct {
		uint32_t prev, cur, step, wrap, rate;
		int64_t elapsed;
		uint64_t gap;
	} cases[] = {
		{ 10, 11, 1, 4000, 4000, -1, 0 },	   /* consecutive */
		{ 10, 13, 1, 4000, 4000, -1, 2 },	   /* 11, 12 lost */
		{ 3999, 0, 1, 4000, 4000, -1, 0 },	   /* plain wrap */
		{ 3999, 1, 1, 4000, 4000, -1, 1 },	   /* 0 lost across the wrap */
		{ 4798, 0, 2, 4800, 4800, -1, 0 },	   /* F4800S2: two ASDUs per frame */
		{ 4798, 2, 2, 4800, 4800, -1, 2 },	   /* one frame (2 samples) lost across wrap */
		{ 14394, 6, 6, 14400, 14400, -1, 6 },	   /* F14400S6 */
		{ 10, 10, 1, 4000, 4000, -1, 0 },	   /* duplicate */
		{ 10, 9, 1, 4000, 4000, -1, 0 },	   /* reordered */
		/* with elapsed time: whole seconds that smpCnt cannot show */
		{ 10, 11, 1, 4000, 4000, 250000, 0 },	   /* 1 sample period */
		{ 10, 11, 1, 4000, 4000, 1000250000, 4000 }, /* one full second lost in between */
		{ 10, 11, 1, 4000, 4000, 3000250000, 12000 },
		{ 3999, 1, 1, 4000, 4000, 2000500000, 8001 },
		{ 10, 10, 1, 4000, 4000, NS, 3999 },	   /* exactly one second later, same smpCnt */
		{ 10, 10, 1, 4000, 4000, 100, 0 },	   /* duplicate seen right away */
		{ 100, 50, 1, 4000, 4000, 1000000, 0 },	   /* reordered: 1 ms later, 50 samples behind */
		{ 100, 50, 1, 4000, 4000, 987500000, 3949 }, /* not reordered: nearly a second passed */
		{ 100, 103, 1, 4000, 4000, 700000, 2 },	   /* jittery elapsed stays with the small gap */
		{ 65535, 1, 1, 65536, 4000, -1, 1 },	   /* free-running 16-bit counter */
		{ 1, 2, 0, 4000, 4000, -1, 0 },		   /* step 0: invalid, nothing */
	};
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t g = sv_smpcnt_gap(cases[i].prev, cases[i].cur, cases[i].step, cases[i].wrap, cases[i].rate,
					   cases[i].elapsed);

		if (g != cases[i].gap)
			fail_msg("case %u: gap %llu, expected %llu", i, (unsigned long long)g,
				 (unsigned long long)cases[i].gap);
	}
}

static void test_sync_format(void **state)
{
	struct sv_clock_sync s;
	char buf[256];

	(void)state;
	memset(&s, 0, sizeof(s));
	s.maxerror_ns = 16000;
	s.esterror_ns = 0;
	s.tai_offset_s = 37;
	assert_true(sv_clock_sync_ok(&s));
	sv_clock_sync_format(&s, buf, sizeof(buf));
	assert_string_equal(buf, "synchronised, maxerror 16us, esterror 0us, tai-utc 37s, state ok");

	s.unsync = true;
	s.tai_unset = true;
	s.tai_offset_s = 0;
	s.state = 5;
	s.maxerror_ns = 16 * NS;
	s.esterror_ns = 16 * NS;
	assert_false(sv_clock_sync_ok(&s));
	sv_clock_sync_format(&s, buf, sizeof(buf));
	assert_string_equal(buf, "UNSYNCHRONISED (STA_UNSYNC), maxerror 16s, esterror 16s, tai-utc UNSET "
				 "(CLOCK_TAI == CLOCK_REALTIME), state error");

	/* reading the host works; TAI offset 0 must be reported as unset */
	assert_int_equal(sv_clock_sync_read(&s), 0);
	assert_int_equal(s.tai_unset, s.tai_offset_s == 0);
	assert_true(s.maxerror_ns >= 0);
}

static void test_xlate(void **state)
{
	struct sv_clock_xlate x;
	int64_t tai, mono, err;

	(void)state;
	assert_int_equal(sv_clock_xlate_measure(&x, CLOCK_MONOTONIC, CLOCK_TAI, 0), -EINVAL);
	assert_int_equal(sv_clock_xlate_mono_to_tai(&x), 0);
	assert_true(x.gap_ns >= 0);
	mono = sv_clock_now_ns(SV_CLOCK_MONOTONIC);
	tai = sv_clock_now_ns(SV_CLOCK_TAI);
	err = tai - sv_clock_xlate_apply(&x, mono);
	/* the two reads above are microseconds apart; a wrong sign or unit would be off by seconds */
	assert_true(err > -50 * SV_NSEC_PER_MSEC && err < 50 * SV_NSEC_PER_MSEC);
	/* REALTIME -> TAI is the TAI offset, whole seconds */
	assert_int_equal(sv_clock_xlate_measure(&x, CLOCK_REALTIME, CLOCK_TAI, 16), 0);
	{
		struct sv_clock_sync s;
		int64_t off_s;

		assert_int_equal(sv_clock_sync_read(&s), 0);
		off_s = (x.offset_ns + NS / 2) / NS;
		assert_int_equal(off_s, s.tai_offset_s);
	}
}

static void test_phc_absent(void **state)
{
	struct sv_phc phc;

	(void)state;
	assert_int_equal(sv_clock_phc_open(&phc, "ptp-does-not-exist"), -ENOENT);
	assert_int_equal(phc.fd, -1);
	assert_int_equal(sv_clock_phc_open(&phc, ""), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clock_names),
		cmocka_unit_test(test_timespec),
		cmocka_unit_test(test_sample_offset_table),
		cmocka_unit_test(test_sample_offset_all_rates),
		cmocka_unit_test(test_sample_align_table),
		cmocka_unit_test(test_sample_align_random),
		cmocka_unit_test(test_frame_schedule),
		cmocka_unit_test(test_frame_schedule_continuity),
		cmocka_unit_test(test_smpcnt_wrap),
		cmocka_unit_test(test_smpcnt_gap),
		cmocka_unit_test(test_sync_format),
		cmocka_unit_test(test_xlate),
		cmocka_unit_test(test_phc_absent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

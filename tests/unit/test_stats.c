// SPDX-License-Identifier: Apache-2.0
/* sv_stats: bucket geometry, percentile error bounds against exact nearest-rank values on random and
 * adversarial data, merge, serialisation round trip and corruption, exact percentiles, printers. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sv_json.h"
#include "sv_stats.h"

static uint64_t rng = 0x243F6A8885A308D3ull;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static struct sv_stats *hist_new(void)
{
	struct sv_stats *h = malloc(sizeof(*h));

	assert_non_null(h);
	sv_stats_init(h);
	return h;
}

static void test_bucket_geometry(void **state)
{
	uint32_t i;
	int k;

	(void)state;
	assert_int_equal(sv_stats_bucket_lo(0), 0);
	for (i = 0; i + 1 < SV_STATS_BUCKETS; i++) {
		int64_t lo = sv_stats_bucket_lo(i), hi = sv_stats_bucket_hi(i);

		/* contiguous, no gaps or overlaps */
		assert_int_equal(hi + 1, sv_stats_bucket_lo(i + 1));
		assert_int_equal(sv_stats_index(lo), i);
		assert_int_equal(sv_stats_index(hi), i);
		/* the stated bound: width <= lo / 64, exact below 128 */
		if (lo < 128)
			assert_int_equal(hi, lo);
		else
			assert_true((hi - lo + 1) * 64 <= lo);
	}
	assert_int_equal(sv_stats_bucket_hi(SV_STATS_BUCKETS - 1), INT64_MAX);
	assert_int_equal(sv_stats_index(INT64_MAX), SV_STATS_BUCKETS - 1);
	for (k = 0; k < 100000; k++) {
		int64_t v = (int64_t)((rnd() >> 1) >> (rnd() % 63));
		uint32_t idx = sv_stats_index(v);

		assert_true(idx < SV_STATS_BUCKETS);
		assert_true(sv_stats_bucket_lo(idx) <= v && v <= sv_stats_bucket_hi(idx));
	}
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

enum dist { D_UNIFORM, D_LOGUNIFORM, D_BOUNDARIES, D_TWO_CLUSTERS, D_SINGLE, D_OUTLIERS, D_HUGE, D_SMALL,
	    D_COUNT };

static int64_t draw(enum dist d, size_t i)
{
	switch (d) {
	case D_UNIFORM:
		return 10000 + (int64_t)(rnd() % 200000);
	case D_LOGUNIFORM:
		return (int64_t)(rnd() >> (1 + rnd() % 62));
	case D_BOUNDARIES: {
		/* adversarial: only bucket edges, where rounding mistakes show */
		uint32_t b = 128 + (uint32_t)(rnd() % 2000);

		return (rnd() & 1) ? sv_stats_bucket_lo(b) : sv_stats_bucket_hi(b);
	}
	case D_TWO_CLUSTERS:
		return (i % 100 == 0) ? 5000000 + (int64_t)(rnd() % 1000) : 20000 + (int64_t)(rnd() % 50);
	case D_SINGLE:
		return 123457;
	case D_OUTLIERS:
		return (i % 1000 == 7) ? (int64_t)(rnd() % 1000000000) : 30000 + (int64_t)(rnd() % 3000);
	case D_HUGE:
		return INT64_MAX - (int64_t)(rnd() % 1000000000000ULL);
	case D_SMALL:
	default:
		return (int64_t)(rnd() % 128);
	}
}

/* For every distribution and percentile: |hist - exact| <= err and err <= exact / 128. */
static void test_percentile_bounds(void **state)
{
	static const double qs[] = { 0, 1, 25, 50, 90, 99, 99.9, 99.99, 100 };
	static const size_t sizes[] = { 1, 2, 3, 10, 1000, 100003 };
	struct sv_stats *h = hist_new();
	int64_t *v = malloc(100003 * sizeof(*v));
	unsigned d, s, q;

	(void)state;
	assert_non_null(v);
	for (d = 0; d < D_COUNT; d++) {
		for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
			size_t n = sizes[s], i;
			unsigned __int128 sum = 0;

			sv_stats_init(h);
			for (i = 0; i < n; i++) {
				v[i] = draw((enum dist)d, i);
				sv_stats_add(h, v[i]);
				sum += (uint64_t)v[i];
			}
			qsort(v, n, sizeof(*v), cmp_i64);
			assert_int_equal(h->count, n);
			assert_int_equal(h->min, v[0]);
			assert_int_equal(h->max, v[n - 1]);
			assert_true(((unsigned __int128)h->sum_hi << 64 | h->sum_lo) == sum);
			for (q = 0; q < sizeof(qs) / sizeof(qs[0]); q++) {
				int64_t exact, got, err;

				assert_int_equal(sv_stats_exact_percentile(v, n, qs[q], &exact), 0);
				assert_int_equal(sv_stats_percentile(h, qs[q], &got, &err), 0);
				if (got - exact > err || exact - got > err)
					fail_msg("dist %u n %zu q %g: got %lld exact %lld err %lld", d, n, qs[q],
						 (long long)got, (long long)exact, (long long)err);
				assert_true(err >= 0);
				assert_true(err <= exact / 128);
				if (exact < 128)
					assert_int_equal(got, exact);
			}
		}
	}
	free(v);
	free(h);
}

static void test_percentile_edges(void **state)
{
	struct sv_stats *h = hist_new();
	int64_t v, err;

	(void)state;
	assert_int_equal(sv_stats_percentile(h, 50, &v, &err), -ENODATA);
	sv_stats_add(h, 1000);
	assert_int_equal(sv_stats_percentile(h, 101, &v, &err), -EINVAL);
	assert_int_equal(sv_stats_percentile(h, -1, &v, &err), -EINVAL);
	/* one value: every percentile is it, exactly */
	assert_int_equal(sv_stats_percentile(h, 50, &v, &err), 0);
	assert_int_equal(v, 1000);
	assert_int_equal(err, 0);
	/* nearest rank 99.9 of 1000 values is rank 999, not 1000 (float ceil trap) */
	sv_stats_init(h);
	for (v = 1; v <= 1000; v++)
		sv_stats_add(h, v < 1000 ? 5 : 1000000);
	assert_int_equal(sv_stats_percentile(h, 99.9, &v, &err), 0);
	assert_int_equal(v, 5);
	assert_int_equal(sv_stats_percentile(h, 100, &v, &err), 0);
	assert_int_equal(v, 1000000);
	free(h);
}

static void test_negative(void **state)
{
	struct sv_stats *h = hist_new();
	struct sv_stats_summary s;
	char buf[256];

	(void)state;
	sv_stats_add(h, -5);
	sv_stats_add(h, -7000);
	sv_stats_add(h, 100);
	assert_int_equal(h->count, 1);
	assert_int_equal(h->negative, 2);
	assert_int_equal(h->negative_min, -7000);
	assert_int_equal(h->min, 100);
	sv_stats_summarize(h, &s);
	assert_int_equal(s.negative, 2);
	sv_stats_summary_format(&s, buf, sizeof(buf));
	assert_string_equal(buf, "count=1 min=100ns p50=100ns p99=100ns p999=100ns p9999=100ns max=100ns negative=2");
	free(h);
}

static bool hist_equal(const struct sv_stats *a, const struct sv_stats *b)
{
	return a->count == b->count && a->min == b->min && a->max == b->max && a->sum_lo == b->sum_lo &&
	       a->sum_hi == b->sum_hi && a->negative == b->negative && a->negative_min == b->negative_min &&
	       a->top == b->top && !memcmp(a->bucket, b->bucket, sizeof(a->bucket));
}

/* sv_stats_reset empties a used histogram to exactly what sv_stats_init makes, whatever was in it (every
 * distribution, negatives, the largest values): the interval accumulator reuses its histograms with it. */
static void test_reset(void **state)
{
	struct sv_stats *h = hist_new(), *empty = hist_new();

	(void)state;
	sv_stats_init(empty);
	for (int round = 0; round < 2 * D_COUNT; round++) {
		sv_stats_init(h);
		for (int i = 0; i < 3000; i++)
			sv_stats_add(h, draw((enum dist)(round % D_COUNT), (size_t)i) - (round == 3 ? 100000 : 0));
		if (round == 5)
			sv_stats_add(h, INT64_MAX);
		sv_stats_reset(h);
		assert_memory_equal(h, empty, sizeof(*h));
	}
	free(h);
	free(empty);
}

static void test_merge(void **state)
{
	struct sv_stats *a = hist_new(), *b = hist_new(), *all = hist_new();
	int i, round;

	(void)state;
	for (round = 0; round < 20; round++) {
		sv_stats_init(a);
		sv_stats_init(b);
		sv_stats_init(all);
		for (i = 0; i < 5000; i++) {
			int64_t x = draw((enum dist)(round % D_COUNT), (size_t)i) - (round == 3 ? 100000 : 0);
			struct sv_stats *t = (rnd() % 3) ? a : b;

			sv_stats_add(t, x);
			sv_stats_add(all, x);
		}
		assert_int_equal(sv_stats_merge(a, b), 0);
		assert_true(hist_equal(a, all));
	}
	/* merging an empty one changes nothing; into an empty one copies */
	sv_stats_init(b);
	assert_int_equal(sv_stats_merge(a, b), 0);
	assert_true(hist_equal(a, all));
	assert_int_equal(sv_stats_merge(b, a), 0);
	assert_true(hist_equal(b, all));
	/* overflowing count refused, dst unchanged */
	sv_stats_init(a);
	sv_stats_add_n(a, 5, UINT64_MAX - 1);
	sv_stats_init(b);
	sv_stats_add_n(b, 5, 2);
	*all = *a;
	assert_int_equal(sv_stats_merge(a, b), -EOVERFLOW);
	assert_true(hist_equal(a, all));
	free(a);
	free(b);
	free(all);
}

static void test_add_n_and_mean(void **state)
{
	struct sv_stats *a = hist_new(), *b = hist_new();
	int i;

	(void)state;
	sv_stats_add_n(a, 250000, 1000);
	for (i = 0; i < 1000; i++)
		sv_stats_add(b, 250000);
	assert_true(hist_equal(a, b));
	assert_true(sv_stats_mean(a) == 250000.0);
	/* the 128-bit sum does not wrap */
	sv_stats_init(a);
	sv_stats_add_n(a, INT64_MAX, 4);
	assert_int_equal(a->sum_hi, 1);
	assert_true(sv_stats_mean(a) > 9.2e18);
	free(a);
	free(b);
}

static void test_serialize_roundtrip(void **state)
{
	struct sv_stats *h = hist_new(), *g = hist_new();
	uint8_t *buf = malloc(SV_STATS_SERIALIZED_MAX);
	ssize_t n;
	unsigned d, i;

	(void)state;
	assert_non_null(buf);
	/* empty */
	n = sv_stats_serialize(h, buf, SV_STATS_SERIALIZED_MAX);
	assert_true(n > 0);
	assert_int_equal(sv_stats_deserialize(g, buf, (size_t)n), 0);
	assert_true(hist_equal(h, g));
	for (d = 0; d < D_COUNT; d++) {
		sv_stats_init(h);
		for (i = 0; i < 20000; i++)
			sv_stats_add(h, draw((enum dist)d, i));
		sv_stats_add(h, -3);
		n = sv_stats_serialize(h, buf, SV_STATS_SERIALIZED_MAX);
		assert_true(n > 0);
		assert_int_equal(sv_stats_deserialize(g, buf, (size_t)n), 0);
		assert_true(hist_equal(h, g));
		/* too small a buffer: -ENOSPC, never an overrun (ASan checks) */
		assert_int_equal(sv_stats_serialize(h, buf, (size_t)n - 1), -ENOSPC);
	}
	/* worst case: every bucket non-empty with a large count fits the stated maximum */
	sv_stats_init(h);
	for (i = 0; i < SV_STATS_BUCKETS; i++)
		sv_stats_add_n(h, sv_stats_bucket_lo(i), (1ull << 62) / SV_STATS_BUCKETS);
	n = sv_stats_serialize(h, buf, SV_STATS_SERIALIZED_MAX);
	assert_true(n > 0 && (size_t)n <= SV_STATS_SERIALIZED_MAX);
	assert_int_equal(sv_stats_deserialize(g, buf, (size_t)n), 0);
	assert_true(hist_equal(h, g));
	/* a one-second per-stream histogram is small */
	sv_stats_init(h);
	for (i = 0; i < 4800; i++)
		sv_stats_add(h, 40000 + (int64_t)(rnd() % 20000));
	n = sv_stats_serialize(h, buf, SV_STATS_SERIALIZED_MAX);
	assert_true(n > 0 && n < 1200);
	free(buf);
	free(h);
	free(g);
}

static void test_deserialize_corrupt(void **state)
{
	struct sv_stats *h = hist_new(), *g = hist_new();
	uint8_t buf[4096], bad[4097];
	ssize_t n;
	size_t len, i;
	int bit;

	(void)state;
	for (i = 0; i < 300; i++)
		sv_stats_add(h, 1000 + (int64_t)(rnd() % 100000));
	n = sv_stats_serialize(h, buf, sizeof(buf));
	assert_true(n > 0);
	/* every truncation is refused */
	for (len = 0; len < (size_t)n; len++)
		assert_int_equal(sv_stats_deserialize(g, buf, len), -EBADMSG);
	/* a trailing byte is refused */
	memcpy(bad, buf, (size_t)n);
	bad[n] = 0;
	assert_int_equal(sv_stats_deserialize(g, bad, (size_t)n + 1), -EBADMSG);
	assert_int_equal(g->count, 0);
	/* every single-bit flip: refused, or decodes to a self-consistent histogram; never a crash */
	for (i = 0; i < (size_t)n; i++) {
		for (bit = 0; bit < 8; bit++) {
			memcpy(bad, buf, (size_t)n);
			bad[i] ^= (uint8_t)(1u << bit);
			if (sv_stats_deserialize(g, bad, (size_t)n) == 0) {
				uint64_t total = 0;
				uint32_t b;

				for (b = 0; b < SV_STATS_BUCKETS; b++)
					total += g->bucket[b];
				assert_int_equal(total, g->count);
				assert_true(g->count == 0 || g->min <= g->max);
			}
		}
	}
	/* wrong version */
	memcpy(bad, buf, (size_t)n);
	bad[0] = 2;
	assert_int_equal(sv_stats_deserialize(g, bad, (size_t)n), -EBADMSG);
	free(h);
	free(g);
}

static void test_sort(void **state)
{
	static const size_t sizes[] = { 0, 1, 2, 3, 16, 17, 100, 1000, 100000 };
	int64_t *v = malloc(100000 * sizeof(*v)), *w = malloc(100000 * sizeof(*w));
	unsigned s, pattern;

	(void)state;
	assert_non_null(v);
	assert_non_null(w);
	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		size_t n = sizes[s], i;

		for (pattern = 0; pattern < 6; pattern++) {
			for (i = 0; i < n; i++) {
				switch (pattern) {
				case 0: v[i] = (int64_t)rnd(); break;			/* random, with negatives */
				case 1: v[i] = (int64_t)i; break;			/* sorted */
				case 2: v[i] = (int64_t)(n - i); break;			/* reversed */
				case 3: v[i] = 42; break;				/* all equal */
				case 4: v[i] = (int64_t)(i < n / 2 ? i : n - i); break; /* organ pipe */
				default: v[i] = (int64_t)(rnd() % 3); break;		/* few distinct */
				}
			}
			memcpy(w, v, n * sizeof(*v));
			sv_stats_sort_i64(v, n);
			qsort(w, n, sizeof(*w), cmp_i64);
			if (n)
				assert_memory_equal(v, w, n * sizeof(*v));
		}
	}
	free(v);
	free(w);
}

static void test_exact_percentiles(void **state)
{
	static const struct {
		size_t n;
		double q;
		int64_t want;
	} cases[] = {
		/* values 1..n: nearest rank ceil(q/100*n) */
		{ 10, 0, 1 },	    { 10, 50, 5 },	{ 10, 51, 6 },	    { 10, 99, 10 },
		{ 10, 100, 10 },    { 1000, 99.9, 999 }, { 1000, 99.99, 1000 }, { 10000, 99.99, 9999 },
		{ 10000, 99.9, 9990 }, { 100, 99, 99 },	{ 1, 50, 1 },	    { 3, 50, 2 },
	};
	int64_t *v = malloc(10000 * sizeof(*v)), got;
	struct sv_stats_summary s;
	unsigned c;
	size_t i;

	(void)state;
	assert_non_null(v);
	for (i = 0; i < 10000; i++)
		v[i] = (int64_t)i + 1;
	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		assert_int_equal(sv_stats_exact_percentile(v, cases[c].n, cases[c].q, &got), 0);
		if (got != cases[c].want)
			fail_msg("n %zu q %g: %lld, want %lld", cases[c].n, cases[c].q, (long long)got,
				 (long long)cases[c].want);
	}
	assert_int_equal(sv_stats_exact_percentile(v, 0, 50, &got), -ENODATA);
	assert_int_equal(sv_stats_exact_percentile(v, 10, 100.5, &got), -EINVAL);
	/* summary sorts in place */
	for (i = 0; i < 10000; i++)
		v[i] = (int64_t)(10000 - i) - 50;
	assert_int_equal(sv_stats_exact_summary(v, 10000, &s), 0);
	assert_true(s.exact);
	assert_int_equal(s.count, 10000);
	assert_int_equal(s.min, -49);
	assert_int_equal(s.p50, 4950);
	assert_int_equal(s.p99, 9850);
	assert_int_equal(s.p999, 9940);
	assert_int_equal(s.p9999, 9949);
	assert_int_equal(s.max, 9950);
	assert_int_equal(s.p99_err, 0);
	assert_int_equal(sv_stats_exact_summary(v, 0, &s), -ENODATA);
	assert_int_equal(s.count, 0);
	free(v);
}

static void test_format_ns(void **state)
{
	static const struct {
		int64_t ns;
		const char *s;
	} cases[] = {
		{ 0, "0ns" },	       { 999, "999ns" },	  { 1000, "1us" },	   { 12345, "12.3us" },
		{ 999400, "999us" },   { 999600, "1ms" },	  { 4560000, "4.56ms" },   { 1200000000, "1.2s" },
		{ -1500, "-1.5us" },   { -7, "-7ns" },		  { 3600000000000LL, "3600s" },
		{ 250000000, "250ms" },
	};
	char buf[32];
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		sv_stats_format_ns(cases[i].ns, buf, sizeof(buf));
		assert_string_equal(buf, cases[i].s);
	}
}

static void test_summary_format(void **state)
{
	struct sv_stats *h = hist_new();
	struct sv_stats_summary s;
	char buf[256];
	int i;

	(void)state;
	sv_stats_summarize(h, &s);
	sv_stats_summary_format(&s, buf, sizeof(buf));
	assert_string_equal(buf, "count=0");
	for (i = 1; i <= 100; i++)
		sv_stats_add(h, i);
	sv_stats_summarize(h, &s);
	sv_stats_summary_format(&s, buf, sizeof(buf));
	assert_string_equal(buf, "count=100 min=1ns p50=50ns p99=99ns p999=100ns p9999=100ns max=100ns");
	/* values from buckets wider than 1 get "~" */
	sv_stats_init(h);
	for (i = 0; i < 1000; i++)
		sv_stats_add(h, 10000 + i * 37);
	sv_stats_summarize(h, &s);
	assert_true(s.p50_err > 0);
	sv_stats_summary_format(&s, buf, sizeof(buf));
	assert_non_null(strstr(buf, "p50=~"));
	assert_non_null(strstr(buf, "min=10us "));
	/* truncation keeps snprintf semantics */
	assert_true(sv_stats_summary_format(&s, buf, 8) > 8);
	assert_int_equal(strlen(buf), 7);
	free(h);
}

static char *capture(void (*fn)(FILE *, void *), void *arg)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(f);
	fn(f, arg);
	fclose(f);
	return out;
}

static void do_log2(FILE *f, void *arg)
{
	assert_int_equal(sv_stats_print_log2(arg, f, 1000, NULL), 0);
}

static void test_print_log2(void **state)
{
	struct sv_stats *h = hist_new();
	char *out;
	int i;

	(void)state;
	out = capture(do_log2, h);
	assert_string_equal(out, ""); /* empty: nothing */
	free(out);
	for (i = 0; i < 40; i++)
		sv_stats_add(h, 5000); /* 5 us -> slot 4..7 */
	for (i = 0; i < 10; i++)
		sv_stats_add(h, 20000); /* 20 us -> slot 16..31 */
	sv_stats_add(h, 500);		/* 0 us -> slot 0..1 */
	out = capture(do_log2, h);
	assert_string_equal(out,
			    "     usecs               : count    distribution\n"
			    "         0 -> 1          : 1        |*                                       |\n"
			    "         2 -> 3          : 0        |                                        |\n"
			    "         4 -> 7          : 40       |****************************************|\n"
			    "         8 -> 15         : 0        |                                        |\n"
			    "        16 -> 31         : 10       |**********                              |\n");
	free(out);
	free(h);
}

static void do_json(FILE *f, void *arg)
{
	struct sv_json j;

	sv_json_init(&j, f, 0);
	sv_stats_json(&j, arg);
	assert_int_equal(sv_json_end(&j), 0);
}

static void test_json(void **state)
{
	struct sv_stats *h = hist_new();
	char *out;
	int i;

	(void)state;
	out = capture(do_json, h);
	assert_string_equal(out, "{\"count\":0,\"min\":null,\"p50\":null,\"p99\":null,\"p999\":null,"
				 "\"p9999\":null,\"max\":null}\n");
	free(out);
	for (i = 1; i <= 100; i++)
		sv_stats_add(h, i);
	out = capture(do_json, h);
	assert_string_equal(out, "{\"count\":100,\"min\":1,\"p50\":50,\"p99\":99,\"p999\":100,\"p9999\":100,"
				 "\"max\":100,\"exact\":false,\"p50_err\":0,\"p99_err\":0,\"p999_err\":0,"
				 "\"p9999_err\":0}\n");
	free(out);
	free(h);
}

static void test_counters(void **state)
{
	struct sv_counters a = { 1, 2, 3, 4, 5, 6, 7, 8 }, b = { 10, 20, 30, 40, 50, 60, 70, 80 };
	char buf[256];

	(void)state;
	sv_counters_add(&a, &b);
	sv_counters_format(&a, buf, sizeof(buf));
	assert_string_equal(buf, "frames=11 samples=22 lost=33 duplicate=44 reordered=55 late=66 dropped=77 "
				 "errors=88");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bucket_geometry),	   cmocka_unit_test(test_percentile_bounds),
		cmocka_unit_test(test_percentile_edges),   cmocka_unit_test(test_negative),
		cmocka_unit_test(test_merge),		   cmocka_unit_test(test_add_n_and_mean),
		cmocka_unit_test(test_reset),
		cmocka_unit_test(test_serialize_roundtrip), cmocka_unit_test(test_deserialize_corrupt),
		cmocka_unit_test(test_sort),		   cmocka_unit_test(test_exact_percentiles),
		cmocka_unit_test(test_format_ns),	   cmocka_unit_test(test_summary_format),
		cmocka_unit_test(test_print_log2),	   cmocka_unit_test(test_json),
		cmocka_unit_test(test_counters),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

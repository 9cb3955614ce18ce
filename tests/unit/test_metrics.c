// SPDX-License-Identifier: Apache-2.0
/* sv_metrics: registry rules, golden OpenMetrics and 0.0.4 text, the bucket conversion against exact counts,
 * overflow folding, label escaping, Accept and ADDR:PORT parsing, and scrapes racing a writer thread. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sv_metrics.h"
#include "sv_stats.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static char *render(struct sv_metrics *m, enum sv_metrics_format fmt)
{
	struct sv_metrics_text t = { 0 };
	char *s;

	assert_int_equal(sv_metrics_render(m, fmt, &t, NULL), 0);
	s = strndup(t.p, t.len);
	assert_non_null(s);
	sv_metrics_text_free(&t);
	return s;
}

static void test_registry_rules(void **state)
{
	static const char *const l2[] = { "svid", "appid" }, *const le[] = { "le" }, *const dup[] = { "a", "a" },
				 *const under[] = { "__x" };
	struct sv_metrics *m;
	struct sv_metrics_family *f;
	uint64_t c = 0;
	static const struct {
		const char *name;
		enum sv_metric_type type;
		const char *unit;
	} bad[] = {
		{ "svkit_x_total", SV_METRIC_COUNTER, NULL },	   { "svkit_x_count", SV_METRIC_GAUGE, NULL },
		{ "svkit_x_bucket", SV_METRIC_GAUGE, NULL },	   { "svkit_x_info", SV_METRIC_INFO, NULL },
		{ "1svkit", SV_METRIC_GAUGE, NULL },		   { "svkit-x", SV_METRIC_GAUGE, NULL },
		{ "", SV_METRIC_GAUGE, NULL },			   { "svkit_x_ms", SV_METRIC_GAUGE, "seconds" },
		{ "svkit_lat", SV_METRIC_HISTOGRAM, NULL },	   { "svkit_lat_bytes", SV_METRIC_HISTOGRAM, "bytes" },
		{ "svkit_x_seconds", SV_METRIC_INFO, "seconds" },
	};

	(void)state;
	assert_int_equal(sv_metrics_create(&m, 0), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		assert_null(sv_metrics_family(m, bad[i].name, bad[i].type, bad[i].unit, "h", 0, NULL));
		assert_int_equal(errno, EINVAL);
	}
	assert_null(sv_metrics_family(m, "svkit_a", SV_METRIC_HISTOGRAM, NULL, "h", 1, le));
	assert_null(sv_metrics_family(m, "svkit_a", SV_METRIC_GAUGE, NULL, "h", 1, le));
	assert_null(sv_metrics_family(m, "svkit_a", SV_METRIC_GAUGE, NULL, "h", 2, dup));
	assert_null(sv_metrics_family(m, "svkit_a", SV_METRIC_GAUGE, NULL, "h", 1, under));
	assert_null(sv_metrics_family(m, "svkit_a", SV_METRIC_GAUGE, NULL, "two\nlines", 0, NULL));
	f = sv_metrics_family(m, "svkit_a", SV_METRIC_COUNTER, NULL, "h", 2, l2);
	assert_non_null(f);
	errno = 0;
	assert_null(sv_metrics_family(m, "svkit_a", SV_METRIC_GAUGE, NULL, "h", 0, NULL));
	assert_int_equal(errno, EEXIST);
	assert_int_equal(sv_metrics_add_u64(f, (const char *const[]){ "s", "1" }, &c), 0);
	assert_int_equal(sv_metrics_add_u64(f, (const char *const[]){ "s", "1" }, &c), -EEXIST);
	assert_int_equal(sv_metrics_add_u64(f, NULL, &c), -EINVAL);
	assert_int_equal(sv_metrics_add_hist(f, (const char *const[]){ "s", "2" }, (const struct sv_stats *)&c),
			 -EINVAL); /* a histogram source on a counter */
	sv_metrics_destroy(m);
}

static void test_series_bound(void **state)
{
	static const char *const l1[] = { "k" };
	struct sv_metrics *m;
	struct sv_metrics_family *f, *h;
	struct sv_stats *st = malloc(sizeof(*st));
	uint64_t c = 0;
	char v[16];
	int i;

	(void)state;
	sv_stats_init(st);
	assert_int_equal(sv_metrics_create(&m, 50), 0);
	f = sv_metrics_family(m, "svkit_c", SV_METRIC_COUNTER, NULL, "h", 1, l1);
	h = sv_metrics_family(m, "svkit_h_seconds", SV_METRIC_HISTOGRAM, "seconds", "h", 1, l1);
	assert_non_null(f);
	assert_non_null(h);
	assert_int_equal(sv_metrics_add_hist(h, (const char *const[]){ "a" }, st), 0); /* 20 series */
	assert_int_equal(sv_metrics_add_hist(h, (const char *const[]){ "b" }, st), 0); /* 40 */
	assert_int_equal(sv_metrics_add_hist(h, (const char *const[]){ "c" }, st), -ENOSPC);
	for (i = 0; i < 10; i++) {
		snprintf(v, sizeof(v), "%d", i);
		assert_int_equal(sv_metrics_add_u64(f, (const char *const[]){ v }, &c), 0);
	}
	assert_int_equal(sv_metrics_add_u64(f, (const char *const[]){ "x" }, &c), -ENOSPC);
	free(render(m, SV_METRICS_TEXT_004));
	/* frozen by the render */
	assert_int_equal(sv_metrics_add_u64(f, (const char *const[]){ "y" }, &c), -EBUSY);
	errno = 0;
	assert_null(sv_metrics_family(m, "svkit_late", SV_METRIC_GAUGE, NULL, "h", 0, NULL));
	assert_int_equal(errno, EBUSY);
	sv_metrics_destroy(m);
	free(st);
}

/* ---- a small registry, rendered to golden text in both formats ---- */

struct rows {
	unsigned n;
	const char *svid[8];
	uint16_t appid[8];
	uint64_t frames[8], lost[8], confrev[8];
};

static unsigned rows_count(void *ctx)
{
	return __atomic_load_n(&((struct rows *)ctx)->n, __ATOMIC_ACQUIRE);
}

static int rows_labels(void *ctx, unsigned row, const char **val, size_t *len, char *buf, size_t size)
{
	struct rows *r = ctx;

	val[0] = r->svid[row];
	len[0] = strlen(r->svid[row]);
	len[1] = (size_t)snprintf(buf, size, "0x%04x", r->appid[row]);
	val[1] = buf;
	return 0;
}

static void rows_values(void *ctx, unsigned row, uint64_t *v)
{
	struct rows *r = ctx;

	v[0] = sv_metrics_load_u64(&r->frames[row]);
	v[1] = sv_metrics_load_u64(&r->lost[row]);
	v[2] = r->confrev[row];
}

static const struct sv_metrics_table_ops rows_ops = { rows_count, rows_labels, rows_values };

struct small {
	struct sv_metrics *m;
	struct sv_stats *h;
	uint64_t overruns;
	int64_t maxerr_ns;
	struct rows rows;
};

static void small_build(struct small *s, unsigned max_rows)
{
	static const char *const stream[] = { "svid", "appid" }, *const hop[] = { "hop", "port" },
				 *const qual[] = { "svid", "appid", "flag" };
	struct sv_metrics_family *f, *lost, *rev, *q;
	struct sv_metrics_table *t;

	memset(s, 0, sizeof(*s));
	s->h = malloc(sizeof(*s->h));
	assert_non_null(s->h);
	sv_stats_init(s->h);
	sv_stats_add(s->h, 5000);	/* 5 us: first bucket */
	sv_stats_add(s->h, 99000);	/* below 100 us */
	sv_stats_add(s->h, 99900);	/* in the sv_stats bucket straddling 100 us: counted in le=0.00015 */
	sv_stats_add(s->h, 250000);	/* 250 us: the bucket [249856, 251903] straddles it: le=0.0003 */
	sv_stats_add(s->h, 200000000);	/* 200 ms: +Inf */
	s->overruns = 3;
	s->maxerr_ns = 16000;
	assert_int_equal(sv_metrics_create(&s->m, 0), 0);
	f = sv_metrics_family(s->m, "svkit_pub_overruns", SV_METRIC_COUNTER, NULL, "Wake-ups later than a \"period\"",
			      0, NULL);
	assert_int_equal(sv_metrics_add_u64(f, NULL, &s->overruns), 0);
	f = sv_metrics_family(s->m, "svkit_clock_maxerror_seconds", SV_METRIC_GAUGE, "seconds", "Max error", 0, NULL);
	assert_int_equal(sv_metrics_add_ns(f, NULL, &s->maxerr_ns), 0);
	f = sv_metrics_family(s->m, "svkit_build", SV_METRIC_INFO, NULL, "Build", 2,
			      (const char *const[]){ "tool", "version" });
	assert_int_equal(sv_metrics_add_value(f, (const char *const[]){ "svsub", "0.1.0" },
					      (struct sv_metrics_value){ .kind = SV_METRICS_V_U64, .u = 1 }),
			 0);
	f = sv_metrics_family(s->m, "svkit_hop_latency_seconds", SV_METRIC_HISTOGRAM, "seconds", "Hop latency", 2,
			      hop);
	assert_int_equal(sv_metrics_add_hist(f, (const char *const[]){ "T1-T2b", "vnet0" }, s->h), 0);
	f = sv_metrics_family(s->m, "svkit_sub_frames", SV_METRIC_COUNTER, NULL, "Frames", 2, stream);
	lost = sv_metrics_family(s->m, "svkit_sub_lost_samples", SV_METRIC_COUNTER, NULL, "Lost", 2, stream);
	rev = sv_metrics_family(s->m, "svkit_sub_confrev", SV_METRIC_GAUGE, NULL, "confRev", 2, stream);
	q = sv_metrics_family(s->m, "svkit_sub_quality_flags", SV_METRIC_COUNTER, NULL, "Flags", 3, qual);
	assert_non_null(q);
	t = sv_metrics_table_new(s->m, 2, stream, max_rows, &rows_ops, &s->rows);
	assert_non_null(t);
	assert_int_equal(sv_metrics_table_column(t, f, NULL), 0);
	assert_int_equal(sv_metrics_table_column(t, lost, NULL), 1);
	assert_int_equal(sv_metrics_table_column(t, rev, NULL), 2);
	assert_int_equal(sv_metrics_table_column(t, f, NULL), -EEXIST);
	assert_int_equal(sv_metrics_table_column(t, q, NULL), -EINVAL); /* extra label without a value */
	s->rows.svid[0] = "MU01";
	s->rows.appid[0] = 0x4000;
	s->rows.frames[0] = 4000;
	s->rows.lost[0] = 2;
	s->rows.confrev[0] = 1;
	s->rows.svid[1] = "q\"b\\n\nx";
	s->rows.appid[1] = 0x4001;
	s->rows.frames[1] = 10;
	s->rows.confrev[1] = SV_METRICS_ABSENT;
	s->rows.n = 2;
}

static void small_free(struct small *s)
{
	sv_metrics_destroy(s->m);
	free(s->h);
}

static const char golden_hist_body[] =
	"svkit_hop_latency_seconds_bucket{hop=\"T1-T2b\",port=\"vnet0\",le=\"1e-05\"} 1\n"
	"svkit_hop_latency_seconds_bucket{hop=\"T1-T2b\",port=\"vnet0\",le=\"2.5e-05\"} 1\n"
	"svkit_hop_latency_seconds_bucket{hop=\"T1-T2b\",port=\"vnet0\",le=\"5e-05\"} 1\n"
	"svkit_hop_latency_seconds_bucket{hop=\"T1-T2b\",port=\"vnet0\",le=\"0.0001\"} 2\n"
	"svkit_hop_latency_seconds_bucket{hop=\"T1-T2b\",port=\"vnet0\",le=\"0.00015\"} 3\n"
	"svkit_hop_latency_seconds_bucket{hop=\"T1-T2b\",port=\"vnet0\",le=\"0.0002\"} 3\n"
	"svkit_hop_latency_seconds_bucket{hop=\"T1-T2b\",port=\"vnet0\",le=\"0.00025\"} 3\n"
	"svkit_hop_latency_seconds_bucket{hop=\"T1-T2b\",port=\"vnet0\",le=\"0.0003\"} 4\n"
	"svkit_hop_latency_seconds_bucket{hop=\"T1-T2b\",port=\"vnet0\",le=\"0.0004\"} 4\n"
	"svkit_hop_latency_seconds_bucket{hop=\"T1-T2b\",port=\"vnet0\",le=\"0.0005\"} 4\n"
	"svkit_hop_latency_seconds_bucket{hop=\"T1-T2b\",port=\"vnet0\",le=\"0.001\"} 4\n"
	"svkit_hop_latency_seconds_bucket{hop=\"T1-T2b\",port=\"vnet0\",le=\"0.002\"} 4\n"
	"svkit_hop_latency_seconds_bucket{hop=\"T1-T2b\",port=\"vnet0\",le=\"0.004\"} 4\n"
	"svkit_hop_latency_seconds_bucket{hop=\"T1-T2b\",port=\"vnet0\",le=\"0.01\"} 4\n"
	"svkit_hop_latency_seconds_bucket{hop=\"T1-T2b\",port=\"vnet0\",le=\"0.025\"} 4\n"
	"svkit_hop_latency_seconds_bucket{hop=\"T1-T2b\",port=\"vnet0\",le=\"0.05\"} 4\n"
	"svkit_hop_latency_seconds_bucket{hop=\"T1-T2b\",port=\"vnet0\",le=\"0.1\"} 4\n"
	"svkit_hop_latency_seconds_bucket{hop=\"T1-T2b\",port=\"vnet0\",le=\"+Inf\"} 5\n"
	"svkit_hop_latency_seconds_sum{hop=\"T1-T2b\",port=\"vnet0\"} 0.2004539\n"
	"svkit_hop_latency_seconds_count{hop=\"T1-T2b\",port=\"vnet0\"} 5\n";

static void test_golden_openmetrics(void **state)
{
	struct small s;
	char *txt, want[8192];

	(void)state;
	small_build(&s, 8);
	snprintf(want, sizeof(want),
		 "# TYPE svkit_pub_overruns counter\n"
		 "# HELP svkit_pub_overruns Wake-ups later than a \\\"period\\\"\n"
		 "svkit_pub_overruns_total 3\n"
		 "# TYPE svkit_clock_maxerror_seconds gauge\n"
		 "# UNIT svkit_clock_maxerror_seconds seconds\n"
		 "# HELP svkit_clock_maxerror_seconds Max error\n"
		 "svkit_clock_maxerror_seconds 0.000016\n"
		 "# TYPE svkit_build info\n"
		 "# HELP svkit_build Build\n"
		 "svkit_build_info{tool=\"svsub\",version=\"0.1.0\"} 1\n"
		 "# TYPE svkit_hop_latency_seconds histogram\n"
		 "# UNIT svkit_hop_latency_seconds seconds\n"
		 "# HELP svkit_hop_latency_seconds Hop latency\n"
		 "%s"
		 "# TYPE svkit_sub_frames counter\n"
		 "# HELP svkit_sub_frames Frames\n"
		 "svkit_sub_frames_total{svid=\"MU01\",appid=\"0x4000\"} 4000\n"
		 "svkit_sub_frames_total{svid=\"q\\\"b\\\\n\\nx\",appid=\"0x4001\"} 10\n"
		 "# TYPE svkit_sub_lost_samples counter\n"
		 "# HELP svkit_sub_lost_samples Lost\n"
		 "svkit_sub_lost_samples_total{svid=\"MU01\",appid=\"0x4000\"} 2\n"
		 "svkit_sub_lost_samples_total{svid=\"q\\\"b\\\\n\\nx\",appid=\"0x4001\"} 0\n"
		 "# TYPE svkit_sub_confrev gauge\n"
		 "# HELP svkit_sub_confrev confRev\n"
		 "svkit_sub_confrev{svid=\"MU01\",appid=\"0x4000\"} 1\n"
		 "# TYPE svkit_sub_quality_flags counter\n"
		 "# HELP svkit_sub_quality_flags Flags\n"
		 "# EOF\n",
		 golden_hist_body);
	txt = render(s.m, SV_METRICS_OPENMETRICS);
	assert_string_equal(txt, want);
	free(txt);
	small_free(&s);
}

static void test_golden_text004(void **state)
{
	struct small s;
	char *txt, want[8192];

	(void)state;
	small_build(&s, 8);
	snprintf(want, sizeof(want),
		 "# HELP svkit_pub_overruns_total Wake-ups later than a \"period\"\n"
		 "# TYPE svkit_pub_overruns_total counter\n"
		 "svkit_pub_overruns_total 3\n"
		 "# HELP svkit_clock_maxerror_seconds Max error\n"
		 "# TYPE svkit_clock_maxerror_seconds gauge\n"
		 "svkit_clock_maxerror_seconds 0.000016\n"
		 "# HELP svkit_build_info Build\n"
		 "# TYPE svkit_build_info gauge\n"
		 "svkit_build_info{tool=\"svsub\",version=\"0.1.0\"} 1\n"
		 "# HELP svkit_hop_latency_seconds Hop latency\n"
		 "# TYPE svkit_hop_latency_seconds histogram\n"
		 "%s"
		 "# HELP svkit_sub_frames_total Frames\n"
		 "# TYPE svkit_sub_frames_total counter\n"
		 "svkit_sub_frames_total{svid=\"MU01\",appid=\"0x4000\"} 4000\n"
		 "svkit_sub_frames_total{svid=\"q\\\"b\\\\n\\nx\",appid=\"0x4001\"} 10\n"
		 "# HELP svkit_sub_lost_samples_total Lost\n"
		 "# TYPE svkit_sub_lost_samples_total counter\n"
		 "svkit_sub_lost_samples_total{svid=\"MU01\",appid=\"0x4000\"} 2\n"
		 "svkit_sub_lost_samples_total{svid=\"q\\\"b\\\\n\\nx\",appid=\"0x4001\"} 0\n"
		 "# HELP svkit_sub_confrev confRev\n"
		 "# TYPE svkit_sub_confrev gauge\n"
		 "svkit_sub_confrev{svid=\"MU01\",appid=\"0x4000\"} 1\n"
		 "# HELP svkit_sub_quality_flags_total Flags\n"
		 "# TYPE svkit_sub_quality_flags_total counter\n",
		 golden_hist_body);
	txt = render(s.m, SV_METRICS_TEXT_004);
	assert_string_equal(txt, want);
	free(txt);
	small_free(&s);
}

/* Rows past max_rows fold into one "overflow" row: counters summed, gauges left out; series stay bounded. */
static void test_overflow(void **state)
{
	static const char *const names[] = { "A", "B", "C", "D", "E", "F" };
	struct small s;
	char *txt;

	(void)state;
	small_build(&s, 3);
	for (unsigned i = 0; i < 6; i++) {
		s.rows.svid[i] = names[i];
		s.rows.appid[i] = (uint16_t)(0x4000 + i);
		s.rows.frames[i] = 100 + i;
		s.rows.lost[i] = i;
		s.rows.confrev[i] = 7;
	}
	s.rows.n = 3;
	txt = render(s.m, SV_METRICS_OPENMETRICS);
	assert_null(strstr(txt, "overflow")); /* exactly max_rows: nothing folded */
	free(txt);
	s.rows.n = 6;
	txt = render(s.m, SV_METRICS_OPENMETRICS);
	assert_non_null(strstr(txt, "svkit_sub_frames_total{svid=\"C\",appid=\"0x4002\"} 102\n"));
	assert_null(strstr(txt, "svid=\"D\""));
	assert_non_null(strstr(txt, "svkit_sub_frames_total{svid=\"overflow\",appid=\"overflow\"} 312\n"));
	assert_non_null(strstr(txt, "svkit_sub_lost_samples_total{svid=\"overflow\",appid=\"overflow\"} 12\n"));
	assert_null(strstr(txt, "svkit_sub_confrev{svid=\"overflow\""));
	free(txt);
	small_free(&s);
}

/* Label values: escapes per the formats, bytes >= 0x80 as U+0080..U+00FF (valid UTF-8, distinct). */
static void test_label_escaping(void **state)
{
	static const struct {
		const char *in;
		size_t len;
		const char *out;
	} cases[] = {
		{ "plain", 5, "plain" },
		{ "a\"b", 3, "a\\\"b" },
		{ "a\\b", 3, "a\\\\b" },
		{ "a\nb", 3, "a\\nb" },
		{ "\\n", 2, "\\\\n" }, /* a backslash and an n: not a newline */
		{ "tab\there", 8, "tab\there" },
		{ "\xc3\xa9", 2, "\xc3\x83\xc2\xa9" }, /* the UTF-8 of e-acute, as two Latin-1 characters */
		{ "\xff\x80", 2, "\xc3\xbf\xc2\x80" },
	};
	static const char *const stream[] = { "svid" };

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sv_metrics_text t = { 0 };
		struct sv_metrics *m;
		struct sv_metrics_family *f;
		uint64_t c = 1;
		char v[64], want[128];
		int wl;

		if (memchr(cases[i].in, '\0', cases[i].len))
			continue; /* static series take C strings; test_label_bytes takes any bytes through a table */
		memcpy(v, cases[i].in, cases[i].len);
		v[cases[i].len] = '\0';
		assert_int_equal(sv_metrics_create(&m, 0), 0);
		f = sv_metrics_family(m, "svkit_x", SV_METRIC_GAUGE, NULL, "x", 1, stream);
		assert_int_equal(sv_metrics_add_u64(f, (const char *const[]){ v }, &c), 0);
		for (int fmt = 0; fmt < 2; fmt++) {
			assert_int_equal(sv_metrics_render(m, (enum sv_metrics_format)fmt, &t, NULL), 0);
			wl = snprintf(want, sizeof(want), "svkit_x{svid=\"%s\"} 1\n", cases[i].out);
			if (!memmem(t.p, t.len, want, (size_t)wl))
				fail_msg("case %zu format %d", i, fmt);
		}
		sv_metrics_text_free(&t);
		sv_metrics_destroy(m);
	}
}

/* Any bytes through a table (the svID path): NUL, high bytes, quotes. */
struct bytes_row {
	const char *v;
	size_t len;
};
static unsigned one_row(void *ctx)
{
	(void)ctx;
	return 1;
}
static int bytes_labels(void *ctx, unsigned row, const char **val, size_t *len, char *buf, size_t size)
{
	struct bytes_row *b = ctx;

	(void)row;
	(void)buf;
	(void)size;
	val[0] = b->v;
	len[0] = b->len;
	return 0;
}
static void bytes_values(void *ctx, unsigned row, uint64_t *v)
{
	(void)ctx;
	(void)row;
	v[0] = 1;
}

static void test_label_bytes(void **state)
{
	static const struct sv_metrics_table_ops ops = { one_row, bytes_labels, bytes_values };
	static const char *const names[] = { "svid" };
	struct bytes_row b = { "z\0\"\xe9", 4 };
	static const char want[] = "svkit_y_total{svid=\"z\0\\\"\xc3\xa9\"} 1\n";
	struct sv_metrics_text t = { 0 };
	struct sv_metrics *m;
	struct sv_metrics_table *tab;
	struct sv_metrics_family *f;

	(void)state;
	assert_int_equal(sv_metrics_create(&m, 0), 0);
	f = sv_metrics_family(m, "svkit_y", SV_METRIC_COUNTER, NULL, "y", 1, names);
	tab = sv_metrics_table_new(m, 1, names, 4, &ops, &b);
	assert_int_equal(sv_metrics_table_column(tab, f, NULL), 0);
	assert_int_equal(sv_metrics_render(m, SV_METRICS_TEXT_004, &t, NULL), 0);
	assert_non_null(memmem(t.p, t.len, want, sizeof(want) - 1));
	sv_metrics_text_free(&t);
	sv_metrics_destroy(m);
}

/* ---- bucket conversion: exported cumulative counts against exact counts ---- */

static void test_hist_edges(void **state)
{
	(void)state;
	for (unsigned i = 0; i < SV_METRICS_HIST_EDGES; i++) {
		int64_t e = sv_metrics_hist_edge_ns[i], lo = sv_metrics_hist_edge_lo_ns(i);

		assert_true(lo <= e + 1);
		/* what is counted one bucket too high is [lo, e]: under 1/64 of the edge, 0.68 % for these */
		assert_true((e + 1 - lo) * 64 <= e);
		assert_true((double)(e + 1 - lo) / (double)e < 0.0068);
		assert_true(strtod(sv_metrics_hist_edge_le[i], NULL) * 1e9 > (double)e - 0.5);
		assert_true(strtod(sv_metrics_hist_edge_le[i], NULL) * 1e9 < (double)e + 0.5);
		if (i)
			assert_true(e > sv_metrics_hist_edge_ns[i - 1]);
	}
	assert_int_equal(sv_metrics_hist_edge_ns[3], 100000);
	assert_int_equal(sv_metrics_hist_edge_ns[6], 250000);
	assert_int_equal(sv_metrics_hist_edge_lo_ns(3), 99328);
	assert_int_equal(sv_metrics_hist_edge_lo_ns(6), 249856);
}

static void test_hist_conversion(void **state)
{
	enum { N = 200000 };
	struct sv_stats *h = malloc(sizeof(*h));
	int64_t *v = malloc(N * sizeof(*v));
	struct sv_metrics_hist x;
	unsigned __int128 sum = 0;
	uint64_t cum = 0;

	(void)state;
	assert_non_null(h);
	assert_non_null(v);
	sv_stats_init(h);
	for (int i = 0; i < N; i++) {
		uint64_t r = rnd();

		if (i < 4 * SV_METRICS_HIST_EDGES) {
			/* every edge, its neighbours and its straddling bucket's start */
			int64_t e = sv_metrics_hist_edge_ns[i / 4];
			int64_t pick[4] = { e, e + 1, sv_metrics_hist_edge_lo_ns((unsigned)i / 4),
					    sv_metrics_hist_edge_lo_ns((unsigned)i / 4) - 1 };

			v[i] = pick[i % 4];
		} else {
			/* log-uniform from 1 ns to ~1 s */
			v[i] = (int64_t)((r >> 34) & ((1ull << (r % 30)) - 1));
		}
		sv_stats_add(h, v[i]);
		sum += (unsigned __int128)v[i];
	}
	memset(&x, 0, sizeof(x));
	sv_metrics_hist_add(&x, h);
	for (unsigned e = 0; e <= SV_METRICS_HIST_EDGES; e++) {
		uint64_t exact_lo = 0, exact_le = 0;

		cum += x.bucket[e];
		if (e == SV_METRICS_HIST_EDGES) {
			assert_int_equal(cum, N); /* +Inf == _count */
			break;
		}
		for (int i = 0; i < N; i++) {
			exact_lo += v[i] < sv_metrics_hist_edge_lo_ns(e);
			exact_le += v[i] <= sv_metrics_hist_edge_ns[e];
		}
		/* exactly the values below the straddling bucket; never more than the true count at the edge */
		assert_int_equal(cum, exact_lo);
		assert_true(cum <= exact_le);
	}
	assert_true(((unsigned __int128)x.sum_hi << 64 | x.sum_lo) == sum);
	free(v);
	free(h);
}

/* ---- Accept and ADDR:PORT ---- */

static void test_accept(void **state)
{
	static const struct {
		const char *accept;
		enum sv_metrics_format fmt;
	} cases[] = {
		{ NULL, SV_METRICS_TEXT_004 },
		{ "", SV_METRICS_TEXT_004 },
		{ "*/*", SV_METRICS_TEXT_004 },
		{ "text/plain", SV_METRICS_TEXT_004 },
		{ "application/openmetrics-text", SV_METRICS_OPENMETRICS },
		/* Prometheus 2.42's scrape Accept */
		{ "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
		  "text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
		  SV_METRICS_OPENMETRICS },
		{ "text/plain;version=0.0.4;q=0.9, application/openmetrics-text;q=0.5", SV_METRICS_TEXT_004 },
		{ "application/openmetrics-text;q=0", SV_METRICS_TEXT_004 },
		{ "Application/OpenMetrics-Text ; q=1.0", SV_METRICS_OPENMETRICS },
		{ "application/openmetrics-text;q=2", SV_METRICS_TEXT_004 },
		{ "application/openmetrics-text;q=abc", SV_METRICS_TEXT_004 },
		{ "application/openmetrics-text, text/plain", SV_METRICS_OPENMETRICS },
		{ ",,;;,application/openmetrics-text;;", SV_METRICS_OPENMETRICS },
		{ "application/openmetrics-textx", SV_METRICS_TEXT_004 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (sv_metrics_format_for_accept(cases[i].accept) != cases[i].fmt)
			fail_msg("Accept '%s'", cases[i].accept ? cases[i].accept : "(null)");
	}
	assert_non_null(strstr(sv_metrics_content_type(SV_METRICS_OPENMETRICS), "version=1.0.0"));
	assert_non_null(strstr(sv_metrics_content_type(SV_METRICS_TEXT_004), "version=0.0.4"));
}

static void test_addr_parse(void **state)
{
	static const struct {
		const char *s;
		int family;
		unsigned port;
	} good[] = {
		{ "127.0.0.1:9101", AF_INET, 9101 }, { "0.0.0.0:0", AF_INET, 0 },	  { "[::1]:9101", AF_INET6, 9101 },
		{ "[::]:65535", AF_INET6, 65535 },    { "10.1.2.3:00080", AF_INET, 80 },
		{ "[fe80::1%lo]:9101", AF_INET6, 9101 }, /* a link-local address names its interface */
	};
	static const char *const bad[] = {
		"",	   "9101",	 ":9101",	"127.0.0.1",	 "127.0.0.1:",	      "127.0.0.1:65536",
		"127.0.0.1:-1", "127.0.0.1:+80", "127.0.0.1:80x", "localhost:9101", "::1:9101",	      "[::1]9101",
		"[::1",	   "[]:9101",	 "[127.0.0.1]:80", "1.2.3:80",	     "0x7f.0.0.1:80", "1.2.3.4.5:80",
		"256.1.1.1:80", " 1.2.3.4:80",	"1.2.3.4 :80",	 "[::1]:123456",    "[::1]:",	      "[:::]:80",
	};
	struct sockaddr_storage ss;
	socklen_t len;
	const char *why;

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		if (sv_metrics_addr_parse(good[i].s, &ss, &len, &why))
			fail_msg("'%s' refused: %s", good[i].s, why);
		assert_int_equal(ss.ss_family, good[i].family);
		assert_int_equal(ntohs(good[i].family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
								 : ((struct sockaddr_in6 *)&ss)->sin6_port),
				 good[i].port);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = NULL;
		if (sv_metrics_addr_parse(bad[i], &ss, &len, &why) != -EINVAL)
			fail_msg("'%s' accepted", bad[i]);
		assert_non_null(why);
	}
	assert_int_equal(sv_metrics_addr_parse(NULL, &ss, &len, NULL), -EINVAL);
}

/* ---- health, finish ---- */

static void test_health_finish(void **state)
{
	struct sv_metrics *m;
	struct sv_metrics_health h = { .events_lost = 5, .ring_overflows = 6 };
	char *txt;
	bool final = true;
	struct sv_metrics_text t = { 0 };

	(void)state;
	assert_int_equal(sv_metrics_create(&m, 0), 0);
	assert_int_equal(sv_metrics_add_health(m, "svtrace", "hv1", &h), 0);
	assert_int_equal(sv_metrics_add_health(m, "svtrace", "hv1", &h), -EEXIST);
	sv_metrics_health_record(&h, NULL);
	assert_int_equal(sv_metrics_render(m, SV_METRICS_OPENMETRICS, &t, &final), 0);
	assert_false(final);
	sv_metrics_text_free(&t);
	txt = render(m, SV_METRICS_OPENMETRICS);
	assert_non_null(strstr(txt, "svkit_build_info{tool=\"svtrace\",version=\"" SVKIT_VERSION "\",host=\"hv1\"} 1\n"));
	assert_non_null(strstr(txt, "svkit_run_finished 0\n"));
	assert_non_null(strstr(txt, "svkit_events_lost_total 5\n"));
	assert_non_null(strstr(txt, "svkit_ring_overflows_total 6\n"));
	assert_non_null(strstr(txt, "# UNIT svkit_record_written_bytes bytes\n"));
	assert_non_null(strstr(txt, "\nsvkit_clock_synchronised "));
	assert_non_null(strstr(txt, "\nsvkit_clock_maxerror_seconds "));
	assert_non_null(strstr(txt, "\nsvkit_process_start_time_seconds 1"));
	free(txt);
	sv_metrics_finish(m);
	assert_int_equal(sv_metrics_render(m, SV_METRICS_OPENMETRICS, &t, &final), 0);
	assert_true(final);
	assert_non_null(memmem(t.p, t.len, "svkit_run_finished 1\n", 21));
	sv_metrics_text_free(&t);
	sv_metrics_destroy(m);
}

/* ---- scrapes racing a writer: monotonic counters, +Inf == _count, cumulative buckets ---- */

struct race {
	struct sv_stats *h;
	uint64_t c;
	int stop;
};

static void *race_writer(void *arg)
{
	struct race *r = arg;
	uint64_t x = 1;

	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		sv_stats_add(r->h, (int64_t)(x >> 44)); /* 0 .. ~1 ms */
		sv_metrics_inc(&r->c, 1);
	}
	return NULL;
}

static uint64_t field(const char *txt, const char *key)
{
	const char *p = strstr(txt, key);

	assert_non_null(p);
	return strtoull(p + strlen(key), NULL, 10);
}

static void test_race(void **state)
{
	struct race r = { 0 };
	struct sv_metrics *m;
	struct sv_metrics_family *f;
	struct sv_metrics_text t = { 0 };
	pthread_t th;
	uint64_t prev_c = 0, prev_count = 0;

	(void)state;
	r.h = malloc(sizeof(*r.h));
	sv_stats_init(r.h);
	assert_int_equal(sv_metrics_create(&m, 0), 0);
	f = sv_metrics_family(m, "svkit_w", SV_METRIC_COUNTER, NULL, "w", 0, NULL);
	assert_int_equal(sv_metrics_add_u64(f, NULL, &r.c), 0);
	f = sv_metrics_family(m, "svkit_w_seconds", SV_METRIC_HISTOGRAM, "seconds", "w", 0, NULL);
	assert_int_equal(sv_metrics_add_hist(f, NULL, r.h), 0);
	assert_int_equal(pthread_create(&th, NULL, race_writer, &r), 0);
	for (int i = 0; i < 300; i++) {
		char *txt, *p;
		uint64_t c, count, inf, last = 0;

		assert_int_equal(sv_metrics_render(m, SV_METRICS_OPENMETRICS, &t, NULL), 0);
		txt = strndup(t.p, t.len);
		c = field(txt, "svkit_w_total ");
		count = field(txt, "svkit_w_seconds_count ");
		inf = field(txt, "le=\"+Inf\"} ");
		assert_true(c >= prev_c);
		assert_true(count >= prev_count);
		assert_int_equal(inf, count);
		for (p = strstr(txt, "_bucket{"); p; p = strstr(p + 1, "_bucket{")) {
			uint64_t b = strtoull(strstr(p, "} ") + 2, NULL, 10);

			assert_true(b >= last);
			last = b;
		}
		prev_c = c;
		prev_count = count;
		free(txt);
	}
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELAXED);
	pthread_join(th, NULL);
	sv_metrics_text_free(&t);
	sv_metrics_destroy(m);
	free(r.h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_registry_rules), cmocka_unit_test(test_series_bound),
		cmocka_unit_test(test_golden_openmetrics), cmocka_unit_test(test_golden_text004),
		cmocka_unit_test(test_overflow),       cmocka_unit_test(test_label_escaping),
		cmocka_unit_test(test_label_bytes),    cmocka_unit_test(test_hist_edges),
		cmocka_unit_test(test_hist_conversion), cmocka_unit_test(test_accept),
		cmocka_unit_test(test_addr_parse),     cmocka_unit_test(test_health_finish),
		cmocka_unit_test(test_race),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

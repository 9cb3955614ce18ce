// SPDX-License-Identifier: Apache-2.0
/*
 * svreport's engine on hand-made records with known latencies: exact percentiles from per-frame
 * records, bucket error bounds from per-second summaries only, and exactly one lost, duplicate,
 * reordered frame and a missing hop reported as such; a tracer's off-by-one-second key is re-derived;
 * budgets, verdicts and the clock check; frames a full disk kept out of a file (its writer's UNWRITTEN
 * record, made by a real dropped stretch: RLIMIT_FSIZE; an older writer's END count) are not recorded at
 * its point, not lost, in the window and in an outage.
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
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "sv_clock.h"
#include "sv_record.h"
#include "sv_stats.h"
#include "svreport.h"
#include "unit_fsize.h"

#define SEC0 1700000000u
#define RATE 4000u

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/test_report.XXXXXX");
	assert_non_null(mkdtemp(dir));
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static const char *path_of(const char *name)
{
	static char buf[8][128];
	static unsigned k;
	char *p = buf[k++ % 8];

	snprintf(p, 128, "%s/%s", dir, name);
	return p;
}

/* A STREAM of @rate (0: unknown) for svID MU01 at index 0: svtrace and svsub on 9-2LE define it without a
 * rate first, then again once they learn it. */
static void define_rate(struct sv_record_writer *w, uint32_t rate)
{
	struct sv_rec_stream s = {.stream = 0, .appid = 0x4000, .asdus = 1, .sample_rate = rate, .conf_rev = 1,
				  .vlan = 0xFFFF, .smp_synch = 2, .svid_len = 4, .smp_wrap = rate ? rate : 65536};

	memcpy(s.svid, "MU01", 5);
	assert_int_equal(sv_record_define_stream(w, &s), 0);
}

static struct sv_record_writer *wopen(const char *name, const char *tool, const char *host, bool synced,
				      uint32_t rate)
{
	struct sv_clock_sync sync = {.unsync = !synced, .tai_unset = false, .state = synced ? 0 : 5,
				     .tai_offset_s = 37, .maxerror_ns = 1000};
	struct sv_record_writer_cfg cfg = {
		.path = path_of(name), .tool = tool, .clock = SV_CLOCK_TAI, .sync = &sync, .host = host,
		.no_to_tai = true,
	};
	struct sv_record_writer *w = NULL;

	assert_int_equal(sv_record_writer_open(&w, &cfg), 0);
	define_rate(w, rate);
	return w;
}

static void ev_write(struct sv_record_writer *w, unsigned point, uint32_t sec, uint16_t smp, int64_t t_ns,
		     uint16_t guest)
{
	struct sv_rec_event ev = {.point = (uint8_t)point, .stream = 0, .t_ns = t_ns, .tai_sec = sec,
				  .smp_cnt = smp, .ts_src = SV_TS_SOFTWARE, .guest = guest, .nasdu = 1};

	assert_int_equal(sv_record_write_event(w, &ev), 0);
}

static int64_t ts_of(unsigned k)
{
	return sv_sample_time_ns(SEC0 + k / RATE, k % RATE, RATE);
}

static struct svr *run(const char *files[], const char *guests[], unsigned n)
{
	struct svr *r;

	assert_int_equal(svr_create(&r, NULL), 0);
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(svr_add_file(r, path_of(files[i]), guests ? guests[i] : NULL), 0);
	assert_int_equal(svr_run(r), 0);
	return r;
}

/* The report as text (@json false) or JSON, into *@out (malloc'd). */
static void report_of(struct svr *r, const struct svr_budgets *b, const struct svr_eval *e, bool json, char **out)
{
	size_t len = 0;
	FILE *f;

	*out = NULL;
	f = open_memstream(out, &len);
	assert_non_null(f);
	assert_int_equal(json ? svr_write_json(r, b, e, NULL, f) : svr_write_text(r, b, e, NULL, f), 0);
	fclose(f);
}

/* 1000 frames: Ts-T0 = 10 us + k ns, T0-T3 a permutation of 1..1000 us: nearest-rank percentiles exact. */
static void test_exact_percentiles(void **state)
{
	struct sv_record_writer *pub, *sub;
	const char *files[] = {"pub.rec", "sub.rec"}, *guests[] = {NULL, "vm1"};
	struct svr_hop h;
	struct svr *r;

	(void)state;
	pub = wopen("pub.rec", "svpub", "hostA", true, RATE);
	sub = wopen("sub.rec", "svsub", "hostA", true, 0); /* the subscriber may not know the rate */
	for (unsigned k = 0; k < 1000; k++) {
		int64_t t0 = ts_of(k) + 10000 + k;
		unsigned perm = (k * 7919u) % 1000u; /* 7919 is prime: a permutation of 0..999 */

		ev_write(pub, SV_POINT_T0, SEC0, (uint16_t)k, t0, SV_REC_GUEST_NONE);
		ev_write(sub, SV_POINT_T3, SEC0, (uint16_t)k, t0 + 1000 * (int64_t)(perm + 1), SV_REC_GUEST_NONE);
	}
	assert_int_equal(sv_record_writer_close(pub), 0);
	assert_int_equal(sv_record_writer_close(sub), 0);
	r = run(files, guests, 2);
	assert_int_equal(svr_nguests(r), 1);
	assert_string_equal(svr_guest_name(r, 0), "vm1");

	assert_int_equal(svr_hop_get(r, SV_POINT_T0, SV_POINT_T3, 0, -1, &h), 0);
	assert_true(h.lat.exact);
	assert_int_equal(h.count, 1000);
	assert_int_equal(h.lost, 0);
	assert_int_equal(h.lat.min, 1000);
	assert_int_equal(h.lat.p50, 500000);	/* rank 500 */
	assert_int_equal(h.lat.p99, 990000);	/* rank 990 */
	assert_int_equal(h.lat.p999, 999000);	/* rank 999 */
	assert_int_equal(h.lat.p9999, 1000000); /* rank ceil(999.9) = 1000 */
	assert_int_equal(h.lat.max, 1000000);
	/* the only stream: its per-stream entry is exact too */
	assert_int_equal(svr_hop_get(r, SV_POINT_T0, SV_POINT_T3, 0, 0, &h), 0);
	assert_true(h.lat.exact);
	assert_int_equal(h.lat.p99, 990000);

	assert_int_equal(svr_hop_get(r, SV_POINT_TS, SV_POINT_T0, SVR_GUEST_SHARED, -1, &h), 0);
	assert_true(h.lat.exact);
	assert_int_equal(h.count, 1000);
	assert_int_equal(h.lat.min, 10000);
	assert_int_equal(h.lat.p50, 10000 + 499);
	assert_int_equal(h.lat.p99, 10000 + 989);
	assert_int_equal(h.lat.max, 10000 + 999);
	/* pacing at T0: 250 us + 1 ns each */
	assert_non_null(svr_point(r, SV_POINT_T0, -1)->pacing);
	assert_int_equal(svr_point(r, SV_POINT_T0, -1)->pacing->count, 999);
	assert_int_equal(svr_point(r, SV_POINT_T0, -1)->pacing->min, 250001);
	assert_int_equal(svr_point(r, SV_POINT_T0, -1)->nominal_ns, 250000);
	svr_destroy(r);
}

/* One lost (frame 10 never at T3), one duplicate (20 twice at T3), one reordered (31 before 30), no T1/T2
 * records at all: reported exactly, and the hops bridge the missing points. */
static void test_anomalies(void **state)
{
	struct sv_record_writer *pub, *sub;
	const char *files[] = {"pub.rec", "sub.rec"}, *guests[] = {NULL, "vm1"};
	uint8_t pairs[16][2];
	struct svr_hop h;
	struct svr *r;
	unsigned n;
	bool t0t3 = false;

	(void)state;
	pub = wopen("pub.rec", "svpub", "hostA", true, RATE);
	sub = wopen("sub.rec", "svsub", "hostA", true, RATE);
	for (unsigned k = 0; k < 100; k++)
		ev_write(pub, SV_POINT_T0, SEC0, (uint16_t)k, ts_of(k) + 5000, SV_REC_GUEST_NONE);
	for (unsigned k = 0; k < 100; k++) {
		unsigned kk = k == 30 ? 31 : k == 31 ? 30 : k;

		if (kk == 10)
			continue;
		ev_write(sub, SV_POINT_T3, SEC0, (uint16_t)kk, ts_of(kk) + 50000, SV_REC_GUEST_NONE);
		if (kk == 20)
			ev_write(sub, SV_POINT_T3, SEC0, (uint16_t)kk, ts_of(kk) + 60000, SV_REC_GUEST_NONE);
	}
	assert_int_equal(sv_record_writer_close(pub), 0);
	assert_int_equal(sv_record_writer_close(sub), 0);
	r = run(files, guests, 2);

	assert_int_equal(svr_hop_get(r, SV_POINT_T0, SV_POINT_T3, 0, -1, &h), 0);
	assert_int_equal(h.count, 99);
	assert_int_equal(h.lost, 1);
	assert_int_equal(h.lat.min, 45000);
	assert_int_equal(h.lat.max, 45000); /* the duplicate's later time is not used */
	assert_int_equal(svr_hop_get(r, SV_POINT_TS, SV_POINT_T3, 0, -1, &h), 0);
	assert_int_equal(h.lost, 1);
	assert_int_equal(svr_point(r, SV_POINT_T3, 0)->duplicates, 1);
	assert_int_equal(svr_point(r, SV_POINT_T3, 0)->reordered, 1);
	assert_int_equal(svr_point(r, SV_POINT_T3, 0)->frames, 99);
	assert_int_equal(svr_point(r, SV_POINT_T0, -1)->duplicates, 0);
	assert_int_equal(svr_point(r, SV_POINT_T0, -1)->reordered, 0);
	/* the missing hop: no T1, T2a, T2b anywhere */
	assert_false(svr_point_present(r, SV_POINT_T1, -1));
	assert_false(svr_point_present(r, SV_POINT_T2A, 0));
	assert_false(svr_point_present(r, SV_POINT_T2B, 0));
	assert_true(svr_point_present(r, SV_POINT_T3, 0));
	n = svr_hop_list(r, 0, pairs, 16);
	for (unsigned i = 0; i < n; i++) {
		assert_true(pairs[i][0] != SV_POINT_T1 && pairs[i][1] != SV_POINT_T1);
		assert_true(pairs[i][1] != SV_POINT_T2A && pairs[i][1] != SV_POINT_T2B);
		t0t3 |= pairs[i][0] == SV_POINT_T0 && pairs[i][1] == SV_POINT_T3;
	}
	assert_true(t0t3);
	assert_int_equal(svr_totals(r)->frames, 100);
	svr_destroy(r);
}

/* A frame nobody recorded after the publisher, a frame lost before everybody (gap in the sequence), and
 * a frame missing only at an intermediate point (the tracer's record, not the frame, was lost). */
static void test_lost_missing(void **state)
{
	struct sv_record_writer *pub, *tr, *sub;
	const char *files[] = {"pub.rec", "trace.rec", "sub.rec"}, *guests[] = {NULL, NULL, "vm1"};
	struct svr_hop h;
	struct svr *r;

	(void)state;
	pub = wopen("pub.rec", "svpub", "hostA", true, RATE);
	tr = wopen("trace.rec", "svtrace", "hostA", true, 0);
	sub = wopen("sub.rec", "svsub", "hostA", true, RATE);
	for (unsigned k = 0; k < 200; k++) {
		if (k != 50)	/* 50: never published (no record anywhere): a gap */
			ev_write(pub, SV_POINT_T0, SEC0, (uint16_t)k, ts_of(k) + 5000, SV_REC_GUEST_NONE);
		if (k != 50 && k != 60)	/* 60: lost between T0 and T1 */
			if (k != 70)	/* 70: the tracer missed its T1 record, the guest got it */
				ev_write(tr, SV_POINT_T1, SEC0, (uint16_t)k, ts_of(k) + 20000, SV_REC_GUEST_NONE);
		if (k != 50 && k != 60)
			ev_write(sub, SV_POINT_T3, SEC0, (uint16_t)k, ts_of(k) + 70000, SV_REC_GUEST_NONE);
	}
	assert_int_equal(sv_record_writer_close(pub), 0);
	assert_int_equal(sv_record_writer_close(tr), 0);
	assert_int_equal(sv_record_writer_close(sub), 0);
	r = run(files, guests, 3);
	assert_int_equal(svr_hop_get(r, SV_POINT_T0, SV_POINT_T1, SVR_GUEST_SHARED, -1, &h), 0);
	assert_int_equal(h.count, 197);
	assert_int_equal(h.lost, 1);	/* 60 */
	assert_int_equal(h.missing, 1);	/* 70 */
	assert_int_equal(h.lat.p50, 15000);
	assert_int_equal(svr_hop_get(r, SV_POINT_T1, SV_POINT_T3, 0, -1, &h), 0);
	assert_int_equal(h.count, 197);
	assert_int_equal(h.lost, 0);
	assert_int_equal(h.lat.max, 50000);
	assert_int_equal(svr_hop_get(r, SV_POINT_TS, SV_POINT_T3, 0, -1, &h), 0);
	assert_int_equal(h.count, 198);
	assert_int_equal(h.lost, 2);	/* 50 (before everyone) + 60 */
	assert_int_equal(svr_hop_get(r, SV_POINT_T0, SV_POINT_T3, 0, -1, &h), 0);
	assert_int_equal(h.lost, 1);	/* 60 only: 50 never reached T0 */
	assert_int_equal(svr_point(r, SV_POINT_T1, -1)->missing, 1);
	svr_destroy(r);
}

/* svtrace stamps tai_sec from the event's own time: a frame of the end of a second seen just after the
 * next one began must still join its publisher record. */
static void test_tracer_second_realigned(void **state)
{
	struct sv_record_writer *pub, *tr;
	const char *files[] = {"pub.rec", "trace.rec"};
	struct svr_hop h;
	struct svr *r;

	(void)state;
	pub = wopen("pub.rec", "svpub", "hostA", true, RATE);
	tr = wopen("trace.rec", "svtrace", "hostA", true, 0);
	for (unsigned k = RATE - 100; k < RATE + 100; k++) {
		int64_t t1 = ts_of(k) + 300000;

		ev_write(pub, SV_POINT_T0, SEC0 + k / RATE, (uint16_t)(k % RATE), ts_of(k) + 5000, SV_REC_GUEST_NONE);
		ev_write(tr, SV_POINT_T1, (uint32_t)sv_ns_to_sec_floor(t1), (uint16_t)(k % RATE), t1, SV_REC_GUEST_NONE);
	}
	assert_int_equal(sv_record_writer_close(pub), 0);
	assert_int_equal(sv_record_writer_close(tr), 0);
	r = run(files, NULL, 2);
	assert_int_equal(svr_hop_get(r, SV_POINT_T0, SV_POINT_T1, SVR_GUEST_SHARED, -1, &h), 0);
	assert_int_equal(h.count, 200);
	assert_int_equal(h.lost, 0);
	assert_int_equal(h.lat.min, 295000);
	assert_int_equal(h.lat.max, 295000);
	assert_int_equal(svr_totals(r)->realigned, 1); /* smpCnt 3999: seen 50 us into the next second */
	svr_destroy(r);
}

/* Per-second HIST records only: percentiles within the stated bucket error of the true ones. */
static void test_summaries_only(void **state)
{
	static struct sv_stats hs;
	static int64_t all[3 * 4000];
	struct sv_record_writer *pub;
	const char *files[] = {"pub.rec"};
	struct sv_stats_summary truth;
	struct svr_hop h;
	struct svr *r;
	size_t n = 0;

	(void)state;
	pub = wopen("pub.rec", "svpub", "hostA", true, RATE);
	for (unsigned s = 0; s < 3; s++) {
		struct sv_rec_hist hdr = {.point = SV_POINT_T0, .stream = 0, .from_point = SV_POINT_TS,
					  .guest = SV_REC_GUEST_NONE, .tai_sec = SEC0 + s, .period_ms = 1000};
		struct sv_rec_summary sum = {.point = SV_POINT_T0, .stream = 0, .from_point = SV_POINT_TS,
					     .guest = SV_REC_GUEST_NONE, .tai_sec = SEC0 + s, .period_ms = 1000};

		sv_stats_init(&hs);
		for (unsigned k = 0; k < 4000; k++) {
			/* a skewed distribution spanning 3 decades */
			int64_t v = 2000 + (int64_t)k * k / 7 + s * 1234;

			sv_stats_add(&hs, v);
			all[n++] = v;
		}
		sv_rec_summary_fill(&sum, &hs);
		sum.frames = 4000;
		sum.lost = s == 1 ? 3 : 0;
		assert_int_equal(sv_record_write_summary(pub, &sum), 0);
		assert_int_equal(sv_record_write_hist(pub, &hdr, &hs), 0);
	}
	assert_int_equal(sv_record_writer_close(pub), 0);
	r = run(files, NULL, 1);
	assert_int_equal(sv_stats_exact_summary(all, n, &truth), 0);
	assert_int_equal(svr_hop_get(r, SV_POINT_TS, SV_POINT_T0, SVR_GUEST_SHARED, -1, &h), 0);
	assert_true(h.from_summaries);
	assert_false(h.lat.exact);
	assert_int_equal(h.count, 12000);
	assert_int_equal(h.lost, 3);
	assert_int_equal(h.lat.min, truth.min);
	assert_int_equal(h.lat.max, truth.max);
#define WITHIN(k) do { \
		assert_true(llabs(h.lat.k - truth.k) <= h.lat.k##_err); \
		assert_true(h.lat.k##_err <= truth.k / 128 + 1); \
	} while (0)
	WITHIN(p50);
	WITHIN(p99);
	WITHIN(p999);
	WITHIN(p9999);
#undef WITHIN
	svr_destroy(r);
}

static void write_file(const char *name, const char *text)
{
	FILE *f = fopen(path_of(name), "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void make_pair(const char *host_sub, bool sub_synced, int64_t lat)
{
	struct sv_record_writer *pub, *sub;

	pub = wopen("pub.rec", "svpub", "hostA", true, RATE);
	sub = wopen("sub.rec", "svsub", host_sub, sub_synced, RATE);
	for (unsigned k = 0; k < 100; k++) {
		ev_write(pub, SV_POINT_T0, SEC0, (uint16_t)k, ts_of(k) + 5000, SV_REC_GUEST_NONE);
		ev_write(sub, SV_POINT_T3, SEC0, (uint16_t)k, ts_of(k) + 5000 + lat, SV_REC_GUEST_NONE);
		ev_write(sub, SV_POINT_T4, SEC0, (uint16_t)k, ts_of(k) + 5000 + lat + 3000, SV_REC_GUEST_NONE);
	}
	assert_int_equal(sv_record_writer_close(pub), 0);
	assert_int_equal(sv_record_writer_close(sub), 0);
}

static void test_budgets_verdict(void **state)
{
	const char *files[] = {"pub.rec", "sub.rec"}, *guests[] = {NULL, "vm1"};
	struct svr_budgets b;
	static struct svr_eval e;
	char err[700];
	struct svr *r;

	(void)state;
	/* defaults: T0-T4 max 250 us, T3-T4 100 us; T1-T2b has no data */
	make_pair("hostA", true, 100000);
	r = run(files, guests, 2);
	svr_budgets_default(&b);
	svr_evaluate(r, &b, &e);
	assert_int_equal(e.verdict, SVR_PASS);
	assert_true(e.res[0][0].evaluated);
	assert_int_equal(e.res[0][0].value, 103000);
	assert_false(e.res[1][0].evaluated);	/* T1-T2b: no data */
	assert_true(e.res[2][0].pass);
	svr_destroy(r);

	make_pair("hostA", true, 300000);
	r = run(files, guests, 2);
	svr_evaluate(r, &b, &e);
	assert_int_equal(e.verdict, SVR_FAIL);
	assert_false(e.res[0][0].pass);
	svr_destroy(r);

	/* two hosts, the subscriber's clock unsynchronised: neither pass nor fail */
	make_pair("hostB", false, 300000);
	r = run(files, guests, 2);
	svr_evaluate(r, &b, &e);
	assert_int_equal(e.verdict, SVR_UNSYNCHRONISED);
	assert_false(e.clock.single_host);
	svr_destroy(r);

	/* two synchronised hosts whose clocks still disagree: negative latencies */
	make_pair("hostB", true, -50000);
	r = run(files, guests, 2);
	svr_evaluate(r, &b, &e);
	assert_int_equal(e.verdict, SVR_UNSYNCHRONISED);
	svr_destroy(r);

	/* the same stamps on one host: one clock cannot disagree with itself: a note, and the budgets judge */
	make_pair("hostA", true, -50000);
	r = run(files, guests, 2);
	svr_evaluate(r, &b, &e);
	assert_true(e.clock.ok);
	assert_int_equal(e.clock.nreasons, 0);
	assert_true(e.clock.nnotes > 0 && strstr(e.clock.notes[0], "on one clock"));
	assert_true(e.verdict == SVR_PASS || e.verdict == SVR_FAIL);
	svr_destroy(r);

	/* one host, unsynchronised: one clock, intervals valid */
	make_pair("hostA", false, 100000);
	r = run(files, guests, 2);
	svr_evaluate(r, &b, &e);
	assert_int_equal(e.verdict, SVR_PASS);
	assert_true(e.clock.single_host);
	assert_true(e.clock.nnotes > 0);
	svr_destroy(r);

	/* budgets from YAML */
	write_file("b.yaml", "budgets:\n  - hop: T3-T4\n    statistic: p99\n    limit: 2.5\n"
			     "  - hop: T0-T3\n    statistic: lost\n    limit: 0\nclock_tolerance_us: 5\n");
	assert_int_equal(svr_budgets_load(&b, path_of("b.yaml"), err, sizeof(err)), 0);
	assert_int_equal(b.n, 2);
	assert_int_equal(b.b[0].from, SV_POINT_T3);
	assert_int_equal(b.b[0].to, SV_POINT_T4);
	assert_int_equal(b.b[0].stat, SVR_STAT_P99);
	assert_int_equal(b.b[0].limit, 2500);
	assert_int_equal(b.b[1].stat, SVR_STAT_LOST);
	assert_int_equal(b.clock_tolerance_ns, 5000);
	r = run(files, guests, 2);
	svr_evaluate(r, &b, &e);
	assert_int_equal(e.verdict, SVR_FAIL);	/* T3-T4 is 3 us */
	assert_false(e.res[0][0].pass);
	assert_true(e.res[1][0].pass);
	svr_destroy(r);

	/* errors name file:line:column */
	write_file("bad.yaml", "budgets:\n  - hop: T4-T1\n    statistic: max\n");
	assert_int_equal(svr_budgets_load(&b, path_of("bad.yaml"), err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "bad.yaml:2:"));
	write_file("bad2.yaml", "budgets:\n  - hop: T0-T4\n    statstic: max\n");
	assert_int_equal(svr_budgets_load(&b, path_of("bad2.yaml"), err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "bad2.yaml:3:"));
}

static void test_json_shape(void **state)
{
	const char *files[] = {"pub.rec", "sub.rec"}, *guests[] = {NULL, "vm1"};
	struct svr_budgets b;
	static struct svr_eval e;
	char *buf;
	struct svr *r;

	(void)state;
	make_pair("hostA", true, 100000);
	r = run(files, guests, 2);
	svr_budgets_default(&b);
	svr_evaluate(r, &b, &e);
	report_of(r, &b, &e, true, &buf);
	assert_non_null(strstr(buf, "\"verdict\": \"PASS\""));
	assert_non_null(strstr(buf, "\"name\": \"T3-T4\""));
	assert_non_null(strstr(buf, "\"name\": \"T0-T3\""));
	assert_non_null(strstr(buf, "\"name\": \"Ts-T0\""));
	assert_non_null(strstr(buf, "\"guest\": \"vm1\""));
	assert_non_null(strstr(buf, "\"stream\": null"));
	assert_non_null(strstr(buf, "\"stream\": \"MU01\""));
	assert_non_null(strstr(buf, "\"p9999\""));
	assert_non_null(strstr(buf, "\"statistic\": \"max\""));
	free(buf);
	svr_destroy(r);
}

/* Late frames with and without a holder: the named one keeps its policy; the frames nobody's run delayed
 * (pid 0, no name: an older svtrace left the slot's previous policy behind) group together and show no
 * policy (JSON null, text without one). */
static void test_late_holders(void **state)
{
	const char *files[] = {"pub.rec", "sub.rec", "trace.rec"}, *guests[] = {NULL, "vm1", NULL};
	struct sv_record_writer *tr;
	struct sv_rec_thread th;
	struct svr_budgets b;
	static struct svr_eval e;
	char *buf, *by;
	struct svr *r;

	(void)state;
	make_pair("hostA", true, 100000);
	tr = wopen("trace.rec", "svtrace", "hostA", true, RATE);
	for (unsigned k = 0; k < 3; k++) {
		memset(&th, 0, sizeof(th));
		th.point = SV_POINT_T2B;
		th.stream = 0;
		th.t_ns = ts_of(k) + 20000;
		th.wait_ns = 100000 + k;
		th.tai_sec = SEC0;
		th.smp_cnt = (uint16_t)k;
		th.feeder_tid = 1001;
		strcpy(th.feeder_comm, "vhost-1000");
		th.holder_policy = 1;	/* k = 0, 1: left behind with pid 0 */
		th.holder_prio = 80;
		if (k == 2) {
			th.holder_pid = 2002;
			th.holder_prio = 50;
			th.cause = SV_WAIT_RUNQUEUE;
			strcpy(th.holder_comm, "hog");
		}
		assert_int_equal(sv_record_write_thread(tr, &th), 0);
	}
	assert_int_equal(sv_record_writer_close(tr), 0);
	r = run(files, guests, 3);
	svr_budgets_default(&b);
	svr_evaluate(r, &b, &e);
	assert_int_equal(svr_nholders(r), 2);
	report_of(r, &b, &e, true, &buf);
	by = strstr(buf, "\"late_by_holder\"");
	assert_non_null(by);
	assert_non_null(strstr(by, "\"holder_thread\": \"hog\""));
	assert_non_null(strstr(by, "\"holder_policy\": \"SCHED_FIFO\""));
	assert_non_null(strstr(by, "\"holder_thread\": null"));
	assert_non_null(strstr(by, "\"holder_policy\": null"));
	assert_non_null(strstr(by, "\"count\": 2"));
	assert_non_null(strstr(buf, "\"holder_pid\": null"));	/* the late list too */
	free(buf);
	report_of(r, &b, &e, false, &buf);
	assert_non_null(strstr(buf, "holder (idle or not seen): 2 times"));
	assert_non_null(strstr(buf, "holder hog (SCHED_FIFO 50): 1 times"));
	free(buf);
	svr_destroy(r);
}

/* Guests labelled with the setup they stand for: the label follows the guest's final name into the JSON
 * (null when not given) and the side-by-side comparison of the text summary. */
static void test_guest_labels(void **state)
{
	struct sv_record_writer *pub, *s1, *s2;
	const char *files[] = {"pub.rec", "s1.rec", "s2.rec"}, *guests[] = {NULL, "vm1", "vm2"};
	char *buf, *txt, long_label[SVR_LABEL_SIZE + 8];
	struct svr_budgets b;
	static struct svr_eval e;
	struct svr *r;

	(void)state;
	pub = wopen("pub.rec", "svpub", "hostA", true, RATE);
	s1 = wopen("s1.rec", "svsub", "hostA", true, RATE);
	s2 = wopen("s2.rec", "svsub", "hostA", true, RATE);
	for (unsigned k = 0; k < 100; k++) {
		ev_write(pub, SV_POINT_T0, SEC0, (uint16_t)k, ts_of(k) + 5000, SV_REC_GUEST_NONE);
		ev_write(s1, SV_POINT_T3, SEC0, (uint16_t)k, ts_of(k) + 25000, SV_REC_GUEST_NONE);
		ev_write(s2, SV_POINT_T3, SEC0, (uint16_t)k, ts_of(k) + 905000, SV_REC_GUEST_NONE);
	}
	assert_int_equal(sv_record_writer_close(pub), 0);
	assert_int_equal(sv_record_writer_close(s1), 0);
	assert_int_equal(sv_record_writer_close(s2), 0);
	assert_int_equal(svr_create(&r, NULL), 0);
	memset(long_label, 'x', sizeof(long_label) - 1);
	long_label[sizeof(long_label) - 1] = 0;
	assert_int_equal(svr_set_guest_label(r, "vm1", long_label), -EINVAL);
	assert_int_equal(svr_set_guest_label(r, "", "x"), -EINVAL);
	assert_int_equal(svr_set_guest_label(r, "vm1", "first"), 0);
	assert_int_equal(svr_set_guest_label(r, "vm1", "SV in its own class"), 0); /* replaces */
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(svr_add_file(r, path_of(files[i]), guests[i]), 0);
	assert_int_equal(svr_run(r), 0);
	assert_int_equal(svr_nguests(r), 2);
	for (unsigned g = 0; g < 2; g++) {
		if (!strcmp(svr_guest_name(r, g), "vm1"))
			assert_string_equal(svr_guest_label(r, g), "SV in its own class");
		else
			assert_null(svr_guest_label(r, g));
	}
	assert_null(svr_guest_label(r, 2));
	svr_budgets_default(&b);
	svr_evaluate(r, &b, &e);
	report_of(r, &b, &e, true, &buf);
	assert_non_null(strstr(buf, "\"vm1\": \"SV in its own class\""));
	assert_non_null(strstr(buf, "\"vm2\": null"));
	report_of(r, &b, &e, false, &txt);
	assert_non_null(strstr(txt, "guests side by side"));
	assert_non_null(strstr(txt, "guest vm1: SV in its own class"));
	/* no T4 recorded: the comparison falls back to T0-T3, and lists only hops that exist */
	assert_non_null(strstr(txt, "  T0-T3    vm1"));
	assert_non_null(strstr(txt, "  T0-T3    vm2"));
	assert_null(strstr(txt, "  T0-T4    vm1"));
	free(txt);
	free(buf);
	svr_destroy(r);
}

/* A publisher 1.5 s behind its schedule: the clock check names it as the cause, not only the aliasing. */
static void test_publisher_behind(void **state)
{
	struct sv_record_writer *pub;
	const char *files[] = {"pub.rec"};
	struct svr_clock c;
	struct svr *r;
	bool found = false;

	(void)state;
	pub = wopen("pub.rec", "svpub", "hostA", true, RATE);
	for (unsigned k = 0; k < 100; k++) {
		struct sv_rec_event ev = {.point = SV_POINT_T0, .stream = 0, .tai_sec = SEC0, .smp_cnt = (uint16_t)k,
					  .ts_src = SV_TS_SOFTWARE, .guest = SV_REC_GUEST_NONE, .nasdu = 1,
					  .t2_ns = ts_of(k), .t2_kind = SV_T2_SAMPLE,
					  .t_ns = ts_of(k) + (k < 40 ? 20000 : 1500000000)};

		assert_int_equal(sv_record_write_event(pub, &ev), 0);
	}
	assert_int_equal(sv_record_writer_close(pub), 0);
	r = run(files, NULL, 1);
	svr_clock_check(r, &c);
	assert_false(c.ok);
	for (unsigned i = 0; i < c.nreasons; i++)
		if (strstr(c.reasons[i], "publisher sent 60 frames 1 s or more") && strstr(c.reasons[i], "1.5 s"))
			found = true;
	assert_true(found);
	svr_destroy(r);
}

static void test_cyclictest(void **state)
{
	struct svr_cyclic *c = malloc(sizeof(*c));
	char err[300];

	(void)state;
	assert_non_null(c);
	write_file("ct.hist", "# Histogram\n000000 000000\t000000\n000003 000010\t000005\n000004 000002\t000001\n"
			      "# Total: 000000012 000000006\n# Min Latencies: 00003 00003\n"
			      "# Avg Latencies: 00003 00004\n# Max Latencies: 00004 00150\n"
			      "# Histogram Overflows: 00000 00001\n");
	assert_int_equal(svr_cyclic_load(c, path_of("ct.hist"), err, sizeof(err)), 0);
	assert_int_equal(c->hist[3], 15);
	assert_int_equal(c->hist[4], 3);
	assert_int_equal(c->min_us, 3);
	assert_int_equal(c->max_us, 150);
	assert_int_equal(c->overflows, 1);
	assert_int_equal(c->threads, 2);
	{
		/* After a long run cyclictest lists every overflow's cycle number on one line per thread (the
		 * soak's: 15 kB): read whole, not as rows of numbers that would add cycle numbers to buckets
		 * or fail on the "# N others" at its end. */
		static char big[128 + 4000 * 6];
		size_t n = (size_t)snprintf(big, sizeof(big), "000003 000010\t000005\n# Histogram Overflow at cycle number:\n"
								 "# Thread 0:");

		for (unsigned i = 0; i < 4000; i++)
			n += (size_t)snprintf(big + n, sizeof(big) - n, " %05u", 100 + i % 900);
		snprintf(big + n, sizeof(big) - n, " # 00376 others\n# Max Latencies: 00004 83527\n");
		write_file("ct.long", big);
		assert_int_equal(svr_cyclic_load(c, path_of("ct.long"), err, sizeof(err)), 0);
		assert_int_equal(c->hist[3], 15);
		assert_int_equal(c->total, 15);
		assert_int_equal(c->max_us, 83527);
	}
	write_file("ct.txt", "T: 0 ( 1234) P:95 I:250 C:  40000 Min:      3 Act:    5 Avg:    4 Max:      40\n");
	assert_int_equal(svr_cyclic_load(c, path_of("ct.txt"), err, sizeof(err)), 0);
	assert_int_equal(c->max_us, 40);
	assert_int_equal(c->total, 40000);
	write_file("ct.bad", "000001 12x\n");
	assert_int_equal(svr_cyclic_load(c, path_of("ct.bad"), err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "ct.bad:1"));
	free(c);
}

/*
 * A rotated run (svtrace's records over a soak: FILE, FILE.1 ... FILE.k) reads as one file from the live
 * FILE, whatever parts are also given and in whatever order; with its oldest parts gone (rotated away),
 * the report says so and counts nothing lost before the first part it has: that part's start, not the
 * run's, is where the file began recording. Times are real (paced at 12800 frames/s) so that a part's
 * start lies after the frames of the parts before it.
 */
#define ROT_RATE 12800u
#define ROT_FRAMES 6000u

static unsigned rotated_parts(const char *name)
{
	char p[160];
	unsigned n = 0;

	for (;;) {
		snprintf(p, sizeof(p), "%s.%u", path_of(name), n + 1);
		if (access(p, F_OK))
			return n;
		n++;
	}
}

static void write_rotated(uint32_t keep)
{
	struct sv_record_writer_cfg cfg = {
		.path = path_of("sub.rec"), .tool = "svsub", .clock = SV_CLOCK_TAI, .host = "hostA", .no_to_tai = true,
		.block_bytes = SV_REC_BLOCK_MIN, .rotate_bytes = 2ull * SV_REC_BLOCK_MIN + 4096, .rotate_keep = keep,
	};
	struct sv_record_writer *pub = wopen("pub.rec", "svpub", "hostA", true, ROT_RATE), *sub = NULL;
	int64_t base = (sv_clock_now_ns(SV_CLOCK_TAI) / SV_NSEC_PER_SEC + 1) * SV_NSEC_PER_SEC;

	assert_int_equal(sv_record_writer_open(&sub, &cfg), 0);
	define_rate(sub, ROT_RATE);
	for (unsigned k = 0; k < ROT_FRAMES; k++) {
		uint32_t sec = (uint32_t)(base / SV_NSEC_PER_SEC) + k / ROT_RATE;
		uint16_t smp = (uint16_t)(k % ROT_RATE);
		int64_t t;

		while ((t = sv_clock_now_ns(SV_CLOCK_TAI)) < sv_sample_time_ns(sec, smp, ROT_RATE))
			;
		ev_write(pub, SV_POINT_T0, sec, smp, t, SV_REC_GUEST_NONE);
		ev_write(sub, SV_POINT_T3, sec, smp, t + 20000, SV_REC_GUEST_NONE);
		ev_write(sub, SV_POINT_T4, sec, smp, t + 30000, SV_REC_GUEST_NONE);
	}
	assert_int_equal(sv_record_writer_close(pub), 0);
	assert_int_equal(sv_record_writer_close(sub), 0);
}

static void test_rotated_run(void **state)
{
	const char *files[] = {"pub.rec", "sub.rec"}, *guests[] = {NULL, "vm1"};
	const char *paths[8], *gnames[8] = {NULL};
	char rm[160];
	struct svr_hop h;
	unsigned parts;
	struct svr *r;

	(void)state;
	write_rotated(100);
	parts = rotated_parts("sub.rec");
	assert_true(parts >= 3);
	r = run(files, guests, 2);
	assert_int_equal(svr_file(r, 1)->parts, parts + 1);
	assert_int_equal(svr_nwarnings(r), 0);
	assert_int_equal(svr_point(r, SV_POINT_T3, 0)->frames, ROT_FRAMES);
	assert_int_equal(svr_hop_get(r, SV_POINT_T0, SV_POINT_T4, 0, -1, &h), 0);
	assert_int_equal(h.count, ROT_FRAMES);
	assert_int_equal(h.lost, 0);
	assert_int_equal(h.lat.max, 30000);
	svr_destroy(r);

	/* the parts given too, newest last (sub.rec.2 sub.rec.1 pub.rec sub.rec): read once */
	paths[0] = path_of("sub.rec.2");
	paths[1] = path_of("sub.rec.1");
	paths[2] = path_of("pub.rec");
	paths[3] = path_of("sub.rec");
	gnames[0] = gnames[1] = gnames[3] = "vm1";
	assert_int_equal(svr_create(&r, NULL), 0);
	assert_int_equal(svr_add_files(r, paths, gnames, 4), 0);
	assert_int_equal(svr_nfiles(r), 2);
	assert_int_equal(svr_run(r), 0);
	assert_int_equal(svr_point(r, SV_POINT_T3, 0)->frames, ROT_FRAMES);
	assert_int_equal(svr_point(r, SV_POINT_T3, 0)->duplicates, 0);
	svr_destroy(r);

	/* one rotated part kept: the report starts at it, says so, and loses nothing before it */
	for (unsigned i = 1; i <= parts; i++) {
		snprintf(rm, sizeof(rm), "%s.%u", path_of("sub.rec"), i);
		assert_int_equal(unlink(rm), 0);
	}
	write_rotated(1);
	assert_int_equal(rotated_parts("sub.rec"), 1);
	snprintf(rm, sizeof(rm), "%s.2", path_of("sub.rec"));
	assert_int_not_equal(access(rm, F_OK), 0);
	r = run(files, guests, 2);
	assert_int_equal(svr_file(r, 1)->parts, 2);
	assert_int_equal(svr_nwarnings(r), 1);
	assert_non_null(strstr(svr_warning(r, 0), "start at part"));
	assert_true(svr_point(r, SV_POINT_T3, 0)->frames < ROT_FRAMES / 2);
	assert_int_equal(svr_hop_get(r, SV_POINT_T0, SV_POINT_T4, 0, -1, &h), 0);
	assert_int_equal(h.lost, 0);
	assert_int_equal(svr_point(r, SV_POINT_T3, 0)->missing, 0);
	svr_destroy(r);
}

static void name_port(struct sv_record_writer *w, uint32_t id, const char *name)
{
	struct sv_rec_name n = {.name_kind = SV_REC_NAME_GUEST, .id = id};

	snprintf(n.name, sizeof(n.name), "%s", name);
	assert_int_equal(sv_record_define_name(w, &n), 0);
}

/* Frames 0..5999 (1.5 s): the sender skipped every 100th; the tracer learns the rate at the first wrap
 * (frame 4000) and defines the stream again. Order, pacing and loss must be what the publisher's record
 * gives: nothing reordered, every skipped frame lost before T1 (also those before the rate was known). */
static void test_rate_learned_late(void **state)
{
	const char *files[] = {"trace.rec"}, *files_pub[] = {"pub.rec", "trace.rec"};
	struct sv_record_writer *tr, *pub;
	struct svr_hop h;
	struct svr *r;
	unsigned sent = 0;

	(void)state;
	tr = wopen("trace.rec", "svtrace", "hostA", true, 0);
	pub = wopen("pub.rec", "svpub", "hostA", true, RATE);
	for (unsigned k = 0; k < 6000; k++) {
		if (k == RATE)
			define_rate(tr, RATE);
		if (k % 100 == 7)
			continue;
		ev_write(pub, SV_POINT_T0, SEC0 + k / RATE, (uint16_t)(k % RATE), ts_of(k) + 5000, SV_REC_GUEST_NONE);
		ev_write(tr, SV_POINT_T1, SEC0 + k / RATE, (uint16_t)(k % RATE), ts_of(k) + 20000, SV_REC_GUEST_NONE);
		sent++;
	}
	assert_int_equal(sv_record_writer_close(tr), 0);
	assert_int_equal(sv_record_writer_close(pub), 0);
	for (unsigned with_pub = 0; with_pub < 2; with_pub++) {
		r = with_pub ? run(files_pub, NULL, 2) : run(files, NULL, 1);
		assert_int_equal(svr_stream(r, 0)->rate, RATE);
		assert_int_equal(svr_point(r, SV_POINT_T1, -1)->frames, sent);
		assert_int_equal(svr_point(r, SV_POINT_T1, -1)->reordered, 0);
		/* pacing over the whole run: every consecutive pair, 250 us each */
		assert_non_null(svr_point(r, SV_POINT_T1, -1)->pacing);
		assert_int_equal(svr_point(r, SV_POINT_T1, -1)->pacing->count, sent - 1 - 60);
		assert_int_equal(svr_point(r, SV_POINT_T1, -1)->pacing->max, 250000);
		assert_int_equal(svr_hop_get(r, SV_POINT_TS, SV_POINT_T1, SVR_GUEST_SHARED, -1, &h), 0);
		assert_int_equal(h.count, sent);
		assert_int_equal(h.lost, 60);	/* before everybody: the same with or without svpub */
		if (!with_pub)
			assert_int_equal(svr_totals(r)->frames, 6000);
		svr_destroy(r);
	}
}

/* The tracer names both egress ports; one link is down: that guest never sees a frame. It is listed,
 * every frame that reached T1 is lost toward it, and the verdict fails (whatever the budgets). */
static void test_silent_guest(void **state)
{
	const char *files[] = {"trace.rec"};
	struct sv_record_writer *tr;
	struct svr_budgets b;
	static struct svr_eval e;
	uint8_t pairs[16][2];
	struct svr_hop h;
	struct svr *r;
	char *buf;
	uint64_t lost;
	int up = -1, down = -1;
	unsigned n;
	bool listed = false;

	(void)state;
	tr = wopen("trace.rec", "svtrace", "hostA", true, RATE);
	name_port(tr, 0, "vm1p");
	name_port(tr, 1, "vm2p");
	for (unsigned k = 0; k < 400; k++) {
		ev_write(tr, SV_POINT_T1, SEC0, (uint16_t)k, ts_of(k) + 20000, SV_REC_GUEST_NONE);
		ev_write(tr, SV_POINT_T2A, SEC0, (uint16_t)k, ts_of(k) + 25000, 0);
		ev_write(tr, SV_POINT_T2B, SEC0, (uint16_t)k, ts_of(k) + 30000, 0);
	}
	assert_int_equal(sv_record_writer_close(tr), 0);
	r = run(files, NULL, 1);
	assert_int_equal(svr_nguests(r), 2);
	for (unsigned g = 0; g < 2; g++)
		*(strcmp(svr_guest_name(r, g), "vm1p") ? &down : &up) = (int)g;
	assert_true(up >= 0 && down >= 0);
	assert_false(svr_guest_silent(r, (unsigned)up, &lost));
	assert_true(svr_guest_silent(r, (unsigned)down, &lost));
	assert_int_equal(lost, 400);
	assert_int_equal(svr_hop_get(r, SV_POINT_T1, SV_POINT_T2A, down, -1, &h), 0);
	assert_int_equal(h.count, 0);
	assert_int_equal(h.lost, 400);
	assert_int_equal(svr_hop_get(r, SV_POINT_T1, SV_POINT_T2A, up, -1, &h), 0);
	assert_int_equal(h.lost, 0);
	n = svr_hop_list(r, down, pairs, 16);
	for (unsigned i = 0; i < n; i++)
		listed |= pairs[i][0] == SV_POINT_T1 && pairs[i][1] == SV_POINT_T2A;
	assert_true(listed);
	svr_budgets_default(&b);
	svr_evaluate(r, &b, &e);
	assert_int_equal(e.verdict, SVR_FAIL);
	assert_int_equal(e.silent, 1);
	assert_non_null(strstr(e.why, "guest vm2p received none of its frames (400 lost)"));
	report_of(r, &b, &e, true, &buf);
	assert_non_null(strstr(buf, "\"silent_guests\""));
	assert_non_null(strstr(buf, "\"lost\": 400"));
	free(buf);
	report_of(r, &b, &e, false, &buf);
	assert_non_null(strstr(buf, "warning: guest vm2p received no frame: 400 lost"));
	free(buf);
	svr_destroy(r);
}

/* svtrace alone, as it records a run that starts mid-second (smpCnt 960 at .240 s): STREAM without a rate,
 * frames keyed by their sample's second; egress vm1p gets every frame, vm2p's link is down. T1 keeps 1024
 * slots per stream: from frame 1024 on, each reused slot gives up the frame it held toward vm2p (a
 * "missing" event with its old smpCnt), which fakes an smpCnt wrap to svtrace's learner: the STREAM is
 * redefined with a wrong rate (largest smpCnt + 1) and withdrawn (rate 0) at the next frame, 63 times,
 * until the real wrap defines 4000. The candidate rates must not be taken: every frame joins on its
 * recorded key, nothing is re-derived, no latency is off by a second. */
static void test_tracer_learns_rate_mid_second(void **state)
{
	const char *files[] = {"trace.rec"};
	const unsigned first = 960, n = 2 * RATE, slots = 1024;
	struct sv_record_writer *tr;
	struct sv_sample_time sa;
	struct svr_hop h;
	struct svr *r;
	int up = -1, down = -1;
	bool learned = false;

	(void)state;
	tr = wopen("trace.rec", "svtrace", "hostA", true, 0);
	name_port(tr, 0, "vm1p");
	name_port(tr, 1, "vm2p");
	for (unsigned k = first; k < first + n + slots; k++) {
		uint16_t smp = (uint16_t)(k % RATE);
		int64_t t1 = ts_of(k) + 20000;

		if (k >= first + slots) {	/* the slot's previous frame, never seen at vm2p */
			unsigned o = k - slots;
			int64_t t1o = ts_of(o) + 20000;
			uint32_t guess = learned ? RATE : (uint32_t)(k - 1) % RATE + 1;
			bool fake = !learned && o % RATE < (k - 1) % RATE / 2;	/* its learner's test */
			struct sv_rec_event ev = {.point = SV_POINT_T2A, .stream = 0, .t_ns = t1o, .smp_cnt = (uint16_t)(o % RATE),
						  .ts_src = SV_TS_BPF, .guest = 1, .flags = SV_REC_F_DROPPED,
						  .reason = SV_REASON_MISSING, .nasdu = 1};

			if (fake)
				define_rate(tr, guess);
			/* svtrace keys it with the rate it holds then (the wrong one: a second early) */
			assert_int_equal(sv_sample_align(t1o, ev.smp_cnt, fake ? guess : RATE, SV_SAMPLE_AHEAD_NS_DEFAULT,
							  &sa), 0);
			ev.tai_sec = (uint32_t)sa.tai_sec;
			assert_int_equal(sv_record_write_event(tr, &ev), 0);
			if (fake)
				define_rate(tr, 0);	/* the next frame's smpCnt proves it wrong */
		}
		if (k >= first + n)
			continue;	/* the stop: what the slots still held */
		if (smp == 0 && !learned) {	/* the real wrap */
			define_rate(tr, RATE);
			learned = true;
		}
		ev_write(tr, SV_POINT_T1, SEC0 + k / RATE, smp, t1, SV_REC_GUEST_NONE);
		ev_write(tr, SV_POINT_T2A, SEC0 + k / RATE, smp, t1 + 2000, 0);
		ev_write(tr, SV_POINT_T2B, SEC0 + k / RATE, smp, t1 + 50000, 0);
	}
	assert_int_equal(sv_record_writer_close(tr), 0);
	r = run(files, NULL, 1);
	for (unsigned g = 0; g < svr_nguests(r); g++)
		*(strcmp(svr_guest_name(r, g), "vm1p") ? &down : &up) = (int)g;
	assert_true(up >= 0 && down >= 0);
	assert_int_equal(svr_stream(r, 0)->rate, RATE);
	assert_int_equal(svr_totals(r)->frames, n);
	assert_int_equal(svr_totals(r)->realigned, 0);
	assert_int_equal(svr_point(r, SV_POINT_T1, -1)->frames, n);
	assert_int_equal(svr_point(r, SV_POINT_T1, -1)->reordered, 0);
	assert_int_equal(svr_hop_get(r, SV_POINT_TS, SV_POINT_T1, SVR_GUEST_SHARED, -1, &h), 0);
	assert_int_equal(h.count, n);
	assert_int_equal(h.lost, 0);
	assert_int_equal(h.lat.min, 20000);
	assert_int_equal(h.lat.max, 20000);
	assert_int_equal(svr_hop_get(r, SV_POINT_T1, SV_POINT_T2A, up, -1, &h), 0);
	assert_int_equal(h.count, n);
	assert_int_equal(h.lost, 0);
	assert_int_equal(h.lat.min, 2000);
	assert_int_equal(h.lat.max, 2000);
	assert_int_equal(svr_hop_get(r, SV_POINT_T2A, SV_POINT_T2B, up, -1, &h), 0);
	assert_int_equal(h.count, n);
	assert_int_equal(h.lost, 0);
	assert_int_equal(h.lat.min, 48000);
	assert_int_equal(svr_hop_get(r, SV_POINT_T1, SV_POINT_T2A, down, -1, &h), 0);
	assert_int_equal(h.count, 0);
	assert_int_equal(h.lost, n);
	svr_destroy(r);
}

/* svsub on a 9-2LE stream flags its first frames not synchronised (rate unknown until the smpCnt wrap)
 * and gives no STREAM rate: keyed from the publisher's rate, or from the subscriber's own later keyed
 * events (t2 = sample time), they join; none counts as lost. A stream that is really unsynchronised
 * stays "not joined" and its frames are not lost either. */
static void test_unkeyed_rekeyed(void **state)
{
	const char *files[] = {"pub.rec", "sub.rec"}, *guests[] = {NULL, "vm1"};
	struct sv_record_writer *pub, *sub;
	struct svr_hop h;
	struct svr *r;
	int ret;

	(void)state;
	for (unsigned mode = 0; mode < 3; mode++) {
		/* 0: with the publisher; 1: the subscriber alone; 2: smpSynch 0 (truly unsynchronised) */
		pub = wopen("pub.rec", "svpub", "hostA", true, RATE);
		sub = wopen("sub.rec", "svsub", "hostA", true, 0);
		if (mode == 2) {
			struct sv_rec_stream s = {.stream = 0, .appid = 0x4000, .asdus = 1, .vlan = 0xFFFF,
						  .smp_synch = 0, .svid_len = 4, .smp_wrap = 65536};

			memcpy(s.svid, "MU01", 5);
			assert_int_equal(sv_record_define_stream(sub, &s), 0);
		}
		for (unsigned k = 2000; k < 8000; k++) {
			int64_t t3 = ts_of(k) + 70000;
			struct sv_rec_event ev = {.point = SV_POINT_T3, .stream = 0, .t_ns = t3, .smp_cnt = (uint16_t)(k % RATE),
						  .ts_src = SV_TS_SOFTWARE, .guest = SV_REC_GUEST_NONE, .nasdu = 1};

			ev_write(pub, SV_POINT_T0, SEC0 + k / RATE, (uint16_t)(k % RATE), ts_of(k) + 5000,
				 SV_REC_GUEST_NONE);
			if (k == 2100)
				continue;	/* one frame really lost */
			if (k < RATE || mode == 2) {	/* before the wrap: no rate, no key */
				ev.tai_sec = (uint32_t)sv_ns_to_sec_floor(t3);
				ev.flags = SV_REC_F_NOT_SYNCED;
			} else {
				ev.tai_sec = SEC0 + k / RATE;
				ev.t2_ns = ts_of(k);
				ev.t2_kind = SV_T2_SAMPLE;
			}
			assert_int_equal(sv_record_write_event(sub, &ev), 0);
		}
		assert_int_equal(sv_record_writer_close(pub), 0);
		assert_int_equal(sv_record_writer_close(sub), 0);
		r = mode == 1 ? run(files + 1, guests + 1, 1) : run(files, guests, 2);
		ret = svr_hop_get(r, mode == 1 ? SV_POINT_TS : SV_POINT_T0, SV_POINT_T3, 0, -1, &h);
		if (mode < 2) {
			assert_int_equal(ret, 0);
			assert_int_equal(svr_totals(r)->rekeyed, RATE - 2000 - 1);
			assert_int_equal(svr_totals(r)->not_joinable, 0);
			assert_int_equal(h.count, 6000 - 1);
			assert_int_equal(h.lost, 1);
			assert_int_equal(h.lat.max, mode == 1 ? 70000 : 65000);
			assert_int_equal(svr_point(r, SV_POINT_T3, 0)->reordered, 0);
		} else {
			assert_int_equal(svr_totals(r)->not_joinable, 6000 - 1);
			assert_int_equal(h.lost, 0);	/* received, only not keyed: never lost */
		}
		svr_destroy(r);
	}
}

/* 100 frames at @point whose times are the 100 sample instants (4 kHz) just before now (TAI). */
static void write_recent(struct sv_record_writer *w, unsigned point)
{
	struct timespec ts;
	int64_t now;
	uint64_t k0;

	assert_int_equal(clock_gettime(CLOCK_TAI, &ts), 0);
	now = (int64_t)ts.tv_sec * SV_NSEC_PER_SEC + ts.tv_nsec;
	k0 = (uint64_t)(now / 250000) - 101;
	for (uint64_t k = k0; k < k0 + 100; k++)
		ev_write(w, point, (uint32_t)(k / RATE), (uint16_t)(k % RATE), (int64_t)k * 250000 + 5000,
			 SV_REC_GUEST_NONE);
}

/* The same record twice (same path, another path to it, a copy), two runs under one guest name: usage
 * errors that name both files. Records of two runs that never overlap: a warning, and the time between
 * them is no loss. */
static void test_mixed_sets(void **state)
{
	const char *files[] = {"pub.rec", "trace.rec"};
	struct sv_record_writer *pub, *tr;
	struct svr_budgets b;
	static struct svr_eval e;
	struct svr_hop h;
	struct svr *r;
	char cmd[512], *buf;

	(void)state;
	make_pair("hostA", true, 100000);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s' && ln -s pub.rec '%s'", path_of("pub.rec"), path_of("copy.rec"),
		 path_of("link.rec"));
	assert_int_equal(system(cmd), 0);
	for (unsigned i = 0; i < 3; i++) {
		const char *second[] = {"pub.rec", "copy.rec", "link.rec"};

		assert_int_equal(svr_create(&r, NULL), 0);
		assert_int_equal(svr_add_file(r, path_of("pub.rec"), NULL), 0);
		assert_int_equal(svr_add_file(r, path_of(second[i]), NULL), -EEXIST);
		assert_non_null(strstr(svr_file(r, 1)->errmsg, "the same record as"));
		assert_non_null(strstr(svr_file(r, 1)->errmsg, second[i]));
		svr_destroy(r);
	}
	assert_int_equal(svr_create(&r, NULL), 0);
	assert_int_equal(svr_add_file(r, path_of("sub.rec"), "vm1"), 0);
	assert_int_equal(svr_add_file(r, path_of("pub.rec"), "vm1"), -EEXIST);
	assert_non_null(strstr(svr_file(r, 1)->errmsg, "guest vm1 already has the records of"));
	svr_destroy(r);

	/* a publisher's run, then 300 ms later a tracer's (records end where each writer closed: real times) */
	pub = wopen("pub.rec", "svpub", "hostA", true, RATE);
	write_recent(pub, SV_POINT_T0);
	assert_int_equal(sv_record_writer_close(pub), 0);
	usleep(300000);
	tr = wopen("trace.rec", "svtrace", "hostA", true, RATE);
	write_recent(tr, SV_POINT_T1);
	assert_int_equal(sv_record_writer_close(tr), 0);
	r = run(files, NULL, 2);
	assert_int_equal(svr_nwarnings(r), 1);
	assert_non_null(strstr(svr_warning(r, 0), "do not overlap in time"));
	/* ~1100 frames between the two files: only those of the publisher's last ms (its tail, while it was
	 * still recording) may count */
	assert_int_equal(svr_hop_get(r, SV_POINT_TS, SV_POINT_T0, SVR_GUEST_SHARED, -1, &h), 0);
	assert_true(h.lost < 40);
	assert_int_equal(svr_hop_get(r, SV_POINT_TS, SV_POINT_T1, SVR_GUEST_SHARED, -1, &h), 0);
	assert_true(h.lost < 40);
	svr_budgets_default(&b);
	svr_evaluate(r, &b, &e);
	report_of(r, &b, &e, true, &buf);
	assert_non_null(strstr(buf, "\"warnings\": ["));
	assert_non_null(strstr(buf, "do not overlap in time"));
	free(buf);
	report_of(r, &b, &e, false, &buf);
	assert_non_null(strstr(buf, "warning: "));
	free(buf);
	svr_destroy(r);
}

/* Nothing to check (a publisher's record alone): verdict NONE, not FAIL. */
static void test_verdict_none(void **state)
{
	const char *files[] = {"pub.rec"};
	struct svr_budgets b;
	static struct svr_eval e;
	struct svr *r;

	(void)state;
	make_pair("hostA", true, 100000);
	r = run(files, NULL, 1);
	svr_budgets_default(&b);
	svr_evaluate(r, &b, &e);
	assert_int_equal(e.verdict, SVR_NONE);
	assert_string_equal(svr_verdict_name(e.verdict), "NONE");
	assert_non_null(strstr(e.why, "nothing to check"));
	svr_destroy(r);
}

/* The late list carries svtrace's keys (hop, egress, hop_ns, SCHED_* policies); two hosts whose clocks
 * are not synchronised: the cross-host hop is marked and not judged, the hop within one host is. */
static void test_late_keys_cross_host(void **state)
{
	const char *files[] = {"pub.rec", "trace.rec", "sub.rec"}, *guests[] = {NULL, NULL, "vm1"};
	struct sv_record_writer *pub, *tr, *sub;
	struct sv_rec_thread th;
	struct svr_budgets b;
	static struct svr_eval e;
	struct svr *r;
	char *buf;

	(void)state;
	pub = wopen("pub.rec", "svpub", "hostA", true, RATE);
	tr = wopen("trace.rec", "svtrace", "hostA", true, RATE);
	sub = wopen("sub.rec", "svsub", "hostB", false, RATE);
	name_port(tr, 0, "vm1");
	for (unsigned k = 0; k < 100; k++) {
		ev_write(pub, SV_POINT_T0, SEC0, (uint16_t)k, ts_of(k) + 5000, SV_REC_GUEST_NONE);
		ev_write(tr, SV_POINT_T1, SEC0, (uint16_t)k, ts_of(k) + 20000, SV_REC_GUEST_NONE);
		ev_write(tr, SV_POINT_T2A, SEC0, (uint16_t)k, ts_of(k) + 25000, 0);
		ev_write(tr, SV_POINT_T2B, SEC0, (uint16_t)k, ts_of(k) + (k == 5 ? 225000 : 30000), 0);
		ev_write(sub, SV_POINT_T3, SEC0, (uint16_t)k, ts_of(k) + 900000, SV_REC_GUEST_NONE);
		ev_write(sub, SV_POINT_T4, SEC0, (uint16_t)k, ts_of(k) + 910000, SV_REC_GUEST_NONE);
	}
	memset(&th, 0, sizeof(th));
	th.point = SV_POINT_T2B;
	th.t_ns = ts_of(5) + 26000;
	th.wait_ns = 190000;
	th.tai_sec = SEC0;
	th.smp_cnt = 5;
	th.guest = 0;
	th.holder_pid = 77;
	th.holder_policy = 0;
	th.holder_prio = 20;
	strcpy(th.feeder_comm, "vhost-1");
	strcpy(th.holder_comm, "hog");
	assert_int_equal(sv_record_write_thread(tr, &th), 0);
	assert_int_equal(sv_record_writer_close(pub), 0);
	assert_int_equal(sv_record_writer_close(tr), 0);
	assert_int_equal(sv_record_writer_close(sub), 0);
	r = run(files, guests, 3);
	assert_int_equal(svr_nlate(r), 1);
	assert_true(svr_late_get(r, 0)->has_hop);
	assert_int_equal(svr_late_get(r, 0)->hop_from, SV_POINT_T2A);
	assert_int_equal(svr_late_get(r, 0)->hop_ns, 200000);
	assert_true(svr_hop_cross_host(r, SV_POINT_T2B, SV_POINT_T3, 0));
	assert_true(svr_hop_cross_host(r, SV_POINT_T0, SV_POINT_T4, 0));
	assert_false(svr_hop_cross_host(r, SV_POINT_T1, SV_POINT_T2B, 0));
	assert_false(svr_hop_cross_host(r, SV_POINT_T3, SV_POINT_T4, 0));
	svr_budgets_default(&b);	/* T0-T4 250 us (cross-host), T1-T2b 100 us (exceeded), T3-T4 100 us */
	svr_evaluate(r, &b, &e);
	assert_false(e.clock.ok);
	assert_true(e.res[0][0].unsync);
	assert_false(e.res[0][0].evaluated);
	assert_true(e.res[1][0].evaluated);
	assert_false(e.res[1][0].pass);
	assert_true(e.res[2][0].pass);
	assert_int_equal(e.verdict, SVR_FAIL);	/* measured within one host */
	report_of(r, &b, &e, true, &buf);
	assert_non_null(strstr(buf, "\"hop\": \"T2a-T2b\""));
	assert_non_null(strstr(buf, "\"egress\": \"vm1\""));
	assert_non_null(strstr(buf, "\"hop_ns\": 200000"));
	assert_non_null(strstr(buf, "\"holder_policy\": \"SCHED_OTHER\""));
	assert_non_null(strstr(buf, "\"point\": \"T2b\""));	/* the older keys stay */
	assert_non_null(strstr(buf, "\"status\": \"unsynchronised\""));
	assert_non_null(strstr(buf, "\"synchronised\": false"));
	free(buf);
	report_of(r, &b, &e, false, &buf);
	assert_non_null(strstr(buf, "[vm1: unsynchronised, not evaluated]"));
	assert_non_null(strstr(buf, "(unsynchronised)"));
	free(buf);
	svr_destroy(r);
}

/* A record with a damaged block in its middle: the report reads on past it, names the damage (text, JSON)
 * and counts the frames of the other blocks. */
static void test_damaged_block(void **state)
{
	const char *files[] = {"big.rec"};
	const struct svr_file_info *fi;
	struct sv_record_writer *w;
	struct svr_budgets b;
	static struct svr_eval e;
	struct svr *r;
	char *out;
	FILE *f;
	long size;
	int c;

	(void)state;
	w = wopen("big.rec", "svpub", "hostA", true, RATE);
	for (unsigned k = 0; k < 20000; k++)
		ev_write(w, SV_POINT_T0, SEC0 + k / RATE, (uint16_t)(k % RATE), ts_of(k) + 5000, SV_REC_GUEST_NONE);
	assert_int_equal(sv_record_writer_close(w), 0);
	f = fopen(path_of("big.rec"), "r+b");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	size = ftell(f);
	assert_true(size > 1 << 20);	/* several blocks */
	assert_int_equal(fseek(f, size / 2, SEEK_SET), 0);
	c = fgetc(f);
	assert_int_equal(fseek(f, size / 2, SEEK_SET), 0);
	fputc(c ^ 0x40, f);
	assert_int_equal(fclose(f), 0);
	r = run(files, NULL, 1);
	fi = svr_file(r, 0);
	assert_int_equal(fi->err, 0);
	assert_int_equal(fi->damage.blocks_skipped, 1);
	assert_true(fi->damage.records_lost > 0 && fi->damage.records_lost < 20000 / 2);
	assert_int_equal(svr_point(r, SV_POINT_T0, -1)->frames + fi->damage.records_lost, 20000);
	svr_budgets_default(&b);
	svr_evaluate(r, &b, &e);
	report_of(r, &b, &e, false, &out);
	assert_non_null(strstr(out, "damaged: 1 block(s) skipped"));
	free(out);
	report_of(r, &b, &e, true, &out);
	assert_non_null(strstr(out, "\"blocks_skipped\": 1"));
	free(out);
	svr_destroy(r);
}

/* A record file into memory, and the offsets of its blocks (at most 16). */
static uint8_t *load_blocks(const char *name, size_t *len, size_t off[16], unsigned *nblocks)
{
	FILE *f = fopen(path_of(name), "rb");
	uint8_t *buf;
	long n;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_int_equal(fseek(f, 0, SEEK_SET), 0);
	buf = malloc((size_t)n);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	*nblocks = 0;
	for (size_t at = SV_REC_HEADER_SIZE; at < *len && *nblocks < 16;) {
		uint32_t blen;

		memcpy(&blen, buf + at + 4, 4);
		off[(*nblocks)++] = at;
		at += sizeof(struct sv_rec_block_header) + blen;
	}
	return buf;
}

static void save(const char *name, const uint8_t *buf, size_t len)
{
	FILE *f = fopen(path_of(name), "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* The text report holds @text1 and @text2, the JSON one @json1 and @json2. */
static void assert_reports_say(struct svr *r, const struct svr_budgets *b, struct svr_eval *e, const char *text1,
			       const char *text2, const char *json1, const char *json2)
{
	char *out;

	svr_evaluate(r, b, e);
	report_of(r, b, e, false, &out);
	if (!strstr(out, text1) || !strstr(out, text2))
		fail_msg("%s", out);
	free(out);
	report_of(r, b, e, true, &out);
	if (!strstr(out, json1) || !strstr(out, json2))
		fail_msg("%s", out);
	free(out);
}

/* The issue 27 cases: damage at the end of a record (the last block's magic zeroed, the file ending there: the
 * read ends with the error, the lost block counted exactly from its header and framing), and a record with
 * a field out of range in a block whose CRC checks out (that record alone dropped, counted; every later
 * block read). Text, JSON and HTML name the damage; nothing claims "0 lost, exact". */
static void test_damaged_tail_and_field(void **state)
{
	const char *files[] = {"dmg.rec"};
	const struct svr_file_info *fi;
	struct svr_budgets b;
	static struct svr_eval e;
	size_t len, off[16];
	unsigned nb, last;
	uint32_t nrec;
	uint8_t *buf;
	struct svr *r;
	char *out;

	(void)state;
	{
		struct sv_record_writer *w = wopen("whole.rec", "svpub", "hostA", true, RATE);

		for (unsigned k = 0; k < 20000; k++)
			ev_write(w, SV_POINT_T0, SEC0 + k / RATE, (uint16_t)(k % RATE), ts_of(k) + 5000,
				 SV_REC_GUEST_NONE);
		assert_int_equal(sv_record_writer_close(w), 0);
	}
	buf = load_blocks("whole.rec", &len, off, &nb);
	assert_true(nb >= 4);
	/* the last block of events (END may have a block of its own), and the file as if it ended with it */
	last = nb - 1;
	memcpy(&nrec, buf + off[last] + 8, 4);
	if (nrec == 1)
		memcpy(&nrec, buf + off[--last] + 8, 4);
	assert_true(nrec > 1000);
	memset(buf + off[last], 0, 4);
	save("dmg.rec", buf, last + 1 < nb ? off[last + 1] : len);
	assert_int_equal(svr_create(&r, NULL), 0);
	assert_int_equal(svr_add_file(r, path_of(files[0]), NULL), 0);
	assert_int_equal(svr_run(r), -EBADMSG);
	fi = svr_file(r, 0);
	assert_int_equal(fi->err, -EBADMSG);
	assert_int_equal(fi->damage.blocks_skipped, 1);
	assert_int_equal(fi->damage.records_lost, nrec);
	assert_int_equal(fi->damage.skips_uncounted, 0);
	assert_int_equal(svr_point(r, SV_POINT_T0, -1)->frames + nrec, 20000);
	svr_budgets_default(&b);
	assert_reports_say(r, &b, &e, "damaged: 1 block(s) skipped", "first: block_magic at offset",
			   "\"records_lost_exact\": true", "\"first_error\": \"block_magic\"");
	svr_destroy(r);
	free(buf);

	/* a CRC-valid block with one event's point out of range, in the middle of the file */
	buf = load_blocks("whole.rec", &len, off, &nb);
	{
		uint8_t *ev = buf + off[1] + sizeof(struct sv_rec_block_header);
		uint32_t blen, crc;

		assert_int_equal(ev[0], SV_REC_EVENT);
		ev[offsetof(struct sv_rec_event, point)] = 42;
		memcpy(&blen, buf + off[1] + 4, 4);
		crc = sv_crc32c(sv_crc32c(0, buf + off[1], 12), ev, blen);
		memcpy(buf + off[1] + 12, &crc, 4);
	}
	save("dmg.rec", buf, len);
	r = run(files, NULL, 1);
	fi = svr_file(r, 0);
	assert_int_equal(fi->err, 0);
	assert_true(fi->clean_end);
	assert_int_equal(fi->damage.blocks_skipped, 0);
	assert_int_equal(fi->damage.records_invalid, 1);
	assert_int_equal(svr_point(r, SV_POINT_T0, -1)->frames, 20000 - 1);
	assert_reports_say(r, &b, &e, "1 invalid record(s) dropped", "first: record_field at offset",
			   "\"records_invalid\": 1", "\"first_error\": \"record_field\"");
	{
		size_t hlen = 0;
		FILE *f = open_memstream(&out, &hlen);

		assert_non_null(f);
		assert_int_equal(svr_write_html(r, &b, &e, NULL, NULL, f), 0);
		fclose(f);
		assert_non_null(strstr(out, "damaged: 0 block(s) skipped (0 octets, 0 records lost), 1 invalid"));
		free(out);
	}
	svr_destroy(r);
	free(buf);
}

/* Two streams, one T3 stamped 5 us before its T0 (one clock: a note, not a fault): the per-stream minimum,
 * from a histogram, is that negative value, as the all-streams exact minimum is (it used to drop it). */
static void test_negative_min_per_stream(void **state)
{
	struct sv_record_writer *pub, *sub;
	const char *files[] = {"pubn.rec", "subn.rec"}, *guests[] = {NULL, "vm1"};
	struct sv_rec_stream s2 = {.stream = 1, .appid = 0x4001, .asdus = 1, .sample_rate = RATE, .conf_rev = 1,
				   .vlan = 0xFFFF, .smp_synch = 2, .svid_len = 4, .smp_wrap = RATE};
	struct svr_hop all, one, other;
	struct svr *r;

	(void)state;
	memcpy(s2.svid, "MU02", 5);
	pub = wopen("pubn.rec", "svpub", "hostA", true, RATE);
	sub = wopen("subn.rec", "svsub", "hostA", true, RATE);
	assert_int_equal(sv_record_define_stream(pub, &s2), 0);
	assert_int_equal(sv_record_define_stream(sub, &s2), 0);
	for (unsigned k = 0; k < 100; k++) {
		for (uint8_t st = 0; st < 2; st++) {
			int64_t t0 = ts_of(k) + 10000 + st * 1000;
			int64_t t3 = t0 + ((st == 1 && k == 50) ? -5000 : 20000 + (int64_t)k);
			struct sv_rec_event e0 = {.point = SV_POINT_T0, .stream = st, .t_ns = t0, .tai_sec = SEC0,
						  .smp_cnt = (uint16_t)k, .ts_src = SV_TS_SOFTWARE,
						  .guest = SV_REC_GUEST_NONE, .nasdu = 1};
			struct sv_rec_event e3 = e0;

			e3.point = SV_POINT_T3;
			e3.t_ns = t3;
			assert_int_equal(sv_record_write_event(pub, &e0), 0);
			assert_int_equal(sv_record_write_event(sub, &e3), 0);
		}
	}
	assert_int_equal(sv_record_writer_close(pub), 0);
	assert_int_equal(sv_record_writer_close(sub), 0);
	r = run(files, guests, 2);
	assert_int_equal(svr_hop_get(r, SV_POINT_T0, SV_POINT_T3, 0, -1, &all), 0);
	assert_true(all.lat.exact);
	assert_int_equal(all.count, 200);
	assert_int_equal(all.lat.min, -5000);
	assert_int_equal(svr_hop_get(r, SV_POINT_T0, SV_POINT_T3, 0, 1, &one), 0);
	assert_false(one.lat.exact);
	assert_int_equal(one.count, 100);
	assert_int_equal(one.lat.negative, 1);
	assert_int_equal(one.lat.min, -5000);
	assert_int_equal(one.lat.max, 20099);
	assert_int_equal(svr_hop_get(r, SV_POINT_T0, SV_POINT_T3, 0, 0, &other), 0);
	assert_int_equal(other.lat.min, 20000);
	assert_int_equal(other.lat.negative, 0);
	svr_destroy(r);
}

/* Two hypervisors, each with an egress port called vnet0 toward another guest: HOST:PORT aliases (host as
 * the record's header names it) keep them apart, before a plain PORT alias; one naming no record is said. */
static void test_alias_by_host(void **state)
{
	const char *files[] = {"hva.rec", "hvb.rec", "hvc.rec"};
	struct sv_record_writer *w[3];
	const char *hosts[3] = {"hvA", "hvB", "hvC"};
	struct svr *r;
	bool g1 = false, g2 = false, gx = false;

	(void)state;
	for (unsigned i = 0; i < 3; i++) {
		w[i] = wopen(files[i], "svtrace", hosts[i], true, RATE);
		name_port(w[i], 0, "vnet0");
		for (unsigned k = 0; k < 10; k++)
			ev_write(w[i], SV_POINT_T2A, SEC0, (uint16_t)k, ts_of(k) + 20000 + i, 0);
		assert_int_equal(sv_record_writer_close(w[i]), 0);
	}
	assert_int_equal(svr_create(&r, NULL), 0);
	assert_int_equal(svr_add_alias(r, "vnet0", "gx"), 0);
	assert_int_equal(svr_add_alias(r, "hvA:vnet0", "g1"), 0);
	assert_int_equal(svr_add_alias(r, "hvB:vnet0", "g2"), 0);
	assert_int_equal(svr_add_alias(r, "hvZ:vnet0", "g9"), 0);
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(svr_add_file(r, path_of(files[i]), NULL), 0);
	assert_int_equal(svr_run(r), 0);
	assert_int_equal(svr_nguests(r), 3);
	for (unsigned g = 0; g < 3; g++) {
		g1 |= !strcmp(svr_guest_name(r, g), "g1");
		g2 |= !strcmp(svr_guest_name(r, g), "g2");
		gx |= !strcmp(svr_guest_name(r, g), "gx");	/* hvC: no HOST:PORT alias, the plain one */
	}
	assert_true(g1 && g2 && gx);
	assert_null(svr_alias_unused(r, 0));
	assert_null(svr_alias_unused(r, 1));
	assert_null(svr_alias_unused(r, 2));
	assert_string_equal(svr_alias_unused(r, 3), "hvZ:vnet0");
	assert_int_equal(svr_add_alias(r, "", "x"), -EINVAL);
	svr_destroy(r);
}

/* ---- a full disk at the writer: frames "not recorded", not lost ------------------------------------- */

static void ev_drop(struct sv_record_writer *w, unsigned point, unsigned k, int64_t lat_ns)
{
	struct sv_rec_event e = {.point = (uint8_t)point, .stream = 0, .t_ns = ts_of(k) + lat_ns,
				 .tai_sec = SEC0 + k / RATE, .smp_cnt = (uint16_t)(k % RATE),
				 .ts_src = SV_TS_SOFTWARE, .guest = SV_REC_GUEST_NONE, .nasdu = 1};

	sv_record_write_event(w, &e); /* a dropped block is the point here: the writer counts it */
}

/* svpub's record of frames 0..n-1 at T0 whose frames [from, to) are written while the disk is full: the
 * writer counts what it dropped (*lost_frames). */
static void pub_with_gap(const char *name, unsigned n, unsigned from, unsigned to, uint64_t *lost_frames)
{
	struct sv_record_writer *w = wopen(name, "svpub", "hostA", true, RATE);
	struct sv_record_writer_stats st;
	struct stat sb;

	for (unsigned k = 0; k < n; k++) {
		if (k == from) {
			assert_int_equal(sv_record_flush(w), 0);
			assert_int_equal(stat(path_of(name), &sb), 0);
			fsize_limit((rlim_t)sb.st_size);
		}
		if (k == to)
			fsize_limit(RLIM_INFINITY);
		ev_drop(w, SV_POINT_T0, k, 20000);
	}
	assert_int_equal(sv_record_writer_close_stats(w, &st), 0);
	assert_int_equal(st.stretches, 1);
	*lost_frames = st.lost_frames[SV_POINT_T0];
	assert_true(*lost_frames > 0);
}

static uint64_t lost_all(struct svr *r, int guest)
{
	uint8_t pairs[64][2];
	unsigned n = svr_hop_list(r, guest, pairs, 64);
	uint64_t lost = 0;

	for (unsigned i = 0; i < n; i++) {
		struct svr_hop h;

		if (!svr_hop_get(r, pairs[i][0], pairs[i][1], guest, -1, &h))
			lost += h.lost;
	}
	return lost;
}

/* A gap of half a second (inside the 3 s window: placeholders) and one of 5 s (an outage: counted from the
 * sample indexes): both not recorded at T0, exactly what the writer dropped; nothing lost. */
static void test_gap_in_window_and_outage(void **state)
{
	static const unsigned gaps[2][2] = {{8000, 18000}, {8000, 32000}};

	(void)state;
	for (unsigned i = 0; i < 2; i++) {
		const char *files[] = {i ? "outage.rec" : "gap.rec"};
		const struct svr_point_stats *ps;
		const struct svr_file_info *fi;
		uint64_t dropped;
		struct svr *r;

		pub_with_gap(files[0], 40000, gaps[i][0], gaps[i][1], &dropped);
		r = run(files, NULL, 1);
		ps = svr_point(r, SV_POINT_T0, SVR_GUEST_SHARED);
		fi = svr_file(r, 0);
		print_message("gap %u..%u: the writer dropped %" PRIu64 " frames, svreport: %" PRIu64 " seen, %" PRIu64
			      " not recorded, %" PRIu64 " lost (outage %" PRIu64 ")\n", gaps[i][0], gaps[i][1], dropped,
			      ps->frames, ps->not_recorded, lost_all(r, SVR_GUEST_SHARED), svr_totals(r)->outage_lost);
		assert_int_equal(ps->not_recorded, dropped);
		assert_int_equal(ps->frames + dropped, 40000);
		assert_int_equal(lost_all(r, SVR_GUEST_SHARED), 0);
		assert_int_equal(svr_totals(r)->outage_lost, 0);
		assert_int_equal(svr_totals(r)->not_recorded, dropped);
		assert_int_equal(fi->unwritten_frames[SV_POINT_T0], dropped);
		assert_int_equal(fi->unwritten_stretches, 1);
		assert_int_equal(fi->unwritten_errno, EFBIG);
		assert_int_equal(fi->unwritten_unlocated, 0);
		assert_int_equal(fi->unwritten_records, fi->end_lost_records);
		svr_destroy(r);
	}
}

/* The same gap seen by a subscriber that recorded it: not recorded at T0 (not "missing" between Ts and T3,
 * which is what the frames the publisher's file lacks looked like before), nothing lost; and a frame the
 * subscriber really missed inside the publisher's gap is not blamed on the network either (unknown). */
static void test_gap_with_subscriber(void **state)
{
	const char *files[] = {"pub2.rec", "sub2.rec"}, *guests[] = {NULL, "vm1"};
	struct sv_record_writer *sub = wopen("sub2.rec", "svsub", "hostA", true, RATE);
	const struct svr_point_stats *t0, *t3;
	struct svr_hop h;
	uint64_t dropped;
	struct svr *r;

	(void)state;
	pub_with_gap(files[0], 20000, 6000, 16000, &dropped);
	for (unsigned k = 0; k < 20000; k++)
		if (k != 17000) /* one frame really lost, outside the gap: counted lost */
			ev_drop(sub, SV_POINT_T3, k, 80000);
	assert_int_equal(sv_record_writer_close(sub), 0);
	r = run(files, guests, 2);
	t0 = svr_point(r, SV_POINT_T0, SVR_GUEST_SHARED);
	t3 = svr_point(r, SV_POINT_T3, 0);
	assert_int_equal(t0->not_recorded, dropped);
	assert_int_equal(t0->missing, 0);
	assert_int_equal(t3->not_recorded, 0);
	assert_int_equal(t3->frames, 19999);
	assert_int_equal(svr_hop_get(r, SV_POINT_T0, SV_POINT_T3, 0, -1, &h), 0);
	assert_int_equal(h.lost, 1);
	assert_int_equal(h.missing, 0);
	svr_destroy(r);
}

/* An older writer (minor 0) counts its lost records in END only: its tail after its last event is not
 * recorded (the frames a subscriber saw there are not missing at T0), said as unlocated. */
static void patch_end_lost(const char *path, uint64_t lost, int64_t t_ns)
{
	FILE *f = fopen(path, "r+b");
	uint8_t blk[16 + 32];
	struct sv_rec_end end;
	uint32_t crc;
	long size;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	size = ftell(f);
	/* the last block holds END alone (the writer flushes before it) */
	assert_int_equal(fseek(f, size - (long)sizeof(blk), SEEK_SET), 0);
	assert_int_equal(fread(blk, 1, sizeof(blk), f), sizeof(blk));
	memcpy(&end, blk + 16, sizeof(end));
	assert_int_equal(end.kind, SV_REC_END);
	end.lost_records = lost;
	end.t_ns = t_ns;
	memcpy(blk + 16, &end, sizeof(end));
	crc = sv_crc32c(sv_crc32c(0, blk, 12), blk + 16, 32);
	memcpy(blk + 12, &crc, 4);
	assert_int_equal(fseek(f, size - (long)sizeof(blk), SEEK_SET), 0);
	assert_int_equal(fwrite(blk, 1, sizeof(blk), f), sizeof(blk));
	assert_int_equal(fclose(f), 0);
}

static void test_old_writer_tail(void **state)
{
	const char *files[] = {"old.rec", "sub3.rec"}, *guests[] = {NULL, "vm1"};
	struct sv_record_writer *pub = wopen("old.rec", "svpub", "hostA", true, RATE);
	struct sv_record_writer *sub = wopen("sub3.rec", "svsub", "hostA", true, RATE);
	const struct svr_point_stats *t0;
	const struct svr_file_info *fi;
	struct svr *r;

	(void)state;
	for (unsigned k = 0; k < 20000; k++) {
		if (k < 12000)
			ev_drop(pub, SV_POINT_T0, k, 20000);
		ev_drop(sub, SV_POINT_T3, k, 80000);
	}
	assert_int_equal(sv_record_writer_close(pub), 0);
	assert_int_equal(sv_record_writer_close(sub), 0);
	patch_end_lost(path_of("old.rec"), 8002, ts_of(20000));
	r = run(files, guests, 2);
	t0 = svr_point(r, SV_POINT_T0, SVR_GUEST_SHARED);
	fi = svr_file(r, 0);
	assert_int_equal(t0->frames, 12000);
	assert_int_equal(t0->missing, 0);
	assert_int_equal(t0->not_recorded, 8000);
	assert_int_equal(lost_all(r, 0), 0);
	assert_int_equal(fi->unwritten_unlocated, 8002);
	assert_int_equal(fi->unwritten_records, 8002);
	assert_int_equal(fi->end_lost_records, 8002);
	svr_destroy(r);
}

/* The outputs say it: the file's line with the errno's name, the points' not-recorded column and figure. */
static void test_outputs_unwritten(void **state)
{
	const char *files[] = {"out.rec"};
	struct svr_budgets b;
	struct svr_eval e;
	uint64_t dropped;
	struct svr *r;
	char *txt, *json;

	(void)state;
	pub_with_gap(files[0], 16000, 4000, 12000, &dropped);
	r = run(files, NULL, 1);
	svr_budgets_default(&b);
	svr_evaluate(r, &b, &e);
	report_of(r, &b, &e, false, &txt);
	report_of(r, &b, &e, true, &json);
	assert_non_null(strstr(txt, "its writer could not write"));
	assert_non_null(strstr(txt, "EFBIG"));
	assert_non_null(strstr(txt, "notrec"));
	assert_non_null(strstr(txt, "not recorded: "));
	assert_non_null(strstr(json, "\"not_recorded\""));
	assert_non_null(strstr(json, "\"unwritten\""));
	assert_non_null(strstr(json, "\"errno\": \"EFBIG\""));
	free(txt);
	free(json);
	svr_destroy(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_exact_percentiles, setup, teardown),
		cmocka_unit_test_setup_teardown(test_anomalies, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lost_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tracer_second_realigned, setup, teardown),
		cmocka_unit_test_setup_teardown(test_summaries_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_budgets_verdict, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json_shape, setup, teardown),
		cmocka_unit_test_setup_teardown(test_late_holders, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cyclictest, setup, teardown),
		cmocka_unit_test_setup_teardown(test_guest_labels, setup, teardown),
		cmocka_unit_test_setup_teardown(test_publisher_behind, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rate_learned_late, setup, teardown),
		cmocka_unit_test_setup_teardown(test_silent_guest, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tracer_learns_rate_mid_second, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unkeyed_rekeyed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mixed_sets, setup, teardown),
		cmocka_unit_test_setup_teardown(test_verdict_none, setup, teardown),
		cmocka_unit_test_setup_teardown(test_late_keys_cross_host, setup, teardown),
		cmocka_unit_test_setup_teardown(test_damaged_block, setup, teardown),
		cmocka_unit_test_setup_teardown(test_damaged_tail_and_field, setup, teardown),
		cmocka_unit_test_setup_teardown(test_negative_min_per_stream, setup, teardown),
		cmocka_unit_test_setup_teardown(test_alias_by_host, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rotated_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gap_in_window_and_outage, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gap_with_subscriber, setup, teardown),
		cmocka_unit_test_setup_teardown(test_old_writer_tail, setup, teardown),
		cmocka_unit_test_setup_teardown(test_outputs_unwritten, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

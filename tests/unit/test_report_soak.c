// SPDX-License-Identifier: Apache-2.0
/*
 * svreport's soak report (svreport_soak.c, svreport_soak_out.c):
 *  - a soak written record by record through libsv's writer, every latency known: the whole soak's percentiles
 *    within their stated error of the exact ones, the loss, the restart of a svsub (new run_id) as a gap of
 *    exactly its length and not an error, the clock step, the window, the worst frames and the why-late causes
 *    of the one flagged WHY, the soak's verdict against budgets, and the same figures in the JSON;
 *  - the synthetic soak of tests/bench/soak_gen.h (2 h, rotated parts, svsub killed and restarted): every
 *    interval of every tool counted, the histograms' counts equal to the INTERVAL records', the losses of the
 *    faults exact, the windows kept and refused as the writers counted them and joined across the hosts, one
 *    step and one gap (killed), the HTML's plots laid out by headless Chromium.
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
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "../bench/soak_gen.h"
#include "svreport.h"
#include "unit_chromium.h"
#include "unit_tmpdir.h"

UNIT_TMPDIR("test_report_soak")

#define SEC0 1800000000u	/* a whole TAI hour */
#define NS SV_NSEC_PER_SEC

static const char *path_of(const char *name)
{
	static char buf[8][128];
	static unsigned k;
	char *p = buf[k++ % 8];

	snprintf(p, 128, "%s/%s", dir, name);
	return p;
}

static int64_t now_tai;

static int64_t writer_now(void *ctx)
{
	(void)ctx;
	return now_tai;
}

static struct sv_record_writer *wopen(const char *name, const char *tool, const char *host)
{
	struct sv_clock_sync sync = {.tai_offset_s = 37, .maxerror_ns = 1000};
	struct sv_record_writer_cfg cfg = {.path = path_of(name), .tool = tool, .clock = SV_CLOCK_TAI,
					   .sync = &sync, .host = host, .no_to_tai = true, .now = writer_now};
	struct sv_rec_stream s = {.appid = 0x4000, .asdus = 1, .sample_rate = 4000, .vlan = 0xFFFF,
				  .smp_synch = 2, .svid_len = 4, .smp_wrap = 4000};
	struct sv_record_writer *w = NULL;

	memcpy(s.svid, "MU01", 5);
	assert_int_equal(sv_record_writer_open(&w, &cfg), 0);
	assert_int_equal(sv_record_define_stream(w, &s), 0);
	return w;
}

/* Interval @i (10 s from SEC0) of hop @from-@to: 40000 latencies 10000 .. 49999 ns, plus @spike (0: none) as
 * its worst frame (second SEC0 + 10 i + 5, smpCnt 100), and @lost samples lost. */
static void interval(struct sv_record_writer *w, unsigned from, unsigned to, uint16_t guest, unsigned i,
		     int64_t spike, uint32_t lost, uint8_t flags)
{
	static struct sv_stats h;
	struct sv_rec_interval iv = {
		.point = (uint8_t)to, .from_point = (uint8_t)from, .guest = guest, .stream = 0,
		.tai_sec = SEC0 + 10 * i, .period_ms = 10000, .frames = 40000, .samples = 40000, .count = 40000,
		.flags = SV_REC_INTERVAL_F_WORST | flags, .worst_tai_sec = SEC0 + 10 * i + 1, .worst_ns = 49999,
		.lost = lost,
	};
	struct sv_rec_hist hh = {.point = (uint8_t)to, .from_point = (uint8_t)from, .guest = guest,
				 .stream = SV_REC_STREAM_NONE, .tai_sec = SEC0 + 10 * i, .period_ms = 10000};

	sv_stats_init(&h);
	for (int64_t v = 10000; v < 50000; v++)
		sv_stats_add(&h, v);
	if (spike) {
		sv_stats_add(&h, spike);
		iv.count++;
		iv.frames++;
		iv.samples++;
		iv.late = 1;
		iv.worst_ns = spike;
		iv.worst_tai_sec = SEC0 + 10 * i + 5;
		iv.worst_smp_cnt = 100;
	}
	now_tai = (int64_t)(SEC0 + 10 * i + 11) * NS;
	assert_int_equal(sv_record_write_interval(w, &iv), 0);
	assert_int_equal(sv_record_write_hist(w, &hh, &h), 0);
}

static void close_at(struct sv_record_writer *w, int64_t t)
{
	now_tai = t;
	assert_int_equal(sv_record_writer_close(w), 0);
}

static bool has(const char *json, const char *s)
{
	if (strstr(json, s))
		return true;
	print_message("JSON lacks: %s\n", s);
	return false;
}

static void test_soak_synthetic(void **state)
{
	struct sv_record_writer *pub, *tr, *g1a, *g1b = NULL;
	struct sv_rec_name n = {.name_kind = SV_REC_NAME_GUEST, .id = 1};
	static struct svr_eval e;
	struct svr_budgets b = {.n = 2, .clock_tolerance_ns = -1};
	struct svr *r;
	const struct svr_soak *k;
	struct sv_stats_summary s;
	char *json = NULL;
	size_t jlen = 0;
	FILE *mf;
	int hop_pub = -1, hop_tr = -1, hop_g1 = -1;

	(void)state;
	now_tai = (int64_t)SEC0 * NS;
	pub = wopen("pub.rec", "svpub", "pub1");
	tr = wopen("trace.rec", "svtrace", "hyper1");
	g1a = wopen("g1a.rec", "svsub", "guest1");
	snprintf(n.name, sizeof(n.name), "vnet0");
	assert_int_equal(sv_record_define_name(tr, &n), 0);
	for (unsigned i = 0; i < 6; i++) {
		/* svpub: a 2 ms frame in interval 3, 40 samples lost in interval 2 */
		interval(pub, SV_POINT_TS, SV_POINT_T0, SV_REC_GUEST_NONE, i, i == 3 ? 2 * SV_NSEC_PER_MSEC : 0,
			 i == 2 ? 40 : 0, 0);
		/* svtrace: a 1.5 ms frame in interval 3 with its why-late record, its window */
		if (i == 3) {
			struct sv_rec_why y = {.point = SV_POINT_T2A, .stream = 0, .from_point = SV_POINT_T1,
					       .guest = 1, .tai_sec = SEC0 + 35, .smp_cnt = 100,
					       .t_from_ns = (int64_t)(SEC0 + 35) * NS + 50000};
			struct sv_rec_window win = {.point = SV_POINT_T2A, .cls = SV_WINDOW_LATENCY,
						    .classes = 1u << SV_WINDOW_LATENCY, .guest = 1, .stream = 0,
						    .t_trigger_ns = (int64_t)(SEC0 + 35) * NS + 1550000,
						    .t_start_ns = (int64_t)(SEC0 + 33) * NS,
						    .t_end_ns = (int64_t)(SEC0 + 37) * NS, .value = 1500000,
						    .trigger_tai_sec = SEC0 + 35, .trigger_smp_cnt = 100, .triggers = 1,
						    .id = 1};

			y.ns[SV_WHY_RUNQUEUE] = 1000000;
			y.ns[SV_WHY_IRQ_TIMER] = 300000;
			y.ns[SV_WHY_CARRIED] = 200000;
			y.t_to_ns = y.t_from_ns + 1500000;
			assert_int_equal(sv_record_write_why(tr, &y), 0);
			assert_int_equal(sv_record_write_window(tr, &win), 0);
		}
		if (i == 4) {	/* the hypervisor's TAI stepped by +3 ms at SEC0 + 45 */
			struct sv_rec_clock c = {.clock = SV_CLOCK_MONOTONIC, .flags = SV_REC_CLOCK_F_STEP,
						 .t_ns = 45 * NS, .old_to_tai_ns = (int64_t)SEC0 * NS - 3000000,
						 .new_to_tai_ns = (int64_t)SEC0 * NS, .step_ns = 3000000,
						 .gap_ns = 100, .threshold_ns = 10000, .tai_offset_s = 37};

			assert_int_equal(sv_record_write_clock(tr, &c), 0);
		}
		interval(tr, SV_POINT_T1, SV_POINT_T2A, 1, i, i == 3 ? 1500000 : 0, 0,
			 i == 3 ? SV_REC_INTERVAL_F_WHY : 0);
		if (!i) {	/* svtrace's counts at T1 alone (no latency): a row of its own */
			struct sv_rec_interval p1 = {.point = SV_POINT_T1, .from_point = SV_POINT_NONE,
						     .guest = SV_REC_GUEST_NONE, .tai_sec = SEC0, .period_ms = 10000,
						     .frames = 40000, .samples = 40000};

			assert_int_equal(sv_record_write_interval(tr, &p1), 0);
		}
		/* svsub of guest 1: intervals 0-2, stopped at SEC0 + 30; a new run from SEC0 + 40 (4, 5) */
		if (i < 3)
			interval(g1a, SV_POINT_TS, SV_POINT_T3, SV_REC_GUEST_NONE, i, 0, 0, 0);
		if (i == 2)
			close_at(g1a, (int64_t)(SEC0 + 30) * NS);
		if (i == 4) {
			now_tai = (int64_t)(SEC0 + 40) * NS;
			g1b = wopen("g1b.rec", "svsub", "guest1");
		}
		if (i >= 4)
			interval(g1b, SV_POINT_TS, SV_POINT_T3, SV_REC_GUEST_NONE, i, 0, 0, 0);
	}
	close_at(pub, (int64_t)(SEC0 + 61) * NS);
	close_at(tr, (int64_t)(SEC0 + 61) * NS);
	close_at(g1b, (int64_t)(SEC0 + 61) * NS);

	assert_int_equal(svr_create(&r, NULL), 0);
	assert_int_equal(svr_add_alias(r, "vnet0", "g1"), 0);
	assert_int_equal(svr_add_file(r, path_of("pub.rec"), NULL), 0);
	assert_int_equal(svr_add_file(r, path_of("trace.rec"), NULL), 0);
	assert_int_equal(svr_add_file(r, path_of("g1a.rec"), "g1"), 0);
	assert_int_equal(svr_add_file(r, path_of("g1b.rec"), "g1"), 0); /* a restart: not "one guest, one run" */
	assert_int_equal(svr_run(r), 0);
	k = svr_soak_get(r);
	assert_non_null(k);
	assert_int_equal(k->nhops, 4);
	for (unsigned i = 0; i < k->nhops; i++) {
		if (k->hops[i].from == k->hops[i].to) {	/* the point alone */
			assert_int_equal(k->hops[i].to, SV_POINT_T1);
			assert_int_equal(k->hops[i].frames, 40000);
			assert_int_equal(k->hops[i].hists, 0);
		}
		if (k->hops[i].to == SV_POINT_T0)
			hop_pub = (int)i;
		if (k->hops[i].to == SV_POINT_T2A)
			hop_tr = (int)i;
		if (k->hops[i].to == SV_POINT_T3)
			hop_g1 = (int)i;
	}
	assert_true(hop_pub >= 0 && hop_tr >= 0 && hop_g1 >= 0);
	assert_int_equal(k->hops[hop_pub].guest, SVR_GUEST_SHARED);
	assert_string_equal(svr_guest_name(r, (unsigned)k->hops[hop_tr].guest), "g1");
	assert_int_equal(k->hops[hop_g1].guest, k->hops[hop_tr].guest);
	assert_int_equal(k->intervals, 6 + 6 + 1 + 5);
	assert_int_equal(k->hops[hop_g1].intervals, 5);
	assert_int_equal(k->hops[hop_pub].lost, 40);
	assert_int_equal(k->hops[hop_pub].late, 1);
	assert_int_equal(k->period_ms, 10000);
	assert_int_equal(k->first_tai_ns, (int64_t)SEC0 * NS);
	assert_int_equal(k->last_tai_ns, (int64_t)(SEC0 + 60) * NS);

	/* the whole soak's percentiles: 6 x (10000 .. 49999 ns) and 2 ms; exact p50 30000, p99 49600 (nearest
	 * rank of 240001 values) */
	svr_soak_hop_summary(&k->hops[hop_pub], &s);
	assert_int_equal(s.count, 240001);
	assert_int_equal(k->hops[hop_pub].count, 240001);
	assert_true(s.p50_err > 0);
	assert_true(llabs(s.p50 - 30000) <= s.p50_err);
	assert_true(llabs(s.p99 - 49600) <= s.p99_err);
	assert_int_equal(s.max, 2 * SV_NSEC_PER_MSEC);
	assert_int_equal(s.min, 10000);

	/* events, by time: the loss (interval 2), the window (SEC0 + 35), the gap (SEC0 + 30 .. 40), the step */
	assert_int_equal(k->nevents, 4);
	assert_int_equal(k->events[0].kind, SVR_SOAK_EV_LOSS);
	assert_int_equal(k->events[0].t_ns, (int64_t)(SEC0 + 20) * NS);
	assert_int_equal(k->events[0].value, 40);
	assert_int_equal(k->events[1].kind, SVR_SOAK_EV_GAP);
	assert_int_equal(k->events[1].t_ns, (int64_t)(SEC0 + 30) * NS);
	assert_int_equal(k->events[1].end_ns, (int64_t)(SEC0 + 40) * NS);
	assert_int_equal(k->events[1].value, 10 * NS);
	assert_int_equal(k->events[1].flags, 0);	/* the first run ended with END */
	assert_int_equal(k->events[1].guest, k->hops[hop_g1].guest);
	assert_int_equal(k->events[2].kind, SVR_SOAK_EV_WINDOW);
	assert_int_equal(k->events[2].cls, SV_WINDOW_LATENCY);
	assert_int_equal(k->events[2].guest, k->hops[hop_tr].guest);
	assert_int_equal(k->events[2].value, 1500000);
	assert_int_equal(k->events[2].joined, 0);	/* only svtrace kept that stretch: shown all the same */
	assert_int_equal(k->events[3].kind, SVR_SOAK_EV_STEP);
	assert_int_equal(k->events[3].t_ns, (int64_t)(SEC0 + 45) * NS);
	assert_int_equal(k->events[3].value, 3000000);
	assert_int_equal(k->gaps, 1);
	assert_int_equal(k->clock_steps, 1);
	assert_int_equal(k->windows, 1);
	assert_int_equal(svr_nwarnings(r), 1);	/* the restart, said; not "do not overlap" */
	assert_non_null(strstr(svr_warning(r, 0), "restarted"));

	/* the worst intervals: svpub's 2 ms, then svtrace's 1.5 ms with its why-late causes, largest first */
	assert_true(k->nworst >= 2);
	assert_int_equal(k->worst[0].worst_ns, 2 * SV_NSEC_PER_MSEC);
	assert_false(k->worst[0].why_found);
	assert_int_equal(k->worst[1].worst_ns, 1500000);
	assert_int_equal(k->worst[1].worst_tai_sec, SEC0 + 35);
	assert_int_equal(k->worst[1].worst_smp_cnt, 100);
	assert_true(k->worst[1].why_found);
	assert_int_equal(k->worst[1].ncauses, 3);
	assert_int_equal(k->worst[1].cause[0], SV_WHY_RUNQUEUE);
	assert_int_equal(k->worst[1].cause_ns[0], 1000000);
	assert_int_equal(k->worst[1].cause[1], SV_WHY_IRQ_TIMER);
	assert_int_equal(k->worst[1].cause[2], SV_WHY_CARRIED);

	/* the soak's verdict: Ts-T0 p99 <= 100 us passes, T1-T2a max <= 1 ms fails: the report fails */
	b.b[0] = (struct svr_budget){.from = SV_POINT_TS, .to = SV_POINT_T0, .stat = SVR_STAT_P99, .limit = 100000};
	b.b[1] = (struct svr_budget){.from = SV_POINT_T1, .to = SV_POINT_T2A, .stat = SVR_STAT_MAX,
				     .limit = 1000000};
	svr_evaluate(r, &b, &e);
	assert_true(e.soak.present);
	assert_int_equal(e.soak.evaluated, 2);
	assert_int_equal(e.soak.failed, 1);
	assert_int_equal(e.soak.verdict, SVR_FAIL);
	assert_int_equal(e.verdict, SVR_FAIL);

	/* the same figures in the JSON */
	mf = open_memstream(&json, &jlen);
	assert_non_null(mf);
	assert_int_equal(svr_write_json(r, &b, &e, NULL, mf), 0);
	fclose(mf);
	assert_true(has(json, "\"run_restarts\": 1"));
	assert_true(has(json, "\"hop\": \"T1\""));
	assert_true(has(json, "\"clock_steps\": 1"));
	assert_true(has(json, "\"kind\": \"gap\""));
	assert_true(has(json, "\"end_tai_ns\": 1800000040000000000"));
	assert_true(has(json, "\"kind\": \"clock step\""));
	assert_true(has(json, "\"value\": 3000000"));
	assert_true(has(json, "\"cause\": \"runqueue\""));
	assert_true(has(json, "\"lost\": 40"));
	assert_true(has(json, "\"count\": 240001"));
	assert_true(has(json, "\"verdict\": \"FAIL\""));
	free(json);
	/* and in the text and HTML (the timeline plot of each hop) */
	mf = open_memstream(&json, &jlen);
	assert_int_equal(svr_write_text(r, &b, &e, NULL, mf), 0);
	fclose(mf);
	assert_true(has(json, "verdict over the whole soak: FAIL"));
	assert_true(has(json, "why late (T1-T2a 1.5ms): runqueue 1ms, irq_timer 300us, carried 200us"));
	free(json);
	mf = open_memstream(&json, &jlen);
	assert_int_equal(svr_write_html(r, &b, &e, NULL, NULL, mf), 0);
	fclose(mf);
	assert_true(has(json, "latency per interval over the soak"));
	assert_true(has(json, "<title>window: latency</title>"));
	assert_true(has(json, "<title>gap: not recorded</title>"));
	free(json);
	svr_destroy(r);
}

/* Records without soak records (svtrace writes why-late records in either mode): no soak report, and the
 * per-frame percentiles stay exact. */
static void test_soak_none(void **state)
{
	struct sv_record_writer *tr;
	struct sv_rec_why y = {.point = SV_POINT_T2A, .stream = 0, .from_point = SV_POINT_T1, .guest = 1,
			       .tai_sec = SEC0, .smp_cnt = 3, .t_from_ns = (int64_t)SEC0 * NS};
	struct sv_rec_name n = {.name_kind = SV_REC_NAME_GUEST, .id = 1, .name = "vnet0"};
	static struct svr_eval e;
	struct svr_budgets b;
	struct svr_hop h;
	struct svr *r;
	char *json = NULL;
	size_t jlen = 0;
	FILE *mf;

	(void)state;
	now_tai = (int64_t)SEC0 * NS;
	tr = wopen("nosoak.rec", "svtrace", "hyper1");
	assert_int_equal(sv_record_define_name(tr, &n), 0);
	for (unsigned k = 0; k < 4000; k++) {
		int64_t ts = sv_sample_time_ns(SEC0 + k / 4000, k % 4000, 4000);
		struct sv_rec_event ev = {.point = SV_POINT_T1, .t_ns = ts + 20000, .tai_sec = SEC0 + k / 4000,
					  .smp_cnt = (uint16_t)(k % 4000), .ts_src = SV_TS_BPF,
					  .guest = SV_REC_GUEST_NONE};

		assert_int_equal(sv_record_write_event(tr, &ev), 0);
		ev.point = SV_POINT_T2A;
		ev.guest = 1;
		ev.t_ns += 5000 + k;
		assert_int_equal(sv_record_write_event(tr, &ev), 0);
	}
	y.ns[SV_WHY_CARRIED] = 8000;
	y.t_to_ns = y.t_from_ns + 8000;
	assert_int_equal(sv_record_write_why(tr, &y), 0);
	close_at(tr, (int64_t)(SEC0 + 2) * NS);
	assert_int_equal(svr_create(&r, NULL), 0);
	assert_int_equal(svr_add_file(r, path_of("nosoak.rec"), NULL), 0);
	assert_int_equal(svr_run(r), 0);
	assert_null(svr_soak_get(r));
	assert_int_equal(svr_hop_get(r, SV_POINT_T1, SV_POINT_T2A, 0, -1, &h), 0);
	assert_int_equal(h.count, 4000);
	assert_true(h.lat.exact);
	svr_budgets_default(&b);
	svr_evaluate(r, &b, &e);
	assert_false(e.soak.present);
	mf = open_memstream(&json, &jlen);
	assert_int_equal(svr_write_json(r, &b, &e, NULL, mf), 0);
	fclose(mf);
	assert_true(has(json, "\"soak\": null"));
	assert_true(has(json, "\"soak_events\": null"));
	free(json);
	svr_destroy(r);
}

/* tests/bench/soak_gen.h, 2 h: the figures the generator's schedule makes. */
static void test_soak_generated(void **state)
{
	char gdir[128], aside[256];
	struct sg_cfg g = {.dir = gdir, .hours = 2, .rotate_mib = 1};
	static struct sg_result res;
	static struct svr_eval e;
	struct svr_budgets b;
	const struct svr_soak *k;
	struct svr *r;
	uint64_t windows, refused = 0;

	(void)state;
	snprintf(gdir, sizeof(gdir), "%s/gen", dir);
	assert_int_equal(mkdir(gdir, 0700), 0);
	assert_int_equal(sg_generate(&g, &res), 0);
	snprintf(aside, sizeof(aside), "%s/%s", gdir, res.g1_aside);
	assert_int_equal(svr_create(&r, NULL), 0);
	assert_int_equal(svr_add_alias(r, "vnet0", "g1"), 0);
	assert_int_equal(svr_add_alias(r, "vnet1", "g2"), 0);
	assert_int_equal(svr_add_file(r, path_of("gen/pub.rec"), NULL), 0);
	assert_int_equal(svr_add_file(r, path_of("gen/trace.rec"), NULL), 0);
	assert_int_equal(svr_add_file(r, aside, "g1"), 0);
	assert_int_equal(svr_add_file(r, path_of("gen/g1.rec"), "g1"), 0);
	assert_int_equal(svr_add_file(r, path_of("gen/g2.rec"), "g2"), 0);
	assert_int_equal(svr_run(r), 0);
	svr_budgets_default(&b);
	svr_evaluate(r, &b, &e);
	k = svr_soak_get(r);
	assert_non_null(k);
	/* 3 svtrace hops x 2 guests, 2 svsub hops x 2 guests, svpub's */
	assert_int_equal(k->nhops, 11);
	for (unsigned i = 0; i < k->nhops; i++) {
		const struct svr_soak_hop *h = &k->hops[i];
		const char *gn = h->guest >= 0 ? svr_guest_name(r, (unsigned)h->guest) : "-";

		/* the histograms count what the INTERVAL records count */
		assert_int_equal(h->hist.count, h->count);
		if (h->to == SV_POINT_T0) {
			assert_int_equal(h->intervals, 720 * 8);
			assert_int_equal(h->lost, 40);	/* the loss at 1 h: stream 5 */
		} else if (h->from == SV_POINT_T1 || h->from == SV_POINT_T2A) {
			assert_int_equal(h->intervals, 721 * 8);
			assert_int_equal(h->missing, strcmp(gn, "g2") ? 0 : 40); /* guest 2's: the 4th fault's */
		} else if (!strcmp(gn, "g2")) {
			assert_int_equal(h->intervals, 720 * 8);
			assert_int_equal(h->lost, 40);
		} else {
			assert_string_equal(gn, "g1");
			assert_true(h->intervals > (354 + 350) * 8 && h->intervals < (354 + 360) * 8);
		}
	}
	/* every window the writers kept, and the ones they refused as they counted them */
	windows = res.pub.fl.windows + res.trace.fl.windows + res.g1b.fl.windows + res.g2.fl.windows;
	assert_true(k->windows >= windows && k->windows <= windows + res.g1a.fl.windows + 10);
	for (unsigned c = 0; c < SV_WINDOW_CLASSES; c++)
		refused += k->refused_cls[c];
	assert_true(refused >= res.pub.fl.dropped[0] + res.trace.fl.dropped[0] + res.g2.fl.dropped[0]);
	assert_int_equal(k->refused_cls[SV_WINDOW_LATENCY] >= res.g2.fl.dropped[SV_WINDOW_LATENCY], 1);
	/* the tools trigger on the same frames: their windows join across the hosts */
	{
		unsigned joined = 0;

		for (unsigned i = 0; i < k->nevents; i++)
			if (k->events[i].kind == SVR_SOAK_EV_WINDOW && __builtin_popcountll(k->events[i].joined) >= 2)
				joined++;
		assert_true(joined >= k->windows / 2);
	}
	/* the step and the restart */
	assert_int_equal(k->clock_steps, 1);
	assert_int_equal(k->gaps, 1);
	for (unsigned i = 0; i < k->nevents; i++) {
		const struct svr_soak_event *ev = &k->events[i];

		if (i)
			assert_true(ev->t_ns >= k->events[i - 1].t_ns);
		if (ev->kind == SVR_SOAK_EV_STEP) {
			assert_int_equal(ev->value, 3 * SV_NSEC_PER_MSEC);
			/* a third of the way, within the 10 s the tool re-measures its clock */
			assert_true(ev->t_ns >= (SS_SEC0 + 2400) * NS && ev->t_ns <= (SS_SEC0 + 2411) * NS);
		}
		if (ev->kind == SVR_SOAK_EV_GAP) {
			assert_int_equal(ev->flags, 1);	/* killed: no END */
			assert_int_equal(ev->end_ns, (SS_SEC0 + 3660) * NS);
			assert_true(ev->value >= 60 * NS && ev->value <= 90 * NS);
			assert_string_equal(svr_guest_name(r, (unsigned)ev->guest), "g1");
		}
	}
	/* the late frame every 5 min makes the worst intervals: 1.5 ms over the tools' latencies */
	assert_int_equal(k->nworst, SVR_SOAK_WORST);
	assert_true(k->worst[0].worst_ns > 1500000 && k->worst[0].worst_ns < 1700000);
	/* svtrace's T1-T2b (max 100 us) fails over the soak */
	assert_int_equal(e.soak.verdict, SVR_FAIL);
	assert_int_equal(e.verdict, SVR_FAIL);
	/* the HTML: a timeline per hop, laid out and drawn by headless Chromium (when present) */
	{
		FILE *f = fopen(path_of("soak.html"), "w");
		struct chromium_svgs c;

		assert_non_null(f);
		assert_int_equal(svr_write_html(r, &b, &e, NULL, NULL, f), 0);
		chromium_probe(f);
		assert_int_equal(fclose(f), 0);
		/* T1-T2b's timelines draw its budget (max 100 us) */
		{
			char cmd[512];

			snprintf(cmd, sizeof(cmd), "grep -q '>max 100us</text>' '%s'", path_of("soak.html"));
			assert_int_equal(system(cmd), 0);
		}
		if (chromium_present()) {
			chromium_svgs(path_of("soak.html"), &c);
			print_message("chromium laid out %u svg plots, %u with a size, %u drawn\n", c.n, c.sized,
				      c.drawn);
			assert_true(c.n >= k->nhops);
			assert_int_equal(c.sized, c.n);
			assert_int_equal(c.drawn, c.n);
		}
	}
	svr_destroy(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_soak_synthetic),
		cmocka_unit_test(test_soak_none),
		cmocka_unit_test(test_soak_generated),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

// SPDX-License-Identifier: Apache-2.0
/*
 * sv_interval (soak mode's interval summaries), on a simulated clock: intervals on TAI boundaries whatever the
 * host's clocks (two hosts give the same records), across a clock step either way (a CLOCK record, the open
 * intervals flagged, every frame counted once), exact counters and drop reasons (short and long records,
 * saturation), the worst frame (first of ties, its why-late flag), the (hop, guest) histograms per interval
 * and each key's for the whole run, intervals in which nothing happened, strays, the key table.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "sv_interval.h"
#include "sv_record.h"
#include "sv_stats.h"
#include "unit_tmpdir.h"

#define SEC0 1800000000LL
#define T0 (SEC0 * SV_NSEC_PER_SEC)
#define S(x) ((int64_t)((x) * 1e9))	/* seconds (exact for the values used here) */

UNIT_TMPDIR("svinterval-test")

/* A host: its tick clock (MONOTONIC) and its conversion to TAI, which a step changes. */
struct host {
	int64_t mono;
	int64_t to_tai;		/* the host's TAI = mono + to_tai */
	int64_t noise;		/* added to each measurement (a noisy one) */
	unsigned measures;
};

static int host_measure(void *ctx, struct sv_clock_xlate *x)
{
	struct host *h = ctx;

	x->offset_ns = h->to_tai + ((h->measures++ & 1) ? h->noise : -h->noise);
	x->gap_ns = 100;
	x->measured_from_ns = h->mono;
	return 0;
}

static int64_t host_now(void *ctx)
{
	struct host *h = ctx;

	return h->mono + h->to_tai;
}

struct run {
	struct host host;
	struct sv_record_writer *w;
	struct sv_interval *a;
	char path[128];
};

/* A writer on the host's TAI and an accumulator of @nkeys keys (stream k % 2, Ts-T3, guest k / 2) starting at
 * the host's TAI @start. */
static void run_open(struct run *r, const char *name, int64_t to_tai, int64_t start, int64_t interval, int nkeys)
{
	struct sv_clock_sync sync = { .tai_offset_s = 37 };
	struct sv_record_writer_cfg wc = { .path = r->path, .tool = "svtest", .clock = SV_CLOCK_TAI,
					   .sync = &sync, .host = "h", .now = host_now, .now_ctx = &r->host };
	struct sv_interval_cfg ic = { .interval_ns = interval, .max_keys = 64, .tick_clock = CLOCK_MONOTONIC,
				      .tick_clock_id = SV_CLOCK_MONOTONIC, .measure = host_measure,
				      .measure_ctx = &r->host };

	memset(&r->host, 0, sizeof(r->host));
	r->host.to_tai = to_tai;
	r->host.mono = start - to_tai;
	snprintf(r->path, sizeof(r->path), "%s/%s", dir, name);
	assert_int_equal(sv_record_writer_open(&r->w, &wc), 0);
	for (unsigned s = 0; s < 2; s++) {
		struct sv_rec_stream st = { .stream = s, .asdus = 1, .sample_rate = 4000, .vlan = 0xFFFF,
					    .smp_synch = 2, .smp_wrap = 4000 };

		snprintf(st.svid, sizeof(st.svid), "MU%u", s);
		assert_int_equal(sv_record_define_stream(r->w, &st), 0);
	}
	ic.w = r->w;
	assert_int_equal(sv_interval_open(&r->a, &ic, r->host.mono), 0);
	for (int k = 0; k < nkeys; k++) {
		struct sv_interval_key key = { .stream = (uint32_t)(k % 2), .from_point = SV_POINT_TS,
					       .point = SV_POINT_T3, .guest = (uint16_t)(k / 2) };

		assert_int_equal(sv_interval_key_add(r->a, &key), k);
	}
}

/* Moves the host's clock to its TAI @t, ticking every 100 ms on the way. */
static void run_to(struct run *r, int64_t t)
{
	while (r->host.mono + r->host.to_tai < t) {
		int64_t step = t - (r->host.mono + r->host.to_tai);

		r->host.mono += step < 100 * SV_NSEC_PER_MSEC ? step : 100 * SV_NSEC_PER_MSEC;
		assert_int_equal(sv_interval_tick(r->a, r->host.mono), 0);
	}
}

static void frame(struct run *r, unsigned key, int64_t t_sample, int64_t latency)
{
	struct sv_interval_frame f = { .t_tai_ns = t_sample, .latency_ns = latency,
				       .tai_sec = (uint32_t)(t_sample / SV_NSEC_PER_SEC),
				       .smp_cnt = (uint16_t)(t_sample % SV_NSEC_PER_SEC / 250000), .samples = 1 };

	sv_interval_frame(r->a, key, &f);
}

static void run_close(struct run *r, struct sv_interval_stats *st)
{
	assert_int_equal(sv_interval_close(r->a, r->host.mono, st), 0);
	assert_int_equal(sv_record_writer_close(r->w), 0);
}

/* What a run wrote. */
#define MAXREC 4096
struct got {
	unsigned ni, nh, nc;
	struct sv_rec_interval iv[MAXREC];
	uint32_t iv_size[MAXREC];	/* from the offsets: 56 or 104 */
	struct sv_rec_hist hist[MAXREC];
	struct sv_stats *hdata;		/* MAXREC of them */
	struct sv_rec_clock clk[16];
};

static struct got *got_read(const char *path)
{
	struct got *g = calloc(1, sizeof(*g));
	struct sv_record_reader *r;
	struct sv_rec rec;
	uint64_t last_off = 0;
	int last_kind = 0, ret;

	assert_non_null(g);
	g->hdata = calloc(MAXREC, sizeof(*g->hdata));
	assert_non_null(g->hdata);
	assert_int_equal(sv_record_reader_open(&r, path), 0);
	while ((ret = sv_record_reader_next(r, &rec)) == 1) {
		if (last_kind == SV_REC_INTERVAL)
			g->iv_size[g->ni - 1] = (uint32_t)(rec.offset - last_off);
		last_kind = rec.kind;
		last_off = rec.offset;
		switch (rec.kind) {
		case SV_REC_INTERVAL:
			assert_true(g->ni < MAXREC);
			g->iv[g->ni++] = rec.u.interval;
			break;
		case SV_REC_HIST:
			assert_true(g->nh < MAXREC);
			assert_int_equal(sv_stats_deserialize(&g->hdata[g->nh], rec.hist_data, rec.u.hist.len), 0);
			g->hist[g->nh++] = rec.u.hist;
			break;
		case SV_REC_CLOCK:
			assert_true(g->nc < 16);
			g->clk[g->nc++] = rec.u.clock;
			break;
		default:
			break;
		}
	}
	assert_int_equal(ret, 0);
	assert_true(sv_record_reader_clean_end(r));
	sv_record_reader_close(r);
	return g;
}

static void got_free(struct got *g)
{
	free(g->hdata);
	free(g);
}

/* ---- alignment ------------------------------------------------------------------------------- */

struct align_case {
	int64_t interval, start, end;	/* ns from T0 */
	int64_t frames[8];		/* sample times from T0 (0 ends; the first may be 0 only as frames[0]) */
	unsigned nframes;
	struct {
		int64_t tai_sec;	/* from SEC0 */
		uint32_t frames;
		uint8_t flags;
	} want[6];
	unsigned nwant;
};

static const struct align_case align_cases[] = {
	/* 10 s intervals, a run from 3.5 s to 21 s: the boundary's last and first nanoseconds apart */
	{ S(10), S(3.5), S(21), { S(3.6), S(10) - 1, S(10), S(19.5) }, 4,
	  { { 0, 2, SV_REC_INTERVAL_F_FIRST | SV_REC_INTERVAL_F_WORST },
	    { 10, 2, SV_REC_INTERVAL_F_WORST },
	    { 20, 0, SV_REC_INTERVAL_F_LAST } }, 3 },
	/* 1 s intervals, a run on a boundary: no FIRST; a frame of the second before the start belongs to it */
	{ S(1), S(5), S(7.5), { S(4.9995), S(5.2), S(6) }, 3,
	  { { 4, 1, SV_REC_INTERVAL_F_FIRST | SV_REC_INTERVAL_F_WORST },
	    { 5, 1, SV_REC_INTERVAL_F_WORST },
	    { 6, 1, SV_REC_INTERVAL_F_WORST },
	    { 7, 0, SV_REC_INTERVAL_F_LAST } }, 4 },
	/* 60 s intervals on multiples of 60 s of TAI (SEC0 is one) */
	{ S(60), S(59), S(125), { S(59.5), S(60), S(119), S(121) }, 4,
	  { { 0, 1, SV_REC_INTERVAL_F_FIRST | SV_REC_INTERVAL_F_WORST },
	    { 60, 2, SV_REC_INTERVAL_F_WORST },
	    { 120, 1, SV_REC_INTERVAL_F_WORST | SV_REC_INTERVAL_F_LAST } }, 3 },
};

/* Two hosts whose tick clocks differ (boot times days apart) write the same intervals: TAI boundaries. */
static void test_alignment(void **state)
{
	static const int64_t offsets[] = { T0 - S(1000), T0 - S(123456.789) };

	(void)state;
	for (size_t c = 0; c < sizeof(align_cases) / sizeof(align_cases[0]); c++) {
		const struct align_case *ac = &align_cases[c];

		for (size_t o = 0; o < 2; o++) {
			struct run r;
			struct got *g;
			struct sv_interval_stats st;

			run_open(&r, "align.svrec", offsets[o], T0 + ac->start, ac->interval, 1);
			for (unsigned f = 0; f < ac->nframes; f++) {
				/* the frame is handled 100 us after its sample time */
				run_to(&r, T0 + ac->frames[f] + 100000);
				frame(&r, 0, T0 + ac->frames[f], 100000);
			}
			run_to(&r, T0 + ac->end);
			run_close(&r, &st);
			g = got_read(r.path);
			if (g->ni != ac->nwant)
				fail_msg("case %zu host %zu: %u intervals, want %u", c, o, g->ni, ac->nwant);
			for (unsigned i = 0; i < g->ni; i++) {
				assert_int_equal(g->iv[i].tai_sec, SEC0 + ac->want[i].tai_sec);
				assert_int_equal(g->iv[i].period_ms, ac->interval / SV_NSEC_PER_MSEC);
				assert_int_equal(g->iv[i].frames, ac->want[i].frames);
				if (g->iv[i].flags != ac->want[i].flags)
					fail_msg("case %zu host %zu interval %u: flags %#x, want %#x", c, o, i,
						 g->iv[i].flags, ac->want[i].flags);
				assert_int_equal(g->iv_size[i], SV_REC_INTERVAL_SHORT);
			}
			assert_int_equal(g->nc, 1); /* the initial CLOCK record, no step */
			assert_int_equal(g->clk[0].flags, SV_REC_CLOCK_F_INITIAL);
			assert_int_equal(g->clk[0].new_to_tai_ns, offsets[o]);
			assert_int_equal(st.strays, 0);
			got_free(g);
		}
	}
}

/* ---- clock steps ------------------------------------------------------------------------------ */

struct step_case {
	int64_t error;		/* the host's TAI before the step: true TAI + error (the step is -error) */
	int64_t noise;		/* measurement noise (below the threshold: no step) */
	bool strays;		/* frames counted in another interval are expected */
};

static const struct step_case step_cases[] = {
	{ -S(5), 0, false },	/* the host was 5 s behind: a step forward */
	{ S(5), 0, true },	/* 5 s ahead: intervals closed early, a step back */
	{ -S(0.002), 0, false },/* 2 ms behind */
	{ 0, 3000, false },	/* 3 us of noise: no step (threshold 10 us + gaps) */
};

/*
 * Frames at 100/s of two keys for 60 s of (true) TAI; the host's conversion is wrong by @error until a
 * re-measurement (every 10 s of the tick clock) finds it right at 25 s. Intervals stay on TAI boundaries:
 * each one is written once per key, every frame is counted once, the step is a CLOCK record, the intervals
 * open then carry STEP, and what was counted elsewhere is counted as strays.
 */
static void test_clock_step(void **state)
{
	(void)state;
	for (size_t c = 0; c < sizeof(step_cases) / sizeof(step_cases[0]); c++) {
		const struct step_case *sc = &step_cases[c];
		int64_t true_to_tai = T0 - S(1000);
		uint64_t frames = 0, strays = 0, step_flags = 0;
		struct sv_interval_stats st;
		struct run r;
		struct got *g;
		bool stepped = false;

		run_open(&r, "step.svrec", true_to_tai + sc->error, T0 + sc->error, S(10), 2);
		r.host.noise = sc->noise;
		for (int64_t t = T0; t < T0 + S(60); t += 10 * SV_NSEC_PER_MSEC) {
			/* the frame of sample time t is handled 200 us later: the host's clock then reads
			 * true + error until the step */
			int64_t mono = t + 200000 - true_to_tai;

			if (!stepped && t >= T0 + S(25)) {
				r.host.to_tai = true_to_tai; /* what the next measurement finds */
				stepped = true;
			}
			while (r.host.mono < mono) {
				r.host.mono = r.host.mono + S(0.1) < mono ? r.host.mono + S(0.1) : mono;
				assert_int_equal(sv_interval_tick(r.a, r.host.mono), 0);
			}
			frame(&r, 0, t, 50000);
			frame(&r, 1, t, 60000);
			frames += 2;
		}
		r.host.mono += S(3);
		run_close(&r, &st);
		g = got_read(r.path);
		for (unsigned i = 0; i < g->ni; i++) {
			frames -= g->iv[i].frames;
			strays += g->iv[i].strays;
			assert_int_equal(g->iv[i].tai_sec % 10, 0);
			assert_int_equal(!!(g->iv[i].flags & SV_REC_INTERVAL_F_STRAYS), g->iv[i].strays > 0);
			step_flags += !!(g->iv[i].flags & SV_REC_INTERVAL_F_STEP);
			for (unsigned j = 0; j < i; j++)
				if (g->iv[j].tai_sec == g->iv[i].tai_sec && g->iv[j].guest == g->iv[i].guest &&
				    g->iv[j].stream == g->iv[i].stream)
					fail_msg("case %zu: interval %u written twice", c, g->iv[i].tai_sec);
		}
		assert_int_equal(frames, 0); /* every frame once */
		assert_int_equal(strays, st.strays);
		if (sc->strays)
			assert_true(st.strays > 0);
		else
			assert_int_equal(st.strays, 0);
		if (sc->error) {
			assert_int_equal(g->nc, 2);
			assert_int_equal(g->clk[1].flags, SV_REC_CLOCK_F_STEP);
			assert_int_equal(g->clk[1].step_ns, -sc->error);
			assert_int_equal(g->clk[1].old_to_tai_ns, true_to_tai + sc->error);
			assert_int_equal(g->clk[1].new_to_tai_ns, true_to_tai);
			assert_int_equal(g->clk[1].clock, SV_CLOCK_MONOTONIC);
			/* found at the first measurement after 25 s (every 10 s of the tick clock) */
			assert_true(g->clk[1].t_ns >= T0 + S(25) - true_to_tai);
			assert_true(g->clk[1].t_ns <= T0 + S(35) - true_to_tai);
			assert_int_equal(st.steps, 1);
			assert_true(step_flags >= 2); /* both keys of the interval(s) open then */
			assert_int_equal(st.to_tai_ns, true_to_tai);
		} else {
			assert_int_equal(g->nc, 1);
			assert_int_equal(step_flags, 0);
			assert_int_equal(st.steps, 0);
		}
		got_free(g);
	}
}

/* ---- counters ---------------------------------------------------------------------------------- */

/* Every counter of two keys, drop reasons ranked, the short form for a key that lost nothing, a counter
 * past 32 bits held and flagged. */
static void test_counters_exact(void **state)
{
	static const struct {
		uint16_t reason;
		unsigned n;
	} drops[] = { { 7, 2 }, { SV_REASON_RING_OVERFLOW, 5 }, { 7, 1 }, { 9, 1 }, { 11, 1 }, { 13, 2 } };
	struct run r;
	struct got *g;
	int64_t t = T0 + S(2);
	struct sv_interval_frame f = { .t_tai_ns = t, .latency_ns = 40000, .tai_sec = SEC0 + 2, .samples = 2 };

	(void)state;
	run_open(&r, "counters.svrec", T0 - S(1000), T0, S(10), 3);
	for (int i = 0; i < 10; i++)
		sv_interval_frame(r.a, 0, &f);
	f.flags = SV_REC_F_LATE;
	sv_interval_frame(r.a, 0, &f);
	f.flags = SV_REC_F_DUPLICATE | SV_REC_F_REORDERED;
	f.n = 3;
	sv_interval_frame(r.a, 0, &f);
	sv_interval_count(r.a, 0, t, SV_INTERVAL_LOST, 40);
	sv_interval_count(r.a, 0, t, SV_INTERVAL_MISSING, 2);
	sv_interval_count(r.a, 0, t, SV_INTERVAL_OUTLIERS, 4);
	sv_interval_count(r.a, 0, t, SV_INTERVAL_ERRORS, 5);
	sv_interval_count(r.a, 0, t, SV_INTERVAL_RESTARTS, 1);
	sv_interval_count(r.a, 0, t, SV_INTERVAL_CHANGES, 2);
	sv_interval_count(r.a, 0, t, SV_INTERVAL_LATE, 1);
	sv_interval_count(r.a, 0, t, SV_INTERVAL_COUNTERS, 1); /* not a counter: refused, counted */
	for (size_t i = 0; i < sizeof(drops) / sizeof(drops[0]); i++)
		sv_interval_drop(r.a, 0, t, drops[i].reason, drops[i].n);
	/* key 1: frames only, so the short form */
	f = (struct sv_interval_frame){ .t_tai_ns = t, .latency_ns = SV_INTERVAL_NO_LATENCY, .samples = 1 };
	sv_interval_frame(r.a, 1, &f);
	/* key 2: more frames than 32 bits hold */
	f.n = UINT32_MAX;
	sv_interval_frame(r.a, 2, &f);
	f.n = 10;
	sv_interval_frame(r.a, 2, &f);
	sv_interval_frame(r.a, 3, &f); /* no such key */
	run_to(&r, T0 + S(12));
	{
		struct sv_interval_stats st;

		sv_interval_get_stats(r.a, &st);
		assert_int_equal(st.bad_keys, 2);
		assert_int_equal(st.intervals, 1);
		assert_int_equal(st.records, 3);
	}
	run_close(&r, NULL);
	g = got_read(r.path);
	assert_int_equal(g->ni, 6); /* [0, 10) and [10, 20): three keys each */
	{
		const struct sv_rec_interval *a = &g->iv[0], *b = &g->iv[1], *c = &g->iv[2];

		assert_int_equal(a->frames, 14);
		assert_int_equal(a->samples, 28);
		assert_int_equal(a->count, 14);
		assert_int_equal(a->late, 2);
		assert_int_equal(a->duplicate, 3);
		assert_int_equal(a->reordered, 3);
		assert_int_equal(a->lost, 40);
		assert_int_equal(a->missing, 2);
		assert_int_equal(a->outliers, 4);
		assert_int_equal(a->errors, 5);
		assert_int_equal(a->restarts, 1);
		assert_int_equal(a->changes, 2);
		assert_int_equal(a->dropped, 12);
		/* the first four distinct reasons are ranked (7: 3, overflow: 5, 9: 1, 11: 1), 13 only in dropped */
		assert_int_equal(a->drop_reason[0], SV_REASON_RING_OVERFLOW);
		assert_int_equal(a->drop_count[0], 5);
		assert_int_equal(a->drop_reason[1], 7);
		assert_int_equal(a->drop_count[1], 3);
		assert_int_equal(g->iv_size[0], sizeof(*a));
		assert_int_equal(b->frames, 1);
		assert_int_equal(b->count, 0);
		assert_false(b->flags & SV_REC_INTERVAL_F_WORST);
		assert_int_equal(g->iv_size[1], SV_REC_INTERVAL_SHORT);
		assert_int_equal(c->frames, UINT32_MAX);
		assert_true(c->flags & SV_REC_INTERVAL_F_SATURATED);
		assert_false(a->flags & SV_REC_INTERVAL_F_SATURATED);
		for (unsigned i = 3; i < 6; i++) {
			assert_int_equal(g->iv[i].tai_sec, SEC0 + 10);
			assert_int_equal(g->iv[i].frames, 0);
		}
	}
	got_free(g);
}

/* The worst frame: the largest latency, the first of ties, its why-late flag; frames without a latency are
 * never the worst. The (hop, guest) histogram holds the interval's latencies of its keys. */
static void test_worst_frame(void **state)
{
	static const struct {
		unsigned key;
		int64_t at, latency;	/* ms from T0, ns */
		bool why;
	} in[] = {
		{ 0, 1000, 10000, false }, { 0, 2000, 300000, true }, { 0, 3000, 300000, false },
		{ 0, 4000, SV_INTERVAL_NO_LATENCY, false }, { 0, 5000, 250000, true }, { 1, 1500, 700000, false },
		{ 2, 1500, 900000, true },
	};
	struct run r;
	struct got *g;

	(void)state;
	run_open(&r, "worst.svrec", T0 - S(1000), T0, S(10), 3);
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		int64_t t = T0 + in[i].at * SV_NSEC_PER_MSEC;
		struct sv_interval_frame f = { .t_tai_ns = t, .latency_ns = in[i].latency,
					       .tai_sec = (uint32_t)(t / SV_NSEC_PER_SEC),
					       .smp_cnt = (uint16_t)(in[i].at % 1000 * 4), .samples = 1, .why = in[i].why };

		sv_interval_frame(r.a, in[i].key, &f);
	}
	run_to(&r, T0 + S(11.5));
	run_close(&r, NULL);
	g = got_read(r.path);
	assert_int_equal(g->iv[0].worst_ns, 300000);
	assert_int_equal(g->iv[0].worst_tai_sec, SEC0 + 2);
	assert_int_equal(g->iv[0].worst_smp_cnt, 0);
	assert_int_equal(g->iv[0].count, 4);
	assert_int_equal(g->iv[0].frames, 5);
	assert_true(g->iv[0].flags & SV_REC_INTERVAL_F_WHY);
	assert_int_equal(g->iv[1].worst_ns, 700000);
	assert_false(g->iv[1].flags & SV_REC_INTERVAL_F_WHY);
	assert_true(g->iv[2].flags & SV_REC_INTERVAL_F_WHY);
	/* keys 0 and 1 share (Ts-T3, guest 0): one HIST of 5 latencies; key 2 (guest 1) its own */
	assert_int_equal(g->hist[0].stream, SV_REC_STREAM_NONE);
	assert_int_equal(g->hist[0].guest, 0);
	assert_int_equal(g->hist[0].tai_sec, SEC0);
	assert_int_equal(g->hist[0].period_ms, 10000);
	assert_int_equal(g->hdata[0].count, 5);
	assert_int_equal(g->hdata[0].max, 700000);
	assert_int_equal(g->hdata[0].min, 10000);
	assert_int_equal(g->hist[1].guest, 1);
	assert_int_equal(g->hdata[1].count, 1);
	got_free(g);
}

/* Each key's histogram of the whole run, at close: every interval's latencies, the run's span. */
static void test_run_histograms(void **state)
{
	struct run r;
	struct got *g;
	unsigned run_hists = 0;

	(void)state;
	run_open(&r, "run.svrec", T0 - S(1000), T0 + S(5), S(10), 2);
	for (int64_t t = T0 + S(5); t < T0 + S(45); t += S(0.5)) {
		run_to(&r, t + 100000);
		frame(&r, 0, t, 20000 + (t / SV_NSEC_PER_MSEC) % 1000);
		frame(&r, 1, t, 80000);
	}
	run_to(&r, T0 + S(47));
	run_close(&r, NULL);
	g = got_read(r.path);
	for (unsigned i = 0; i < g->nh; i++) {
		if (g->hist[i].stream == SV_REC_STREAM_NONE) {
			assert_int_equal(g->hist[i].period_ms, 10000);
			continue;
		}
		/* whole run: from its first second (5) for 42 s */
		assert_int_equal(g->hist[i].tai_sec, SEC0 + 5);
		assert_int_equal(g->hist[i].period_ms, 42000);
		assert_int_equal(g->hdata[i].count, 80);
		if (g->hist[i].stream == 1)
			assert_int_equal(g->hdata[i].min, 80000);
		run_hists++;
	}
	assert_int_equal(run_hists, 2);
	assert_int_equal(g->ni, 2 * 5); /* [0,10) .. [40,50) */
	got_free(g);
}

/* Intervals in which nothing happened are written (zero counts), so a silent stream shows as one. */
static void test_empty_intervals(void **state)
{
	struct run r;
	struct got *g;

	(void)state;
	run_open(&r, "empty.svrec", T0 - S(77), T0, S(10), 4);
	run_to(&r, T0 + S(35));
	run_close(&r, NULL);
	g = got_read(r.path);
	assert_int_equal(g->ni, 4 * 4);
	for (unsigned i = 0; i < g->ni; i++) {
		assert_int_equal(g->iv[i].tai_sec, SEC0 + 10 * (i / 4));
		assert_int_equal(g->iv[i].frames, 0);
		if (i + 1 < g->ni) /* the last one's next record (END) is in a block of its own */
			assert_int_equal(g->iv_size[i], SV_REC_INTERVAL_SHORT);
		assert_int_equal(g->iv[i].flags, i >= 12 ? SV_REC_INTERVAL_F_LAST : 0);
	}
	assert_int_equal(g->nh, 0);
	got_free(g);
}

/* An entry of an interval already written, or beyond the next one, is counted in the current one (a
 * stray), never lost and never a second record of the old interval. */
static void test_strays(void **state)
{
	struct run r;
	struct got *g;
	struct sv_interval_stats st;

	(void)state;
	run_open(&r, "strays.svrec", T0 - S(1000), T0, S(10), 1);
	frame(&r, 0, T0 + S(1), 1000);
	run_to(&r, T0 + S(25));
	frame(&r, 0, T0 + S(5), 1000);	/* [0, 10) was written at 11 s */
	frame(&r, 0, T0 + S(55), 1000);	/* four intervals ahead */
	sv_interval_count(r.a, 0, T0 + S(9), SV_INTERVAL_LOST, 3);
	frame(&r, 0, T0 + S(29), 1000);	/* its own */
	run_to(&r, T0 + S(31.5));
	run_close(&r, &st);
	g = got_read(r.path);
	assert_int_equal(g->ni, 4);
	assert_int_equal(g->iv[0].frames, 1);
	assert_int_equal(g->iv[0].strays, 0);
	assert_int_equal(g->iv[2].tai_sec, SEC0 + 20);
	assert_int_equal(g->iv[2].frames, 3);
	assert_int_equal(g->iv[2].lost, 3);
	assert_int_equal(g->iv[2].strays, 3);
	assert_true(g->iv[2].flags & SV_REC_INTERVAL_F_STRAYS);
	assert_int_equal(st.strays, 3);
	got_free(g);
}

/* The key table: the same key twice is one, a full table and bad points are refused; bad configurations. */
static void test_keys_and_config(void **state)
{
	struct sv_clock_sync sync = { .tai_offset_s = 37 };
	char path[128];
	struct sv_record_writer_cfg wc = { .path = path, .tool = "t", .clock = SV_CLOCK_TAI, .sync = &sync,
					   .host = "h" };
	struct host h = { .to_tai = T0 };
	struct sv_interval_cfg ic = { .max_keys = 2, .tick_clock = CLOCK_MONOTONIC,
				      .tick_clock_id = SV_CLOCK_MONOTONIC, .measure = host_measure, .measure_ctx = &h };
	struct sv_interval_key k = { .stream = 0, .from_point = SV_POINT_NONE, .point = SV_POINT_T1,
				     .guest = SV_REC_GUEST_NONE };
	struct sv_record_writer *w;
	struct sv_interval *a;

	(void)state;
	snprintf(path, sizeof(path), "%s/keys.svrec", dir);
	assert_int_equal(sv_record_writer_open(&w, &wc), 0);
	ic.w = w;
	assert_int_equal(sv_interval_open(&a, &ic, 0), 0);
	assert_int_equal(sv_interval_key_add(a, &k), 0);
	assert_int_equal(sv_interval_key_add(a, &k), 0);
	k.guest = 1;
	assert_int_equal(sv_interval_key_add(a, &k), 1);
	k.guest = 2;
	assert_int_equal(sv_interval_key_add(a, &k), -ENOSPC);
	k.point = SV_POINT_COUNT;
	assert_int_equal(sv_interval_key_add(a, &k), -EINVAL);
	k.point = SV_POINT_T2A;
	k.from_point = 9;
	assert_int_equal(sv_interval_key_add(a, &k), -EINVAL);
	assert_int_equal(sv_interval_close(a, 0, NULL), 0);
	ic.interval_ns = S(1.5);
	assert_int_equal(sv_interval_open(&a, &ic, 0), -EINVAL); /* not whole seconds */
	ic.interval_ns = S(7200);
	assert_int_equal(sv_interval_open(&a, &ic, 0), -EINVAL);
	ic.interval_ns = S(1);
	ic.grace_ns = S(2);
	assert_int_equal(sv_interval_open(&a, &ic, 0), -EINVAL); /* grace over the interval */
	ic.grace_ns = 0;
	ic.max_keys = 0;
	assert_int_equal(sv_interval_open(&a, &ic, 0), -EINVAL);
	ic.max_keys = 1;
	ic.w = NULL;
	assert_int_equal(sv_interval_open(&a, &ic, 0), -EINVAL);
	assert_int_equal(sv_interval_close(NULL, 0, NULL), 0);
	assert_int_equal(sv_record_writer_close(w), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alignment),	cmocka_unit_test(test_clock_step),
		cmocka_unit_test(test_counters_exact),	cmocka_unit_test(test_worst_frame),
		cmocka_unit_test(test_run_histograms),	cmocka_unit_test(test_empty_intervals),
		cmocka_unit_test(test_strays),		cmocka_unit_test(test_keys_and_config),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

// SPDX-License-Identifier: Apache-2.0
/*
 * sv_flight (soak mode's flight recorder) on a simulated clock, with svtrace-like records (per frame of each of
 * two streams: T1 without a guest, T2a and T2b for guests 1 and 2; 4000 frames/s): a window holds its key's
 * records of the N seconds before and after its trigger, in time order, once each; overlapping triggers merge
 * up to the length cap; the budget is per class (one class's noise does not spend another's, a merged window
 * costs its length, an hour's spacing does not refill a slower budget); the daily cap; a ring too small or
 * walked too slowly is said (SHORT, LOST); the run's end (TRUNCATED, the SUMMARY of refusals).
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

#include "sv_flight.h"
#include "sv_record.h"
#include "unit_tmpdir.h"

#define SEC0 1800000000LL
#define T0 (SEC0 * SV_NSEC_PER_SEC)
#define MS SV_NSEC_PER_MSEC
#define SEC SV_NSEC_PER_SEC
#define HOUR (3600 * SEC)
#define PERIOD 250000		/* 4000 frames/s */
#define EVENTS_PER_S 40000	/* 2 streams x (T1 + 2 x (T2a, T2b)) */

UNIT_TMPDIR("svflight-test")

struct run {
	struct sv_record_writer *w;
	struct sv_flight *f;
	int64_t t;		/* the next frame's time (TAI, the file's clock) */
	int64_t tick_every;
	int64_t next_tick;
	char path[128];
};

static int64_t run_now(void *ctx)
{
	return ((struct run *)ctx)->t;
}

static void run_open(struct run *r, struct sv_flight_cfg *fc)
{
	struct sv_clock_sync sync = { .tai_offset_s = 37 };
	struct sv_record_writer_cfg wc = { .path = r->path, .tool = "svtest", .clock = SV_CLOCK_TAI,
					   .sync = &sync, .host = "h", .now = run_now, .now_ctx = r };

	r->t = T0;
	r->next_tick = T0;
	if (!r->tick_every)
		r->tick_every = 10 * MS;
	snprintf(r->path, sizeof(r->path), "%s/flight.svrec", dir);
	assert_int_equal(sv_record_writer_open(&r->w, &wc), 0);
	for (unsigned s = 0; s < 2; s++) {
		struct sv_rec_stream st = { .stream = s, .asdus = 1, .sample_rate = 4000, .vlan = 0xFFFF,
					    .smp_synch = 2, .smp_wrap = 4000 };

		snprintf(st.svid, sizeof(st.svid), "MU%u", s);
		assert_int_equal(sv_record_define_stream(r->w, &st), 0);
	}
	fc->w = r->w;
	if (!fc->events_per_s)
		fc->events_per_s = EVENTS_PER_S;
	assert_int_equal(sv_flight_open(&r->f, fc), 0);
}

/* Frames (and ticks) up to @until. seq numbers the records in push order. */
static void run_to(struct run *r, int64_t until)
{
	static uint32_t seq;

	for (; r->t < until; r->t += PERIOD) {
		for (unsigned s = 0; s < 2; s++) {
			struct sv_rec_event ev = { .point = SV_POINT_T1, .stream = s, .t_ns = r->t + 40000,
						   .tai_sec = (uint32_t)(r->t / SEC),
						   .smp_cnt = (uint16_t)(r->t % SEC / PERIOD), .ts_src = SV_TS_BPF,
						   .guest = SV_REC_GUEST_NONE, .seq = ++seq };

			sv_flight_push(r->f, &ev);
			for (uint16_t g = 1; g <= 2; g++) {
				ev.guest = g;
				ev.point = SV_POINT_T2A;
				ev.t_ns = r->t + 50000;
				ev.seq = ++seq;
				sv_flight_push(r->f, &ev);
				ev.point = SV_POINT_T2B;
				ev.t_ns = r->t + 70000;
				ev.seq = ++seq;
				sv_flight_push(r->f, &ev);
			}
		}
		if (r->t >= r->next_tick) {
			assert_int_equal(sv_flight_tick(r->f, r->t), 0);
			r->next_tick += r->tick_every;
		}
	}
}

static int trig(struct run *r, uint8_t cls, uint32_t stream, uint16_t guest, int64_t at)
{
	struct sv_flight_trigger t = { .cls = cls, .point = SV_POINT_T2B, .guest = guest, .stream = stream,
				       .t_ns = at, .tai_sec = (uint32_t)(at / SEC), .value = 1500000 };

	return sv_flight_trigger(r->f, &t);
}

static void run_close(struct run *r, struct sv_flight_stats *st)
{
	assert_int_equal(sv_flight_close(r->f, r->t, st), 0);
	assert_int_equal(sv_record_writer_close(r->w), 0);
}

#define MAXWIN 64
struct got {
	unsigned nw, ne;
	struct sv_rec_window win[MAXWIN];
	struct sv_rec_event *ev;	/* every EVENT, in file order */
	unsigned ev_win[1 << 20];	/* the window (index) each EVENT preceded */
};

static struct got *got_read(const char *path)
{
	struct got *g = calloc(1, sizeof(*g));
	struct sv_record_reader *r;
	struct sv_rec rec;
	int ret;

	assert_non_null(g);
	g->ev = calloc(1 << 20, sizeof(*g->ev));
	assert_non_null(g->ev);
	assert_int_equal(sv_record_reader_open(&r, path), 0);
	while ((ret = sv_record_reader_next(r, &rec)) == 1) {
		if (rec.kind == SV_REC_EVENT) {
			assert_true(g->ne < (1u << 20));
			g->ev_win[g->ne] = g->nw;
			g->ev[g->ne++] = rec.u.event;
		} else if (rec.kind == SV_REC_WINDOW) {
			assert_true(g->nw < MAXWIN);
			g->win[g->nw++] = rec.u.window;
		}
	}
	assert_int_equal(ret, 0);
	assert_true(sv_record_reader_clean_end(r));
	sv_record_reader_close(r);
	return g;
}

static void got_free(struct got *g)
{
	free(g->ev);
	free(g);
}

/* Records of @win in the file: its key's, within its span. */
static bool in_window(const struct sv_rec_window *w, const struct sv_rec_event *e)
{
	return e->stream == w->stream &&
	       (w->guest == SV_REC_GUEST_NONE || e->guest == SV_REC_GUEST_NONE || e->guest == w->guest) &&
	       e->t_ns >= w->t_start_ns && e->t_ns <= w->t_end_ns;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Every EVENT belongs to a window (windows sharing records, of a stream's guest-less point or of spans that
 * meet, write each once), none is written twice, and the windows' counts add up to the file's. */
static void check_events(const struct got *g)
{
	uint32_t *seq = malloc((g->ne + 1) * sizeof(*seq));
	uint64_t records = 0;

	assert_non_null(seq);
	for (unsigned i = 0; i < g->ne; i++) {
		bool any = false;

		for (unsigned k = 0; k < g->nw; k++)
			any |= !(g->win[k].flags & SV_REC_WINDOW_F_SUMMARY) && in_window(&g->win[k], &g->ev[i]);
		if (!any)
			fail_msg("event %u (stream %u guest %u) in no window", i, g->ev[i].stream, g->ev[i].guest);
		seq[i] = g->ev[i].seq;
	}
	qsort(seq, g->ne, sizeof(*seq), cmp_u32);
	for (unsigned i = 1; i < g->ne; i++)
		if (seq[i] == seq[i - 1])
			fail_msg("event seq %u written twice", seq[i]);
	for (unsigned k = 0; k < g->nw; k++)
		records += g->win[k].records;
	assert_int_equal(records, g->ne);
	free(seq);
}

/* One trigger: the window holds stream 1's records of guest 2 and the guest-less T1, 2 s before and after,
 * in time order, each once: 4 s x 4000 frames x 3 records. */
static void test_window_holds_key(void **state)
{
	struct sv_flight_cfg fc = { .key_events_per_s = 12000 };
	struct sv_flight_stats st;
	struct run r = { 0 };
	struct got *g;
	const int64_t at = T0 + 3 * SEC + 70000;
	unsigned want = 0;

	(void)state;
	run_open(&r, &fc);
	run_to(&r, T0 + 3 * SEC + PERIOD);
	assert_int_equal(trig(&r, SV_WINDOW_LATENCY, 1, 2, at), 1);
	run_to(&r, T0 + 6 * SEC);
	run_close(&r, &st);
	g = got_read(r.path);
	assert_int_equal(g->nw, 1);
	assert_int_equal(g->win[0].stream, 1);
	assert_int_equal(g->win[0].guest, 2);
	assert_int_equal(g->win[0].cls, SV_WINDOW_LATENCY);
	assert_int_equal(g->win[0].classes, 1u << SV_WINDOW_LATENCY);
	assert_int_equal(g->win[0].t_trigger_ns, at);
	assert_int_equal(g->win[0].t_start_ns, at - 2 * SEC);
	assert_int_equal(g->win[0].t_end_ns, at + 2 * SEC);
	assert_int_equal(g->win[0].flags, 0);
	assert_int_equal(g->win[0].triggers, 1);
	assert_int_equal(g->win[0].id, 1);
	assert_int_equal(g->win[0].value, 1500000);
	for (int64_t t = T0; t < T0 + 6 * SEC; t += PERIOD)
		for (int64_t d = 40000; d <= 70000; d += d == 40000 ? 10000 : 20000) /* T1, T2a, T2b */
			want += t + d >= at - 2 * SEC && t + d <= at + 2 * SEC;
	assert_int_equal(want, 48001);
	assert_int_equal(g->win[0].records, want);
	assert_int_equal(g->ne, want);
	for (unsigned i = 0; i < g->ne; i++) {
		assert_true(in_window(&g->win[0], &g->ev[i]));
		assert_true(g->ev[i].guest == 2 || g->ev[i].guest == SV_REC_GUEST_NONE);
		if (i)
			assert_true(g->ev[i].t_ns >= g->ev[i - 1].t_ns);
	}
	check_events(g);
	assert_int_equal(st.windows, 1);
	assert_int_equal(st.records, want);
	assert_int_equal(st.lost, 0);
	assert_int_equal(st.ring, EVENTS_PER_S * 5 / 2);
	got_free(g);
}

/* ---- merging ----------------------------------------------------------------------------------- */

struct merge_case {
	const char *what;
	struct {
		int64_t at;		/* ms from 3 s */
		uint8_t cls;
		uint32_t stream;
		uint16_t guest;
		int ret;
	} t[12];
	unsigned nt;
	struct {
		uint32_t stream;
		uint16_t guest;
		int64_t start, end;	/* ms from 3 s */
		uint16_t triggers;
		uint8_t classes;
		uint32_t flags;
	} w[4];
	unsigned nw;
};

#define L SV_WINDOW_LATENCY
#define LO SV_WINDOW_LOSS
#define BIT(c) (1u << (c))
#define NONE SV_REC_GUEST_NONE
static const struct merge_case merge_cases[] = {
	{ "same key 1 s later: one window, longer", { { 0, L, 0, 1, 1 }, { 1000, LO, 0, 1, 0 } }, 2,
	  { { 0, 1, -2000, 3000, 2, BIT(L) | BIT(LO), 0 } }, 1 },
	{ "overlapping by 100 ms: merged", { { 0, L, 0, 1, 1 }, { 3900, L, 0, 1, 0 } }, 2,
	  { { 0, 1, -2000, 5900, 2, BIT(L), 0 } }, 1 },
	{ "apart: two windows", { { 0, L, 0, 1, 1 }, { 4500, L, 0, 1, 1 } }, 2,
	  { { 0, 1, -2000, 2000, 1, BIT(L), 0 }, { 0, 1, 2500, 6500, 1, BIT(L), 0 } }, 2 },
	{ "a trigger a second: cut at the cap (2 x 4 s)",
	  { { 0, L, 0, 1, 1 }, { 1000, L, 0, 1, 0 }, { 2000, L, 0, 1, 0 }, { 3000, L, 0, 1, 0 },
	    { 4000, L, 0, 1, 0 }, { 5000, L, 0, 1, 0 }, { 5500, L, 0, 1, 0 } }, 7,
	  { { 0, 1, -2000, 6000, 7, BIT(L), SV_REC_WINDOW_F_CUT } }, 1 },
	{ "another guest: its own window",
	  { { 0, L, 0, 1, 1 }, { 500, L, 0, 2, 1 } }, 2,
	  { { 0, 1, -2000, 2000, 1, BIT(L), 0 }, { 0, 2, -1500, 2500, 1, BIT(L), 0 } }, 2 },
	{ "another stream: its own window",
	  { { 0, L, 0, 1, 1 }, { 500, L, 1, 1, 1 } }, 2,
	  { { 0, 1, -2000, 2000, 1, BIT(L), 0 }, { 1, 1, -1500, 2500, 1, BIT(L), 0 } }, 2 },
	{ "every guest's window takes a guest's trigger",
	  { { 0, LO, 0, NONE, 1 }, { 1000, L, 0, 2, 0 } }, 2,
	  { { 0, NONE, -2000, 3000, 2, BIT(L) | BIT(LO), 0 } }, 1 },
	{ "a guest's window does not take an every-guest trigger",
	  { { 0, L, 0, 1, 1 }, { 1000, LO, 0, NONE, 1 } }, 2,
	  { { 0, 1, -2000, 2000, 1, BIT(L), 0 }, { 0, NONE, -1000, 3000, 1, BIT(LO), 0 } }, 2 },
};

static void test_merge(void **state)
{
	(void)state;
	for (size_t c = 0; c < sizeof(merge_cases) / sizeof(merge_cases[0]); c++) {
		const struct merge_case *mc = &merge_cases[c];
		struct sv_flight_cfg fc = { .budget_mwph = { 100000, 100000, 100000, 100000, 100000 } };
		const int64_t base = T0 + 3 * SEC;
		struct run r = { 0 };
		struct got *g;

		run_open(&r, &fc);
		for (unsigned i = 0; i < mc->nt; i++) {
			int64_t at = base + mc->t[i].at * MS;
			int ret;

			run_to(&r, at);
			ret = trig(&r, mc->t[i].cls, mc->t[i].stream, mc->t[i].guest, at);
			if (ret != mc->t[i].ret)
				fail_msg("%s: trigger %u returned %d, want %d", mc->what, i, ret, mc->t[i].ret);
		}
		run_to(&r, base + 12 * SEC);
		run_close(&r, NULL);
		g = got_read(r.path);
		if (g->nw != mc->nw)
			fail_msg("%s: %u windows, want %u", mc->what, g->nw, mc->nw);
		for (unsigned k = 0; k < g->nw; k++) {
			const struct sv_rec_window *w = &g->win[k];
			unsigned j;

			/* windows end in their end's order, not necessarily the cases' */
			for (j = 0; j < mc->nw; j++)
				if (mc->w[j].stream == w->stream && mc->w[j].guest == w->guest &&
				    base + mc->w[j].start * MS == w->t_start_ns)
					break;
			if (j == mc->nw)
				fail_msg("%s: unexpected window %u (stream %u guest %u start %lld)", mc->what, k,
					 w->stream, w->guest, (long long)((w->t_start_ns - base) / MS));
			assert_int_equal(w->t_end_ns, base + mc->w[j].end * MS);
			assert_int_equal(w->triggers, mc->w[j].triggers);
			assert_int_equal(w->classes, mc->w[j].classes);
			assert_int_equal(w->flags, mc->w[j].flags);
			assert_true(w->records > 0);
		}
		check_events(g);
		got_free(g);
	}
}

/* ---- budgets ------------------------------------------------------------------------------------ */

/* One window an hour per class: background noise (a late frame every 10 s) keeps one and counts the rest;
 * a loss 30 minutes in still gets its own window; an hour later, a late frame gets one again. The windows
 * carry the counts so far; the refusals after the last window reach the file in a SUMMARY record. */
static void test_budget_per_class(void **state)
{
	struct sv_flight_cfg fc = { .budget_mwph = { 1000, 1000, 1000, 1000, 1000 }, .ring_max = 2048 };
	struct sv_flight_stats st;
	struct run r = { 0 };
	struct got *g;
	unsigned kept = 0, refused = 0;

	(void)state;
	run_open(&r, &fc);
	/* no frames over the hour (the ring is not the point here): ticks only */
	for (int64_t t = T0 + 10 * SEC; t < T0 + 90 * 60 * SEC; t += 10 * SEC) {
		int ret = trig(&r, L, (uint32_t)(t / SEC % 2), (uint16_t)(1 + t / SEC / 2 % 2), t);

		kept += ret == 1;
		refused += ret == -ENOBUFS;
		if (t == T0 + 30 * 60 * SEC)
			assert_int_equal(trig(&r, LO, 0, 1, t + SEC), 1);
		r.t = t;
		sv_flight_tick(r.f, t + 5 * SEC);
	}
	/* kept at 10 s and at 1 h 10 s (refilled) */
	assert_int_equal(kept, 2);
	sv_flight_get_stats(r.f, &st);
	assert_int_equal(st.dropped[L], refused);
	assert_int_equal(st.dropped[LO], 0);
	assert_int_equal(trig(&r, L, 0, 1, T0 + 90 * 60 * SEC + SEC), -ENOBUFS);
	r.t = T0 + 90 * 60 * SEC + 20 * SEC;
	run_close(&r, &st);
	assert_int_equal(st.windows, 3);
	assert_int_equal(st.dropped[L], refused + 1);
	g = got_read(r.path);
	assert_int_equal(g->nw, 4);
	assert_int_equal(g->win[0].cls, L);
	assert_int_equal(g->win[0].dropped[L], 0);
	assert_int_equal(g->win[1].cls, LO);
	/* written at the tick after its end + pre (1815 s): the late frames of 20 s .. 1810 s refused */
	assert_int_equal(g->win[1].dropped[L], 180);
	assert_int_equal(g->win[2].cls, L);
	assert_int_equal(g->win[2].id, 3);
	assert_true(g->win[3].flags & SV_REC_WINDOW_F_SUMMARY);
	assert_int_equal(g->win[3].cls, SV_WINDOW_CLASS_NONE);
	assert_int_equal(g->win[3].id, 0);
	assert_int_equal(g->win[3].dropped[L], refused + 1);
	assert_int_equal(g->win[3].dropped[LO], 0);
	got_free(g);
}

struct slow_case {
	uint32_t budget;	/* thousandths of a window an hour */
	int64_t every;		/* a trigger of one class this often */
	int64_t span;		/* for this long */
	unsigned kept;
};

/* A budget under one an hour: triggers exactly an hour apart do not refill it to a whole window each time
 * (the bucket holds one window, it gains budget/1000 an hour). */
static void test_budget_slow(void **state)
{
	static const struct slow_case cases[] = {
		{ 250, HOUR, 8 * HOUR, 3 },	/* at 0, 4 h, 8 h */
		{ 250, 15 * 60 * SEC, 8 * HOUR, 3 },
		{ 66, HOUR, 24 * HOUR, 2 },	/* at 0 and ~15.2 h */
		{ 2000, 15 * 60 * SEC, 4 * HOUR, 10 }, /* two an hour, two deep: 0, 0.25, 0.5 h, then each 0.5 h */
	};

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct sv_flight_cfg fc = { .ring_max = 2048 };
		struct run r = { 0 };
		unsigned kept = 0;

		for (unsigned k = 0; k < SV_WINDOW_CLASSES; k++)
			fc.budget_mwph[k] = cases[c].budget;
		run_open(&r, &fc);
		for (int64_t t = T0; t <= T0 + cases[c].span; t += cases[c].every) {
			kept += trig(&r, LO, 0, 1, t) == 1;
			sv_flight_tick(r.f, t + 10 * SEC);
		}
		if (kept != cases[c].kept)
			fail_msg("case %zu: %u windows kept, want %u", c, kept, cases[c].kept);
		r.t = T0 + cases[c].span + 20 * SEC;
		run_close(&r, NULL);
	}
}

/* A window merged to twice the base length costs two: the next one of its class waits two hours. */
static void test_budget_charges_length(void **state)
{
	struct sv_flight_cfg fc = { .budget_mwph = { 1000, 1000, 1000, 1000, 1000 } };
	struct run r = { 0 };

	(void)state;
	run_open(&r, &fc);
	run_to(&r, T0 + 3 * SEC);
	for (int i = 0; i <= 6; i++) {
		run_to(&r, T0 + (3 + i) * SEC);
		assert_int_equal(trig(&r, L, 0, 1, r.t), i ? 0 : 1);
	}
	run_to(&r, T0 + 12 * SEC); /* the window ends: 8 s, two windows' worth */
	r.t = T0 + 90 * 60 * SEC;
	assert_int_equal(trig(&r, L, 0, 1, r.t), -ENOBUFS);	/* 1.5 h: half a window back */
	r.t = T0 + 125 * 60 * SEC;
	assert_int_equal(trig(&r, L, 0, 1, r.t), 1);		/* > 2 h */
	assert_int_equal(trig(&r, LO, 1, 1, r.t), 1);		/* another class: untouched */
	run_close(&r, NULL);
}

/* No window starts while the record's last day plus one window would pass the daily cap. */
static void test_daily_cap(void **state)
{
	/* a window: 12000 records/s x 4 s x 64 octets = 3 MB; the cap lets the first one through only */
	struct sv_flight_cfg fc = { .budget_mwph = { 100000, 100000, 100000, 100000, 100000 },
				    .key_events_per_s = 12000, .day_cap = 5000000 };
	struct sv_flight_stats st;
	struct run r = { 0 };

	(void)state;
	run_open(&r, &fc);
	run_to(&r, T0 + 3 * SEC);
	assert_int_equal(trig(&r, L, 0, 1, r.t), 1);
	run_to(&r, T0 + 8 * SEC);
	sv_record_flush(r.w);
	assert_int_equal(trig(&r, LO, 1, 2, r.t), -ENOBUFS);
	sv_flight_get_stats(r.f, &st);
	assert_int_equal(st.capped, 1);
	assert_int_equal(st.dropped[LO], 1);
	assert_int_equal(st.window_bytes, 12000u * 4 * 64 + sizeof(struct sv_rec_window));
	run_close(&r, NULL);
}

/* A ring shorter than N: the window says so (SHORT, from the oldest record it had). A walk that falls behind
 * the ring (ticks too rare for its scan): the records overwritten first are counted (LOST). */
static void test_ring_short_and_lost(void **state)
{
	struct sv_flight_cfg fc = { .ring_max = 4096, .scan_per_tick = 1024 };
	struct sv_flight_stats st;
	struct run r = { .tick_every = 500 * MS };
	struct got *g;

	(void)state;
	run_open(&r, &fc);
	run_to(&r, T0 + 3 * SEC);
	assert_int_equal(trig(&r, L, 0, 1, r.t), 1);
	run_to(&r, T0 + 6 * SEC);
	run_close(&r, &st);
	g = got_read(r.path);
	assert_int_equal(g->nw, 1);
	assert_true(g->win[0].flags & SV_REC_WINDOW_F_SHORT);
	assert_true(g->win[0].flags & SV_REC_WINDOW_F_LOST);
	/* the ring held 4096 records: 0.1 s */
	assert_true(g->win[0].t_start_ns > T0 + 3 * SEC - 200 * MS);
	assert_true(g->win[0].lost > 0);
	assert_int_equal(g->win[0].lost, st.lost);
	assert_int_equal(g->win[0].records, g->ne);
	assert_int_equal(st.ring, 4096);
	check_events(g);
	got_free(g);
}

/* The run ends inside a window: what the ring has is written, the window flagged TRUNCATED; no SUMMARY when
 * nothing was refused. */
static void test_close_truncates(void **state)
{
	struct sv_flight_cfg fc = { 0 };
	struct run r = { 0 };
	struct got *g;

	(void)state;
	run_open(&r, &fc);
	run_to(&r, T0 + 3 * SEC);
	assert_int_equal(trig(&r, SV_WINDOW_RESTART, 1, 1, r.t), 1);
	run_to(&r, T0 + 4 * SEC);
	run_close(&r, NULL);
	g = got_read(r.path);
	assert_int_equal(g->nw, 1);
	assert_int_equal(g->win[0].flags, SV_REC_WINDOW_F_TRUNCATED);
	assert_int_equal(g->win[0].records, g->ne);
	assert_true(g->ne > 3 * 4000 * 2); /* the 2 s before and the second after */
	check_events(g);
	got_free(g);
}

static void test_open_rejects(void **state)
{
	struct sv_clock_sync sync = { .tai_offset_s = 37 };
	char path[128];
	struct sv_record_writer_cfg wc = { .path = path, .tool = "t", .clock = SV_CLOCK_TAI, .sync = &sync,
					   .host = "h" };
	struct sv_record_writer *w;
	struct sv_flight *f;
	struct sv_flight_cfg fc = { .events_per_s = 1000 };
	struct sv_flight_trigger t = { .cls = L, .stream = 0, .point = SV_POINT_T2B };

	(void)state;
	snprintf(path, sizeof(path), "%s/rej.svrec", dir);
	assert_int_equal(sv_record_writer_open(&w, &wc), 0);
	assert_int_equal(sv_flight_open(&f, &fc), -EINVAL); /* no writer */
	fc.w = w;
	fc.events_per_s = 0;
	assert_int_equal(sv_flight_open(&f, &fc), -EINVAL);
	fc.events_per_s = 1000;
	fc.budget_mwph[2] = SV_FLIGHT_BUDGET_MAX + 1;
	assert_int_equal(sv_flight_open(&f, &fc), -EINVAL);
	fc.budget_mwph[2] = 0;
	fc.max_len_ns = SEC; /* shorter than pre + post */
	assert_int_equal(sv_flight_open(&f, &fc), -EINVAL);
	fc.max_len_ns = 0;
	assert_int_equal(sv_flight_open(&f, &fc), 0);
	t.cls = SV_WINDOW_CLASSES;
	assert_int_equal(sv_flight_trigger(f, &t), -EINVAL);
	t.cls = L;
	t.stream = SV_REC_STREAM_NONE;
	assert_int_equal(sv_flight_trigger(f, &t), -EINVAL);
	t.stream = 0;
	t.point = 9;
	assert_int_equal(sv_flight_trigger(f, &t), -EINVAL);
	assert_int_equal(sv_flight_close(f, 0, NULL), 0);
	assert_int_equal(sv_flight_close(NULL, 0, NULL), 0);
	assert_int_equal(sv_record_writer_close(w), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_window_holds_key),     cmocka_unit_test(test_merge),
		cmocka_unit_test(test_budget_per_class),     cmocka_unit_test(test_budget_slow),
		cmocka_unit_test(test_budget_charges_length), cmocka_unit_test(test_daily_cap),
		cmocka_unit_test(test_ring_short_and_lost),  cmocka_unit_test(test_close_truncates),
		cmocka_unit_test(test_open_rejects),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

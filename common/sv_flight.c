// SPDX-License-Identifier: Apache-2.0
/* Soak mode's flight recorder. Contract in sv_flight.h, records in docs/record-format.md. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sv_flight.h"
#include "sv_mem.h"

#define HOUR_NS (3600 * SV_NSEC_PER_SEC)
/* Tokens: a bucket gains budget (thousandths of a window per hour) per nanosecond, so a window costs
 * 1000 x HOUR_NS: exact integers, whatever the refill steps. */
#define WINDOW_COST (1000 * HOUR_NS)
#define DEBT_MAX (16 * WINDOW_COST)	/* a bucket's lowest (a long merged window's charge) */
#define RING_MIN 1024u

struct win {
	bool open;
	struct sv_rec_window rec;
	uint64_t cursor;	/* the next ring record (sequence number) this window's walk looks at */
	uint64_t records, lost;
};

/* The would-be window a class refused last: later triggers inside it are not counted again. */
struct refusal {
	bool valid;
	uint32_t stream;
	uint16_t guest;
	int64_t end;
};

struct sv_flight {
	struct sv_record_writer *w;
	struct sv_rec_event *ring;
	uint8_t *written;	/* per ring record: written for a window already (windows share records) */
	uint32_t cap, pos;	/* pos = head % cap */
	uint64_t head;		/* records pushed */
	struct win *win;
	unsigned max_open;
	int64_t pre, post, max_len, settle;
	uint32_t scan;
	uint32_t budget[SV_WINDOW_CLASSES];
	int64_t tokens[SV_WINDOW_CLASSES];
	int64_t last_refill[SV_WINDOW_CLASSES];
	struct refusal refused[SV_WINDOW_CLASSES], refused_busy;
	uint32_t next_id;
	uint64_t said_dropped, said_busy; /* the counts the last WINDOW record carried */
	/* the daily cap: the record's bytes at the last 25 hourly samples (the oldest >= 24 h ago once full) */
	uint64_t day_cap, window_bytes;
	uint64_t hour_bytes[25];
	unsigned nhour;
	int64_t next_hour;
	struct sv_flight_stats st;
	int err;
};

static void note_err(struct sv_flight *f, int err)
{
	if (!err)
		return;
	f->st.write_errors++;
	if (!f->err)
		f->err = err;
}

static int64_t bucket_cap(uint32_t budget)
{
	return (int64_t)(budget > 1000 ? budget : 1000) * HOUR_NS;
}

/* ---- per packet ----------------------------------------------------------------------------- */

void sv_flight_push(struct sv_flight *f, const struct sv_rec_event *ev)
{
	f->ring[f->pos] = *ev;
	f->written[f->pos] = 0;
	if (++f->pos == f->cap)
		f->pos = 0;
	f->head++;
}

static void refill(struct sv_flight *f, unsigned cls, int64_t t)
{
	int64_t d = t - f->last_refill[cls], cap = bucket_cap(f->budget[cls]);

	f->last_refill[cls] = t;
	if (d <= 0)
		return; /* a step back of the clock: no credit for it */
	/* past the time to fill it from its lowest, full; else d x budget < cap + DEBT_MAX: no overflow */
	if (d >= (cap + DEBT_MAX) / f->budget[cls] || f->tokens[cls] + d * (int64_t)f->budget[cls] >= cap)
		f->tokens[cls] = cap;
	else
		f->tokens[cls] += d * (int64_t)f->budget[cls];
}

/* A window (or refusal) of (@stream, @guest) covers a trigger of (@s2, @g2): a guest-less one covers all. */
static bool key_match(uint32_t stream, uint16_t guest, uint32_t s2, uint16_t g2)
{
	return stream == s2 && (guest == SV_REC_GUEST_NONE || guest == g2);
}

/* A window of (@stream, @guest) keeps a record of @e's: its guest's, and the stream's guest-less points'. */
static bool event_match(uint32_t stream, uint16_t guest, const struct sv_rec_event *e)
{
	return e->stream == stream && (guest == SV_REC_GUEST_NONE || e->guest == SV_REC_GUEST_NONE ||
				       e->guest == guest);
}

/* A refused trigger: counted once per would-be window (@r holds the last one refused). */
static bool refuse(struct sv_flight *f, struct refusal *r, const struct sv_flight_trigger *t)
{
	if (r->valid && key_match(r->stream, r->guest, t->stream, t->guest) && t->t_ns - f->pre <= r->end) {
		if (t->t_ns + f->post > r->end)
			r->end = t->t_ns + f->post;
		return false;
	}
	*r = (struct refusal){ true, t->stream, t->guest, t->t_ns + f->post };
	return true;
}

/* Would one more window pass the daily cap? The record's bytes since the oldest hourly sample (24 to 25 hours
 * ago, or the run's start) plus one window's. */
static bool day_full(struct sv_flight *f)
{
	struct sv_record_writer_stats st;
	uint64_t base;

	if (f->day_cap == UINT64_MAX)
		return false;
	sv_record_writer_get_stats(f->w, &st);
	base = f->nhour ? f->hour_bytes[f->nhour > 25 ? f->nhour % 25 : 0] : 0;
	return st.bytes - base + f->window_bytes > f->day_cap;
}

/*
 * The window's first instant held: trigger - pre, or the oldest record the ring still has if later. Its walk
 * starts at the first ring record stamped settle before that (a binary search: the ring is in arrival order,
 * times out of order by less than settle), not at the ring's tail, which the next pushes overwrite.
 */
static void window_start(struct sv_flight *f, struct win *w)
{
	uint64_t tail = f->head > f->cap ? f->head - f->cap : 0, lo = tail, hi = f->head;
	int64_t oldest = f->head ? f->ring[tail % f->cap].t_ns : w->rec.t_trigger_ns;
	int64_t from = w->rec.t_start_ns - f->settle;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (f->ring[mid % f->cap].t_ns < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	w->cursor = lo;
	if (oldest > w->rec.t_start_ns) {
		w->rec.t_start_ns = oldest < w->rec.t_trigger_ns ? oldest : w->rec.t_trigger_ns;
		w->rec.flags |= SV_REC_WINDOW_F_SHORT;
	}
}

int sv_flight_trigger(struct sv_flight *f, const struct sv_flight_trigger *t)
{
	struct win *w = NULL;

	if (t->cls >= SV_WINDOW_CLASSES || t->stream == SV_REC_STREAM_NONE ||
	    (t->point >= SV_POINT_COUNT && t->point != SV_POINT_NONE))
		return -EINVAL;
	for (unsigned i = 0; i < f->max_open; i++) {
		struct sv_rec_window *r = &f->win[i].rec;
		int64_t end = t->t_ns + f->post, cap;

		if (!f->win[i].open || !key_match(r->stream, r->guest, t->stream, t->guest) ||
		    t->t_ns - f->pre > r->t_end_ns || end < r->t_start_ns)
			continue;
		/* overlapping: one window, longer, up to the cap */
		cap = r->t_trigger_ns - f->pre + f->max_len;
		if (end > cap) {
			end = cap;
			r->flags |= SV_REC_WINDOW_F_CUT;
		}
		if (end > r->t_end_ns)
			r->t_end_ns = end;
		r->classes |= (uint8_t)(1u << t->cls);
		if (r->triggers < UINT16_MAX)
			r->triggers++;
		f->st.merged++;
		return 0;
	}
	refill(f, t->cls, t->t_ns);
	if (f->tokens[t->cls] < WINDOW_COST || day_full(f)) {
		if (refuse(f, &f->refused[t->cls], t)) {
			f->st.dropped[t->cls]++;
			f->st.capped += f->tokens[t->cls] >= WINDOW_COST;
		}
		return -ENOBUFS;
	}
	for (unsigned i = 0; i < f->max_open && !w; i++)
		if (!f->win[i].open)
			w = &f->win[i];
	if (!w) {
		if (refuse(f, &f->refused_busy, t))
			f->st.busy++;
		return -EBUSY;
	}
	f->tokens[t->cls] -= WINDOW_COST;
	memset(w, 0, sizeof(*w));
	w->open = true;
	w->rec = (struct sv_rec_window){
		.point = t->point, .cls = t->cls, .classes = (uint8_t)(1u << t->cls), .guest = t->guest,
		.stream = t->stream, .t_trigger_ns = t->t_ns, .t_start_ns = t->t_ns - f->pre,
		.t_end_ns = t->t_ns + f->post, .value = t->value, .trigger_tai_sec = t->tai_sec,
		.trigger_smp_cnt = t->smp_cnt, .triggers = 1, .id = ++f->next_id,
	};
	window_start(f, w);
	return 1;
}

/* ---- writing windows -------------------------------------------------------------------------- */

/* Walks at most @limit ring records from the window's cursor, writing those of its key and span that no
 * window wrote yet. Records overwritten before the walk reached them are counted (lost). */
static void walk(struct sv_flight *f, struct win *w, uint64_t limit)
{
	uint64_t tail = f->head > f->cap ? f->head - f->cap : 0;
	const struct sv_rec_window *r = &w->rec;

	if (w->cursor < tail) {
		w->lost += tail - w->cursor;
		f->st.lost += tail - w->cursor;
		w->cursor = tail;
	}
	for (uint64_t n = 0; w->cursor < f->head && n < limit; n++, w->cursor++) {
		uint32_t i = (uint32_t)(w->cursor % f->cap);
		const struct sv_rec_event *e = &f->ring[i];
		int err;

		if (f->written[i] || !event_match(r->stream, r->guest, e) || e->t_ns < r->t_start_ns ||
		    e->t_ns > r->t_end_ns)
			continue;
		err = sv_record_write_event(f->w, e);
		note_err(f, err);
		if (err == -EINVAL)
			continue; /* a record the tool should not have pushed (undefined stream): counted */
		f->written[i] = 1;
		w->records++;
		f->st.records++;
	}
}

static uint32_t sat32(uint64_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/* The counts of windows not kept so far into @r. */
static void refusals(struct sv_flight *f, struct sv_rec_window *r)
{
	uint64_t total = 0;

	for (unsigned c = 0; c < SV_WINDOW_CLASSES; c++) {
		r->dropped[c] = sat32(f->st.dropped[c]);
		total += f->st.dropped[c];
	}
	r->busy = sat32(f->st.busy);
	f->said_dropped = total;
	f->said_busy = f->st.busy;
}

/* The window's WINDOW record (after its records), the charge for its length past (pre + post), its slot. */
static void finish(struct sv_flight *f, struct win *w, int64_t now, bool closing)
{
	struct sv_rec_window *r = &w->rec;
	int64_t base = f->pre + f->post, len = r->t_end_ns - (r->t_trigger_ns - f->pre);

	if (closing) {
		walk(f, w, UINT64_MAX);
		if (now < r->t_end_ns)
			r->flags |= SV_REC_WINDOW_F_TRUNCATED;
	}
	r->records = sat32(w->records);
	r->lost = sat32(w->lost);
	if (w->lost)
		r->flags |= SV_REC_WINDOW_F_LOST;
	refusals(f, r);
	note_err(f, sv_record_write_window(f->w, r));
	f->st.windows++;
	if (len > base) {
		/* merged past one window's length: charged pro rata (at most DEBT_MAX: no overflow) */
		int64_t over = len - base > 16 * base ? 16 * base : len - base;
		int64_t t = f->tokens[r->cls] - over * (WINDOW_COST / base);

		f->tokens[r->cls] = t < -DEBT_MAX ? -DEBT_MAX : t;
	}
	w->open = false;
}

int sv_flight_tick(struct sv_flight *f, int64_t now_ns)
{
	int err;

	if (f->day_cap != UINT64_MAX && (!f->nhour || now_ns >= f->next_hour)) {
		struct sv_record_writer_stats st;

		sv_record_writer_get_stats(f->w, &st);
		f->hour_bytes[f->nhour++ % 25] = st.bytes;
		f->next_hour = now_ns + HOUR_NS;
	}
	for (unsigned i = 0; i < f->max_open; i++) {
		struct win *w = &f->win[i];

		if (!w->open)
			continue;
		walk(f, w, f->scan);
		/* open while a trigger could still overlap it (up to pre after its end): those merge */
		if (w->cursor == f->head && now_ns - f->settle - f->pre >= w->rec.t_end_ns)
			finish(f, w, now_ns, false);
	}
	err = f->err;
	f->err = 0;
	return err;
}

void sv_flight_get_stats(const struct sv_flight *f, struct sv_flight_stats *st)
{
	*st = f->st;
	st->pushed = f->head;
}

/* ---- lifecycle -------------------------------------------------------------------------------- */

static void flight_free(struct sv_flight *f)
{
	free(f->ring);
	free(f->written);
	free(f->win);
	free(f);
}

int sv_flight_open(struct sv_flight **fp, const struct sv_flight_cfg *cfg)
{
	struct sv_flight *f;
	uint64_t ring, window_bytes;
	size_t mem = 0;

	*fp = NULL;
	if (!cfg || !cfg->w || !cfg->events_per_s || cfg->pre_ns < 0 || cfg->post_ns < 0 || cfg->max_len_ns < 0 ||
	    cfg->settle_ns < 0)
		return -EINVAL;
	for (unsigned c = 0; c < SV_WINDOW_CLASSES; c++)
		if (cfg->budget_mwph[c] > SV_FLIGHT_BUDGET_MAX)
			return -EINVAL;
	f = sv_calloc_prefaulted(1, sizeof(*f), &mem);
	if (!f)
		return -ENOMEM;
	f->w = cfg->w;
	f->pre = cfg->pre_ns ? cfg->pre_ns : SV_FLIGHT_PRE_NS_DEFAULT;
	f->post = cfg->post_ns ? cfg->post_ns : f->pre;
	f->max_len = cfg->max_len_ns ? cfg->max_len_ns : 2 * (f->pre + f->post);
	if (f->max_len < f->pre + f->post || f->pre > HOUR_NS || f->post > HOUR_NS || f->max_len > 4 * HOUR_NS) {
		flight_free(f);
		return -EINVAL;
	}
	f->settle = cfg->settle_ns ? cfg->settle_ns : SV_FLIGHT_SETTLE_NS_DEFAULT;
	f->scan = cfg->scan_per_tick ? cfg->scan_per_tick : SV_FLIGHT_SCAN_DEFAULT;
	f->max_open = cfg->max_open ? cfg->max_open : SV_FLIGHT_OPEN_DEFAULT;
	/* the ring holds pre x 5/4 at the stated rate: the walk starts at its tail while it fills on */
	ring = (uint64_t)cfg->events_per_s * (uint64_t)(f->pre / SV_NSEC_PER_MSEC) * 5 / 4 / 1000;
	if (ring < RING_MIN)
		ring = RING_MIN;
	if (ring > (cfg->ring_max ? cfg->ring_max : SV_FLIGHT_RING_MAX))
		ring = cfg->ring_max ? cfg->ring_max : SV_FLIGHT_RING_MAX;
	f->cap = (uint32_t)ring;
	f->ring = sv_calloc_prefaulted(f->cap, sizeof(*f->ring), &mem);
	f->written = sv_calloc_prefaulted(f->cap, 1, &mem);
	f->win = sv_calloc_prefaulted(f->max_open, sizeof(*f->win), &mem);
	if (!f->ring || !f->written || !f->win) {
		flight_free(f);
		return -ENOMEM;
	}
	/* the budget by bytes: a window is key_events_per_s x (pre + post) EVENT records and its WINDOW */
	window_bytes = (uint64_t)cfg->key_events_per_s * (uint64_t)((f->pre + f->post) / SV_NSEC_PER_MSEC) / 1000 *
			       sizeof(struct sv_rec_event) + sizeof(struct sv_rec_window);
	f->window_bytes = cfg->key_events_per_s ? window_bytes : 0;
	f->day_cap = cfg->day_cap ? cfg->day_cap : SV_FLIGHT_DAY_CAP_DEFAULT;
	for (unsigned c = 0; c < SV_WINDOW_CLASSES; c++) {
		uint64_t b = cfg->budget_mwph[c];

		if (!b && !cfg->key_events_per_s) {
			b = 1000;
		} else if (!b) {
			/* D windows a day (in thousandths): the bucket's first, then (D - 1) / 24 an hour */
			uint64_t d = (cfg->share_per_day ? cfg->share_per_day : SV_FLIGHT_SHARE_DEFAULT) * 1000 /
				     SV_WINDOW_CLASSES / window_bytes;

			b = (d > 1000 ? d - 1000 : d) / 24;
		}
		f->budget[c] = b < 1 ? 1 : b > SV_FLIGHT_BUDGET_MAX ? SV_FLIGHT_BUDGET_MAX : (uint32_t)b;
		f->tokens[c] = bucket_cap(f->budget[c]);
		f->last_refill[c] = INT64_MIN / 2; /* the first trigger finds the bucket full */
		f->st.budget_mwph[c] = f->budget[c];
	}
	f->st.ring = f->cap;
	f->st.window_bytes = window_bytes;
	f->st.memory = mem;
	*fp = f;
	return 0;
}

int sv_flight_close(struct sv_flight *f, int64_t now_ns, struct sv_flight_stats *st)
{
	uint64_t total = 0;
	int err;

	if (!f) {
		if (st)
			memset(st, 0, sizeof(*st));
		return 0;
	}
	for (unsigned i = 0; i < f->max_open; i++)
		if (f->win[i].open)
			finish(f, &f->win[i], now_ns, true);
	for (unsigned c = 0; c < SV_WINDOW_CLASSES; c++)
		total += f->st.dropped[c];
	if (total != f->said_dropped || f->st.busy != f->said_busy) {
		/* windows refused after the last one kept: their counts reach the file */
		struct sv_rec_window r = {
			.point = SV_POINT_NONE, .cls = SV_WINDOW_CLASS_NONE, .guest = SV_REC_GUEST_NONE,
			.stream = SV_REC_STREAM_NONE, .flags = SV_REC_WINDOW_F_SUMMARY, .t_trigger_ns = now_ns,
			.t_start_ns = now_ns, .t_end_ns = now_ns,
		};

		refusals(f, &r);
		note_err(f, sv_record_write_window(f->w, &r));
	}
	err = f->err;
	if (st)
		sv_flight_get_stats(f, st);
	flight_free(f);
	return err;
}

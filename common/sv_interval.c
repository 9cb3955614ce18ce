// SPDX-License-Identifier: Apache-2.0
/* Soak mode's interval summaries. Contract in sv_interval.h, records in docs/record-format.md. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sv_interval.h"
#include "sv_log.h"
#include "sv_mem.h"
#include "sv_stats.h"

/* Slots of open intervals: the one closing (within its grace), the current one, the next (a frame whose
 * sample time is a little ahead of the tool's clock). The grace is at most one interval, so interval k - 2
 * is always written before k + 1 needs its slot. */
#define NSLOT 3
#define SLOT_FREE INT64_MIN
#define NREASON 4		/* distinct drop reasons tracked per key and interval */
#define MAX_KEYS (SV_REC_MAX_STREAMS * 64u)

/* Counters of one key in one interval (64 bits here, 32 in the record: flag SATURATED past that). */
enum { C_FRAMES = SV_INTERVAL_COUNTERS, C_SAMPLES, C_COUNT, C_DROPPED, NCOUNT };

struct ikey {
	uint64_t c[NCOUNT];	/* enum sv_interval_counter, then C_* */
	uint64_t strays;
	uint64_t rcount[NREASON];
	uint16_t reason[NREASON];
	int64_t worst_ns;	/* INT64_MIN: no latency counted */
	uint32_t worst_tai_sec;
	uint16_t worst_smp_cnt;
	bool worst_why;
};

struct slot {
	int64_t start;		/* TAI ns, a multiple of the interval; SLOT_FREE */
	uint8_t flags;		/* SV_REC_INTERVAL_F_FIRST / STEP, set while open */
	struct ikey *k;		/* max_keys */
	struct sv_stats *h;	/* max_keys: each key's latencies */
};

struct group {
	uint8_t from_point, point;
	uint16_t guest;
};

struct sv_interval {
	struct sv_record_writer *w;
	int64_t interval, grace;
	unsigned max_keys, nkeys, ngroups;
	struct sv_interval_key *keys;
	unsigned *group_of;	/* key -> group */
	struct group *groups;
	struct slot slot[NSLOT];
	struct slot *last;	/* the slot of the last entry: the per-packet fast path */
	int64_t cur_idx;	/* the interval the tool's clock is in (updated by tick) */
	int64_t written_end;	/* intervals before this (TAI ns) are written: never claimed again */
	int64_t run_start_tai, run_last_tai;
	struct sv_stats *run;	/* max_keys: the whole run */
	struct sv_stats *scratch; /* a group's merged histogram */
	/* the tick clock -> TAI conversion */
	clockid_t tick_clock;
	enum sv_clock_id tick_clock_id;
	sv_interval_measure_fn measure;
	void *measure_ctx;
	int64_t to_tai, gap;
	int64_t remeasure, next_measure, step_min;
	struct sv_interval_stats st;
	int err;		/* first writer error since the last tick */
};

static int64_t floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;

	return (a % b < 0) ? q - 1 : q;
}

static int default_measure(void *ctx, struct sv_clock_xlate *x)
{
	const struct sv_interval *a = ctx;

	return sv_clock_xlate_measure(x, a->tick_clock, CLOCK_TAI, 16);
}

static void note_err(struct sv_interval *a, int err)
{
	if (!err)
		return;
	a->st.write_errors++;
	if (!a->err)
		a->err = err;
}

/* ---- per packet ----------------------------------------------------------------------------- */

/* The slot of an entry at @t (TAI ns) when it is not the last one used. */
static struct slot *slot_slow(struct sv_interval *a, int64_t t)
{
	int64_t idx = floor_div(t, a->interval);
	struct slot *s;

	if (idx >= a->cur_idx - 1 && idx <= a->cur_idx + 1 && idx * a->interval >= a->written_end) {
		s = &a->slot[(idx % NSLOT + NSLOT) % NSLOT];
		if (s->start == idx * a->interval)
			return a->last = s;
		if (s->start == SLOT_FREE) {
			s->start = idx * a->interval;
			return a->last = s;
		}
	}
	return NULL;
}

/* An entry whose own interval is written, too far ahead, or whose slot another open interval still holds:
 * the current interval counts it (the first one not written yet after a step back of the clock). Its slot
 * is claimed when free; when an older interval still holds it (no tick for intervals), that one counts it. */
static struct slot *stray(struct sv_interval *a, unsigned key)
{
	int64_t idx = a->cur_idx;
	struct slot *s;

	if (a->written_end != INT64_MIN && idx * a->interval < a->written_end)
		idx = a->written_end / a->interval;
	s = &a->slot[(idx % NSLOT + NSLOT) % NSLOT];
	if (s->start == SLOT_FREE)
		s->start = idx * a->interval;
	a->st.strays++;
	s->k[key].strays++;
	return s;
}

/* The counters of @key in the interval of @t, and its histogram in *h. */
static struct ikey *entry(struct sv_interval *a, unsigned key, int64_t t, struct sv_stats **h)
{
	struct slot *s = a->last;

	if (!s || t < s->start || t - s->start >= a->interval)
		s = slot_slow(a, t);
	if (!s)
		s = stray(a, key);
	*h = &s->h[key];
	return &s->k[key];
}

void sv_interval_frame(struct sv_interval *a, unsigned key, const struct sv_interval_frame *f)
{
	uint64_t n = f->n ? f->n : 1;
	struct sv_stats *h;
	struct ikey *k;

	if (key >= a->nkeys) {
		a->st.bad_keys++;
		return;
	}
	k = entry(a, key, f->t_tai_ns, &h);
	if (!f->same_frame)
		k->c[C_FRAMES] += n;
	k->c[C_SAMPLES] += n * f->samples;
	if (f->flags & SV_REC_F_LATE)
		k->c[SV_INTERVAL_LATE] += n;
	if (f->flags & SV_REC_F_DUPLICATE)
		k->c[SV_INTERVAL_DUPLICATE] += n;
	if (f->flags & SV_REC_F_REORDERED)
		k->c[SV_INTERVAL_REORDERED] += n;
	if (f->latency_ns == SV_INTERVAL_NO_LATENCY)
		return;
	k->c[C_COUNT] += n;
	if (n == 1)
		sv_stats_add(h, f->latency_ns);
	else
		sv_stats_add_n(h, f->latency_ns, n);
	if (f->latency_ns > k->worst_ns) {
		k->worst_ns = f->latency_ns;
		k->worst_tai_sec = f->tai_sec;
		k->worst_smp_cnt = f->smp_cnt;
		k->worst_why = f->why;
	}
}

void sv_interval_count(struct sv_interval *a, unsigned key, int64_t t_tai_ns, enum sv_interval_counter c,
		       uint64_t n)
{
	struct sv_stats *h;

	if (key >= a->nkeys || (unsigned)c >= SV_INTERVAL_COUNTERS) {
		a->st.bad_keys++;
		return;
	}
	entry(a, key, t_tai_ns, &h)->c[c] += n;
}

void sv_interval_drop(struct sv_interval *a, unsigned key, int64_t t_tai_ns, uint16_t reason, uint64_t n)
{
	struct sv_stats *h;
	struct ikey *k;

	if (key >= a->nkeys) {
		a->st.bad_keys++;
		return;
	}
	k = entry(a, key, t_tai_ns, &h);
	k->c[C_DROPPED] += n;
	for (unsigned i = 0; i < NREASON; i++) {
		if (k->rcount[i] && k->reason[i] != reason)
			continue;
		k->reason[i] = reason;
		k->rcount[i] += n;
		return;
	}
}

int64_t sv_interval_to_tai(const struct sv_interval *a, int64_t t_tick_ns)
{
	return t_tick_ns + a->to_tai;
}

/* ---- writing an interval -------------------------------------------------------------------- */

/* @v, or @max (and *sat) past it: a counter of the record's width. */
static uint64_t held(uint64_t v, uint64_t max, bool *sat)
{
	if (v > max) {
		*sat = true;
		return max;
	}
	return v;
}

/* The two most frequent of the tracked reasons into the record. */
static void top_reasons(const struct ikey *k, struct sv_rec_interval *r)
{
	int first = -1, second = -1;

	for (int i = 0; i < NREASON; i++) {
		if (!k->rcount[i])
			continue;
		if (first < 0 || k->rcount[i] > k->rcount[first]) {
			second = first;
			first = i;
		} else if (second < 0 || k->rcount[i] > k->rcount[second]) {
			second = i;
		}
	}
	/* each count is at most `dropped`, which saturates first: their sum stays within it */
	if (first >= 0) {
		r->drop_reason[0] = k->reason[first];
		r->drop_count[0] = (uint32_t)(k->rcount[first] < r->dropped ? k->rcount[first] : r->dropped);
	}
	if (second >= 0) {
		r->drop_reason[1] = k->reason[second];
		r->drop_count[1] = (uint32_t)(k->rcount[second] < r->dropped - r->drop_count[0]
						      ? k->rcount[second]
						      : r->dropped - r->drop_count[0]);
	}
}

static void fill_record(const struct sv_interval *a, const struct slot *s, unsigned key, uint8_t flags,
			struct sv_rec_interval *r)
{
	const struct ikey *k = &s->k[key];
	const struct sv_interval_key *kk = &a->keys[key];
	bool sat = false;

	memset(r, 0, sizeof(*r));
	r->point = kk->point;
	r->from_point = kk->from_point;
	r->guest = kk->guest;
	r->stream = kk->stream;
	r->tai_sec = (uint32_t)(s->start / SV_NSEC_PER_SEC);
	r->period_ms = (uint32_t)(a->interval / SV_NSEC_PER_MSEC);
	r->frames = (uint32_t)held(k->c[C_FRAMES], UINT32_MAX, &sat);
	r->samples = (uint32_t)held(k->c[C_SAMPLES], UINT32_MAX, &sat);
	r->count = (uint32_t)held(k->c[C_COUNT], UINT32_MAX, &sat);
	r->late = (uint32_t)held(k->c[SV_INTERVAL_LATE], UINT32_MAX, &sat);
	r->lost = (uint32_t)held(k->c[SV_INTERVAL_LOST], UINT32_MAX, &sat);
	r->missing = (uint32_t)held(k->c[SV_INTERVAL_MISSING], UINT32_MAX, &sat);
	r->dropped = (uint32_t)held(k->c[C_DROPPED], UINT32_MAX, &sat);
	r->duplicate = (uint32_t)held(k->c[SV_INTERVAL_DUPLICATE], UINT32_MAX, &sat);
	r->reordered = (uint32_t)held(k->c[SV_INTERVAL_REORDERED], UINT32_MAX, &sat);
	r->outliers = (uint32_t)held(k->c[SV_INTERVAL_OUTLIERS], UINT32_MAX, &sat);
	r->errors = (uint32_t)held(k->c[SV_INTERVAL_ERRORS], UINT32_MAX, &sat);
	r->restarts = (uint16_t)held(k->c[SV_INTERVAL_RESTARTS], UINT16_MAX, &sat);
	r->changes = (uint16_t)held(k->c[SV_INTERVAL_CHANGES], UINT16_MAX, &sat);
	r->strays = (uint16_t)(k->strays > UINT16_MAX ? UINT16_MAX : k->strays);
	top_reasons(k, r);
	r->flags = flags;
	if (k->strays)
		r->flags |= SV_REC_INTERVAL_F_STRAYS;
	if (k->worst_ns != INT64_MIN) {
		r->flags |= SV_REC_INTERVAL_F_WORST;
		r->worst_ns = k->worst_ns;
		r->worst_tai_sec = k->worst_tai_sec;
		r->worst_smp_cnt = k->worst_smp_cnt;
		if (k->worst_why)
			r->flags |= SV_REC_INTERVAL_F_WHY;
	}
	if (sat)
		r->flags |= SV_REC_INTERVAL_F_SATURATED;
}

static void hist_header(struct sv_rec_hist *hh, const struct group *g, uint32_t stream, int64_t start_ns,
			int64_t len_ns)
{
	int64_t ms = (len_ns + SV_NSEC_PER_MSEC - 1) / SV_NSEC_PER_MSEC;

	memset(hh, 0, sizeof(*hh));
	hh->point = g->point;
	hh->from_point = g->from_point;
	hh->guest = g->guest;
	hh->stream = stream;
	hh->tai_sec = (uint32_t)sv_ns_to_sec_floor(start_ns);
	hh->period_ms = ms > UINT32_MAX ? UINT32_MAX : ms < 1 ? 1 : (uint32_t)ms;
}

static void slot_reset(struct sv_interval *a, struct slot *s)
{
	for (unsigned i = 0; i < a->nkeys; i++) {
		struct ikey *k = &s->k[i];

		memset(k, 0, sizeof(*k));
		k->worst_ns = INT64_MIN;
		sv_stats_reset(&s->h[i]);
	}
	s->start = SLOT_FREE;
	s->flags = 0;
	if (a->last == s)
		a->last = NULL;
}

/*
 * Writes interval @s: an INTERVAL record per key, a HIST per (hop, guest) that counted latencies; merges the
 * keys' histograms into the whole run's; frees the slot. @now_tai: the run stops before the interval's end
 * when @closing (flag LAST).
 */
static void slot_write(struct sv_interval *a, struct slot *s, int64_t now_tai, bool closing)
{
	uint8_t flags = s->flags;

	if (s->start < a->run_start_tai)
		flags |= SV_REC_INTERVAL_F_FIRST;
	if (closing && now_tai < s->start + a->interval)
		flags |= SV_REC_INTERVAL_F_LAST;
	for (unsigned i = 0; i < a->nkeys; i++) {
		struct sv_rec_interval r;
		int err;

		fill_record(a, s, i, flags, &r);
		err = sv_record_write_interval(a->w, &r);
		note_err(a, err);
		if (err != -EINVAL)
			a->st.records++;
	}
	for (unsigned g = 0; g < a->ngroups; g++) {
		struct sv_rec_hist hh;
		int err;

		sv_stats_reset(a->scratch);
		for (unsigned i = 0; i < a->nkeys; i++)
			if (a->group_of[i] == g && (s->h[i].count || s->h[i].negative))
				sv_stats_merge(a->scratch, &s->h[i]);
		if (!a->scratch->count && !a->scratch->negative)
			continue;
		hist_header(&hh, &a->groups[g], SV_REC_STREAM_NONE, s->start, a->interval);
		err = sv_record_write_hist(a->w, &hh, a->scratch);
		note_err(a, err);
		if (err != -EINVAL)
			a->st.hists++;
	}
	for (unsigned i = 0; i < a->nkeys; i++)
		if (s->h[i].count || s->h[i].negative)
			sv_stats_merge(&a->run[i], &s->h[i]);
	if (s->start + a->interval > a->written_end)
		a->written_end = s->start + a->interval;
	a->st.intervals++;
	slot_reset(a, s);
}

/* The open slot that starts first, or NULL. */
static struct slot *oldest(struct sv_interval *a)
{
	struct slot *o = NULL;

	for (unsigned i = 0; i < NSLOT; i++)
		if (a->slot[i].start != SLOT_FREE && (!o || a->slot[i].start < o->start))
			o = &a->slot[i];
	return o;
}

/* ---- the clock ------------------------------------------------------------------------------- */

static int clock_record(struct sv_interval *a, const struct sv_clock_xlate *x, int64_t old, uint8_t flags,
			int64_t threshold)
{
	struct sv_clock_sync sync;
	struct sv_rec_clock c = {
		.clock = (uint8_t)a->tick_clock_id, .flags = flags, .t_ns = x->measured_from_ns,
		.old_to_tai_ns = old, .new_to_tai_ns = x->offset_ns, .step_ns = x->offset_ns - old,
		.gap_ns = x->gap_ns, .threshold_ns = threshold,
	};

	/* the kernel's TAI - UTC, when the clock is the host's (a simulated one has none) */
	if (a->measure == default_measure && !sv_clock_sync_read(&sync))
		c.tai_offset_s = sync.tai_offset_s;
	return sv_record_write_clock(a->w, &c);
}

/* Measures the conversion again; a move beyond the threshold is a step: CLOCK record, the open intervals
 * flagged, the new conversion in force. A move within it is measurement noise: the conversion stays (the
 * tick clock is slewed as TAI is, so only a step moves it). */
static void remeasure(struct sv_interval *a)
{
	struct sv_clock_xlate x;
	int64_t d, threshold;

	if (a->measure(a->measure_ctx, &x)) {
		a->st.measure_errors++;
		return;
	}
	d = x.offset_ns - a->to_tai;
	threshold = a->step_min + a->gap / 2 + x.gap_ns / 2;
	if (d <= threshold && d >= -threshold)
		return;
	note_err(a, clock_record(a, &x, a->to_tai, SV_REC_CLOCK_F_STEP, threshold));
	for (unsigned i = 0; i < NSLOT; i++)
		if (a->slot[i].start != SLOT_FREE)
			a->slot[i].flags |= SV_REC_INTERVAL_F_STEP;
	a->st.steps++;
	sv_info("clock: TAI stepped by %lld ns (conversion of the tool's clock measured again): intervals open "
		"now are flagged, later ones follow the new TAI", (long long)d);
	a->to_tai = x.offset_ns;
	a->gap = x.gap_ns;
	a->st.to_tai_ns = a->to_tai;
}

/* ---- lifecycle -------------------------------------------------------------------------------- */

int sv_interval_tick(struct sv_interval *a, int64_t now_tick_ns)
{
	struct slot *s;
	int64_t now_tai;
	int err;

	if (a->remeasure > 0 && now_tick_ns >= a->next_measure) {
		remeasure(a);
		a->next_measure = now_tick_ns + a->remeasure;
	}
	now_tai = now_tick_ns + a->to_tai;
	a->cur_idx = floor_div(now_tai, a->interval);
	if (now_tai > a->run_last_tai)
		a->run_last_tai = now_tai;
	while ((s = oldest(a)) && now_tai >= s->start + a->interval + a->grace)
		slot_write(a, s, now_tai, false);
	/* the current interval is started here, so that one where nothing happened is written too */
	s = &a->slot[(a->cur_idx % NSLOT + NSLOT) % NSLOT];
	if (s->start == SLOT_FREE && a->cur_idx * a->interval >= a->written_end)
		s->start = a->cur_idx * a->interval;
	err = a->err;
	a->err = 0;
	return err;
}

void sv_interval_get_stats(const struct sv_interval *a, struct sv_interval_stats *st)
{
	*st = a->st;
	st->keys = a->nkeys;
	st->groups = a->ngroups;
}

int sv_interval_key_add(struct sv_interval *a, const struct sv_interval_key *k)
{
	unsigned g;

	if (k->point >= SV_POINT_COUNT || (k->from_point >= SV_POINT_COUNT && k->from_point != SV_POINT_NONE))
		return -EINVAL;
	for (unsigned i = 0; i < a->nkeys; i++) {
		const struct sv_interval_key *o = &a->keys[i];

		if (o->stream == k->stream && o->from_point == k->from_point && o->point == k->point &&
		    o->guest == k->guest)
			return (int)i;
	}
	if (a->nkeys >= a->max_keys)
		return -ENOSPC;
	for (g = 0; g < a->ngroups; g++)
		if (a->groups[g].from_point == k->from_point && a->groups[g].point == k->point &&
		    a->groups[g].guest == k->guest)
			break;
	if (g == a->ngroups)
		a->groups[a->ngroups++] = (struct group){ k->from_point, k->point, k->guest };
	a->keys[a->nkeys] = *k;
	a->group_of[a->nkeys] = g;
	/* its counters in the open slots are zero (reset at open and at each write) */
	return (int)a->nkeys++;
}

static void interval_free(struct sv_interval *a)
{
	for (unsigned i = 0; i < NSLOT; i++) {
		free(a->slot[i].k);
		free(a->slot[i].h);
	}
	free(a->keys);
	free(a->group_of);
	free(a->groups);
	free(a->run);
	free(a->scratch);
	free(a);
}

int sv_interval_open(struct sv_interval **ap, const struct sv_interval_cfg *cfg, int64_t now_tick_ns)
{
	struct sv_interval *a;
	struct sv_clock_xlate x;
	size_t mem = 0;
	int err;

	*ap = NULL;
	if (!cfg || !cfg->w || !cfg->max_keys || cfg->max_keys > MAX_KEYS || cfg->interval_ns < 0 ||
	    cfg->interval_ns % SV_NSEC_PER_SEC || cfg->interval_ns > SV_INTERVAL_NS_MAX || cfg->grace_ns < 0 ||
	    cfg->step_ns < 0 || (unsigned)cfg->tick_clock_id >= SV_CLOCK_COUNT)
		return -EINVAL;
	a = sv_calloc_prefaulted(1, sizeof(*a), &mem);
	if (!a)
		return -ENOMEM;
	a->w = cfg->w;
	a->interval = cfg->interval_ns ? cfg->interval_ns : SV_INTERVAL_NS_DEFAULT;
	a->grace = cfg->grace_ns ? cfg->grace_ns : SV_INTERVAL_GRACE_NS_DEFAULT;
	if (a->grace > a->interval) {
		err = -EINVAL;
		goto out_free;
	}
	a->max_keys = cfg->max_keys;
	a->keys = sv_calloc_prefaulted(a->max_keys, sizeof(*a->keys), &mem);
	a->group_of = sv_calloc_prefaulted(a->max_keys, sizeof(*a->group_of), &mem);
	a->groups = sv_calloc_prefaulted(a->max_keys, sizeof(*a->groups), &mem);
	a->run = sv_calloc_prefaulted(a->max_keys, sizeof(*a->run), &mem);
	a->scratch = sv_calloc_prefaulted(1, sizeof(*a->scratch), &mem);
	if (!a->keys || !a->group_of || !a->groups || !a->run || !a->scratch) {
		err = -ENOMEM;
		goto out_free;
	}
	for (unsigned i = 0; i < NSLOT; i++) {
		struct slot *s = &a->slot[i];

		s->k = sv_calloc_prefaulted(a->max_keys, sizeof(*s->k), &mem);
		s->h = sv_calloc_prefaulted(a->max_keys, sizeof(*s->h), &mem);
		if (!s->k || !s->h) {
			err = -ENOMEM;
			goto out_free;
		}
		a->nkeys = a->max_keys; /* slot_reset walks the whole table once */
		slot_reset(a, s);
		a->nkeys = 0;
	}
	for (unsigned i = 0; i < a->max_keys; i++)
		sv_stats_init(&a->run[i]);
	sv_stats_init(a->scratch);
	a->tick_clock = cfg->tick_clock;
	a->tick_clock_id = cfg->tick_clock_id;
	a->measure = cfg->measure ? cfg->measure : default_measure;
	a->measure_ctx = cfg->measure ? cfg->measure_ctx : NULL;
	a->remeasure = cfg->remeasure_ns ? cfg->remeasure_ns : SV_INTERVAL_REMEASURE_NS_DEFAULT;
	a->step_min = cfg->step_ns ? cfg->step_ns : SV_INTERVAL_STEP_NS_DEFAULT;
	err = a->measure(cfg->measure ? cfg->measure_ctx : a, &x);
	if (err)
		goto out_free;
	if (!cfg->measure)
		a->measure_ctx = a;
	a->to_tai = x.offset_ns;
	a->gap = x.gap_ns;
	a->next_measure = now_tick_ns + a->remeasure;
	a->run_start_tai = a->run_last_tai = now_tick_ns + a->to_tai;
	a->cur_idx = floor_div(a->run_start_tai, a->interval);
	a->written_end = INT64_MIN;
	a->st.to_tai_ns = a->to_tai;
	a->st.memory = mem;
	err = clock_record(a, &x, x.offset_ns, SV_REC_CLOCK_F_INITIAL, a->step_min);
	if (err)
		goto out_free;
	*ap = a;
	return 0;

out_free:
	interval_free(a);
	return err;
}

int sv_interval_close(struct sv_interval *a, int64_t now_tick_ns, struct sv_interval_stats *st)
{
	int64_t now_tai;
	struct slot *s;
	int err;

	if (!a) {
		if (st)
			memset(st, 0, sizeof(*st));
		return 0;
	}
	now_tai = now_tick_ns + a->to_tai;
	if (now_tai > a->run_last_tai)
		a->run_last_tai = now_tai;
	while ((s = oldest(a)))
		slot_write(a, s, now_tai, true);
	for (unsigned i = 0; i < a->nkeys; i++) {
		struct sv_rec_hist hh;
		const struct sv_interval_key *k = &a->keys[i];
		const struct group g = { k->from_point, k->point, k->guest };

		if (!a->run[i].count && !a->run[i].negative)
			continue;
		hist_header(&hh, &g, k->stream, a->run_start_tai, a->run_last_tai - a->run_start_tai);
		err = sv_record_write_hist(a->w, &hh, &a->run[i]);
		note_err(a, err);
		if (err != -EINVAL)
			a->st.hists++;
	}
	err = a->err;
	if (st)
		sv_interval_get_stats(a, st);
	interval_free(a);
	return err;
}

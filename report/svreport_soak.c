// SPDX-License-Identifier: Apache-2.0
/*
 * svreport's soak records (svreport.h "Soak"): INTERVAL, the interval HIST records, WINDOW, CLOCK and WHY read
 * in the merged pass into tables of a fixed size, so that a report of 72 h takes the memory of one of 2 h. The
 * timeline keeps SVR_SOAK_POINTS points per hop whose width doubles as the soak grows (each holds the largest
 * p50, p99 and max of its intervals: a spike is never averaged away); the hourly rows do the same past
 * SVR_SOAK_HOURS. A run that stopped and a new run (new run_id) of the same tool on the same host for the same
 * guest is a restart: the time between them is a gap event, not an error.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "svreport_private.h"

/* A why-late record kept to name a worst frame's causes: its key and its largest causes. */
struct svr_soak_why {
	unsigned file;
	uint32_t stream;		/* the file's stream index */
	uint8_t point, from;
	uint16_t guest;			/* as recorded */
	uint32_t tai_sec;
	uint16_t smp_cnt;
	int64_t total_ns;		/* t_to - t_from */
	unsigned ncauses;
	uint8_t cause[SVR_SOAK_CAUSES];
	int64_t cause_ns[SVR_SOAK_CAUSES];
};

const char *svr_soak_ev_name(unsigned kind)
{
	static const char *const n[SVR_SOAK_EV__COUNT] = {
		[SVR_SOAK_EV_WINDOW] = "window", [SVR_SOAK_EV_LOSS] = "loss", [SVR_SOAK_EV_MISSING] = "missing",
		[SVR_SOAK_EV_DROP] = "drop", [SVR_SOAK_EV_RESTART] = "restart", [SVR_SOAK_EV_CHANGE] = "change",
		[SVR_SOAK_EV_GAP] = "gap", [SVR_SOAK_EV_STEP] = "clock step",
	};

	return kind < SVR_SOAK_EV__COUNT ? n[kind] : "unknown";
}

const struct svr_soak *svr_soak_get(const struct svr *r)
{
	return r->soak;
}

void svr_soak_hop_summary(const struct svr_soak_hop *h, struct sv_stats_summary *s)
{
	sv_stats_summarize(&h->hist, s);
}

void svr_soak_free(struct svr *r)
{
	if (r->soak)
		free(r->soak->hops);
	free(r->soak);
	free(r->soak_why);
	r->soak = NULL;
	r->soak_why = NULL;
}

static struct svr_soak *soak_of(struct svr *r)
{
	struct svr_soak *k;

	if (r->soak)
		return r->soak;
	k = calloc(1, sizeof(*k));
	if (!k)
		return NULL;
	k->hops = calloc(SVR_SOAK_HOPS, sizeof(*k->hops));
	if (!k->hops) {
		free(k);
		return NULL;
	}
	k->t0_sec = INT64_MIN;
	k->hour_s = 3600;
	k->first_tai_ns = INT64_MAX;
	k->last_tai_ns = INT64_MIN;
	r->soak = k;
	return k;
}

/* The hop (from, to, guest) of the soak, created on first use; -1 when the table is full. */
static int hop_of(struct svr_soak *k, unsigned from, unsigned to, int guest, unsigned fi)
{
	struct svr_soak_hop *h;

	for (unsigned i = 0; i < k->nhops; i++)
		if (k->hops[i].from == from && k->hops[i].to == to && k->hops[i].guest == guest) {
			k->hops[i].files |= 1ull << fi;
			return (int)i;
		}
	if (k->nhops >= SVR_SOAK_HOPS) {
		k->hops_dropped++;
		return -1;
	}
	h = &k->hops[k->nhops];
	h->from = (uint8_t)from;
	h->to = (uint8_t)to;
	h->guest = guest;
	h->files = 1ull << fi;
	sv_stats_init(&h->hist);
	return (int)k->nhops++;
}

/* The time base, set by the first interval: its whole TAI hour (hour rows begin on the hour). */
static void base_set(struct svr_soak *k, uint32_t tai_sec, uint32_t period_ms)
{
	if (k->t0_sec != INT64_MIN)
		return;
	k->t0_sec = (int64_t)tai_sec - (int64_t)tai_sec % 3600;
	k->pt_width_s = period_ms >= 1000 ? period_ms / 1000 : 1;
}

/* Halves the timeline's resolution: point i takes points 2i and 2i+1. */
static void points_fold(struct svr_soak *k)
{
	for (unsigned h = 0; h < k->nhops; h++) {
		struct svr_soak_point *p = k->hops[h].pts;

		for (unsigned i = 0; i < SVR_SOAK_POINTS / 2; i++) {
			struct svr_soak_point a = p[2 * i], b = p[2 * i + 1];

			a.intervals += b.intervals;
			a.p50 = b.p50 > a.p50 ? b.p50 : a.p50;
			a.p99 = b.p99 > a.p99 ? b.p99 : a.p99;
			a.max = b.max > a.max ? b.max : a.max;
			a.count += b.count;
			a.late += b.late;
			a.lost += b.lost;
			a.dropped += b.dropped;
			a.window |= b.window;
			p[i] = a;
		}
		memset(&p[SVR_SOAK_POINTS / 2], 0, sizeof(p[0]) * (SVR_SOAK_POINTS / 2));
	}
	k->pt_width_s *= 2;
	k->npts = (k->npts + 1) / 2;
}

static void hours_fold(struct svr_soak *k)
{
	for (unsigned i = 0; i < SVR_SOAK_HOURS / 2; i++) {
		struct svr_soak_hour a = k->hours[2 * i], b = k->hours[2 * i + 1];

		a.intervals += b.intervals;
		a.frames += b.frames;
		a.late += b.late;
		a.lost += b.lost;
		a.missing += b.missing;
		a.dropped += b.dropped;
		a.restarts += b.restarts;
		a.changes += b.changes;
		a.windows += b.windows;
		if (b.worst_ns > a.worst_ns) {
			a.worst_ns = b.worst_ns;
			a.worst_hop = b.worst_hop;
		}
		k->hours[i] = a;
	}
	memset(&k->hours[SVR_SOAK_HOURS / 2], 0, sizeof(k->hours[0]) * (SVR_SOAK_HOURS / 2));
	for (unsigned h = 0; h < k->nhops; h++) {
		struct svr_soak_hop *hp = &k->hops[h];

		for (unsigned i = 0; i < SVR_SOAK_HOURS / 2; i++) {
			int64_t a = hp->hour_p99[2 * i], b = hp->hour_p99[2 * i + 1];

			hp->hour_p99[i] = a > b ? a : b;
			a = hp->hour_max[2 * i];
			b = hp->hour_max[2 * i + 1];
			hp->hour_max[i] = a > b ? a : b;
		}
		memset(&hp->hour_p99[SVR_SOAK_HOURS / 2], 0, sizeof(int64_t) * (SVR_SOAK_HOURS / 2));
		memset(&hp->hour_max[SVR_SOAK_HOURS / 2], 0, sizeof(int64_t) * (SVR_SOAK_HOURS / 2));
	}
	k->hour_s *= 2;
	k->nhours = (k->nhours + 1) / 2;
}

/* The timeline point of TAI second @sec (folding as needed); times before the base go to point 0. */
static unsigned point_at(struct svr_soak *k, int64_t sec)
{
	int64_t i = sec < k->t0_sec ? 0 : (sec - k->t0_sec) / k->pt_width_s;

	while (i >= SVR_SOAK_POINTS) {
		points_fold(k);
		i = (sec - k->t0_sec) / k->pt_width_s;
	}
	if ((unsigned)i + 1 > k->npts)
		k->npts = (unsigned)i + 1;
	return (unsigned)i;
}

static struct svr_soak_hour *hour_at(struct svr_soak *k, int64_t sec)
{
	int64_t i = sec < k->t0_sec ? 0 : (sec - k->t0_sec) / k->hour_s;

	while (i >= SVR_SOAK_HOURS) {
		hours_fold(k);
		i = (sec - k->t0_sec) / k->hour_s;
	}
	if ((unsigned)i + 1 > k->nhours) {
		for (unsigned j = k->nhours; j <= (unsigned)i; j++)
			k->hours[j].worst_hop = -1;
		k->nhours = (unsigned)i + 1;
	}
	return &k->hours[i];
}

static unsigned hour_idx(const struct svr_soak *k, int64_t sec)
{
	return sec < k->t0_sec ? 0 : (unsigned)((sec - k->t0_sec) / k->hour_s);
}

static uint32_t global_stream(const struct fileio *f, uint32_t stream)
{
	return stream < SV_REC_MAX_STREAMS && f->smap[stream] >= 0 ? (uint32_t)f->smap[stream] : UINT32_MAX;
}

/* The guest of a record at @point with guest @ev_guest: SVR_GUEST_SHARED at shared points, -2 when the guests'
 * table is full (the record is not counted: svr_totals' too_many_guests says so for the events). */
static int guest_of(struct svr *r, struct fileio *f, unsigned point, unsigned ev_guest)
{
	int g;

	if (point < SVR_NPOINTS && point_shared(point))
		return SVR_GUEST_SHARED;
	if (point >= SVR_NPOINTS && ev_guest == SV_REC_GUEST_NONE)
		return SVR_GUEST_SHARED;
	g = svr_file_guest(r, f, ev_guest);
	return g < 0 ? -2 : g;
}

/* An event into the list; an interval's event merges into one of the same file, interval, stream, guest and
 * kind (the same frames counted at each of the file's hops). */
static void event_add(struct svr_soak *k, const struct svr_soak_event *ev, bool merge)
{
	k->events_total[ev->kind]++;
	if (merge)
		for (unsigned i = k->nevents, n = 0; i-- > 0 && n < 64; n++) {
			struct svr_soak_event *o = &k->events[i];

			if (o->kind == ev->kind && o->file == ev->file && o->t_ns == ev->t_ns &&
			    o->stream == ev->stream && o->guest == ev->guest) {
				if (ev->value > o->value)
					o->value = ev->value;
				o->hops++;
				k->events_total[ev->kind]--;
				return;
			}
		}
	if (k->nevents >= SVR_SOAK_EVENTS) {
		k->events_unlisted[ev->kind]++;
		return;
	}
	k->events[k->nevents++] = *ev;
}

static void on_hist(struct svr *r, unsigned fi, struct fileio *f, const struct sv_rec *rec)
{
	const struct sv_rec_hist *hr = &rec->u.hist;
	struct svr_soak *k = r->soak;
	struct svr_soak_hop *h;
	struct sv_stats_summary s;
	unsigned pt, hr_i;
	int guest, hi;

	if (hr->from_point >= hr->point || hr->point >= SVR_NPOINTS)
		return;
	guest = guest_of(r, f, hr->point, hr->guest);
	if (guest < SVR_GUEST_SHARED)
		return;
	if (sv_stats_deserialize(&r->tmp, rec->hist_data, hr->len))
		return;
	hi = hop_of(k, hr->from_point, hr->point, guest, fi);
	if (hi < 0)
		return;
	base_set(k, hr->tai_sec, hr->period_ms);
	h = &k->hops[hi];
	sv_stats_merge(&h->hist, &r->tmp);
	h->hists++;
	k->hists++;
	sv_stats_summarize(&r->tmp, &s);
	pt = point_at(k, hr->tai_sec);
	h->pts[pt].intervals++;
	if (s.p50 > h->pts[pt].p50)
		h->pts[pt].p50 = s.p50;
	if (s.p99 > h->pts[pt].p99)
		h->pts[pt].p99 = s.p99;
	if (s.max > h->pts[pt].max)
		h->pts[pt].max = s.max;
	h->pts[pt].count += s.count;
	hour_at(k, hr->tai_sec);
	hr_i = hour_idx(k, hr->tai_sec);
	if (s.p99 > h->hour_p99[hr_i])
		h->hour_p99[hr_i] = s.p99;
	if (s.max > h->hour_max[hr_i])
		h->hour_max[hr_i] = s.max;
}

/* The worst intervals, worst first; one entry per frame of a file (its frame late at Ts-T3 is late at Ts-T4:
 * the larger kept). */
static void worst_add(struct svr_soak *k, const struct svr_soak_worst *w)
{
	unsigned i;

	for (i = 0; i < k->nworst; i++) {
		const struct svr_soak_worst *o = &k->worst[i];

		if (o->file != w->file || o->stream != w->stream || o->worst_tai_sec != w->worst_tai_sec ||
		    o->worst_smp_cnt != w->worst_smp_cnt || o->rec_guest != w->rec_guest)
			continue;
		if (o->worst_ns >= w->worst_ns)
			return;
		/* the new one replaces it: out of the list, then in at its place */
		memmove(&k->worst[i], &k->worst[i + 1], sizeof(k->worst[0]) * (k->nworst - i - 1));
		k->nworst--;
		break;
	}

	if (k->nworst == SVR_SOAK_WORST && w->worst_ns <= k->worst[k->nworst - 1].worst_ns)
		return;
	if (k->nworst < SVR_SOAK_WORST)
		k->nworst++;
	for (i = k->nworst - 1; i > 0 && k->worst[i - 1].worst_ns < w->worst_ns; i--)
		k->worst[i] = k->worst[i - 1];
	k->worst[i] = *w;
}

static void on_interval(struct svr *r, unsigned fi, struct fileio *f, const struct sv_rec_interval *iv)
{
	struct svr_soak *k = r->soak;
	bool hop = iv->from_point < iv->point && iv->point < SVR_NPOINTS;
	unsigned from = hop ? iv->from_point : iv->point;
	int guest = guest_of(r, f, iv->point, iv->guest), hi;
	int64_t t = (int64_t)iv->tai_sec * SV_NSEC_PER_SEC, end = t + (int64_t)iv->period_ms * SV_NSEC_PER_MSEC;
	struct svr_soak_hop *h;
	struct svr_soak_hour *row;
	unsigned pt;

	if (guest < SVR_GUEST_SHARED || iv->point >= SVR_NPOINTS)
		return;
	k->intervals++;
	if (!k->period_ms)
		k->period_ms = iv->period_ms;
	else if (k->period_ms != iv->period_ms)
		k->mixed_periods = true;
	if (t < k->first_tai_ns)
		k->first_tai_ns = t;
	if (end > k->last_tai_ns)
		k->last_tai_ns = end;
	base_set(k, iv->tai_sec, iv->period_ms);
	hi = hop_of(k, from, iv->point, guest, fi);
	if (hi < 0)
		return;
	h = &k->hops[hi];
	h->intervals++;
	h->frames += iv->frames;
	h->samples += iv->samples;
	h->count += iv->count;
	h->late += iv->late;
	h->lost += iv->lost;
	h->missing += iv->missing;
	h->dropped += iv->dropped;
	h->duplicate += iv->duplicate;
	h->reordered += iv->reordered;
	h->outliers += iv->outliers;
	h->errors += iv->errors;
	h->restarts += iv->restarts;
	h->changes += iv->changes;
	h->strays += iv->strays;
	h->first_partial += (iv->flags & SV_REC_INTERVAL_F_FIRST) != 0;
	h->saturated += (iv->flags & SV_REC_INTERVAL_F_SATURATED) != 0;
	pt = point_at(k, iv->tai_sec);
	h->pts[pt].late += iv->late;
	h->pts[pt].lost += (uint64_t)iv->lost + iv->missing;
	h->pts[pt].dropped += iv->dropped;
	row = hour_at(k, iv->tai_sec);
	row->intervals++;
	row->frames += iv->frames;
	row->late += iv->late;
	row->lost += iv->lost;
	row->missing += iv->missing;
	row->dropped += iv->dropped;
	row->restarts += iv->restarts;
	row->changes += iv->changes;
	if (iv->flags & SV_REC_INTERVAL_F_WORST) {
		struct svr_soak_worst w = {
			.hop = hi, .file = fi, .tai_sec = iv->tai_sec, .period_ms = iv->period_ms,
			.stream = global_stream(f, iv->stream), .worst_tai_sec = iv->worst_tai_sec,
			.worst_smp_cnt = iv->worst_smp_cnt, .worst_ns = iv->worst_ns, .late = iv->late,
			.flags = iv->flags,
		};

		if (iv->worst_ns > row->worst_ns || row->worst_hop < 0) {
			row->worst_ns = iv->worst_ns;
			row->worst_hop = hi;
		}
		if (iv->worst_ns > h->worst_ns || !h->worst_tai_sec) {
			h->worst_ns = iv->worst_ns;
			h->worst_stream = w.stream;
			h->worst_tai_sec = iv->worst_tai_sec;
			h->worst_smp_cnt = iv->worst_smp_cnt;
		}
		w.point = iv->point;
		w.rec_guest = iv->guest;
		w.rec_stream = iv->stream;
		worst_add(k, &w);
	}
	/* what happened in the interval, one event per kind (merged over the file's hops) */
	struct {
		uint8_t kind;
		uint32_t v;
	} what[] = {
		{SVR_SOAK_EV_LOSS, iv->lost}, {SVR_SOAK_EV_MISSING, iv->missing}, {SVR_SOAK_EV_DROP, iv->dropped},
		{SVR_SOAK_EV_RESTART, iv->restarts}, {SVR_SOAK_EV_CHANGE, iv->changes},
	};
	for (unsigned i = 0; i < sizeof(what) / sizeof(what[0]); i++) {
		struct svr_soak_event ev = {
			.t_ns = t, .end_ns = end, .kind = what[i].kind, .from = (uint8_t)(hop ? from : SV_POINT_NONE),
			.to = iv->point, .guest = guest, .stream = global_stream(f, iv->stream), .file = fi,
			.value = what[i].v, .hops = 1,
		};

		if (what[i].v)
			event_add(k, &ev, true);
	}
}

static void on_window(struct svr *r, unsigned fi, struct fileio *f, const struct sv_rec_window *w)
{
	struct svr_soak *k = r->soak;
	int guest;

	for (unsigned c = 0; c < SV_WINDOW_CLASSES; c++)
		if (w->dropped[c] > f->win_refused[c])
			f->win_refused[c] = w->dropped[c];
	if (w->busy > f->win_busy)
		f->win_busy = w->busy;
	if (w->flags & SV_REC_WINDOW_F_SUMMARY)
		return;
	/* svsub's windows have no guest: the file's */
	guest = guest_of(r, f, w->point, w->guest);
	if (guest < SVR_GUEST_SHARED)
		guest = SVR_GUEST_SHARED;
	struct svr_soak_event ev = {
		.t_ns = svr_to_tai(f, w->t_trigger_ns), .end_ns = svr_to_tai(f, w->t_end_ns),
		.kind = SVR_SOAK_EV_WINDOW, .cls = w->cls, .classes = w->classes, .from = SV_POINT_NONE,
		.to = w->point, .guest = guest, .stream = global_stream(f, w->stream), .file = fi, .value = w->value,
		.hops = 1, .flags = w->flags, .triggers = w->triggers,
	};
	k->windows++;
	if (w->cls < SV_WINDOW_CLASSES)
		k->windows_cls[w->cls]++;
	event_add(k, &ev, false);
	if (k->t0_sec != INT64_MIN) {
		int64_t sec = ev.t_ns / SV_NSEC_PER_SEC;
		unsigned pt = point_at(k, sec);

		hour_at(k, sec)->windows++;
		for (unsigned h = 0; h < k->nhops; h++)
			if ((k->hops[h].files >> fi & 1) && (guest == SVR_GUEST_SHARED || k->hops[h].guest == guest))
				k->hops[h].pts[pt].window = true;
	}
}

static void on_clock(struct svr *r, unsigned fi, struct fileio *f, const struct sv_rec_clock *c)
{
	struct svr_soak_event ev = {
		.kind = SVR_SOAK_EV_STEP, .from = SV_POINT_NONE, .to = SV_POINT_NONE, .guest = SVR_GUEST_SHARED,
		.stream = UINT32_MAX, .file = fi, .value = c->step_ns, .hops = 1,
	};

	if (!(c->flags & SV_REC_CLOCK_F_STEP))
		return;
	ev.t_ns = ev.end_ns = svr_sat_add(c->t_ns, c->new_to_tai_ns);
	(void)f;
	r->soak->clock_steps++;
	event_add(r->soak, &ev, false);
}

/* A why-late record: kept when among the SVR_SOAK_WHY longest hops (the worst frames' are among them). */
static void on_why(struct svr *r, unsigned fi, const struct sv_rec_why *w)
{
	struct svr_soak_why y = {
		.file = fi, .stream = w->stream, .point = w->point, .from = w->from_point, .guest = w->guest,
		.tai_sec = w->tai_sec, .smp_cnt = w->smp_cnt, .total_ns = svr_sat_sub(w->t_to_ns, w->t_from_ns),
	};
	unsigned slot = r->soak_nwhy;

	/* svtrace writes why-late records with or without soak mode: kept apart from the soak's tables, so that a
	 * run without soak records has no soak report */
	if (!r->soak_why) {
		r->soak_why = calloc(SVR_SOAK_WHY, sizeof(*r->soak_why));
		if (!r->soak_why)
			return;
	}
	r->soak_whys++;
	for (unsigned c = 0; c < SV_REC_WHY_SLOTS; c++) {
		unsigned i;

		if (w->ns[c] <= 0)
			continue;
		if (y.ncauses < SVR_SOAK_CAUSES)
			y.ncauses++;
		else if (w->ns[c] <= y.cause_ns[SVR_SOAK_CAUSES - 1])
			continue;
		for (i = y.ncauses - 1; i > 0 && y.cause_ns[i - 1] < w->ns[c]; i--) {
			y.cause[i] = y.cause[i - 1];
			y.cause_ns[i] = y.cause_ns[i - 1];
		}
		y.cause[i] = (uint8_t)c;
		y.cause_ns[i] = w->ns[c];
	}
	if (r->soak_nwhy == SVR_SOAK_WHY) {
		slot = 0;
		for (unsigned i = 1; i < r->soak_nwhy; i++)
			if (r->soak_why[i].total_ns < r->soak_why[slot].total_ns)
				slot = i;
		if (r->soak_why[slot].total_ns >= y.total_ns)
			return;
	} else {
		r->soak_nwhy++;
	}
	r->soak_why[slot] = y;
}

void svr_soak_record(struct svr *r, unsigned fi, struct fileio *f, const struct sv_rec *rec)
{
	if (rec->kind == SV_REC_WHY) {
		on_why(r, fi, &rec->u.why);
		return;
	}
	f->soak = true;
	if (!soak_of(r))
		return;
	switch (rec->kind) {
	case SV_REC_INTERVAL:
		on_interval(r, fi, f, &rec->u.interval);
		break;
	case SV_REC_HIST:
		on_hist(r, fi, f, rec);
		break;
	case SV_REC_WINDOW:
		on_window(r, fi, f, &rec->u.window);
		break;
	case SV_REC_CLOCK:
		on_clock(r, fi, f, &rec->u.clock);
		break;
	default:
		break;
	}
}

bool svr_soak_restart_pair(const struct fileio *a, const struct fileio *b)
{
	const struct sv_rec_file_header *ha, *hb;

	if (!a->rd || !b->rd)
		return false;
	ha = sv_record_reader_header(a->rd);
	hb = sv_record_reader_header(b->rd);
	return ha->run_id != hb->run_id && !strcmp(a->info.tool, b->info.tool) &&
	       !strcmp(a->info.host, b->info.host) && !strcmp(a->info.guest, b->info.guest);
}

static int cmp_event(const void *pa, const void *pb)
{
	const struct svr_soak_event *a = pa, *b = pb;

	if (a->t_ns != b->t_ns)
		return a->t_ns < b->t_ns ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	return a->file < b->file ? -1 : a->file > b->file;
}

/* Each restart of a tool (files of one tool, host and guest, of different runs, one after the other): the gap
 * between the end of one run's records and the start of the next. */
static void gaps(struct svr *r)
{
	for (unsigned i = 0; i < r->nfiles; i++) {
		const struct fileio *a = r->f[i];
		const struct fileio *next = NULL;
		unsigned ni = 0;

		if (!a->rd || !a->info.records)
			continue;
		for (unsigned j = 0; j < r->nfiles; j++) {
			const struct fileio *b = r->f[j];

			if (j == i || !b->info.records || !svr_soak_restart_pair(a, b) ||
			    b->info.start_tai_ns < a->info.end_tai_ns)
				continue;
			if (!next || b->info.start_tai_ns < next->info.start_tai_ns) {
				next = b;
				ni = j;
			}
		}
		if (!next)
			continue;
		struct svr_soak_event ev = {
			.t_ns = a->info.end_tai_ns, .end_ns = next->info.start_tai_ns, .kind = SVR_SOAK_EV_GAP,
			.from = SV_POINT_NONE, .to = SV_POINT_NONE, .stream = UINT32_MAX, .file = ni, .hops = 1,
			.value = svr_sat_sub(next->info.start_tai_ns, a->info.end_tai_ns), .flags = a->info.clean_end ? 0 : 1,
		};
		ev.guest = a->info.guest[0] ? -2 : SVR_GUEST_SHARED;
		if (ev.guest == -2) {
			ev.guest = SVR_GUEST_SHARED;
			for (unsigned g = 0; g < r->nguests; g++)
				if (!strcmp(svr_guest_name(r, g), a->info.guest))
					ev.guest = (int)g;
		}
		svr_add_warning(r, "%s then %s: %s on %s restarted (a new run%s), %.1f s not recorded", a->info.path,
				next->info.path, a->info.tool, a->info.host,
				a->info.clean_end ? "" : "; the first ended without END: killed or crashed",
				(double)ev.value / 1e9);
		if (r->soak) {
			r->soak->gaps++;
			event_add(r->soak, &ev, false);
		}
	}
}

/* The why-late record of worst frame @w (flag WHY): same file, stream, point, guest and join key. */
static void worst_why(struct svr *r, struct svr_soak_worst *w)
{
	if (!(w->flags & SV_REC_INTERVAL_F_WHY))
		return;
	for (unsigned i = 0; i < r->soak_nwhy; i++) {
		const struct svr_soak_why *y = &r->soak_why[i];

		if (y->file != w->file || y->stream != w->rec_stream || y->tai_sec != w->worst_tai_sec ||
		    y->smp_cnt != w->worst_smp_cnt || y->guest != w->rec_guest)
			continue;
		/* the hop's end record, else another hop of the same frame */
		if (w->why_found && y->point != w->point)
			continue;
		w->why_found = true;
		w->why_ns = y->total_ns;
		w->why_from = y->from;
		w->why_to = y->point;
		w->ncauses = y->ncauses;
		memcpy(w->cause, y->cause, sizeof(w->cause));
		memcpy(w->cause_ns, y->cause_ns, sizeof(w->cause_ns));
	}
}

/* Each window with the other files' windows of the same stream over the same time (sorted by time: the scan
 * stops at the first window that starts after this one ends). */
static void join_windows(struct svr_soak *k)
{
	for (unsigned i = 0; i < k->nevents; i++) {
		struct svr_soak_event *a = &k->events[i];

		if (a->kind != SVR_SOAK_EV_WINDOW)
			continue;
		for (unsigned j = i + 1; j < k->nevents && k->events[j].t_ns <= a->end_ns; j++) {
			struct svr_soak_event *b = &k->events[j];

			if (b->kind != SVR_SOAK_EV_WINDOW || b->file == a->file || b->stream != a->stream)
				continue;
			a->joined |= 1ull << b->file;
			b->joined |= 1ull << a->file;
		}
	}
}

void svr_soak_finish(struct svr *r)
{
	struct svr_soak *k = r->soak;

	gaps(r);
	if (!k)
		return;
	for (unsigned i = 0; i < r->nfiles; i++) {
		for (unsigned c = 0; c < SV_WINDOW_CLASSES; c++)
			k->refused_cls[c] += r->f[i]->win_refused[c];
		k->refused_busy += r->f[i]->win_busy;
	}
	k->whys = r->soak_whys;
	for (unsigned i = 0; i < k->nworst; i++)
		worst_why(r, &k->worst[i]);
	qsort(k->events, k->nevents, sizeof(k->events[0]), cmp_event);
	join_windows(k);
}

static int64_t soak_stat(const struct svr_soak_hop *h, unsigned stat, int64_t *err)
{
	struct sv_stats_summary s;

	*err = 0;
	if (stat == SVR_STAT_LOST)
		return (int64_t)(h->lost + h->missing);
	sv_stats_summarize(&h->hist, &s);
	return svr_summary_stat(&s, stat, err);
}

void svr_soak_evaluate(struct svr *r, const struct svr_budgets *b, struct svr_eval *e)
{
	struct svr_soak_eval *se = &e->soak;
	const struct svr_soak *k = r->soak;

	memset(se, 0, sizeof(*se));
	if (!k)
		return;
	se->present = true;
	for (unsigned i = 0; i < b->n; i++) {
		const struct svr_budget *bu = &b->b[i];

		for (unsigned h = 0; h < k->nhops && se->nres < sizeof(se->res) / sizeof(se->res[0]); h++) {
			const struct svr_soak_hop *hp = &k->hops[h];
			struct svr_soak_result *res = &se->res[se->nres];

			if (hp->from != bu->from || hp->to != bu->to)
				continue;
			if (bu->guest[0] && (hp->guest < 0 || strcmp(bu->guest, svr_guest_name(r, (unsigned)hp->guest))))
				continue;
			if (bu->stat != SVR_STAT_LOST && !hp->hist.count)
				continue;
			res->budget = i;
			res->hop = h;
			res->value = soak_stat(hp, bu->stat, &res->err);
			res->pass = res->value <= bu->limit;
			se->nres++;
			se->evaluated++;
			se->failed += !res->pass;
		}
	}
	if (se->failed) {
		se->verdict = SVR_FAIL;
		snprintf(se->why, sizeof(se->why), "soak: %u of %u budget checks exceeded over the whole soak",
			 se->failed, se->evaluated);
	} else if (se->evaluated) {
		se->verdict = SVR_PASS;
		snprintf(se->why, sizeof(se->why), "soak: %u budget checks within their limits over the whole soak",
			 se->evaluated);
	} else {
		se->verdict = SVR_NONE;
		snprintf(se->why, sizeof(se->why), "soak: nothing to check (no soak hop the budgets name)");
	}
}

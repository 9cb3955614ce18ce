// SPDX-License-Identifier: Apache-2.0
/*
 * svreport's one merged pass: every file read together in the order of record time (TAI), each
 * record applied as it comes (events into the join window, summaries, why-late, drops, what a writer
 * could not write), the window emptied at the end. See svreport.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "svreport_private.h"

void svr_cfg_defaults(struct svr_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->window_ns = 3 * SV_NSEC_PER_SEC;
	c->max_frames = 4u << 20;
	c->exact_limit = 32u << 20;
	c->clock_tolerance_ns = 20 * SV_NSEC_PER_USEC;
	c->max_late = SVR_MAX_LATE;
}

int svr_create(struct svr **out, const struct svr_cfg *cfg)
{
	struct svr *r = calloc(1, sizeof(*r));

	*out = NULL;
	if (!r)
		return -ENOMEM;
	if (cfg)
		r->cfg = *cfg;
	else
		svr_cfg_defaults(&r->cfg);
	if (r->cfg.max_late > SVR_MAX_LATE)
		r->cfg.max_late = SVR_MAX_LATE;
	if (r->cfg.max_frames < 1024)
		r->cfg.max_frames = 1024;
	r->lostafter = calloc(1, sizeof(*r->lostafter));
	r->missing = calloc(1, sizeof(*r->missing));
	if (!r->lostafter || !r->missing || svr_window_alloc(r, 4096)) {
		svr_destroy(r);
		return -ENOMEM;
	}
	for (unsigned s = 0; s < SVR_MAX_STREAMS; s++) {
		r->max_idx[s] = INT64_MIN;
		for (unsigned k = 0; k < NSLOTS; k++)
			r->last[s][k].idx = INT64_MIN;
	}
	r->bin_width = 1;
	*out = r;
	return 0;
}

void svr_destroy(struct svr *r)
{
	if (!r)
		return;
	for (unsigned i = 0; i < r->nfiles; i++) {
		svr_fileio_free(r->f[i]);
	}
	for (unsigned p = 0; p < NPAIRS; p++)
		for (unsigned g = 0; g < GSLOTS; g++) {
			for (unsigned s = 0; s <= SVR_MAX_STREAMS; s++)
				svr_series_free(r->ser[p][g][s]);
			free(r->bins[p][g]);
		}
	for (unsigned p = 0; p < SVR_NPOINTS; p++)
		for (unsigned g = 0; g < GSLOTS; g++)
			free(r->pts[p][g].pacing);
	free(r->lostafter);
	free(r->missing);
	free(r->pend);
	free(r->ring);
	free(r->hash);
	svr_soak_free(r);
	free(r);
}

void svr_set_csv(struct svr *r, FILE *csv)
{
	r->csv = csv;
}

void svr_set_budget_pairs(struct svr *r, const uint8_t (*pairs)[2], unsigned n)
{
	r->nbudget_pairs = 0;
	for (unsigned i = 0; i < n && i < SVR_MAX_BUDGETS; i++) {
		r->budget_pairs[i][0] = pairs[i][0];
		r->budget_pairs[i][1] = pairs[i][1];
		r->nbudget_pairs++;
	}
}

/* A SUMMARY or HIST record (the tools' per-second statistics): into the hop's summary series. */
static void on_summary(struct svr *r, struct fileio *f, unsigned point, unsigned from, unsigned stream,
		       unsigned ev_guest, const struct sv_rec_summary *sum, const uint8_t *hist, size_t hlen)
{
	int gs, guest = -1, pi;
	struct svr_series *ser[2];

	if (from == SV_POINT_NONE || from >= point || point >= SVR_NPOINTS)
		return;
	if (stream >= SV_REC_MAX_STREAMS || f->smap[stream] < 0)
		return;
	gs = f->smap[stream];
	if (!point_shared(point)) {
		guest = svr_file_guest(r, f, ev_guest);
		if (guest < 0)
			return;
	}
	pi = pair_idx(from, point);
	ser[0] = svr_series_get(r, pi, gslot(guest), -1);
	ser[1] = svr_series_get(r, pi, gslot(guest), gs);
	if (!ser[0] || !ser[1])
		return;
	r->present[from][point_shared(from) ? GSH : gslot(guest)] = true;
	r->present[point][gslot(guest)] = true;
	if (slot_of(from, guest) >= 0)
		r->host_mask[slot_of(from, guest)] |= 1ull << f->host_id;
	if (slot_of(point, guest) >= 0)
		r->host_mask[slot_of(point, guest)] |= 1ull << f->host_id;
	for (unsigned i = 0; i < 2; i++) {
		struct svr_series *s = ser[i];

		if (sum) {
			struct sv_counters c = {
				.frames = sum->frames, .samples = sum->samples, .lost = sum->lost,
				.duplicate = sum->duplicate, .reordered = sum->reordered, .late = sum->late,
				.dropped = sum->dropped, .errors = sum->errors,
			};
			struct sv_stats_summary *b = &s->sum_bound;

			sv_counters_add(&s->sum_cnt, &c);
			s->sum_records++;
			if (sum->count) {
				if (!b->count || sum->min < b->min)
					b->min = sum->min;
				if (!b->count || sum->max > b->max)
					b->max = sum->max;
#define UPB(k) if (!b->count || sum->k + sum->k##_err > b->k) b->k = sum->k + sum->k##_err
				UPB(p50);
				UPB(p99);
				UPB(p999);
				UPB(p9999);
#undef UPB
				b->count += sum->count;
				s->sum_count += sum->count;
			}
		} else if (hist) {
			if (!s->sum_hist) {
				s->sum_hist = malloc(sizeof(*s->sum_hist));
				if (!s->sum_hist)
					return;
				sv_stats_init(s->sum_hist);
			}
			if (i == 0 && sv_stats_deserialize(&r->tmp, hist, hlen))
				return;
			sv_stats_merge(s->sum_hist, &r->tmp);
			s->hist_records++;
		}
	}
}

/* A THREAD record (svtrace's why-late): the worst waits kept, and the time per holder. */
static void on_thread(struct svr *r, struct fileio *f, const struct sv_rec_thread *t)
{
	struct svr_late l;
	unsigned i;

	r->tot.threads++;
	memset(&l, 0, sizeof(l));
	l.stream = t->stream < SV_REC_MAX_STREAMS && f->smap[t->stream] >= 0 ? (uint32_t)f->smap[t->stream]
									    : UINT32_MAX;
	l.tai_sec = t->tai_sec;
	l.smp_cnt = t->smp_cnt;
	l.point = t->point;
	l.guest = (int16_t)(t->guest == SV_REC_GUEST_NONE ? -1 : svr_file_guest(r, f, t->guest));
	l.wait_ns = t->wait_ns;
	l.holder_run_ns = t->holder_run_ns;
	l.feeder_tid = t->feeder_tid;
	l.holder_pid = t->holder_pid;
	l.holder_policy = t->holder_policy;
	l.holder_prio = t->holder_prio;
	l.cause = t->cause;
	memcpy(l.feeder_comm, t->feeder_comm, 16);
	memcpy(l.holder_comm, t->holder_comm, 16);
	l.feeder_comm[15] = l.holder_comm[15] = 0;
	if (l.stream != UINT32_MAX) {
		struct jent *e = svr_window_lookup(r, make_key(l.stream, l.tai_sec, l.smp_cnt));

		if (e)
			e->flags |= ENT_LATE;
	}
	if (svr_late_unheld(&l))
		l.holder_policy = l.holder_prio = 0;	/* nobody held it: no policy (older svtrace left one) */

	/* worst first, bounded */
	if (r->nlate < r->cfg.max_late || (r->nlate && l.wait_ns > r->late[r->nlate - 1].wait_ns)) {
		if (r->nlate < r->cfg.max_late)
			r->nlate++;
		for (i = r->nlate - 1; i > 0 && r->late[i - 1].wait_ns < l.wait_ns; i--)
			r->late[i] = r->late[i - 1];
		r->late[i] = l;
	}
	for (i = 0; i < r->nholders; i++)
		if (!strcmp(r->holders[i].comm, l.holder_comm) && r->holders[i].policy == l.holder_policy)
			break;
	if (i == r->nholders) {
		if (r->nholders >= SVR_MAX_HOLDERS)
			return;
		r->nholders++;
		memset(&r->holders[i], 0, sizeof(r->holders[i]));
		memcpy(r->holders[i].comm, l.holder_comm, 16);
		r->holders[i].policy = l.holder_policy;
		r->holders[i].prio = l.holder_prio;
	}
	r->holders[i].count++;
	r->holders[i].total_ns += l.wait_ns;
	if (l.wait_ns > r->holders[i].max_ns)
		r->holders[i].max_ns = l.wait_ns;
}

/* A DROP record: counted by (point, guest, reason). */
static void on_drop(struct svr *r, struct fileio *f, const struct sv_rec_drop *d)
{
	int guest = d->guest == SV_REC_GUEST_NONE || point_shared(d->point) ? -1 : svr_file_guest(r, f, d->guest);
	unsigned i;

	/* The reasons table only: the frame's own EVENT (flagged dropped) counts it at its point. */
	r->tot.drops++;
	for (i = 0; i < r->ndrops; i++)
		if (r->drops[i].point == d->point && r->drops[i].guest == guest && r->drops[i].reason == d->reason)
			break;
	if (i == r->ndrops) {
		if (r->ndrops >= SVR_MAX_DROPS)
			return;
		r->ndrops++;
		r->drops[i].point = d->point;
		r->drops[i].guest = (int16_t)guest;
		r->drops[i].reason = d->reason;
		snprintf(r->drops[i].name, sizeof(r->drops[i].name), "%.31s", d->reason_name);
	}
	r->drops[i].count++;
}

/* The TAI interval of an UNWRITTEN record's lost frames: their sample times and their own times (either may
 * be unknown). False when it lost no frame. */
static bool unwritten_span(const struct fileio *f, const struct sv_rec_unwritten *u, int64_t *lo, int64_t *hi)
{
	*lo = INT64_MAX;
	*hi = INT64_MIN;
	if (!u->events)
		return false;
	if (u->ts_min_ns) {
		*lo = u->ts_min_ns;
		*hi = u->ts_max_ns;
	}
	if (u->t_min_ns) {
		int64_t a = svr_to_tai(f, u->t_min_ns), b = svr_to_tai(f, u->t_max_ns);

		if (a < *lo)
			*lo = a;
		if (b > *hi)
			*hi = b;
	}
	return *lo <= *hi;
}

/* The file's writer could not write a stretch of blocks (a full disk): counted, and its frames' interval
 * kept so that what the file would have seen there is not recorded rather than lost. */
static void on_unwritten(struct svr *r, struct fileio *f, const struct sv_rec_unwritten *u)
{
	struct svr_file_info *in = &f->info;
	unsigned pts = 0;
	int64_t lo, hi;

	in->unwritten_records += u->records;
	in->unwritten_events += u->events;
	in->unwritten_stretches++;
	in->unwritten_errno = u->err;
	in->unwritten_floor |= (u->flags & SV_REC_UNWRITTEN_F_FLOOR) != 0;
	for (unsigned p = 0; p < SVR_NPOINTS; p++) {
		in->unwritten_frames[p] += u->frames[p];
		if (u->frames[p])
			pts |= 1u << p;
	}
	if (u->total > f->located)
		f->located = u->total;
	if (unwritten_span(f, u, &lo, &hi))
		svr_unrec_add(r, f, lo, hi, pts ? pts : UNREC_ALL);
}

static void on_end(struct svr *r, struct fileio *f, const struct sv_rec_end *end)
{
	f->end_rec_t = svr_to_tai(f, end->t_ns);
	if (end->lost_records > f->info.end_lost_records)
		f->info.end_lost_records = end->lost_records;
	if (end->lost_records <= f->located)
		return;
	/* an older writer counts its lost records in END only: taken as its tail, from its last event */
	f->info.unwritten_unlocated += end->lost_records - f->located;
	f->info.unwritten_records += end->lost_records - f->located;
	f->located = end->lost_records;
	svr_unrec_add(r, f, f->last_ev_t != INT64_MIN ? f->last_ev_t + 1 : f->info.start_tai_ns, f->end_rec_t,
		  UNREC_ALL);
}

/* svtrace names every egress port it follows (NAME, kind GUEST): that guest's T2a is recorded by this
 * file from start to end, so frames that never reach it while the file records are lost there, even
 * when the port never saw a single frame (link down). */
static void declare_port(struct svr *r, unsigned fi, struct fileio *f, const struct sv_rec_name *n)
{
	int g, slot;

	if (n->name_kind != SV_REC_NAME_GUEST || f->info.guest[0] || strcmp(f->info.tool, "svtrace"))
		return;
	g = svr_file_guest(r, f, n->id);
	slot = slot_of(SV_POINT_T2A, g);
	if (g < 0 || slot < 0)
		return;
	r->present[SV_POINT_T2A][g] = true;
	r->src_mask[slot] |= 1ull << fi;
	r->host_mask[slot] |= 1ull << f->host_id;
}

/* Reads @f up to its next timed record (STREAM/NAME are applied on the way). */
static void advance(struct svr *r, unsigned fi, struct fileio *f)
{
	int ret;

	f->have = false;
	while (!f->eof) {
		ret = sv_record_reader_next(f->rd, &f->rec);
		if (!ret && f->part_i + 1 < f->nparts && svr_file_next_part(f))
			continue;
		if (ret <= 0) {
			f->eof = true;
			if (ret < 0) {
				f->info.err = ret;
				sv_record_reader_strerror(f->rd, f->info.errmsg, sizeof(f->info.errmsg));
			}
			f->info.clean_end = sv_record_reader_clean_end(f->rd);
			sv_record_reader_get_damage(f->rd, &f->info.damage);
			svr_damage_add(&f->info.damage, &f->damage_before);
			/* recorded until its END, and at least as long as it has records */
			f->info.end_tai_ns = f->end_rec_t > f->last_t ? f->end_rec_t : f->last_t;
			if (f->info.end_tai_ns < f->info.start_tai_ns)
				f->info.end_tai_ns = f->info.start_tai_ns;
			for (unsigned i = 0; i < SV_REC_MAX_STREAMS; i++)
				if (f->claim[i].cand)
					svr_rate_confirm(r, f, i, NULL);
			return;
		}
		f->info.records++;
		switch (f->rec.kind) {
		case SV_REC_STREAM:
			svr_define_stream(r, f, &f->rec.u.stream);
			continue;
		case SV_REC_NAME:
			declare_port(r, fi, f, &f->rec.u.name);
			continue;
		case SV_REC_WHY: {	/* no join: the record carries its hop (svreport_why.c) */
			const struct sv_rec_why *y = &f->rec.u.why;

			svr_why_record(r, y->stream < SV_REC_MAX_STREAMS && f->smap[y->stream] >= 0 ?
					  (uint32_t)f->smap[y->stream] : UINT32_MAX,
				       y->guest == SV_REC_GUEST_NONE ? -1 : svr_file_guest(r, f, y->guest), y);
			svr_soak_record(r, fi, f, &f->rec);	/* the soak's worst intervals name theirs */
			continue;
		}
		case SV_REC_EVENT:
			f->t = svr_to_tai(f, f->rec.u.event.t_ns);
			break;
		case SV_REC_DROP:
			f->t = svr_to_tai(f, f->rec.u.drop.t_ns);
			break;
		case SV_REC_THREAD:
			f->t = svr_to_tai(f, f->rec.u.thread.t_ns);
			break;
		case SV_REC_SYNC:
			f->t = svr_to_tai(f, f->rec.u.sync.t_ns);
			break;
		case SV_REC_END:
			f->t = svr_to_tai(f, f->rec.u.end.t_ns);
			/* records lost that no UNWRITTEN record placed (an older writer): its tail after the last
			 * event is taken as not recorded, before the window judges the frames there */
			if (f->rec.u.end.lost_records > f->located && f->last_t != INT64_MIN && f->last_t < f->t)
				f->t = f->last_t;
			break;
		case SV_REC_UNWRITTEN: {
			int64_t lo, hi;

			/* joined at the start of its stretch: known before the frames of the stretch leave the
			 * window */
			f->t = unwritten_span(f, &f->rec.u.unwritten, &lo, &hi) ? lo
											: svr_to_tai(f, f->rec.u.unwritten.t_first_ns);
			break;
		}
		case SV_REC_SUMMARY:
			f->t = ((int64_t)f->rec.u.summary.tai_sec + 1) * SV_NSEC_PER_SEC;
			break;
		case SV_REC_HIST:
			/* an interval's (soak) at its end, a second's at its second's */
			f->t = ((int64_t)f->rec.u.hist.tai_sec + (f->rec.u.hist.period_ms >= 1000 ?
				f->rec.u.hist.period_ms / 1000 : 1)) * SV_NSEC_PER_SEC;
			break;
		case SV_REC_INTERVAL:
			f->t = (int64_t)f->rec.u.interval.tai_sec * SV_NSEC_PER_SEC +
			       (int64_t)f->rec.u.interval.period_ms * SV_NSEC_PER_MSEC;
			break;
		case SV_REC_WINDOW:
			f->t = svr_to_tai(f, f->rec.u.window.t_end_ns);
			break;
		case SV_REC_CLOCK:
			/* on its own clock (the tool's tick clock), converted by itself */
			f->t = svr_sat_add(f->rec.u.clock.t_ns, f->rec.u.clock.new_to_tai_ns);
			break;
		default:
			continue;
		}
		f->have = true;
		return;
	}
}

static void process(struct svr *r, unsigned fi, struct fileio *f)
{
	const struct sv_rec *rec = &f->rec;

	if (f->t > f->last_t)
		f->last_t = f->t;
	if (f->t < f->first_t && rec->kind != SV_REC_SUMMARY && rec->kind != SV_REC_HIST &&
	    rec->kind != SV_REC_INTERVAL) {
		/* a file covers at least the span of its own records (hand-made or replayed records may
		 * carry times before the writer's start) */
		f->first_t = f->t;
		if (f->t < f->info.start_tai_ns)
			f->info.start_tai_ns = f->t;
	}
	switch (rec->kind) {
	case SV_REC_EVENT:
		if (r->csv) {
			if (!r->csv_header) {
				sv_record_csv_header(r->csv);
				r->csv_header = true;
			}
			sv_record_csv_event(r->csv, f->rd, &rec->u.event);
		}
		svr_on_event(r, fi, f, &rec->u.event);
		break;
	case SV_REC_SUMMARY:
		r->tot.summaries++;
		on_summary(r, f, rec->u.summary.point, rec->u.summary.from_point, rec->u.summary.stream,
			   rec->u.summary.guest, &rec->u.summary, NULL, 0);
		break;
	case SV_REC_HIST:
		r->tot.hists++;
		/* an interval's latencies (soak: stream none, a period): the soak's; a key's whole run and a
		 * second's: the hop's summaries */
		if (rec->u.hist.stream == SV_REC_STREAM_NONE && rec->u.hist.period_ms) {
			svr_soak_record(r, fi, f, rec);
			break;
		}
		on_summary(r, f, rec->u.hist.point, rec->u.hist.from_point, rec->u.hist.stream,
			   rec->u.hist.guest, NULL, rec->hist_data, rec->u.hist.len);
		break;
	case SV_REC_THREAD:
		on_thread(r, f, &rec->u.thread);
		break;
	case SV_REC_DROP:
		on_drop(r, f, &rec->u.drop);
		break;
	case SV_REC_SYNC: {
		const struct sv_rec_sync *s = &rec->u.sync;

		if (s->unsync || s->tai_unset || s->state == 5)
			f->info.sync_ok = false;
		if (s->tai_unset)
			f->info.tai_unset = true;
		break;
	}
	case SV_REC_END:
		on_end(r, f, &rec->u.end);
		break;
	case SV_REC_UNWRITTEN:
		on_unwritten(r, f, &rec->u.unwritten);
		break;
	case SV_REC_INTERVAL:
	case SV_REC_WINDOW:
	case SV_REC_CLOCK:
		svr_soak_record(r, fi, f, rec);
		break;
	default:
		break;
	}
}

/* A warning about the set of files, for every output (bounded: the first 8). */
void svr_add_warning(struct svr *r, const char *fmt, ...)
{
	va_list ap;

	if (r->nwarn >= sizeof(r->warn) / sizeof(r->warn[0]))
		return;
	va_start(ap, fmt);
	vsnprintf(r->warn[r->nwarn++], sizeof(r->warn[0]), fmt, ap);
	va_end(ap);
}

/* Files of one report must describe one run: two that never recorded at the same time are most likely
 * from different runs (loss is only counted where a file was recording, but the join means nothing). */
static void check_overlap(struct svr *r)
{
	for (unsigned i = 0; i < r->nfiles; i++)
		for (unsigned j = i + 1; j < r->nfiles; j++) {
			const struct svr_file_info *a = &r->f[i]->info, *b = &r->f[j]->info;
			int64_t gap;

			if (!r->f[i]->rd || !r->f[j]->rd || !a->to_tai || !b->to_tai || !a->records || !b->records ||
			    svr_soak_restart_pair(r->f[i], r->f[j]))	/* a restart: a gap (svr_soak_finish) */
				continue;
			gap = a->end_tai_ns < b->start_tai_ns ? b->start_tai_ns - a->end_tai_ns
			    : b->end_tai_ns < a->start_tai_ns ? a->start_tai_ns - b->end_tai_ns : -1;
			if (gap >= 0)
				svr_add_warning(r, "%s and %s do not overlap in time (%.1f s apart): records of different "
					    "runs? Nothing of one can join the other", a->path, b->path, (double)gap / 1e9);
		}
}

int svr_run(struct svr *r)
{
	int first_err = 0;

	for (unsigned i = 0; i < r->nfiles; i++)
		if (r->f[i]->rd)
			advance(r, i, r->f[i]);
	for (;;) {
		struct fileio *best = NULL;
		unsigned bi = 0;

		for (unsigned i = 0; i < r->nfiles; i++)
			if (r->f[i]->have && (!best || r->f[i]->t < best->t)) {
				best = r->f[i];
				bi = i;
			}
		if (!best)
			break;
		/* the merged clock only moves forward; a file a little behind still joins in the window */
		if (best->t > r->now)
			r->now = best->t;
		svr_window_evict(r, false);
		svr_pend_expire(r, false);
		process(r, bi, best);
		advance(r, bi, best);
	}
	svr_pend_expire(r, true);
	svr_window_evict(r, true);
	check_overlap(r);
	svr_soak_finish(r);
	for (unsigned i = 0; i < r->nfiles; i++)
		if (r->f[i]->info.err && !first_err)
			first_err = r->f[i]->info.err;
	return first_err;
}

unsigned svr_nwarnings(const struct svr *r)
{
	return r->nwarn;
}

const char *svr_warning(const struct svr *r, unsigned i)
{
	return i < r->nwarn ? r->warn[i] : NULL;
}

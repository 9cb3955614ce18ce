// SPDX-License-Identifier: Apache-2.0
/*
 * svreport's events into the join window: keyed by (stream, TAI second, smpCnt), or keyed from the
 * stream's rate when their tool could not (held until the rate is known); order and pacing per point.
 */
#include <stdlib.h>
#include <string.h>

#include "svreport_private.h"

/* Can this event be joined at all (a known stream)? */
static int event_stream(const struct fileio *f, const struct sv_rec_event *ev)
{
	return ev->stream < SV_REC_MAX_STREAMS ? f->smap[ev->stream] : -1;
}

static bool synch_global(const struct fileio *f, uint32_t stream)
{
	const struct sv_rec_stream *ls = sv_record_reader_stream(f->rd, stream);

	return ls && ls->smp_synch == 2;
}

/* A publisher that fell a second behind its schedule (overloaded host) makes every later tool guess the wrong
 * second: counted, it is the cause of the aliasing the clock check then reports. */
static void publisher_behind(struct svr *r, const struct svr_stream_info *st, const struct sv_rec_event *ev,
			     uint32_t sec, int64_t t)
{
	int64_t ts, behind;

	if (ev->point != SV_POINT_T0 || !stream_sample_time(st, sec, ev->smp_cnt, &ts))
		return;
	behind = t - ts;
	if (behind >= SV_NSEC_PER_SEC - SV_SAMPLE_AHEAD_NS_DEFAULT) {
		r->pub_behind++;
		if (behind > r->pub_behind_max_ns)
			r->pub_behind_max_ns = behind;
	}
}

/* The second of an event's sample. A tool may stamp tai_sec from the event's own time (older svtrace records): a
 * frame of the end of second S seen just after S+1 began then carries S+1. The sample's second is re-derived
 * from the time when the recorded one @sec is inconsistent with it (latency outside [-5 ms, 995 ms)). */
static uint32_t sample_second(struct svr *r, const struct svr_stream_info *st, const struct sv_rec_event *ev,
			      uint32_t sec, int64_t t)
{
	struct sv_sample_time sa;
	int64_t ts, lat;

	if (!stream_sample_time(st, sec, ev->smp_cnt, &ts))
		return sec;
	lat = t - ts;
	if ((lat < -SV_SAMPLE_AHEAD_NS_DEFAULT || lat >= SV_NSEC_PER_SEC - SV_SAMPLE_AHEAD_NS_DEFAULT) &&
	    lat > -2 * SV_NSEC_PER_SEC && lat < 2 * SV_NSEC_PER_SEC &&
	    !sv_sample_align(t, ev->smp_cnt, st->rate, SV_SAMPLE_AHEAD_NS_DEFAULT, &sa) && sa.tai_sec > 0) {
		r->tot.realigned++;
		return (uint32_t)sa.tai_sec;
	}
	return sec;
}

/* Order and pacing per (stream, point, guest), in arrival order: a frame behind the last one is reordered,
 * the next one gives an interval. */
static void order_pacing(struct svr *r, unsigned gs, int slot, struct svr_point_stats *ps, int64_t idx, int64_t t)
{
	const struct svr_stream_info *st = &r->streams[gs];
	struct lastobs *lo = &r->last[gs][slot];

	if (lo->idx != INT64_MIN && idx < lo->idx) {
		ps->reordered++;
		return;
	}
	if (lo->idx != INT64_MIN && idx == lo->idx + stream_step(st)) {
		if (!ps->pacing) {
			ps->pacing = malloc(sizeof(*ps->pacing));
			if (ps->pacing)
				sv_stats_init(ps->pacing);
		}
		if (ps->pacing)
			sv_stats_add(ps->pacing, t - lo->t);
		if (st->rate && !ps->nominal_ns)
			ps->nominal_ns = SV_NSEC_PER_SEC * stream_step(st) / st->rate;
	}
	lo->idx = idx;
	lo->t = t;
}

/* A keyed event (its sample's second @sec, time @t on TAI) into its frame's entry of the window: seen at its
 * point, a duplicate, or after its window; gaps before it become placeholders. */
static void join_event(struct svr *r, unsigned fi, struct fileio *f, const struct sv_rec_event *ev, uint32_t sec,
		       int64_t t)
{
	unsigned p = ev->point;
	int gs = f->smap[ev->stream], guest = -1, slot;
	const struct svr_stream_info *st = &r->streams[gs];
	struct svr_point_stats *ps;
	int64_t idx, ref;
	struct jent *e;
	uint64_t key;

	if (!point_shared(p)) {
		guest = svr_file_guest(r, f, ev->guest);
		if (guest < 0) {
			r->tot.too_many_guests++;
			return;
		}
	}
	slot = slot_of(p, guest);
	if (slot < 0)
		return;
	if (guest >= 0)
		r->gseen[guest][gs] = true;	/* also for a frame flagged dropped or missing there */
	publisher_behind(r, st, ev, sec, t);
	r->src_mask[slot] |= 1ull << fi;
	r->host_mask[slot] |= 1ull << f->host_id;
	/* svtrace's "missing" (seen upstream, never here): the file was looking here; the join counts the loss */
	if (sv_rec_event_missing(ev))
		return;	/* (its key is not used: not re-derived either) */
	sec = sample_second(r, st, ev, sec, t);
	r->present[p][gslot(guest)] = true;
	ps = &r->pts[p][gslot(guest)];
	if (ev->flags & SV_REC_F_DROPPED) {
		ps->dropped++;
		if (!(ev->flags & SV_REC_F_SKIPPED))
			return;
	}
	key = make_key((unsigned)gs, sec, ev->smp_cnt);
	idx = sample_idx(st, sec, ev->smp_cnt);
	e = svr_window_lookup(r, key);
	if (!e) {
		int64_t max = r->max_idx[gs];

		if (!stream_sample_time(st, sec, ev->smp_cnt, &ref))
			ref = t;
		if (ref < r->now - r->cfg.window_ns && t < r->now - r->cfg.window_ns) {
			r->tot.too_late++;
			return;
		}
		/* frames nobody saw between the highest joined one and this one */
		if (st->rate && max != INT64_MIN && idx > max + stream_step(st))
			svr_fill_gap(r, (unsigned)gs, max, idx);
		e = svr_window_insert(r, key, t);
	}
	if (idx > r->max_idx[gs])
		r->max_idx[gs] = idx;
	if (ev->flags & SV_REC_F_SKIPPED) {
		e->flags |= ENT_SKIPPED;
		return;
	}
	if (e->seen & (1ull << slot)) {
		ps->duplicates++;
		return;
	}
	if (t - e->base > INT32_MAX || t - e->base < INT32_MIN) {
		r->tot.beyond_second++;
		return;
	}
	e->seen |= 1ull << slot;
	e->off[slot] = (int32_t)(t - e->base);
	ps->frames++;
	/* a replayed event arrived before those the order state holds (it only got its key later) */
	if (!r->replaying)
		order_pacing(r, (unsigned)gs, slot, ps, idx, t);
}

/* An event without a key (tai_sec 0, or flagged not synchronised because its tool did not know the rate
 * yet): a globally synchronised stream whose rate is known gets the key its tools would have given it
 * (sv_sample_align on its time, as svsub does); one whose rate is not known yet waits for it (bounded);
 * the rest are "not joinable" and their time is excluded from the loss count of their file. */
void svr_unkeyed_event(struct svr *r, unsigned fi, struct fileio *f, const struct sv_rec_event *ev, int64_t t)
{
	int gs = event_stream(f, ev);
	struct sv_sample_time sa;

	if (gs >= 0 && synch_global(f, ev->stream)) {
		uint32_t rate = r->streams[gs].rate;

		if (rate && ev->smp_cnt < rate &&
		    !sv_sample_align(t, ev->smp_cnt, rate, SV_SAMPLE_AHEAD_NS_DEFAULT, &sa) && sa.tai_sec > 0 &&
		    sa.tai_sec <= UINT32_MAX) {
			r->tot.rekeyed++;
			join_event(r, fi, f, ev, (uint32_t)sa.tai_sec, t);
			return;
		}
		if (!rate) {
			if (!r->pend)
				r->pend = malloc(PEND_MAX * sizeof(*r->pend));
			if (r->pend && r->pn < PEND_MAX) {
				struct pend *p = &r->pend[(r->phead + r->pn++) % PEND_MAX];

				p->ev = *ev;
				p->t = t;
				p->fi = fi;
				return;
			}
		}
	}
	r->tot.not_joinable++;
	svr_unkeyed_add(f, t);
}

/* Pending events older than the window (or all at the end): their rate never came in time. */
void svr_pend_expire(struct svr *r, bool all)
{
	while (r->pn && (all || r->pend[r->phead].t < r->now - r->cfg.window_ns)) {
		struct pend *p = &r->pend[r->phead];

		r->tot.not_joinable++;
		svr_unkeyed_add(r->f[p->fi], p->t);
		r->phead = (r->phead + 1) % PEND_MAX;
		r->pn--;
	}
}

/* An EVENT record: joined on its key, keyed from its stream's rate, or not joinable. */
void svr_on_event(struct svr *r, unsigned fi, struct fileio *f, const struct sv_rec_event *ev)
{
	unsigned p = ev->point;
	int64_t t = svr_to_tai(f, ev->t_ns);

	r->tot.events++;
	f->info.events++;
	if (t < f->first_ev_t)
		f->first_ev_t = t;
	if (t > f->last_ev_t)
		f->last_ev_t = t;
	if (ev->asdu != 0) {
		r->tot.later_asdus++;
		return;
	}
	if (p == SV_POINT_TS || p >= SVR_NPOINTS)
		return;	/* Ts is computed from the key, never recorded */
	if (event_stream(f, ev) < 0) {
		r->tot.not_joinable++;
		svr_unkeyed_add(f, t);
		return;
	}
	if (f->claim[ev->stream].cand)
		svr_rate_confirm(r, f, ev->stream, ev);
	if (!ev->tai_sec || (ev->flags & SV_REC_F_NOT_SYNCED)) {
		svr_unkeyed_event(r, fi, f, ev, t);
		return;
	}
	svr_rate_from_event(r, f, ev);
	join_event(r, fi, f, ev, ev->tai_sec, t);
}

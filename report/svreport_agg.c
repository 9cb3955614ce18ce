// SPDX-License-Identifier: Apache-2.0
/*
 * svreport's aggregation: when a frame leaves the join window, its hops (latency series, time bins),
 * its loss and its misses are counted.
 */
#include <stdlib.h>
#include <string.h>

#include "svreport_private.h"

static void bins_fold(struct svr *r)
{
	for (unsigned p = 0; p < NPAIRS; p++)
		for (unsigned g = 0; g < GSLOTS; g++) {
			struct svr_bin *b = r->bins[p][g];

			if (!b)
				continue;
			for (unsigned i = 0; i < SVR_TIME_BINS / 2; i++) {
				struct svr_bin m = b[2 * i];
				const struct svr_bin *o = &b[2 * i + 1];

				m.count += o->count;
				m.lost += o->lost;
				if (o->count && (o->min < m.min || !b[2 * i].count))
					m.min = o->min;
				if (o->count && (o->max > m.max || !b[2 * i].count))
					m.max = o->max;
				m.sum += o->sum;
				for (unsigned k = 0; k < SVR_COARSE_BINS; k++)
					m.coarse[k] += o->coarse[k];
				b[i] = m;
			}
			memset(&b[SVR_TIME_BINS / 2], 0, sizeof(*b) * (SVR_TIME_BINS / 2));
		}
	for (unsigned g = 0; g < GSLOTS; g++) {
		for (unsigned i = 0; i < SVR_TIME_BINS / 2; i++)
			r->lostbins[g][i] = r->lostbins[g][2 * i] + r->lostbins[g][2 * i + 1];
		memset(&r->lostbins[g][SVR_TIME_BINS / 2], 0, sizeof(uint64_t) * (SVR_TIME_BINS / 2));
	}
	r->bin_width *= 2;
}

static unsigned bin_of(struct svr *r, int64_t sec)
{
	if (!r->bins_started) {
		r->bins_started = true;
		r->bin_first = sec;
	}
	if (sec < r->bin_first)
		return 0;
	while ((uint64_t)(sec - r->bin_first) / r->bin_width >= SVR_TIME_BINS)
		bins_fold(r);
	return (unsigned)((sec - r->bin_first) / r->bin_width);
}

static unsigned coarse_of(int64_t v)
{
	uint64_t us = (uint64_t)(v / 1000);
	unsigned e, i;

	if (us < 1)
		return 0;
	/* 2 bins per octave from 1 us: [2^e, 1.5 * 2^e) and [1.5 * 2^e, 2^(e+1)) */
	e = 63u - (unsigned)__builtin_clzll(us);
	i = 1 + 2 * e + (e && (us >> (e - 1)) >= 3);
	return i < SVR_COARSE_BINS ? i : SVR_COARSE_BINS - 1;
}

struct svr_series *svr_series_get(struct svr *r, int pi, unsigned gsl, int stream)
{
	struct svr_series **sp = &r->ser[pi][gsl][stream + 1];

	if (!*sp)
		*sp = calloc(1, sizeof(**sp));
	return *sp;
}

void svr_series_free(struct svr_series *s)
{
	if (!s)
		return;
	free(s->hist);
	free(s->vals);
	free(s->sum_hist);
	free(s);
}

static void series_add(struct svr *r, struct svr_series *s, int64_t v, bool exact)
{
	if (!s->hist) {
		s->hist = malloc(sizeof(*s->hist));
		if (!s->hist)
			return;
		sv_stats_init(s->hist);
	}
	sv_stats_add(s->hist, v);
	if (!exact || s->inexact)
		return;
	/* a soak's frames are its windows' only, more of them the longer it runs: kept in histograms, so that
	 * the memory does not grow with the soak (svreport_soak.c) */
	if (r->soak) {
		s->inexact = true;
		goto drop;
	}
	if (v > INT32_MAX || v < INT32_MIN) {
		s->overflow = s->inexact = true;
		goto drop;
	}
	if (s->nvals == s->capvals) {
		uint64_t nc = s->capvals ? s->capvals * 2 : 4096;
		int32_t *nv;

		if (r->exact_used + (nc - s->capvals) > r->cfg.exact_limit) {
			s->inexact = true;
			goto drop;
		}
		nv = realloc(s->vals, nc * sizeof(*nv));
		if (!nv) {
			s->inexact = true;
			goto drop;
		}
		r->exact_used += nc - s->capvals;
		s->vals = nv;
		s->capvals = nc;
	}
	s->vals[s->nvals++] = (int32_t)v;
	return;
drop:
	r->tot.exact_dropped++;
	r->exact_used -= s->capvals;
	free(s->vals);
	s->vals = NULL;
	s->nvals = s->capvals = 0;
}

/* Whether (a, b) is a pair svreport keeps for this frame (bounded work and memory per frame). */
static bool pair_tracked(struct svr *r, unsigned a, unsigned b, const bool *v, unsigned first, unsigned last)
{
	unsigned k;

	/* consecutive in this frame's chain */
	for (k = a + 1; k < b && !v[k]; k++)
		;
	if (k == b)
		return true;
	if ((a == first && b == last) || (a == SV_POINT_T0 && b == last) ||
	    (a == SV_POINT_T1 && b == SV_POINT_T2B) || (a == SV_POINT_T0 && b == SV_POINT_T4) ||
	    (a == SV_POINT_TS && b == SV_POINT_T4))
		return true;
	for (k = 0; k < r->nbudget_pairs; k++)
		if (r->budget_pairs[k][0] == a && r->budget_pairs[k][1] == b)
			return true;
	return false;
}

static void hop_add(struct svr *r, unsigned a, unsigned b, int guest, unsigned gs, int64_t lat, unsigned bin)
{
	int pi = pair_idx(a, b);
	unsigned gsl = gslot(guest);
	struct svr_series *all, *one;
	struct svr_bin *bn;

	if (pi < 0)
		return;
	all = svr_series_get(r, pi, gsl, -1);
	one = svr_series_get(r, pi, gsl, (int)gs);
	if (!all || !one)
		return;
	series_add(r, all, lat, true);
	series_add(r, one, lat, false);
	if (lat < -r->cfg.clock_tolerance_ns)
		r->tot.negative++;
	if (lat >= SV_NSEC_PER_SEC)
		r->tot.beyond_second++;
	if (!r->bins[pi][gsl])
		r->bins[pi][gsl] = calloc(SVR_TIME_BINS, sizeof(struct svr_bin));
	bn = r->bins[pi][gsl];
	if (!bn)
		return;
	bn += bin;
	if (!bn->count || lat < bn->min)
		bn->min = lat;
	if (!bn->count || lat > bn->max)
		bn->max = lat;
	bn->count++;
	bn->sum += (double)lat;
	bn->coarse[coarse_of(lat < 0 ? 0 : lat)]++;
}

/* A frame the why-late list names leaves the window: the latency of the hop into the late point (from the
 * nearest earlier point seen, T1 at the earliest), as svtrace's late list gives it. */
static void late_fill(struct svr *r, unsigned gs, uint32_t sec, uint16_t smp, int g, const bool *vg,
		      const int64_t *t)
{
	for (unsigned i = 0; i < r->nlate; i++) {
		struct svr_late *l = &r->late[i];

		if (l->stream != gs || l->tai_sec != sec || l->smp_cnt != smp || l->guest != g || l->has_hop ||
		    l->point >= SVR_NPOINTS || l->point <= SV_POINT_T1 || !vg[l->point])
			continue;
		for (int a = l->point - 1; a >= SV_POINT_T1; a--)
			if (vg[a]) {
				l->hop_from = (uint8_t)a;
				l->hop_ns = t[l->point] - t[a];
				l->has_hop = true;
				break;
			}
	}
}

/* A frame leaving the window, as its hops are counted. */
struct fin {
	const struct jent *e;
	unsigned gs, bin;
	uint32_t sec;
	uint16_t smp;
	bool has_ts;
	int64_t t[SVR_NPOINTS];	/* TAI time at each point seen (T2a..T4: the guest being counted's) */
	bool v[SVR_NPOINTS];	/* seen at Ts, T0, T1 */
};

/* The first and the last of points 0 .. @n - 1 that @v says were seen (SVR_NPOINTS: none). */
static void seen_span(const bool *v, unsigned n, unsigned *first, unsigned *last)
{
	*first = *last = SVR_NPOINTS;
	for (unsigned k = 0; k < n; k++)
		if (v[k]) {
			if (*first == SVR_NPOINTS)
				*first = k;
			*last = k;
		}
}

/* The frame was last seen at @last before guest slot @gsl (GSH: before every guest), though a later point
 * was recording. */
static void lost_after(struct svr *r, const struct fin *fr, unsigned last, unsigned gsl)
{
	(*r->lostafter)[last][gsl][fr->gs]++;
	r->lostbins[gsl][fr->bin]++;
}

/* Hops between shared points (Ts, T0, T1), once per frame; the frame lost after the last of them seen when no
 * later point (of any guest) saw it though one was recording at the time. */
static void finalize_shared(struct svr *r, const struct fin *fr)
{
	unsigned first, last;

	seen_span(fr->v, SV_POINT_T1 + 1, &first, &last);
	for (unsigned a = 0; a <= SV_POINT_T1; a++)
		for (unsigned b = a + 1; b <= SV_POINT_T1; b++)
			if (fr->v[a] && fr->v[b] && pair_tracked(r, a, b, fr->v, first, last))
				hop_add(r, a, b, SVR_GUEST_SHARED, fr->gs, fr->t[b] - fr->t[a], fr->bin);
	if (last != SVR_NPOINTS) {
		uint64_t later = last == SV_POINT_TS ? ~0ull : last == SV_POINT_T0 ? ~1ull : ~3ull;
		int s0 = last == SV_POINT_TS ? 0 : last == SV_POINT_T0 ? 1 : 2;
		bool cov = false;

		if (!(fr->e->seen & later)) {
			for (int s = s0; s < NSLOTS && !cov; s++)
				cov = svr_covered(r, s, fr->has_ts ? fr->t[SV_POINT_TS] : fr->e->base);
			if (cov)
				lost_after(r, fr, last, GSH);
		}
	}
}

/* Guest @g's hops of the frame (from any earlier point), its loss toward the guest (nothing after `last`
 * although a later point was recording when the frame was at `last`) and its misses (a point between two
 * seen ones, recording, without a record of the frame). */
static void finalize_guest(struct svr *r, struct fin *fr, unsigned g)
{
	const struct jent *e = fr->e;
	unsigned first, last;
	bool vg[SVR_NPOINTS];
	int64_t *t = fr->t;

	/* expect_seen: a stream the guest has no record of is not one it takes (per-stream rules) */
	if (r->cfg.expect_seen && !r->gseen[g][fr->gs])
		return;
	memcpy(vg, fr->v, sizeof(vg));
	for (unsigned k = 0; k < 4; k++) {
		int s = 2 + (int)g * 4 + (int)k;

		vg[SV_POINT_T2A + k] = e->seen & (1ull << s);
		if (vg[SV_POINT_T2A + k])
			t[SV_POINT_T2A + k] = e->base + e->off[s];
	}
	seen_span(vg, SVR_NPOINTS, &first, &last);
	if (first == SVR_NPOINTS)
		return;
	for (unsigned b = SV_POINT_T2A; b < SVR_NPOINTS; b++) {
		if (!vg[b])
			continue;
		for (unsigned a = 0; a < b; a++)
			if (vg[a] && pair_tracked(r, a, b, vg, first, last))
				hop_add(r, a, b, (int)g, fr->gs, t[b] - t[a], fr->bin);
	}
	if (e->flags & ENT_LATE)
		late_fill(r, fr->gs, fr->sec, fr->smp, (int)g, vg, t);
	if (last < SV_POINT_T4) {
		bool cov = false;

		for (unsigned p = last + 1; p < SVR_NPOINTS && !cov; p++) {
			int s = slot_of(p, (int)g);

			cov = s >= 0 && svr_covered(r, s, t[last]);
		}
		if (cov) {
			lost_after(r, fr, last, g);
			if (r->bins_started) {
				int pi = pair_idx(last, SV_POINT_T4);

				if (pi >= 0 && r->bins[pi][g])
					r->bins[pi][g][fr->bin].lost++;
			}
		}
	}
	for (unsigned p = first + 1; p < last; p++) {
		int s = slot_of(p, (int)g);

		if (!vg[p] && s >= 0 && svr_covered(r, s, t[first])) {
			(*r->missing)[p][point_shared(p) ? GSH : g][fr->gs]++;
			r->pts[p][point_shared(p) ? GSH : g].missing++;
		}
	}
}

/* A frame leaves the window: its hops, its loss and its misses are counted. */
void svr_finalize(struct svr *r, const struct jent *e)
{
	struct fin fr = {.e = e, .gs = (unsigned)(e->key >> 48) - 1, .sec = (uint32_t)(e->key >> 16),
			 .smp = (uint16_t)e->key};
	const struct svr_stream_info *st = &r->streams[fr.gs];

	if (e->flags & ENT_SKIPPED) {
		r->tot.skipped++;
		return;
	}
	r->tot.frames++;
	fr.bin = bin_of(r, fr.sec);
	fr.has_ts = fr.v[SV_POINT_TS] = stream_sample_time(st, fr.sec, fr.smp, &fr.t[SV_POINT_TS]);
	for (unsigned k = 0; k < 2; k++)
		if (e->seen & (1ull << k)) {
			fr.t[SV_POINT_T0 + k] = e->base + e->off[k];
			fr.v[SV_POINT_T0 + k] = true;
		}
	finalize_shared(r, &fr);
	for (unsigned g = 0; g < r->nguests; g++)
		finalize_guest(r, &fr, g);
	if (r->any_unrec)
		svr_notrec_frame(r, e, fr.has_ts ? fr.t[SV_POINT_TS] : e->base);
}

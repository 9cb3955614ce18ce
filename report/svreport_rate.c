// SPDX-License-Identifier: Apache-2.0
/*
 * svreport's stream rates: from a tool's STREAM records (a rate learned mid-run confirmed first:
 * sv_rate.h's claims) or from a record carrying its sample time; what the join does once it is known.
 */
#include <stdlib.h>
#include <string.h>

#include "svreport_private.h"

/* Global stream of a STREAM record (by svID), learning its rate and ASDUs from whoever knows them. */
void svr_define_stream(struct svr *r, struct fileio *f, const struct sv_rec_stream *s)
{
	unsigned gidx;

	for (gidx = 0; gidx < r->nstreams; gidx++)
		if (!strcmp(r->streams[gidx].svid, s->svid))
			break;
	if (gidx == r->nstreams) {
		if (r->nstreams >= SVR_MAX_STREAMS)
			return;	/* its events count as not joinable */
		snprintf(r->streams[gidx].svid, sizeof(r->streams[0].svid), "%s", s->svid);
		r->streams[gidx].appid = s->appid;
		r->nstreams++;
	}
	if (s->asdus && !r->streams[gidx].asdus)
		r->streams[gidx].asdus = s->asdus;
	if (s->stream < SV_REC_MAX_STREAMS)
		f->smap[s->stream] = (int16_t)gidx;
	/* rate 0 means unknown (svtrace, svsub on 9-2LE until the smpCnt wrap); the first rate known wins
	 * (svr_rate_learned). A tool that learns it mid-run defines the stream again: a candidate until the
	 * stream's next frame in this file (svr_rate_confirm, sv_rate.h's claims). */
	if (s->stream < SV_REC_MAX_STREAMS)
		svr_rate_learned(r, gidx, sv_rate_claim_define(&f->claim[s->stream], s->sample_rate));
	else
		svr_rate_learned(r, gidx, s->sample_rate);
}

/* The next frame of a local stream after a learned rate was defined confirms or drops it (adopted, what was
 * measured so far is rescaled). svtrace's "missing" markers do not count: they are written when a frame is
 * given up on, long after it was sampled, and carry that old smpCnt (which can fake a wrap: a learned rate
 * that the next real frame withdraws). @ev NULL: the file ended with the rate standing, adopted. */
void svr_rate_confirm(struct svr *r, struct fileio *f, uint32_t stream, const struct sv_rec_event *ev)
{
	uint32_t rate;

	if (ev && sv_rec_event_missing(ev))
		return;
	rate = ev ? sv_rate_claim_frame(&f->claim[stream], ev->smp_cnt) : sv_rate_claim_end(&f->claim[stream]);
	if (f->smap[stream] >= 0)
		svr_rate_learned(r, (unsigned)f->smap[stream], rate);
}

/* Stream @gs has rate @rate (0: unknown). The first rate known wins: a later one, even a different one, is
 * ignored. When this one is the first, the order state measured on the (sec << 16) + smp scale moves
 * to sec * rate + smp (else every later frame looks reordered and no gap is ever seen), the gaps between
 * the frames still in the window become placeholders (loss before the rate was known), and the events
 * that waited for the rate are keyed and joined. */
void svr_rate_learned(struct svr *r, unsigned gs, uint32_t rate)
{
	const struct svr_stream_info *st = &r->streams[gs];
	unsigned step = stream_step(st);
	int64_t *idx;
	uint64_t n = 0;

	if (!rate || st->rate)
		return;
	r->streams[gs].rate = rate;
	r->max_idx[gs] = idx_rescale(r->max_idx[gs], st->rate);
	for (unsigned k = 0; k < NSLOTS; k++)
		r->last[gs][k].idx = idx_rescale(r->last[gs][k].idx, st->rate);
	/* replay in arrival order; events of other streams go back in the queue */
	r->replaying = true;
	for (uint64_t i = 0, n0 = r->pn; i < n0; i++) {
		struct pend p = r->pend[r->phead];

		r->phead = (r->phead + 1) % PEND_MAX;
		r->pn--;
		if (r->f[p.fi]->smap[p.ev.stream] == (int16_t)gs)
			svr_unkeyed_event(r, p.fi, r->f[p.fi], &p.ev, p.t);
		else
			r->pend[(r->phead + r->pn++) % PEND_MAX] = p;
	}
	r->replaying = false;
	idx = r->rn ? malloc(r->rn * sizeof(*idx)) : NULL;
	if (idx) {
		for (uint64_t i = 0; i < r->rn; i++) {
			const struct jent *e = &r->ring[(r->rhead + i) & (r->rcap - 1)];

			if ((unsigned)(e->key >> 48) - 1 == gs && (uint16_t)e->key < st->rate)
				idx[n++] = sample_idx(st, (uint32_t)(e->key >> 16), (uint16_t)e->key);
		}
		qsort(idx, n, sizeof(*idx), svr_cmp_i64);
		/* fill_gap inserts into the ring: the indexes were copied first */
		for (uint64_t i = 1; i < n; i++)
			if (idx[i] > idx[i - 1] + step)
				svr_fill_gap(r, gs, idx[i - 1], idx[i]);
		free(idx);
	}
}

// SPDX-License-Identifier: Apache-2.0
/*
 * svreport's join window: the frames of the last window_ns, in arrival order (a FIFO ring) and by
 * key (stream, TAI second, smpCnt: an open-addressing hash of ring positions); placeholders for the
 * frames nobody saw, and the count of outages too long to hold.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "svreport_private.h"

static uint64_t hash64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ULL;
	k ^= k >> 33;
	return k;
}

int svr_window_alloc(struct svr *r, uint64_t cap)
{
	struct jent *ring = calloc(cap, sizeof(*ring));
	uint32_t *hash = calloc(cap * 2, sizeof(*hash));

	if (!ring || !hash) {
		free(ring);
		free(hash);
		return -ENOMEM;
	}
	/* copy in FIFO order to positions 0..n-1 and rebuild the hash */
	for (uint64_t i = 0; i < r->rn; i++) {
		const struct jent *e = &r->ring[(r->rhead + i) & (r->rcap - 1)];
		uint64_t h = hash64(e->key) & (cap * 2 - 1);

		ring[i] = *e;
		while (hash[h])
			h = (h + 1) & (cap * 2 - 1);
		hash[h] = (uint32_t)(i + 1);
	}
	free(r->ring);
	free(r->hash);
	r->ring = ring;
	r->hash = hash;
	r->rcap = cap;
	r->hmask = cap * 2 - 1;
	r->rhead = 0;
	return 0;
}

void svr_window_evict_head(struct svr *r)
{
	struct jent *e = &r->ring[r->rhead];
	uint64_t i = hash64(e->key) & r->hmask, j;

	while (r->hash[i] && r->hash[i] - 1 != r->rhead)
		i = (i + 1) & r->hmask;
	svr_finalize(r, e);
	/* backward-shift deletion keeps linear probing correct without tombstones */
	r->hash[i] = 0;
	j = i;
	for (;;) {
		uint64_t k;

		j = (j + 1) & r->hmask;
		if (!r->hash[j])
			break;
		k = hash64(r->ring[r->hash[j] - 1].key) & r->hmask;
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		r->hash[i] = r->hash[j];
		r->hash[j] = 0;
		i = j;
	}
	r->rhead = (r->rhead + 1) & (r->rcap - 1);
	r->rn--;
}


struct jent *svr_window_lookup(struct svr *r, uint64_t key)
{
	uint64_t i = hash64(key) & r->hmask;

	while (r->hash[i]) {
		struct jent *e = &r->ring[r->hash[i] - 1];

		if (e->key == key)
			return e;
		i = (i + 1) & r->hmask;
	}
	return NULL;
}

struct jent *svr_window_insert(struct svr *r, uint64_t key, int64_t base)
{
	uint64_t pos, i;
	struct jent *e;

	if (r->rn == r->rcap) {
		if (r->rcap * 2 <= r->cfg.max_frames && r->rcap < (1u << 30) && !svr_window_alloc(r, r->rcap * 2)) {
			/* grown */
		} else {
			r->tot.window_full++;
			svr_window_evict_head(r);
		}
	}
	pos = (r->rhead + r->rn) & (r->rcap - 1);
	e = &r->ring[pos];
	memset(e, 0, sizeof(*e));
	e->key = key;
	e->base = base;
	i = hash64(key) & r->hmask;
	while (r->hash[i])
		i = (i + 1) & r->hmask;
	r->hash[i] = (uint32_t)(pos + 1);
	r->rn++;
	return e;
}

int svr_cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static int64_t idx_time(const struct svr_stream_info *st, int64_t idx)
{
	return sv_sample_time_ns((uint32_t)(idx / st->rate), (uint32_t)(idx % st->rate), st->rate);
}

/* The first j in 1..n + 1 whose frame from + j * step has its sample time at or after @t (sample times
 * grow with the index). */
static uint64_t gap_first_at(const struct svr_stream_info *st, int64_t from, uint64_t n, unsigned step, int64_t t)
{
	uint64_t lo = 1, hi = n + 1;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (idx_time(st, from + (int64_t)(mid * step)) >= t)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/*
 * The frames of stream @gs after @from and before @to (sample indexes) that nobody saw, too many to hold in
 * the window: cut at every bound of the files' spans and unwritten stretches, each piece's frames are
 * counted exactly (sample times from the indexes) as lost where some file was recording, as not recorded
 * (at the points of the files whose stretch it is) where the only files there had not written their
 * records, and not at all where no file was. Returns the lost ones.
 */
static uint64_t outage_count(struct svr *r, unsigned gs, int64_t from, int64_t to)
{
	const struct svr_stream_info *st = &r->streams[gs];
	unsigned step = stream_step(st);
	uint64_t n = (uint64_t)(to - from) / step - 1, lost = 0, m = 0;
	int64_t cut[2 + 2 * SVR_MAX_FILES * (1 + UNREC_MAX)];
	unsigned nc = 0;

	for (unsigned s = 0; s < NSLOTS; s++)
		m |= r->src_mask[s];
	cut[nc++] = idx_time(st, from + step);
	cut[nc++] = idx_time(st, to);
	for (uint64_t mm = m; mm; mm &= mm - 1) {
		const struct fileio *f = r->f[__builtin_ctzll(mm)];
		int64_t fs, fe;

		svr_file_span(f, &fs, &fe);
		cut[nc++] = fs;
		cut[nc++] = fe == INT64_MAX ? fe : fe + 1;
		for (unsigned i = 0; i < f->nunrec; i++) {
			cut[nc++] = f->unrec[i][0];
			cut[nc++] = f->unrec[i][1] == INT64_MAX ? INT64_MAX : f->unrec[i][1] + 1;
		}
	}
	qsort(cut, nc, sizeof(cut[0]), svr_cmp_i64);
	for (unsigned k = 0; k + 1 < nc; k++) {
		int64_t t = cut[k];
		uint64_t cnt;
		bool yes = false, unrec = false;

		if (cut[k + 1] <= t || t < cut[0])
			continue;
		cnt = gap_first_at(st, from, n, step, cut[k + 1]) - gap_first_at(st, from, n, step, t);
		if (!cnt)
			continue;
		for (uint64_t mm = m; mm && !yes; mm &= mm - 1) {
			const struct fileio *f = r->f[__builtin_ctzll(mm)];
			int64_t fs, fe;

			svr_file_span(f, &fs, &fe);
			if (f->soak || t < fs || t > fe)
				continue;
			if (svr_unrec_at(f, t, SVR_NPOINTS))
				unrec = true;
			else
				yes = true;
		}
		if (yes) {
			lost += cnt;
			continue;
		}
		if (!unrec)
			continue;
		r->tot.not_recorded += cnt;
		for (int s = 0; s < 2 + 4 * (int)r->nguests; s++) {
			bool here = false;

			for (uint64_t mm = r->src_mask[s]; mm && !here; mm &= mm - 1) {
				const struct fileio *f = r->f[__builtin_ctzll(mm)];
				int64_t fs, fe;

				svr_file_span(f, &fs, &fe);
				here = t >= fs && t <= fe && svr_unrec_at(f, t, slot_point(s));
			}
			if (here)
				r->pts[slot_point(s)][gslot(slot_guest(s))].not_recorded += cnt;
		}
	}
	return lost;
}

/* Placeholders for the samples nobody saw between @from and @to (exclusive, sample indexes on the rate
 * scale), so that a gap is counted as loss exactly and a late (reordered) arrival fills it. A gap longer
 * than the window is an outage: counted where some file was recording, not held. */
void svr_fill_gap(struct svr *r, unsigned gs, int64_t from, int64_t to)
{
	const struct svr_stream_info *st = &r->streams[gs];
	unsigned step = stream_step(st);
	uint64_t n = (uint64_t)(to - from) / step - 1;
	uint64_t limit = (uint64_t)(r->cfg.window_ns / SV_NSEC_PER_MSEC) * st->rate / 1000 / step;

	if (n > limit) {
		uint64_t nc = outage_count(r, gs, from, to);

		r->tot.outage_lost += nc;
		for (unsigned g = 0; g <= GSH; g++)
			(*r->lostafter)[SV_POINT_TS][g][gs] += nc;
		return;
	}
	for (int64_t k = from + step; k < to; k += step) {
		uint32_t ks = (uint32_t)(k / st->rate), kc = (uint32_t)(k % st->rate);
		struct jent *ph;

		if (svr_window_lookup(r, make_key(gs, ks, (uint16_t)kc)))
			continue;
		ph = svr_window_insert(r, make_key(gs, ks, (uint16_t)kc), sv_sample_time_ns(ks, kc, st->rate));
		ph->flags = ENT_PLACEHOLDER;
	}
}

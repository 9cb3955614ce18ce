// SPDX-License-Identifier: Apache-2.0
/* svtrace's hop log and in-BPF histograms: see svtrace_hlog.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sv_stats.h"
#include "svtrace_corr.h"
#include "svtrace_hlog.h"
#include "svtrace_streams.h"

_Static_assert(SVTRACE_HIST_SUB_BITS == SV_STATS_SUB_BITS, "BPF histograms use sv_stats' buckets");
_Static_assert(SVTRACE_HOPS == SVTRACE_HOP_NR, "hops");

/*
 * A stage: the hop log's values of one (stream, port, hop) since the last merge, in sv_stats' own
 * buckets (exact: count, sum, min, max). The log holds only values below SVTRACE_HIST_LIMIT_NS, so
 * SVTRACE_HIST_BUCKETS buckets; 32-bit counts (merged every SVTRACE_HIST_MERGE_S s at most: far from
 * 2^32). Each drain touches the stages' lines again after the traffic evicted them: half the octets of
 * an sv_stats' 64-bit buckets is half the misses.
 */
struct hstage {
	uint64_t count, sum;
	uint32_t min, max, top, pad;
	uint32_t bucket[SVTRACE_HIST_BUCKETS];
};

struct svtrace_hlog {
	struct svtrace_hlog_cfg cfg;
	struct hstage *stage[SVTRACE_MAX_STREAMS];	/* by BPF id: [(port - 1) * SVTRACE_HOPS + hop] */
	struct svtrace_hist *hist_prev;			/* what was merged already */
	struct sv_stats *tmp;				/* one delta at a time */
	uint64_t copies;				/* copies read from the log */
	uint64_t filtered;
};

int svtrace_hlog_new(struct svtrace_hlog **out, const struct svtrace_hlog_cfg *cfg)
{
	struct svtrace_hlog *h;

	if (!cfg->nports || cfg->nports >= SVTRACE_MAX_PORTS ||
	    (cfg->log && (!cfg->entries || (cfg->entries & (cfg->entries - 1)))))
		return -EINVAL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->cfg = *cfg;
	/* Allocated once, here: nothing on the drain's path (pages of streams never seen stay untouched). */
	h->hist_prev = cfg->hist ? calloc(cfg->nhist, sizeof(*h->hist_prev)) : NULL;
	h->tmp = malloc(sizeof(*h->tmp));
	if ((cfg->hist && !h->hist_prev) || !h->tmp) {
		svtrace_hlog_free(h);
		return -ENOMEM;
	}
	*out = h;
	return 0;
}

void svtrace_hlog_free(struct svtrace_hlog *h)
{
	if (!h)
		return;
	for (unsigned i = 0; i < SVTRACE_MAX_STREAMS; i++)
		free(h->stage[i]);
	free(h->hist_prev);
	free(h->tmp);
	free(h);
}

uint64_t svtrace_hlog_copies(const struct svtrace_hlog *h)
{
	return h->copies;
}

uint64_t svtrace_hlog_filtered(const struct svtrace_hlog *h)
{
	return h->filtered;
}

/*
 * The staging histograms of BPF stream @id, allocated the first time it has a log entry (not per copy). A
 * drain touches the histogram lines that the traffic evicted since the last one: one histogram per
 * (stream, port, hop) here, merged into the stream's and the port's at each merge (svtrace_hlog_merge),
 * halves the lines of adding each value to both. NULL if the allocation failed.
 */
static struct hstage *stage_of(struct svtrace_hlog *h, uint32_t id)
{
	if (!h->stage[id])
		h->stage[id] = calloc(h->cfg.nports * SVTRACE_HOPS, sizeof(*h->stage[id]));
	return h->stage[id];
}

/* One value (< SVTRACE_HIST_LIMIT_NS) into a stage. */
static inline void stage_add(struct hstage *g, uint32_t v)
{
	uint32_t i = sv_stats_index(v);

	g->bucket[i]++;
	if (i >= g->top)
		g->top = i + 1;
	if (!g->count++ || v < g->min)
		g->min = v;
	if (v > g->max)
		g->max = v;
	g->sum += v;
}

/* A taken copy from the hop log without a stage: its hops only (no names, no record: --record has no
 * log). Times relative to a T2a of 2^32 (any base: only the differences count). */
static void hop_copy(struct svtrace_hlog *h, const struct svtrace_stream *s, unsigned port, uint32_t d1,
		     uint32_t d2)
{
	const int64_t t2a = 1ll << 32;
	struct svtrace_copy_obs o = { .outcome = SVTRACE_COPY_TAKEN, .stream = (unsigned)s->corr, .port = port,
				      .t1_ns = d1 == SVTRACE_HLOG_NO_T1 ? 0 : t2a - d1, .t2a_ns = t2a,
				      .t2b_ns = t2a + d2 };

	svtrace_corr_copy(h->cfg.corr, &o);
}

/* Each entry is a taken copy, accounted as the copy's event would be. */
void svtrace_hlog_drain(struct svtrace_hlog *h)
{
	struct svtrace_streams *ss = h->cfg.streams;
	const uint32_t entries = h->cfg.entries;
	const unsigned np = h->cfg.nports;

	if (!h->cfg.log)
		return;
	for (unsigned cpu = 0; cpu < h->cfg.ncpus; cpu++) {
		volatile struct svtrace_hlog_pos *hp = &h->cfg.pos[cpu];
		uint64_t head = __atomic_load_n(&hp->head, __ATOMIC_ACQUIRE), tail = hp->tail;

		for (; tail < head; tail++) {
			uint64_t w = h->cfg.log[(size_t)cpu * entries + (tail & (entries - 1))].w;
			uint32_t d1 = svtrace_hent_d1(w), d2 = svtrace_hent_d2(w), p = svtrace_hent_port(w);
			uint32_t id = svtrace_hent_stream(w);
			struct svtrace_stream *s = svtrace_streams_of(ss, id);
			struct hstage *st;

			if (!s) {
				h->filtered++;
				continue;
			}
			/* Values within the stages' range (BPF logs no others; checked, not trusted) */
			if (p >= 1 && p <= np && d2 < SVTRACE_HIST_LIMIT_NS &&
			    (d1 == SVTRACE_HLOG_NO_T1 || d1 + (uint64_t)d2 < SVTRACE_HIST_LIMIT_NS) &&
			    (st = stage_of(h, id))) {
				st += (p - 1) * SVTRACE_HOPS;
				if (d1 != SVTRACE_HLOG_NO_T1) {
					stage_add(&st[SVTRACE_HOP_T1_T2A], d1);
					stage_add(&st[SVTRACE_HOP_T1_T2B], d1 + d2);
				}
				stage_add(&st[SVTRACE_HOP_T2A_T2B], d2);
				continue;
			}
			/* No stage (bad port: counted there; a value out of range; no memory): as the copy's
			 * event would be */
			hop_copy(h, s, p, d1, d2);
		}
		h->copies += tail - hp->tail;
		__atomic_store_n(&hp->tail, tail, __ATOMIC_RELEASE);
	}
}

/* Latencies accounted elsewhere (a stage, a BPF histogram's growth) into the port's and stream @s's hop. */
static void hop_merge(struct svtrace_hlog *h, const struct svtrace_stream *s, unsigned port, unsigned hop,
		      const struct sv_stats *lat)
{
	svtrace_corr_hop_merge(h->cfg.corr, -1, port, hop, lat);
	if (s)
		svtrace_corr_hop_merge(h->cfg.corr, s->corr, port, hop, lat);
}

/* Adds the staged values to the stream's and the port's statistics (through h->tmp), and empties the
 * stages. */
static void stage_merge(struct svtrace_hlog *h)
{
	struct svtrace_streams *ss = h->cfg.streams;
	struct sv_stats *st = h->tmp;

	for (uint32_t id = 0; id < ss->nids && id < SVTRACE_MAX_STREAMS; id++) {
		const struct svtrace_stream *s = &ss->s[id];

		if (!h->stage[id] || s->corr < 0)
			continue;
		for (unsigned k = 0; k < h->cfg.nports * SVTRACE_HOPS; k++) {
			struct hstage *g = &h->stage[id][k];

			if (!g->count)
				continue;
			sv_stats_init(st);
			for (uint32_t i = 0; i < g->top; i++)
				st->bucket[i] = g->bucket[i];
			st->top = g->top;
			st->count = g->count;
			st->min = g->min;
			st->max = g->max;
			st->sum_lo = g->sum;
			hop_merge(h, s, k / SVTRACE_HOPS + 1, k % SVTRACE_HOPS, st);
			memset(g->bucket, 0, g->top * sizeof(g->bucket[0]));
			g->count = g->sum = 0;
			g->min = g->max = g->top = 0;
		}
	}
}

/*
 * The growth of BPF histogram @k since the last merge (32-bit buckets: modulo 2^32), as an sv_stats in
 * h->tmp. The buckets are sv_stats' own; each bucket's growth is added at its middle (the sum: BPF keeps
 * none); min/max: the exact running ones where they fall in the delta's first/last bucket, else that
 * bucket's bound.
 * Returns the delta's count.
 */
static uint64_t hist_delta(struct svtrace_hlog *h, unsigned k)
{
	volatile struct svtrace_hist *c = &h->cfg.hist[k];
	struct svtrace_hist *pv = &h->hist_prev[k];
	struct sv_stats *st = h->tmp;
	int64_t cmin = c->nmin ? (int64_t)~c->nmin : -1, cmax = (int64_t)c->max, lo, hi;
	uint32_t first = UINT32_MAX, last = 0;

	sv_stats_init(st);
	for (uint32_t i = 0; i < SVTRACE_HIST_BUCKETS; i++) {
		uint32_t cur = c->bucket[i], d = cur - pv->bucket[i];

		if (!d)
			continue;
		pv->bucket[i] = cur;
		lo = sv_stats_bucket_lo(i);
		sv_stats_add_n(st, lo + (sv_stats_bucket_hi(i) - lo) / 2, d);
		if (first == UINT32_MAX)
			first = i;
		last = i;
	}
	if (!st->count)
		return 0;
	lo = sv_stats_bucket_lo(first);
	st->min = cmin >= lo && cmin <= sv_stats_bucket_hi(first) ? cmin : lo;
	hi = sv_stats_bucket_hi(last);
	st->max = cmax >= sv_stats_bucket_lo(last) && cmax <= hi ? cmax : hi;
	return st->count;
}

void svtrace_hlog_merge(struct svtrace_hlog *h)
{
	struct svtrace_streams *ss = h->cfg.streams;
	unsigned np = h->cfg.nports;

	stage_merge(h);
	if (!h->cfg.hist)
		return;
	for (uint32_t id = 0; id < ss->nids && id < SVTRACE_MAX_STREAMS; id++) {
		const struct svtrace_stream *s = svtrace_streams_of(ss, id);

		for (unsigned p = 1; p <= np; p++) {
			for (unsigned hop = 0; hop < SVTRACE_HOPS; hop++) {
				unsigned k = (id * np + p - 1) * SVTRACE_HOPS + hop;

				if (k >= h->cfg.nhist || !hist_delta(h, k))
					continue;
				hop_merge(h, s, p, hop, h->tmp);
			}
		}
	}
}

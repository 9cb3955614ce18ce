// SPDX-License-Identifier: Apache-2.0
/*
 * svreport's results: hop lists and hop results (exact percentiles while the values were kept),
 * points, time bins, why-late, drops and totals, for the outputs and the verdict.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "svreport_private.h"

const uint8_t svr_compare_hops[SVR_NCOMPARE][2] = {
	{SV_POINT_T1, SV_POINT_T2B}, {SV_POINT_T2B, SV_POINT_T3}, {SV_POINT_T3, SV_POINT_T4}, {SV_POINT_T0, SV_POINT_T4},
	{SV_POINT_T0, SV_POINT_T3},
};

/* Frames of guest slot @gsl whose last point lies in [@from, @to): of stream @stream, or of every stream
 * when @stream is negative. */
static uint64_t lost_sum(const struct svr *r, unsigned from, unsigned to, unsigned gsl, int stream)
{
	uint64_t n = 0;

	for (unsigned p = from; p < to; p++)
		for (unsigned st = 0; st < r->nstreams; st++)
			if (stream < 0 || (unsigned)stream == st)
				n += (*r->lostafter)[p][gsl][st];
	return n;
}

bool svr_guest_silent(const struct svr *r, unsigned g, uint64_t *lost)
{
	*lost = 0;
	if (g >= r->nguests)
		return false;
	for (unsigned p = SV_POINT_T2A; p < SVR_NPOINTS; p++)
		if (r->pts[p][g].frames)
			return false;
	*lost = lost_sum(r, 0, SVR_NPOINTS, g, -1);
	return *lost > 0;
}

/* The hosts whose records give point @p (for @guest); Ts is the publisher's (T0's) when known. */
static uint64_t point_hosts(const struct svr *r, unsigned p, int guest)
{
	int s = slot_of(p == SV_POINT_TS ? SV_POINT_T0 : p, guest);

	return s >= 0 ? r->host_mask[s] : 0;
}

bool svr_hop_cross_host(const struct svr *r, unsigned from, unsigned to, int guest)
{
	uint64_t a = point_hosts(r, from, guest), b = point_hosts(r, to, guest), m = a | b;

	if (r->nhosts <= 1)
		return false;
	if (!a || !b)
		return true;	/* a point nobody's events place on a host (Ts without T0) */
	return (m & (m - 1)) != 0;
}

unsigned svr_nstreams(const struct svr *r)
{
	return r->nstreams;
}

const struct svr_stream_info *svr_stream(const struct svr *r, unsigned s)
{
	return s < r->nstreams ? &r->streams[s] : NULL;
}

bool svr_point_present(const struct svr *r, unsigned point, int guest)
{
	if (point >= SVR_NPOINTS)
		return false;
	if (point == SV_POINT_TS) {
		for (unsigned s = 0; s < r->nstreams; s++)
			if (r->streams[s].rate)
				return true;
		return r->present[SV_POINT_TS][GSH] || (guest >= 0 && r->present[SV_POINT_TS][guest]);
	}
	return r->present[point][point_shared(point) ? GSH : gslot(guest)];
}

const struct svr_point_stats *svr_point(const struct svr *r, unsigned point, int guest)
{
	if (point >= SVR_NPOINTS)
		return NULL;
	return &r->pts[point][point_shared(point) ? GSH : gslot(guest)];
}

bool svr_point_shown(const struct svr *r, unsigned point, int guest)
{
	return point != SV_POINT_TS && point_shared(point) == (guest < 0) && svr_point_present(r, point, guest);
}

bool svr_point_anywhere(const struct svr *r, unsigned point)
{
	bool any = svr_point_present(r, point, SVR_GUEST_SHARED);

	for (unsigned g = 0; g < r->nguests && !any; g++)
		any = svr_point_present(r, point, (int)g);
	return any;
}

static bool hop_has_data(const struct svr *r, unsigned a, unsigned b, int guest)
{
	int pi = pair_idx(a, b);
	const struct svr_series *s;

	if (pi < 0)
		return false;
	s = r->ser[pi][gslot(guest)][0];
	return s && ((s->hist && (s->hist->count || s->hist->negative)) || s->sum_records || s->hist_records);
}

static unsigned add_pair(uint8_t (*pairs)[2], unsigned n, unsigned max, unsigned a, unsigned b)
{
	for (unsigned i = 0; i < n; i++)
		if (pairs[i][0] == a && pairs[i][1] == b)
			return n;
	if (n < max) {
		pairs[n][0] = (uint8_t)a;
		pairs[n][1] = (uint8_t)b;
		n++;
	}
	return n;
}

unsigned svr_hop_list(const struct svr *r, int guest, uint8_t (*pairs)[2], unsigned max)
{
	unsigned pts[SVR_NPOINTS], np = 0, n = 0, top = guest < 0 ? SV_POINT_T1 : SV_POINT_T4;

	for (unsigned p = 0; p <= top; p++)
		if (svr_point_present(r, p, guest))
			pts[np++] = p;
	/* chain of consecutive present points; a guest's list leaves the shared hops to the shared list */
	for (unsigned i = 0; i + 1 < np; i++) {
		if (guest >= 0 && pts[i + 1] <= SV_POINT_T1)
			continue;
		if (hop_has_data(r, pts[i], pts[i + 1], guest))
			n = add_pair(pairs, n, max, pts[i], pts[i + 1]);
	}
	if (np >= 2) {
		unsigned last = pts[np - 1];

		if (guest < 0 || last >= SV_POINT_T2A) {
			if (hop_has_data(r, pts[0], last, guest))
				n = add_pair(pairs, n, max, pts[0], last);
			if (pts[0] < SV_POINT_T0 && last > SV_POINT_T0 && hop_has_data(r, SV_POINT_T0, last, guest))
				n = add_pair(pairs, n, max, SV_POINT_T0, last);
		}
		if (guest >= 0 && hop_has_data(r, SV_POINT_T1, SV_POINT_T2B, guest))
			n = add_pair(pairs, n, max, SV_POINT_T1, SV_POINT_T2B);
	}
	/* a guest point no frame reached (a port whose link is down): the hop into it, with its loss */
	for (unsigned i = 1; guest >= 0 && i < np; i++)
		if (pts[i] >= SV_POINT_T2A && !hop_has_data(r, pts[i - 1], pts[i], guest) &&
		    lost_sum(r, pts[i - 1], pts[i], (unsigned)gslot(guest), -1))
			n = add_pair(pairs, n, max, pts[i - 1], pts[i]);
	for (unsigned k = 0; k < r->nbudget_pairs; k++) {
		unsigned a = r->budget_pairs[k][0], b = r->budget_pairs[k][1];

		if ((guest < 0) == (b <= SV_POINT_T1) && hop_has_data(r, a, b, guest))
			n = add_pair(pairs, n, max, a, b);
	}
	/* every hop that only per-second summaries describe */
	for (unsigned a = 0; a < SVR_NPOINTS; a++)
		for (unsigned b = a + 1; b < SVR_NPOINTS; b++) {
			int pi = pair_idx(a, b);
			const struct svr_series *s = r->ser[pi][gslot(guest)][0];

			if ((guest < 0) != (b <= SV_POINT_T1))
				continue;
			if (s && (s->sum_records || s->hist_records) && !(s->hist && s->hist->count))
				n = add_pair(pairs, n, max, a, b);
		}
	return n;
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return (x > y) - (x < y);
}

static void exact_summary(struct svr_series *s, struct sv_stats_summary *out)
{
	uint64_t n = s->nvals;
	/* quantiles in 1/10000: integer nearest rank ceil(q * n / 10000), 1-based (sv_stats.h) */
	static const uint64_t q[4] = {5000, 9900, 9990, 9999};
	int64_t *pv[4] = {&out->p50, &out->p99, &out->p999, &out->p9999};

	/* sorting in place is fine: the series is complete when results are read */
	qsort(s->vals, n, sizeof(*s->vals), cmp_i32);
	memset(out, 0, sizeof(*out));
	out->count = n;
	out->exact = true;
	out->min = s->vals[0];
	out->max = s->vals[n - 1];
	for (unsigned i = 0; i < 4; i++) {
		uint64_t rank = (q[i] * n + 9999) / 10000;

		if (rank < 1)
			rank = 1;
		*pv[i] = s->vals[rank - 1];
	}
	out->negative = s->hist ? s->hist->negative : 0;
}

int svr_hop_get(struct svr *r, unsigned from, unsigned to, int guest, int stream, struct svr_hop *out)
{
	int pi = pair_idx(from, to);
	struct svr_series *s, *all;
	unsigned gsl = gslot(guest);

	memset(out, 0, sizeof(*out));
	out->from = (uint8_t)from;
	out->to = (uint8_t)to;
	out->guest = guest;
	out->stream = stream;
	if (pi < 0)
		return -EINVAL;
	if (stream >= (int)SVR_MAX_STREAMS)
		return -EINVAL;
	s = r->ser[pi][gsl][stream + 1];
	all = r->ser[pi][gsl][0];
	/* lost: frames whose last point (for this guest) lies in [from, to) */
	out->lost = lost_sum(r, from, to, gsl, stream);
	for (unsigned st = 0; st < r->nstreams; st++)
		if (stream < 0 || (unsigned)stream == st)
			out->missing += (*r->missing)[to][point_shared(to) ? GSH : gsl][st];
	out->cross_host = svr_hop_cross_host(r, from, to, guest);
	if (!s)
		return out->lost ? 0 : -ENODATA;	/* frames lost on the way, none arrived */
	out->series = s;
	if (s->hist && (s->hist->count || s->hist->negative)) {
		out->count = s->hist->count + s->hist->negative;
		if (stream < 0 && s->vals && !s->inexact && s->nvals) {
			exact_summary(s, &out->lat);
		} else if (stream >= 0 && all && all->vals && !all->inexact && all->hist &&
			   all->hist->count == s->hist->count && all->hist->negative == s->hist->negative &&
			   all->nvals) {
			/* the only stream of this hop: its values are the all-streams values */
			exact_summary(all, &out->lat);
		} else {
			sv_stats_summarize(s->hist, &out->lat);
			/* negatives (a later point stamped first) sit beside the buckets: the minimum is theirs,
			 * as in the exact all-streams summary */
			if (s->hist->negative) {
				out->lat.min = s->hist->negative_min;
				if (!s->hist->count)
					out->lat.max = s->hist->negative_min;	/* nothing else known */
			}
		}
		return 0;
	}
	if (s->hist_records || s->sum_records) {
		out->from_summaries = true;
		out->lost = s->sum_cnt.lost;
		if (s->sum_hist && s->sum_hist->count) {
			sv_stats_summarize(s->sum_hist, &out->lat);
			out->count = s->sum_hist->count;
		} else {
			/* SUMMARY records only: min/max exact, percentiles as upper bounds (max per second) */
			out->lat = s->sum_bound;
			out->lat.exact = false;
			out->count = s->sum_count;
		}
		return 0;
	}
	return out->lost ? 0 : -ENODATA;
}

const struct svr_bin *svr_hop_bins(const struct svr *r, unsigned from, unsigned to, int guest,
				   unsigned *n, uint32_t *width_s, int64_t *first_sec)
{
	int pi = pair_idx(from, to);

	if (pi < 0 || !r->bins[pi][gslot(guest)] || !r->bins_started)
		return NULL;
	*n = SVR_TIME_BINS;
	while (*n > 1) {
		const struct svr_bin *b = &r->bins[pi][gslot(guest)][*n - 1];

		if (b->count || b->lost)
			break;
		(*n)--;
	}
	*width_s = r->bin_width;
	*first_sec = r->bin_first;
	return r->bins[pi][gslot(guest)];
}

const uint64_t *svr_lost_bins(const struct svr *r, int guest, unsigned *n)
{
	if (!r->bins_started)
		return NULL;
	/* as many bins as the run used */
	*n = (unsigned)((r->now / SV_NSEC_PER_SEC - r->bin_first) / r->bin_width) + 1;
	if (*n > SVR_TIME_BINS)
		*n = SVR_TIME_BINS;
	return r->lostbins[gslot(guest)];
}

unsigned svr_nlate(const struct svr *r)
{
	return r->nlate;
}

const struct svr_late *svr_late_get(const struct svr *r, unsigned i)
{
	return i < r->nlate ? &r->late[i] : NULL;
}

unsigned svr_nholders(const struct svr *r)
{
	return r->nholders;
}

const char *svr_holder_label(const char *comm, uint32_t pid)
{
	if (comm[0])
		return comm;
	return pid ? "(unknown)" : "(idle or not seen)";
}

const struct svr_holder *svr_holder_get(const struct svr *r, unsigned i)
{
	return i < r->nholders ? &r->holders[i] : NULL;
}

unsigned svr_ndrops(const struct svr *r)
{
	return r->ndrops;
}

const struct svr_drop *svr_drop_get(const struct svr *r, unsigned i)
{
	return i < r->ndrops ? &r->drops[i] : NULL;
}

const struct svr_totals *svr_totals(const struct svr *r)
{
	return &r->tot;
}

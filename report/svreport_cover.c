// SPDX-License-Identifier: Apache-2.0
/*
 * Where svreport's files were looking: a frame counts as lost (or missing) at a point only while a
 * file recording there was; not where its tool could not key its events, nor where its writer could
 * not write them (a full disk: not recorded).
 */
#include "svreport_private.h"

/* Did @f record events without a usable key around @t (the frames they stand for were received)? */
static bool unkeyed_at(const struct fileio *f, int64_t t)
{
	for (unsigned i = 0; i < f->nunkeyed; i++)
		if (t >= f->unkeyed[i][0] && t <= f->unkeyed[i][1])
			return true;
	return false;
}

/* An event at @t could not be keyed: its frame (sampled up to 1 s before) must not count as lost here. */
void svr_unkeyed_add(struct fileio *f, int64_t t)
{
	int64_t a = t - SV_NSEC_PER_SEC;
	unsigned n = f->nunkeyed;

	if (n && a <= f->unkeyed[n - 1][1] + SV_NSEC_PER_SEC) {
		if (t > f->unkeyed[n - 1][1])
			f->unkeyed[n - 1][1] = t;
		if (a < f->unkeyed[n - 1][0])
			f->unkeyed[n - 1][0] = a;
		return;
	}
	if (n == UNKEYED_MAX) {	/* bounded: the last interval grows to cover it */
		f->unkeyed[n - 1][1] = t;
		return;
	}
	f->unkeyed[n][0] = a;
	f->unkeyed[n][1] = t;
	f->nunkeyed++;
}

/* Did @f's writer leave its frames of @point at @t unwritten (@point SVR_NPOINTS: of any point)? */
bool svr_unrec_at(const struct fileio *f, int64_t t, unsigned point)
{
	unsigned bits = point < SVR_NPOINTS ? 1u << point : UNREC_ALL;

	for (unsigned i = 0; i < f->nunrec; i++)
		if (t >= f->unrec[i][0] && t <= f->unrec[i][1] && (f->unrec_pts[i] & bits))
			return true;
	return false;
}

void svr_unrec_add(struct svr *r, struct fileio *f, int64_t lo, int64_t hi, unsigned pts)
{
	unsigned n = f->nunrec;

	r->any_unrec = true;
	if (n && (lo <= f->unrec[n - 1][1] || n == UNREC_MAX)) {	/* overlaps the last, or no room left */
		if (lo < f->unrec[n - 1][0])
			f->unrec[n - 1][0] = lo;
		if (hi > f->unrec[n - 1][1])
			f->unrec[n - 1][1] = hi;
		f->unrec_pts[n - 1] |= (uint8_t)pts;
		return;
	}
	f->unrec[n][0] = lo;
	f->unrec[n][1] = hi;
	f->unrec_pts[n] = (uint8_t)pts;
	f->nunrec++;
}

/* Where some file was seeing frames (from its first event to its last, or to now while it is still read):
 * an outage counts as loss only there, not in a tool's start-up before its first frame or its tail after
 * the stream stopped, nor between two runs' files. */
void svr_file_span(const struct fileio *f, int64_t *fs, int64_t *fe)
{
	*fs = f->first_ev_t > f->info.start_tai_ns ? f->first_ev_t : f->info.start_tai_ns;
	*fe = f->eof ? f->last_ev_t : f->info.end_tai_ns;
}

/* Some file that produced events at @slot was recording at time @t (COV_YES), or was there but had not
 * written its records (COV_UNRECORDED: a full disk), or none was there (COV_NONE). */
enum cover { COV_NONE, COV_UNRECORDED, COV_YES };

static enum cover cover_at(struct svr *r, int slot, int64_t t)
{
	uint64_t m = r->src_mask[slot];
	unsigned p = slot_point(slot);
	enum cover c = COV_NONE;

	while (m) {
		unsigned i = (unsigned)__builtin_ctzll(m);
		const struct fileio *f = r->f[i];

		m &= m - 1;
		/* a soak file's events are its windows only: its INTERVAL records count its loss */
		if (f->soak || t < f->info.start_tai_ns || t > f->info.end_tai_ns || unkeyed_at(f, t))
			continue;
		if (!f->nunrec || !svr_unrec_at(f, t, p))
			return COV_YES;
		c = COV_UNRECORDED;
	}
	return c;
}

bool svr_covered(struct svr *r, int slot, int64_t t)
{
	return cover_at(r, slot, t) == COV_YES;
}

/* A frame leaving the window: each point that did not see it while the file recording there had left
 * its records of that time unwritten counts it as not recorded (not lost, not missing: unknown). */
void svr_notrec_frame(struct svr *r, const struct jent *e, int64_t t)
{
	int nslots = 2 + 4 * (int)r->nguests;
	bool any = false;

	for (int s = 0; s < nslots; s++) {
		if ((e->seen >> s) & 1 || !r->src_mask[s] || cover_at(r, s, t) != COV_UNRECORDED)
			continue;
		r->pts[slot_point(s)][gslot(slot_guest(s))].not_recorded++;
		any = true;
	}
	if (any)
		r->tot.not_recorded++;
}

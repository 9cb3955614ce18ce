/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What svreport's engine files share (svreport.h is the engine's interface): the state of a report (struct
 * svr), of an input file (struct fileio), of a frame in the join window (struct jent), and the functions
 * one concern calls in another. The concerns, one file each:
 *   svreport_files.c   input files, a rotated run's parts, times to TAI
 *   svreport_guests.c  guest names, aliases and labels
 *   svreport_read.c    the merged pass over every file; records other than events
 *   svreport_join.c    events into the join window (keyed, or waiting for their stream's rate)
 *   svreport_rate.c    stream rates (libsv's sv_rate.h) and what the join does once one is known
 *   svreport_window.c  the join window: ring, hash, placeholders for gaps, outages
 *   svreport_cover.c   where each file was looking (loss counted only there)
 *   svreport_agg.c     a frame leaving the window: hops, time bins, loss, misses
 *   svreport_query.c   results for the outputs and the verdict
 *   svreport_clock.c   the clock check
 */
#ifndef SVREPORT_PRIVATE_H
#define SVREPORT_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "sv_clock.h"
#include "sv_rate.h"
#include "svreport.h"
#include "svreport_why.h"

#define NSLOTS (2 + 4 * SVR_MAX_GUESTS)	/* T0, T1, then T2a..T4 of each guest */
#define GSLOTS (SVR_MAX_GUESTS + 1)	/* guests + the shared slot (index SVR_MAX_GUESTS) */
#define GSH SVR_MAX_GUESTS		/* shared guest slot */
#define NPAIRS 21			/* a < b among the 7 points */
#define ENT_PLACEHOLDER 1u		/* a frame nobody saw yet (gap in the sample sequence) */
#define ENT_SKIPPED 2u			/* the publisher skipped it: never sent */
#define ENT_LATE 4u			/* a THREAD record names it: the why-late list wants its hop latency */
#define PEND_MAX 65536u			/* unkeyed events held until their stream's rate is known */
#define UNKEYED_MAX 4			/* per file: intervals with events that could not be keyed */
#define UNREC_MAX 64			/* per file: stretches its writer could not write (full disk) */
#define UNREC_ALL ((1u << SVR_NPOINTS) - 1)

struct jent {
	uint64_t key;
	int64_t base;			/* TAI ns of the first observation (or Ts for a placeholder) */
	uint64_t seen;			/* bit per slot */
	uint32_t flags;
	int32_t off[NSLOTS];		/* observation - base */
};

struct fileio {
	struct sv_record_reader *rd;
	struct svr_file_info info;
	int16_t smap[SV_REC_MAX_STREAMS];	/* local stream -> global, -1 */
	bool eof, have;
	struct sv_rec rec;
	int64_t t;			/* time of rec (TAI ns) */
	int64_t last_t, first_t;
	int64_t first_ev_t, last_ev_t;	/* first and last event's time (INT64_MAX, INT64_MIN none) */
	int64_t end_rec_t;		/* END record's time, INT64_MIN none */
	int file_guest;			/* -2 unresolved, -1 none */
	int16_t gcache[64];		/* event.guest -> guest index, -2 unresolved */
	uint64_t run_id;
	uint32_t part, last_part;	/* the parts read: first and last (the file given) */
	dev_t dev;
	ino_t ino;
	unsigned host_id;		/* index of its host among the files' hosts */
	/* TAI intervals where this file had events without a usable key: the frames they stand for were
	 * received, so no loss is counted there against this file's points */
	int64_t unkeyed[UNKEYED_MAX][2];
	unsigned nunkeyed;
	/* TAI intervals whose records the file's writer could not write (UNWRITTEN records: a full disk; an
	 * older writer's tail after its last event when its END counts records no UNWRITTEN record placed),
	 * with the points (bits) whose frames it lost there: frames it would have seen there are "not
	 * recorded", not lost. Bounded: past UNREC_MAX the last one grows. */
	int64_t unrec[UNREC_MAX][2];
	uint8_t unrec_pts[UNREC_MAX];
	unsigned nunrec;
	uint64_t located;		/* lost records the UNWRITTEN records placed (cumulative, as END counts) */
	/* A rate this file's tool learned mid-run (a STREAM redefined after one with rate 0) is a guess from
	 * one smpCnt wrap that the tool may correct: held per local stream until one of the stream's own
	 * frames confirms it (sv_rate.h's claims). */
	struct sv_rate_claim claim[SV_REC_MAX_STREAMS];
	/* A rotated run (svtrace: FILE.k ... FILE.1, FILE): its parts are read one after the other as
	 * one file, oldest first; parts[nparts - 1] is the file given. NULL: one part, info.path. */
	char **parts;
	unsigned nparts, part_i;
	struct sv_record_reader_damage damage_before;	/* the parts already read */
	/* Soak mode (a CLOCK, INTERVAL or WINDOW record read; svreport_soak.c): its EVENT records are flight-
	 * recorder windows, not every frame, so it does not cover its points for loss (its INTERVAL records
	 * count the loss). The windows it could not keep so far (its writer's counts: the largest seen). */
	bool soak;
	uint32_t win_refused[SV_WINDOW_CLASSES], win_busy;
};

/* An unkeyed event waiting for its stream's rate (9-2LE: svsub learns it from the smpCnt wrap). */
struct pend {
	struct sv_rec_event ev;
	int64_t t;			/* TAI */
	unsigned fi;
};

struct lastobs {
	int64_t idx;			/* sample index of the last frame seen (INT64_MIN none) */
	int64_t t;
};

struct svr {
	struct svr_cfg cfg;
	unsigned nfiles;
	struct fileio *f[SVR_MAX_FILES];
	unsigned nstreams;
	struct svr_stream_info streams[SVR_MAX_STREAMS];
	int64_t max_idx[SVR_MAX_STREAMS];	/* highest sample index joined so far, INT64_MIN none */
	unsigned nguests;
	char guests[SVR_MAX_GUESTS][64];
	/* where each guest's name came from (svreport_hosts.c): the host and tool of the first records naming it;
	 * the same name from another host of the same tool is another guest (HOST:NAME, both renamed) */
	char guest_host[SVR_MAX_GUESTS][64], guest_tool[SVR_MAX_GUESTS][16];
	unsigned naliases;
	char alias_from[32][128], alias_to[32][64];	/* from: NAME or HOST:NAME */
	bool alias_used[32];
	unsigned nlabels;
	char label_guest[SVR_MAX_GUESTS][64], label_text[SVR_MAX_GUESTS][SVR_LABEL_SIZE];
	unsigned nsetup;
	char setup[SVR_MAX_SETUP][SVR_SETUP_SIZE];
	FILE *csv;
	bool csv_header;

	/* join window: FIFO ring of entries + open-addressing hash of ring positions */
	struct jent *ring;
	uint64_t rcap, rhead, rn;
	uint32_t *hash;			/* ring position + 1, 0 empty */
	uint64_t hmask;
	int64_t now;			/* merged time (TAI ns) */

	uint64_t src_mask[NSLOTS];	/* files that produced events at each slot (or declared it: NAME) */
	uint64_t host_mask[NSLOTS];	/* hosts whose records describe each slot (events, summaries) */
	unsigned nhosts;
	struct pend *pend;		/* FIFO of unkeyed events waiting for a rate */
	uint64_t phead, pn;
	bool replaying;			/* joining pending events: older than what the order state holds */
	bool any_unrec;			/* some file has an interval it did not record (fileio.unrec) */
	unsigned nwarn;
	char warn[8][240];
	bool present[SVR_NPOINTS][GSLOTS];
	bool gseen[SVR_MAX_GUESTS][SVR_MAX_STREAMS];	/* a record of the stream at one of the guest's points */
	struct svr_point_stats pts[SVR_NPOINTS][GSLOTS];
	struct lastobs last[SVR_MAX_STREAMS][NSLOTS];
	uint64_t (*lostafter)[SVR_NPOINTS][GSLOTS][SVR_MAX_STREAMS];
	uint64_t (*missing)[SVR_NPOINTS][GSLOTS][SVR_MAX_STREAMS];

	struct svr_series *ser[NPAIRS][GSLOTS][SVR_MAX_STREAMS + 1];
	uint64_t exact_used;
	struct svr_bin *bins[NPAIRS][GSLOTS];
	uint64_t lostbins[GSLOTS][SVR_TIME_BINS];
	bool bins_started;
	int64_t bin_first;
	uint32_t bin_width;

	unsigned nlate;
	struct svr_late late[SVR_MAX_LATE];
	unsigned nholders;
	struct svr_holder holders[SVR_MAX_HOLDERS];
	struct svr_why why;		/* svtrace's WHY records (svreport_why.c) */
	unsigned ndrops;
	struct svr_drop drops[SVR_MAX_DROPS];
	struct svr_totals tot;
	uint64_t pub_behind;		/* T0 events sent >= 995 ms after their own sample time */
	int64_t pub_behind_max_ns;
	struct sv_stats tmp;		/* HIST decoding */
	uint8_t budget_pairs[SVR_MAX_BUDGETS][2];
	unsigned nbudget_pairs;
	struct svr_soak *soak;		/* NULL until a soak record (svreport_soak.c) */
	struct svr_soak_why *soak_why;	/* SVR_SOAK_WHY longest why-late records (at the first one), for the
					 * soak's worst intervals */
	unsigned soak_nwhy;
	uint64_t soak_whys;		/* why-late records read */
};

static inline int pair_idx(unsigned a, unsigned b)
{
	/* a < b < 7: index in row-major order of the strict upper triangle */
	static const int8_t tab[7][7] = {
		{-1, 0, 1, 2, 3, 4, 5}, {-1, -1, 6, 7, 8, 9, 10}, {-1, -1, -1, 11, 12, 13, 14},
		{-1, -1, -1, -1, 15, 16, 17}, {-1, -1, -1, -1, -1, 18, 19}, {-1, -1, -1, -1, -1, -1, 20},
		{-1, -1, -1, -1, -1, -1, -1},
	};
	if (a >= 7 || b >= 7)
		return -1;
	return tab[a][b];
}

static inline bool point_shared(unsigned p)
{
	return p <= SV_POINT_T1;
}

static inline int slot_of(unsigned p, int g)
{
	if (p == SV_POINT_T0)
		return 0;
	if (p == SV_POINT_T1)
		return 1;
	if (p >= SV_POINT_T2A && p <= SV_POINT_T4 && g >= 0 && g < SVR_MAX_GUESTS)
		return 2 + g * 4 + (int)(p - SV_POINT_T2A);
	return -1;
}

static inline int gslot(int guest)
{
	return guest < 0 ? GSH : guest;
}

/* The point and the guest (-1: shared) of join slot @s. */
static inline unsigned slot_point(int s)
{
	return s == 0 ? SV_POINT_T0 : s == 1 ? SV_POINT_T1 : SV_POINT_T2A + (unsigned)(s - 2) % 4;
}

static inline int slot_guest(int s)
{
	return s < 2 ? -1 : (s - 2) / 4;
}

/* Position of a sample in its stream: sec * rate + smp once the rate is known; before, (sec << 16) + smp
 * keeps the order (smpCnt < 65536) but not the distances. */
static inline int64_t sample_idx(const struct svr_stream_info *st, uint32_t sec, uint16_t smp)
{
	return st->rate ? (int64_t)sec * st->rate + smp : ((int64_t)sec << 16) + smp;
}

static inline int64_t idx_rescale(int64_t idx, uint32_t rate)
{
	return idx == INT64_MIN || idx < 0 ? idx : (idx >> 16) * rate + (idx & 0xffff);
}

static inline uint64_t make_key(unsigned gs, uint32_t sec, uint16_t smp)
{
	return ((uint64_t)(gs + 1) << 48) | ((uint64_t)sec << 16) | smp;
}

/* Samples from one frame of the stream to the next (its ASDUs; 1 when not known). */
static inline unsigned stream_step(const struct svr_stream_info *st)
{
	return st->asdus ? st->asdus : 1;
}

/* The sample time of sample @smp of second @sec: false when the stream's rate is not known (or @smp is
 * beyond it). */
static inline bool stream_sample_time(const struct svr_stream_info *st, uint32_t sec, uint16_t smp, int64_t *ts)
{
	if (!st->rate || smp >= st->rate)
		return false;
	*ts = sv_sample_time_ns(sec, smp, st->rate);
	return true;
}

/* ---- svreport_files.c ---- */
void svr_fileio_free(struct fileio *f);
/* A time of file @f on the TAI scale (unchanged when its clock cannot be converted: the clock check says so).
 * Inline: every record's time goes through it. */
static inline int64_t svr_to_tai(const struct fileio *f, int64_t t)
{
	int64_t out;

	if (f->info.clock == SV_CLOCK_TAI)
		return t;
	return sv_record_reader_to_tai(f->rd, t, &out) ? out : t;
}
/* @to += the earlier parts' @before. */
void svr_damage_add(struct sv_record_reader_damage *to, const struct sv_record_reader_damage *before);
/* Opens the part after a rotated part's end: true when it is open (else the file ends with its error). */
bool svr_file_next_part(struct fileio *f);

/* ---- svreport_guests.c ---- */
/* The guest index of an event of @f with guest @ev_guest (SV_REC_GUEST_NONE: the file's), created on first
 * use; -1 when the table is full. */
int svr_file_guest(struct svr *r, struct fileio *f, unsigned ev_guest);
/* ---- svreport_hosts.c ---- */
/* The guest of @name as the records of @f give it, when no alias renamed it: HOST:NAME when another host's
 * records of the same tool name a guest @name too (two hypervisors' "vnet0"); -1 when the table is full. */
int svr_guest_by_host(struct svr *r, const struct fileio *f, const char *name);
/* A new guest @name first named by the records of @f; -1 when the table is full. */
int svr_guest_new(struct svr *r, const struct fileio *f, const char *name);

/* ---- svreport_read.c ---- */
void svr_add_warning(struct svr *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- svreport_join.c ---- */
void svr_on_event(struct svr *r, unsigned fi, struct fileio *f, const struct sv_rec_event *ev);
void svr_unkeyed_event(struct svr *r, unsigned fi, struct fileio *f, const struct sv_rec_event *ev, int64_t t);
/* Pending events older than the window (or all, at the end) are not joinable. */
void svr_pend_expire(struct svr *r, bool all);

/* ---- svreport_rate.c ---- */
void svr_define_stream(struct svr *r, struct fileio *f, const struct sv_rec_stream *s);
void svr_rate_confirm(struct svr *r, struct fileio *f, uint32_t stream, const struct sv_rec_event *ev);
void svr_rate_learned(struct svr *r, unsigned gs, uint32_t rate);

/* A keyed event that carries its sample time (t2 kind "sample": svsub once it knows the rate) tells the rate
 * even when no STREAM record does (sv_rate_of_sample_time). Inline: every keyed event asks. */
static inline void svr_rate_from_event(struct svr *r, struct fileio *f, const struct sv_rec_event *ev)
{
	unsigned gs = (unsigned)f->smap[ev->stream];

	if (r->streams[gs].rate || ev->t2_kind != SV_T2_SAMPLE || f->info.clock != SV_CLOCK_TAI)
		return;
	svr_rate_learned(r, gs, sv_rate_of_sample_time(ev->tai_sec, ev->smp_cnt, ev->t2_ns));
}

/* ---- svreport_window.c ---- */
int svr_window_alloc(struct svr *r, uint64_t cap);
/* The oldest frame leaves the window: svr_finalize() counts it. */
void svr_window_evict_head(struct svr *r);
/* Frames older than the window (or all) leave it. Inline: asked at every record. */
static inline void svr_window_evict(struct svr *r, bool all)
{
	while (r->rn && (all || r->ring[r->rhead].base < r->now - r->cfg.window_ns))
		svr_window_evict_head(r);
}
struct jent *svr_window_lookup(struct svr *r, uint64_t key);
struct jent *svr_window_insert(struct svr *r, uint64_t key, int64_t base);
void svr_fill_gap(struct svr *r, unsigned gs, int64_t from, int64_t to);
int svr_cmp_i64(const void *a, const void *b);

/* ---- svreport_cover.c ---- */
void svr_unkeyed_add(struct fileio *f, int64_t t);
bool svr_unrec_at(const struct fileio *f, int64_t t, unsigned point);
void svr_unrec_add(struct svr *r, struct fileio *f, int64_t lo, int64_t hi, unsigned pts);
void svr_file_span(const struct fileio *f, int64_t *fs, int64_t *fe);
bool svr_covered(struct svr *r, int slot, int64_t t);
void svr_notrec_frame(struct svr *r, const struct jent *e, int64_t t);

/* ---- svreport_soak.c ---- */
/* a + b and a - b held at the int64 limits (times from a damaged or hostile record must not overflow) */
static inline int64_t svr_sat_add(int64_t a, int64_t b)
{
	int64_t v;

	return __builtin_add_overflow(a, b, &v) ? (b > 0 ? INT64_MAX : INT64_MIN) : v;
}

static inline int64_t svr_sat_sub(int64_t a, int64_t b)
{
	int64_t v;

	return __builtin_sub_overflow(a, b, &v) ? (b < 0 ? INT64_MAX : INT64_MIN) : v;
}
/* A soak record of @f (INTERVAL, interval HIST, WINDOW, CLOCK, WHY): into the soak's tables. */
void svr_soak_record(struct svr *r, unsigned fi, struct fileio *f, const struct sv_rec *rec);
/* After the pass: the runs' gaps, the windows refused, the events by time, the worst frames' why-late. */
void svr_soak_finish(struct svr *r);
/* Two files of one tool on one host for one guest, of different runs: a restart (a gap, not an error). */
bool svr_soak_restart_pair(const struct fileio *a, const struct fileio *b);
void svr_soak_free(struct svr *r);

/* ---- svreport_agg.c ---- */
struct svr_series *svr_series_get(struct svr *r, int pi, unsigned gsl, int stream);
void svr_series_free(struct svr_series *s);
void svr_finalize(struct svr *r, const struct jent *e);

#endif /* SVREPORT_PRIVATE_H */

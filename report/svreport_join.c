// SPDX-License-Identifier: Apache-2.0
/*
 * svreport's engine: k-way merge of record files by time, a join window of frames keyed by
 * (stream, TAI second, smpCnt), per-hop aggregation when a frame leaves the window. See svreport.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sv_clock.h"
#include "svreport.h"

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
	 * one smpCnt wrap that the tool may withdraw (svtrace redefines rate 0 when a later smpCnt proves
	 * it wrong): held here, per local stream, until one of the stream's own frames confirms it. */
	uint32_t cand_rate[SV_REC_MAX_STREAMS];
	bool learning[SV_REC_MAX_STREAMS];	/* defined with rate 0 before: later rates are candidates */
	/* A rotated run (svtrace: FILE.k ... FILE.1, FILE): its parts are read one after the other as
	 * one file, oldest first; parts[nparts - 1] is the file given. NULL: one part, info.path. */
	char **parts;
	unsigned nparts, part_i;
	struct sv_record_reader_damage damage_before;	/* the parts already read */
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
	unsigned ndrops;
	struct svr_drop drops[SVR_MAX_DROPS];
	struct svr_totals tot;
	uint64_t pub_behind;		/* T0 events sent >= 995 ms after their own sample time */
	int64_t pub_behind_max_ns;
	struct sv_stats tmp;		/* HIST decoding */
	uint8_t budget_pairs[SVR_MAX_BUDGETS][2];
	unsigned nbudget_pairs;
};

static int pair_idx(unsigned a, unsigned b)
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

void svr_cfg_defaults(struct svr_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->window_ns = 3 * SV_NSEC_PER_SEC;
	c->max_frames = 4u << 20;
	c->exact_limit = 32u << 20;
	c->clock_tolerance_ns = 20 * SV_NSEC_PER_USEC;
	c->max_late = SVR_MAX_LATE;
}

static uint64_t hash64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ULL;
	k ^= k >> 33;
	return k;
}

static int ring_alloc(struct svr *r, uint64_t cap)
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
	if (!r->lostafter || !r->missing || ring_alloc(r, 4096)) {
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

static void series_free(struct svr_series *s)
{
	if (!s)
		return;
	free(s->hist);
	free(s->vals);
	free(s->sum_hist);
	free(s);
}

static void fileio_free(struct fileio *f)
{
	if (f->rd)
		sv_record_reader_close(f->rd);
	for (unsigned k = 0; k < f->nparts; k++)
		free(f->parts[k]);
	free(f->parts);
	free(f);
}

void svr_destroy(struct svr *r)
{
	if (!r)
		return;
	for (unsigned i = 0; i < r->nfiles; i++) {
		fileio_free(r->f[i]);
	}
	for (unsigned p = 0; p < NPAIRS; p++)
		for (unsigned g = 0; g < GSLOTS; g++) {
			for (unsigned s = 0; s <= SVR_MAX_STREAMS; s++)
				series_free(r->ser[p][g][s]);
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
	free(r);
}

int svr_add_alias(struct svr *r, const char *from, const char *to)
{
	if (r->naliases >= 32 || strlen(from) >= 128 || strlen(to) >= 64 || !*from || !*to)
		return -EINVAL;
	snprintf(r->alias_from[r->naliases], 128, "%s", from);
	snprintf(r->alias_to[r->naliases], 64, "%s", to);
	r->naliases++;
	return 0;
}

const char *svr_alias_unused(const struct svr *r, unsigned i)
{
	return i < r->naliases && !r->alias_used[i] ? r->alias_from[i] : NULL;
}

const uint8_t svr_compare_hops[SVR_NCOMPARE][2] = {
	{SV_POINT_T1, SV_POINT_T2B}, {SV_POINT_T2B, SV_POINT_T3}, {SV_POINT_T3, SV_POINT_T4}, {SV_POINT_T0, SV_POINT_T4},
	{SV_POINT_T0, SV_POINT_T3},
};

int svr_add_setup(struct svr *r, const char *line)
{
	if (strlen(line) >= SVR_SETUP_SIZE)
		return -EINVAL;
	if (r->nsetup >= SVR_MAX_SETUP)
		return -E2BIG;
	snprintf(r->setup[r->nsetup++], SVR_SETUP_SIZE, "%s", line);
	return 0;
}

const char *svr_setup(const struct svr *r, unsigned i)
{
	return i < r->nsetup ? r->setup[i] : NULL;
}

int svr_set_guest_label(struct svr *r, const char *guest, const char *label)
{
	unsigned i;

	if (!*guest || strlen(guest) >= 64 || strlen(label) >= SVR_LABEL_SIZE)
		return -EINVAL;
	for (i = 0; i < r->nlabels && strcmp(r->label_guest[i], guest); i++)
		;
	if (i == SVR_MAX_GUESTS)
		return -E2BIG;
	snprintf(r->label_guest[i], 64, "%s", guest);
	snprintf(r->label_text[i], SVR_LABEL_SIZE, "%s", label);
	if (i == r->nlabels)
		r->nlabels++;
	return 0;
}

const char *svr_guest_label(const struct svr *r, unsigned g)
{
	if (g >= r->nguests)
		return NULL;
	for (unsigned i = 0; i < r->nlabels; i++)
		if (!strcmp(r->label_guest[i], r->guests[g]))
			return r->label_text[i];
	return NULL;
}

void svr_set_csv(struct svr *r, FILE *csv)
{
	r->csv = csv;
}

/* Guest index of @name as the records of host @host give it (after aliases: HOST:NAME before a plain
 * NAME, so that two hypervisors' same-named ports can go to two guests), created on first use; -1 when
 * the table is full. */
static int guest_idx(struct svr *r, const char *host, const char *name)
{
	size_t hl = strlen(host);
	int hit = -1;

	for (unsigned i = 0; i < r->naliases && hit < 0; i++) {
		const char *a = r->alias_from[i];

		if (hl && !strncmp(a, host, hl) && a[hl] == ':' && !strcmp(a + hl + 1, name))
			hit = (int)i;
	}
	for (unsigned i = 0; i < r->naliases && hit < 0; i++)
		if (!strcmp(name, r->alias_from[i]))
			hit = (int)i;
	if (hit >= 0) {
		r->alias_used[hit] = true;
		name = r->alias_to[hit];
	}
	for (unsigned g = 0; g < r->nguests; g++)
		if (!strcmp(r->guests[g], name))
			return (int)g;
	if (r->nguests >= SVR_MAX_GUESTS)
		return -1;
	snprintf(r->guests[r->nguests], sizeof(r->guests[0]), "%s", name);
	return (int)r->nguests++;
}

static int file_guest(struct svr *r, struct fileio *f, unsigned ev_guest)
{
	const char *name;
	char buf[32];
	int g;

	if (f->info.guest[0] || ev_guest == SV_REC_GUEST_NONE) {
		if (f->file_guest == -2)
			f->file_guest = guest_idx(r, f->info.host, f->info.guest[0] ? f->info.guest : f->info.host);
		return f->file_guest;
	}
	if (ev_guest < 64 && f->gcache[ev_guest] != -2)
		return f->gcache[ev_guest];
	name = sv_record_reader_name(f->rd, SV_REC_NAME_GUEST, ev_guest, 0);
	if (!name) {
		snprintf(buf, sizeof(buf), "guest%u", ev_guest);
		name = buf;
	}
	g = guest_idx(r, f->info.host, name);
	if (ev_guest < 64)
		f->gcache[ev_guest] = (int16_t)g;
	return g;
}

/* The same record given twice would join every frame with itself (duplicates everywhere); two runs under
 * one guest name would mix two guests. Same path, same inode, or the same (run, part, tool): one file.
 * A part already read with its rotated run (svreport trace.rec*): 1, skipped. */
static int check_twice(struct svr *r, struct fileio *f, const struct sv_rec_file_header *h)
{
	for (unsigned i = 0; i + 1 < r->nfiles; i++) {
		const struct fileio *o = r->f[i];
		const struct sv_rec_file_header *oh;

		if (!o->rd)
			continue;
		oh = sv_record_reader_header(o->rd);
		if (o->nparts > 1 && o->run_id == h->run_id && h->part >= o->part && h->part <= o->last_part &&
		    !strcmp(o->info.tool, f->info.tool) && !strcmp(o->info.host, f->info.host) &&
		    (!f->info.guest[0] || !strcmp(o->info.guest, f->info.guest)))
			return 1;
		if (!strcmp(o->info.path, f->info.path) || (o->dev == f->dev && o->ino == f->ino && f->ino) ||
		    (oh->run_id == h->run_id && oh->part == h->part && !strcmp(o->info.tool, f->info.tool))) {
			snprintf(f->info.errmsg, sizeof(f->info.errmsg),
				 "%.80s: the same record as %.80s (%.15s run %016" PRIx64 " part %u) given twice", f->info.path,
				 o->info.path, f->info.tool, h->run_id, h->part);
			return -EEXIST;
		}
		if (f->info.guest[0] && !strcmp(o->info.guest, f->info.guest) &&
		    (oh->run_id != h->run_id || strcmp(o->info.tool, f->info.tool))) {
			snprintf(f->info.errmsg, sizeof(f->info.errmsg),
				 "%.70s: guest %.40s already has the records of %.70s (another run): one guest, one run",
				 f->info.path, f->info.guest, o->info.path);
			return -EEXIST;
		}
	}
	return 0;
}

#define SVR_MAX_PARTS 100000	/* parts of one rotated run read as one file */

/* Which run and part a record file is (its header), or the open error. */
struct rec_id {
	uint64_t run_id;
	uint32_t part;
	char tool[16], host[64];	/* as svr_file_info's */
};

static int rec_id_of(const char *path, struct rec_id *id)
{
	struct sv_record_reader *rd = NULL;
	int err = sv_record_reader_open(&rd, path);

	if (!err) {
		const struct sv_rec_file_header *h = sv_record_reader_header(rd);

		id->run_id = h->run_id;
		id->part = h->part;
		snprintf(id->tool, sizeof(id->tool), "%.15s", h->tool);
		snprintf(id->host, sizeof(id->host), "%.63s", h->host);
	}
	if (rd)
		sv_record_reader_close(rd);
	return err;
}

/* A file that is part P > 0 of its run (a writer rotated it: svtrace's FILE -> FILE.1 -> FILE.2 ...):
 * the run's earlier parts beside it, FILE.1 (part P - 1) onwards while they are there, become f's parts,
 * oldest first, so that the run reads as one file. Returns how many were found, or -ENOMEM. */
static int find_parts(struct fileio *f, const char *path, const struct sv_rec_file_header *h)
{
	size_t len = strlen(path) + 12;
	unsigned n = 0;
	char **p;

	p = calloc((h->part < SVR_MAX_PARTS ? h->part : SVR_MAX_PARTS) + 1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	for (uint32_t k = 1; k <= h->part && k <= SVR_MAX_PARTS; k++) {
		struct rec_id id;

		p[n] = malloc(len);
		if (!p[n])
			goto nomem;
		sv_record_part_path(p[n], len, path, k);
		if (rec_id_of(p[n], &id) || id.run_id != h->run_id || id.part != h->part - k ||
		    strcmp(id.tool, f->info.tool) || strcmp(id.host, f->info.host)) {
			free(p[n]);
			p[n] = NULL;
			break;
		}
		n++;
	}
	if (!n) {
		free(p);
		return 0;
	}
	for (unsigned i = 0; i < n / 2; i++) {	/* oldest first */
		char *t = p[i];

		p[i] = p[n - 1 - i];
		p[n - 1 - i] = t;
	}
	p[n] = strdup(path);
	if (!p[n])
		goto nomem;
	f->parts = p;
	f->nparts = n + 1;
	return (int)n;
nomem:
	for (unsigned i = 0; i <= n; i++)
		free(p[i]);
	free(p);
	return -ENOMEM;
}

static void add_warning(struct svr *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* @f's reader could not open @path (@err): said in its info, and it ends there. */
static int open_failed(struct fileio *f, const char *path, int err)
{
	if (f->rd) {
		sv_record_reader_strerror(f->rd, f->info.errmsg, sizeof(f->info.errmsg));
		sv_record_reader_close(f->rd);
		f->rd = NULL;
	} else {
		snprintf(f->info.errmsg, sizeof(f->info.errmsg), "%s: %s", path, strerror(-err));
	}
	f->info.err = err;
	f->eof = true;
	return err;
}

int svr_add_file(struct svr *r, const char *path, const char *guest)
{
	const struct sv_rec_file_header *h;
	struct fileio *f;
	struct stat sb;
	uint32_t given_part;
	unsigned hi;
	int err;

	if (r->nfiles >= SVR_MAX_FILES)
		return -E2BIG;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	r->f[r->nfiles++] = f;
	snprintf(f->info.path, sizeof(f->info.path), "%s", path);
	if (guest)
		snprintf(f->info.guest, sizeof(f->info.guest), "%s", guest);
	if (!stat(path, &sb)) {
		f->dev = sb.st_dev;
		f->ino = sb.st_ino;
	}
	memset(f->smap, 0xff, sizeof(f->smap));
	for (unsigned i = 0; i < 64; i++)
		f->gcache[i] = -2;
	f->file_guest = -2;
	f->last_t = INT64_MIN;
	f->first_t = INT64_MAX;
	f->first_ev_t = INT64_MAX;
	f->last_ev_t = INT64_MIN;
	f->end_rec_t = INT64_MIN;
	err = sv_record_reader_open(&f->rd, path);
	if (err)
		return open_failed(f, path, err);
	h = sv_record_reader_header(f->rd);
	snprintf(f->info.tool, sizeof(f->info.tool), "%.15s", h->tool);
	snprintf(f->info.host, sizeof(f->info.host), "%.63s", h->host);
	err = check_twice(r, f, h);
	if (err == 1) {
		fileio_free(f);	/* read with its run's other parts */
		r->nfiles--;
		return 0;
	}
	if (err) {
		sv_record_reader_close(f->rd);
		f->rd = NULL;
		f->info.err = err;
		f->eof = true;
		return err;
	}
	given_part = h->part;
	if (h->part) {
		err = find_parts(f, path, h);
		if (err > 0) {
			sv_record_reader_close(f->rd);
			f->rd = NULL;
			err = sv_record_reader_open(&f->rd, f->parts[0]);
			if (err)
				return open_failed(f, f->parts[0], err);
			h = sv_record_reader_header(f->rd);
		} else if (err < 0) {
			return err;
		}
		if (h->part)
			add_warning(r, "%s: %s's records start at part %u of its run (%s): parts 0 to %u are not beside "
				    "it (rotated away, or moved), so the report misses the start of the run", f->info.path,
				    f->info.tool, (unsigned)h->part, f->nparts ? f->parts[0] : f->info.path,
				    (unsigned)h->part - 1);
	}
	f->run_id = h->run_id;
	f->part = h->part;
	f->last_part = given_part;
	for (hi = 0; hi + 1 < r->nfiles; hi++)
		if (r->f[hi]->rd && !strcmp(r->f[hi]->info.host, f->info.host))
			break;
	f->host_id = hi + 1 < r->nfiles ? r->f[hi]->host_id : r->nhosts++;
	f->info.parts = f->nparts ? f->nparts : 1;
	f->info.clock = (enum sv_clock_id)h->clock;
	f->info.to_tai = h->clock == SV_CLOCK_TAI || (h->flags & SV_REC_FH_TO_TAI);
	f->info.sync = h->sync;
	f->info.tai_unset = h->sync.tai_unset || (h->flags & SV_REC_FH_TAI_UNSET);
	f->info.sync_ok = !h->sync.unsync && !f->info.tai_unset && h->sync.state != 5 &&
			  !(h->flags & SV_REC_FH_UNSYNC);
	/* recording from the first part read: a run's parts rotated away were not read */
	f->info.start_tai_ns = h->part ? h->part_start_ns : h->start_ns;
	if (h->clock != SV_CLOCK_TAI && (h->flags & SV_REC_FH_TO_TAI))
		f->info.start_tai_ns += h->to_tai_ns;
	f->info.end_tai_ns = INT64_MAX;
	return 0;
}

/* Adds the files in an order where a rotated run's newest part comes before its other parts given too
 * (svreport trace.rec.2 trace.rec.1 trace.rec): the newest finds the others beside it and reads them as
 * one file; the others are then skipped. Otherwise the order given. */
int svr_add_files(struct svr *r, const char *const *paths, const char *const *guests, unsigned n)
{
	struct rec_id *id = calloc(n ? n : 1, sizeof(*id));
	unsigned *order = calloc(n ? n : 1, sizeof(*order)), *group = calloc(n ? n : 1, sizeof(*group));
	bool *ok = calloc(n ? n : 1, sizeof(*ok));
	int err = 0;

	if (!id || !order || !group || !ok) {
		err = -ENOMEM;
		goto out;
	}
	for (unsigned i = 0; i < n; i++) {
		ok[i] = !rec_id_of(paths[i], &id[i]);
		group[i] = i;	/* the first file given of its run */
		for (unsigned j = 0; ok[i] && j < i; j++)
			if (ok[j] && id[j].run_id == id[i].run_id && !strcmp(id[j].tool, id[i].tool) &&
			    !strcmp(id[j].host, id[i].host)) {
				group[i] = group[j];
				break;
			}
		/* insertion: by group, then newest part first; stable otherwise */
		unsigned k = i;

		while (k > 0) {
			unsigned p = order[k - 1];

			if (group[p] < group[i] || (group[p] == group[i] && (!ok[i] || id[p].part >= id[i].part)))
				break;
			order[k] = p;
			k--;
		}
		order[k] = i;
	}
	for (unsigned k = 0; k < n && !err; k++)
		err = svr_add_file(r, paths[order[k]], guests ? guests[order[k]] : NULL);
out:
	free(id);
	free(order);
	free(group);
	free(ok);
	return err;
}

static int64_t to_tai(const struct fileio *f, int64_t t)
{
	int64_t out;

	if (f->info.clock == SV_CLOCK_TAI)
		return t;
	if (sv_record_reader_to_tai(f->rd, t, &out))
		return out;
	return t;	/* not convertible: the clock check reports it */
}

static void rate_learned(struct svr *r, unsigned gs, uint32_t rate);

/* Global stream of a STREAM record (by svID), learning its rate and ASDUs from whoever knows them. */
static void define_stream(struct svr *r, struct fileio *f, const struct sv_rec_stream *s)
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
	 * (rate_learned). A tool that learns it mid-run defines the stream again: that rate is only a
	 * candidate until the stream's next frame in this file confirms it (rate_confirm), and a redefinition
	 * withdraws it. */
	if (s->stream < SV_REC_MAX_STREAMS) {
		f->cand_rate[s->stream] = 0;
		if (!s->sample_rate) {
			f->learning[s->stream] = true;
			return;
		}
		if (f->learning[s->stream]) {
			f->cand_rate[s->stream] = s->sample_rate;
			return;
		}
	}
	rate_learned(r, gidx, s->sample_rate);
}

/* The next frame of a local stream after a learned rate was defined: a frame below the rate confirms it
 * (adopted, what was measured so far is rescaled), one at or above it proves it wrong (dropped, as the
 * tool itself will). svtrace's "missing" markers do not count: they are written when a frame is given
 * up on, long after it was sampled, and carry that old smpCnt (which can fake a wrap: a learned rate
 * that the next real frame withdraws). @ev NULL: the file ended with the rate standing, adopted. */
static void rate_confirm(struct svr *r, struct fileio *f, uint32_t stream, const struct sv_rec_event *ev)
{
	uint32_t rate = f->cand_rate[stream];
	int gs = f->smap[stream];

	if (ev && sv_rec_event_missing(ev))
		return;
	f->cand_rate[stream] = 0;
	if (ev && ev->smp_cnt >= rate)
		return;
	if (gs >= 0)
		rate_learned(r, (unsigned)gs, rate);
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

/* ---- time bins ---- */

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

/* ---- series ---- */

static struct svr_series *series_get(struct svr *r, int pi, unsigned gsl, int stream)
{
	struct svr_series **sp = &r->ser[pi][gsl][stream + 1];

	if (!*sp)
		*sp = calloc(1, sizeof(**sp));
	return *sp;
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
	all = series_get(r, pi, gsl, -1);
	one = series_get(r, pi, gsl, (int)gs);
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

/* Did @f record events without a usable key around @t (the frames they stand for were received)? */
static bool unkeyed_at(const struct fileio *f, int64_t t)
{
	for (unsigned i = 0; i < f->nunkeyed; i++)
		if (t >= f->unkeyed[i][0] && t <= f->unkeyed[i][1])
			return true;
	return false;
}

/* An event at @t could not be keyed: its frame (sampled up to 1 s before) must not count as lost here. */
static void unkeyed_add(struct fileio *f, int64_t t)
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

/* The point and the guest (-1: shared) of join slot @s. */
static unsigned slot_point(int s)
{
	return s == 0 ? SV_POINT_T0 : s == 1 ? SV_POINT_T1 : SV_POINT_T2A + (unsigned)(s - 2) % 4;
}

static int slot_guest(int s)
{
	return s < 2 ? -1 : (s - 2) / 4;
}

/* Did @f's writer leave its frames of @point at @t unwritten (@point SVR_NPOINTS: of any point)? */
static bool unrec_at(const struct fileio *f, int64_t t, unsigned point)
{
	unsigned bits = point < SVR_NPOINTS ? 1u << point : UNREC_ALL;

	for (unsigned i = 0; i < f->nunrec; i++)
		if (t >= f->unrec[i][0] && t <= f->unrec[i][1] && (f->unrec_pts[i] & bits))
			return true;
	return false;
}

static void unrec_add(struct svr *r, struct fileio *f, int64_t lo, int64_t hi, unsigned pts)
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
		if (t < f->info.start_tai_ns || t > f->info.end_tai_ns || unkeyed_at(f, t))
			continue;
		if (!f->nunrec || !unrec_at(f, t, p))
			return COV_YES;
		c = COV_UNRECORDED;
	}
	return c;
}

static bool covered(struct svr *r, int slot, int64_t t)
{
	return cover_at(r, slot, t) == COV_YES;
}

/* A frame leaving the window: each point that did not see it while the file recording there had left
 * its records of that time unwritten counts it as not recorded (not lost, not missing: unknown). */
static void notrec_frame(struct svr *r, const struct jent *e, int64_t t)
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

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* ---- a frame leaves the window: its hops are counted ---- */

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

static void finalize(struct svr *r, const struct jent *e)
{
	unsigned gs = (unsigned)(e->key >> 48) - 1;
	uint32_t sec = (uint32_t)(e->key >> 16);
	uint16_t smp = (uint16_t)e->key;
	const struct svr_stream_info *st = &r->streams[gs];
	bool has_ts = st->rate && smp < st->rate;
	int64_t t[SVR_NPOINTS];
	bool v[SVR_NPOINTS];
	unsigned bin, first, last, k;

	if (e->flags & ENT_SKIPPED) {
		r->tot.skipped++;
		return;
	}
	r->tot.frames++;
	bin = bin_of(r, sec);
	memset(v, 0, sizeof(v));
	if (has_ts) {
		t[SV_POINT_TS] = sv_sample_time_ns(sec, smp, st->rate);
		v[SV_POINT_TS] = true;
	}
	for (k = 0; k < 2; k++)
		if (e->seen & (1ull << k)) {
			t[SV_POINT_T0 + k] = e->base + e->off[k];
			v[SV_POINT_T0 + k] = true;
		}

	/* shared hops (both ends in Ts, T0, T1) once per frame */
	first = SVR_NPOINTS;
	last = SVR_NPOINTS;
	for (k = 0; k <= SV_POINT_T1; k++)
		if (v[k]) {
			if (first == SVR_NPOINTS)
				first = k;
			last = k;
		}
	for (unsigned a = 0; a <= SV_POINT_T1; a++)
		for (unsigned b = a + 1; b <= SV_POINT_T1; b++)
			if (v[a] && v[b] && pair_tracked(r, a, b, v, first, last))
				hop_add(r, a, b, SVR_GUEST_SHARED, gs, t[b] - t[a], bin);
	/* shared loss: the last shared point seen, and no later point (any guest) seen though one was
	 * recording at the time */
	if (last != SVR_NPOINTS) {
		uint64_t later = last == SV_POINT_TS ? ~0ull : last == SV_POINT_T0 ? ~1ull : ~3ull;
		int s0 = last == SV_POINT_TS ? 0 : last == SV_POINT_T0 ? 1 : 2;
		bool cov = false;

		if (!(e->seen & later)) {
			for (int s = s0; s < NSLOTS && !cov; s++)
				cov = covered(r, s, has_ts ? t[SV_POINT_TS] : e->base);
			if (cov) {
				(*r->lostafter)[last][GSH][gs]++;
				r->lostbins[GSH][bin]++;
			}
		}
	}

	for (unsigned g = 0; g < r->nguests; g++) {
		bool vg[SVR_NPOINTS];
		int64_t tref;

		/* expect_seen: a stream the guest has no record of is not one it takes (per-stream rules) */
		if (r->cfg.expect_seen && !r->gseen[g][gs])
			continue;
		memcpy(vg, v, sizeof(vg));
		for (k = 0; k < 4; k++) {
			int s = 2 + (int)g * 4 + (int)k;

			vg[SV_POINT_T2A + k] = e->seen & (1ull << s);
			if (vg[SV_POINT_T2A + k])
				t[SV_POINT_T2A + k] = e->base + e->off[s];
		}
		first = last = SVR_NPOINTS;
		for (k = 0; k < SVR_NPOINTS; k++)
			if (vg[k]) {
				if (first == SVR_NPOINTS)
					first = k;
				last = k;
			}
		if (first == SVR_NPOINTS)
			continue;
		for (unsigned b = SV_POINT_T2A; b < SVR_NPOINTS; b++) {
			if (!vg[b])
				continue;
			for (unsigned a = 0; a < b; a++)
				if (vg[a] && pair_tracked(r, a, b, vg, first, last))
					hop_add(r, a, b, (int)g, gs, t[b] - t[a], bin);
		}
		if (e->flags & ENT_LATE)
			late_fill(r, gs, sec, smp, (int)g, vg, t);
		tref = t[first];
		/* lost: nothing after `last` for this guest although a later point was recording when the
		 * frame was at `last` */
		if (last < SV_POINT_T4) {
			bool cov = false;

			for (unsigned p = last + 1; p < SVR_NPOINTS && !cov; p++) {
				int s = slot_of(p, (int)g);

				cov = s >= 0 && covered(r, s, t[last]);
			}
			if (cov) {
				(*r->lostafter)[last][g][gs]++;
				r->lostbins[g][bin]++;
				if (r->bins_started) {
					int pi = pair_idx(last, SV_POINT_T4);

					if (pi >= 0 && r->bins[pi][g])
						r->bins[pi][g][bin].lost++;
				}
			}
		}
		/* missing: a point between two seen ones, recording, without a record of this frame */
		for (unsigned p = first + 1; p < last; p++) {
			int s = slot_of(p, (int)g);

			if (!vg[p] && s >= 0 && covered(r, s, tref)) {
				(*r->missing)[p][point_shared(p) ? GSH : g][gs]++;
				r->pts[p][point_shared(p) ? GSH : g].missing++;
			}
		}
	}
	if (r->any_unrec)
		notrec_frame(r, e, has_ts ? t[SV_POINT_TS] : e->base);
}

static void evict_head(struct svr *r)
{
	struct jent *e = &r->ring[r->rhead];
	uint64_t i = hash64(e->key) & r->hmask, j;

	while (r->hash[i] && r->hash[i] - 1 != r->rhead)
		i = (i + 1) & r->hmask;
	finalize(r, e);
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

static void evict(struct svr *r, bool all)
{
	while (r->rn && (all || r->ring[r->rhead].base < r->now - r->cfg.window_ns))
		evict_head(r);
}

static struct jent *lookup(struct svr *r, uint64_t key)
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

static struct jent *insert(struct svr *r, uint64_t key, int64_t base)
{
	uint64_t pos, i;
	struct jent *e;

	if (r->rn == r->rcap) {
		if (r->rcap * 2 <= r->cfg.max_frames && r->rcap < (1u << 30) && !ring_alloc(r, r->rcap * 2)) {
			/* grown */
		} else {
			r->tot.window_full++;
			evict_head(r);
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

/* ---- records ---- */

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

/* Where some file was seeing frames (from its first event to its last, or to now while it is still read):
 * an outage counts as loss only there, not in a tool's start-up before its first frame or its tail after
 * the stream stopped, nor between two runs' files. */
static void file_span(const struct fileio *f, int64_t *fs, int64_t *fe)
{
	*fs = f->first_ev_t > f->info.start_tai_ns ? f->first_ev_t : f->info.start_tai_ns;
	*fe = f->eof ? f->last_ev_t : f->info.end_tai_ns;
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
	unsigned step = st->asdus ? st->asdus : 1;
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

		file_span(f, &fs, &fe);
		cut[nc++] = fs;
		cut[nc++] = fe == INT64_MAX ? fe : fe + 1;
		for (unsigned i = 0; i < f->nunrec; i++) {
			cut[nc++] = f->unrec[i][0];
			cut[nc++] = f->unrec[i][1] == INT64_MAX ? INT64_MAX : f->unrec[i][1] + 1;
		}
	}
	qsort(cut, nc, sizeof(cut[0]), cmp_i64);
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

			file_span(f, &fs, &fe);
			if (t < fs || t > fe)
				continue;
			if (unrec_at(f, t, SVR_NPOINTS))
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

				file_span(f, &fs, &fe);
				here = t >= fs && t <= fe && unrec_at(f, t, slot_point(s));
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
static void fill_gap(struct svr *r, unsigned gs, int64_t from, int64_t to)
{
	const struct svr_stream_info *st = &r->streams[gs];
	unsigned step = st->asdus ? st->asdus : 1;
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

		if (lookup(r, make_key(gs, ks, (uint16_t)kc)))
			continue;
		ph = insert(r, make_key(gs, ks, (uint16_t)kc), sv_sample_time_ns(ks, kc, st->rate));
		ph->flags = ENT_PLACEHOLDER;
	}
}

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

static void join_event(struct svr *r, unsigned fi, struct fileio *f, const struct sv_rec_event *ev, uint32_t sec,
		       int64_t t);

/* An event without a key (tai_sec 0, or flagged not synchronised because its tool did not know the rate
 * yet): a globally synchronised stream whose rate is known gets the key its tools would have given it
 * (sv_sample_align on its time, as svsub does); one whose rate is not known yet waits for it (bounded);
 * the rest are "not joinable" and their time is excluded from the loss count of their file. */
static void unkeyed_event(struct svr *r, unsigned fi, struct fileio *f, const struct sv_rec_event *ev, int64_t t)
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
	unkeyed_add(f, t);
}

/* Pending events older than the window (or all at the end): their rate never came in time. */
static void pend_expire(struct svr *r, bool all)
{
	while (r->pn && (all || r->pend[r->phead].t < r->now - r->cfg.window_ns)) {
		struct pend *p = &r->pend[r->phead];

		r->tot.not_joinable++;
		unkeyed_add(r->f[p->fi], p->t);
		r->phead = (r->phead + 1) % PEND_MAX;
		r->pn--;
	}
}

/* A keyed event that carries its sample time (t2 kind "sample": svsub once it knows the rate) tells the
 * rate even when no STREAM record does: t2 = sec + smpCnt / rate, exact to the nanosecond. Used only when
 * the rate it gives reproduces t2 exactly, from smpCnt >= 16 (neighbouring rates are then hundreds of ns
 * apart). */
static void rate_from_event(struct svr *r, struct fileio *f, const struct sv_rec_event *ev)
{
	int64_t d = ev->t2_ns - (int64_t)ev->tai_sec * SV_NSEC_PER_SEC;
	unsigned gs = (unsigned)f->smap[ev->stream];
	double q;
	uint32_t rate;

	if (r->streams[gs].rate || ev->t2_kind != SV_T2_SAMPLE || ev->smp_cnt < 16 || f->info.clock != SV_CLOCK_TAI || d <= 0 ||
	    d >= SV_NSEC_PER_SEC)
		return;
	q = (double)ev->smp_cnt * 1e9 / (double)d + 0.5;
	if (q < 1 || q > 65536)
		return;
	rate = (uint32_t)q;
	if (ev->smp_cnt >= rate || sv_sample_time_ns(ev->tai_sec, ev->smp_cnt, rate) != ev->t2_ns)
		return;
	rate_learned(r, gs, rate);
}

static void on_event(struct svr *r, unsigned fi, struct fileio *f, const struct sv_rec_event *ev)
{
	unsigned p = ev->point;
	int64_t t = to_tai(f, ev->t_ns);

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
		unkeyed_add(f, t);
		return;
	}
	if (f->cand_rate[ev->stream])
		rate_confirm(r, f, ev->stream, ev);
	if (!ev->tai_sec || (ev->flags & SV_REC_F_NOT_SYNCED)) {
		unkeyed_event(r, fi, f, ev, t);
		return;
	}
	rate_from_event(r, f, ev);
	join_event(r, fi, f, ev, ev->tai_sec, t);
}

static void join_event(struct svr *r, unsigned fi, struct fileio *f, const struct sv_rec_event *ev, uint32_t sec,
		       int64_t t)
{
	unsigned p = ev->point;
	int gs, guest = -1, slot;
	const struct svr_stream_info *st;
	int64_t idx, ref;
	struct lastobs *lo;
	struct jent *e;
	uint64_t key;

	gs = f->smap[ev->stream];
	st = &r->streams[gs];
	if (!point_shared(p)) {
		guest = file_guest(r, f, ev->guest);
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
	/* A publisher that fell a second behind its schedule (overloaded host) makes every later tool guess
	 * the wrong second: say so, it is the cause of the aliasing the clock check then reports. */
	if (p == SV_POINT_T0 && st->rate && ev->smp_cnt < st->rate) {
		int64_t behind = t - sv_sample_time_ns(sec, ev->smp_cnt, st->rate);

		if (behind >= SV_NSEC_PER_SEC - SV_SAMPLE_AHEAD_NS_DEFAULT) {
			r->pub_behind++;
			if (behind > r->pub_behind_max_ns)
				r->pub_behind_max_ns = behind;
		}
	}
	r->src_mask[slot] |= 1ull << fi;
	r->host_mask[slot] |= 1ull << f->host_id;
	/* svtrace's "missing" (seen upstream, never here): the file was looking here; the join counts the loss */
	if (sv_rec_event_missing(ev))
		return;	/* (its key is not used: not re-derived either) */
	/* A tool may stamp tai_sec from the event's own time (older svtrace records): a frame of the end of
	 * second S seen just after S+1 began then carries S+1. Re-derive the sample's second from the time when
	 * the recorded one is inconsistent with it (latency outside [-5 ms, 995 ms)). */
	if (st->rate && ev->smp_cnt < st->rate) {
		int64_t lat = t - sv_sample_time_ns(sec, ev->smp_cnt, st->rate);
		struct sv_sample_time sa;

		if ((lat < -SV_SAMPLE_AHEAD_NS_DEFAULT || lat >= SV_NSEC_PER_SEC - SV_SAMPLE_AHEAD_NS_DEFAULT) &&
		    lat > -2 * SV_NSEC_PER_SEC && lat < 2 * SV_NSEC_PER_SEC &&
		    !sv_sample_align(t, ev->smp_cnt, st->rate, SV_SAMPLE_AHEAD_NS_DEFAULT, &sa) && sa.tai_sec > 0) {
			sec = (uint32_t)sa.tai_sec;
			r->tot.realigned++;
		}
	}
	r->present[p][gslot(guest)] = true;
	if (ev->flags & SV_REC_F_DROPPED) {
		r->pts[p][gslot(guest)].dropped++;
		if (!(ev->flags & SV_REC_F_SKIPPED))
			return;
	}
	key = make_key((unsigned)gs, sec, ev->smp_cnt);
	idx = sample_idx(st, sec, ev->smp_cnt);
	e = lookup(r, key);
	if (!e) {
		unsigned step = st->asdus ? st->asdus : 1;
		int64_t max = r->max_idx[gs];

		ref = st->rate && ev->smp_cnt < st->rate ? sv_sample_time_ns(sec, ev->smp_cnt, st->rate) : t;
		if (ref < r->now - r->cfg.window_ns && t < r->now - r->cfg.window_ns) {
			r->tot.too_late++;
			return;
		}
		/* frames nobody saw between the highest joined one and this one */
		if (st->rate && max != INT64_MIN && idx > max + step)
			fill_gap(r, (unsigned)gs, max, idx);
		e = insert(r, key, t);
	}
	if (idx > r->max_idx[gs])
		r->max_idx[gs] = idx;
	if (ev->flags & SV_REC_F_SKIPPED) {
		e->flags |= ENT_SKIPPED;
		return;
	}
	if (e->seen & (1ull << slot)) {
		r->pts[p][gslot(guest)].duplicates++;
		return;
	}
	if (t - e->base > INT32_MAX || t - e->base < INT32_MIN) {
		r->tot.beyond_second++;
		return;
	}
	e->seen |= 1ull << slot;
	e->off[slot] = (int32_t)(t - e->base);
	r->pts[p][gslot(guest)].frames++;

	/* order and pacing, per (stream, point, guest) in arrival order; a replayed event arrived before
	 * those the order state holds (it only got its key later) */
	if (r->replaying)
		return;
	lo = &r->last[gs][slot];
	if (lo->idx != INT64_MIN && idx < lo->idx) {
		r->pts[p][gslot(guest)].reordered++;
		return;
	}
	if (lo->idx != INT64_MIN && idx == lo->idx + (st->asdus ? st->asdus : 1)) {
		struct svr_point_stats *ps = &r->pts[p][gslot(guest)];

		if (!ps->pacing) {
			ps->pacing = malloc(sizeof(*ps->pacing));
			if (ps->pacing)
				sv_stats_init(ps->pacing);
		}
		if (ps->pacing)
			sv_stats_add(ps->pacing, t - lo->t);
		if (st->rate && !ps->nominal_ns)
			ps->nominal_ns = SV_NSEC_PER_SEC * (st->asdus ? st->asdus : 1) / st->rate;
	}
	lo->idx = idx;
	lo->t = t;
}

/* Stream @gs has rate @rate (0: unknown). The first rate known wins: a later one, even a different one, is
 * ignored. When this one is the first, the order state measured on the (sec << 16) + smp scale moves
 * to sec * rate + smp (else every later frame looks reordered and no gap is ever seen), the gaps between
 * the frames still in the window become placeholders (loss before the rate was known), and the events
 * that waited for the rate are keyed and joined. */
static void rate_learned(struct svr *r, unsigned gs, uint32_t rate)
{
	const struct svr_stream_info *st = &r->streams[gs];
	unsigned step = st->asdus ? st->asdus : 1;
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
			unkeyed_event(r, p.fi, r->f[p.fi], &p.ev, p.t);
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
		qsort(idx, n, sizeof(*idx), cmp_i64);
		/* fill_gap inserts into the ring: the indexes were copied first */
		for (uint64_t i = 1; i < n; i++)
			if (idx[i] > idx[i - 1] + step)
				fill_gap(r, gs, idx[i - 1], idx[i]);
		free(idx);
	}
}

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
		guest = file_guest(r, f, ev_guest);
		if (guest < 0)
			return;
	}
	pi = pair_idx(from, point);
	ser[0] = series_get(r, pi, gslot(guest), -1);
	ser[1] = series_get(r, pi, gslot(guest), gs);
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
	l.guest = (int16_t)(t->guest == SV_REC_GUEST_NONE ? -1 : file_guest(r, f, t->guest));
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
		struct jent *e = lookup(r, make_key(l.stream, l.tai_sec, l.smp_cnt));

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

static void on_drop(struct svr *r, struct fileio *f, const struct sv_rec_drop *d)
{
	int guest = d->guest == SV_REC_GUEST_NONE || point_shared(d->point) ? -1 : file_guest(r, f, d->guest);
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
		int64_t a = to_tai(f, u->t_min_ns), b = to_tai(f, u->t_max_ns);

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
		unrec_add(r, f, lo, hi, pts ? pts : UNREC_ALL);
}

static void on_end(struct svr *r, struct fileio *f, const struct sv_rec_end *end)
{
	f->end_rec_t = to_tai(f, end->t_ns);
	if (end->lost_records > f->info.end_lost_records)
		f->info.end_lost_records = end->lost_records;
	if (end->lost_records <= f->located)
		return;
	/* an older writer counts its lost records in END only: taken as its tail, from its last event */
	f->info.unwritten_unlocated += end->lost_records - f->located;
	f->info.unwritten_records += end->lost_records - f->located;
	f->located = end->lost_records;
	unrec_add(r, f, f->last_ev_t != INT64_MIN ? f->last_ev_t + 1 : f->info.start_tai_ns, f->end_rec_t,
		  UNREC_ALL);
}

/* Reads @f up to its next timed record (STREAM/NAME are applied on the way). */
/* svtrace names every egress port it follows (NAME, kind GUEST): that guest's T2a is recorded by this
 * file from start to end, so frames that never reach it while the file records are lost there, even
 * when the port never saw a single frame (link down). */
static void declare_port(struct svr *r, unsigned fi, struct fileio *f, const struct sv_rec_name *n)
{
	int g, slot;

	if (n->name_kind != SV_REC_NAME_GUEST || f->info.guest[0] || strcmp(f->info.tool, "svtrace"))
		return;
	g = file_guest(r, f, n->id);
	slot = slot_of(SV_POINT_T2A, g);
	if (g < 0 || slot < 0)
		return;
	r->present[SV_POINT_T2A][g] = true;
	r->src_mask[slot] |= 1ull << fi;
	r->host_mask[slot] |= 1ull << f->host_id;
}

/* @to += the earlier parts' @before; the first damage's details are the earliest part's. */
static void damage_add(struct sv_record_reader_damage *to, const struct sv_record_reader_damage *before)
{
	if (svr_damaged(before)) {
		if (!svr_damaged(to)) {
			to->last_err = before->last_err;
			to->last_offset = before->last_offset;
		}
		to->first_err = before->first_err;
		to->first_offset = before->first_offset;
	}
	to->blocks_skipped += before->blocks_skipped;
	to->octets_skipped += before->octets_skipped;
	to->records_lost += before->records_lost;
	to->skips_uncounted += before->skips_uncounted;
	to->records_orphaned += before->records_orphaned;
	to->records_invalid += before->records_invalid;
}

/* The part after a rotated part's end (its END(rotated) read): true when it is open. A part that cannot
 * be opened ends the file there, with its error. */
static bool next_part(struct fileio *f)
{
	struct sv_record_reader_damage d;
	const char *path = f->parts[++f->part_i];
	int err;

	sv_record_reader_get_damage(f->rd, &d);
	damage_add(&d, &f->damage_before);
	f->damage_before = d;
	sv_record_reader_close(f->rd);
	f->rd = NULL;
	err = sv_record_reader_open(&f->rd, path);
	if (err) {
		open_failed(f, path, err);
		return false;
	}
	return true;
}

static void advance(struct svr *r, unsigned fi, struct fileio *f)
{
	int ret;

	f->have = false;
	while (!f->eof) {
		ret = sv_record_reader_next(f->rd, &f->rec);
		if (!ret && f->part_i + 1 < f->nparts && next_part(f))
			continue;
		if (ret <= 0) {
			f->eof = true;
			if (ret < 0) {
				f->info.err = ret;
				sv_record_reader_strerror(f->rd, f->info.errmsg, sizeof(f->info.errmsg));
			}
			f->info.clean_end = sv_record_reader_clean_end(f->rd);
			sv_record_reader_get_damage(f->rd, &f->info.damage);
			damage_add(&f->info.damage, &f->damage_before);
			/* recorded until its END, and at least as long as it has records */
			f->info.end_tai_ns = f->end_rec_t > f->last_t ? f->end_rec_t : f->last_t;
			if (f->info.end_tai_ns < f->info.start_tai_ns)
				f->info.end_tai_ns = f->info.start_tai_ns;
			for (unsigned i = 0; i < SV_REC_MAX_STREAMS; i++)
				if (f->cand_rate[i])
					rate_confirm(r, f, i, NULL);
			return;
		}
		f->info.records++;
		switch (f->rec.kind) {
		case SV_REC_STREAM:
			define_stream(r, f, &f->rec.u.stream);
			continue;
		case SV_REC_NAME:
			declare_port(r, fi, f, &f->rec.u.name);
			continue;
		case SV_REC_EVENT:
			f->t = to_tai(f, f->rec.u.event.t_ns);
			break;
		case SV_REC_DROP:
			f->t = to_tai(f, f->rec.u.drop.t_ns);
			break;
		case SV_REC_THREAD:
			f->t = to_tai(f, f->rec.u.thread.t_ns);
			break;
		case SV_REC_SYNC:
			f->t = to_tai(f, f->rec.u.sync.t_ns);
			break;
		case SV_REC_END:
			f->t = to_tai(f, f->rec.u.end.t_ns);
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
											: to_tai(f, f->rec.u.unwritten.t_first_ns);
			break;
		}
		case SV_REC_SUMMARY:
			f->t = ((int64_t)f->rec.u.summary.tai_sec + 1) * SV_NSEC_PER_SEC;
			break;
		case SV_REC_HIST:
			f->t = ((int64_t)f->rec.u.hist.tai_sec + 1) * SV_NSEC_PER_SEC;
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
	if (f->t < f->first_t && rec->kind != SV_REC_SUMMARY && rec->kind != SV_REC_HIST) {
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
		on_event(r, fi, f, &rec->u.event);
		break;
	case SV_REC_SUMMARY:
		r->tot.summaries++;
		on_summary(r, f, rec->u.summary.point, rec->u.summary.from_point, rec->u.summary.stream,
			   rec->u.summary.guest, &rec->u.summary, NULL, 0);
		break;
	case SV_REC_HIST:
		r->tot.hists++;
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
	default:
		break;
	}
}

/* Files of one report must describe one run: two that never recorded at the same time are most likely
 * from different runs (loss is only counted where a file was recording, but the join means nothing). */
static void add_warning(struct svr *r, const char *fmt, ...)
{
	va_list ap;

	if (r->nwarn >= sizeof(r->warn) / sizeof(r->warn[0]))
		return;
	va_start(ap, fmt);
	vsnprintf(r->warn[r->nwarn++], sizeof(r->warn[0]), fmt, ap);
	va_end(ap);
}

static void check_overlap(struct svr *r)
{
	for (unsigned i = 0; i < r->nfiles; i++)
		for (unsigned j = i + 1; j < r->nfiles; j++) {
			const struct svr_file_info *a = &r->f[i]->info, *b = &r->f[j]->info;
			int64_t gap;

			if (!r->f[i]->rd || !r->f[j]->rd || !a->to_tai || !b->to_tai || !a->records || !b->records)
				continue;
			gap = a->end_tai_ns < b->start_tai_ns ? b->start_tai_ns - a->end_tai_ns
			    : b->end_tai_ns < a->start_tai_ns ? a->start_tai_ns - b->end_tai_ns : -1;
			if (gap >= 0)
				add_warning(r, "%s and %s do not overlap in time (%.1f s apart): records of different "
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
		evict(r, false);
		pend_expire(r, false);
		process(r, bi, best);
		advance(r, bi, best);
	}
	pend_expire(r, true);
	evict(r, true);
	check_overlap(r);
	for (unsigned i = 0; i < r->nfiles; i++)
		if (r->f[i]->info.err && !first_err)
			first_err = r->f[i]->info.err;
	return first_err;
}

/* ---- results ---- */

unsigned svr_nwarnings(const struct svr *r)
{
	return r->nwarn;
}

const char *svr_warning(const struct svr *r, unsigned i)
{
	return i < r->nwarn ? r->warn[i] : NULL;
}

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

unsigned svr_nfiles(const struct svr *r)
{
	return r->nfiles;
}

const struct svr_file_info *svr_file(const struct svr *r, unsigned i)
{
	return i < r->nfiles ? &r->f[i]->info : NULL;
}

unsigned svr_nstreams(const struct svr *r)
{
	return r->nstreams;
}

const struct svr_stream_info *svr_stream(const struct svr *r, unsigned s)
{
	return s < r->nstreams ? &r->streams[s] : NULL;
}

unsigned svr_nguests(const struct svr *r)
{
	return r->nguests;
}

const char *svr_guest_name(const struct svr *r, unsigned g)
{
	return g < r->nguests ? r->guests[g] : NULL;
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

void svr_set_budget_pairs(struct svr *r, const uint8_t (*pairs)[2], unsigned n)
{
	r->nbudget_pairs = 0;
	for (unsigned i = 0; i < n && i < SVR_MAX_BUDGETS; i++) {
		r->budget_pairs[i][0] = pairs[i][0];
		r->budget_pairs[i][1] = pairs[i][1];
		r->nbudget_pairs++;
	}
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

/* ---- clock check ---- */

static void add_reason(struct svr_clock *c, bool note, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void add_reason(struct svr_clock *c, bool note, const char *fmt, ...)
{
	va_list ap;
	unsigned *n = note ? &c->nnotes : &c->nreasons;
	char(*arr)[160] = note ? c->notes : c->reasons;

	if (*n >= 8)
		return;
	va_start(ap, fmt);
	vsnprintf(arr[*n], sizeof(arr[0]), fmt, ap);
	va_end(ap);
	for (unsigned i = 0; i < *n; i++)
		if (!strcmp(arr[i], arr[*n]))
			return;	/* the same host seen in several files */
	(*n)++;
}

void svr_clock_check(struct svr *r, struct svr_clock *c)
{
	bool any_unset = false, any_set = false;

	memset(c, 0, sizeof(*c));
	c->single_host = true;
	for (unsigned i = 1; i < r->nfiles; i++)
		if (strcmp(r->f[i]->info.host, r->f[0]->info.host))
			c->single_host = false;
	for (unsigned i = 0; i < r->nfiles; i++) {
		const struct svr_file_info *fi = &r->f[i]->info;

		if (fi->err && !fi->records)
			continue;
		if (!fi->to_tai)
			add_reason(c, false, "%s: timestamps on CLOCK_%s with no conversion to TAI", fi->path,
				   sv_clock_name(fi->clock));
		if (fi->tai_unset)
			any_unset = true;
		else
			any_set = true;
		if (!fi->sync_ok) {
			if (c->single_host)
				add_reason(c, true,
					   "host %s: clock not synchronised (%s%s); one host, one clock: intervals "
					   "stay valid",
					   fi->host, fi->sync.unsync ? "STA_UNSYNC" : "state error",
					   fi->tai_unset ? ", TAI offset unset" : "");
			else
				add_reason(c, false, "host %s (%s, %s): clock not synchronised (%s%s)", fi->host,
					   fi->tool, fi->path, fi->sync.unsync ? "STA_UNSYNC" : "state error",
					   fi->tai_unset ? ", TAI offset unset" : "");
		}
	}
	if (!c->single_host && any_unset && any_set)
		add_reason(c, false, "some hosts have their TAI offset set and others not: 37 s apart");
	if (r->tot.negative && c->single_host)
		/* one clock cannot disagree with itself: two tools' stamps of one frame out of order (svtrace's
		 * T2b is the free of the guest's copy, which a deferred free puts after the guest's receive) */
		add_reason(c, true, "%" PRIu64 " latencies below -%" PRId64 " ns on one clock: a later point "
			   "stamped before an earlier one (not a clock fault; see the hops' min)",
			   r->tot.negative, r->cfg.clock_tolerance_ns);
	else if (r->tot.negative)
		add_reason(c, false, "%" PRIu64 " latencies below -%" PRId64 " ns: the clocks disagree",
			   r->tot.negative, r->cfg.clock_tolerance_ns);
	if (r->tot.beyond_second)
		add_reason(c, false, "%" PRIu64 " latencies of 1 s or more: smpCnt aliases by seconds",
			   r->tot.beyond_second);
	if (r->pub_behind)
		add_reason(c, false,
			   "the publisher sent %" PRIu64 " frames 1 s or more after their sample time (up to %.1f s "
			   "behind its schedule: overloaded host?); later points cannot tell their second",
			   r->pub_behind, (double)r->pub_behind_max_ns / 1e9);
	if (r->tot.realigned)
		add_reason(c, true, "%" PRIu64 " events carried the TAI second of their own time, not of their "
			   "sample: re-derived", r->tot.realigned);
	c->ok = c->nreasons == 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svreport's engine: reads the records of svpub, svtrace and every svsub (sv_record format, files from
 * one host or copied from several), joins them per frame on (svID, TAI second, smpCnt) and aggregates
 * per hop of the SEAPATH latency model (DESIGN.md: Ts, T0, T1, T2a, T2b, T3, T4), per guest and per
 * stream.
 *
 * One pass, bounded memory:
 *  - the files are read together, merged by record time (TAI), one block buffer each;
 *  - a join window holds the frames of the last `window_ns` (keyed by stream, second, smpCnt); a frame
 *    leaves the window when the merged time has moved `window_ns` past it, and only then are its hops
 *    counted (so loss, duplicates and reordering within the window are seen exactly);
 *  - per hop: an sv_stats histogram (29 KiB) per (hop, guest, stream) and, for the all-streams series,
 *    the per-frame values (int32 ns) while a global budget (`exact_limit` values) lasts: percentiles
 *    are exact from them; past the budget a series falls back to its histogram and says so (error
 *    bound <= value/128, sv_stats.h);
 *  - per-second aggregates are folded into at most SVR_TIME_BINS bins (bin width doubles as the run
 *    grows), for the plots.
 * Works from SUMMARY/HIST records alone (per-frame records off): hops then come from the tools'
 * per-second histograms, with their bucket error bounds.
 */
#ifndef SVREPORT_H
#define SVREPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sv_comtrade.h"
#include "sv_record.h"
#include "sv_stats.h"

#define SVR_MAX_FILES 64
#define SVR_MAX_GUESTS 8		/* guests per report (join entries hold 4 points per guest) */
#define SVR_MAX_STREAMS 256		/* distinct svIDs per report */
#define SVR_NPOINTS SV_POINT_COUNT	/* Ts..T4 */
#define SVR_TIME_BINS 512		/* time resolution of the plots */
#define SVR_COARSE_BINS 40		/* per-bin latency histogram: 4 bins per octave from 1 us */
#define SVR_MAX_LATE 64			/* why-late list: the worst N waits kept */
#define SVR_MAX_HOLDERS 32		/* why-late: aggregated by holder thread name */
#define SVR_MAX_DROPS 64		/* distinct (point, guest, reason) drop counters */
#define SVR_MAX_BUDGETS 32
#define SVR_GUEST_SHARED (-1)		/* hops between shared points (Ts, T0, T1): no guest */

struct svr_cfg {
	int64_t window_ns;		/* join window (default 3 s) */
	uint64_t max_frames;		/* frames held in the window at most (default 4 Mi) */
	uint64_t exact_limit;		/* per-frame values kept for exact percentiles (default 32 Mi) */
	int64_t clock_tolerance_ns;	/* negative latencies down to -tolerance are clock granularity */
	unsigned max_late;		/* why-late entries kept (<= SVR_MAX_LATE) */
	/* true: a guest is expected to get only the streams it has a record of (a switch with per-stream
	 * rules, svtrace --expect seen); a frame of another stream is not lost toward it. false (default):
	 * every stream toward every guest (a bridge floods). */
	bool expect_seen;
};
void svr_cfg_defaults(struct svr_cfg *c);

/* A latency series: one hop (from -> to) of one guest and one stream (or all streams). */
struct svr_series {
	struct sv_stats *hist;		/* per-frame values (NULL until the first) */
	int32_t *vals;			/* exact values (all-streams series only), NULL when dropped */
	uint64_t nvals, capvals;
	bool inexact;			/* the budget ran out: percentiles from hist */
	bool overflow;			/* a value outside int32 ns: exact array dropped */
	struct sv_stats *sum_hist;	/* merged HIST records (per-second summaries) */
	struct sv_counters sum_cnt;	/* summed SUMMARY counters */
	uint64_t sum_count;		/* SUMMARY latency counts */
	struct sv_stats_summary sum_bound; /* from SUMMARY without HIST: min of mins, max of maxes/pXX */
	uint64_t sum_records, hist_records;
};

/* Per time bin of one (hop, guest) all-streams series. */
struct svr_bin {
	uint64_t count;
	uint64_t lost;
	int64_t min, max;
	double sum;
	uint32_t coarse[SVR_COARSE_BINS];
};

struct svr_late {
	uint32_t stream;		/* global stream */
	uint32_t tai_sec;
	uint16_t smp_cnt;
	uint8_t point;
	int16_t guest;
	int64_t wait_ns;
	int64_t holder_run_ns;
	uint32_t feeder_tid, holder_pid;
	uint8_t holder_policy, holder_prio;
	uint32_t cause;
	char feeder_comm[16];
	char holder_comm[16];
	bool has_hop;			/* hop_ns known: the frame was joined at hop_from and point */
	uint8_t hop_from;		/* the nearest earlier point seen (T1 at the earliest) */
	int64_t hop_ns;			/* latency of hop_from -> point of that frame (svtrace's hop_ns) */
};

struct svr_holder {
	char comm[16];
	uint8_t policy, prio;
	uint64_t count;
	int64_t total_ns, max_ns;
};

struct svr_drop {
	uint8_t point;
	int16_t guest;
	uint16_t reason;
	char name[32];
	uint64_t count;
};

/* What the report knows about one input file. */
struct svr_file_info {
	char path[256];
	char tool[16];
	char host[64];
	char guest[64];			/* --guest NAME for this file, else "" */
	enum sv_clock_id clock;
	bool to_tai;			/* timestamps convertible to TAI */
	struct sv_rec_sync sync;	/* at start */
	bool sync_ok;			/* sv_clock_sync_ok at start and in every SYNC record */
	bool tai_unset;
	int64_t start_tai_ns, end_tai_ns;
	bool clean_end;			/* ended with an END record */
	unsigned parts;			/* files read: a rotated run's parts beside it, and it */
	uint64_t records, events;
	struct sv_record_reader_damage damage;	/* damaged blocks the reader skipped (sv_record.h) */
	/* What the file's writer could not write (a full disk): its UNWRITTEN records, and what its END counts
	 * beyond them (an older writer: taken as its tail after the last event). Frames it would have seen
	 * there are "not recorded" at its points, never lost. */
	uint64_t unwritten_records;
	uint64_t unwritten_events;
	uint64_t unwritten_frames[SVR_NPOINTS];	/* per point (ASDU 0 events) */
	uint64_t unwritten_stretches;
	uint64_t unwritten_unlocated;		/* counted by END only: placed at the tail */
	int unwritten_errno;			/* of the last stretch (positive; 0 unknown) */
	bool unwritten_floor;			/* held back by the writer's free-space floor */
	uint64_t end_lost_records;		/* the largest END lost_records (the writer's whole-run count) */
	int err;			/* 0, or the reader's error (-EBADMSG...) */
	char errmsg[256];
};

struct svr_stream_info {
	char svid[SV_REC_SVID_SIZE];
	uint16_t appid;
	uint32_t rate;			/* samples/s (0 unknown) */
	uint16_t asdus;			/* ASDUs per frame */
};

/* Per (point, guest): what was seen there. */
struct svr_point_stats {
	uint64_t frames;		/* distinct frames seen */
	uint64_t duplicates;		/* same frame seen again at this point */
	uint64_t reordered;		/* arrived after a later frame of its stream */
	uint64_t dropped;		/* flagged dropped / DROP records */
	uint64_t missing;		/* seen before and after this point, never here */
	uint64_t lost_after;		/* last seen here: never reached a later covered point */
	uint64_t not_recorded;		/* not seen here while this point's file had not written its records
					 * (a full disk: UNWRITTEN): unknown, neither lost nor missing */
	struct sv_stats *pacing;	/* interval between consecutive frames of a stream */
	int64_t nominal_ns;		/* nominal interval (frame period), 0 unknown */
};

struct svr;

int svr_create(struct svr **out, const struct svr_cfg *cfg);
void svr_destroy(struct svr *r);

/* Adds an input. @guest names the guest whose records this file holds (svsub in a VM); NULL: events
 * with a guest index take the file's GUEST names, others the file's host name. Returns 0, -E2BIG (too
 * many files), or the reader's open error (the message is in the file info). */
int svr_add_file(struct svr *r, const char *path, const char *guest);
/* svr_add_file() for each; a rotated run's parts given as well as its newest (trace.rec*) are read once,
 * whatever their order. Returns the first error (the message is in the last file's info). */
int svr_add_files(struct svr *r, const char *const *paths, const char *const *guests, unsigned n);
/* Renames a guest as found in records (svtrace's egress port, a host name) to @to. @from is NAME (from
 * any host's records) or HOST:NAME (only from the records of host HOST, as their header names it: two
 * hypervisors' same-named ports to two guests); HOST:NAME wins over NAME. -EINVAL: @from is not 1..127
 * characters or @to not 1..63. */
int svr_add_alias(struct svr *r, const char *from, const char *to);
/* After svr_run(): the FROM of alias @i (in the order added) when it renamed nothing, else NULL. */
const char *svr_alias_unused(const struct svr *r, unsigned i);
/* Describes guest @guest (its final name, after aliases): the setup it stands for, e.g. "SV in its own
 * higher traffic class". Shown next to the guest in every output. -EINVAL: names too long. */
#define SVR_LABEL_SIZE 160
int svr_set_guest_label(struct svr *r, const char *guest, const char *label);
/* The label of guest @g, or NULL. */
const char *svr_guest_label(const struct svr *r, unsigned g);
/* A line saying how the run was set up (the lab: which switch, which datapath, what the switch dropped),
 * shown at the top of every output (JSON: "setup"). At most SVR_MAX_SETUP lines of < SVR_SETUP_SIZE
 * octets: -EINVAL too long, -E2BIG too many. */
#define SVR_MAX_SETUP 8
#define SVR_SETUP_SIZE 256
int svr_add_setup(struct svr *r, const char *line);
/* Setup line @i (in the order added), NULL past the last. */
const char *svr_setup(const struct svr *r, unsigned i);
/* Writes every EVENT as CSV (sv_record columns) while reading. NULL: off. */
void svr_set_csv(struct svr *r, FILE *csv);

/* Hop pairs the budgets name: kept (exact values, time bins) even when not consecutive. Call before
 * svr_run(). */
void svr_set_budget_pairs(struct svr *r, const uint8_t (*pairs)[2], unsigned n);

/* Reads everything. Returns 0, or the first file's read error (the report is still usable: the file's
 * records up to the fault are in). */
int svr_run(struct svr *r);

/* ---- Results -------------------------------------------------------------------------------- */

unsigned svr_nfiles(const struct svr *r);
const struct svr_file_info *svr_file(const struct svr *r, unsigned i);
unsigned svr_nstreams(const struct svr *r);
const struct svr_stream_info *svr_stream(const struct svr *r, unsigned s);
unsigned svr_nguests(const struct svr *r);
const char *svr_guest_name(const struct svr *r, unsigned g);

/* True when some record of the run was at @point (for @guest; shared points ignore the guest). */
bool svr_point_present(const struct svr *r, unsigned point, int guest);
const struct svr_point_stats *svr_point(const struct svr *r, unsigned point, int guest);
/* A row of the points' tables: @point recorded, shared (T0, T1) with @guest SVR_GUEST_SHARED or a guest's
 * with @guest >= 0 (Ts is computed, never a row). */
bool svr_point_shown(const struct svr *r, unsigned point, int guest);
/* Some file recorded @point, for some guest or shared (else the outputs say it has no records). */
bool svr_point_anywhere(const struct svr *r, unsigned point);

/* A computed hop result. */
struct svr_hop {
	uint8_t from, to;
	int guest;			/* SVR_GUEST_SHARED for Ts/T0/T1-only hops */
	int stream;			/* -1: all streams */
	uint64_t count;
	uint64_t lost;
	uint64_t missing;
	bool from_summaries;		/* per-second summaries, no per-frame records */
	bool cross_host;		/* its two points are recorded on different hosts (svr_hop_cross_host) */
	struct sv_stats_summary lat;	/* exact when lat.exact */
	const struct svr_series *series;
};

/* Hops to report for @guest, in order: the chain of consecutive points present, then the end-to-end
 * hops (first -> last point, T0 -> last, T1 -> T2b) and @extra pairs (budgets). Fills up to @max
 * (from,to) pairs; returns how many. */
unsigned svr_hop_list(const struct svr *r, int guest, uint8_t (*pairs)[2], unsigned max);
/* The hops the outputs put side by side across guests: the hypervisor (T1-T2b), the feeder to the
 * guest (T2b-T3), the guest's receive path (T3-T4), publisher to application (T0-T4) and, when the
 * guests record no T4, publisher to guest receive (T0-T3). Hops without data are left out. */
#define SVR_NCOMPARE 5
extern const uint8_t svr_compare_hops[SVR_NCOMPARE][2];
/* Computes one hop result. Returns 0, or -ENODATA when the hop has no data at all. */
int svr_hop_get(struct svr *r, unsigned from, unsigned to, int guest, int stream, struct svr_hop *out);

/* True when the records of @from and those of @to come from different hosts (Ts counts as T0's host), so
 * the hop compares two clocks: not a measurement when the clocks are not synchronised. */
bool svr_hop_cross_host(const struct svr *r, unsigned from, unsigned to, int guest);
/* True when guest @g saw no frame at any of its points while frames were lost toward it (*@lost of them):
 * a port declared by the tracer whose link is down, a subscriber that received nothing. */
bool svr_guest_silent(const struct svr *r, unsigned g, uint64_t *lost);
/* Warnings about the set of files (e.g. two that never recorded at the same time), for every output. */
unsigned svr_nwarnings(const struct svr *r);
const char *svr_warning(const struct svr *r, unsigned i);

/* Time bins of the all-streams series (from, to, guest); NULL when none. *n bins of width *width_s
 * seconds starting at TAI second *first_sec. */
const struct svr_bin *svr_hop_bins(const struct svr *r, unsigned from, unsigned to, int guest,
				   unsigned *n, uint32_t *width_s, int64_t *first_sec);
/* Lost frames per time bin for @guest (all hops), same bins as above; NULL when none. */
const uint64_t *svr_lost_bins(const struct svr *r, int guest, unsigned *n);

unsigned svr_nlate(const struct svr *r);
const struct svr_late *svr_late_get(const struct svr *r, unsigned i);	/* worst first */
unsigned svr_nholders(const struct svr *r);
const struct svr_holder *svr_holder_get(const struct svr *r, unsigned i);
/* What to call a holder: its name; without one, pid 0 means the idle task had the CPU or no switch
 * was seen ("(idle or not seen)"), another pid "(unknown)". */
const char *svr_holder_label(const char *comm, uint32_t pid);
/* A late frame nobody's run delayed: no holder named (the feeder's CPU idle, or no switch seen). */
static inline bool svr_late_unheld(const struct svr_late *l)
{
	return !l->holder_pid && !l->holder_comm[0];
}
unsigned svr_ndrops(const struct svr *r);
const struct svr_drop *svr_drop_get(const struct svr *r, unsigned i);

/* Counters of the run as a whole. */
struct svr_totals {
	uint64_t events, summaries, hists, threads, drops;
	uint64_t not_joinable;		/* events without a usable key (not synchronised, unknown stream): never
					 * counted as lost, their time is excluded from their file's loss count */
	uint64_t rekeyed;		/* events without a key given one from the stream's rate (learned later
					 * or from another file), then joined */
	uint64_t later_asdus;		/* per-sample events of ASDUs > 0 (frames are joined on the first) */
	uint64_t too_late;		/* arrived after their frame left the window */
	uint64_t window_full;		/* frames evicted early because the window was full */
	uint64_t too_many_guests;	/* events of guests beyond SVR_MAX_GUESTS */
	uint64_t skipped;		/* frames the publisher skipped (not sent: not lost) */
	uint64_t outage_lost;		/* frames lost in gaps too long to hold in the window */
	uint64_t not_recorded;		/* frames some point's file did not record (a full disk: see
					 * svr_point_stats.not_recorded), not counted as lost */
	uint64_t frames;		/* distinct frames joined */
	uint64_t exact_dropped;		/* series that fell back to histograms */
	uint64_t negative;		/* latencies < -tolerance (clock nonsense) */
	uint64_t beyond_second;		/* latencies >= 1 s (aliasing: clock nonsense) */
	uint64_t realigned;		/* events whose tai_sec disagreed with their time (re-derived) */
};
const struct svr_totals *svr_totals(const struct svr *r);

/* ---- Clock check ---------------------------------------------------------------------------- */
struct svr_clock {
	bool single_host;		/* every file from one host: one clock, sync state does not matter */
	bool ok;			/* joinable without nonsense */
	unsigned nreasons;
	char reasons[8][160];
	unsigned nnotes;
	char notes[8][160];
};
void svr_clock_check(struct svr *r, struct svr_clock *out);
/* Hop @h's latencies cannot be trusted under clock check @c: the clocks were not trusted and the hop lies on
 * one host whose clock is in doubt or crosses hosts. Such a hop is shown, marked, and its latencies are not
 * judged (its loss is, across hosts: counting needs no clock). */
static inline bool svr_hop_unsync(const struct svr_clock *c, const struct svr_hop *h)
{
	return !c->ok && (c->single_host || h->cross_host);
}

/* ---- Soak (svreport_soak.c): INTERVAL, interval HIST, WINDOW, CLOCK and WHY records ---------- */
/*
 * A soak's records (docs/record-format.md "Soak records") are read in the same merged pass, into tables of a
 * fixed size allocated at the first soak record: memory does not grow with the soak's length. Per (hop,
 * guest): the interval HIST records merged (the whole soak's percentiles, with their bucket error), the
 * counters of its INTERVAL records, a timeline of at most SVR_SOAK_POINTS points (a point covers one
 * interval, then 2, 4 ... as the soak grows: it holds the largest p50, p99 and max of its intervals) and
 * rows of an hour (2 h, 4 h ... past SVR_SOAK_HOURS). Besides: the worst intervals, the events (windows,
 * losses, drops, restarts, changes, run restarts, clock steps; the first SVR_SOAK_EVENTS listed, the others
 * counted), the largest why-late records (to name the worst frames' causes).
 */
#define SVR_SOAK_HOPS 32		/* (hop, guest) pairs */
#define SVR_SOAK_POINTS 512		/* timeline points per hop */
#define SVR_SOAK_HOURS 168		/* hourly rows (a week; past it a row covers 2 h, 4 h ...) */
#define SVR_SOAK_WORST 16		/* worst intervals listed */
#define SVR_SOAK_EVENTS 4096		/* events listed (the others counted) */
#define SVR_SOAK_WHY 256		/* why-late records kept (the longest hops) */
#define SVR_SOAK_CAUSES 3		/* causes shown per why-late */

struct svr_soak_point {
	uint32_t intervals;		/* interval histograms in it */
	int64_t p50, p99, max;		/* the largest of its intervals' (ns) */
	uint64_t count, late, lost, dropped;	/* lost: samples lost + frames missing */
	bool window;			/* a window of this hop's guest (or every guest) starts in it */
};

struct svr_soak_hop {
	uint8_t from, to;		/* from == to: the counts of a point alone (INTERVAL from_point 255) */
	int guest;			/* SVR_GUEST_SHARED for hops between shared points */
	uint64_t files;			/* bit per input file that wrote it */
	struct sv_stats hist;		/* every interval HIST of the hop merged */
	uint64_t hists, intervals;	/* HIST and INTERVAL records */
	uint64_t frames, samples, count, late, lost, missing, dropped, duplicate, reordered, outliers, errors,
		restarts, changes, strays, first_partial, saturated;
	int64_t worst_ns;		/* the largest latency of any interval (INTERVAL worst_ns) */
	uint32_t worst_stream, worst_tai_sec;	/* its frame (global stream) */
	uint16_t worst_smp_cnt;
	struct svr_soak_point pts[SVR_SOAK_POINTS];
	int64_t hour_p99[SVR_SOAK_HOURS], hour_max[SVR_SOAK_HOURS];	/* the largest of the row's intervals */
};

struct svr_soak_hour {
	uint32_t intervals;		/* INTERVAL records */
	uint64_t frames, late, lost, missing, dropped, restarts, changes;
	uint32_t windows;		/* windows kept that start in it */
	int64_t worst_ns;		/* the row's largest latency, */
	int worst_hop;			/* at this hop (-1 none) */
};

struct svr_soak_worst {
	int hop;			/* index in svr_soak.hops */
	unsigned file;
	uint32_t tai_sec, period_ms;	/* the interval */
	uint32_t stream;		/* global stream, UINT32_MAX unknown */
	uint32_t worst_tai_sec;
	uint16_t worst_smp_cnt;
	int64_t worst_ns;
	uint32_t late;			/* frames of the key over the threshold in the interval */
	uint8_t flags;			/* SV_REC_INTERVAL_F_* */
	uint8_t point;			/* the hop's end, as recorded */
	uint16_t rec_guest;		/* the guest and stream as recorded (the why-late lookup) */
	uint32_t rec_stream;
	bool why_found;			/* flag WHY and its record was found: causes below */
	int64_t why_ns;			/* the why-late record's hop (t_to - t_from) */
	uint8_t why_from, why_to;	/* its hop */
	unsigned ncauses;
	uint8_t cause[SVR_SOAK_CAUSES];	/* enum sv_rec_why_cause, largest first */
	int64_t cause_ns[SVR_SOAK_CAUSES];
};

enum svr_soak_ev_kind {
	SVR_SOAK_EV_WINDOW,		/* a flight-recorder window kept */
	SVR_SOAK_EV_LOSS,		/* samples lost (smpCnt gaps) in an interval */
	SVR_SOAK_EV_MISSING,		/* frames seen upstream, never here (svtrace) */
	SVR_SOAK_EV_DROP,		/* frames dropped */
	SVR_SOAK_EV_RESTART,		/* the sample counter restarted */
	SVR_SOAK_EV_CHANGE,		/* confRev, quality or simulation changed */
	SVR_SOAK_EV_GAP,		/* a tool's run ended and a new run (new run_id) started: not recorded between */
	SVR_SOAK_EV_STEP,		/* a tool's clock -> TAI conversion stepped (CLOCK record) */
	SVR_SOAK_EV__COUNT,
};
/* "window", "loss", "missing", "drop", "restart", "change", "gap", "clock step". */
const char *svr_soak_ev_name(unsigned kind);

struct svr_soak_event {
	int64_t t_ns;			/* TAI: the interval's start, the window's trigger, the gap's start, the step */
	int64_t end_ns;			/* TAI: the interval's, window's or gap's end (t_ns for a step) */
	uint8_t kind;			/* enum svr_soak_ev_kind */
	uint8_t cls, classes;		/* windows: first trigger class, bits of every class merged */
	uint8_t from, to;		/* the hop (from SV_POINT_NONE: a point, to SV_POINT_NONE: none) */
	int guest;			/* guest index, SVR_GUEST_SHARED none or every guest */
	uint32_t stream;		/* global stream, UINT32_MAX none */
	unsigned file;			/* the file that recorded it */
	int64_t value;			/* samples/frames (loss, drop...), the trigger's measure, the step (ns) */
	uint32_t hops;			/* interval events: hops of the file that counted it (merged) */
	uint32_t flags;			/* windows: SV_REC_WINDOW_F_*; gaps: 1 the run before ended without END */
	uint32_t triggers;		/* windows: triggers merged into it */
	/* windows: the other files with a window of the same stream over the same time (the join of several
	 * hosts' windows: each tool keeps its own; bit per file) */
	uint64_t joined;
};

struct svr_soak {
	unsigned nhops;
	struct svr_soak_hop *hops;	/* SVR_SOAK_HOPS, in the order first seen */
	uint64_t hops_dropped;		/* records of (hop, guest) pairs past SVR_SOAK_HOPS */
	int64_t t0_sec;			/* TAI second of timeline point 0 and hour row 0 (a whole hour) */
	uint32_t pt_width_s;		/* seconds per timeline point */
	unsigned npts;			/* timeline points in use */
	uint32_t period_ms;		/* the intervals' length (the first seen; 0 none) */
	bool mixed_periods;		/* files with different interval lengths */
	uint32_t hour_s;		/* seconds per hourly row (3600, 7200 ...) */
	unsigned nhours;
	struct svr_soak_hour hours[SVR_SOAK_HOURS];
	int64_t first_tai_ns, last_tai_ns;	/* the soak's span: first interval's start, last one's end */
	uint64_t intervals, hists, windows, clock_steps, gaps, whys;
	uint64_t windows_cls[SV_WINDOW_CLASSES];	/* kept, per first trigger class */
	uint64_t refused_cls[SV_WINDOW_CLASSES];	/* not kept by the budget (the writers' counts) */
	uint64_t refused_busy;
	unsigned nworst;
	struct svr_soak_worst worst[SVR_SOAK_WORST];	/* worst first */
	unsigned nevents;
	struct svr_soak_event events[SVR_SOAK_EVENTS];	/* by time after svr_run() */
	uint64_t events_unlisted[SVR_SOAK_EV__COUNT];	/* past SVR_SOAK_EVENTS */
	uint64_t events_total[SVR_SOAK_EV__COUNT];
};
/* The soak's tables, NULL when the input has no soak record (INTERVAL, interval HIST, WINDOW, CLOCK). */
const struct svr_soak *svr_soak_get(const struct svr *r);
/* The soak's whole-run summary of hop @h (from its merged interval histograms, errors from the buckets). */
void svr_soak_hop_summary(const struct svr_soak_hop *h, struct sv_stats_summary *s);

/* ---- Budgets (svreport_budget.c) ------------------------------------------------------------ */
enum svr_stat { SVR_STAT_MIN, SVR_STAT_P50, SVR_STAT_P99, SVR_STAT_P999, SVR_STAT_P9999, SVR_STAT_MAX,
		SVR_STAT_LOST, SVR_STAT_COUNT_ };
const char *svr_stat_name(unsigned s);	/* "min" ... "lost" */
/* Latency statistic @stat (not SVR_STAT_LOST: 0) of @s, *@err its error bound (0 exact). */
int64_t svr_summary_stat(const struct sv_stats_summary *s, unsigned stat, int64_t *err);

struct svr_budget {
	uint8_t from, to;
	unsigned stat;			/* enum svr_stat */
	int64_t limit;			/* ns for latencies, frames for lost */
	char guest[64];			/* "" = every guest */
};
struct svr_budgets {
	unsigned n;
	struct svr_budget b[SVR_MAX_BUDGETS];
	int64_t clock_tolerance_ns;	/* -1: not set in the file */
};
/* The defaults: max of T0-T4 250 us, of T1-T2b 100 us, of T3-T4 100 us. */
void svr_budgets_default(struct svr_budgets *b);
/* Loads @path (YAML). Returns 0, or -errno / -EINVAL with @errbuf "file:line:column: path: msg". */
int svr_budgets_load(struct svr_budgets *b, const char *path, char *errbuf, size_t errlen);

/* NONE: nothing could be checked (no budget's hop in the records, no silent guest): not a failure. */
enum svr_verdict { SVR_PASS, SVR_FAIL, SVR_UNSYNCHRONISED, SVR_NONE };
const char *svr_verdict_name(enum svr_verdict v);

struct svr_budget_result {
	int guest;			/* per guest evaluated */
	bool evaluated;			/* the hop had data */
	bool unsync;			/* not evaluated: a cross-host hop while the clocks are not synchronised */
	bool pass;
	int64_t value;
	bool exact;
	int64_t err;			/* bucket error bound when not exact */
};
struct svr_eval {
	enum svr_verdict verdict;
	unsigned evaluated, failed;
	unsigned silent;		/* guests that received nothing while frames were lost toward them */
	struct svr_budget_result res[SVR_MAX_BUDGETS][SVR_MAX_GUESTS + 1];
	unsigned nres[SVR_MAX_BUDGETS];
	struct svr_clock clock;
	char why[256];			/* one line: why this verdict */
	/* The soak's verdict (svr_soak_get() not NULL): every budget against the soak's hops, from the whole
	 * soak's merged interval histograms (latency) and interval counters (lost: samples lost + frames
	 * missing). A soak that fails makes the report's verdict FAIL. */
	struct svr_soak_eval {
		bool present;
		enum svr_verdict verdict;
		unsigned evaluated, failed;
		unsigned nres;
		struct svr_soak_result {
			unsigned budget;	/* index in the budgets */
			unsigned hop;		/* index in svr_soak.hops */
			bool pass;
			int64_t value, err;	/* err: the bucket's error bound (0 exact) */
		} res[64];
		char why[256];
	} soak;
};
void svr_evaluate(struct svr *r, const struct svr_budgets *b, struct svr_eval *e);
/* The soak's part of svr_evaluate(): @e->soak (present false when the input has no soak record). */
void svr_soak_evaluate(struct svr *r, const struct svr_budgets *b, struct svr_eval *e);

/* ---- cyclictest (svreport_cyclic.c) --------------------------------------------------------- */
#define SVR_CT_MAX_US 10000
struct svr_cyclic {
	bool present;
	unsigned threads;
	uint64_t total;
	int64_t min_us, avg_us, max_us;	/* over all threads (avg: weighted) */
	uint64_t overflows;
	unsigned hist_len;		/* buckets of 1 us */
	uint64_t hist[SVR_CT_MAX_US];	/* summed over threads */
	char path[256];
};
/* Reads `cyclictest -q -h N --histfile FILE` (or its saved stdout with "T: .. Min: .. Max:" lines).
 * Returns 0, -errno, or -EBADMSG with @errbuf naming the line. */
int svr_cyclic_load(struct svr_cyclic *c, const char *path, char *errbuf, size_t errlen);

/* ---- Output (svreport_out.c: the sections of svreport_text.c, _json.c, _html.c) ------------- */
/* What file @fi's writer could not write, for every output: "8186 records (8182 events: T0 8182 frames)
 * in 1 stretch: ENOSPC (No space left on device)"; "" when it wrote everything. */
int svr_file_unwritten_format(const struct svr_file_info *fi, char *buf, size_t size);

int svr_write_text(struct svr *r, const struct svr_budgets *b, const struct svr_eval *e,
		   const struct svr_cyclic *ct, FILE *f);
int svr_write_json(struct svr *r, const struct svr_budgets *b, const struct svr_eval *e,
		   const struct svr_cyclic *ct, FILE *f);
/* @dr: a COMTRADE disturbance record to plot (its phase currents around the trigger, the trip marked), or
 * NULL. */
int svr_write_html(struct svr *r, const struct svr_budgets *b, const struct svr_eval *e,
		   const struct svr_cyclic *ct, const struct sv_ct_data *dr, FILE *f);
/* True when the reader stepped over or dropped anything in a file (blocks, invalid or orphaned records). */
bool svr_damaged(const struct sv_record_reader_damage *d);
/* What a file's damage cost, for the text and HTML reports: "2 block(s) skipped (8192 octets, at least 40
 * records lost), 1 invalid record dropped, 0 orphaned; first: block_crc at offset 4096". snprintf's value. */
int svr_damage_format(const struct sv_record_reader_damage *d, char *buf, size_t size);

#endif /* SVREPORT_H */

/* SPDX-License-Identifier: Apache-2.0 */
/* Stream tracker: the rules are in svsub_track.h. */
#include "svsub_track.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "sv_clock.h"
#include "sv_dataset.h"
#include "sv_mem.h"
#include "sv_rate.h"

#define BITMAP_WORDS (SV_RATE_SPACE / 64u)

struct stream {
	struct svsub_stream_stats s;
	uint64_t last_frame;	/* tracker frame number of the last frame that carried this stream */
	uint64_t last_counted;	/* ... and of the last one counted in frames (not a PRP copy) */
	uint64_t errors_base;	/* appid_errors[appid] when the stream was created */
	int64_t head_rx_ns;	/* receive time of the head sample */
	int64_t head_abs;	/* absolute sample index of the head (TAI second * W + smpCnt), if abs_wrap == W */
	uint32_t abs_wrap;	/* the W head_abs counts in; 0: not known (not synchronised, no fresh frame yet) */
	int64_t pace_rx0;	/* receive time of the head when pace_adv was 0 (first sample, restart) */
	uint64_t pace_adv;	/* positions the head moved since: the pace samples come at (a replay's, too) */
	uint32_t head;		/* the most advanced smpCnt accepted */
	uint32_t span;		/* positions the head has passed since the first sample or a restart, <= W */
	struct sv_rate rl;	/* W and the rate (s.wrap, wrap_source, wrap_violations: its copies) */
	bool started;
	bool have_prev;		/* confRev/smpSynch seen */
	bool prp_seen;		/* a sample came with a PRP LAN; until then rx_lan[] is all zero and untouched */
	const struct svsub_dataset_rule *rule; /* the declared dataset that matched it, or NULL */
	/* a run of consecutive samples behind the head (counter restart candidate) */
	uint32_t run_next;
	uint32_t run_len;
	uint32_t run_start;
	uint64_t run_dup, run_ooo, run_lost_taken;
	/* per smpCnt, in the head's current lap: received at all; received over PRP LAN A; over LAN B */
	uint64_t rx[BITMAP_WORDS];
	uint64_t rx_lan[2][BITMAP_WORDS];
};

struct svsub_tracker {
	struct svsub_track_cfg cfg;
	uint32_t cap;		/* slots, power of two >= 2 * max_streams */
	int32_t *slot;		/* index into streams[], -1 empty */
	struct stream *streams;	/* max_streams slots of address space, used in order of the streams' arrival */
	size_t streams_bytes;
	uint32_t nstreams;	/* written by the receive thread only; the populator reads it (atomic) */
	uint32_t populated;	/* slots [0, populated) mapped writable (cfg.prefault); atomic */
	uint64_t unpopulated;	/* streams created in a slot not populated yet (their first frames fault) */
	int populate_err;	/* why the populator stopped (-errno), 0 */
	bool populator_on;
	bool populator_stop;	/* atomic */
	pthread_t populator;
	uint64_t frames;
	uint64_t overflow;
	uint64_t errors[SV_E__COUNT];
	uint64_t *appid_errors;	/* malformed frames per APPID (65536 counters), O(1) per error */
	const struct sv_dataset *ds_92le; /* assumed for 64-octet seqData without a declaration */
};

const char *svsub_dataset_source_name(enum svsub_dataset_source s)
{
	switch (s) {
	case SVSUB_DS_UNKNOWN:
		return "unknown";
	case SVSUB_DS_ASSUMED:
		return "assumed";
	case SVSUB_DS_DECLARED:
		return "declared";
	case SVSUB_DS_NONE:
		return "none";
	}
	return "?";
}

static inline bool bit_get(const uint64_t *b, uint32_t i)
{
	return (b[i >> 6] >> (i & 63)) & 1;
}

static inline void bit_put(uint64_t *b, uint32_t i, bool on)
{
	if (on)
		b[i >> 6] |= 1ull << (i & 63);
	else
		b[i >> 6] &= ~(1ull << (i & 63));
}

/* The learner's W as the stream's readers see it (svsub_stream_stats: wrap, wrap_source, wrap_violations). */
static void wrap_publish(struct stream *st)
{
	st->s.wrap = st->rl.wrap;
	st->s.wrap_source = st->rl.source;
	st->s.wrap_violations = st->rl.violations;
}

/*
 * No page fault on the per-packet path (docs/decisions.md, prefault): the first slots are written at creation;
 * beyond, a thread of the lowest class keeps SVSUB_TRACK_POPULATE_AHEAD slots past the last stream mapped, with
 * MADV_POPULATE_WRITE, which maps pages without writing them (so it may run while the receive thread writes the
 * slots it uses). It runs in the receive thread's idle time; a burst of new streams faster than it only costs
 * faults (counted in unpopulated), never a wrong count.
 */
static int populate(struct svsub_tracker *t, uint32_t from, uint32_t to)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t a = (size_t)from * sizeof(struct stream) / page * page;
	size_t b = ((size_t)to * sizeof(struct stream) + page - 1) / page * page;

	if (b > t->streams_bytes)
		b = t->streams_bytes;
	return madvise((char *)t->streams + a, b - a, MADV_POPULATE_WRITE) ? -errno : 0;
}

static void *populator(void *arg)
{
	struct svsub_tracker *t = arg;
	struct sched_param sp = { 0 };
	const struct timespec tick = { 0, 10 * 1000 * 1000 };

	/* below the receive thread whatever its class (svsub runs SCHED_FIFO): only its idle time */
	pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp);
	while (!__atomic_load_n(&t->populator_stop, __ATOMIC_RELAXED)) {
		uint32_t used = __atomic_load_n(&t->nstreams, __ATOMIC_RELAXED);
		uint32_t want = used + SVSUB_TRACK_POPULATE_AHEAD < t->cfg.max_streams ? used + SVSUB_TRACK_POPULATE_AHEAD
											: t->cfg.max_streams;
		uint32_t have = __atomic_load_n(&t->populated, __ATOMIC_RELAXED);

		if (want > have) {
			int err = populate(t, have, want);

			if (err) {
				__atomic_store_n(&t->populate_err, err, __ATOMIC_RELAXED);
				break;
			}
			__atomic_store_n(&t->populated, want, __ATOMIC_RELAXED);
		}
		nanosleep(&tick, NULL);
	}
	return NULL;
}

static void populate_start(struct svsub_tracker *t)
{
	uint32_t first = t->cfg.max_streams < SVSUB_TRACK_PREFAULT_STREAMS ? t->cfg.max_streams
									  : SVSUB_TRACK_PREFAULT_STREAMS;

	sv_prefault(t->streams, (size_t)first * sizeof(struct stream));
	sv_prefault(t->appid_errors, 65536 * sizeof(*t->appid_errors));
	t->populated = first;
	if (first < t->cfg.max_streams) {
		int err = pthread_create(&t->populator, NULL, populator, t);

		if (err)
			t->populate_err = -err;
		t->populator_on = !err;
	}
}

int svsub_track_create(struct svsub_tracker **out, const struct svsub_track_cfg *cfg)
{
	struct svsub_tracker *t;

	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	if (cfg)
		t->cfg = *cfg;
	if (!t->cfg.max_streams)
		t->cfg.max_streams = SVSUB_TRACK_MAX_STREAMS_DEFAULT;
	if (!t->cfg.nominal_hz)
		t->cfg.nominal_hz = 50;
	if (!t->cfg.resync_run)
		t->cfg.resync_run = SVSUB_TRACK_RESYNC_RUN_DEFAULT;
	if (!t->cfg.max_latency_ns)
		t->cfg.max_latency_ns = SVSUB_TRACK_MAX_LATENCY_DEFAULT_NS;
	if (!t->cfg.ahead_ns)
		t->cfg.ahead_ns = SV_SAMPLE_AHEAD_NS_DEFAULT;
	/* A wrap of 1 (every smpCnt 0) leaves no position ahead of the head: refused like svsub refuses it. */
	if (t->cfg.max_streams > (1u << 20) || t->cfg.wrap > SV_RATE_SPACE || t->cfg.wrap == 1 ||
	    t->cfg.reorder_window > SV_RATE_SPACE || t->cfg.ahead_ns < 0 ||
	    t->cfg.ahead_ns >= SV_NSEC_PER_SEC || t->cfg.max_latency_ns < 0 || t->cfg.clock_tolerance_ns < 0 ||
	    (t->cfg.ndatasets && !t->cfg.datasets)) {
		free(t);
		return -EINVAL;
	}
	t->cap = 1;
	while (t->cap < 2 * t->cfg.max_streams)
		t->cap <<= 1;
	t->slot = malloc(t->cap * sizeof(*t->slot));
	t->appid_errors = calloc(65536, sizeof(*t->appid_errors));
	/* Address space only: the slots of streams that never come stay unmapped, whatever max_streams is
	 * (NORESERVE: not charged to the commit limit until written; vm.overcommit_memory 2 charges it). */
	t->streams_bytes = svsub_track_table_bytes(t->cfg.max_streams);
	t->streams = mmap(NULL, t->streams_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			  -1, 0);
	if (t->streams == MAP_FAILED)
		t->streams = NULL;
	if (!t->slot || !t->streams || !t->appid_errors) {
		free(t->slot);
		if (t->streams)
			munmap(t->streams, t->streams_bytes);
		free(t->appid_errors);
		free(t);
		return -ENOMEM;
	}
	memset(t->slot, 0xff, t->cap * sizeof(*t->slot));
	t->ds_92le = sv_dataset_92le();
	if (t->cfg.prefault)
		populate_start(t);
	*out = t;
	return 0;
}

void svsub_track_destroy(struct svsub_tracker *t)
{
	if (!t)
		return;
	if (t->populator_on) {
		__atomic_store_n(&t->populator_stop, true, __ATOMIC_RELAXED);
		pthread_join(t->populator, NULL);
	}
	free(t->slot);
	munmap(t->streams, t->streams_bytes);
	free(t->appid_errors);
	free(t);
}

size_t svsub_track_table_bytes(uint32_t max_streams)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	return ((size_t)max_streams * sizeof(struct stream) + page - 1) / page * page;
}

void svsub_track_memory(const struct svsub_tracker *t, struct svsub_track_mem *m)
{
	m->max_streams = t->cfg.max_streams;
	m->slot_bytes = sizeof(struct stream);
	m->reserved_bytes = t->streams_bytes;
	m->populated = __atomic_load_n(&t->populated, __ATOMIC_RELAXED);
	m->unpopulated = t->unpopulated;
	m->populate_err = __atomic_load_n(&t->populate_err, __ATOMIC_RELAXED);
}

static uint32_t key_hash(uint16_t appid, const uint8_t *id, uint16_t len)
{
	uint32_t h = 2166136261u ^ appid; /* FNV-1a */

	h *= 16777619u;
	for (uint16_t i = 0; i < len; i++) {
		h ^= id[i];
		h *= 16777619u;
	}
	return h;
}

/* The first declared dataset that matches a new stream (once per stream, not per frame). */
static void stream_declared_dataset(const struct svsub_tracker *t, struct stream *st)
{
	struct svsub_stream_stats *s = &st->s;

	for (unsigned i = 0; i < t->cfg.ndatasets; i++) {
		const struct svsub_dataset_rule *r = &t->cfg.datasets[i];

		if ((r->appid >= 0 && r->appid != s->appid) || (r->svID[0] && strcmp(r->svID, s->svID)))
			continue;
		st->rule = r;
		s->dataset = r->none ? NULL : &r->ds;
		s->dataset_source = r->none ? SVSUB_DS_NONE : SVSUB_DS_DECLARED;
		s->nquality = r->none ? 0 : (uint16_t)(r->ds.nquality < SVSUB_TRACK_QCHANNELS ? r->ds.nquality
											   : SVSUB_TRACK_QCHANNELS);
		return;
	}
}

/* Returns the stream index, creating it; -1 when the table is full. */
static int stream_lookup(struct svsub_tracker *t, uint16_t appid, const uint8_t *id, uint16_t len)
{
	uint32_t mask = t->cap - 1;

	if (len > SV_MAX_ID_LEN)
		len = SV_MAX_ID_LEN; /* the codec enforces this; keep the copy bounded regardless */
	for (uint32_t i = key_hash(appid, id, len) & mask;; i = (i + 1) & mask) {
		int32_t k = t->slot[i];

		if (k < 0) {
			if (t->nstreams >= t->cfg.max_streams)
				return -1;
			struct stream *st = &t->streams[t->nstreams];
			struct svsub_stream_stats *s = &st->s;

			s->appid = appid;
			s->svID_len = len;
			memcpy(s->svID, id, len);
			s->svID[len] = '\0';
			sv_rate_init(&st->rl, t->cfg.wrap); /* checked by svsub_track_create() */
			wrap_publish(st);
			st->errors_base = t->appid_errors[appid];
			stream_declared_dataset(t, st);
			sv_stats_init(&s->latency);
			sv_stats_init(&s->interarrival);
			t->unpopulated += t->cfg.prefault && t->nstreams >= __atomic_load_n(&t->populated, __ATOMIC_RELAXED);
			t->slot[i] = (int32_t)t->nstreams;
			/* release: a reader on another thread (metrics) sees the stream's identity first */
			__atomic_store_n(&t->nstreams, t->nstreams + 1, __ATOMIC_RELEASE);
			return (int)t->nstreams - 1;
		}
		struct svsub_stream_stats *s = &t->streams[k].s;

		if (s->appid == appid && s->svID_len == len && memcmp(s->svID, id, len) == 0)
			return k;
	}
}

static uint32_t reorder_window(const struct svsub_tracker *t, uint32_t w)
{
	uint32_t r = t->cfg.reorder_window ? t->cfg.reorder_window : w / 2;

	/* At least the next position (d == 1) is ahead: with W = 2, W/2 would make every sample late. */
	return w < 2 ? 0 : r <= w - 2 ? r : w - 2;
}

uint32_t svsub_stream_rate(const struct svsub_stream_stats *s)
{
	return sv_rate_samples_of(s->rate, s->wrap_source, s->wrap);
}

/* What the ASDU states about the rate and wrap (sv_rate.h: a stated wrap is adopted once, never after it was
 * proven wrong, nor when what was received already contradicts it). */
static void stream_update_rate(struct svsub_tracker *t, struct stream *st, const struct sv_asdu *a)
{
	struct svsub_stream_stats *s = &st->s;
	bool has_rate = a->present & SV_HAS_SMPRATE;

	s->has_smpRate = has_rate;
	s->smpRate = has_rate ? a->smpRate : 0;
	if (sv_rate_state(&st->rl, has_rate ? sv_sample_rate(a->smpRate, a->present & SV_HAS_SMPMOD, a->smpMod,
							     t->cfg.nominal_hz)
					    : 0)) {
		wrap_publish(st);
		if (st->span > s->wrap)
			st->span = s->wrap;
	}
	s->rate = st->rl.stated;
}

/*
 * The absolute sample index (TAI second * W + smpCnt) of sample @c received at @t_rx_ns, and the latency that
 * places it: known for a stream with smpSynch 2 whose W is its rate, while nothing says its clock is off.
 * Trusted only when the frame is fresh (latency <= SVSUB_TRACK_FRESH_NS): the second of a frame held back
 * longer than a second cannot be told from its receive time.
 */
static bool sample_abs(const struct svsub_tracker *t, const struct stream *st, uint32_t c, int64_t t_rx_ns,
		       int64_t *abs)
{
	const struct svsub_stream_stats *s = &st->s;
	uint32_t rate = svsub_stream_rate(s);
	struct sv_sample_time ts;

	if (s->smpSynch != SV_SMPSYNCH_GLOBAL || !rate || rate != s->wrap || t->cfg.host_unsync ||
	    s->latency_negative || sv_sample_align(t_rx_ns, c, rate, t->cfg.ahead_ns, &ts) ||
	    ts.latency_ns < -t->cfg.clock_tolerance_ns - t->cfg.ahead_ns || ts.latency_ns > SVSUB_TRACK_FRESH_NS)
		return false;
	*abs = ts.tai_sec * (int64_t)rate + c;
	return true;
}

/* Head moves forward by @adv (>= 1) positions to @c: positions passed over are missing in this lap. */
static void head_advance(struct stream *st, uint32_t c, uint64_t adv)
{
	uint32_t w = st->s.wrap;

	if (adv > w) {
		memset(st->rx, 0, sizeof(st->rx));
	} else {
		for (uint32_t p = (st->head + 1) % w, n = 1; n < adv; n++, p = (p + 1) % w) {
			bit_put(st->rx, p, false);
			if (st->prp_seen) { /* else the LAN bitmaps are all zero (mark_received) */
				bit_put(st->rx_lan[0], p, false);
				bit_put(st->rx_lan[1], p, false);
			}
		}
	}
	st->span = (uint32_t)((uint64_t)st->span + adv > w ? w : st->span + adv);
	st->head = c;
	sv_rate_accept(&st->rl, c);
}

static void mark_received(struct stream *st, uint32_t c, int lan)
{
	bit_put(st->rx, c, true);
	if (lan >= 0)
		st->prp_seen = true;
	/* Without PRP the LAN bitmaps stay zero: skipping them saves two cache lines per sample. */
	if (st->prp_seen) {
		bit_put(st->rx_lan[0], c, lan == 0);
		bit_put(st->rx_lan[1], c, lan == 1);
	}
}

/* Sample @c, @adv positions ahead of the head: the adv - 1 passed over are lost (until a late arrival takes
 * one back), the head moves to it. */
static enum svsub_sample_verdict stream_ahead(const struct svsub_tracker *t, struct stream *st, uint32_t c,
					     uint64_t adv, int64_t t_rx_ns, int lan)
{
	int64_t abs;

	st->s.c.lost += adv - 1;
	head_advance(st, c, adv);
	st->head_rx_ns = t_rx_ns;
	st->pace_adv += adv;
	/* the head's sample index goes on by the samples counted, taken from a fresh frame's time once */
	if (st->abs_wrap == st->s.wrap) {
		st->head_abs += (int64_t)adv;
	} else if (sample_abs(t, st, c, t_rx_ns, &abs)) {
		st->head_abs = abs;
		st->abs_wrap = st->s.wrap;
	}
	st->run_len = 0;
	mark_received(st, c, lan);
	return adv > 1 ? SVSUB_SAMPLE_AFTER_GAP : SVSUB_SAMPLE_IN_ORDER;
}

/* A confirmed counter restart ending at @c: take back the run's provisional verdicts, move the head. */
static void stream_resync(struct stream *st, uint32_t c, int lan)
{
	struct svsub_stream_stats *s = &st->s;
	uint32_t start = st->run_start;

	s->c.duplicate -= st->run_dup;
	s->c.reordered -= st->run_ooo;
	s->c.lost += st->run_lost_taken;
	s->resets++;

	if (sv_rate_restart(&st->rl, start, c) & SV_RATE_EV_WRAPPED) {
		/* The counter came back near zero: a wrap, not a restart (W learned or raised). */
		wrap_publish(st);
		/* samples missed across the wrap: after the old head up to W-1, and 0 .. start-1 */
		s->c.lost += (uint64_t)(s->wrap - 1 - st->head) + start;
		s->resets--;
	}
	memset(st->rx, 0, sizeof(st->rx));
	if (st->prp_seen)
		memset(st->rx_lan, 0, sizeof(st->rx_lan));
	for (uint32_t i = 0, p = start; i < st->run_len; i++, p = (p + 1) % s->wrap)
		bit_put(st->rx, p, true);
	if (lan >= 0) {
		st->prp_seen = true;
		bit_put(st->rx_lan[lan], c, true);
	}
	st->head = c;
	st->span = st->run_len;
	st->run_len = 0;
	st->abs_wrap = 0; /* a restart: the head's sample index is taken again from a fresh frame */
	st->pace_adv = 0;
}

static enum svsub_sample_verdict stream_sample(struct svsub_tracker *t, struct stream *st, uint32_t c,
					       int64_t t_rx_ns, int lan)
{
	struct svsub_stream_stats *s = &st->s;
	uint32_t w, r, d, raw = c;

	/* The head and every position are < W, from the first sample on (a head beyond a configured W made
	 * W - 1 - head wrap around in the counts). */
	if (sv_rate_check(&st->rl, c)) {
		wrap_publish(st);
		if (c >= s->wrap) /* configured wrap contradicted: judge modulo W */
			c %= s->wrap;
	}
	if (!st->started) {
		st->started = true;
		s->first_smpCnt = (uint16_t)raw;
		st->head = c;
		sv_rate_accept(&st->rl, c);
		st->span = 0;
		st->head_rx_ns = t_rx_ns;
		st->pace_rx0 = t_rx_ns;
		st->pace_adv = 0;
		st->abs_wrap = 0;
		if (sample_abs(t, st, c, t_rx_ns, &st->head_abs))
			st->abs_wrap = s->wrap;
		mark_received(st, c, lan);
		return SVSUB_SAMPLE_IN_ORDER;
	}
	w = s->wrap;
	r = reorder_window(t, w);
	d = sv_smpcnt_distance(st->head, c, w);

	/*
	 * Whole laps smpCnt cannot show. A synchronised stream's sample times say how many passed: the head's
	 * absolute sample index (TAI second * W + smpCnt, carried from a fresh frame by the samples counted
	 * since) against a fresh frame's, exactly, whatever the receive times of the frames in between (and
	 * a gap of half a lap or more is a gap, not a late sample, when the sample times say it is ahead).
	 * Only after a silence of a quarter lap (W is the rate: 250 ms): a stream replayed slower than it was
	 * sampled falls behind its sample times, and is judged by smpCnt alone as long as it keeps flowing.
	 */
	int64_t abs, elapsed = t_rx_ns - st->head_rx_ns;

	if (st->abs_wrap == w && elapsed > SV_NSEC_PER_SEC / 4 && sample_abs(t, st, c, t_rx_ns, &abs) &&
	    abs - st->head_abs >= (int64_t)d && abs > st->head_abs)
		return stream_ahead(t, st, c, (uint64_t)(abs - st->head_abs), t_rx_ns, lan);

	/*
	 * Otherwise the elapsed receive time estimates them (counted in lost_estimated), at the pace the
	 * stream's samples come: over the positions the head moved since its first sample once that is a
	 * lap (a replay faster than real time comes faster than its rate), else its rate. The gap is the
	 * d + n*W closest to elapsed * pace, after a silence of half a wrap; or d when the sample lies behind
	 * the head by up to R but the silence says it is ahead (a burst of half a lap or more dropped, e.g.
	 * at a socket that overflowed: not a counter restart). Except when the sample is exactly the next
	 * one (d == 1): that is a stall (a queue held the frames: a VM paused, a tap backlog) and the rest
	 * follow in a burst; an outage of whole wraps to within one sample period is far less likely than
	 * that, so it is not counted as one.
	 */
	uint32_t rate = svsub_stream_rate(&st->s);
	int64_t span = st->head_rx_ns - st->pace_rx0;
	bool paced = st->pace_adv >= w && span > 0;

	/* the silence is a quarter lap at the pace (multiplications only: this runs for every gap) */
	if (rate && d != 1 && elapsed > 0 &&
	    (paced ? (__int128)elapsed * st->pace_adv > (__int128)span * (w / 4)
		   : (uint64_t)elapsed / 1000u * rate / 1000000u > w / 4)) {
		uint64_t expect = paced ? (uint64_t)((__int128)elapsed * st->pace_adv / span)
					: (uint64_t)((__int128)elapsed * rate / SV_NSEC_PER_SEC);
		uint64_t laps = expect > d ? (expect - d + w / 2) / w : 0;
		uint64_t adv = d + laps * w;

		if (expect > w / 2 || (d >= w - r && 2 * expect + w > 2 * (uint64_t)d)) {
			s->lost_estimated += laps * w;
			return stream_ahead(t, st, c, adv, t_rx_ns, lan);
		}
	}

	if (d >= 1 && d < w - r)
		return stream_ahead(t, st, c, d, t_rx_ns, lan);

	/* Behind the head by b in [0, R]: late, duplicate, redundant copy, or part of a restart. */
	uint32_t b = d ? w - d : 0;
	enum svsub_sample_verdict verdict;
	bool dup = bit_get(st->rx, c), taken = false;

	if (dup) {
		/* the redundant copy: received over the other LAN, not yet over this one */
		if (lan >= 0 && !t->cfg.no_prp_discard && !bit_get(st->rx_lan[lan], c) &&
		    bit_get(st->rx_lan[!lan], c)) {
			bit_put(st->rx_lan[lan], c, true);
			s->prp_discarded[lan]++;
			return SVSUB_SAMPLE_PRP_COPY;
		}
		s->c.duplicate++;
		verdict = SVSUB_SAMPLE_DUPLICATE;
		if (b == 0)
			return verdict; /* a repeat of the head: not a restart candidate */
	} else {
		s->c.reordered++;
		/* the head passed it: it was counted lost (never below 0, whatever the window's history) */
		taken = b <= st->span && s->c.lost;
		if (taken)
			s->c.lost--;
		mark_received(st, c, lan);
		verdict = SVSUB_SAMPLE_LATE;
	}
	if (!st->run_len || c != st->run_next) {
		st->run_len = 0;
		st->run_start = c;
		st->run_dup = st->run_ooo = st->run_lost_taken = 0;
	}
	st->run_len++;
	st->run_dup += dup;
	st->run_ooo += !dup;
	st->run_lost_taken += taken;
	st->run_next = (c + 1) % w;
	if (st->run_len >= t->cfg.resync_run) {
		stream_resync(st, c, lan);
		st->head_rx_ns = t_rx_ns;
		st->pace_rx0 = t_rx_ns;
		return SVSUB_SAMPLE_RESYNC;
	}
	return verdict;
}

/* How a sample's seqData reads: the stream's declared dataset, else 9-2LE for 64 octets; NULL: not at all. */
static const struct sv_dataset *sample_dataset(const struct svsub_tracker *t, const struct stream *st,
					       const struct sv_asdu *a)
{
	if (st && st->rule)
		return st->rule->none || !sv_dataset_fits(&st->rule->ds, a->seqData_len) ? NULL : &st->rule->ds;
	return a->seqData_len == SV_92LE_SEQDATA_LEN ? t->ds_92le : NULL;
}

static void stream_quality(struct svsub_tracker *t, struct stream *st, const struct sv_asdu *a,
			   struct svsub_sample_result *r)
{
	struct svsub_stream_stats *s = &st->s;
	const struct sv_dataset *ds = sample_dataset(t, st, a);
	uint32_t all;
	bool bad = false;

	r->dataset = ds;
	if (!ds) {
		/* nothing claimed about data of an unknown layout */
		s->samples_uninterpreted++;
		s->dataset_mismatch += st->rule && !st->rule->none;
		return;
	}
	if (!st->rule && s->dataset_source != SVSUB_DS_ASSUMED) {
		s->dataset = ds;
		s->dataset_source = SVSUB_DS_ASSUMED;
		s->nquality = ds->nquality;
	}
	/* Every member good, not test, not derived counts nothing: one pass, no counter touched. */
	all = sv_dataset_quality_or(ds, a->seqData);
	r->quality = all;
	if (!(all & (SV_Q_VALIDITY_MASK | SV_Q_TEST | SV_Q_DERIVED)))
		return;
	for (unsigned k = 0; k < ds->nquality; k++) {
		uint32_t q = sv_dataset_quality(ds, a->seqData, k);
		enum sv_validity val;

		if (!(q & (SV_Q_VALIDITY_MASK | SV_Q_TEST | SV_Q_DERIVED)))
			continue;
		val = sv_quality_validity(q);
		if (val != SV_VALIDITY_GOOD)
			bad = true;
		if (k >= SVSUB_TRACK_QCHANNELS)
			continue;
		s->quality[k][SVSUB_Q_INVALID] += val == SV_VALIDITY_INVALID;
		s->quality[k][SVSUB_Q_QUESTIONABLE] += val == SV_VALIDITY_QUESTIONABLE;
		s->quality[k][SVSUB_Q_TEST] += !!(q & SV_Q_TEST);
		s->quality[k][SVSUB_Q_DERIVED] += !!(q & SV_Q_DERIVED);
	}
	s->samples_not_good += bad;
}

bool svsub_track_clock_verdict(const struct svsub_stream_stats *s)
{
	uint64_t with_latency = s->latency.count + s->latency.negative + s->latency_outliers + s->latency_negative;

	return s->latency_possible && !s->host_unsync && !s->latency_negative &&
	       s->latency_outliers * 2 <= with_latency;
}

static void stream_latency(struct svsub_tracker *t, struct stream *st, uint32_t c, int64_t t_rx_ns,
			   struct svsub_sample_result *res)
{
	struct svsub_stream_stats *s = &st->s;
	struct sv_sample_time ts;
	uint32_t rate = svsub_stream_rate(&st->s);

	if (s->smpSynch != SV_SMPSYNCH_GLOBAL)
		return;
	if (!rate) {
		s->latency_rate_unknown++;
		return;
	}
	if (c >= rate || sv_sample_align(t_rx_ns, c, rate, t->cfg.ahead_ns, &ts)) {
		s->latency_no_sample_time++;
		return;
	}
	s->latency_possible = true;
	s->host_unsync |= t->cfg.host_unsync;
	if (ts.latency_ns > t->cfg.max_latency_ns) {
		/* really that late, or a clock: svsub_track_clock_verdict() weighs them against the rest */
		if (!s->latency_outliers++)
			s->latency_outlier_first_rx_ns = t_rx_ns;
		s->latency_outlier_last_rx_ns = t_rx_ns;
		if (ts.latency_ns > s->latency_outlier_max)
			s->latency_outlier_max = ts.latency_ns;
		return;
	}
	if (ts.latency_ns < -t->cfg.clock_tolerance_ns) {
		/* received before it was sampled: only a clock explains that */
		s->latency_negative++;
		if (ts.latency_ns < s->latency_negative_min)
			s->latency_negative_min = ts.latency_ns;
		return;
	}
	sv_stats_add(&s->latency, ts.latency_ns);
	if (res) {
		res->has_latency = !s->host_unsync && !s->latency_negative;
		res->latency_ns = ts.latency_ns;
	}
}

static int lan_index(const struct sv_view *v)
{
	if (v->redundancy != SV_RED_PRP)
		return -1;
	if (v->red_lan == 0xA)
		return 0;
	if (v->red_lan == 0xB)
		return 1;
	return -1;
}

int svsub_track_frame(struct svsub_tracker *t, const struct sv_view *v, int64_t t_rx_ns,
		      struct svsub_sample_result *res)
{
	int lan = lan_index(v);
	int accounted = 0;

	t->frames++;
	for (unsigned i = 0; i < v->noASDU; i++) {
		const struct sv_asdu *a = &v->asdu[i];
		struct svsub_sample_result dummy, *r = res ? &res[i] : &dummy;
		int k = stream_lookup(t, v->appid, a->svID, a->svID_len);

		r->stream = k;
		r->has_latency = false;
		r->latency_ns = 0;
		r->quality = 0;
		if (k < 0) {
			t->overflow++;
			r->verdict = SVSUB_SAMPLE_IGNORED;
			r->dataset = sample_dataset(t, NULL, a); /* read as an undeclared stream's would be */
			continue;
		}
		accounted++;
		struct stream *st = &t->streams[k];
		struct svsub_stream_stats *s = &st->s;
		bool first_in_frame = st->last_frame != t->frames;

		if (first_in_frame) {
			st->last_frame = t->frames;
			s->asdus_per_frame = 0;
			if (lan >= 0)
				s->prp_frames[lan]++;
		}
		s->asdus_per_frame++;
		stream_update_rate(t, st, a);
		if (st->have_prev) {
			if (a->confRev != s->confRev)
				s->confrev_changes++;
			if (a->smpSynch != s->smpSynch)
				s->smpsynch_changes++;
		}
		st->have_prev = true;
		s->confRev = a->confRev;
		s->smpSynch = a->smpSynch;

		r->verdict = (uint8_t)stream_sample(t, st, a->smpCnt, t_rx_ns, lan);
		if (r->verdict == SVSUB_SAMPLE_PRP_COPY) {
			r->dataset = sample_dataset(t, st, a);
			continue;
		}
		/* Frame-level counts go with the first non-redundant sample of the stream in this frame. */
		if (st->last_counted != t->frames) {
			st->last_counted = t->frames;
			if (s->c.frames) {
				sv_stats_add(&s->interarrival, t_rx_ns - s->last_rx_ns);
			} else {
				s->first_rx_ns = t_rx_ns;
			}
			s->c.frames++;
			s->simulated += v->simulated;
			s->last_rx_ns = t_rx_ns;
		}
		s->c.samples++;
		s->last_smpCnt = a->smpCnt;
		stream_quality(t, st, a, r);
		stream_latency(t, st, a->smpCnt, t_rx_ns, r);
	}
	return accounted;
}

void svsub_track_error(struct svsub_tracker *t, int err, int appid)
{
	if (err > 0 && err < SV_E__COUNT)
		t->errors[err]++;
	if (appid >= 0 && appid <= 0xffff)
		t->appid_errors[appid]++;
}

unsigned svsub_track_count(const struct svsub_tracker *t)
{
	return t->nstreams;
}

const struct svsub_stream_stats *svsub_track_stream(struct svsub_tracker *t, unsigned i)
{
	struct stream *st;

	if (i >= t->nstreams)
		return NULL;
	st = &t->streams[i];
	st->s.c.errors = t->appid_errors[st->s.appid] - st->errors_base;
	st->s.clock_synchronised = svsub_track_clock_verdict(&st->s);
	return &st->s;
}

/* ---- Readers on another thread (svsub_metrics.c) ---- */

unsigned svsub_track_count_published(const struct svsub_tracker *t)
{
	return __atomic_load_n(&t->nstreams, __ATOMIC_ACQUIRE);
}

const struct svsub_stream_stats *svsub_track_stream_peek(const struct svsub_tracker *t, unsigned i)
{
	return &t->streams[i].s;
}

uint64_t svsub_track_stream_errors(const struct svsub_tracker *t, unsigned i)
{
	const struct stream *st = &t->streams[i];

	return __atomic_load_n(&t->appid_errors[st->s.appid], __ATOMIC_RELAXED) - st->errors_base;
}

const uint64_t *svsub_track_errors(const struct svsub_tracker *t)
{
	return t->errors;
}

uint64_t svsub_track_frames(const struct svsub_tracker *t)
{
	return t->frames;
}

uint64_t svsub_track_overflow(const struct svsub_tracker *t)
{
	return t->overflow;
}

void svsub_track_set_host_unsync(struct svsub_tracker *t, bool unsync)
{
	t->cfg.host_unsync = unsync;
}

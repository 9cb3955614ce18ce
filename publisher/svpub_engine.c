// SPDX-License-Identifier: Apache-2.0
#include "svpub_engine.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sv_codec.h"
#include "sv_json.h"
#include "sv_log.h"
#include "sv_ready.h"
#include "sv_metrics.h"
#include "sv_record.h"
#include "sv_soak.h"
#include "svpub_signal.h"
#include "svpub_tx.h"

#define PEND_RING 65536u	     /* frames whose TX stamp may still come */
#define PEND_MAX_AGE_NS 200000000LL /* a stamp later than this never comes */
#define START_LEAD_NS 2000000LL	     /* first deadline at least this far after start */
#define SOAK_TICK_NS 10000000LL	     /* --soak: intervals and windows looked at this often */

struct pend {
	int64_t t_sched_ns;
	int64_t t_handoff_ns;
	int64_t t_tx_ns;
	uint32_t stream;
	uint32_t tai_sec;
	uint32_t seq;
	uint16_t smp_cnt;
	uint16_t flags;
	uint16_t reason;
	uint16_t len;
	uint8_t src;
	uint8_t done;
};

struct stream_rt {
	const struct svpub_stream_cfg *cfg;
	struct sv_template tpl;
	/* a declared dataset (streams[].members): pair k carries signal channel map[k], x conv from 9-2LE LSBs */
	int npairs;
	uint8_t map[SVPUB_MAX_MEMBERS];
	double conv[SVPUB_MAX_MEMBERS];
	struct svpub_signal sig;
	uint32_t rate, asdus;
	int64_t period_ns;
	int queue;
	uint64_t k;
	uint64_t k_end;
	int64_t deadline_ns;
	bool done;
	uint64_t sent, late, skipped, stopped, outage, tx_errors;
	int64_t last_tx_ns;
	/* per-second summary (records) */
	struct sv_stats *sec_hist;
	struct sv_counters sec_cnt;
	uint32_t sec_tai;
	unsigned soak_key;	/* --soak: its interval key (Ts -> T0) */
};

struct svpub {
	const struct svpub_config *cfg;
	enum sv_clock_id clock;
	clockid_t cid;
	int64_t to_utc_ns;  /* clock -> UTC (refrTm) */
	int64_t to_tai_sec; /* clock seconds -> TAI seconds (records) */
	struct svpub_tx *tx;
	struct sv_record_writer *rec;
	struct sv_record_writer_stats rec_st; /* the record's final counts (closed at the end of the run) */
	bool rec_closed;
	int rec_err;
	struct sv_soak soak;	/* --soak: soak.iv set */
	struct sv_soak_stats soak_st; /* its final counts (closed with the record) */
	int64_t soak_next_ns;	/* the next soak tick, on the loop's clock */
	unsigned n;
	struct stream_rt *s;
	int64_t start_sec;
	int64_t t_first_ns, t_end_ns, t_last_ns;
	int64_t min_period_ns;
	bool paced;
	/* batch */
	unsigned nq;
	unsigned slots;
	uint8_t (*buf)[SV_TEMPLATE_MAX_FRAME];
	struct svpub_txf *txf;
	uint32_t *txf_stream;
	/* pending TX stamps */
	struct pend *pend;
	uint64_t head, tail;
	bool pend_off;	      /* no stamps to wait for and no records: frames bypass the ring */
	struct pend scratch; /* the one entry they use instead */
	uint32_t tid;
	/* statistics */
	struct sv_stats lateness, tx_lateness, sec_lateness;
	/* Lateness of the wake-ups from clock_nanosleep only: a deadline already past when the loop comes
	 * round (the backlog after a stall) is in `lateness` but not here. This is what cyclictest measures
	 * (it skips the periods it missed), so the two compare like with like. */
	struct sv_stats wakeup;
	struct svpub_totals tot;
	int64_t next_status_ns;
	uint64_t status_frames;
	/* interface state as the sends see it: one message per transition */
	bool link_down;
	uint64_t outage_at_down;
	struct svpub_tx_errlog txerr; /* the other send failures: rate-limited messages, count per errno */
	/* TX stamps that never came, checked once a second: on the qdisc path (qdisc_bypass false, txtime) a
	 * link without carrier makes the kernel drop frames it reported as sent, and their stamps are the only
	 * trace of it */
	int64_t ts_check_ns;
	uint64_t ts_missing_seen;
	bool ts_missing_episode;
	/* --metrics: the counters that live elsewhere (the record writer's), copied once a second */
	struct sv_metrics_health *metrics;
	int64_t metrics_ns;
};

static int64_t now_ns(const struct svpub *p)
{
	struct timespec ts;

	clock_gettime(p->cid, &ts);
	return sv_timespec_to_ns(&ts);
}

/* Where the frames go, for messages: the interface, or the file of the pcap back-end. */
static const char *out_name(const struct svpub *p)
{
	return p->cfg->backend == SVPUB_BACKEND_PCAP ? p->cfg->output : p->cfg->interface;
}

/* ---- templates ---- */

static int build_template(const struct svpub *p, struct stream_rt *st)
{
	int err = svpub_stream_template(st->cfg, p->tx->if_mac, &st->tpl);

	if (err) /* svpub_config_resolve() refuses what cannot be encoded: not expected */
		sv_err("stream %s: cannot build its frame: %s", st->cfg->svid, strerror(-err));
	else
		err = svpub_tx_check_frame_len(p->tx, out_name(p), st->cfg->svid, st->tpl.len, st->cfg->vlan_id >= 0);
	return err;
}

/* ---- records and pending TX stamps ---- */

/* --soak: frame @e (its EVENT @ev) into the flight recorder's ring and its interval, and its triggers: a frame
 * not sent (skipped, outage, send error) opens a DROP window, a late one (past late_threshold_us, or its
 * transmit stamp past soak_late_us after its sample) a LATENCY window. Per frame: no allocation. */
static void soak_frame(struct svpub *p, const struct stream_rt *st, const struct pend *e, const struct sv_rec_event *ev)
{
	int64_t ts = sv_sample_time_ns(e->tai_sec, e->smp_cnt, st->rate); /* the run's clock is TAI */
	bool stamped = e->t_tx_ns && e->src != SV_TS_NONE;
	int64_t lat = stamped ? e->t_tx_ns - ts : SV_INTERVAL_NO_LATENCY;
	struct sv_flight_trigger t = { .point = SV_POINT_T0, .guest = SV_REC_GUEST_NONE, .stream = e->stream,
				       .t_ns = ev->t_ns, .tai_sec = e->tai_sec, .smp_cnt = e->smp_cnt };

	sv_flight_push(p->soak.fl, ev);
	if (e->flags & (SV_REC_F_SKIPPED | SV_REC_F_DROPPED)) {
		sv_interval_drop(p->soak.iv, st->soak_key, ts, e->reason, 1);
		if ((e->flags & (SV_REC_F_LATE | SV_REC_F_SKIPPED)) == SV_REC_F_LATE) /* sent late, then refused */
			sv_interval_count(p->soak.iv, st->soak_key, ts, SV_INTERVAL_LATE, 1);
		t.cls = SV_WINDOW_DROP;
		t.value = e->reason;
		sv_flight_trigger(p->soak.fl, &t); /* a window not kept is counted by the recorder */
		return;
	}
	struct sv_interval_frame f = { .t_tai_ns = ts, .latency_ns = lat, .tai_sec = e->tai_sec, .smp_cnt = e->smp_cnt,
				       .samples = st->asdus, .flags = e->flags & SV_REC_F_LATE };

	sv_interval_frame(p->soak.iv, st->soak_key, &f);
	if ((e->flags & SV_REC_F_LATE) || (stamped && lat > p->soak.late_ns)) {
		t.cls = SV_WINDOW_LATENCY;
		t.value = stamped ? lat : e->t_handoff_ns - e->t_sched_ns;
		sv_flight_trigger(p->soak.fl, &t);
	}
}

static void summary_flush(struct svpub *p, struct stream_rt *st, uint32_t idx)
{
	struct sv_rec_summary s;
	struct sv_rec_hist h;

	if (!st->sec_cnt.frames && !st->sec_cnt.dropped)
		return;
	memset(&s, 0, sizeof(s));
	sv_rec_summary_fill(&s, st->sec_hist);
	s.point = SV_POINT_T0;
	s.from_point = SV_POINT_TS;
	s.stream = idx;
	s.guest = SV_REC_GUEST_NONE;
	s.tai_sec = st->sec_tai;
	s.period_ms = 1000;
	s.frames = st->sec_cnt.frames;
	s.samples = st->sec_cnt.samples;
	s.late = st->sec_cnt.late;
	s.dropped = st->sec_cnt.dropped;
	sv_record_write_summary(p->rec, &s);
	memset(&h, 0, sizeof(h));
	h.point = SV_POINT_T0;
	h.from_point = SV_POINT_TS;
	h.stream = idx;
	h.guest = SV_REC_GUEST_NONE;
	h.tai_sec = st->sec_tai;
	h.period_ms = 1000;
	sv_record_write_hist(p->rec, &h, st->sec_hist);
	sv_stats_init(st->sec_hist);
	memset(&st->sec_cnt, 0, sizeof(st->sec_cnt));
}

static void pend_finish(struct svpub *p, struct pend *e)
{
	struct stream_rt *st = &p->s[e->stream];

	if (e->src == SV_TS_SOFTWARE || e->src == SV_TS_HARDWARE || e->src == SV_TS_XDP_META ||
	    e->src == SV_TS_SCHEDULED) {
		if (e->t_tx_ns) {
			sv_stats_add(&p->tx_lateness, e->t_tx_ns - e->t_sched_ns);
			if (e->t_tx_ns < st->last_tx_ns)
				p->tot.tx_ts_disorder++;
			st->last_tx_ns = e->t_tx_ns;
		}
	}
	if (!p->rec)
		return;

	struct sv_rec_event ev;
	int64_t ts_first = 0;

	if (e->tai_sec != st->sec_tai && !p->soak.iv) {
		summary_flush(p, st, e->stream);
		st->sec_tai = e->tai_sec;
	}
	memset(&ev, 0, sizeof(ev));
	ev.point = SV_POINT_T0;
	ev.stream = e->stream;
	ev.tai_sec = e->tai_sec;
	ev.smp_cnt = e->smp_cnt;
	ev.flags = e->flags;
	ev.reason = e->reason;
	ev.guest = SV_REC_GUEST_NONE;
	ev.tid = p->tid;
	ev.nasdu = (uint8_t)st->asdus;
	ev.frame_len = e->len;
	ev.seq = e->seq;
	if (e->t_tx_ns && e->src != SV_TS_NONE) {
		ev.t_ns = e->t_tx_ns;
		ev.ts_src = e->src;
		ev.t2_ns = e->t_handoff_ns;
		ev.t2_kind = SV_T2_HANDOFF;
	} else {
		ev.t_ns = e->t_handoff_ns;
		ev.ts_src = SV_TS_USER;
		ev.t2_ns = e->t_sched_ns;
		ev.t2_kind = SV_T2_SCHEDULED;
	}
	if (p->soak.iv) {
		soak_frame(p, st, e, &ev);
		return;
	}
	sv_record_write_event(p->rec, &ev);
	if (e->flags & (SV_REC_F_SKIPPED | SV_REC_F_DROPPED)) {
		st->sec_cnt.dropped++;
		return;
	}
	st->sec_cnt.frames++;
	st->sec_cnt.samples += st->asdus;
	if (e->flags & SV_REC_F_LATE)
		st->sec_cnt.late++;
	ts_first = sv_sample_time_ns(e->tai_sec - p->to_tai_sec, e->smp_cnt, st->rate);
	if (e->t_tx_ns && e->src != SV_TS_NONE)
		sv_stats_add(st->sec_hist, e->t_tx_ns - ts_first);
}

/* Writes out pending frames whose stamp came, or that waited too long (@all: everything). */
/* Once a second: TX stamps gone missing since the last check are said (rate-limited, one message an episode),
 * with the carrier state when the interface has none: the kernel dropped frames it took without an error. */
static void ts_missing_check(struct svpub *p, int64_t now)
{
	uint64_t n = p->tot.tx_ts_missing - p->ts_missing_seen;
	int carrier;

	if (now < p->ts_check_ns)
		return;
	p->ts_check_ns = now + SV_NSEC_PER_SEC;
	if (!n) {
		if (p->ts_missing_episode)
			sv_info("transmit stamps on %s: arriving again", out_name(p));
		p->ts_missing_episode = false;
		return;
	}
	p->ts_missing_seen = p->tot.tx_ts_missing;
	if (p->ts_missing_episode)
		return;
	p->ts_missing_episode = true;
	carrier = svpub_tx_if_carrier(out_name(p));
	sv_warn("transmit stamps on %s: %" PRIu64 " frames handed to the kernel got none within %d ms%s (counted: "
		"tx_ts_missing; said again when they return)", out_name(p), n, (int)(PEND_MAX_AGE_NS / SV_NSEC_PER_MSEC),
		carrier == 0 ? ": the link has no carrier, so the qdisc dropped them without an error (the frames were "
			       "not sent)" : "");
}

/* --metrics: what the metrics thread cannot read in place (svpub_metrics.c). */
static void metrics_copy(struct svpub *p, int64_t now)
{
	if (!p->metrics)
		return;
	sv_metrics_store_u64(&p->metrics->events_lost, p->tot.tx_ts_missing);
	if (p->rec)
		sv_metrics_health_record(p->metrics, p->rec);
	else if (p->rec_closed)
		sv_metrics_health_record_stats(p->metrics, &p->rec_st);
	p->metrics_ns = now + SV_NSEC_PER_SEC;
}

static void pend_drain(struct svpub *p, int64_t now, bool all)
{
	while (p->tail < p->head) {
		struct pend *e = &p->pend[p->tail % PEND_RING];

		if (!e->done && !all && p->head - p->tail < PEND_RING / 2 && now - e->t_handoff_ns < PEND_MAX_AGE_NS)
			break;
		if (!e->done && (e->flags & (SV_REC_F_SKIPPED | SV_REC_F_DROPPED)) == 0 && p->tx->ts_source != SV_TS_NONE)
			p->tot.tx_ts_missing++;
		pend_finish(p, e);
		p->tail++;
	}
}

static void ts_cb(void *ctx, uint64_t cookie, int64_t t_tx_ns, enum sv_ts_source src)
{
	struct svpub *p = ctx;
	struct pend *e;

	if (cookie < p->tail || cookie >= p->head)
		return; /* already written out without it */
	e = &p->pend[cookie % PEND_RING];
	e->t_tx_ns = t_tx_ns;
	e->src = (uint8_t)src;
	e->done = 1;
	p->tot.tx_timestamps++;
}

static struct pend *pend_new(struct svpub *p, int64_t now)
{
	if (p->head - p->tail >= PEND_RING)
		pend_drain(p, now, false); /* forces the oldest out: head - tail >= RING/2 */
	struct pend *e = &p->pend[p->head % PEND_RING];

	memset(e, 0, sizeof(*e));
	p->head++;
	return e;
}

/* ---- building frames ---- */

/* Fills frame k of @st into @out. Returns false when a STOP event covers it. */
static bool frame_build(struct svpub *p, struct stream_rt *st, uint8_t *out, uint32_t *tai_sec, uint16_t *smp_cnt)
{
	int32_t values[SVPUB_CHANNELS];
	uint32_t quality[SVPUB_CHANNELS];
	uint64_t n0 = st->k * st->asdus;

	for (unsigned a = 0; a < st->asdus; a++) {
		uint64_t n = n0 + a;
		int64_t sec;
		uint32_t cnt;

		svpub_sample_split(p->start_sec, n, st->rate, &sec, &cnt);
		if (svpub_signal_sample(&st->sig, n, values, quality) && a == 0)
			return false;
		if (a == 0) {
			*tai_sec = (uint32_t)(sec + p->to_tai_sec);
			*smp_cnt = (uint16_t)cnt;
		}
		sv_template_set_smpcnt(&st->tpl, a, (uint16_t)cnt);
		if (st->npairs) {
			int32_t v[SVPUB_MAX_MEMBERS];
			uint32_t q[SVPUB_MAX_MEMBERS];

			for (int k = 0; k < st->npairs; k++) {
				double x = nearbyint(values[st->map[k]] * st->conv[k]);

				v[k] = x > INT32_MAX ? INT32_MAX : x < INT32_MIN ? INT32_MIN : (int32_t)x;
				q[k] = quality[st->map[k]];
			}
			sv_template_set_values(&st->tpl, a, v, q);
		} else {
			sv_template_set_values(&st->tpl, a, values, quality);
		}
		/* refrTm: the sample's instant, UTC, TimeQuality: clock synchronised, 24-bit accuracy field 0x18 */
		sv_template_set_refrtm(&st->tpl, a, sv_sample_time_ns(sec, cnt, st->rate) + p->to_utc_ns, 0x18);
	}
	memcpy(out, st->tpl.frame, st->tpl.len);
	return true;
}

static void stream_advance(struct svpub *p, struct stream_rt *st)
{
	st->k++;
	st->deadline_ns = sv_frame_deadline_ns(p->start_sec, st->k, st->rate, st->asdus);
	if (st->k >= st->k_end || svpub_sample_ns(p->start_sec, st->k * st->asdus, st->rate) >= p->t_end_ns)
		st->done = true;
}

/* One frame of stream @si due at @deadline, woken at @t_wake: into slot @slot, or counted. Returns true
 * when the frame is to be sent. */
static bool frame_prepare(struct svpub *p, unsigned si, unsigned slot, int64_t t_wake, struct pend **pe)
{
	struct stream_rt *st = &p->s[si];
	int64_t late_by = t_wake - st->deadline_ns;
	uint32_t tai_sec = 0;
	uint16_t smp_cnt = 0;
	struct pend *e;

	*pe = NULL;
	if (!frame_build(p, st, p->buf[slot], &tai_sec, &smp_cnt)) {
		st->stopped++;
		p->tot.stopped++;
		stream_advance(p, st);
		return false;
	}
	/* Nothing reads the ring without stamps or records: one reused entry keeps the per-frame working set
	 * small instead of streaming through PEND_RING entries (2.6 MB) between wake-ups. */
	if (p->pend_off) {
		e = &p->scratch;
		memset(e, 0, sizeof(*e));
	} else {
		e = pend_new(p, t_wake);
	}
	e->stream = si;
	e->tai_sec = tai_sec;
	e->smp_cnt = smp_cnt;
	e->seq = (uint32_t)st->k;
	e->t_sched_ns = st->deadline_ns;
	e->len = st->tpl.len;
	if (p->paced && late_by > (int64_t)p->cfg->late_threshold_us * 1000) {
		if (p->cfg->late_policy == SVPUB_LATE_SKIP) {
			e->flags = SV_REC_F_SKIPPED | SV_REC_F_LATE;
			e->reason = SV_REASON_DEADLINE_MISSED;
			e->t_handoff_ns = t_wake;
			e->done = 1;
			st->skipped++;
			p->tot.skipped++;
			stream_advance(p, st);
			return false;
		}
		e->flags = SV_REC_F_LATE;
		st->late++;
		p->tot.late++;
	}
	*pe = e;
	p->txf[slot].data = p->buf[slot];
	p->txf[slot].len = st->tpl.len;
	p->txf[slot].cookie = p->head - 1;
	p->txf[slot].t_sched_ns = st->deadline_ns;
	p->txf_stream[slot] = si;
	stream_advance(p, st);
	return true;
}

/* ---- status ---- */

static void status_line(struct svpub *p, int64_t now)
{
	struct sv_stats_summary s;
	char buf[256], line[512];

	sv_stats_summarize(&p->sec_lateness, &s);
	sv_stats_summary_format(&s, buf, sizeof(buf));
	snprintf(line, sizeof(line), "%" PRIu64 " frames (%" PRIu64 "/s) late %" PRIu64 " skipped %" PRIu64
			" outage %" PRIu64 " tx-ts %" PRIu64 " | wake-up lateness %s",
		 p->tot.frames, p->tot.frames - p->status_frames, p->tot.late, p->tot.skipped, p->tot.outage,
		 p->tot.tx_timestamps, p->paced ? buf : "(unpaced)");
	fprintf(stderr, "svpub: %s\n", line);
	sv_ready_status(line); /* systemctl status: the same line */
	p->status_frames = p->tot.frames;
	sv_stats_init(&p->sec_lateness);
	p->next_status_ns = now + SV_NSEC_PER_SEC;
}

/* ---- the loop ---- */

static void send_collected(struct svpub *p, unsigned nslots, struct pend **pe)
{
	int64_t t_handoff;
	unsigned start = 0;

	/* One call per run of slots on the same queue: paced batches are queue-sorted (streams are), so one
	 * call per socket priority. */
	while (start < nslots) {
		unsigned q = (unsigned)p->s[p->txf_stream[start]].queue, end = start;

		while (end < nslots && (unsigned)p->s[p->txf_stream[end]].queue == q)
			end++;
		svpub_tx_send(p->tx, q, p->txf + start, end - start);
		start = end;
	}
	t_handoff = now_ns(p);
	for (unsigned i = 0; i < nslots; i++) {
		struct stream_rt *st = &p->s[p->txf_stream[i]];
		struct pend *e = pe[i];
		int err = p->txf[i].err;

		e->t_handoff_ns = t_handoff;
		if (err) {
			e->flags |= SV_REC_F_DROPPED;
			e->reason = SV_REASON_TX_ERROR;
			e->done = 1;
			if (svpub_errno_is_outage(-err)) {
				st->outage++;
				p->tot.outage++;
				if (!p->link_down) {
					/* once per transition: the per-frame path counts, it does not log */
					sv_warn("interface %s is down or gone (%s): frames are counted as outage until it is back",
						p->cfg->interface, strerror(-err));
					p->link_down = true;
					p->outage_at_down = p->tot.outage - 1;
				}
			} else {
				st->tx_errors++;
				p->tot.tx_errors++;
				svpub_tx_errlog_add(&p->txerr, -err);
			}
		} else {
			if (p->link_down) {
				sv_info("interface %s is back: %" PRIu64 " frames counted as outage while it was down",
					p->cfg->interface, p->tot.outage - p->outage_at_down);
				p->link_down = false;
			}
			st->sent++;
			p->tot.frames++;
			if (p->tx->ts_source == SV_TS_SCHEDULED) {
				e->t_tx_ns = e->t_sched_ns;
				e->src = SV_TS_SCHEDULED;
				e->done = 1;
				p->tot.tx_timestamps++;
			} else if (p->tx->ts_source == SV_TS_NONE) {
				e->done = 1;
			}
		}
	}
	p->t_last_ns = t_handoff;
}

int svpub_run(struct svpub *p, volatile sig_atomic_t *stop)
{
	static struct pend *pe[4096];
	int64_t now;
	int ret = 0;

	p->tid = (uint32_t)syscall(SYS_gettid);
	now = now_ns(p);
	if (!p->paced)
		p->t_first_ns = now; /* virtual deadlines: the run is measured on the wall clock */
	p->next_status_ns = now + SV_NSEC_PER_SEC;
	for (;;) {
		int64_t d = INT64_MAX, t_wake;
		unsigned nslots = 0;
		bool slept = false;

		if (*stop)
			break;
		for (unsigned i = 0; i < p->n; i++)
			if (!p->s[i].done && p->s[i].deadline_ns < d)
				d = p->s[i].deadline_ns;
		if (d == INT64_MAX)
			break;
		if (p->paced) {
			now = now_ns(p);
			if (now < d) {
				struct timespec ts = sv_ns_to_timespec(d);
				int r = clock_nanosleep(p->cid, TIMER_ABSTIME, &ts, NULL);

				/* clock_nanosleep returns the error; it does not set errno. */
				if (r == EINTR)
					continue;
				if (r) {
					sv_err("clock_nanosleep: %s", strerror(r));
					ret = -r;
					break;
				}
				slept = true;
			}
			t_wake = now_ns(p);
			sv_stats_add(&p->lateness, t_wake - d);
			if (slept)
				sv_stats_add(&p->wakeup, t_wake - d);
			sv_stats_add(&p->sec_lateness, t_wake - d);
			/* Streams are stored sorted by queue: the batch comes out grouped by socket. */
			for (unsigned i = 0; i < p->n; i++) {
				if (p->s[i].done || p->s[i].deadline_ns != d)
					continue;
				if (frame_prepare(p, i, nslots, t_wake, &pe[nslots]))
					nslots++;
			}
			if (t_wake - d >= p->min_period_ns)
				p->tot.overruns++;
		} else {
			/* Unpaced: the next `batch` frames in deadline order, as fast as the back-end takes them. */
			t_wake = now_ns(p);
			while (nslots < p->slots) {
				unsigned best = UINT32_MAX;

				for (unsigned i = 0; i < p->n; i++)
					if (!p->s[i].done &&
					    (best == UINT32_MAX || p->s[i].deadline_ns < p->s[best].deadline_ns))
						best = i;
				if (best == UINT32_MAX)
					break;
				if (frame_prepare(p, best, nslots, t_wake, &pe[nslots]))
					nslots++;
			}
		}
		if (nslots)
			send_collected(p, nslots, pe);
		if (p->tx->fatal) {
			ret = p->tx->fatal; /* logged by the back-end: nothing more can be sent */
			break;
		}
		now = now_ns(p);
		svpub_tx_errlog_report(&p->txerr, out_name(p), now, false);
		svpub_tx_poll(p->tx, ts_cb, p);
		pend_drain(p, now, false);
		if (p->tx->ts_source != SV_TS_NONE)
			ts_missing_check(p, now);
		sv_record_tick(p->rec, now); /* the time bounds: no clock read, no syscall unless one is due */
		if (p->soak.iv && now >= p->soak_next_ns) { /* intervals closed, windows written */
			sv_soak_tick(&p->soak, sv_clock_gettime_ns(CLOCK_MONOTONIC));
			p->soak_next_ns = now + SOAK_TICK_NS;
		}
		if (p->metrics && now >= p->metrics_ns)
			metrics_copy(p, now);
		if (p->cfg->status && now >= p->next_status_ns)
			status_line(p, now);
	}
	/* Let the last stamps arrive (a few ms), then write out everything. */
	for (int i = 0; i < 20 && p->tail < p->head; i++) {
		struct timespec ts = { 0, 1000000 };

		svpub_tx_poll(p->tx, ts_cb, p);
		pend_drain(p, now_ns(p), false);
		nanosleep(&ts, NULL);
	}
	svpub_tx_poll(p->tx, ts_cb, p);
	pend_drain(p, now_ns(p), true);
	if (p->rec) {
		for (unsigned i = 0; i < p->n && !p->soak.iv; i++)
			summary_flush(p, &p->s[i], i);
		/* soak: the open intervals (flag LAST) and windows (TRUNCATED), before the END */
		sv_soak_close(&p->soak, sv_clock_gettime_ns(CLOCK_MONOTONIC), &p->soak_st);
		/* the record's last block and END now, so that the summaries say what reached the disk */
		p->rec_err = sv_record_writer_close_stats(p->rec, &p->rec_st);
		p->rec = NULL;
		p->rec_closed = true;
	}
	svpub_tx_errlog_report(&p->txerr, out_name(p), now_ns(p), true);
	p->tot.run_ns = p->t_last_ns - p->t_first_ns;
	p->tot.outage = p->tx->outage;
	p->tot.tx_errors = p->tx->tx_errors;
	metrics_copy(p, 0); /* the final values */
	return ret;
}

/* ---- setup ---- */

static int cmp_queue(const void *a, const void *b)
{
	const struct stream_rt *x = a, *y = b;

	return x->queue - y->queue;
}

int svpub_create(struct svpub **pp, const struct svpub_config *c)
{
	struct svpub *p = calloc(1, sizeof(*p));
	struct sv_clock_sync sync;
	int err;

	if (!p)
		return -ENOMEM;
	p->cfg = c;
	p->clock = c->clock == SVPUB_CLOCK_REALTIME ? SV_CLOCK_REALTIME : SV_CLOCK_TAI;
	sv_clock_posix_id(p->clock, &p->cid);
	sv_stats_init(&p->lateness);
	sv_stats_init(&p->wakeup);
	sv_stats_init(&p->tx_lateness);
	sv_stats_init(&p->sec_lateness);
	if (!sv_clock_sync_read(&sync)) {
		if (p->clock == SV_CLOCK_TAI) {
			p->to_utc_ns = -(int64_t)sync.tai_offset_s * SV_NSEC_PER_SEC;
			if (sync.tai_unset)
				sv_warn("the kernel's TAI offset is not set: CLOCK_TAI == CLOCK_REALTIME (37 s off); "
					"smpCnt is aligned to REALTIME seconds (run ptp4l/phc2sys or chrony with leapsectz)");
		} else {
			p->to_tai_sec = sync.tai_offset_s;
		}
	}
	p->paced = !c->unpaced && c->backend != SVPUB_BACKEND_PCAP;
	err = svpub_tx_open(&p->tx, c, p->clock);
	if (err)
		goto out_free;
	p->n = c->nstreams;
	p->s = calloc(p->n, sizeof(*p->s));
	p->pend = calloc(PEND_RING, sizeof(*p->pend));
	if (!p->s || !p->pend) {
		err = -ENOMEM;
		goto out_free;
	}
	for (unsigned i = 0; i < p->n; i++) {
		struct stream_rt *st = &p->s[i];

		st->cfg = &c->streams[i];
		st->rate = svpub_stream_rate(st->cfg);
		st->asdus = svpub_stream_asdus(st->cfg);
		st->period_ns = sv_sample_offset_ns(st->asdus, st->rate);
		err = svpub_tx_add_queue(p->tx, st->cfg->so_priority);
		if (err < 0)
			goto out_free;
		st->queue = err;
		{
			char msg[200];

			st->npairs = svpub_stream_channels(st->cfg, st->map, st->conv, msg, sizeof(msg));
			if (st->npairs < 0) { /* refused by svpub_config_resolve(): not expected */
				sv_err("stream %s: %s", st->cfg->svid, msg);
				err = -EINVAL;
				goto out_free;
			}
		}
		err = build_template(p, st);
		if (err)
			goto out_free;
		err = svpub_signal_init(&st->sig, st->cfg, i);
		if (err)
			goto out_free;
	}
	/* Streams sorted by queue: the frames of one deadline are then grouped by socket. The signal keeps
	 * a pointer to the config, not to the runtime struct, so moving it is safe. */
	qsort(p->s, p->n, sizeof(*p->s), cmp_queue);
	p->nq = 0;
	for (unsigned i = 0; i < p->n; i++)
		if ((unsigned)p->s[i].queue + 1 > p->nq)
			p->nq = (unsigned)p->s[i].queue + 1;
	p->min_period_ns = INT64_MAX;
	for (unsigned i = 0; i < p->n; i++)
		if (p->s[i].period_ns < p->min_period_ns)
			p->min_period_ns = p->s[i].period_ns;
	p->slots = p->paced ? p->n : c->batch;
	if (p->slots > 4096)
		p->slots = 4096;
	p->buf = calloc(p->slots, sizeof(*p->buf));
	p->txf = calloc(p->slots, sizeof(*p->txf));
	p->txf_stream = calloc(p->slots, sizeof(*p->txf_stream));
	if (!p->buf || !p->txf || !p->txf_stream) {
		err = -ENOMEM;
		goto out_free;
	}

	/* Start: paced, at the first frame due START_LEAD_NS from now (mid-second: smpCnt still counts from
	 * the top of the second); unpaced and files, at the top of the next second. */
	{
		int64_t now = now_ns(p);

		p->start_sec = sv_ns_to_sec_floor(now) + (p->paced ? 0 : 1);
		p->t_first_ns = INT64_MAX;
		for (unsigned i = 0; i < p->n; i++) {
			struct stream_rt *st = &p->s[i];

			st->k = p->paced ? sv_frame_index_at(p->start_sec, now + START_LEAD_NS, st->rate, st->asdus) : 0;
			/* count: frames from the first one sent (k is mid-second in a paced run) */
			st->k_end = st->cfg->count && st->cfg->count <= UINT64_MAX - st->k ? st->k + st->cfg->count
											    : UINT64_MAX;
			st->deadline_ns = sv_frame_deadline_ns(p->start_sec, st->k, st->rate, st->asdus);
			int64_t first = svpub_sample_ns(p->start_sec, st->k * st->asdus, st->rate);

			if (first < p->t_first_ns)
				p->t_first_ns = first;
		}
		p->t_end_ns = c->duration > 0 ? p->t_first_ns + (int64_t)(c->duration * 1e9 + 0.5) : INT64_MAX;
		for (unsigned i = 0; i < p->n; i++) {
			if (svpub_sample_ns(p->start_sec, p->s[i].k * p->s[i].asdus, p->s[i].rate) >= p->t_end_ns)
				p->s[i].done = true;
			/* events count from the start of publishing: the first sample of the run */
			err = svpub_signal_set_start(&p->s[i].sig, p->t_first_ns - p->start_sec * SV_NSEC_PER_SEC);
			if (err)
				goto out_free;
		}
		p->t_last_ns = p->t_first_ns;
		p->link_down = p->tx->link_down;
	}

	if (c->record[0]) {
		struct sv_record_writer_cfg rc = {
			.path = c->record,
			.tool = "svpub",
			.clock = p->clock,
			.phc_index = -1,
			.host = c->host[0] ? c->host : NULL, /* --host */
		};

		err = sv_record_cfg_opts(&rc, &SV_REC_OPTS_OF(c));
		if (!err)
			err = sv_record_writer_open(&p->rec, &rc);
		if (err) {
			sv_err("record %s: %s", c->record, strerror(-err));
			goto out_free;
		}
		for (unsigned i = 0; i < p->n; i++) {
			struct stream_rt *st = &p->s[i];
			struct sv_rec_stream rs;

			memset(&rs, 0, sizeof(rs));
			rs.stream = i;
			rs.appid = st->cfg->appid;
			rs.asdus = (uint16_t)st->asdus;
			rs.sample_rate = st->rate;
			rs.conf_rev = st->cfg->conf_rev;
			rs.vlan = st->cfg->vlan_id < 0 ? 0xFFFF : (uint16_t)st->cfg->vlan_id;
			rs.smp_synch = st->cfg->smp_synch;
			rs.svid_len = (uint8_t)strlen(st->cfg->svid);
			memcpy(rs.dst_mac, st->cfg->dst, 6);
			rs.flags = st->cfg->simulation ? SV_REC_F_SIMULATION : 0;
			snprintf(rs.svid, sizeof(rs.svid), "%s", st->cfg->svid);
			rs.smp_wrap = st->rate;
			err = sv_record_define_stream(p->rec, &rs);
			if (err)
				goto out_free;
			st->sec_hist = malloc(sizeof(*st->sec_hist));
			if (!st->sec_hist) {
				err = -ENOMEM;
				goto out_free;
			}
			sv_stats_init(st->sec_hist);
		}
	}
	if (p->rec && c->soak) {
		struct sv_soak_opts so = SV_SOAK_OPTS_OF(c);
		uint32_t fps = 0;

		for (unsigned i = 0; i < p->n; i++)
			if (p->s[i].rate / p->s[i].asdus > fps)
				fps = p->s[i].rate / p->s[i].asdus;
		struct sv_soak_cfg sc = { .w = p->rec, .o = &so, .max_keys = p->n, .key_events_per_s = fps };

		err = sv_soak_open(&p->soak, &sc, sv_clock_gettime_ns(CLOCK_MONOTONIC));
		for (unsigned i = 0; i < p->n && !err; i++) {
			struct sv_interval_key k = { .stream = i, .from_point = SV_POINT_TS, .point = SV_POINT_T0,
						     .guest = SV_REC_GUEST_NONE };
			int key = sv_interval_key_add(p->soak.iv, &k);

			if (key < 0)
				err = key;
			p->s[i].soak_key = (unsigned)key;
		}
		if (err) {
			sv_err("record %s: soak mode: %s", c->record, strerror(-err));
			goto out_free;
		}
	}
	p->pend_off = p->tx->ts_source == SV_TS_NONE && !p->rec;
	sv_info("%u stream%s on %s (%s), clock %s, TX timestamps: %s%s", p->n, p->n == 1 ? "" : "s",
		c->backend == SVPUB_BACKEND_PCAP ? c->output : c->interface, p->tx->ops->name,
		sv_clock_name(p->clock), p->tx->ts_detail, p->paced ? "" : ", unpaced");
	*pp = p;
	return 0;
out_free:
	svpub_destroy(p);
	return err;
}

int svpub_destroy(struct svpub *p)
{
	int err = 0, ret;

	if (!p)
		return 0;
	if (p->rec) { /* not run */
		sv_soak_close(&p->soak, sv_clock_gettime_ns(CLOCK_MONOTONIC), &p->soak_st);
		p->rec_err = sv_record_writer_close_stats(p->rec, &p->rec_st);
		p->rec_closed = true;
	}
	if (p->rec_closed && (p->rec_err || sv_record_stats_incomplete(&p->rec_st))) {
		/* said in the summary (svpub_print_summary) */
		err = p->rec_err ? p->rec_err : -EIO;
	}
	ret = svpub_tx_close(p->tx); /* a file back-end: logged there, naming the file */
	if (ret && !err)
		err = ret;
	if (p->s)
		for (unsigned i = 0; i < p->n; i++) {
			svpub_signal_free(&p->s[i].sig);
			free(p->s[i].sec_hist);
		}
	free(p->s);
	free(p->pend);
	free(p->buf);
	free(p->txf);
	free(p->txf_stream);
	free(p);
	return err;
}

/* ---- results ---- */

void svpub_get_totals(const struct svpub *p, struct svpub_totals *t)
{
	*t = p->tot;
}

const struct sv_stats *svpub_lateness(const struct svpub *p)
{
	return &p->lateness;
}

const struct sv_stats *svpub_tx_lateness(const struct svpub *p)
{
	return &p->tx_lateness;
}

const char *svpub_ts_source_name(const struct svpub *p)
{
	return sv_ts_source_name(p->tx->ts_source);
}

void svpub_print_summary(const struct svpub *p, FILE *f)
{
	struct sv_stats_summary s;
	char buf[256];
	double secs = p->tot.run_ns / 1e9;

	fprintf(f,
		"svpub: %" PRIu64 " frames in %.3f s (%.0f frames/s), late %" PRIu64 ", skipped %" PRIu64
		", stopped %" PRIu64 ", outage %" PRIu64 ", tx errors %" PRIu64 ", overruns %" PRIu64 "\n",
		p->tot.frames, secs, secs > 0 ? p->tot.frames / secs : 0.0, p->tot.late, p->tot.skipped,
		p->tot.stopped, p->tot.outage, p->tot.tx_errors, p->tot.overruns);
	if (p->txerr.total) {
		svpub_tx_errlog_format(&p->txerr, buf, sizeof(buf));
		fprintf(f, "svpub: tx errors by errno: %s\n", buf);
	}
	fprintf(f, "svpub: TX timestamps: %s; %" PRIu64 " received, %" PRIu64 " missing, %" PRIu64 " out of order, %" PRIu64
		   " of no frame sent\n",
		p->tx->ts_detail, p->tot.tx_timestamps, p->tot.tx_ts_missing, p->tot.tx_ts_disorder, p->tx->ts_unmatched);
	if (p->paced) {
		sv_stats_summarize(&p->lateness, &s);
		sv_stats_summary_format(&s, buf, sizeof(buf));
		fprintf(f, "svpub: wake-up lateness (deadline -> wake-up): %s\n", buf);
		sv_stats_print_log2(&p->lateness, f, 1000, NULL);
	}
	sv_stats_summarize(&p->tx_lateness, &s);
	sv_stats_summary_format(&s, buf, sizeof(buf));
	fprintf(f, "svpub: TX lateness (deadline -> TX timestamp): %s\n", buf);
	if (p->tx_lateness.count && p->tx->ts_source != SV_TS_SCHEDULED)
		sv_stats_print_log2(&p->tx_lateness, f, 1000, NULL);
	if (p->rec_closed) {
		char line[512];

		sv_record_stats_format(&p->rec_st, line, sizeof(line));
		fprintf(f, "svpub: record %s: %s\n", p->cfg->record, line);
		if (p->cfg->soak) {
			sv_soak_stats_format(&p->soak_st, line, sizeof(line));
			fprintf(f, "svpub: record %s: %s\n", p->cfg->record, line);
		}
	}
	for (unsigned i = 0; i < p->n; i++) {
		const struct stream_rt *st = &p->s[i];

		fprintf(f, "svpub:   %s appid 0x%04x: sent %" PRIu64 " late %" PRIu64 " skipped %" PRIu64
			   " stopped %" PRIu64 " outage %" PRIu64 " tx errors %" PRIu64 "\n",
			st->cfg->svid, st->cfg->appid, st->sent, st->late, st->skipped, st->stopped, st->outage,
			st->tx_errors);
	}
}

int svpub_print_json(const struct svpub *p, FILE *f)
{
	struct sv_json j;

	sv_json_init(&j, f, 0);
	sv_json_object_begin(&j);
	sv_json_kv_str(&j, "tool", "svpub");
	sv_json_kv_str(&j, "backend", p->tx->ops->name);
	sv_json_kv_str(&j, "clock", sv_clock_name(p->clock));
	sv_json_kv_bool(&j, "paced", p->paced);
	sv_json_kv_uint(&j, "streams", p->n);
	sv_json_kv_uint(&j, "frames", p->tot.frames);
	sv_json_kv_uint(&j, "late", p->tot.late);
	sv_json_kv_uint(&j, "skipped", p->tot.skipped);
	sv_json_kv_uint(&j, "stopped", p->tot.stopped);
	sv_json_kv_uint(&j, "outage", p->tot.outage);
	sv_json_kv_uint(&j, "tx_errors", p->tot.tx_errors);
	sv_json_key(&j, "tx_errors_by_errno"); /* {"ENOBUFS": 4024}: the errno names of tx_errors */
	sv_json_object_begin(&j);
	for (unsigned i = 0; i < SVPUB_TX_ERRNOS && p->txerr.by[i].err; i++)
		sv_json_kv_uint(&j, svpub_errno_name(p->txerr.by[i].err), p->txerr.by[i].count);
	if (p->txerr.other)
		sv_json_kv_uint(&j, "other", p->txerr.other);
	sv_json_object_end(&j);
	sv_json_kv_uint(&j, "overruns", p->tot.overruns);
	sv_json_kv_double(&j, "duration_s", p->tot.run_ns / 1e9);
	sv_json_kv_double(&j, "fps", p->tot.run_ns > 0 ? p->tot.frames / (p->tot.run_ns / 1e9) : 0.0);
	sv_json_kv_str(&j, "tx_timestamp_source", sv_ts_source_name(p->tx->ts_source));
	sv_json_kv_str(&j, "tx_timestamp_detail", p->tx->ts_detail);
	sv_json_kv_bool(&j, "launch_time", p->tx->launch_time);
	sv_json_kv_uint(&j, "tx_timestamps", p->tot.tx_timestamps);
	sv_json_kv_uint(&j, "tx_timestamps_missing", p->tot.tx_ts_missing);
	sv_json_kv_uint(&j, "tx_timestamps_out_of_order", p->tot.tx_ts_disorder);
	sv_json_kv_uint(&j, "tx_timestamps_unmatched", p->tx->ts_unmatched); /* stamps of no frame sent */
	sv_json_kv_uint(&j, "tx_timestamp_key_resyncs", p->tx->ts_resync);
	sv_json_key(&j, "lateness_ns");
	sv_stats_json(&j, &p->lateness);
	sv_json_key(&j, "tx_lateness_ns");
	sv_stats_json(&j, &p->tx_lateness);
	sv_json_key(&j, "wakeup_lateness_ns");
	sv_stats_json(&j, &p->wakeup);
	/* The histograms themselves, so that runs can be pooled exactly (the percentiles of a pooled set
	 * are not a function of the runs' percentiles). */
	sv_json_key(&j, "lateness_hist_ns");
	sv_stats_buckets_json(&j, &p->lateness);
	sv_json_key(&j, "wakeup_lateness_hist_ns");
	sv_stats_buckets_json(&j, &p->wakeup);
	sv_json_key(&j, "record");
	sv_record_stats_json(&j, p->cfg->record, p->rec_closed ? &p->rec_st : NULL);
	sv_json_key(&j, "soak"); /* null without --soak */
	if (p->cfg->soak && p->rec_closed)
		sv_soak_stats_json(&j, &p->soak_st);
	else
		sv_json_null(&j);
	sv_json_key(&j, "per_stream");
	sv_json_array_begin(&j);
	for (unsigned i = 0; i < p->n; i++) {
		const struct stream_rt *st = &p->s[i];

		sv_json_object_begin(&j);
		sv_json_kv_str(&j, "svID", st->cfg->svid); /* DESIGN's word, as svsub writes it */
		sv_json_kv_uint(&j, "appid", st->cfg->appid);
		sv_json_kv_uint(&j, "sample_rate", st->rate);
		sv_json_kv_uint(&j, "asdus", st->asdus);
		sv_json_kv_uint(&j, "frames", st->sent);
		sv_json_kv_uint(&j, "late", st->late);
		sv_json_kv_uint(&j, "skipped", st->skipped);
		sv_json_kv_uint(&j, "stopped", st->stopped);
		/* not "dropped": DESIGN keeps that word for frames the kernel freed with a drop reason */
		sv_json_kv_uint(&j, "outage", st->outage);
		sv_json_kv_uint(&j, "tx_errors", st->tx_errors);
		sv_json_object_end(&j);
	}
	sv_json_array_end(&j);
	sv_json_object_end(&j);
	return sv_json_end(&j);
}

/* ---- Metrics (svpub --metrics; svpub_metrics.c reads these on its thread) ---- */

void svpub_set_metrics(struct svpub *p, struct sv_metrics_health *h)
{
	p->metrics = h;
}

const struct svpub_totals *svpub_totals_ref(const struct svpub *p)
{
	return &p->tot;
}

unsigned svpub_nstreams(const struct svpub *p)
{
	return p->n;
}

void svpub_stream_counters(const struct svpub *p, unsigned i, struct svpub_stream_counters *c)
{
	const struct stream_rt *st = &p->s[i];

	*c = (struct svpub_stream_counters){ .svid = st->cfg->svid, .appid = st->cfg->appid, .frames = &st->sent,
					     .late = &st->late, .skipped = &st->skipped, .stopped = &st->stopped,
					     .outage = &st->outage, .tx_errors = &st->tx_errors };
}

const char *svpub_out_name(const struct svpub *p)
{
	return out_name(p);
}

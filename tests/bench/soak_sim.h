/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A simulated soak through libsv's soak modules (sv_interval, sv_flight, sv_record): what svpub, svsub or
 * svtrace write in soak mode at a given load, on a simulated clock (the writer's times, the tick clock and
 * its conversion to TAI, a clock step), without a network. For bench_soak (bytes per hour and per day at
 * 8 x 4000 frames/s to 2 guests), bench_soakgen (72 h of soak records for svreport) and test_soak_memory.
 *
 * Two fidelities of the same load:
 *  - frames: every frame goes through the per-packet calls (sv_interval_frame per key, sv_flight_push per
 *    record), as a tool's loop would make them;
 *  - fast: each interval's latencies enter as the buckets of a histogram drawn once per frame for one
 *    interval (sv_interval_frame with n = a bucket's count, so the HIST records have the same buckets),
 *    and per-frame records enter the flight ring only around the triggers (which are all a window keeps).
 * Both make the same triggers at the same times: a frame over SS_LATE_NS every noise_ns on one (stream,
 * guest) in turn (this VM's background noise), and every fault_ns a loss, a drop, a change, a restart in
 * turn (so that every class spends its budget). Latencies are fixed offsets plus xorshift jitter with a tail:
 * runs repeat.
 * Header-only: static functions each includer compiles.
 */
#ifndef SV_SOAK_SIM_H
#define SV_SOAK_SIM_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sv_clock.h"
#include "sv_flight.h"
#include "sv_interval.h"
#include "sv_record.h"
#include "sv_stats.h"

#define SS_SEC0 1800000000LL			/* TAI second of a simulated soak's start */
#define SS_MONO0 (1000 * SV_NSEC_PER_SEC)	/* the tick clock (MONOTONIC) then */
#define SS_TICK_NS (10 * SV_NSEC_PER_MSEC)	/* the tools' loop period */
#define SS_LATE_NS SV_NSEC_PER_MSEC		/* the latency threshold: over it a frame is late, a trigger */
#define SS_MAX_STREAMS 8
#define SS_MAX_GUESTS 2
#define SS_HOPS 3

enum ss_tool { SS_SVPUB, SS_SVSUB, SS_SVTRACE };

struct ss_cfg {
	enum ss_tool tool;
	const char *path;		/* the record (rotated parts beside it) */
	const char *host;
	unsigned streams;		/* 1..SS_MAX_STREAMS */
	unsigned guests;		/* svtrace's egress ports (1..SS_MAX_GUESTS); svsub: its own guest's index */
	uint32_t rate;			/* frames (one ASDU each) per second per stream */
	int64_t start_ns;		/* simulated time from the soak's start (TAI SS_SEC0) where this run starts */
	int64_t frames_ns;		/* first this long frame by frame, */
	int64_t fast_ns;		/* then this long interval by interval */
	int64_t interval_ns;		/* 0: SV_INTERVAL_NS_DEFAULT */
	int64_t noise_ns;		/* a late frame this often (0: none) */
	int64_t fault_ns;		/* a loss / drop / change / restart in turn this often (0: none) */
	int64_t step_at_ns;		/* a step of the host's TAI at this time from the soak's start (0: none), */
	int64_t step_ns;		/* by this much (the host's TAI was off by -step before it) */
	uint64_t rotate_bytes;		/* the record's parts (0: one file) */
	uint32_t keep;			/* rotated parts kept (0: all) */
	struct sv_flight_cfg flight;	/* the flight recorder's settings (w, events_per_s set here; 0s: defaults) */
	bool crash;			/* end like a killed tool: the last block flushed, no END, nothing closed */
	bool wide;			/* latencies spread like this VM's: a tail in one frame of 16 up to 400 us,
					 * one in 1024 up to 3 ms (more histogram buckets: larger HIST records) */
	/* called every mark_ns (0: an hour) of simulated time (@n: 1, 2, ...; the record flushed), and at the
	 * end (@n = 0) */
	void (*at_mark)(void *ctx, struct sv_record_writer *w, unsigned n);
	int64_t mark_ns;
	void *ctx;
};

struct ss_result {
	struct sv_record_writer_stats rec;
	struct sv_interval_stats iv;
	struct sv_flight_stats fl;
	uint64_t frames;		/* frames simulated (per stream summed) */
	uint64_t triggers;
};

struct ss_sim {
	const struct ss_cfg *c;
	int64_t mono;			/* the tick clock now */
	int64_t true_to_tai;		/* TAI (the publisher's: sample times) = mono + this */
	int64_t step_mono;		/* the host's TAI steps at this mono time (INT64_MAX: never) */
	struct sv_record_writer *w;
	struct sv_interval *iv;
	struct sv_flight *fl;
	int key[SS_MAX_STREAMS][SS_MAX_GUESTS][SS_HOPS];
	unsigned nhops;
	uint64_t rng;
	struct sv_stats *tmpl;		/* fast: one interval's latencies per hop */
	int64_t next_noise, next_fault;	/* TAI */
	unsigned nnoise, nfault;
	int64_t interval;
	unsigned marks;			/* at_mark calls done */
	int64_t next_mark;		/* TAI */
	struct ss_result *res;
	struct ss_span {		/* fast: per-frame records of one (stream, guest) around triggers */
		unsigned stream, guest;
		int64_t from, to, spike; /* TAI */
	} span[16];
};
#define SS_SPANS 16

static inline uint64_t ss_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* The host's TAI now: off by -step before the step. */
static inline int64_t ss_to_tai(const struct ss_sim *m, int64_t mono)
{
	return m->true_to_tai - (mono < m->step_mono ? m->c->step_ns : 0);
}

static inline int64_t ss_writer_now(void *ctx)
{
	struct ss_sim *m = ctx;

	return m->mono + ss_to_tai(m, m->mono);
}

static inline int ss_measure(void *ctx, struct sv_clock_xlate *x)
{
	struct ss_sim *m = ctx;

	x->offset_ns = ss_to_tai(m, m->mono);
	x->gap_ns = 80;
	x->measured_from_ns = m->mono;
	return 0;
}

/* One frame's latencies (ns) at the tool's hops: svpub Ts-T0; svsub Ts-T3, Ts-T4; svtrace T1-T2a, T2a-T2b,
 * T1-T2b. A tail of one frame in 256 up to 150 us (cfg.wide: heavier); @spike adds 1.5 ms (a late frame). */
static inline void ss_latencies(struct ss_sim *m, bool spike, int64_t *d)
{
	uint64_t r = ss_rand(&m->rng);
	int64_t tail = (r & 255) ? 0 : (int64_t)((r >> 8) % 150000);

	if (m->c->wide)
		tail = (r & 1023) == 0 ? (int64_t)((r >> 10) % 3000000) : (r & 15) == 0 ? (int64_t)((r >> 10) % 400000) : 0;

	switch (m->c->tool) {
	case SS_SVPUB:
		d[0] = 12000 + (int64_t)((r >> 32) % 12000) + tail;
		break;
	case SS_SVSUB:
		d[0] = 70000 + (int64_t)((r >> 32) % 30000) + tail;
		d[1] = d[0] + 4000 + (int64_t)((r >> 48) % 8000);
		break;
	case SS_SVTRACE:
		d[0] = 6000 + (int64_t)((r >> 32) % 6000);
		d[1] = 10000 + (int64_t)((r >> 44) % 20000) + tail;
		d[2] = d[0] + d[1];
		break;
	}
	if (spike)
		for (unsigned h = 0; h < m->nhops; h++)
			d[h] += 1500000;
}

static inline int ss_point(const struct ss_sim *m, unsigned h, uint8_t *from)
{
	static const uint8_t pub[][2] = { { SV_POINT_TS, SV_POINT_T0 } };
	static const uint8_t sub[][2] = { { SV_POINT_TS, SV_POINT_T3 }, { SV_POINT_TS, SV_POINT_T4 } };
	static const uint8_t trace[][2] = { { SV_POINT_T1, SV_POINT_T2A }, { SV_POINT_T2A, SV_POINT_T2B },
					    { SV_POINT_T1, SV_POINT_T2B } };
	const uint8_t(*p)[2] = m->c->tool == SS_SVPUB ? pub : m->c->tool == SS_SVSUB ? sub : trace;

	*from = p[h][0];
	return p[h][1];
}

/* The guest index of keys and records: svtrace's ports 1..G, none elsewhere. */
static inline uint16_t ss_guest(const struct ss_sim *m, unsigned g)
{
	return m->c->tool == SS_SVTRACE ? (uint16_t)(g + 1) : SV_REC_GUEST_NONE;
}

static inline unsigned ss_nguests(const struct ss_sim *m)
{
	return m->c->tool == SS_SVTRACE ? m->c->guests : 1;
}

/* EVENT records of one frame of stream @s for guest @g (svtrace: T1 once, then T2a and T2b of @g). */
static inline void ss_push_frame(struct ss_sim *m, unsigned s, unsigned g, int64_t ts, uint32_t sec,
				 uint16_t smp, const int64_t *d, bool t1)
{
	int64_t to_tai = ss_to_tai(m, m->mono) - m->true_to_tai; /* the host's error: its stamps carry it */
	struct sv_rec_event ev = { .stream = s, .tai_sec = sec, .smp_cnt = smp, .ts_src = SV_TS_SOFTWARE,
				   .guest = SV_REC_GUEST_NONE, .nasdu = 1, .frame_len = 120,
				   .t2_ns = ts, .t2_kind = SV_T2_SAMPLE };

	switch (m->c->tool) {
	case SS_SVPUB:
		ev.point = SV_POINT_T0;
		ev.t_ns = ts + d[0] + to_tai;
		sv_flight_push(m->fl, &ev);
		break;
	case SS_SVSUB:
		ev.point = SV_POINT_T3;
		ev.t_ns = ts + d[0] + to_tai;
		sv_flight_push(m->fl, &ev);
		ev.point = SV_POINT_T4;
		ev.t_ns = ts + d[1] + to_tai;
		ev.ts_src = SV_TS_USER;
		sv_flight_push(m->fl, &ev);
		break;
	case SS_SVTRACE:
		ev.ts_src = SV_TS_BPF;
		ev.t2_kind = SV_T2_NONE;
		ev.t2_ns = 0;
		ev.t_ns = ts + 40000 + to_tai; /* T1: the wire after svpub */
		if (t1) {
			ev.point = SV_POINT_T1;
			sv_flight_push(m->fl, &ev);
		}
		ev.guest = ss_guest(m, g);
		ev.point = SV_POINT_T2A;
		ev.t_ns += d[0];
		sv_flight_push(m->fl, &ev);
		ev.point = SV_POINT_T2B;
		ev.t_ns += d[1];
		sv_flight_push(m->fl, &ev);
		break;
	}
}

/* The trigger's point: the last hop's end. */
static inline uint8_t ss_trigger_point(const struct ss_sim *m)
{
	uint8_t from;

	return (uint8_t)ss_point(m, m->nhops - 1, &from);
}

static inline void ss_trigger(struct ss_sim *m, uint8_t cls, unsigned s, unsigned g, int64_t t_tai, uint32_t sec,
			      uint16_t smp, int64_t value)
{
	struct sv_flight_trigger t = { .cls = cls, .point = ss_trigger_point(m), .guest = ss_guest(m, g),
				       .stream = s, .t_ns = t_tai + ss_to_tai(m, m->mono) - m->true_to_tai,
				       .tai_sec = sec, .smp_cnt = smp, .value = value };

	sv_flight_trigger(m->fl, &t);
	m->res->triggers++;
}

/* A fault of the next class in turn on (stream, guest) at @t (TAI): its counters, then its trigger. */
static inline void ss_fault(struct ss_sim *m, int64_t t)
{
	static const uint8_t cls[] = { SV_WINDOW_LOSS, SV_WINDOW_DROP, SV_WINDOW_CHANGE, SV_WINDOW_RESTART };
	unsigned c = m->nfault % 4, s = m->nfault % m->c->streams, g = (m->nfault / 4) % ss_nguests(m);
	uint32_t sec = (uint32_t)(t / SV_NSEC_PER_SEC);
	uint16_t smp = (uint16_t)((t % SV_NSEC_PER_SEC) * m->c->rate / SV_NSEC_PER_SEC);

	for (unsigned h = 0; h < m->nhops; h++) {
		int k = m->key[s][g][h];

		switch (cls[c]) {
		case SV_WINDOW_LOSS:
			sv_interval_count(m->iv, (unsigned)k, t,
					  m->c->tool == SS_SVTRACE ? SV_INTERVAL_MISSING : SV_INTERVAL_LOST, 40);
			break;
		case SV_WINDOW_DROP:
			sv_interval_drop(m->iv, (unsigned)k, t, h ? SV_REASON_RING_OVERFLOW : SV_REASON_STALE, 3);
			break;
		case SV_WINDOW_CHANGE:
			sv_interval_count(m->iv, (unsigned)k, t, SV_INTERVAL_CHANGES, 1);
			break;
		default:
			sv_interval_count(m->iv, (unsigned)k, t, SV_INTERVAL_RESTARTS, 1);
			break;
		}
	}
	ss_trigger(m, cls[c], s, g, t, sec, smp, 40);
	m->nfault++;
}

static inline void ss_tick(struct ss_sim *m)
{
	sv_interval_tick(m->iv, m->mono);
	sv_flight_tick(m->fl, m->mono + ss_to_tai(m, m->mono));
	sv_record_tick(m->w, m->mono);
}

static inline void ss_mark(struct ss_sim *m)
{
	if (m->c->at_mark) {
		sv_record_flush(m->w);
		m->c->at_mark(m->c->ctx, m->w, ++m->marks);
	}
	m->next_mark += m->c->mark_ns ? m->c->mark_ns : 3600 * SV_NSEC_PER_SEC;
}

/* Frame by frame from @t0 to @t1 (TAI, multiples of a sample period). */
static inline void ss_run_frames(struct ss_sim *m, int64_t t0, int64_t t1)
{
	const struct ss_cfg *c = m->c;
	const int64_t period = SV_NSEC_PER_SEC / c->rate;
	int64_t next_tick = t0;

	for (int64_t ts = t0; ts < t1; ts += period) {
		uint32_t sec = (uint32_t)(ts / SV_NSEC_PER_SEC);
		uint16_t smp = (uint16_t)((ts % SV_NSEC_PER_SEC) / period);
		bool noise = c->noise_ns && ts >= m->next_noise;
		unsigned ns = m->nnoise % c->streams, ng = (m->nnoise / c->streams) % ss_nguests(m);

		m->mono = ts - m->true_to_tai + 50000; /* the frames of this sample are handled ~50 us after it */
		for (unsigned s = 0; s < c->streams; s++) {
			for (unsigned g = 0; g < ss_nguests(m); g++) {
				int64_t d[SS_HOPS];
				bool spike = noise && s == ns && g == ng;

				ss_latencies(m, spike, d);
				for (unsigned h = 0; h < m->nhops; h++) {
					struct sv_interval_frame f = {
						.t_tai_ns = ts, .latency_ns = d[h], .tai_sec = sec, .smp_cnt = smp,
						.samples = 1, .flags = d[h] > SS_LATE_NS ? SV_REC_F_LATE : 0,
						.why = spike && c->tool == SS_SVTRACE,
					};

					sv_interval_frame(m->iv, (unsigned)m->key[s][g][h], &f);
				}
				ss_push_frame(m, s, g, ts, sec, smp, d, g == 0);
				if (spike)
					ss_trigger(m, SV_WINDOW_LATENCY, s, g, ts + d[m->nhops - 1], sec, smp,
						   d[m->nhops - 1]);
			}
			m->res->frames++;
		}
		if (noise) {
			m->nnoise++;
			m->next_noise += c->noise_ns;
		}
		if (c->fault_ns && ts >= m->next_fault) {
			ss_fault(m, ts);
			m->next_fault += c->fault_ns;
		}
		if (ts >= next_tick) {
			ss_tick(m);
			next_tick += SS_TICK_NS;
		}
		if (ts + period >= m->next_mark)
			ss_mark(m);
	}
}

/* fast: one interval's latencies of each hop, drawn frame by frame once (the HIST records get the buckets a
 * frame-by-frame run gives them). */
static inline int ss_templates(struct ss_sim *m)
{
	uint64_t n = (uint64_t)m->c->rate * (uint64_t)(m->interval / SV_NSEC_PER_SEC);

	m->tmpl = calloc(SS_HOPS, sizeof(*m->tmpl));
	if (!m->tmpl)
		return -ENOMEM;
	for (unsigned h = 0; h < SS_HOPS; h++)
		sv_stats_init(&m->tmpl[h]);
	for (uint64_t i = 0; i < n; i++) {
		int64_t d[SS_HOPS];

		ss_latencies(m, false, d);
		for (unsigned h = 0; h < m->nhops; h++)
			sv_stats_add(&m->tmpl[h], d[h]);
	}
	return 0;
}

/* fast: the interval starting at @t (TAI) of every key, from the templates (each bucket's count varied by
 * a few percent, so intervals differ), at the interval's middle. */
static inline void ss_feed_interval(struct ss_sim *m, int64_t t)
{
	const struct ss_cfg *c = m->c;
	int64_t mid = t + m->interval / 2;
	uint32_t sec = (uint32_t)(mid / SV_NSEC_PER_SEC);

	for (unsigned s = 0; s < c->streams; s++)
		for (unsigned g = 0; g < ss_nguests(m); g++)
			for (unsigned h = 0; h < m->nhops; h++) {
				const struct sv_stats *tp = &m->tmpl[h];
				unsigned k = (unsigned)m->key[s][g][h];

				for (uint32_t b = 0; b < tp->top; b++) {
					uint64_t r, n = tp->bucket[b];
					int64_t lo, hi;

					if (!n)
						continue;
					r = ss_rand(&m->rng);
					if (n > 20)
						n = n - n / 20 + r % (n / 10 + 1);
					sv_stats_bucket_range(b, SV_STATS_SUB_BITS, &lo, &hi);
					struct sv_interval_frame f = {
						.t_tai_ns = mid, .latency_ns = lo + (hi - lo) / 2, .tai_sec = sec,
						.smp_cnt = (uint16_t)(r % c->rate), .samples = 1, .n = (uint32_t)n,
					};
					sv_interval_frame(m->iv, k, &f);
				}
			}
	m->res->frames += (uint64_t)c->streams * c->rate * (uint64_t)(m->interval / SV_NSEC_PER_SEC);
}

/* fast: the first sample at or after @t (TAI). */
static inline int64_t ss_sample_at(const struct ss_sim *m, int64_t t)
{
	const int64_t period = SV_NSEC_PER_SEC / m->c->rate;

	return (t + period - 1) / period * period;
}

/* fast: a span of per-frame records of one (stream, guest) around a trigger: what its window keeps. */
static inline void ss_span_add(struct ss_sim *m, unsigned s, unsigned g, int64_t t_trig, bool spike)
{
	const struct ss_cfg *c = m->c;
	int64_t pre = c->flight.pre_ns ? c->flight.pre_ns : SV_FLIGHT_PRE_NS_DEFAULT;
	int64_t post = c->flight.post_ns ? c->flight.post_ns : pre;
	int64_t from = t_trig - pre - pre / 4, to = t_trig + post + SV_FLIGHT_SETTLE_NS_DEFAULT;
	struct ss_span *free_sp = NULL;

	for (unsigned i = 0; i < SS_SPANS; i++) {
		struct ss_span *sp = &m->span[i];

		if (sp->to > from && sp->stream == s && sp->guest == g) {
			/* the same key's span still going: longer, not twice */
			if (to > sp->to)
				sp->to = to;
			if (spike)
				sp->spike = ss_sample_at(m, t_trig);
			return;
		}
		if (sp->to <= from && !free_sp)
			free_sp = sp;
	}
	if (free_sp)
		*free_sp = (struct ss_span){ .stream = s, .guest = g, .from = from, .to = to,
					     .spike = spike ? ss_sample_at(m, t_trig) : INT64_MIN };
}

/* Interval by interval from @t0 to @t1 (TAI, multiples of SS_TICK_NS), ticking every SS_TICK_NS. */
static inline void ss_run_fast(struct ss_sim *m, int64_t t0, int64_t t1)
{
	const struct ss_cfg *c = m->c;
	const int64_t period = SV_NSEC_PER_SEC / c->rate;
	int64_t pre = c->flight.pre_ns ? c->flight.pre_ns : SV_FLIGHT_PRE_NS_DEFAULT;
	int64_t lead = pre + pre / 4 + SS_TICK_NS;
	int64_t dnoise = m->next_noise, dfault = m->next_fault;
	unsigned nn = m->nnoise, nf = m->nfault;

	for (int64_t t = t0; t < t1; t += SS_TICK_NS) {
		m->mono = t - m->true_to_tai;
		if (t % m->interval == 0 || t == t0)
			ss_feed_interval(m, t - t % m->interval);
		/* the spans of the triggers to come, opened their pre time ahead */
		while (c->noise_ns && dnoise - lead < t + SS_TICK_NS) {
			ss_span_add(m, nn % c->streams, (nn / c->streams) % ss_nguests(m), dnoise, true);
			nn++;
			dnoise += c->noise_ns;
		}
		while (c->fault_ns && dfault - lead < t + SS_TICK_NS) {
			ss_span_add(m, nf % c->streams, (nf / 4) % ss_nguests(m), dfault, false);
			nf++;
			dfault += c->fault_ns;
		}
		for (unsigned i = 0; i < SS_SPANS; i++) {
			struct ss_span *sp = &m->span[i];
			int64_t ts = sp->from > t ? ss_sample_at(m, sp->from) : t;

			for (; ts < t + SS_TICK_NS && ts < sp->to; ts += period) {
				int64_t d[SS_HOPS];

				ss_latencies(m, ts == sp->spike, d);
				ss_push_frame(m, sp->stream, sp->guest, ts, (uint32_t)(ts / SV_NSEC_PER_SEC),
					      (uint16_t)((ts % SV_NSEC_PER_SEC) / period), d, true);
			}
		}
		/* the triggers of this tick: the late frame's entry (besides its interval's template), the faults */
		while (c->noise_ns && m->next_noise < t + SS_TICK_NS) {
			int64_t ts = ss_sample_at(m, m->next_noise), d[SS_HOPS];
			unsigned s = m->nnoise % c->streams, g = (m->nnoise / c->streams) % ss_nguests(m);
			uint32_t sec = (uint32_t)(ts / SV_NSEC_PER_SEC);
			uint16_t smp = (uint16_t)((ts % SV_NSEC_PER_SEC) / period);

			ss_latencies(m, true, d);
			for (unsigned h = 0; h < m->nhops; h++) {
				struct sv_interval_frame f = { .t_tai_ns = ts, .latency_ns = d[h], .tai_sec = sec,
							       .smp_cnt = smp, .samples = 1, .flags = SV_REC_F_LATE,
							       .why = c->tool == SS_SVTRACE };

				sv_interval_frame(m->iv, (unsigned)m->key[s][g][h], &f);
			}
			ss_trigger(m, SV_WINDOW_LATENCY, s, g, ts + d[m->nhops - 1], sec, smp, d[m->nhops - 1]);
			m->nnoise++;
			m->next_noise += c->noise_ns;
		}
		while (c->fault_ns && m->next_fault < t + SS_TICK_NS) {
			ss_fault(m, ss_sample_at(m, m->next_fault));
			m->next_fault += c->fault_ns;
		}
		ss_tick(m);
		if (t + SS_TICK_NS >= m->next_mark)
			ss_mark(m);
	}
}

static inline int ss_open(struct ss_sim *m, const struct ss_cfg *c, struct ss_result *res)
{
	struct sv_clock_sync sync = { .tai_offset_s = 37, .maxerror_ns = 1000 };
	struct sv_record_writer_cfg wc = {
		.path = c->path, .tool = c->tool == SS_SVPUB ? "svpub" : c->tool == SS_SVSUB ? "svsub" : "svtrace",
		.tool_version = "sim", .clock = SV_CLOCK_TAI, .sync = &sync, .host = c->host ? c->host : "simhost",
		.rotate_bytes = c->rotate_bytes, .rotate_keep = c->keep ? c->keep : SV_REC_KEEP_ALL,
		.flush_ns = SV_NSEC_PER_SEC,
		.now = ss_writer_now, .now_ctx = m,
	};
	struct sv_interval_cfg ic = {
		.interval_ns = c->interval_ns, .tick_clock = CLOCK_MONOTONIC, .tick_clock_id = SV_CLOCK_MONOTONIC,
		.measure = ss_measure, .measure_ctx = m,
	};
	struct sv_flight_cfg fc = c->flight;
	unsigned per_frame = c->tool == SS_SVPUB ? 1 : c->tool == SS_SVSUB ? 2 : 1 + 2 * c->guests;
	int err;

	memset(m, 0, sizeof(*m));
	memset(res, 0, sizeof(*res));
	if (!c->streams || c->streams > SS_MAX_STREAMS || !c->guests || c->guests > SS_MAX_GUESTS || !c->rate ||
	    SV_NSEC_PER_SEC % c->rate)
		return -EINVAL;
	m->c = c;
	m->res = res;
	m->rng = 0x9e3779b97f4a7c15ULL ^ ((uint64_t)c->tool << 32) ^ (uint64_t)c->start_ns;
	m->true_to_tai = SS_SEC0 * SV_NSEC_PER_SEC - SS_MONO0;
	m->step_mono = c->step_at_ns ? SS_MONO0 + c->step_at_ns : INT64_MIN;
	m->mono = SS_MONO0 + c->start_ns;
	m->interval = c->interval_ns ? c->interval_ns : SV_INTERVAL_NS_DEFAULT;
	m->next_mark = SS_SEC0 * SV_NSEC_PER_SEC + c->start_ns + (c->mark_ns ? c->mark_ns : 3600 * SV_NSEC_PER_SEC);
	m->nhops = c->tool == SS_SVPUB ? 1 : c->tool == SS_SVSUB ? 2 : 3;
	/* the schedule is the soak's, whatever part of it this run covers */
	m->next_noise = SS_SEC0 * SV_NSEC_PER_SEC + (c->noise_ns ? (c->start_ns / c->noise_ns + 1) * c->noise_ns
								  : 0) + 1234567;
	m->nnoise = c->noise_ns ? (unsigned)(c->start_ns / c->noise_ns + 1) : 0;
	m->next_fault = SS_SEC0 * SV_NSEC_PER_SEC + (c->fault_ns ? (c->start_ns / c->fault_ns + 1) * c->fault_ns
								  : 0) + 7654321;
	m->nfault = c->fault_ns ? (unsigned)(c->start_ns / c->fault_ns + 1) : 0;
	err = sv_record_writer_open(&m->w, &wc);
	if (err)
		return err;
	for (unsigned s = 0; s < c->streams && !err; s++) {
		struct sv_rec_stream st = { .stream = s, .appid = (uint16_t)(0x4000 + s), .asdus = 1,
					    .sample_rate = c->rate, .conf_rev = 1, .vlan = 0xFFFF, .smp_synch = 2,
					    .smp_wrap = c->rate };

		snprintf(st.svid, sizeof(st.svid), "SIMMU%02u", s + 1);
		err = sv_record_define_stream(m->w, &st);
	}
	if (c->tool == SS_SVTRACE)
		for (unsigned g = 0; g < c->guests && !err; g++) {
			struct sv_rec_name n = { .name_kind = SV_REC_NAME_GUEST, .id = g + 1 };

			snprintf(n.name, sizeof(n.name), "vnet%u", g);
			err = sv_record_define_name(m->w, &n);
		}
	ic.w = m->w;
	ic.max_keys = c->streams * ss_nguests(m) * m->nhops;
	if (!err)
		err = sv_interval_open(&m->iv, &ic, m->mono);
	for (unsigned s = 0; s < c->streams && !err; s++)
		for (unsigned g = 0; g < ss_nguests(m); g++)
			for (unsigned h = 0; h < m->nhops; h++) {
				struct sv_interval_key k = { .stream = s, .guest = ss_guest(m, g) };

				k.point = (uint8_t)ss_point(m, h, &k.from_point);
				m->key[s][g][h] = sv_interval_key_add(m->iv, &k);
				if (m->key[s][g][h] < 0)
					err = m->key[s][g][h];
			}
	fc.w = m->w;
	fc.events_per_s = c->rate * c->streams * per_frame;
	/* a window keeps one stream and guest: svtrace's T1, T2a, T2b; svsub's T3, T4; svpub's T0 */
	if (!fc.key_events_per_s)
		fc.key_events_per_s = c->rate * (c->tool == SS_SVTRACE ? 3 : per_frame);
	if (!err)
		err = sv_flight_open(&m->fl, &fc);
	if (!err)
		err = ss_templates(m);
	return err;
}

/* Runs the configured soak part; returns 0 or -errno, the counts in *res. With c->crash the process is left
 * as a killed tool leaves it (the caller then _exit()s): the file has no END. */
static inline int ss_run(const struct ss_cfg *c, struct ss_result *res)
{
	struct ss_sim m;
	int64_t t0 = SS_SEC0 * SV_NSEC_PER_SEC + c->start_ns;
	int err = ss_open(&m, c, res), e;

	if (!err) {
		ss_run_frames(&m, t0, t0 + c->frames_ns);
		ss_run_fast(&m, t0 + c->frames_ns, t0 + c->frames_ns + c->fast_ns);
		m.mono = t0 + c->frames_ns + c->fast_ns - m.true_to_tai;
	}
	if (c->crash && !err) {
		sv_record_flush(m.w); /* what a flush period had written before the kill */
		return 0;
	}
	if (m.iv) {
		e = sv_interval_close(m.iv, m.mono, &res->iv);
		err = err ? err : e;
	}
	if (m.fl) {
		e = sv_flight_close(m.fl, m.mono + ss_to_tai(&m, m.mono), &res->fl);
		err = err ? err : e;
	}
	if (m.w && c->at_mark)
		c->at_mark(c->ctx, m.w, 0);
	if (m.w) {
		e = sv_record_writer_close_stats(m.w, &res->rec);
		err = err ? err : e;
	}
	free(m.tmpl);
	return err;
}

#endif /* SV_SOAK_SIM_H */

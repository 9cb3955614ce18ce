// SPDX-License-Identifier: Apache-2.0
#include "svsub_rec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sv_clock.h"
#include "sv_dataset.h"
#include "sv_mem.h"
#include "sv_metrics.h"

/* Soak: what a stream's interval entries were last taken from (the tracker's cumulative counters). */
struct soak_stream {
	int key[2];		/* T3, T4 interval keys + 1; 0: not declared yet, -1: no room */
	bool seen;
	uint16_t flags;		/* SV_REC_F_SIMULATION | SV_REC_F_QUALITY of the last sample */
	uint64_t frames, samples, lost, duplicate, reordered, resets, confrev, outliers;
};

struct svsub_rec {
	struct sv_record_writer *w;
	struct svsub_rec_cfg cfg;
	struct sv_soak soak;		/* soak mode: soak.iv set */
	struct soak_stream *ss;		/* SV_REC_MAX_STREAMS */
	/* what the record file's stream table says, to (re)define a stream when it changes */
	uint32_t defined_confrev[SV_REC_MAX_STREAMS];
	uint32_t defined_rate[SV_REC_MAX_STREAMS];
	uint8_t defined[SV_REC_MAX_STREAMS];
	int64_t next_metrics_ns; /* cfg.metrics: the next copy of the writer's counters */
};

int svsub_rec_open(struct svsub_rec **out, const struct svsub_rec_cfg *cfg)
{
	struct sv_record_writer_cfg wc = {
		.path = cfg->path,
		.tool = "svsub",
		.clock = cfg->clock,
		.host = cfg->host,
	};
	struct svsub_rec *r;
	int err;

	err = sv_record_cfg_opts(&wc, &cfg->opts);
	if (err)
		return err;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->cfg = *cfg;
	err = sv_record_writer_open(&r->w, &wc);
	if (err)
		goto out_free;
	if (cfg->soak && cfg->soak->on) {
		unsigned streams = cfg->max_streams && cfg->max_streams < SVSUB_REC_SOAK_STREAMS ? cfg->max_streams
											   : SVSUB_REC_SOAK_STREAMS;
		unsigned points = cfg->app_points ? 2 : 1;
		struct sv_soak_cfg sc = {
			.w = r->w, .o = cfg->soak, .max_keys = streams * points,
			/* a 9-2LE stream at 80 samples a cycle of 50 Hz, each sample at its points */
			.key_events_per_s = 4000 * points,
		};
		size_t mem = 0;

		r->ss = sv_calloc_prefaulted(SV_REC_MAX_STREAMS, sizeof(*r->ss), &mem);
		if (!r->ss) {
			err = -ENOMEM;
			goto out_writer;
		}
		err = sv_soak_open(&r->soak, &sc, sv_clock_gettime_ns(CLOCK_MONOTONIC));
		if (err)
			goto out_writer;
	}
	*out = r;
	return 0;

out_writer:
	sv_record_writer_close(r->w);
	free(r->ss);
out_free:
	free(r);
	return err;
}

/* Soak: the stream's interval keys, when it is first seen (not per packet: once a stream). */
static void soak_keys(struct svsub_rec *r, unsigned idx, struct soak_stream *ss)
{
	static const uint8_t points[2] = { SV_POINT_T3, SV_POINT_T4 };

	for (unsigned p = 0; p < (r->cfg.app_points ? 2u : 1u); p++) {
		struct sv_interval_key k = { .stream = idx, .from_point = SV_POINT_TS, .point = points[p],
					     .guest = SV_REC_GUEST_NONE };
		int key = sv_interval_key_add(r->soak.iv, &k);

		ss->key[p] = key < 0 ? -1 : key + 1;
	}
}

static uint64_t soak_up(uint64_t now, uint64_t *last)
{
	uint64_t d = now > *last ? now - *last : 0; /* the tracker's take-backs: the interval keeps its count */

	*last = now;
	return d;
}

static void soak_trigger(struct svsub_rec *r, const struct sv_rec_event *ev, uint8_t cls, int64_t value)
{
	struct sv_flight_trigger t = { .cls = cls, .point = SV_POINT_T3, .guest = SV_REC_GUEST_NONE,
				       .stream = ev->stream, .t_ns = ev->t_ns, .tai_sec = ev->tai_sec,
				       .smp_cnt = ev->smp_cnt, .value = value };

	sv_flight_trigger(r->soak.fl, &t); /* a window not kept is counted by the recorder */
}

/*
 * Soak: one sample (its T3 event @ev, the ring has it): its entries in the intervals of its stream's keys, and
 * the triggers. @t_app_ns: T4 (0: none). Per packet: counter compares, no allocation.
 */
static void soak_sample(struct svsub_rec *r, const struct svsub_stream_stats *s, const struct sv_rec_event *ev,
			const struct svsub_sample_result *res, int64_t t_app_ns)
{
	struct soak_stream *ss = &r->ss[ev->stream];
	struct sv_interval *iv = r->soak.iv;
	int64_t t = ev->t2_kind == SV_T2_SAMPLE ? ev->t2_ns : ev->t_ns; /* the sample's interval */
	uint64_t frames = soak_up(s->c.frames, &ss->frames), samples = soak_up(s->c.samples, &ss->samples);
	uint64_t lost = soak_up(s->c.lost, &ss->lost), dup = soak_up(s->c.duplicate, &ss->duplicate);
	uint64_t reo = soak_up(s->c.reordered, &ss->reordered), resets = soak_up(s->resets, &ss->resets);
	uint64_t confrev = soak_up(s->confrev_changes, &ss->confrev);
	uint64_t outliers = soak_up(s->latency_outliers, &ss->outliers);
	uint16_t flags = ev->flags & (SV_REC_F_SIMULATION | SV_REC_F_QUALITY);
	bool change = confrev || (ss->seen && flags != ss->flags);
	bool late = (res->has_latency && res->latency_ns > r->soak.late_ns) || outliers;

	ss->seen = true;
	ss->flags = flags;
	if (!ss->key[0])
		soak_keys(r, ev->stream, ss);
	if (ss->key[0] < 0) {
		r->soak.unkeyed++;
	} else if (frames || samples) { /* not a PRP copy the tracker discarded */
		unsigned k = (unsigned)ss->key[0] - 1;
		struct sv_interval_frame f = {
			.t_tai_ns = t, .latency_ns = res->has_latency ? res->latency_ns : SV_INTERVAL_NO_LATENCY,
			.tai_sec = ev->tai_sec, .smp_cnt = ev->smp_cnt, .samples = (uint32_t)samples,
			.same_frame = !frames,
			.flags = (uint16_t)((late ? SV_REC_F_LATE : 0) | (dup ? SV_REC_F_DUPLICATE : 0) |
					    (reo ? SV_REC_F_REORDERED : 0)),
		};

		sv_interval_frame(iv, k, &f);
		if (lost)
			sv_interval_count(iv, k, t, SV_INTERVAL_LOST, lost);
		if (resets)
			sv_interval_count(iv, k, t, SV_INTERVAL_RESTARTS, resets);
		if (change)
			sv_interval_count(iv, k, t, SV_INTERVAL_CHANGES, 1);
		if (outliers)
			sv_interval_count(iv, k, t, SV_INTERVAL_OUTLIERS, outliers);
		if (t_app_ns && ss->key[1] > 0) {
			f.latency_ns = res->has_latency ? t_app_ns - (ev->t_ns - res->latency_ns) : SV_INTERVAL_NO_LATENCY;
			f.flags = 0;
			sv_interval_frame(iv, (unsigned)ss->key[1] - 1, &f);
		}
	}
	if (late)
		soak_trigger(r, ev, SV_WINDOW_LATENCY, res->has_latency ? res->latency_ns : s->latency_outlier_max);
	if (lost)
		soak_trigger(r, ev, SV_WINDOW_LOSS, (int64_t)lost);
	if (change)
		soak_trigger(r, ev, SV_WINDOW_CHANGE, confrev ? (int64_t)s->confRev : (int64_t)flags);
	if (resets)
		soak_trigger(r, ev, SV_WINDOW_RESTART, ev->smp_cnt);
}

/* The rate the stream's samples are timed with: stated, else (9-2LE states none) the wrap only for a
 * globally synchronised stream; 0 unknown. */
static uint32_t rec_rate(const struct svsub_stream_stats *s, const struct sv_asdu *a)
{
	return s->rate || a->smpSynch == SV_SMPSYNCH_GLOBAL ? svsub_stream_rate(s) : 0;
}

static void define_stream(struct svsub_rec *r, unsigned idx, const struct svsub_stream_stats *s,
			 const struct sv_view *v, const struct sv_asdu *a, uint32_t rate)
{
	struct sv_rec_stream d;

	memset(&d, 0, sizeof(d));
	d.stream = idx;
	d.appid = s->appid;
	d.asdus = v->noASDU;
	d.sample_rate = rate;
	d.conf_rev = a->confRev;
	d.vlan = v->vlan ? v->vlan_id : 0xFFFF;
	d.smp_synch = a->smpSynch;
	d.svid_len = (uint8_t)s->svID_len;
	memcpy(d.dst_mac, v->dst, 6);
	d.flags = v->simulated ? SV_REC_F_SIMULATION : 0;
	memcpy(d.svid, s->svID, s->svID_len);
	d.smp_wrap = s->wrap;
	r->defined[idx] = 1;
	r->defined_confrev[idx] = a->confRev;
	r->defined_rate[idx] = rate;
	sv_record_define_stream(r->w, &d); /* a failed write is counted by the writer */
}

void svsub_rec_frame(struct svsub_rec *r, struct svsub_tracker *t, const struct sv_view *v,
		     const struct svsub_sample_result *res, int64_t t_rx_ns, uint8_t ts_src, int64_t t_app_ns)
{
	struct sv_rec_event ev;

	memset(&ev, 0, sizeof(ev));
	if (!ts_src)
		ts_src = r->cfg.rx_ts_src;
	ev.ifindex = r->cfg.ifindex;
	ev.guest = SV_REC_GUEST_NONE;
	ev.nasdu = (uint8_t)(v->noASDU > 255 ? 255 : v->noASDU);
	ev.frame_len = (uint16_t)(v->frame_len > 0xffff ? 0xffff : v->frame_len);
	for (unsigned i = 0; i < v->noASDU; i++) {
		const struct sv_asdu *a = &v->asdu[i];
		const struct svsub_stream_stats *s;
		struct sv_sample_time st;
		uint32_t q, rate;
		int64_t ts;

		if (res[i].stream < 0 || res[i].stream >= SV_REC_MAX_STREAMS)
			continue;
		s = svsub_track_stream(t, (unsigned)res[i].stream);
		if (!s)
			continue;
		rate = rec_rate(s, a);
		if (!r->defined[res[i].stream] || r->defined_confrev[res[i].stream] != a->confRev ||
		    r->defined_rate[res[i].stream] != rate)
			define_stream(r, (unsigned)res[i].stream, s, v, a, rate);
		/* the tracker's OR of the dataset's Quality members: 0 when the data is not read (an
		 * undeclared dataset of another length than 9-2LE's: nothing is claimed about it) */
		q = res[i].quality;
		ev.stream = (uint32_t)res[i].stream;
		ev.smp_cnt = a->smpCnt;
		ev.asdu = (uint8_t)(i > 255 ? 255 : i);
		ev.quality = q;
		ev.flags = (uint16_t)((v->simulated ? SV_REC_F_SIMULATION : 0) |
				      (sv_quality_validity(q) != SV_VALIDITY_GOOD ? SV_REC_F_QUALITY : 0));
		/*
		 * The join key: the sample's own second. On a synchronised stream it follows from smpCnt even
		 * when the tracker refused the latency (host clock flagged unsynchronised, or out of its sanity
		 * range): svreport judges the clocks itself, it needs the key.
		 */
		if (res[i].has_latency) {
			ts = t_rx_ns - res[i].latency_ns;
			ev.tai_sec = (uint32_t)(ts / SV_NSEC_PER_SEC);
			ev.t2_ns = ts;
			ev.t2_kind = SV_T2_SAMPLE;
		} else if (a->smpSynch == SV_SMPSYNCH_GLOBAL && rate && a->smpCnt < rate &&
			   sv_sample_align(t_rx_ns, a->smpCnt, rate, SV_SAMPLE_AHEAD_NS_DEFAULT, &st) == 0) {
			ev.tai_sec = (uint32_t)st.tai_sec;
			ev.t2_ns = st.t_sample_ns;
			ev.t2_kind = SV_T2_SAMPLE;
		} else {
			ev.tai_sec = (uint32_t)(t_rx_ns / SV_NSEC_PER_SEC);
			ev.t2_ns = 0;
			ev.t2_kind = SV_T2_NONE;
			ev.flags |= SV_REC_F_NOT_SYNCED;
		}
		ev.point = SV_POINT_T3;
		ev.t_ns = t_rx_ns;
		ev.ts_src = ts_src;
		/* T4: only the samples the application got (svapp_frame delivers the accepted ones) */
		bool t4 = r->cfg.app_points && t_app_ns && svsub_sample_accepted(res[i].verdict);

		if (r->ss) { /* soak: into the ring and the intervals, not the file */
			sv_flight_push(r->soak.fl, &ev);
			soak_sample(r, s, &ev, &res[i], t4 ? t_app_ns : 0);
			if (t4) {
				ev.point = SV_POINT_T4;
				ev.t_ns = t_app_ns;
				ev.ts_src = SV_TS_USER;
				sv_flight_push(r->soak.fl, &ev);
			}
			continue;
		}
		/* a block that cannot be written is counted by the writer (sv_record.h "Full disk") */
		sv_record_write_event(r->w, &ev);
		if (t4) {
			ev.point = SV_POINT_T4;
			ev.t_ns = t_app_ns;
			ev.ts_src = SV_TS_USER;
			sv_record_write_event(r->w, &ev);
		}
	}
}

void svsub_rec_tick(struct svsub_rec *r, int64_t now_ns)
{
	if (!r)
		return;
	if (r->ss)
		sv_soak_tick(&r->soak, now_ns); /* a writer error is counted by the writer */
	sv_record_tick(r->w, now_ns);
	if (r->cfg.metrics && now_ns >= r->next_metrics_ns) {
		sv_metrics_health_record(r->cfg.metrics, r->w);
		r->next_metrics_ns = now_ns + SV_NSEC_PER_SEC;
	}
}

int svsub_rec_close(struct svsub_rec *r, struct sv_record_writer_stats *st)
{
	struct sv_record_writer_stats s;
	int err;

	if (!r) {
		if (st)
			memset(st, 0, sizeof(*st));
		return 0;
	}
	if (r->ss) /* the open intervals (flag LAST) and windows (TRUNCATED) before the END */
		sv_soak_close(&r->soak, sv_clock_gettime_ns(CLOCK_MONOTONIC), r->cfg.soak_stats);
	free(r->ss);
	err = sv_record_writer_close_stats(r->w, &s);
	sv_metrics_health_record_stats(r->cfg.metrics, &s);
	if (!err && sv_record_stats_incomplete(&s))
		err = -EIO;
	if (st)
		*st = s;
	free(r);
	return err;
}

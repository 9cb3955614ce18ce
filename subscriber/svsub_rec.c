// SPDX-License-Identifier: Apache-2.0
#include "svsub_rec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sv_dataset.h"
#include "sv_metrics.h"

struct svsub_rec {
	struct sv_record_writer *w;
	struct svsub_rec_cfg cfg;
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
	if (err) {
		free(r);
		return err;
	}
	*out = r;
	return 0;
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
		/* a block that cannot be written is counted by the writer (sv_record.h "Full disk") */
		sv_record_write_event(r->w, &ev);
		/* T4: only the samples the application got (svapp_frame delivers the accepted ones) */
		if (r->cfg.app_points && t_app_ns && svsub_sample_accepted(res[i].verdict)) {
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
	err = sv_record_writer_close_stats(r->w, &s);
	sv_metrics_health_record_stats(r->cfg.metrics, &s);
	if (!err && sv_record_stats_incomplete(&s))
		err = -EIO;
	if (st)
		*st = s;
	free(r);
	return err;
}

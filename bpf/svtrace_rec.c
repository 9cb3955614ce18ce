// SPDX-License-Identifier: Apache-2.0
/* svtrace's records: see svtrace_rec.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sv_metrics.h"
#include "svtrace_ports.h"
#include "svtrace_rec.h"
#include "svtrace_sys.h"

struct svtrace_rec {
	struct sv_record_writer *w;
	const struct svtrace_ports *ports;
	struct svtrace_corr *corr;
	struct sv_clock_xlate to_tai;	/* CLOCK_MONOTONIC (BPF's clock) -> TAI */
	uint64_t refused;		/* records the writer refused (invalid: a bug); a full disk is the writer's count */
	uint32_t reasons_named[32];	/* drop reasons given a NAME record (first 32) */
	unsigned nreasons_named;
};

void svtrace_rec_stream(struct svtrace_rec *r, unsigned corr, uint16_t vlan_tci, uint32_t rate)
{
	struct sv_rec_stream s = { .stream = corr, .vlan = 0xFFFF, .asdus = 0 };
	const uint8_t *svid;
	size_t len;
	uint16_t appid;

	if (!r || svtrace_corr_stream(r->corr, corr, &appid, &svid, &len, NULL) || !len)
		return;
	s.appid = appid;
	s.svid_len = (uint8_t)len;
	memcpy(s.svid, svid, len);
	if (vlan_tci)
		s.vlan = vlan_tci & 0x0FFF;
	/* A learned wrap is the rate of a synchronised stream (smpCnt counts samples in the second). */
	s.sample_rate = rate;
	s.smp_wrap = rate;
	if (sv_record_define_stream(r->w, &s) == -EINVAL)
		r->refused++;
}

static void rec_point(struct svtrace_rec *r, unsigned corr, unsigned point, uint64_t t_mono, int64_t tai_sec,
		      uint16_t smp, uint32_t ifindex, uint32_t netns, unsigned guest, unsigned flags, uint32_t reason,
		      uint32_t cpu, uint32_t tid)
{
	struct sv_rec_event ev = {
		.point = (uint8_t)point, .stream = corr,
		.t_ns = sv_clock_xlate_apply(&r->to_tai, (int64_t)t_mono), .tai_sec = (uint32_t)tai_sec,
		.smp_cnt = smp, .ts_src = SV_TS_BPF, .ifindex = ifindex, .netns = netns,
		.guest = (uint16_t)guest, .flags = (uint16_t)flags, .reason = (uint16_t)reason,
		.cpu = (uint16_t)cpu, .tid = tid, .seq = 0,
	};

	if (sv_record_write_event(r->w, &ev) == -EINVAL)
		r->refused++;
}

/* A NAME record (SV_REC_NAME_DROP_REASON) the first time a drop reason is written: the kernel's numbering
 * changes between kernels; svkit's own reasons are named by sv_rec_reason_name(). */
static void rec_reason_name(struct svtrace_rec *r, uint32_t reason, const char *name)
{
	struct sv_rec_name n = { .name_kind = SV_REC_NAME_DROP_REASON, .id = reason };

	for (unsigned i = 0; i < r->nreasons_named; i++)
		if (r->reasons_named[i] == reason)
			return;
	if (r->nreasons_named >= sizeof(r->reasons_named) / sizeof(r->reasons_named[0]))
		return;
	r->reasons_named[r->nreasons_named++] = reason;
	snprintf(n.name, sizeof(n.name), "%s", name);
	if (sv_record_define_name(r->w, &n) == -EINVAL)
		r->refused++;
}

static void rec_drop(struct svtrace_rec *r, unsigned corr, unsigned point, const struct svtrace_copy *e,
		     int64_t tai_sec)
{
	const char *name = svtrace_drop_reason_name(e->reason);
	struct sv_rec_drop d = {
		.point = (uint8_t)point, .stream = corr,
		.t_ns = sv_clock_xlate_apply(&r->to_tai, (int64_t)e->t2b_ns), .tai_sec = (uint32_t)tai_sec,
		.smp_cnt = e->smpcnt, .reason = (uint16_t)e->reason, .ifindex = e->ifindex2b,
		.netns = e->netns2b, .guest = e->port, .cpu = e->cpu2b, .tid = e->tid2b,
	};

	snprintf(d.reason_name, sizeof(d.reason_name), "%s", name ? name : "unknown");
	rec_reason_name(r, e->reason, d.reason_name);
	if (sv_record_write_drop(r->w, &d) == -EINVAL)
		r->refused++;
}

/*
 * A frame seen upstream (T1, or T2a) and never at @point of port @p (svtrace's "missing", not a drop: no
 * DROP record): an EVENT at that point and port flagged DROPPED with reason SV_REASON_MISSING (svreport
 * counts it as loss there, not as a drop). t_ns is the last time the frame was seen (@t_mono: its T1, or
 * its T2a), ts_src none: no timestamp was taken at @point.
 */
static void rec_missing(struct svtrace_rec *r, unsigned corr, unsigned point, unsigned p, uint64_t t_mono,
			int64_t tai_sec, uint16_t smp)
{
	int64_t t_ns = sv_clock_xlate_apply(&r->to_tai, (int64_t)t_mono);
	struct sv_rec_event ev = {
		.point = (uint8_t)point, .stream = corr, .t_ns = t_ns, .tai_sec = (uint32_t)tai_sec,
		.smp_cnt = smp, .ts_src = SV_TS_NONE, .ifindex = r->ports->port[p].ifindex,
		.netns = r->ports->port[p].netns_ino, .guest = (uint16_t)p, .flags = SV_REC_F_DROPPED,
		.reason = (uint16_t)SV_REASON_MISSING,
	};

	rec_reason_name(r, SV_REASON_MISSING, sv_rec_reason_name(SV_REASON_MISSING));
	if (sv_record_write_event(r->w, &ev) == -EINVAL)
		r->refused++;
}

/*
 * The whole run as one period (tai_sec: the run's first TAI second, period_ms: its length), also for a
 * port that saw nothing (frames 0, lost = frames seen upstream and never there). lost = missing, dropped
 * = dropped with a reason; unwanted copies and copies in flight at the stop are in neither.
 * count/percentiles: the hop's latency.
 */
void svtrace_rec_summaries(struct svtrace_rec *r, int64_t start_mono_ns, int64_t now_mono_ns)
{
	static const uint8_t from[SVTRACE_HOP_NR] = { SV_POINT_T1, SV_POINT_T2A, SV_POINT_T1 };
	static const uint8_t to[SVTRACE_HOP_NR] = { SV_POINT_T2A, SV_POINT_T2B, SV_POINT_T2B };
	int64_t start, ms = (now_mono_ns - start_mono_ns + SV_NSEC_PER_MSEC - 1) / SV_NSEC_PER_MSEC;

	if (!r)
		return;
	start = sv_clock_xlate_apply(&r->to_tai, start_mono_ns);
	for (unsigned i = 0; i < svtrace_corr_nstreams(r->corr); i++) {
		for (unsigned p = 1; p <= r->ports->n; p++) {
			for (unsigned h = 0; h < SVTRACE_HOP_NR; h++) {
				const struct svtrace_hop_stats *hs = svtrace_corr_stream_hop(r->corr, i, p, h);
				struct sv_rec_summary s = {
					.point = to[h], .stream = i, .from_point = from[h], .guest = (uint16_t)p,
					.tai_sec = (uint32_t)sv_ns_to_sec_floor(start),
					.period_ms = ms > UINT32_MAX ? UINT32_MAX : ms < 1 ? 1 : (uint32_t)ms,
				};

				if (!hs)
					continue;
				sv_rec_summary_fill(&s, &hs->lat);
				s.frames = hs->frames;
				s.lost = hs->missing;
				s.dropped = hs->dropped;
				if (sv_record_write_summary(r->w, &s) == -EINVAL)
					r->refused++;
			}
		}
	}
}

/* The join key: the SAMPLE's second (the frame seen at 00.0001 may carry a sample of the second before),
 * from smpCnt and the stream's rate (sv_sample_align); the frame's first stamp @t_ref's second when the
 * rate is not known. */
static int64_t sample_sec(const struct svtrace_rec *r, uint64_t t_ref, uint16_t smpcnt, uint32_t rate)
{
	struct sv_sample_time st;
	int64_t t = sv_clock_xlate_apply(&r->to_tai, (int64_t)t_ref);

	return sv_sample_align(t, smpcnt, rate, SV_SAMPLE_AHEAD_NS_DEFAULT, &st) ? sv_ns_to_sec_floor(t) : st.tai_sec;
}

void svtrace_rec_why(struct svtrace_rec *r, uint32_t rate, uint64_t t_ref, const struct sv_rec_why *h, unsigned n)
{
	struct sv_rec_why y;

	if (!r)
		return;
	for (unsigned i = 0; i < n; i++) {
		y = h[i];
		y.t_from_ns = sv_clock_xlate_apply(&r->to_tai, h[i].t_from_ns);
		/* the hop's length as measured (one translation: the causes still add up to it) */
		y.t_to_ns = y.t_from_ns + (h[i].t_to_ns - h[i].t_from_ns);
		y.tai_sec = (uint32_t)sample_sec(r, t_ref, h[i].smp_cnt, rate);
		if (sv_record_write_why(r->w, &y) == -EINVAL)
			r->refused++;
	}
}

void svtrace_rec_copy(struct svtrace_rec *r, unsigned corr, uint32_t rate, const struct svtrace_copy *e,
		      enum svtrace_copy_outcome oc)
{
	const struct svtrace_port *port = r ? r->ports->port : NULL;
	uint64_t t_ref = e->t1_ns ? e->t1_ns : e->t2a_ns ? e->t2a_ns : e->t2b_ns;
	int64_t tai_sec;
	uint32_t p = e->port;

	if (!r)
		return;
	tai_sec = sample_sec(r, t_ref, e->smpcnt, rate);
	if (e->t1_ns && (e->flags & SVTRACE_F_T1_FIRST))
		rec_point(r, corr, SV_POINT_T1, e->t1_ns, tai_sec, e->smpcnt, port[0].ifindex, port[0].netns_ino,
			  SV_REC_GUEST_NONE, 0, 0, e->cpu1, e->tid1);
	if (oc == SVTRACE_COPY_MISSING_T2A) {
		/* one event, a mask of ports (e->reason) */
		for (unsigned q = 1; q <= r->ports->n; q++)
			if (e->reason & (1u << q))
				rec_missing(r, corr, SV_POINT_T2A, q, e->t1_ns, tai_sec, e->smpcnt);
		return;
	}
	if (p < 1 || p > r->ports->n)
		return;
	if (e->t2a_ns)
		rec_point(r, corr, SV_POINT_T2A, e->t2a_ns, tai_sec, e->smpcnt, port[p].ifindex, port[p].netns_ino,
			  p, 0, 0, e->cpu2a, e->tid2a);
	switch (oc) {
	case SVTRACE_COPY_TAKEN:
	case SVTRACE_COPY_UNWANTED:
		rec_point(r, corr, SV_POINT_T2B, e->t2b_ns, tai_sec, e->smpcnt, e->ifindex2b, e->netns2b, p,
			  e->flags & SVTRACE_F_LATE ? SV_REC_F_LATE : 0, 0, e->cpu2b, e->tid2b);
		break;
	case SVTRACE_COPY_MISSING_T2B:
		rec_missing(r, corr, SV_POINT_T2B, p, e->t2a_ns, tai_sec, e->smpcnt);
		break;
	case SVTRACE_COPY_DROPPED:
		rec_drop(r, corr, SV_POINT_T2B, e, tai_sec);
		rec_point(r, corr, SV_POINT_T2B, e->t2b_ns, tai_sec, e->smpcnt, e->ifindex2b, e->netns2b, p,
			  SV_REC_F_DROPPED, e->reason, e->cpu2b, e->tid2b);
		break;
	case SVTRACE_COPY_PORT_DROP:
		rec_drop(r, corr, SV_POINT_T2A, e, tai_sec);
		rec_point(r, corr, SV_POINT_T2A, e->t2b_ns, tai_sec, e->smpcnt, e->ifindex2b, e->netns2b, p,
			  SV_REC_F_DROPPED, e->reason, e->cpu2b, e->tid2b);
		break;
	default:
		break;
	}
}

/* A THREAD record of late frame @l at @point: thread @tid (@comm) waited @wait_ns from @from_ns (the part
 * of its wait within the hop; none: no holder, t_ns the late point's time) while @holder_pid held its CPU. */
static void rec_thread(struct svtrace_rec *rec, const struct svtrace_late *l, unsigned point, uint32_t tid,
		       const char *comm, int64_t wait_ns, int64_t from_ns, uint32_t holder_pid,
		       const char *holder_comm, uint32_t holder_policy, uint32_t holder_prio)
{
	struct sv_rec_thread r = {
		.point = (uint8_t)point, .stream = l->stream,
		.t_ns = sv_clock_xlate_apply(&rec->to_tai, wait_ns ? from_ns : l->t_mono_ns), .wait_ns = wait_ns,
		.smp_cnt = l->smpcnt, .feeder_tid = tid, .holder_pid = holder_pid,
		.holder_policy = (uint8_t)holder_policy, .holder_prio = (uint8_t)holder_prio,
		.cause = holder_pid ? SV_WAIT_RUNQUEUE : SV_WAIT_UNKNOWN, .guest = (uint16_t)l->port,
		.ifindex = rec->ports->port[l->port].ifindex,
	};

	memcpy(r.feeder_comm, comm, 16);
	memcpy(r.holder_comm, holder_comm, 16);
	r.feeder_comm[15] = r.holder_comm[15] = 0;
	if (sv_record_write_thread(rec->w, &r) == -EINVAL)
		rec->refused++;
}

void svtrace_rec_late(void *ctx, const struct svtrace_late *l)
{
	struct svtrace_rec *rec = ctx;

	if (!rec)
		return;
	/* the feeder, at the late point (svtrace_wait_in_hop: the part of its wait within the hop) */
	rec_thread(rec, l, SV_POINT_T2B, l->feeder_tid, l->feeder_comm, l->wait_ns, l->wait_from_ns, l->holder_pid,
		   l->holder_comm, l->holder_policy, l->holder_prio);
	/* no carrier, or it is the feeder with the very wait just written (a netdev datapath's thread that
	 * also delivered the frame into the guest's namespace) */
	if (!l->carrier_tid || (l->carrier_tid == l->feeder_tid && l->carrier_wait_from_ns == l->wait_from_ns &&
				l->carrier_wait_ns == l->wait_ns))
		return;
	/* The thread that carried it from T1 to T2a (a user-space switch's), at the point it ended: T2a. */
	rec_thread(rec, l, SV_POINT_T2A, l->carrier_tid, l->carrier_comm, l->carrier_wait_ns, l->carrier_wait_from_ns,
		   l->carrier_holder_pid, l->carrier_holder_comm, l->carrier_holder_policy, l->carrier_holder_prio);
}

void svtrace_rec_port_name(struct svtrace_rec *r, unsigned i)
{
	const struct svtrace_port *p;
	struct sv_rec_name n = { .name_kind = SV_REC_NAME_IFINDEX };

	if (!r)
		return;
	p = &r->ports->port[i];
	n.id = p->ifindex;
	n.netns = p->netns_ino;
	snprintf(n.name, sizeof(n.name), "%s", p->name);
	sv_record_define_name(r->w, &n);
}

int svtrace_rec_open(struct svtrace_rec **out, const char *path, const struct sv_record_opts *o,
		     const struct svtrace_ports *ports, struct svtrace_corr *corr,
		     const struct sv_clock_xlate *to_tai)
{
	struct sv_record_writer_cfg cfg = {
		.path = path, .tool = "svtrace", .clock = SV_CLOCK_TAI,
	};
	struct svtrace_rec *r = calloc(1, sizeof(*r));
	int err = r ? sv_record_cfg_opts(&cfg, o) : -ENOMEM;

	if (!err)
		err = sv_record_writer_open(&r->w, &cfg);
	if (err) {
		fprintf(stderr, "svtrace: cannot create record file '%s': %s\n", path, strerror(-err));
		free(r);
		return err;
	}
	r->ports = ports;
	r->corr = corr;
	r->to_tai = *to_tai;
	for (unsigned i = 0; i <= ports->n; i++) {
		struct sv_rec_name g = { .name_kind = SV_REC_NAME_GUEST, .id = i };

		snprintf(g.name, sizeof(g.name), "%s", ports->port[i].name);
		svtrace_rec_port_name(r, i);
		if (i)
			sv_record_define_name(r->w, &g);
	}
	*out = r;
	return 0;
}

int svtrace_rec_close(struct svtrace_rec *r, struct sv_record_writer_stats *st, uint64_t *refused)
{
	int err;

	if (refused)
		*refused = r ? r->refused : 0;
	if (!r)
		return sv_record_writer_close_stats(NULL, st);
	err = sv_record_writer_close_stats(r->w, st);
	free(r);
	return err;
}

void svtrace_rec_tick(struct svtrace_rec *r, int64_t now_mono_ns)
{
	if (r)
		sv_record_tick(r->w, now_mono_ns);
}

/* ---- Metrics (svtrace --metrics) ---- */

void svtrace_rec_metrics(const struct svtrace_rec *r, struct sv_metrics_health *h)
{
	if (r)
		sv_metrics_health_record(h, r->w);
}

// SPDX-License-Identifier: Apache-2.0
/* svtrace's metrics: see svtrace_metrics.h (families: configs/prometheus/metrics.txt, svkit_trace_*). */
#include "svtrace_metrics.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sv_record.h"
#include "svtrace_ports.h"
#include "svtrace_sys.h"

/* ---- Streams: a table (svid, appid) with the T1 frames and, per egress port, T1-T2b missing and dropped */

static unsigned streams_count(void *ctx)
{
	struct svtrace_metrics *tm = ctx;

	return __atomic_load_n(&tm->nstreams, __ATOMIC_ACQUIRE);
}

static int streams_labels(void *ctx, unsigned row, const char **val, size_t *len, char *buf, size_t size)
{
	struct svtrace_metrics *tm = ctx;
	const uint8_t *svid;
	uint16_t appid;

	if (svtrace_corr_stream(tm->corr, row, &appid, &svid, &len[0], NULL))
		return -1;
	val[0] = (const char *)svid;
	len[1] = (size_t)snprintf(buf, size, "0x%04x", appid);
	val[1] = buf;
	return 0;
}

static void streams_values(void *ctx, unsigned row, uint64_t *v)
{
	struct svtrace_metrics *tm = ctx;
	const uint8_t *svid;
	size_t len;
	uint64_t frames = 0;
	unsigned n = tm->ports->n;

	svtrace_corr_stream(tm->corr, row, NULL, &svid, &len, &frames);
	v[0] = frames;
	for (unsigned p = 1; p <= n; p++) {
		const struct svtrace_hop_stats *hs = svtrace_corr_stream_hop(tm->corr, row, p, SVTRACE_HOP_T1_T2B);

		v[p] = hs ? sv_metrics_load_u64(&hs->missing) : 0;
		v[n + p] = hs ? sv_metrics_load_u64(&hs->dropped) : 0;
	}
}

static const struct sv_metrics_table_ops streams_ops = { streams_count, streams_labels, streams_values };

/* ---- Drop reasons per port: rows (port, reason) as they appear ---------------------------------------- */

static unsigned drops_count(void *ctx)
{
	struct svtrace_metrics *tm = ctx;

	return __atomic_load_n(&tm->ndrops, __ATOMIC_ACQUIRE);
}

static int drops_labels(void *ctx, unsigned row, const char **val, size_t *len, char *buf, size_t size)
{
	struct svtrace_metrics *tm = ctx;
	unsigned p = tm->drop[row].port, nr;
	const struct svtrace_reason_count *rc = svtrace_corr_reasons(tm->corr, p, &nr);
	const char *name = svtrace_drop_reason_name(rc[tm->drop[row].idx].reason);

	val[0] = tm->ports->port[p].name;
	len[0] = strlen(val[0]);
	if (!name) { /* a reason this kernel does not name: its number */
		snprintf(buf, size, "%u", rc[tm->drop[row].idx].reason);
		name = buf;
	}
	val[1] = name;
	len[1] = strlen(name);
	return 0;
}

static void drops_values(void *ctx, unsigned row, uint64_t *v)
{
	struct svtrace_metrics *tm = ctx;
	unsigned nr;
	const struct svtrace_reason_count *rc = svtrace_corr_reasons(tm->corr, tm->drop[row].port, &nr);

	v[0] = sv_metrics_load_u64(&rc[tm->drop[row].idx].count);
}

static const struct sv_metrics_table_ops drops_ops = { drops_count, drops_labels, drops_values };

/* ---- Registration -------------------------------------------------------------------------------------- */

static struct sv_metrics_family *fam(struct sv_metrics *m, const char *name, enum sv_metric_type type,
				     const char *help, unsigned n, const char *const *labels)
{
	return sv_metrics_family(m, name, type, NULL, help, n, labels);
}

/* A family without labels counting *@src. */
static int add0(struct sv_metrics *m, const char *name, const char *help, const uint64_t *src)
{
	struct sv_metrics_family *f = fam(m, name, SV_METRIC_COUNTER, help, 0, NULL);

	return f ? sv_metrics_add_u64(f, NULL, src) : -errno;
}

static const uint64_t zero;

int svtrace_metrics_register(struct svtrace_metrics *tm, struct sv_metrics *m, struct sv_metrics_health *h,
			     struct svtrace_corr *corr, const struct svtrace_ports *ports, const uint64_t *events)
{
	static const char *const table_l[] = { "table" }, *const reason_l[] = { "reason" },
				 *const hop_l[] = { "hop", "port" }, *const late_l[] = { "hop", "port", "cause" },
				 *const port_l[] = { "port" }, *const drop_l[] = { "port", "reason" },
				 *const stream_l[] = { "svid", "appid" }, *const sport_l[] = { "svid", "appid", "port" };
	static const char *const evicted[] = { "timeout", "reuse", "full" };
	static const struct {
		const char *name, *help;
		size_t off; /* in struct svtrace_hop_stats */
	} hopc[] = {
		{ "svkit_trace_hop_frames", "Frames that went through the hop", offsetof(struct svtrace_hop_stats, frames) },
		{ "svkit_trace_hop_missing_frames", "Frames seen at the hop's start and never at its end",
		  offsetof(struct svtrace_hop_stats, missing) },
		{ "svkit_trace_hop_dropped_frames", "Frames freed with a drop reason within the hop",
		  offsetof(struct svtrace_hop_stats, dropped) },
		{ "svkit_trace_hop_unwanted_frames", "Frames that reached the guest and nobody wanted (not a loss)",
		  offsetof(struct svtrace_hop_stats, unwanted) },
	};
	const struct svtrace_corr_counters *cc = svtrace_corr_counters(corr);
	struct sv_metrics_family *f, *hist, *late;
	struct sv_metrics_table *t;
	int err;

	memset(tm, 0, sizeof(*tm));
	tm->corr = corr;
	tm->ports = ports;
	tm->health = h;
	if ((err = add0(m, "svkit_trace_events", "Events received from the BPF programs", events)) ||
	    (err = add0(m, "svkit_trace_parse_errors", "Frames the BPF parser could not read",
			&tm->cnt[SVTRACE_CNT_PARSE_ERR])) ||
	    (err = add0(m, "svkit_trace_orphan_observations", "Observations at T2a, T2b or a drop without a T1",
			&cc->orphans)) ||
	    (err = add0(m, "svkit_trace_streams_overflow_observations", "Observations of streams beyond the stream "
			"table", &cc->streams_overflow)) ||
	    (err = add0(m, "svkit_trace_ingress_dropped_frames", "SV frames dropped at the ingress port before any "
			"egress", &tm->cnt[SVTRACE_CNT_INGRESS_DROP])))
		return err;
	f = fam(m, "svkit_trace_table_full", SV_METRIC_COUNTER, "Frames not followed because a BPF table was full", 1,
		table_l);
	if (!f)
		return -errno;
	{
		const char *track[] = { "track" }, *streams[] = { "streams" };

		if ((err = sv_metrics_add_u64(f, track, &tm->cnt[SVTRACE_CNT_TRACK_FULL])) ||
		    (err = sv_metrics_add_u64(f, streams, &tm->cnt[SVTRACE_CNT_STREAMS_FULL])))
			return err;
	}
	/* BPF correlates the frames and never evicts one user space waits for: 0, as the JSON says */
	f = fam(m, "svkit_trace_evicted_entries", SV_METRIC_COUNTER, "Incomplete correlation entries evicted, by "
		"reason", 1, reason_l);
	if (!f)
		return -errno;
	for (unsigned i = 0; i < 3; i++)
		if ((err = sv_metrics_add_u64(f, &evicted[i], &zero)))
			return err;
	hist = sv_metrics_family(m, "svkit_hop_latency_seconds", SV_METRIC_HISTOGRAM, "seconds",
				 "Latency of one hop (svpub Ts-T0; svtrace T1-T2a, T2a-T2b, T1-T2b; svsub Ts-T3, T3-T4)", 2,
				 hop_l);
	late = fam(m, "svkit_trace_late_frames", SV_METRIC_COUNTER, "Frames over the late threshold, by why-late "
		   "cause", 3, late_l);
	if (!hist || !late)
		return -errno;
	for (size_t c = 0; c < sizeof(hopc) / sizeof(hopc[0]); c++) {
		f = fam(m, hopc[c].name, SV_METRIC_COUNTER, hopc[c].help, 2, hop_l);
		if (!f)
			return -errno;
		for (unsigned p = 1; p <= ports->n; p++) {
			for (unsigned hop = 0; hop < SVTRACE_HOP_NR; hop++) {
				const struct svtrace_hop_stats *hs = svtrace_corr_hop(corr, p, hop);
				char hn[16];
				const char *v[] = { hn, ports->port[p].name };

				snprintf(hn, sizeof(hn), "%s-%s", svtrace_hop_from(hop), svtrace_hop_to(hop));
				err = sv_metrics_add_u64(f, v, (const uint64_t *)((const char *)hs + hopc[c].off));
				if (!err && c == 0)
					err = sv_metrics_add_hist(hist, v, &hs->lat);
				for (unsigned k = 0; !err && c == 0 && k < SVTRACE_METRICS_CAUSES; k++) {
					const char *lv[] = { hn, ports->port[p].name, sv_rec_wait_cause_name(k) };

					err = sv_metrics_add_u64(late, lv, &tm->late[p][hop][k]);
				}
				if (err)
					return err;
			}
		}
	}
	/* per port */
	{
		struct sv_metrics_family *fr = fam(m, "svkit_trace_port_recreated", SV_METRIC_COUNTER, "Times the port's "
						   "interface was re-created and followed", 1, port_l),
					 *fu = fam(m, "svkit_trace_port_up", SV_METRIC_GAUGE, "1 while the port's "
						   "interface exists, 0 while it is gone", 1, port_l);

		if (!fr || !fu)
			return -errno;
		for (unsigned p = 0; p <= ports->n; p++) {
			const char *v[] = { ports->port[p].name };

			tm->up[p] = !ports->port[p].gone;
			if ((err = sv_metrics_add_u64(fr, v, &tm->recreated[p])) ||
			    (err = sv_metrics_add_u64(fu, v, &tm->up[p])))
				return err;
		}
	}
	/* drops by reason */
	f = fam(m, "svkit_trace_dropped_frames", SV_METRIC_COUNTER, "Frames dropped on the way to a port, by kernel "
		"drop reason", 2, drop_l);
	t = sv_metrics_table_new(m, 2, drop_l, SVTRACE_METRICS_DROP_ROWS, &drops_ops, tm);
	if (!f || !t)
		return -errno;
	err = sv_metrics_table_column(t, f, NULL);
	if (err < 0)
		return err;
	/* streams */
	t = sv_metrics_table_new(m, 2, stream_l, SVTRACE_METRICS_MAX_STREAMS, &streams_ops, tm);
	f = fam(m, "svkit_trace_stream_frames", SV_METRIC_COUNTER, "Frames of the stream seen at the ingress (T1)", 2,
		stream_l);
	if (!t || !f)
		return -errno;
	err = sv_metrics_table_column(t, f, NULL);
	if (err < 0)
		return err;
	for (unsigned k = 0; k < 2; k++) {
		f = fam(m, k ? "svkit_trace_stream_dropped_frames" : "svkit_trace_stream_missing_frames",
			SV_METRIC_COUNTER,
			k ? "Frames of the stream dropped on the way to the port"
			  : "Frames of the stream seen at T1 and never taken by the port's guest", 3, sport_l);
		if (!f)
			return -errno;
		for (unsigned p = 1; p <= ports->n; p++) {
			const char *extra[] = { ports->port[p].name };

			err = sv_metrics_table_column(t, f, extra);
			if (err < 0)
				return err;
		}
	}
	return 0;
}

void svtrace_metrics_tick(struct svtrace_metrics *tm, const uint64_t cnt[SVTRACE_CNT_NR])
{
	unsigned nd = tm->ndrops;

	if (!tm->corr)
		return;
	for (unsigned i = 0; i < SVTRACE_CNT_NR; i++)
		sv_metrics_store_u64(&tm->cnt[i], cnt[i]);
	if (tm->health)
		sv_metrics_store_u64(&tm->health->events_lost, cnt[SVTRACE_CNT_LOST]);
	for (unsigned p = 0; p <= tm->ports->n; p++) {
		sv_metrics_store_u64(&tm->recreated[p], tm->ports->port[p].recreated);
		sv_metrics_store_u64(&tm->up[p], !tm->ports->port[p].gone);
	}
	/* drop reasons new since the last tick, per port in the order they came */
	for (unsigned p = 1; p <= tm->ports->n; p++) {
		unsigned nr, have = 0;

		svtrace_corr_reasons(tm->corr, p, &nr);
		for (unsigned i = 0; i < nd; i++)
			have += tm->drop[i].port == p;
		for (unsigned i = have; i < nr && nd < SVTRACE_METRICS_DROP_ROWS; i++) {
			tm->drop[nd].port = (uint8_t)p;
			tm->drop[nd].idx = (uint8_t)i;
			nd++;
		}
	}
	/* release: the rows' content (and the streams' identity, written by this thread) before their count */
	__atomic_store_n(&tm->ndrops, nd, __ATOMIC_RELEASE);
	__atomic_store_n(&tm->nstreams, svtrace_corr_nstreams(tm->corr), __ATOMIC_RELEASE);
}

void svtrace_metrics_late(struct svtrace_metrics *tm, const struct svtrace_late *l)
{
	/* the cause its THREAD record gives (svtrace_rec.c): a holder named over a wait within the hop */
	unsigned cause = l->holder_pid ? SV_WAIT_RUNQUEUE : SV_WAIT_UNKNOWN;

	if (!tm->corr || l->port >= SVTRACE_CORR_MAX_PORTS || (unsigned)l->hop >= SVTRACE_HOP_NR)
		return;
	sv_metrics_inc(&tm->late[l->port][l->hop][cause], 1);
}

// SPDX-License-Identifier: Apache-2.0
/* svtrace's output: see svtrace_out.h. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "sv_json.h"
#include "sv_stats.h"
#include "sv_why.h"
#include "svtrace_corr.h"
#include "svtrace_events.h"
#include "svtrace_out.h"
#include "svtrace_ports.h"
#include "svtrace_setup.h"
#include "svtrace_streams.h"
#include "svtrace_sys.h"

/* "svtrace: why late: of 47 late frames: 44 steal, ...; 97.1% of their time to named causes" (nothing with
 * why off or no late frame decomposed yet). */
static void why_line(const struct svtrace_out *o, FILE *f)
{
	struct sv_why_tally t;
	char line[1024];

	if (!o->ev || !o->probes->why || !o->ev->why.frames)
		return;
	t = o->ev->why;
	sv_why_tally_sort(&t);
	sv_why_tally_format(&t, line, sizeof(line));
	fprintf(f, "svtrace: why late: %s; %.1f%% of their %.1f ms to named causes", line,
		100.0 * sv_why_named_share(&t), (double)t.late_ns / 1e6);
	if (o->cnt[SVTRACE_CNT_WHY_SKIPPED])
		fprintf(f, "; %" PRIu64 " more not decomposed (over --why-rate)", o->cnt[SVTRACE_CNT_WHY_SKIPPED]);
	fputc('\n', f);
}

void svtrace_out_live(const struct svtrace_out *o, FILE *f)
{
	char line[256];
	struct sv_stats_summary s;

	fprintf(f, "\n%s svtrace: events %" PRIu64 ", lost %" PRIu64 ", streams %u\n", "----", o->events,
		o->cnt[SVTRACE_CNT_LOST], svtrace_corr_nstreams(o->corr));
	for (unsigned p = 1; p <= o->ports->n; p++) {
		for (unsigned h = 0; h < SVTRACE_HOP_NR; h++) {
			const struct svtrace_hop_stats *hs = svtrace_corr_hop_interval(o->corr, p, h);

			sv_stats_summarize(&hs->lat, &s);
			sv_stats_summary_format(&s, line, sizeof(line));
			fprintf(f, "%s-%s egress %s: frames %" PRIu64 " missing %" PRIu64 " dropped %" PRIu64 " %s\n",
				svtrace_hop_from(h), svtrace_hop_to(h), o->ports->port[p].name, hs->frames, hs->missing,
				hs->dropped, line);
			if (hs->lat.count)
				sv_stats_print_log2(&hs->lat, f, 1000, NULL);
		}
	}
	why_line(o, f);
	svtrace_corr_interval_reset(o->corr);
}

static void json_hop(struct sv_json *j, const struct svtrace_out *o, unsigned p, unsigned h,
		     const struct svtrace_hop_stats *hs)
{
	unsigned nr;
	const struct svtrace_reason_count *rc = svtrace_corr_reasons(o->corr, p, &nr);

	sv_json_object_begin(j);
	sv_json_kv_str(j, "from", svtrace_hop_from(h));
	sv_json_kv_str(j, "to", svtrace_hop_to(h));
	sv_json_kv_str(j, "egress", o->ports->port[p].name);
	sv_json_kv_uint(j, "frames", hs->frames);
	sv_json_kv_uint(j, "missing", hs->missing);
	sv_json_kv_uint(j, "dropped", hs->dropped);
	sv_json_kv_uint(j, "unwanted", hs->unwanted);
	sv_json_kv_uint(j, "in_flight_at_stop", hs->in_flight);
	if (hs->dropped && h != SVTRACE_HOP_T1_T2B) {
		sv_json_key(j, "drop_reasons");
		sv_json_object_begin(j);
		for (unsigned i = 0; i < nr; i++) {
			const char *n = svtrace_drop_reason_name(rc[i].reason);
			char num[24];

			snprintf(num, sizeof(num), "%u", rc[i].reason);
			sv_json_kv_uint(j, n ? n : num, rc[i].count);
		}
		sv_json_object_end(j);
	}
	sv_json_key(j, "latency_ns");
	sv_stats_json(j, &hs->lat);
	sv_json_object_end(j);
}

static int64_t why_unexplained(const struct svtrace_late *l)
{
	int64_t u = 0;

	for (unsigned i = 0; i < l->nwhy; i++)
		u += l->why[i].ns[SV_WHY_UNEXPLAINED];
	return u;
}

/* A late frame's "why": its hops by cause and its dominant cause; null when it was not decomposed. */
static void json_why_frame(struct sv_json *j, const struct svtrace_late *l)
{
	struct sv_why_dom d;
	char dom[96];

	sv_json_key(j, "why");
	if (!l->nwhy) {
		sv_json_null(j);
		return;
	}
	sv_why_dominant(l->why, l->nwhy, &d);
	sv_why_dom_format(&d, dom, sizeof(dom));
	sv_json_object_begin(j);
	sv_json_kv_str(j, "dominant", dom);
	sv_json_key(j, "hops");
	sv_json_array_begin(j);
	for (unsigned i = 0; i < l->nwhy; i++)
		sv_why_json_hop(j, &l->why[i], sv_point_name(l->why[i].from_point), sv_point_name(l->why[i].point));
	sv_json_array_end(j);
	sv_json_object_end(j);
}

/* The run's why late: on or off and why, the hooks left out, the counts, the totals over every late frame
 * decomposed (not only the listed ones). */
static void json_why_run(struct sv_json *j, const struct svtrace_out *o)
{
	const struct svtrace_probes *pr = o->probes;
	struct sv_why_tally t = { 0 };

	sv_json_key(j, "why");
	sv_json_object_begin(j);
	sv_json_kv_bool(j, "on", pr->why);
	if (pr->why)
		sv_json_kv_null(j, "off_reason");
	else
		sv_json_kv_str(j, "off_reason", pr->why_off);
	sv_json_kv_str(j, "steal_clock", pr->why ? pr->why_steal : NULL);
	sv_json_kv_bool(j, "qdisc_stamps", pr->why_qdisc);
	sv_json_key(j, "hooks_missing");
	sv_json_array_begin(j);
	for (const char *p = pr->why_missing; *p;) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);

		sv_json_string_n(j, p, n);
		p += n + (e ? 1 : 0);
	}
	sv_json_array_end(j);
	sv_json_kv_uint(j, "steal_booked_ns", o->why_steal_ns);
	if (o->ev) {
		t = o->ev->why;
		sv_json_kv_uint(j, "events", o->ev->why_events);
		sv_json_kv_uint(j, "skipped", o->cnt[SVTRACE_CNT_WHY_SKIPPED]);
		sv_json_kv_uint(j, "nested", o->ev->why_nested);
		sv_json_kv_uint(j, "unmatched", o->ev->why_unmatched);
		sv_json_kv_uint(j, "bad", o->ev->why_bad);
	}
	sv_json_object_end(j);
	sv_why_tally_sort(&t);
	sv_why_json_totals(j, &t);
}

/* svID_truncated (always) and, when truncated, svID_octets: the length on the wire. */
static void json_svid_trunc(struct sv_json *j, const struct svtrace_out *o, unsigned corr)
{
	const uint16_t *wire_len = o->streams->svid_wire_len;
	bool trunc = corr < SVTRACE_MAX_STREAMS && wire_len[corr] > SVTRACE_SVID_MAX;

	sv_json_kv_bool(j, "svID_truncated", trunc);
	if (trunc)
		sv_json_kv_uint(j, "svID_octets", wire_len[corr]);
}

/* What svtrace knows of its ports, and of the Open vSwitch bridge --egress all read. */
static void json_ports(struct sv_json *j, const struct svtrace_out *o)
{
	const struct svtrace_ports *ps = o->ports;

	sv_json_key(j, "ports_gone");	/* interfaces away at the end of the run (svtrace_ports_watch) */
	sv_json_array_begin(j);
	for (unsigned i = 0; i <= ps->n; i++)
		if (ps->port[i].gone)
			sv_json_string(j, ps->port[i].name);
	sv_json_array_end(j);
	sv_json_key(j, "ports_recreated");	/* re-created during the run and followed */
	sv_json_array_begin(j);
	for (unsigned i = 0; i <= ps->n; i++) {
		if (!ps->port[i].recreated)
			continue;
		sv_json_object_begin(j);
		sv_json_kv_str(j, "name", ps->port[i].name);
		sv_json_kv_uint(j, "times", ps->port[i].recreated);
		sv_json_kv_uint(j, "ifindex", ps->port[i].ifindex);
		sv_json_kv_uint(j, "netns", ps->port[i].netns_ino);
		sv_json_object_end(j);
	}
	sv_json_array_end(j);
	sv_json_kv_str(j, "expect", o->expect_seen ? "seen" : "all");
	/* --egress all from an Open vSwitch database: which bridge, which datapath */
	sv_json_key(j, "ovs_bridge");
	if (ps->ovs_bridge[0]) {
		sv_json_object_begin(j);
		sv_json_kv_str(j, "name", ps->ovs_bridge);
		sv_json_kv_str(j, "datapath", ps->ovs_datapath);
		sv_json_object_end(j);
	} else {
		sv_json_null(j);
	}
	sv_json_key(j, "ingress");
	sv_json_object_begin(j);
	sv_json_kv_str(j, "name", ps->port[0].name);
	sv_json_kv_uint(j, "ifindex", ps->port[0].ifindex);
	sv_json_kv_uint(j, "netns", ps->port[0].netns_ino);
	sv_json_kv_uint(j, "dropped", o->cnt[SVTRACE_CNT_INGRESS_DROP]);
	/* freed by the ingress's own stack as unhandled: the copy a user-space switch did not take */
	sv_json_kv_uint(j, "unhandled", o->cnt[SVTRACE_CNT_INGRESS_UNHANDLED]);
	sv_json_object_end(j);
}

int svtrace_out_json(const struct svtrace_out *o, FILE *f, int64_t elapsed_ns)
{
	const struct svtrace_corr_counters *cc = svtrace_corr_counters(o->corr);
	const struct svtrace_probes *pr = o->probes;
	const struct svtrace_ports *ps = o->ports;
	const struct svtrace_late *late;
	struct sv_json j;
	unsigned nlate;

	sv_json_init(&j, f, 0);
	sv_json_object_begin(&j);
	sv_json_kv_str(&j, "tool", "svtrace");
	sv_json_kv_str(&j, "version", SVKIT_VERSION);
	sv_json_kv_double(&j, "duration_s", (double)elapsed_ns / 1e9);
	sv_json_key(&j, "probes");
	sv_json_object_begin(&j);
	sv_json_kv_str(&j, "base", pr->attach_mode);
	sv_json_kv_str(&j, "wait", pr->wait_from_rq ? "sched_info" : "sched_wakeup");
	sv_json_key(&j, "tracepoints");
	sv_json_array_begin(&j);
	for (unsigned i = 0; i < pr->ntracepoints; i++)
		sv_json_string(&j, pr->tracepoints[i]);
	sv_json_array_end(&j);
	sv_json_kv_bool(&j, "ovs", pr->ovs);
	sv_json_kv_bool(&j, "tun_net_xmit", pr->tun);
	sv_json_kv_bool(&j, "dev_direct_xmit", pr->direct);
	sv_json_kv_bool(&j, "vhost_handle_rx", pr->vhost);
	sv_json_object_end(&j);
	sv_json_kv_uint(&j, "events", o->events);
	sv_json_kv_uint(&j, "events_lost", o->cnt[SVTRACE_CNT_LOST]);
	sv_json_kv_uint(&j, "parse_errors", o->cnt[SVTRACE_CNT_PARSE_ERR]);
	sv_json_kv_uint(&j, "frames_walked", o->cnt[SVTRACE_CNT_WALKS]);
	sv_json_kv_uint(&j, "copies_logged", o->hlog_copies);
	sv_json_kv_uint(&j, "copies_bpf_hist", o->cnt[SVTRACE_CNT_AGGREGATED]);
	sv_json_kv_uint(&j, "track_collisions", o->cnt[SVTRACE_CNT_TRACK_COLL]);
	sv_json_kv_uint(&j, "track_full", o->cnt[SVTRACE_CNT_TRACK_FULL]);
	sv_json_kv_uint(&j, "stale_skbs", o->cnt[SVTRACE_CNT_STALE]);
	sv_json_kv_uint(&j, "ovs_upcalls_frames", o->upcalls);
	sv_json_kv_uint(&j, "streams_full", o->cnt[SVTRACE_CNT_STREAMS_FULL]);
	sv_json_kv_uint(&j, "events_filtered", o->filtered);
	sv_json_kv_uint(&j, "orphans", cc->orphans);
	/* Frames are correlated in BPF, whose tables never evict a frame user space still waits for: these
	 * stay 0; kept for the JSON's readers (svtrace(8), docs/metrics.md). */
	sv_json_kv_uint(&j, "evicted_timeout", 0);
	sv_json_kv_uint(&j, "evicted_reuse", 0);
	sv_json_kv_uint(&j, "evicted_full", 0);
	sv_json_kv_uint(&j, "streams_overflow", cc->streams_overflow);
	json_ports(&j, o);
	sv_json_key(&j, "hops");
	sv_json_array_begin(&j);
	for (unsigned p = 1; p <= ps->n; p++)
		for (unsigned h = 0; h < SVTRACE_HOP_NR; h++)
			json_hop(&j, o, p, h, svtrace_corr_hop(o->corr, p, h));
	sv_json_array_end(&j);
	sv_json_key(&j, "streams");
	sv_json_array_begin(&j);
	for (unsigned s = 0; s < svtrace_corr_nstreams(o->corr); s++) {
		const uint8_t *svid;
		size_t len;
		uint16_t appid;
		uint64_t frames;

		svtrace_corr_stream(o->corr, s, &appid, &svid, &len, &frames);
		sv_json_object_begin(&j);
		sv_json_key(&j, "svID");
		sv_json_string_n(&j, (const char *)svid, len);
		json_svid_trunc(&j, o, s);
		sv_json_kv_uint(&j, "appid", appid);
		sv_json_kv_uint(&j, "frames", frames);
		sv_json_key(&j, "hops");
		sv_json_array_begin(&j);
		for (unsigned p = 1; p <= ps->n; p++) {
			for (unsigned h = 0; h < SVTRACE_HOP_NR; h++) {
				const struct svtrace_hop_stats *hs = svtrace_corr_stream_hop(o->corr, s, p, h);

				if (!hs)
					continue;
				sv_json_object_begin(&j);
				sv_json_kv_str(&j, "from", svtrace_hop_from(h));
				sv_json_kv_str(&j, "to", svtrace_hop_to(h));
				sv_json_kv_str(&j, "egress", ps->port[p].name);
				sv_json_kv_uint(&j, "frames", hs->frames);
				sv_json_kv_uint(&j, "missing", hs->missing);
				sv_json_kv_uint(&j, "dropped", hs->dropped);
				sv_json_kv_uint(&j, "in_flight_at_stop", hs->in_flight);
				sv_json_key(&j, "latency_ns");
				sv_stats_json(&j, &hs->lat);
				sv_json_object_end(&j);
			}
		}
		sv_json_array_end(&j);
		sv_json_object_end(&j);
	}
	sv_json_array_end(&j);
	svtrace_corr_late_sort(o->corr);
	late = svtrace_corr_late(o->corr, &nlate);
	sv_json_kv_bool(&j, "late_detection", o->threshold_ns != 0);
	sv_json_kv_uint(&j, "late_total", cc->late_total);
	sv_json_kv_int(&j, "threshold_ns", o->threshold_ns);
	sv_json_key(&j, "late");
	sv_json_array_begin(&j);
	for (unsigned i = 0; i < nlate; i++) {
		const struct svtrace_late *l = &late[i];
		const uint8_t *svid;
		size_t len;
		char hop[16];

		svtrace_corr_stream(o->corr, l->stream, NULL, &svid, &len, NULL);
		snprintf(hop, sizeof(hop), "%s-%s", svtrace_hop_from(l->hop), svtrace_hop_to(l->hop));
		sv_json_object_begin(&j);
		sv_json_key(&j, "svID");
		sv_json_string_n(&j, (const char *)svid, len);
		json_svid_trunc(&j, o, l->stream);
		sv_json_kv_uint(&j, "smpCnt", l->smpcnt);
		sv_json_kv_str(&j, "hop", hop);
		sv_json_kv_str(&j, "egress", ps->port[l->port].name);
		sv_json_kv_int(&j, "hop_ns", l->hop_ns);
		sv_json_kv_str(&j, "feeder_thread", l->feeder_comm);
		sv_json_kv_uint(&j, "feeder_tid", l->feeder_tid);
		/* wait_ns: the part of the feeder's wait within the hop; the rest of hop_ns is unexplained */
		sv_json_kv_int(&j, "wait_ns", l->wait_ns);
		sv_json_kv_int(&j, "feeder_wait_ns", l->feeder_wait_ns);
		sv_json_kv_bool(&j, "wait_end_known", l->wait_end_known);
		/* with its decomposition: what it left unexplained; else the part of the hop the feeder's wait
		 * does not cover */
		sv_json_kv_int(&j, "unexplained_ns", l->nwhy ? why_unexplained(l) :
				   l->hop_ns > l->wait_ns ? l->hop_ns - l->wait_ns : 0);
		if (l->holder_comm[0] && l->wait_ns) {
			sv_json_kv_str(&j, "holder_thread", l->holder_comm);
			sv_json_kv_uint(&j, "holder_pid", l->holder_pid);
			sv_json_kv_str(&j, "holder_policy", sv_sched_policy_name(l->holder_policy));
			sv_json_kv_uint(&j, "holder_prio", l->holder_prio);
		} else {
			sv_json_kv_null(&j, "holder_thread");
			sv_json_kv_null(&j, "holder_pid");
			sv_json_kv_null(&j, "holder_policy");
			sv_json_kv_null(&j, "holder_prio");
		}
		/* the thread that carried it from T1 to T2a (a user-space switch's), null when none did */
		if (l->carrier_tid) {
			sv_json_kv_str(&j, "carrier_thread", l->carrier_comm[0] ? l->carrier_comm : NULL);
			sv_json_kv_str(&j, "carrier_role", svtrace_thread_role(l->carrier_comm));
			sv_json_kv_uint(&j, "carrier_tid", l->carrier_tid);
			sv_json_kv_int(&j, "carrier_wait_ns", l->carrier_wait_ns);
			sv_json_kv_int(&j, "carrier_whole_wait_ns", l->carrier_whole_wait_ns);
			if (l->carrier_holder_pid) {
				sv_json_kv_str(&j, "carrier_holder_thread", l->carrier_holder_comm);
				sv_json_kv_uint(&j, "carrier_holder_pid", l->carrier_holder_pid);
				sv_json_kv_str(&j, "carrier_holder_policy", sv_sched_policy_name(l->carrier_holder_policy));
				sv_json_kv_uint(&j, "carrier_holder_prio", l->carrier_holder_prio);
			} else {
				sv_json_kv_null(&j, "carrier_holder_thread");
			}
		} else {
			sv_json_kv_null(&j, "carrier_thread");
		}
		json_why_frame(&j, l);
		sv_json_object_end(&j);
	}
	sv_json_array_end(&j);
	json_why_run(&j, o);
	sv_json_key(&j, "record"); /* what reached the disk: null without --record */
	sv_record_stats_json(&j, o->record, o->rec_st);
	sv_json_object_end(&j);
	return sv_json_end(&j);
}

void svtrace_out_summary(const struct svtrace_out *o, FILE *f)
{
	const struct svtrace_ports *ps = o->ports;
	char line[256], late[64];
	struct sv_stats_summary s;

	if (o->threshold_ns)
		snprintf(late, sizeof(late), "%" PRIu64 " late (> %" PRId64 " us)",
			 svtrace_corr_counters(o->corr)->late_total, o->threshold_ns / 1000);
	else
		snprintf(late, sizeof(late), "late detection off");
	fprintf(f, "svtrace: %" PRIu64 " events, %" PRIu64 " copies counted in BPF, %" PRIu64 " lost, %u streams, %"
		PRIu64 " parse errors, %s\n", o->events, o->hlog_copies + o->cnt[SVTRACE_CNT_AGGREGATED],
		o->cnt[SVTRACE_CNT_LOST], svtrace_corr_nstreams(o->corr), o->cnt[SVTRACE_CNT_PARSE_ERR], late);
	for (unsigned i = 0; i <= ps->n; i++) {
		const struct svtrace_port *p = &ps->port[i];

		if (p->recreated)
			fprintf(f, "svtrace: %s interface '%s' was re-created %u time(s) during the run and followed "
				"(%s)\n", svtrace_ports_kind(i), p->name, p->recreated,
				i ? "frames toward it while it was away count as missing at it"
				  : "frames that came in while it was away were not seen");
		if (p->gone)
			fprintf(f, "svtrace: %s interface '%s' was away at the end of the run: its counts stop "
				"where it went\n", svtrace_ports_kind(i), p->name);
	}
	if (o->cnt[SVTRACE_CNT_TRACK_COLL] || o->cnt[SVTRACE_CNT_TRACK_FULL])
		fprintf(f, "svtrace: skb table: %" PRIu64 " slot collisions (overflow table), %" PRIu64
			" copies not tracked (both full: --table)\n", o->cnt[SVTRACE_CNT_TRACK_COLL],
			o->cnt[SVTRACE_CNT_TRACK_FULL]);
	for (unsigned p = 1; p <= ps->n; p++) {
		for (unsigned h = 0; h < SVTRACE_HOP_NR; h++) {
			const struct svtrace_hop_stats *hs = svtrace_corr_hop(o->corr, p, h);

			sv_stats_summarize(&hs->lat, &s);
			sv_stats_summary_format(&s, line, sizeof(line));
			fprintf(f, "  %s-%s %-10s frames=%" PRIu64 " missing=%" PRIu64 " dropped=%" PRIu64
				"%s%.0" PRIu64 " %s\n", svtrace_hop_from(h), svtrace_hop_to(h), ps->port[p].name,
				hs->frames, hs->missing, hs->dropped, hs->in_flight ? " in_flight_at_stop=" : "",
				hs->in_flight, line);
		}
	}
	why_line(o, f);
	if (o->rec_st) {
		char rl[512];

		sv_record_stats_format(o->rec_st, rl, sizeof(rl));
		fprintf(f, "svtrace: record %s: %s\n", o->record, rl);
		if (o->rec_refused)
			fprintf(f, "svtrace: record %s: %" PRIu64 " records refused as invalid (a bug: please report)\n",
				o->record, o->rec_refused);
	}
}

// SPDX-License-Identifier: Apache-2.0
/*
 * The soak sections of svreport's three outputs (svreport_out.h's table: soak, soak timeline, soak hours, soak
 * worst intervals, soak events), each a text, a JSON and an HTML emitter, from the soak's tables (svreport.h
 * "Soak"). Every emitter writes nothing (JSON: null) when the input has no soak record. Times are TAI inside;
 * shown as UTC (TAI minus the hosts' TAI offset from the files' headers, 37 s when none says) and as the time
 * since the soak's start (text, HTML), or hours since its first whole hour (JSON, the plots).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "svreport_out.h"

/* ---- what the three formats share ---- */

/* "T1-T2b", or "T2a" for the counts of a point alone (INTERVAL from_point 255). */
static void hop_name(const struct svr_soak_hop *h, char *buf, size_t size)
{
	if (h->from == h->to)
		snprintf(buf, size, "%s", sv_point_name(h->to));
	else
		sv_hop_format(h->from, h->to, buf, size);
}

/* "T1-T2b g1", "Ts-T0" (a shared hop). */
static void hop_label(const struct svr *r, const struct svr_soak_hop *h, char *buf, size_t size)
{
	char hn[16];

	hop_name(h, hn, sizeof(hn));
	if (h->guest < 0)
		snprintf(buf, size, "%s", hn);
	else
		snprintf(buf, size, "%s %s", hn, svr_guest_name(r, (unsigned)h->guest));
}

static int tai_offset_s(struct svr *r)
{
	for (unsigned i = 0; i < svr_nfiles(r); i++)
		if (svr_file(r, i)->sync.tai_offset_s)
			return svr_file(r, i)->sync.tai_offset_s;
	return 37;
}

/* "2027-01-15 08:00:00 UTC (+01:23:20)": @t_ns TAI, the offset from the soak's start (its first interval). */
static void when(struct svr *r, const struct svr_soak *k, int64_t t_ns, char *buf, size_t size)
{
	int64_t sec = t_ns / SV_NSEC_PER_SEC, off = sec - k->first_tai_ns / SV_NSEC_PER_SEC;
	time_t utc = (time_t)(sec - tai_offset_s(r));
	struct tm tm;
	char d[32];

	gmtime_r(&utc, &tm);
	strftime(d, sizeof(d), "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(buf, size, "%s UTC (%s%02" PRId64 ":%02" PRId64 ":%02" PRId64 ")", d, off < 0 ? "-" : "+",
		 (off < 0 ? -off : off) / 3600, (off < 0 ? -off : off) / 60 % 60, (off < 0 ? -off : off) % 60);
}

/* The soak's span in hours (0 before any interval). */
static double soak_hours(const struct svr_soak *k)
{
	return k->last_tai_ns > k->first_tai_ns ? ((double)k->last_tai_ns - (double)k->first_tai_ns) / 3.6e12 : 0;
}

static const char *stream_name(struct svr *r, uint32_t s)
{
	return s < svr_nstreams(r) ? svr_stream(r, s)->svid : "-";
}

/* Where an event was: "T1-T2b g1", "T2b g1" (a point), "g1", "-". */
static void event_where(struct svr *r, const struct svr_soak_event *ev, char *buf, size_t size)
{
	char hn[16] = "";
	const char *g = svr_out_guest(r, ev->guest, "");

	if (ev->from < SVR_NPOINTS && ev->to < SVR_NPOINTS)
		sv_hop_format(ev->from, ev->to, hn, sizeof(hn));
	else if (ev->to < SVR_NPOINTS)
		snprintf(hn, sizeof(hn), "%s", sv_point_name(ev->to));
	snprintf(buf, size, "%s%s%s", hn, hn[0] && g[0] ? " " : "", g);
	if (!buf[0])
		snprintf(buf, size, "-");
}

/* What happened, one line: "window (latency; merged: latency, loss), 3 triggers, first 1.53ms". */
static void event_what(struct svr *r, const struct svr_soak_event *ev, char *buf, size_t size)
{
	const struct svr_file_info *fi = svr_file(r, ev->file);
	char v[32];
	size_t n = 0;

	switch (ev->kind) {
	case SVR_SOAK_EV_WINDOW: {
		char merged[96] = "";
		size_t m = 0;

		for (unsigned c = 0; c < SV_WINDOW_CLASSES && m < sizeof(merged); c++)
			if (ev->classes >> c & 1 && c != ev->cls)
				m += (size_t)snprintf(merged + m, sizeof(merged) - m, "%s%s", m ? ", " : "; with ",
						      sv_rec_window_class_name(c));
		if (ev->cls == SV_WINDOW_LATENCY)
			sv_stats_format_ns(ev->value, v, sizeof(v));
		else
			snprintf(v, sizeof(v), "%" PRId64, ev->value);
		n = (size_t)snprintf(buf, size, "window kept by %s on %.40s (trigger %s%s), %u trigger%s, first %s%s%s",
				     fi->tool, fi->host, sv_rec_window_class_name(ev->cls), merged, ev->triggers,
				     ev->triggers == 1 ? "" : "s", v,
				     ev->flags & SV_REC_WINDOW_F_CUT ? ", cut at the length cap" : "",
				     ev->flags & SV_REC_WINDOW_F_LOST ? ", some frames overwritten before written" : "");
		/* the same stretch kept by other tools: their frames join this window's */
		for (unsigned i = 0, first = 1; i < 64 && n < size; i++)
			if (ev->joined >> i & 1) {
				const struct svr_file_info *o = svr_file(r, i);

				n += (size_t)snprintf(buf + n, size - n, "%s%s on %.40s", first ? "; joined with " : ", ",
						      o->tool, o->host);
				first = 0;
			}
		break;
	}
	case SVR_SOAK_EV_LOSS:
		snprintf(buf, size, "%" PRId64 " samples lost (%s, %u hop%s)", ev->value, fi->tool, ev->hops,
			 ev->hops == 1 ? "" : "s");
		break;
	case SVR_SOAK_EV_MISSING:
		snprintf(buf, size, "%" PRId64 " frames missing (%s, %u hop%s)", ev->value, fi->tool, ev->hops,
			 ev->hops == 1 ? "" : "s");
		break;
	case SVR_SOAK_EV_DROP:
		snprintf(buf, size, "%" PRId64 " frames dropped (%s, %u hop%s)", ev->value, fi->tool, ev->hops,
			 ev->hops == 1 ? "" : "s");
		break;
	case SVR_SOAK_EV_RESTART:
		snprintf(buf, size, "sample counter restarted (%s)", fi->tool);
		break;
	case SVR_SOAK_EV_CHANGE:
		snprintf(buf, size, "confRev, quality or simulation changed (%s)", fi->tool);
		break;
	case SVR_SOAK_EV_GAP:
		snprintf(buf, size, "%.15s on %.40s restarted (new run %.60s): %.1f s not recorded%s", fi->tool, fi->host,
			 fi->path, (double)ev->value / 1e9,
			 ev->flags & 1 ? "; the run before ended without END (killed or crashed)" : "");
		break;
	case SVR_SOAK_EV_STEP:
		sv_stats_format_ns(ev->value, v, sizeof(v));
		snprintf(buf, size, "%s on %s: its clock's TAI stepped by %s", fi->tool, fi->host, v);
		break;
	default:
		snprintf(buf, size, "?");
	}
}

static const char *verdict_of(const struct svr_out *o)
{
	return svr_verdict_name(o->e->soak.verdict);
}

/* ---- text ---- */

void svr_text_soak(struct svr_out *o)
{
	const struct svr_soak *k = svr_soak_get(o->r);
	const struct svr_soak_eval *se = &o->e->soak;
	FILE *f = o->f;
	char a[64], z[64], lbl[48];

	if (!k)
		return;
	when(o->r, k, k->first_tai_ns, a, sizeof(a));
	when(o->r, k, k->last_tai_ns, z, sizeof(z));
	fprintf(f, "\nsoak: %s to %s, %.1f h, intervals of %u ms%s\n", a, z,
		soak_hours(k), k->period_ms,
		k->mixed_periods ? " (files with other lengths too)" : "");
	fputs("  (a soak record's frames are its windows' only, all the per-frame sections above show of it; these "
	      "cover the whole soak)\n", f);
	fprintf(f, "  verdict over the whole soak: %s (%s)\n", verdict_of(o), se->why);
	for (unsigned i = 0; i < se->nres; i++) {
		const struct svr_soak_result *res = &se->res[i];
		const struct svr_budget *bu = &o->b->b[res->budget];
		char v[32], lim[32], e[32];

		hop_label(o->r, &k->hops[res->hop], lbl, sizeof(lbl));
		svr_out_budget_value(bu, res->value, " frames", v, sizeof(v));
		svr_out_budget_value(bu, bu->limit, " frames", lim, sizeof(lim));
		sv_stats_format_ns(res->err, e, sizeof(e));
		fprintf(f, "    %-16s %s %s <= %s%s%s%s\n", lbl, svr_stat_name(bu->stat), v, lim,
			res->err ? " (+-" : "", res->err ? e : "", res->err ? ")" : "");
		if (!res->pass)
			fprintf(f, "      EXCEEDED\n");
	}
	fprintf(f, "  %" PRIu64 " intervals, %" PRIu64 " windows kept (latency %" PRIu64 ", loss %" PRIu64
		   ", drop %" PRIu64 ", change %" PRIu64 ", restart %" PRIu64 "), refused by the budgets: latency %"
		   PRIu64 ", loss %" PRIu64 ", drop %" PRIu64 ", change %" PRIu64 ", restart %" PRIu64
		   "; %" PRIu64 " clock step(s), %" PRIu64 " run restart(s)\n",
		k->intervals, k->windows, k->windows_cls[0], k->windows_cls[1], k->windows_cls[2], k->windows_cls[3],
		k->windows_cls[4], k->refused_cls[0], k->refused_cls[1], k->refused_cls[2], k->refused_cls[3],
		k->refused_cls[4], k->clock_steps, k->gaps);
	fprintf(f, "  per hop over the whole soak (merged interval histograms; +- the bucket error)\n");
	fprintf(f, "  %-16s %12s %8s %8s %8s %8s %10s %16s %16s %10s\n", "hop", "count", "late", "lost", "missing",
		"dropped", "min", "p50", "p99", "max");
	for (unsigned i = 0; i < k->nhops; i++) {
		const struct svr_soak_hop *h = &k->hops[i];
		struct sv_stats_summary s;
		char mn[24], p50[24], p99[24], mx[24], e50[24], e99[24], c50[64], c99[64];

		svr_soak_hop_summary(h, &s);
		hop_label(o->r, h, lbl, sizeof(lbl));
		sv_stats_format_ns(s.min, mn, sizeof(mn));
		sv_stats_format_ns(s.p50, p50, sizeof(p50));
		sv_stats_format_ns(s.p99, p99, sizeof(p99));
		sv_stats_format_ns(s.max, mx, sizeof(mx));
		sv_stats_format_ns(s.p50_err, e50, sizeof(e50));
		sv_stats_format_ns(s.p99_err, e99, sizeof(e99));
		snprintf(c50, sizeof(c50), "%s+-%s", p50, e50);
		snprintf(c99, sizeof(c99), "%s+-%s", p99, e99);
		fprintf(f, "  %-16s %12" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %10s %16s %16s %10s\n",
			lbl, s.count, h->late, h->lost, h->missing, h->dropped, s.count ? mn : "-", s.count ? c50 : "-",
			s.count ? c99 : "-", s.count ? mx : "-");
	}
	if (k->hops_dropped)
		fprintf(f, "  ! %" PRIu64 " records of hops past the first %u not shown\n", k->hops_dropped,
			SVR_SOAK_HOPS);
}

void svr_text_soak_hours(struct svr_out *o)
{
	const struct svr_soak *k = svr_soak_get(o->r);
	FILE *f = o->f;

	if (!k)
		return;
	fprintf(f, "\nsoak, hour by hour (rows of %u s)\n", k->hour_s);
	fprintf(f, "  %-36s %9s %12s %7s %7s %7s %7s %7s %7s  %s\n", "from", "intervals", "frames", "late", "lost",
		"missing", "dropped", "restart", "windows", "worst");
	for (unsigned i = 0; i < k->nhours; i++) {
		const struct svr_soak_hour *h = &k->hours[i];
		char t[64], w[24], lbl[48] = "-";

		when(o->r, k, (k->t0_sec + (int64_t)i * k->hour_s) * SV_NSEC_PER_SEC, t, sizeof(t));
		if (!h->intervals) {
			fprintf(f, "  %-36s %9s  (nothing recorded)\n", t, "0");
			continue;
		}
		sv_stats_format_ns(h->worst_ns, w, sizeof(w));
		if (h->worst_hop >= 0)
			hop_label(o->r, &k->hops[h->worst_hop], lbl, sizeof(lbl));
		fprintf(f, "  %-36s %9u %12" PRIu64 " %7" PRIu64 " %7" PRIu64 " %7" PRIu64 " %7" PRIu64 " %7" PRIu64
			   " %7u  %s at %s\n",
			t, h->intervals, h->frames, h->late, h->lost, h->missing, h->dropped, h->restarts, h->windows,
			h->worst_hop >= 0 ? w : "-", lbl);
	}
}

static void why_text(const struct svr_soak_worst *w, char *buf, size_t size)
{
	size_t n = 0;
	char v[24], hn[16];

	if (!(w->flags & SV_REC_INTERVAL_F_WHY)) {
		snprintf(buf, size, "no why-late record");
		return;
	}
	if (!w->why_found) {
		snprintf(buf, size, "why-late flagged, its record not found (not in the files given)");
		return;
	}
	sv_hop_format(w->why_from, w->why_to, hn, sizeof(hn));
	sv_stats_format_ns(w->why_ns, v, sizeof(v));
	n = (size_t)snprintf(buf, size, "why late (%s %s):", hn, v);
	for (unsigned c = 0; c < w->ncauses && n < size; c++) {
		sv_stats_format_ns(w->cause_ns[c], v, sizeof(v));
		n += (size_t)snprintf(buf + n, size - n, "%s %s %s", c ? "," : "", sv_rec_why_cause_name(w->cause[c]), v);
	}
}

void svr_text_soak_worst(struct svr_out *o)
{
	const struct svr_soak *k = svr_soak_get(o->r);
	FILE *f = o->f;

	if (!k || !k->nworst)
		return;
	fprintf(f, "\nsoak, the worst intervals (their worst frame)\n");
	for (unsigned i = 0; i < k->nworst; i++) {
		const struct svr_soak_worst *w = &k->worst[i];
		char t[64], v[24], lbl[48], why[256];

		when(o->r, k, (int64_t)w->tai_sec * SV_NSEC_PER_SEC, t, sizeof(t));
		sv_stats_format_ns(w->worst_ns, v, sizeof(v));
		hop_label(o->r, &k->hops[w->hop], lbl, sizeof(lbl));
		why_text(w, why, sizeof(why));
		fprintf(f, "  %s %-16s %-10s %s smpCnt %u of second %u, %u late; %s\n", t, lbl, v,
			stream_name(o->r, w->stream), w->worst_smp_cnt, w->worst_tai_sec, w->late, why);
	}
}

void svr_text_soak_events(struct svr_out *o)
{
	const struct svr_soak *k = svr_soak_get(o->r);
	FILE *f = o->f;
	uint64_t unlisted = 0;

	if (!k)
		return;
	fprintf(f, "\nsoak events (%u)\n", k->nevents);
	for (unsigned i = 0; i < k->nevents; i++) {
		const struct svr_soak_event *ev = &k->events[i];
		char t[64], where[64], what[512];

		when(o->r, k, ev->t_ns, t, sizeof(t));
		event_where(o->r, ev, where, sizeof(where));
		event_what(o->r, ev, what, sizeof(what));
		fprintf(f, "  %s %-10s %-10s %-14s %s\n", t, svr_soak_ev_name(ev->kind), stream_name(o->r, ev->stream),
			where, what);
	}
	for (unsigned c = 0; c < SVR_SOAK_EV__COUNT; c++)
		unlisted += k->events_unlisted[c];
	if (unlisted)
		fprintf(f, "  ! %" PRIu64 " more events not listed (the first %u are)\n", unlisted, SVR_SOAK_EVENTS);
}

/* ---- JSON ---- */

/* The section's key; its value null when the input has no soak record (then false: nothing more to write). */
static bool json_soak_key(struct svr_out *o, const char *key)
{
	sv_json_key(o->j, key);
	if (svr_soak_get(o->r))
		return true;
	sv_json_null(o->j);
	return false;
}

static void json_hop_name(struct sv_json *j, struct svr *r, const struct svr_soak_hop *h)
{
	char hn[16];

	hop_name(h, hn, sizeof(hn));
	sv_json_kv_str(j, "hop", hn);
	sv_json_kv_str(j, "guest", svr_out_guest(r, h->guest, NULL));
}

void svr_json_soak(struct svr_out *o)
{
	const struct svr_soak *k = svr_soak_get(o->r);
	const struct svr_soak_eval *se = &o->e->soak;
	struct sv_json *j = o->j;

	if (!json_soak_key(o, "soak"))
		return;
	sv_json_object_begin(j);
	sv_json_kv_int(j, "first_tai_ns", k->first_tai_ns);
	sv_json_kv_int(j, "last_tai_ns", k->last_tai_ns);
	sv_json_kv_double(j, "hours", soak_hours(k));
	sv_json_kv_uint(j, "interval_ms", k->period_ms);
	sv_json_kv_bool(j, "mixed_intervals", k->mixed_periods);
	sv_json_kv_uint(j, "intervals", k->intervals);
	sv_json_kv_uint(j, "histograms", k->hists);
	sv_json_kv_uint(j, "clock_steps", k->clock_steps);
	sv_json_kv_uint(j, "run_restarts", k->gaps);
	sv_json_kv_uint(j, "why_records", k->whys);
	sv_json_key(j, "windows");
	sv_json_object_begin(j);
	sv_json_kv_uint(j, "kept", k->windows);
	for (unsigned pass = 0; pass < 2; pass++) {
		sv_json_key(j, pass ? "refused_by_class" : "kept_by_class");
		sv_json_object_begin(j);
		for (unsigned c = 0; c < SV_WINDOW_CLASSES; c++)
			sv_json_kv_uint(j, sv_rec_window_class_name(c), pass ? k->refused_cls[c] : k->windows_cls[c]);
		sv_json_object_end(j);
	}
	sv_json_kv_uint(j, "refused_busy", k->refused_busy);
	sv_json_object_end(j);
	sv_json_key(j, "verdict");
	sv_json_object_begin(j);
	sv_json_kv_str(j, "verdict", verdict_of(o));
	sv_json_kv_str(j, "why", se->why);
	sv_json_key(j, "checks");
	sv_json_array_begin(j);
	for (unsigned i = 0; i < se->nres; i++) {
		const struct svr_soak_result *res = &se->res[i];
		const struct svr_budget *bu = &o->b->b[res->budget];

		sv_json_object_begin(j);
		json_hop_name(j, o->r, &k->hops[res->hop]);
		sv_json_kv_str(j, "statistic", svr_stat_name(bu->stat));
		sv_json_kv_int(j, "limit", bu->limit);
		sv_json_kv_int(j, "value", res->value);
		sv_json_kv_int(j, "error_ns", res->err);
		sv_json_kv_bool(j, "pass", res->pass);
		sv_json_object_end(j);
	}
	sv_json_array_end(j);
	sv_json_object_end(j);
	sv_json_key(j, "hops");
	sv_json_array_begin(j);
	for (unsigned i = 0; i < k->nhops; i++) {
		const struct svr_soak_hop *h = &k->hops[i];
		struct sv_stats_summary s;

		svr_soak_hop_summary(h, &s);
		sv_json_object_begin(j);
		json_hop_name(j, o->r, h);
		sv_json_kv_uint(j, "intervals", h->intervals);
		sv_json_kv_uint(j, "histograms", h->hists);
		sv_json_kv_uint(j, "frames", h->frames);
		sv_json_kv_uint(j, "samples", h->samples);
		sv_json_kv_uint(j, "count", h->count);
		sv_json_kv_uint(j, "late", h->late);
		sv_json_kv_uint(j, "lost", h->lost);
		sv_json_kv_uint(j, "missing", h->missing);
		sv_json_kv_uint(j, "dropped", h->dropped);
		sv_json_kv_uint(j, "duplicate", h->duplicate);
		sv_json_kv_uint(j, "reordered", h->reordered);
		sv_json_kv_uint(j, "outliers", h->outliers);
		sv_json_kv_uint(j, "errors", h->errors);
		sv_json_kv_uint(j, "restarts", h->restarts);
		sv_json_kv_uint(j, "changes", h->changes);
		sv_json_kv_uint(j, "strays", h->strays);
		sv_json_kv_uint(j, "saturated_intervals", h->saturated);
		sv_json_key(j, "latency_ns");
		sv_stats_summary_json(j, &s);
		sv_json_key(j, "worst");
		sv_json_object_begin(j);
		sv_json_kv_int(j, "latency_ns", h->worst_ns);
		sv_json_kv_str(j, "stream", h->worst_stream < svr_nstreams(o->r) ? stream_name(o->r, h->worst_stream)
										 : NULL);
		sv_json_kv_uint(j, "tai_sec", h->worst_tai_sec);
		sv_json_kv_uint(j, "smp_cnt", h->worst_smp_cnt);
		sv_json_object_end(j);
		sv_json_object_end(j);
	}
	sv_json_array_end(j);
	sv_json_object_end(j);
}

void svr_json_soak_timeline(struct svr_out *o)
{
	const struct svr_soak *k = svr_soak_get(o->r);
	struct sv_json *j = o->j;

	if (!json_soak_key(o, "soak_timeline"))
		return;
	sv_json_object_begin(j);
	sv_json_kv_int(j, "t0_tai_sec", k->t0_sec);
	sv_json_kv_uint(j, "point_seconds", k->pt_width_s);
	sv_json_key(j, "hops");
	sv_json_array_begin(j);
	for (unsigned i = 0; i < k->nhops; i++) {
		const struct svr_soak_hop *h = &k->hops[i];

		sv_json_object_begin(j);
		json_hop_name(j, o->r, h);
		/* points with data: [offset_s, intervals, p50, p99, max, late, lost, dropped, window] */
		sv_json_key(j, "points");
		sv_json_array_begin(j);
		for (unsigned p = 0; p < k->npts; p++) {
			const struct svr_soak_point *pt = &h->pts[p];

			if (!pt->intervals && !pt->lost && !pt->late && !pt->dropped && !pt->window)
				continue;
			sv_json_array_begin(j);
			sv_json_uint(j, (uint64_t)p * k->pt_width_s);
			sv_json_uint(j, pt->intervals);
			sv_json_int(j, pt->p50);
			sv_json_int(j, pt->p99);
			sv_json_int(j, pt->max);
			sv_json_uint(j, pt->late);
			sv_json_uint(j, pt->lost);
			sv_json_uint(j, pt->dropped);
			sv_json_bool(j, pt->window);
			sv_json_array_end(j);
		}
		sv_json_array_end(j);
		sv_json_object_end(j);
	}
	sv_json_array_end(j);
	sv_json_object_end(j);
}

void svr_json_soak_hours(struct svr_out *o)
{
	const struct svr_soak *k = svr_soak_get(o->r);
	struct sv_json *j = o->j;

	if (!json_soak_key(o, "soak_hours"))
		return;
	sv_json_object_begin(j);
	sv_json_kv_uint(j, "row_seconds", k->hour_s);
	sv_json_key(j, "rows");
	sv_json_array_begin(j);
	for (unsigned i = 0; i < k->nhours; i++) {
		const struct svr_soak_hour *h = &k->hours[i];

		sv_json_object_begin(j);
		sv_json_kv_int(j, "tai_sec", k->t0_sec + (int64_t)i * k->hour_s);
		sv_json_kv_uint(j, "intervals", h->intervals);
		sv_json_kv_uint(j, "frames", h->frames);
		sv_json_kv_uint(j, "late", h->late);
		sv_json_kv_uint(j, "lost", h->lost);
		sv_json_kv_uint(j, "missing", h->missing);
		sv_json_kv_uint(j, "dropped", h->dropped);
		sv_json_kv_uint(j, "restarts", h->restarts);
		sv_json_kv_uint(j, "changes", h->changes);
		sv_json_kv_uint(j, "windows", h->windows);
		sv_json_key(j, "hops");
		sv_json_array_begin(j);
		for (unsigned hp = 0; hp < k->nhops; hp++) {
			if (!k->hops[hp].hour_max[i])
				continue;
			sv_json_object_begin(j);
			json_hop_name(j, o->r, &k->hops[hp]);
			sv_json_kv_int(j, "p99_ns", k->hops[hp].hour_p99[i]);
			sv_json_kv_int(j, "max_ns", k->hops[hp].hour_max[i]);
			sv_json_object_end(j);
		}
		sv_json_array_end(j);
		sv_json_object_end(j);
	}
	sv_json_array_end(j);
	sv_json_object_end(j);
}

void svr_json_soak_worst(struct svr_out *o)
{
	const struct svr_soak *k = svr_soak_get(o->r);
	struct sv_json *j = o->j;

	if (!json_soak_key(o, "soak_worst"))
		return;
	sv_json_array_begin(j);
	for (unsigned i = 0; i < k->nworst; i++) {
		const struct svr_soak_worst *w = &k->worst[i];

		sv_json_object_begin(j);
		json_hop_name(j, o->r, &k->hops[w->hop]);
		sv_json_kv_str(j, "file", svr_file(o->r, w->file)->path);
		sv_json_kv_uint(j, "interval_tai_sec", w->tai_sec);
		sv_json_kv_uint(j, "interval_ms", w->period_ms);
		sv_json_kv_str(j, "stream", w->stream < svr_nstreams(o->r) ? stream_name(o->r, w->stream) : NULL);
		sv_json_kv_uint(j, "tai_sec", w->worst_tai_sec);
		sv_json_kv_uint(j, "smp_cnt", w->worst_smp_cnt);
		sv_json_kv_int(j, "latency_ns", w->worst_ns);
		sv_json_kv_uint(j, "late", w->late);
		sv_json_kv_bool(j, "why_flagged", w->flags & SV_REC_INTERVAL_F_WHY);
		sv_json_key(j, "why");
		if (!w->why_found) {
			sv_json_null(j);
		} else {
			char hn[16];

			sv_hop_format(w->why_from, w->why_to, hn, sizeof(hn));
			sv_json_object_begin(j);
			sv_json_kv_str(j, "hop", hn);
			sv_json_kv_int(j, "hop_ns", w->why_ns);
			sv_json_key(j, "causes");
			sv_json_array_begin(j);
			for (unsigned c = 0; c < w->ncauses; c++) {
				sv_json_object_begin(j);
				sv_json_kv_str(j, "cause", sv_rec_why_cause_name(w->cause[c]));
				sv_json_kv_int(j, "ns", w->cause_ns[c]);
				sv_json_object_end(j);
			}
			sv_json_array_end(j);
			sv_json_object_end(j);
		}
		sv_json_object_end(j);
	}
	sv_json_array_end(j);
}

void svr_json_soak_events(struct svr_out *o)
{
	const struct svr_soak *k = svr_soak_get(o->r);
	struct sv_json *j = o->j;

	if (!json_soak_key(o, "soak_events"))
		return;
	sv_json_object_begin(j);
	for (unsigned pass = 0; pass < 2; pass++) {
		sv_json_key(j, pass ? "unlisted" : "total");
		sv_json_object_begin(j);
		for (unsigned c = 0; c < SVR_SOAK_EV__COUNT; c++)
			sv_json_kv_uint(j, svr_soak_ev_name(c), pass ? k->events_unlisted[c] : k->events_total[c]);
		sv_json_object_end(j);
	}
	sv_json_key(j, "events");
	sv_json_array_begin(j);
	for (unsigned i = 0; i < k->nevents; i++) {
		const struct svr_soak_event *ev = &k->events[i];
		char where[64], what[512];

		event_where(o->r, ev, where, sizeof(where));
		event_what(o->r, ev, what, sizeof(what));
		sv_json_object_begin(j);
		sv_json_kv_int(j, "tai_ns", ev->t_ns);
		sv_json_kv_int(j, "end_tai_ns", ev->end_ns);
		sv_json_kv_double(j, "hours", ((double)ev->t_ns / 1e9 - (double)k->t0_sec) / 3600);
		sv_json_kv_str(j, "kind", svr_soak_ev_name(ev->kind));
		sv_json_kv_str(j, "stream", ev->stream < svr_nstreams(o->r) ? stream_name(o->r, ev->stream) : NULL);
		sv_json_kv_str(j, "where", where);
		sv_json_kv_str(j, "guest", svr_out_guest(o->r, ev->guest, NULL));
		sv_json_kv_str(j, "file", svr_file(o->r, ev->file)->path);
		sv_json_kv_str(j, "tool", svr_file(o->r, ev->file)->tool);
		sv_json_kv_str(j, "host", svr_file(o->r, ev->file)->host);
		sv_json_kv_int(j, "value", ev->value);
		if (ev->kind == SVR_SOAK_EV_WINDOW) {
			sv_json_kv_str(j, "class", sv_rec_window_class_name(ev->cls));
			sv_json_kv_uint(j, "triggers", ev->triggers);
			sv_json_kv_uint(j, "flags", ev->flags);
			sv_json_key(j, "joined_with");
			sv_json_array_begin(j);
			for (unsigned f = 0; f < 64; f++)
				if (ev->joined >> f & 1)
					sv_json_string(j, svr_file(o->r, f)->path);
			sv_json_array_end(j);
		} else if (ev->kind != SVR_SOAK_EV_GAP && ev->kind != SVR_SOAK_EV_STEP) {
			sv_json_kv_uint(j, "hops", ev->hops);
		} else if (ev->kind == SVR_SOAK_EV_GAP) {
			sv_json_kv_bool(j, "killed", ev->flags & 1);
		}
		sv_json_kv_str(j, "what", what);
		sv_json_object_end(j);
	}
	sv_json_array_end(j);
	sv_json_object_end(j);
}

/* ---- HTML ---- */

static void html_cell(FILE *f, const char *s)
{
	fputs("<td>", f);
	svr_html_esc(f, s);
	fputs("</td>", f);
}

void svr_html_soak(struct svr_out *o)
{
	const struct svr_soak *k = svr_soak_get(o->r);
	const struct svr_soak_eval *se = &o->e->soak;
	FILE *f = o->f;
	char a[64], z[64], lbl[48];

	if (!k)
		return;
	when(o->r, k, k->first_tai_ns, a, sizeof(a));
	when(o->r, k, k->last_tai_ns, z, sizeof(z));
	fputs("<h2>Soak</h2>\n<p>", f);
	svr_html_esc(f, a);
	fputs(" to ", f);
	svr_html_esc(f, z);
	fprintf(f, ": %.1f h in intervals of %u ms; %" PRIu64 " intervals, %" PRIu64 " windows kept, %" PRIu64
		   " clock step(s), %" PRIu64 " run restart(s).</p>\n<p>Verdict over the whole soak: "
		   "<span class=\"verdict %s\">%s</span> (",
		soak_hours(k), k->period_ms, k->intervals, k->windows,
		k->clock_steps, k->gaps, verdict_of(o), verdict_of(o));
	svr_html_esc(f, se->why);
	fputs(")</p>\n<p>A soak record's frames are its windows' only, all the per-frame sections above show of it; "
	      "the soak's sections cover the whole soak.</p>\n<table><tr><th>hop</th><th>count</th><th>late</th><th>lost</th><th>missing</th><th>dropped</th>"
	      "<th>min</th><th>p50</th><th>p99</th><th>p99.9</th><th>max</th></tr>\n", f);
	for (unsigned i = 0; i < k->nhops; i++) {
		const struct svr_soak_hop *h = &k->hops[i];
		struct sv_stats_summary s;
		char v[5][64], e[24];

		svr_soak_hop_summary(h, &s);
		hop_label(o->r, h, lbl, sizeof(lbl));
		sv_stats_format_ns(s.min, v[0], sizeof(v[0]));
		sv_stats_format_ns(s.max, v[4], sizeof(v[4]));
		for (unsigned q = 0; q < 3; q++) {
			int64_t val = q == 0 ? s.p50 : q == 1 ? s.p99 : s.p999;
			int64_t err = q == 0 ? s.p50_err : q == 1 ? s.p99_err : s.p999_err;
			char x[24];

			sv_stats_format_ns(val, x, sizeof(x));
			sv_stats_format_ns(err, e, sizeof(e));
			snprintf(v[1 + q], sizeof(v[1 + q]), "%s &plusmn;%s", x, e);
		}
		fputs("<tr>", f);
		html_cell(f, lbl);
		fprintf(f, "<td>%" PRIu64 "</td><td>%" PRIu64 "</td><td>%" PRIu64 "</td><td>%" PRIu64 "</td><td>%" PRIu64
			   "</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
			s.count, h->late, h->lost, h->missing, h->dropped, s.count ? v[0] : "-", s.count ? v[1] : "-",
			s.count ? v[2] : "-", s.count ? v[3] : "-", s.count ? v[4] : "-");
	}
	fputs("</table>\n", f);
	if (se->nres) {
		fputs("<table><tr><th>budget</th><th>hop</th><th>value</th><th>limit</th><th></th></tr>\n", f);
		for (unsigned i = 0; i < se->nres; i++) {
			const struct svr_soak_result *res = &se->res[i];
			const struct svr_budget *bu = &o->b->b[res->budget];
			char v[32], lim[32];

			hop_label(o->r, &k->hops[res->hop], lbl, sizeof(lbl));
			svr_out_budget_value(bu, res->value, " frames", v, sizeof(v));
			svr_out_budget_value(bu, bu->limit, " frames", lim, sizeof(lim));
			fprintf(f, "<tr><td>%s</td>", svr_stat_name(bu->stat));
			html_cell(f, lbl);
			fprintf(f, "<td>%s</td><td>%s</td><td%s>%s</td></tr>\n", v, lim,
				res->pass ? "" : " class=\"bad\"", res->pass ? "ok" : "EXCEEDED");
		}
		fputs("</table>\n", f);
	}
}

void svr_html_soak_timeline(struct svr_out *o)
{
	const struct svr_soak *k = svr_soak_get(o->r);

	if (!k)
		return;
	fputs("<h2>Soak timeline</h2>\n<p>Each point holds the largest p50, p99 and max of the intervals it covers; "
	      "dashed horizontal lines: the budgets; orange ticks: windows kept; red marks: losses or drops; grey: "
	      "a tool's run restarted (not recorded).</p>\n", o->f);
	for (unsigned i = 0; i < k->nhops; i++)
		if (k->hops[i].hists)
			svr_plot_soak_timeline(o->f, o->r, i, o->b);
}

void svr_html_soak_hours(struct svr_out *o)
{
	const struct svr_soak *k = svr_soak_get(o->r);
	FILE *f = o->f;

	if (!k)
		return;
	fprintf(f, "<h2>Soak, hour by hour</h2>\n<table><tr><th>from</th><th>intervals</th><th>frames</th>"
		   "<th>late</th><th>lost</th><th>missing</th><th>dropped</th><th>restarts</th><th>windows</th>"
		   "<th>worst</th><th>at</th></tr>\n");
	for (unsigned i = 0; i < k->nhours; i++) {
		const struct svr_soak_hour *h = &k->hours[i];
		char t[64], w[24] = "-", lbl[48] = "-";

		when(o->r, k, (k->t0_sec + (int64_t)i * k->hour_s) * SV_NSEC_PER_SEC, t, sizeof(t));
		if (h->worst_hop >= 0) {
			sv_stats_format_ns(h->worst_ns, w, sizeof(w));
			hop_label(o->r, &k->hops[h->worst_hop], lbl, sizeof(lbl));
		}
		fputs("<tr>", f);
		html_cell(f, t);
		fprintf(f, "<td>%u</td><td>%" PRIu64 "</td><td>%" PRIu64 "</td><td>%" PRIu64 "</td><td>%" PRIu64
			   "</td><td>%" PRIu64 "</td><td>%" PRIu64 "</td><td>%u</td><td>%s</td>",
			h->intervals, h->frames, h->late, h->lost, h->missing, h->dropped, h->restarts, h->windows, w);
		html_cell(f, lbl);
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

void svr_html_soak_worst(struct svr_out *o)
{
	const struct svr_soak *k = svr_soak_get(o->r);
	FILE *f = o->f;

	if (!k || !k->nworst)
		return;
	fputs("<h2>Soak, the worst intervals</h2>\n<table><tr><th>interval</th><th>hop</th><th>worst</th>"
	      "<th>svID</th><th>second</th><th>smpCnt</th><th>late</th><th>why late</th></tr>\n", f);
	for (unsigned i = 0; i < k->nworst; i++) {
		const struct svr_soak_worst *w = &k->worst[i];
		char t[64], v[24], lbl[48], why[256];

		when(o->r, k, (int64_t)w->tai_sec * SV_NSEC_PER_SEC, t, sizeof(t));
		sv_stats_format_ns(w->worst_ns, v, sizeof(v));
		hop_label(o->r, &k->hops[w->hop], lbl, sizeof(lbl));
		why_text(w, why, sizeof(why));
		fputs("<tr>", f);
		html_cell(f, t);
		html_cell(f, lbl);
		html_cell(f, v);
		html_cell(f, stream_name(o->r, w->stream));
		fprintf(f, "<td>%u</td><td>%u</td><td>%u</td>", w->worst_tai_sec, w->worst_smp_cnt, w->late);
		html_cell(f, why);
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

void svr_html_soak_events(struct svr_out *o)
{
	const struct svr_soak *k = svr_soak_get(o->r);
	FILE *f = o->f;
	uint64_t unlisted = 0;

	if (!k)
		return;
	fprintf(f, "<h2>Soak events (%u)</h2>\n<table><tr><th>time</th><th>event</th><th>svID</th><th>where</th>"
		   "<th>what</th></tr>\n", k->nevents);
	for (unsigned i = 0; i < k->nevents; i++) {
		const struct svr_soak_event *ev = &k->events[i];
		char t[64], where[64], what[512];

		when(o->r, k, ev->t_ns, t, sizeof(t));
		event_where(o->r, ev, where, sizeof(where));
		event_what(o->r, ev, what, sizeof(what));
		fputs("<tr>", f);
		html_cell(f, t);
		html_cell(f, svr_soak_ev_name(ev->kind));
		html_cell(f, stream_name(o->r, ev->stream));
		html_cell(f, where);
		html_cell(f, what);
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
	for (unsigned c = 0; c < SVR_SOAK_EV__COUNT; c++)
		unlisted += k->events_unlisted[c];
	if (unlisted)
		fprintf(f, "<p>%" PRIu64 " more events not listed (the first %u are).</p>\n", unlisted, SVR_SOAK_EVENTS);
}

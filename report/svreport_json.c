// SPDX-License-Identifier: Apache-2.0
/* svreport's JSON document: one emitter per section (svreport_out.h), each one key of the top object. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "svreport_out.h"

void svr_json_verdict(struct svr_out *o)
{
	sv_json_kv_str(o->j, "verdict", svr_verdict_name(o->e->verdict));
	sv_json_kv_str(o->j, "why", o->e->why);
}

static void json_strings(struct sv_json *j, const char *key, const char (*s)[160], unsigned n)
{
	sv_json_key(j, key);
	sv_json_array_begin(j);
	for (unsigned i = 0; i < n; i++)
		sv_json_string(j, s[i]);
	sv_json_array_end(j);
}

void svr_json_clock(struct svr_out *o)
{
	const struct svr_clock *c = &o->e->clock;
	struct sv_json *j = o->j;

	sv_json_key(j, "clock");
	sv_json_object_begin(j);
	sv_json_kv_str(j, "status", c->ok ? "ok" : "unsynchronised");
	sv_json_kv_bool(j, "single_host", c->single_host);
	json_strings(j, "reasons", c->reasons, c->nreasons);
	json_strings(j, "notes", c->notes, c->nnotes);
	sv_json_object_end(j);
}

void svr_json_warnings(struct svr_out *o)
{
	sv_json_key(o->j, "warnings");
	sv_json_array_begin(o->j);
	for (unsigned i = 0; i < svr_nwarnings(o->r); i++)
		sv_json_string(o->j, svr_warning(o->r, i));
	sv_json_array_end(o->j);
}

void svr_json_silent(struct svr_out *o)
{
	struct sv_json *j = o->j;

	sv_json_key(j, "silent_guests");
	sv_json_array_begin(j);
	for (unsigned g = 0; g < svr_nguests(o->r); g++) {
		uint64_t lost;

		if (!svr_guest_silent(o->r, g, &lost))
			continue;
		sv_json_object_begin(j);
		sv_json_kv_str(j, "guest", svr_guest_name(o->r, g));
		sv_json_kv_uint(j, "lost", lost);
		sv_json_object_end(j);
	}
	sv_json_array_end(j);
}

static void budget_result(struct svr_out *o, const struct svr_budget_result *res)
{
	struct sv_json *j = o->j;

	sv_json_object_begin(j);
	sv_json_kv_str(j, "guest", svr_out_guest(o->r, res->guest, NULL));
	if (res->unsync) {
		sv_json_kv_null(j, "value");
		sv_json_kv_str(j, "status", "unsynchronised");
	} else if (res->evaluated) {
		sv_json_kv_int(j, "value", res->value);
		sv_json_kv_bool(j, "exact", res->exact);
		if (!res->exact)
			sv_json_kv_int(j, "error", res->err);
		sv_json_kv_str(j, "status", res->pass ? "pass" : "fail");
	} else {
		sv_json_kv_null(j, "value");
		sv_json_kv_str(j, "status", "no data");
	}
	sv_json_object_end(j);
}

void svr_json_budgets(struct svr_out *o)
{
	struct sv_json *j = o->j;

	sv_json_key(j, "budgets");
	sv_json_array_begin(j);
	for (unsigned i = 0; i < o->b->n; i++) {
		const struct svr_budget *bu = &o->b->b[i];
		char hop[16];

		sv_hop_format(bu->from, bu->to, hop, sizeof(hop));
		sv_json_object_begin(j);
		sv_json_kv_str(j, "hop", hop);
		sv_json_kv_str(j, "statistic", svr_stat_name(bu->stat));
		sv_json_kv_int(j, "limit", bu->limit);
		sv_json_kv_str(j, "unit", bu->stat == SVR_STAT_LOST ? "frames" : "ns");
		sv_json_kv_str(j, "guest", bu->guest[0] ? bu->guest : NULL);
		sv_json_key(j, "results");
		sv_json_array_begin(j);
		for (unsigned k = 0; k < o->e->nres[i]; k++)
			budget_result(o, &o->e->res[i][k]);
		sv_json_array_end(j);
		sv_json_object_end(j);
	}
	sv_json_array_end(j);
}

static void file_damage(struct sv_json *j, const struct sv_record_reader_damage *d)
{
	sv_json_key(j, "damage");
	sv_json_object_begin(j);
	sv_json_kv_uint(j, "blocks_skipped", d->blocks_skipped);
	sv_json_kv_uint(j, "octets_skipped", d->octets_skipped);
	sv_json_kv_uint(j, "records_lost", d->records_lost);
	sv_json_kv_bool(j, "records_lost_exact", !d->skips_uncounted);
	sv_json_kv_uint(j, "records_invalid", d->records_invalid);
	sv_json_kv_uint(j, "records_orphaned", d->records_orphaned);
	sv_json_kv_str(j, "first_error", svr_damaged(d) ? sv_record_errname(d->first_err) : NULL);
	if (svr_damaged(d))
		sv_json_kv_uint(j, "first_offset", d->first_offset);
	else
		sv_json_kv_null(j, "first_offset");
	sv_json_object_end(j);
}

/* What the writer could not write (a full disk): UNWRITTEN records, END's count beyond them. */
static void file_unwritten(struct sv_json *j, const struct svr_file_info *fi)
{
	sv_json_key(j, "unwritten");
	sv_json_object_begin(j);
	sv_json_kv_uint(j, "records", fi->unwritten_records);
	sv_json_kv_uint(j, "events", fi->unwritten_events);
	sv_json_key(j, "frames");
	sv_json_object_begin(j);
	for (unsigned p = 0; p < SVR_NPOINTS; p++)
		if (fi->unwritten_frames[p])
			sv_json_kv_uint(j, sv_point_name(p), fi->unwritten_frames[p]);
	sv_json_object_end(j);
	sv_json_kv_uint(j, "stretches", fi->unwritten_stretches);
	sv_json_kv_uint(j, "unlocated", fi->unwritten_unlocated);
	sv_json_kv_str(j, "errno", fi->unwritten_errno ? strerrorname_np(fi->unwritten_errno) : NULL);
	sv_json_kv_str(j, "error", fi->unwritten_errno ? strerror(fi->unwritten_errno) : NULL);
	sv_json_kv_bool(j, "below_floor", fi->unwritten_floor);
	sv_json_kv_uint(j, "end_lost_records", fi->end_lost_records);
	sv_json_object_end(j);
}

void svr_json_files(struct svr_out *o)
{
	struct sv_json *j = o->j;

	sv_json_key(j, "files");
	sv_json_array_begin(j);
	for (unsigned i = 0; i < svr_nfiles(o->r); i++) {
		const struct svr_file_info *fi = svr_file(o->r, i);

		sv_json_object_begin(j);
		sv_json_kv_str(j, "path", fi->path);
		sv_json_kv_str(j, "tool", fi->tool);
		sv_json_kv_str(j, "host", fi->host);
		sv_json_kv_str(j, "guest", fi->guest[0] ? fi->guest : NULL);
		sv_json_kv_str(j, "clock", sv_clock_name(fi->clock));
		sv_json_kv_bool(j, "synchronised", fi->sync_ok);
		sv_json_kv_uint(j, "parts", fi->parts);
		sv_json_kv_uint(j, "records", fi->records);
		sv_json_kv_uint(j, "events", fi->events);
		sv_json_kv_bool(j, "clean_end", fi->clean_end);
		file_damage(j, &fi->damage);
		file_unwritten(j, fi);
		sv_json_kv_str(j, "error", fi->err ? fi->errmsg : NULL);
		sv_json_object_end(j);
	}
	sv_json_array_end(j);
}

void svr_json_streams(struct svr_out *o)
{
	struct sv_json *j = o->j;

	sv_json_key(j, "streams");
	sv_json_array_begin(j);
	for (unsigned s = 0; s < svr_nstreams(o->r); s++) {
		const struct svr_stream_info *st = svr_stream(o->r, s);

		sv_json_object_begin(j);
		sv_json_kv_str(j, "svID", st->svid);
		sv_json_kv_uint(j, "appid", st->appid);
		sv_json_kv_uint(j, "sample_rate", st->rate);
		sv_json_kv_uint(j, "asdus", st->asdus);
		sv_json_object_end(j);
	}
	sv_json_array_end(j);
}

void svr_json_guests(struct svr_out *o)
{
	sv_json_key(o->j, "guests");
	sv_json_array_begin(o->j);
	for (unsigned g = 0; g < svr_nguests(o->r); g++)
		sv_json_string(o->j, svr_guest_name(o->r, g));
	sv_json_array_end(o->j);
}

/* how the run was set up (the lab: its switch, datapath, what the switch dropped) */
void svr_json_setup(struct svr_out *o)
{
	sv_json_key(o->j, "setup");
	sv_json_array_begin(o->j);
	for (unsigned i = 0; svr_setup(o->r, i); i++)
		sv_json_string(o->j, svr_setup(o->r, i));
	sv_json_array_end(o->j);
}

/* what each guest stands for (the lab: which traffic class, which noise), null when not told */
void svr_json_labels(struct svr_out *o)
{
	sv_json_key(o->j, "guest_labels");
	sv_json_object_begin(o->j);
	for (unsigned g = 0; g < svr_nguests(o->r); g++) {
		if (svr_guest_label(o->r, g))
			sv_json_kv_str(o->j, svr_guest_name(o->r, g), svr_guest_label(o->r, g));
		else
			sv_json_kv_null(o->j, svr_guest_name(o->r, g));
	}
	sv_json_object_end(o->j);
}

void svr_json_missing_points(struct svr_out *o)
{
	sv_json_key(o->j, "missing_points");
	sv_json_array_begin(o->j);
	for (unsigned p = 0; p < SVR_NPOINTS; p++)
		if (!svr_point_anywhere(o->r, p))
			sv_json_string(o->j, sv_point_name(p));
	sv_json_array_end(o->j);
}

static void hop_row(struct svr_out *o, unsigned a, unsigned b, int guest, int stream)
{
	struct sv_json *j = o->j;
	struct svr_hop h;
	char name[16];

	if (svr_hop_get(o->r, a, b, guest, stream, &h))
		return;
	sv_hop_format(a, b, name, sizeof(name));
	sv_json_object_begin(j);
	sv_json_kv_str(j, "name", name);
	sv_json_kv_str(j, "from", sv_point_name(a));
	sv_json_kv_str(j, "to", sv_point_name(b));
	sv_json_kv_str(j, "guest", svr_out_guest(o->r, guest, NULL));
	sv_json_kv_str(j, "stream", stream < 0 ? NULL : svr_stream(o->r, (unsigned)stream)->svid);
	sv_json_kv_uint(j, "count", h.count);
	sv_json_kv_uint(j, "lost", h.lost);
	sv_json_kv_uint(j, "missing", h.missing);
	sv_json_kv_str(j, "source", h.from_summaries ? "summaries" : "frames");
	sv_json_kv_bool(j, "exact", h.lat.exact);
	sv_json_kv_bool(j, "cross_host", h.cross_host);
	sv_json_kv_bool(j, "synchronised", !svr_hop_unsync(&o->e->clock, &h));
	sv_json_key(j, "latency_ns");
	h.lat.count = h.count;
	sv_stats_summary_json(j, &h.lat);
	sv_json_object_end(j);
}

void svr_json_hops(struct svr_out *o)
{
	sv_json_key(o->j, "hops");
	sv_json_array_begin(o->j);
	svr_out_hops(o, SVR_ROWS_EACH, hop_row);
	sv_json_array_end(o->j);
}

static void json_stats(struct sv_json *j, const char *key, const struct sv_stats *h)
{
	struct sv_stats_summary s;

	memset(&s, 0, sizeof(s));
	if (h)
		sv_stats_summarize(h, &s);
	sv_json_key(j, key);
	sv_stats_summary_json(j, &s);
}

static void point_row(struct svr_out *o, unsigned p, int g, const struct svr_point_stats *ps, void *arg)
{
	struct sv_json *j = o->j;

	(void)arg;
	sv_json_object_begin(j);
	sv_json_kv_str(j, "point", sv_point_name(p));
	sv_json_kv_str(j, "guest", svr_out_guest(o->r, g, NULL));
	sv_json_kv_uint(j, "frames", ps->frames);
	sv_json_kv_uint(j, "duplicates", ps->duplicates);
	sv_json_kv_uint(j, "reordered", ps->reordered);
	sv_json_kv_uint(j, "dropped", ps->dropped);
	sv_json_kv_uint(j, "missing", ps->missing);
	sv_json_kv_uint(j, "not_recorded", ps->not_recorded);
	sv_json_key(j, "pacing");
	sv_json_object_begin(j);
	sv_json_kv_int(j, "nominal_ns", ps->nominal_ns);
	json_stats(j, "interval_ns", ps->pacing);
	sv_json_object_end(j);
	sv_json_object_end(j);
}

void svr_json_points(struct svr_out *o)
{
	sv_json_key(o->j, "points");
	sv_json_array_begin(o->j);
	svr_out_points(o, point_row, NULL);
	sv_json_array_end(o->j);
}

static void late_entry(struct svr_out *o, const struct svr_late *l)
{
	const struct svr_stream_info *st = svr_stream(o->r, l->stream);
	struct sv_json *j = o->j;

	sv_json_object_begin(j);
	sv_json_kv_str(j, "svID", st ? st->svid : NULL);
	sv_json_kv_uint(j, "smpCnt", l->smp_cnt);
	/* svtrace's late keys (hop, egress, hop_ns), then svreport's own (point, guest) */
	if (l->has_hop) {
		char hop[16];

		sv_hop_format(l->hop_from, l->point, hop, sizeof(hop));
		sv_json_kv_str(j, "hop", hop);
	} else {
		sv_json_kv_null(j, "hop");
	}
	sv_json_kv_str(j, "egress", svr_out_guest(o->r, l->guest, NULL));
	if (l->has_hop)
		sv_json_kv_int(j, "hop_ns", l->hop_ns);
	else
		sv_json_kv_null(j, "hop_ns");
	sv_json_kv_str(j, "point", sv_point_name(l->point));
	sv_json_kv_str(j, "guest", svr_out_guest(o->r, l->guest, NULL));
	sv_json_kv_str(j, "feeder_thread", l->feeder_comm);
	sv_json_kv_uint(j, "feeder_tid", l->feeder_tid);
	sv_json_kv_int(j, "wait_ns", l->wait_ns);
	if (svr_late_unheld(l)) {
		sv_json_kv_null(j, "holder_thread");
		sv_json_kv_null(j, "holder_pid");
		sv_json_kv_null(j, "holder_policy");
		sv_json_kv_null(j, "holder_prio");
	} else {
		sv_json_kv_str(j, "holder_thread", l->holder_comm);
		sv_json_kv_uint(j, "holder_pid", l->holder_pid);
		sv_json_kv_str(j, "holder_policy", sv_sched_policy_name(l->holder_policy));
		sv_json_kv_uint(j, "holder_prio", l->holder_prio);
	}
	sv_json_kv_str(j, "cause", sv_rec_wait_cause_name(l->cause));
	sv_json_object_end(j);
}

static void holder_entry(struct sv_json *j, const struct svr_holder *h)
{
	sv_json_object_begin(j);
	if (!h->comm[0]) {	/* the frames nobody's run delayed */
		sv_json_kv_null(j, "holder_thread");
		sv_json_kv_null(j, "holder_policy");
		sv_json_kv_null(j, "holder_prio");
	} else {
		sv_json_kv_str(j, "holder_thread", h->comm);
		sv_json_kv_str(j, "holder_policy", sv_sched_policy_name(h->policy));
		sv_json_kv_uint(j, "holder_prio", h->prio);
	}
	sv_json_kv_uint(j, "count", h->count);
	sv_json_kv_int(j, "total_wait_ns", h->total_ns);
	sv_json_kv_int(j, "max_wait_ns", h->max_ns);
	sv_json_object_end(j);
}

void svr_json_late(struct svr_out *o)
{
	sv_json_key(o->j, "late");
	sv_json_array_begin(o->j);
	for (unsigned i = 0; i < svr_nlate(o->r); i++)
		late_entry(o, svr_late_get(o->r, i));
	sv_json_array_end(o->j);
	sv_json_key(o->j, "late_by_holder");
	sv_json_array_begin(o->j);
	for (unsigned i = 0; i < svr_nholders(o->r); i++)
		holder_entry(o->j, svr_holder_get(o->r, i));
	sv_json_array_end(o->j);
}

void svr_json_drops(struct svr_out *o)
{
	struct sv_json *j = o->j;

	sv_json_key(j, "drops");
	sv_json_array_begin(j);
	for (unsigned i = 0; i < svr_ndrops(o->r); i++) {
		const struct svr_drop *d = svr_drop_get(o->r, i);

		sv_json_object_begin(j);
		sv_json_kv_str(j, "point", sv_point_name(d->point));
		sv_json_kv_str(j, "guest", svr_out_guest(o->r, d->guest, NULL));
		sv_json_kv_str(j, "reason", d->name);
		sv_json_kv_uint(j, "count", d->count);
		sv_json_object_end(j);
	}
	sv_json_array_end(j);
}

void svr_json_cyclictest(struct svr_out *o)
{
	const struct svr_cyclic *ct = o->ct;
	struct sv_json *j = o->j;

	sv_json_key(j, "cyclictest");
	if (!ct || !ct->present) {
		sv_json_null(j);
		return;
	}
	sv_json_object_begin(j);
	sv_json_kv_str(j, "file", ct->path);
	sv_json_kv_uint(j, "threads", ct->threads);
	sv_json_kv_uint(j, "cycles", ct->total);
	sv_json_kv_int(j, "min_ns", ct->min_us * 1000);
	sv_json_kv_int(j, "avg_ns", ct->avg_us * 1000);
	sv_json_kv_int(j, "max_ns", ct->max_us * 1000);
	sv_json_kv_uint(j, "overflows", ct->overflows);
	sv_json_object_end(j);
}

void svr_json_totals(struct svr_out *o)
{
	const struct svr_totals *t = svr_totals(o->r);
	struct sv_json *j = o->j;

	sv_json_key(j, "totals");
	sv_json_object_begin(j);
	sv_json_kv_uint(j, "frames", t->frames);
	sv_json_kv_uint(j, "events", t->events);
	sv_json_kv_uint(j, "summaries", t->summaries);
	sv_json_kv_uint(j, "hists", t->hists);
	sv_json_kv_uint(j, "not_joinable", t->not_joinable);
	sv_json_kv_uint(j, "too_late", t->too_late);
	sv_json_kv_uint(j, "window_full", t->window_full);
	sv_json_kv_uint(j, "too_many_guests", t->too_many_guests);
	sv_json_kv_uint(j, "skipped", t->skipped);
	sv_json_kv_uint(j, "outage_lost", t->outage_lost);
	sv_json_kv_uint(j, "not_recorded", t->not_recorded);
	sv_json_kv_uint(j, "exact_fallbacks", t->exact_dropped);
	sv_json_kv_uint(j, "realigned", t->realigned);
	sv_json_kv_uint(j, "rekeyed", t->rekeyed);
	sv_json_object_end(j);
}

// SPDX-License-Identifier: Apache-2.0
/* svreport's terminal summary and JSON document. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "sv_json.h"
#include "svreport.h"

static const char *gname(const struct svr *r, int g)
{
	return g < 0 ? "-" : svr_guest_name(r, (unsigned)g);
}

int svr_file_unwritten_format(const struct svr_file_info *fi, char *buf, size_t size)
{
	char frames[128] = "";
	size_t used = 0;
	int e = fi->unwritten_errno;

	if (size)
		buf[0] = '\0';
	if (!fi->unwritten_records)
		return 0;
	for (unsigned p = 0; p < SVR_NPOINTS && used < sizeof(frames); p++) {
		int n;

		if (!fi->unwritten_frames[p])
			continue;
		n = snprintf(frames + used, sizeof(frames) - used, "%s%s %" PRIu64 " frames", used ? ", " : ": ",
			     sv_point_name(p), fi->unwritten_frames[p]);
		if (n < 0)
			break;
		used += (size_t)n;
	}
	return snprintf(buf, size, "%" PRIu64 " records (%" PRIu64 " events%s) in %" PRIu64 " stretch%s%s%s%s%s%s%s",
			fi->unwritten_records, fi->unwritten_events, frames, fi->unwritten_stretches,
			fi->unwritten_stretches == 1 ? "" : "es", e ? ": " : "", e ? strerrorname_np(e) : "",
			e ? " (" : "", e ? strerror(e) : "", e ? ")" : "",
			fi->unwritten_unlocated ? "; an older writer's END counts some without saying where: taken as "
						  "its tail" : "");
}

static void fmt_ns(int64_t v, bool valid, char *buf, size_t n)
{
	if (!valid)
		snprintf(buf, n, "-");
	else
		sv_stats_format_ns(v, buf, n);
}

static void text_hop(struct svr *r, const struct svr_eval *e, FILE *f, unsigned a, unsigned b, int guest,
		     int stream)
{
	struct svr_hop h;
	char name[16], v[6][24];
	const char *tilde;

	if (svr_hop_get(r, a, b, guest, stream, &h))
		return;
	sv_hop_format(a, b, name, sizeof(name));
	fmt_ns(h.lat.min, h.count > 0, v[0], 24);
	fmt_ns(h.lat.p50, h.count > 0, v[1], 24);
	fmt_ns(h.lat.p99, h.count > 0, v[2], 24);
	fmt_ns(h.lat.p999, h.count > 0, v[3], 24);
	fmt_ns(h.lat.p9999, h.count > 0, v[4], 24);
	fmt_ns(h.lat.max, h.count > 0, v[5], 24);
	tilde = h.lat.exact || !h.count ? " " : "~";
	fprintf(f, "  %-8s %-12.12s %-14.14s %9" PRIu64 " %6" PRIu64 " %6" PRIu64 " %9s %s%-8s %s%-8s %s%-8s %s%-8s %9s%s%s\n",
		name, gname(r, guest), stream < 0 ? "(all)" : svr_stream(r, (unsigned)stream)->svid, h.count,
		h.lost, h.missing, v[0], tilde, v[1], tilde, v[2], tilde, v[3], tilde, v[4], v[5],
		h.from_summaries ? "  (summaries)" : "", h.count && svr_hop_unsync(&e->clock, &h) ? "  (unsynchronised)" : "");
}

bool svr_damaged(const struct sv_record_reader_damage *d)
{
	return d->blocks_skipped || d->records_invalid || d->records_orphaned;
}

int svr_damage_format(const struct sv_record_reader_damage *d, char *buf, size_t size)
{
	char lost[48];

	if (!d->skips_uncounted)
		snprintf(lost, sizeof(lost), "%" PRIu64 " records lost", d->records_lost);
	else if (d->records_lost)
		snprintf(lost, sizeof(lost), "at least %" PRIu64 " records lost", d->records_lost);
	else
		snprintf(lost, sizeof(lost), "records lost unknown");
	return snprintf(buf, size, "%" PRIu64 " block(s) skipped (%" PRIu64 " octets, %s), %" PRIu64
			" invalid record(s) dropped, %" PRIu64 " orphaned; first: %s at offset %" PRIu64,
			d->blocks_skipped, d->octets_skipped, lost, d->records_invalid, d->records_orphaned,
			sv_record_errname(d->first_err), d->first_offset);
}

int svr_write_text(struct svr *r, const struct svr_budgets *b, const struct svr_eval *e,
		   const struct svr_cyclic *ct, FILE *f)
{
	const struct svr_totals *t = svr_totals(r);
	uint8_t pairs[64][2];
	char buf[64], buf2[64], buf3[64];

	fprintf(f, "svreport: %u file(s), %u stream(s), %u guest(s), %" PRIu64 " frames joined\n", svr_nfiles(r),
		svr_nstreams(r), svr_nguests(r), t->frames);
	for (unsigned i = 0; i < svr_nfiles(r); i++) {
		const struct svr_file_info *fi = svr_file(r, i);

		char parts[32] = "";

		if (fi->parts > 1)
			snprintf(parts, sizeof(parts), " in %u parts", fi->parts);
		fprintf(f, "  %s: %s on %s%s%s, %" PRIu64 " records%s%s%s%s\n", fi->path, fi->tool[0] ? fi->tool : "?",
			fi->host, fi->guest[0] ? ", guest " : "", fi->guest, fi->records, parts,
			fi->clean_end ? "" : " (no END record: writer stopped abruptly)", fi->err ? ": " : "",
			fi->err ? fi->errmsg : "");
		if (svr_damaged(&fi->damage)) {
			char dmg[256];

			svr_damage_format(&fi->damage, dmg, sizeof(dmg));
			fprintf(f, "  ! %s: damaged: %s\n", fi->path, dmg);
		}
		if (fi->unwritten_records) {
			char u[320];

			svr_file_unwritten_format(fi, u, sizeof(u));
			fprintf(f, "  ! %s: its writer could not write %s%s: frames there are not recorded, not lost\n",
				fi->path, u, fi->unwritten_floor ? " (free space below its floor)" : "");
		}
	}
	fprintf(f, "clock: %s%s\n", e->clock.ok ? "ok" : "UNSYNCHRONISED",
		e->clock.single_host ? " (one host, one clock)" : "");
	for (unsigned i = 0; i < e->clock.nreasons; i++)
		fprintf(f, "  ! %s\n", e->clock.reasons[i]);
	for (unsigned i = 0; i < e->clock.nnotes; i++)
		fprintf(f, "  note: %s\n", e->clock.notes[i]);
	for (unsigned i = 0; i < svr_nwarnings(r); i++)
		fprintf(f, "warning: %s\n", svr_warning(r, i));
	for (unsigned g = 0; g < svr_nguests(r); g++) {
		uint64_t lost;

		if (svr_guest_silent(r, g, &lost))
			fprintf(f, "warning: guest %s received no frame: %" PRIu64 " lost toward it (link down?)\n",
				svr_guest_name(r, g), lost);
	}
	for (unsigned p = 0; p < SVR_NPOINTS; p++) {
		if (svr_point_present(r, p, SVR_GUEST_SHARED))
			continue;
		bool any = false;

		for (unsigned g = 0; g < svr_nguests(r); g++)
			any |= svr_point_present(r, p, (int)g);
		if (!any)
			fprintf(f, "no records for %s: hops through it are not measured\n", sv_point_name(p));
	}

	for (unsigned i = 0; svr_setup(r, i); i++)
		fprintf(f, "setup: %s\n", svr_setup(r, i));
	for (unsigned g = 0; g < svr_nguests(r); g++)
		if (svr_guest_label(r, g))
			fprintf(f, "guest %s: %s\n", svr_guest_name(r, g), svr_guest_label(r, g));

	fprintf(f, "\nper hop (latency; ~ = from histograms, error <= 0.8%%)\n");
	fprintf(f, "  %-8s %-12s %-14s %9s %6s %6s %9s %-9s %-9s %-9s %-9s %9s\n", "hop", "guest", "stream", "count",
		"lost", "miss", "min", "p50", "p99", "p99.9", "p99.99", "max");
	for (int g = -1; g < (int)svr_nguests(r); g++) {
		unsigned n = svr_hop_list(r, g, pairs, 64);

		for (unsigned i = 0; i < n; i++) {
			text_hop(r, e, f, pairs[i][0], pairs[i][1], g, -1);
			if (svr_nstreams(r) > 1)
				for (unsigned s = 0; s < svr_nstreams(r); s++)
					text_hop(r, e, f, pairs[i][0], pairs[i][1], g, (int)s);
		}
	}

	if (svr_nguests(r) > 1) {
		fprintf(f, "\nguests side by side (all streams)\n  %-8s %-12s %9s %6s %-9s %-9s %-9s %9s  %s\n", "hop",
			"guest", "count", "lost", "p50", "p99", "p99.9", "max", "setup");
		for (unsigned k = 0; k < SVR_NCOMPARE; k++)
			for (unsigned g = 0; g < svr_nguests(r); g++) {
				struct svr_hop h;
				char hop[16], v[4][32];

				if (svr_hop_get(r, svr_compare_hops[k][0], svr_compare_hops[k][1], (int)g, -1, &h) ||
				    !h.count)
					continue;
				sv_hop_format(svr_compare_hops[k][0], svr_compare_hops[k][1], hop, sizeof(hop));
				fmt_ns(h.lat.p50, true, v[0], sizeof(v[0]));
				fmt_ns(h.lat.p99, true, v[1], sizeof(v[1]));
				fmt_ns(h.lat.p999, true, v[2], sizeof(v[2]));
				fmt_ns(h.lat.max, true, v[3], sizeof(v[3]));
				fprintf(f, "  %-8s %-12.12s %9" PRIu64 " %6" PRIu64 " %-9s %-9s %-9s %9s  %s\n", hop,
					svr_guest_name(r, g), h.count, h.lost, v[0], v[1], v[2], v[3],
					svr_guest_label(r, g) ? svr_guest_label(r, g) : "-");
			}
	}

	fprintf(f, "\npoints\n  %-4s %-12s %9s %6s %9s %7s %7s %7s   pacing: %-9s %-9s %-9s %-9s\n", "pt", "guest",
		"frames", "dup", "reordered", "dropped", "missing", "notrec", "nominal", "p50", "p99", "max");
	for (unsigned p = 0; p < SVR_NPOINTS; p++)
		for (int g = -1; g < (int)svr_nguests(r); g++) {
			const struct svr_point_stats *ps;
			struct sv_stats_summary s;

			if ((p <= SV_POINT_T1) != (g < 0) || !svr_point_present(r, p, g) || p == SV_POINT_TS)
				continue;
			ps = svr_point(r, p, g);
			memset(&s, 0, sizeof(s));
			if (ps->pacing)
				sv_stats_summarize(ps->pacing, &s);
			fmt_ns(ps->nominal_ns, ps->nominal_ns > 0, buf, sizeof(buf));
			fmt_ns(s.p50, s.count > 0, buf2, sizeof(buf2));
			fmt_ns(s.p99, s.count > 0, buf3, sizeof(buf3));
			fprintf(f, "  %-4s %-12.12s %9" PRIu64 " %6" PRIu64 " %9" PRIu64 " %7" PRIu64 " %7" PRIu64
				   " %7" PRIu64 "           %-9s %-9s %-9s ",
				sv_point_name(p), gname(r, g), ps->frames, ps->duplicates, ps->reordered, ps->dropped,
				ps->missing, ps->not_recorded, buf, buf2, buf3);
			fmt_ns(s.max, s.count > 0, buf, sizeof(buf));
			fprintf(f, "%s\n", buf);
		}

	fprintf(f, "\nbudgets\n");
	for (unsigned i = 0; i < b->n; i++) {
		const struct svr_budget *bu = &b->b[i];
		char hop[16];

		sv_hop_format(bu->from, bu->to, hop, sizeof(hop));
		if (bu->stat == SVR_STAT_LOST)
			snprintf(buf, sizeof(buf), "%" PRId64 " frames", bu->limit);
		else
			sv_stats_format_ns(bu->limit, buf, sizeof(buf));
		fprintf(f, "  %s %s <= %s%s%s:", hop, svr_stat_name(bu->stat), buf, bu->guest[0] ? " guest " : "",
			bu->guest);
		if (!e->nres[i])
			fprintf(f, " no guest");
		for (unsigned k = 0; k < e->nres[i]; k++) {
			const struct svr_budget_result *res = &e->res[i][k];

			if (res->unsync) {
				fprintf(f, " [%s: unsynchronised, not evaluated]", gname(r, res->guest));
				continue;
			}
			if (!res->evaluated) {
				fprintf(f, " [%s: no data]", gname(r, res->guest));
				continue;
			}
			if (bu->stat == SVR_STAT_LOST)
				snprintf(buf, sizeof(buf), "%" PRId64, res->value);
			else
				sv_stats_format_ns(res->value, buf, sizeof(buf));
			fprintf(f, " [%s: %s%s %s]", gname(r, res->guest), res->exact ? "" : "~", buf,
				res->pass ? "ok" : "EXCEEDED");
		}
		fputc('\n', f);
	}

	if (svr_nlate(r)) {
		fprintf(f, "\nwhy late (worst %u waits of the threads that fed the guests or carried the frames)\n", svr_nlate(r));
		for (unsigned i = 0; i < svr_nlate(r) && i < 10; i++) {
			const struct svr_late *l = svr_late_get(r, i);
			const struct svr_stream_info *st = svr_stream(r, l->stream);

			sv_stats_format_ns(l->wait_ns, buf, sizeof(buf));
			fprintf(f, "  %s smpCnt %u %s: %s waited %s", st ? st->svid : "?", l->smp_cnt,
				l->guest >= 0 ? gname(r, l->guest) : "-", l->feeder_comm, buf);
			if (l->has_hop) {
				sv_stats_format_ns(l->hop_ns, buf2, sizeof(buf2));
				sv_hop_format(l->hop_from, l->point, buf3, sizeof(buf3));
				fprintf(f, " (%s %s)", buf3, buf2);
			}
			if (svr_late_unheld(l))
				fputs(" with no other thread on the CPU (idle, or not seen)\n", f);
			else
				fprintf(f, " while %s (pid %u, %s %u) held the CPU\n",
					svr_holder_label(l->holder_comm, l->holder_pid), l->holder_pid,
					sv_sched_policy_name(l->holder_policy), l->holder_prio);
		}
		for (unsigned i = 0; i < svr_nholders(r); i++) {
			const struct svr_holder *h = svr_holder_get(r, i);

			sv_stats_format_ns(h->max_ns, buf, sizeof(buf));
			if (!h->comm[0])	/* nobody named: no policy to show */
				fprintf(f, "  holder %s: %" PRIu64 " times, worst %s\n", svr_holder_label(h->comm, 0),
					h->count, buf);
			else
				fprintf(f, "  holder %s (%s %u): %" PRIu64 " times, worst %s\n",
					svr_holder_label(h->comm, 0), sv_sched_policy_name(h->policy), h->prio, h->count, buf);
		}
	}
	if (svr_ndrops(r)) {
		fprintf(f, "\ndrops\n");
		for (unsigned i = 0; i < svr_ndrops(r); i++) {
			const struct svr_drop *d = svr_drop_get(r, i);

			fprintf(f, "  %s %s %s: %" PRIu64 "\n", sv_point_name(d->point), gname(r, d->guest), d->name,
				d->count);
		}
	}
	if (ct && ct->present)
		fprintf(f, "\ncyclictest baseline (%s): %u thread(s), %" PRIu64 " cycles, min %" PRId64 "us avg %" PRId64
			   "us max %" PRId64 "us, overflows %" PRIu64 "\n",
			ct->path, ct->threads, ct->total, ct->min_us, ct->avg_us, ct->max_us, ct->overflows);
	if (t->not_joinable || t->too_late || t->window_full || t->too_many_guests || t->outage_lost || t->skipped)
		fprintf(f, "\nnot joined: %" PRIu64 " without a key (not counted as lost), %" PRIu64
			   " after their window, %" PRIu64 " evicted early (window full), %" PRIu64
			   " of extra guests; %" PRIu64 " lost in long outages; %" PRIu64 " skipped by the publisher\n",
			t->not_joinable, t->too_late, t->window_full, t->too_many_guests, t->outage_lost, t->skipped);
	if (t->not_recorded)
		fprintf(f, "not recorded: %" PRIu64 " frames fell where a point's file had not written its records (a full "
			   "disk at its writer: see the files above): neither lost nor missing, unknown\n",
			t->not_recorded);
	if (t->rekeyed)
		fprintf(f, "keyed from the stream's rate: %" PRIu64 " events recorded before their tool knew it\n",
			t->rekeyed);
	fprintf(f, "\nverdict: %s (%s)\n", svr_verdict_name(e->verdict), e->why);
	return ferror(f) ? -EIO : 0;
}

static void json_hop(struct svr *r, const struct svr_eval *e, struct sv_json *j, unsigned a, unsigned b, int guest,
		     int stream)
{
	struct svr_hop h;
	char name[16];

	if (svr_hop_get(r, a, b, guest, stream, &h))
		return;
	sv_hop_format(a, b, name, sizeof(name));
	sv_json_object_begin(j);
	sv_json_kv_str(j, "name", name);
	sv_json_kv_str(j, "from", sv_point_name(a));
	sv_json_kv_str(j, "to", sv_point_name(b));
	sv_json_kv_str(j, "guest", guest < 0 ? NULL : svr_guest_name(r, (unsigned)guest));
	sv_json_kv_str(j, "stream", stream < 0 ? NULL : svr_stream(r, (unsigned)stream)->svid);
	sv_json_kv_uint(j, "count", h.count);
	sv_json_kv_uint(j, "lost", h.lost);
	sv_json_kv_uint(j, "missing", h.missing);
	sv_json_kv_str(j, "source", h.from_summaries ? "summaries" : "frames");
	sv_json_kv_bool(j, "exact", h.lat.exact);
	sv_json_kv_bool(j, "cross_host", h.cross_host);
	sv_json_kv_bool(j, "synchronised", !svr_hop_unsync(&e->clock, &h));
	sv_json_key(j, "latency_ns");
	h.lat.count = h.count;
	sv_stats_summary_json(j, &h.lat);
	sv_json_object_end(j);
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

int svr_write_json(struct svr *r, const struct svr_budgets *b, const struct svr_eval *e,
		   const struct svr_cyclic *ct, FILE *f)
{
	const struct svr_totals *t = svr_totals(r);
	struct sv_json j;
	uint8_t pairs[64][2];

	sv_json_init(&j, f, SV_JSON_PRETTY);
	sv_json_object_begin(&j);
	sv_json_kv_str(&j, "verdict", svr_verdict_name(e->verdict));
	sv_json_kv_str(&j, "why", e->why);

	sv_json_key(&j, "clock");
	sv_json_object_begin(&j);
	sv_json_kv_str(&j, "status", e->clock.ok ? "ok" : "unsynchronised");
	sv_json_kv_bool(&j, "single_host", e->clock.single_host);
	sv_json_key(&j, "reasons");
	sv_json_array_begin(&j);
	for (unsigned i = 0; i < e->clock.nreasons; i++)
		sv_json_string(&j, e->clock.reasons[i]);
	sv_json_array_end(&j);
	sv_json_key(&j, "notes");
	sv_json_array_begin(&j);
	for (unsigned i = 0; i < e->clock.nnotes; i++)
		sv_json_string(&j, e->clock.notes[i]);
	sv_json_array_end(&j);
	sv_json_object_end(&j);

	sv_json_key(&j, "warnings");
	sv_json_array_begin(&j);
	for (unsigned i = 0; i < svr_nwarnings(r); i++)
		sv_json_string(&j, svr_warning(r, i));
	sv_json_array_end(&j);
	sv_json_key(&j, "silent_guests");
	sv_json_array_begin(&j);
	for (unsigned g = 0; g < svr_nguests(r); g++) {
		uint64_t lost;

		if (!svr_guest_silent(r, g, &lost))
			continue;
		sv_json_object_begin(&j);
		sv_json_kv_str(&j, "guest", svr_guest_name(r, g));
		sv_json_kv_uint(&j, "lost", lost);
		sv_json_object_end(&j);
	}
	sv_json_array_end(&j);

	sv_json_key(&j, "budgets");
	sv_json_array_begin(&j);
	for (unsigned i = 0; i < b->n; i++) {
		const struct svr_budget *bu = &b->b[i];
		char hop[16];

		sv_hop_format(bu->from, bu->to, hop, sizeof(hop));
		sv_json_object_begin(&j);
		sv_json_kv_str(&j, "hop", hop);
		sv_json_kv_str(&j, "statistic", svr_stat_name(bu->stat));
		sv_json_kv_int(&j, "limit", bu->limit);
		sv_json_kv_str(&j, "unit", bu->stat == SVR_STAT_LOST ? "frames" : "ns");
		sv_json_kv_str(&j, "guest", bu->guest[0] ? bu->guest : NULL);
		sv_json_key(&j, "results");
		sv_json_array_begin(&j);
		for (unsigned k = 0; k < e->nres[i]; k++) {
			const struct svr_budget_result *res = &e->res[i][k];

			sv_json_object_begin(&j);
			sv_json_kv_str(&j, "guest", res->guest < 0 ? NULL : svr_guest_name(r, (unsigned)res->guest));
			if (res->unsync) {
				sv_json_kv_null(&j, "value");
				sv_json_kv_str(&j, "status", "unsynchronised");
			} else if (res->evaluated) {
				sv_json_kv_int(&j, "value", res->value);
				sv_json_kv_bool(&j, "exact", res->exact);
				if (!res->exact)
					sv_json_kv_int(&j, "error", res->err);
				sv_json_kv_str(&j, "status", res->pass ? "pass" : "fail");
			} else {
				sv_json_kv_null(&j, "value");
				sv_json_kv_str(&j, "status", "no data");
			}
			sv_json_object_end(&j);
		}
		sv_json_array_end(&j);
		sv_json_object_end(&j);
	}
	sv_json_array_end(&j);

	sv_json_key(&j, "files");
	sv_json_array_begin(&j);
	for (unsigned i = 0; i < svr_nfiles(r); i++) {
		const struct svr_file_info *fi = svr_file(r, i);

		sv_json_object_begin(&j);
		sv_json_kv_str(&j, "path", fi->path);
		sv_json_kv_str(&j, "tool", fi->tool);
		sv_json_kv_str(&j, "host", fi->host);
		sv_json_kv_str(&j, "guest", fi->guest[0] ? fi->guest : NULL);
		sv_json_kv_str(&j, "clock", sv_clock_name(fi->clock));
		sv_json_kv_bool(&j, "synchronised", fi->sync_ok);
		sv_json_kv_uint(&j, "parts", fi->parts);
		sv_json_kv_uint(&j, "records", fi->records);
		sv_json_kv_uint(&j, "events", fi->events);
		sv_json_kv_bool(&j, "clean_end", fi->clean_end);
		sv_json_key(&j, "damage");
		sv_json_object_begin(&j);
		sv_json_kv_uint(&j, "blocks_skipped", fi->damage.blocks_skipped);
		sv_json_kv_uint(&j, "octets_skipped", fi->damage.octets_skipped);
		sv_json_kv_uint(&j, "records_lost", fi->damage.records_lost);
		sv_json_kv_bool(&j, "records_lost_exact", !fi->damage.skips_uncounted);
		sv_json_kv_uint(&j, "records_invalid", fi->damage.records_invalid);
		sv_json_kv_uint(&j, "records_orphaned", fi->damage.records_orphaned);
		sv_json_kv_str(&j, "first_error", svr_damaged(&fi->damage) ?
				sv_record_errname(fi->damage.first_err) : NULL);
		if (svr_damaged(&fi->damage))
			sv_json_kv_uint(&j, "first_offset", fi->damage.first_offset);
		else
			sv_json_kv_null(&j, "first_offset");
		sv_json_object_end(&j);
		/* what the writer could not write (a full disk): UNWRITTEN records, END's count beyond them */
		sv_json_key(&j, "unwritten");
		sv_json_object_begin(&j);
		sv_json_kv_uint(&j, "records", fi->unwritten_records);
		sv_json_kv_uint(&j, "events", fi->unwritten_events);
		sv_json_key(&j, "frames");
		sv_json_object_begin(&j);
		for (unsigned p = 0; p < SVR_NPOINTS; p++)
			if (fi->unwritten_frames[p])
				sv_json_kv_uint(&j, sv_point_name(p), fi->unwritten_frames[p]);
		sv_json_object_end(&j);
		sv_json_kv_uint(&j, "stretches", fi->unwritten_stretches);
		sv_json_kv_uint(&j, "unlocated", fi->unwritten_unlocated);
		sv_json_kv_str(&j, "errno", fi->unwritten_errno ? strerrorname_np(fi->unwritten_errno) : NULL);
		sv_json_kv_str(&j, "error", fi->unwritten_errno ? strerror(fi->unwritten_errno) : NULL);
		sv_json_kv_bool(&j, "below_floor", fi->unwritten_floor);
		sv_json_kv_uint(&j, "end_lost_records", fi->end_lost_records);
		sv_json_object_end(&j);
		sv_json_kv_str(&j, "error", fi->err ? fi->errmsg : NULL);
		sv_json_object_end(&j);
	}
	sv_json_array_end(&j);

	sv_json_key(&j, "streams");
	sv_json_array_begin(&j);
	for (unsigned s = 0; s < svr_nstreams(r); s++) {
		const struct svr_stream_info *st = svr_stream(r, s);

		sv_json_object_begin(&j);
		sv_json_kv_str(&j, "svID", st->svid);
		sv_json_kv_uint(&j, "appid", st->appid);
		sv_json_kv_uint(&j, "sample_rate", st->rate);
		sv_json_kv_uint(&j, "asdus", st->asdus);
		sv_json_object_end(&j);
	}
	sv_json_array_end(&j);

	sv_json_key(&j, "guests");
	sv_json_array_begin(&j);
	for (unsigned g = 0; g < svr_nguests(r); g++)
		sv_json_string(&j, svr_guest_name(r, g));
	sv_json_array_end(&j);

	/* how the run was set up (the lab: its switch, datapath, what the switch dropped) */
	sv_json_key(&j, "setup");
	sv_json_array_begin(&j);
	for (unsigned i = 0; svr_setup(r, i); i++)
		sv_json_string(&j, svr_setup(r, i));
	sv_json_array_end(&j);
	/* what each guest stands for (the lab: which traffic class, which noise), null when not told */
	sv_json_key(&j, "guest_labels");
	sv_json_object_begin(&j);
	for (unsigned g = 0; g < svr_nguests(r); g++) {
		if (svr_guest_label(r, g))
			sv_json_kv_str(&j, svr_guest_name(r, g), svr_guest_label(r, g));
		else
			sv_json_kv_null(&j, svr_guest_name(r, g));
	}
	sv_json_object_end(&j);

	sv_json_key(&j, "missing_points");
	sv_json_array_begin(&j);
	for (unsigned p = 0; p < SVR_NPOINTS; p++) {
		bool any = svr_point_present(r, p, SVR_GUEST_SHARED);

		for (unsigned g = 0; g < svr_nguests(r); g++)
			any |= svr_point_present(r, p, (int)g);
		if (!any)
			sv_json_string(&j, sv_point_name(p));
	}
	sv_json_array_end(&j);

	sv_json_key(&j, "hops");
	sv_json_array_begin(&j);
	for (int g = -1; g < (int)svr_nguests(r); g++) {
		unsigned n = svr_hop_list(r, g, pairs, 64);

		for (unsigned i = 0; i < n; i++) {
			json_hop(r, e, &j, pairs[i][0], pairs[i][1], g, -1);
			for (unsigned s = 0; s < svr_nstreams(r); s++)
				json_hop(r, e, &j, pairs[i][0], pairs[i][1], g, (int)s);
		}
	}
	sv_json_array_end(&j);

	sv_json_key(&j, "points");
	sv_json_array_begin(&j);
	for (unsigned p = 1; p < SVR_NPOINTS; p++)
		for (int g = -1; g < (int)svr_nguests(r); g++) {
			const struct svr_point_stats *ps;

			if ((p <= SV_POINT_T1) != (g < 0) || !svr_point_present(r, p, g))
				continue;
			ps = svr_point(r, p, g);
			sv_json_object_begin(&j);
			sv_json_kv_str(&j, "point", sv_point_name(p));
			sv_json_kv_str(&j, "guest", g < 0 ? NULL : svr_guest_name(r, (unsigned)g));
			sv_json_kv_uint(&j, "frames", ps->frames);
			sv_json_kv_uint(&j, "duplicates", ps->duplicates);
			sv_json_kv_uint(&j, "reordered", ps->reordered);
			sv_json_kv_uint(&j, "dropped", ps->dropped);
			sv_json_kv_uint(&j, "missing", ps->missing);
			sv_json_kv_uint(&j, "not_recorded", ps->not_recorded);
			sv_json_key(&j, "pacing");
			sv_json_object_begin(&j);
			sv_json_kv_int(&j, "nominal_ns", ps->nominal_ns);
			json_stats(&j, "interval_ns", ps->pacing);
			sv_json_object_end(&j);
			sv_json_object_end(&j);
		}
	sv_json_array_end(&j);

	sv_json_key(&j, "late");
	sv_json_array_begin(&j);
	for (unsigned i = 0; i < svr_nlate(r); i++) {
		const struct svr_late *l = svr_late_get(r, i);
		const struct svr_stream_info *st = svr_stream(r, l->stream);

		sv_json_object_begin(&j);
		sv_json_kv_str(&j, "svID", st ? st->svid : NULL);
		sv_json_kv_uint(&j, "smpCnt", l->smp_cnt);
		/* svtrace's late keys (hop, egress, hop_ns), then svreport's own (point, guest) */
		if (l->has_hop) {
			char hop[16];

			sv_hop_format(l->hop_from, l->point, hop, sizeof(hop));
			sv_json_kv_str(&j, "hop", hop);
		} else {
			sv_json_kv_null(&j, "hop");
		}
		sv_json_kv_str(&j, "egress", l->guest < 0 ? NULL : svr_guest_name(r, (unsigned)l->guest));
		if (l->has_hop)
			sv_json_kv_int(&j, "hop_ns", l->hop_ns);
		else
			sv_json_kv_null(&j, "hop_ns");
		sv_json_kv_str(&j, "point", sv_point_name(l->point));
		sv_json_kv_str(&j, "guest", l->guest < 0 ? NULL : svr_guest_name(r, (unsigned)l->guest));
		sv_json_kv_str(&j, "feeder_thread", l->feeder_comm);
		sv_json_kv_uint(&j, "feeder_tid", l->feeder_tid);
		sv_json_kv_int(&j, "wait_ns", l->wait_ns);
		if (svr_late_unheld(l)) {
			sv_json_kv_null(&j, "holder_thread");
			sv_json_kv_null(&j, "holder_pid");
			sv_json_kv_null(&j, "holder_policy");
			sv_json_kv_null(&j, "holder_prio");
		} else {
			sv_json_kv_str(&j, "holder_thread", l->holder_comm);
			sv_json_kv_uint(&j, "holder_pid", l->holder_pid);
			sv_json_kv_str(&j, "holder_policy", sv_sched_policy_name(l->holder_policy));
			sv_json_kv_uint(&j, "holder_prio", l->holder_prio);
		}
		sv_json_kv_str(&j, "cause", sv_rec_wait_cause_name(l->cause));
		sv_json_object_end(&j);
	}
	sv_json_array_end(&j);
	sv_json_key(&j, "late_by_holder");
	sv_json_array_begin(&j);
	for (unsigned i = 0; i < svr_nholders(r); i++) {
		const struct svr_holder *h = svr_holder_get(r, i);

		sv_json_object_begin(&j);
		if (!h->comm[0]) {	/* the frames nobody's run delayed */
			sv_json_kv_null(&j, "holder_thread");
			sv_json_kv_null(&j, "holder_policy");
			sv_json_kv_null(&j, "holder_prio");
		} else {
			sv_json_kv_str(&j, "holder_thread", h->comm);
			sv_json_kv_str(&j, "holder_policy", sv_sched_policy_name(h->policy));
			sv_json_kv_uint(&j, "holder_prio", h->prio);
		}
		sv_json_kv_uint(&j, "count", h->count);
		sv_json_kv_int(&j, "total_wait_ns", h->total_ns);
		sv_json_kv_int(&j, "max_wait_ns", h->max_ns);
		sv_json_object_end(&j);
	}
	sv_json_array_end(&j);

	sv_json_key(&j, "drops");
	sv_json_array_begin(&j);
	for (unsigned i = 0; i < svr_ndrops(r); i++) {
		const struct svr_drop *d = svr_drop_get(r, i);

		sv_json_object_begin(&j);
		sv_json_kv_str(&j, "point", sv_point_name(d->point));
		sv_json_kv_str(&j, "guest", d->guest < 0 ? NULL : svr_guest_name(r, (unsigned)d->guest));
		sv_json_kv_str(&j, "reason", d->name);
		sv_json_kv_uint(&j, "count", d->count);
		sv_json_object_end(&j);
	}
	sv_json_array_end(&j);

	sv_json_key(&j, "cyclictest");
	if (ct && ct->present) {
		sv_json_object_begin(&j);
		sv_json_kv_str(&j, "file", ct->path);
		sv_json_kv_uint(&j, "threads", ct->threads);
		sv_json_kv_uint(&j, "cycles", ct->total);
		sv_json_kv_int(&j, "min_ns", ct->min_us * 1000);
		sv_json_kv_int(&j, "avg_ns", ct->avg_us * 1000);
		sv_json_kv_int(&j, "max_ns", ct->max_us * 1000);
		sv_json_kv_uint(&j, "overflows", ct->overflows);
		sv_json_object_end(&j);
	} else {
		sv_json_null(&j);
	}

	sv_json_key(&j, "totals");
	sv_json_object_begin(&j);
	sv_json_kv_uint(&j, "frames", t->frames);
	sv_json_kv_uint(&j, "events", t->events);
	sv_json_kv_uint(&j, "summaries", t->summaries);
	sv_json_kv_uint(&j, "hists", t->hists);
	sv_json_kv_uint(&j, "not_joinable", t->not_joinable);
	sv_json_kv_uint(&j, "too_late", t->too_late);
	sv_json_kv_uint(&j, "window_full", t->window_full);
	sv_json_kv_uint(&j, "too_many_guests", t->too_many_guests);
	sv_json_kv_uint(&j, "skipped", t->skipped);
	sv_json_kv_uint(&j, "outage_lost", t->outage_lost);
	sv_json_kv_uint(&j, "not_recorded", t->not_recorded);
	sv_json_kv_uint(&j, "exact_fallbacks", t->exact_dropped);
	sv_json_kv_uint(&j, "realigned", t->realigned);
	sv_json_kv_uint(&j, "rekeyed", t->rekeyed);
	sv_json_object_end(&j);
	sv_json_object_end(&j);
	return sv_json_end(&j);
}

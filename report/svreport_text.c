// SPDX-License-Identifier: Apache-2.0
/* svreport's terminal summary: one emitter per section (svreport_out.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "svreport_out.h"

static void fmt_ns(int64_t v, bool valid, char *buf, size_t n)
{
	if (!valid)
		snprintf(buf, n, "-");
	else
		sv_stats_format_ns(v, buf, n);
}

void svr_text_files(struct svr_out *o)
{
	struct svr *r = o->r;
	FILE *f = o->f;

	fprintf(f, "svreport: %u file(s), %u stream(s), %u guest(s), %" PRIu64 " frames joined\n", svr_nfiles(r),
		svr_nstreams(r), svr_nguests(r), svr_totals(r)->frames);
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
}

void svr_text_clock(struct svr_out *o)
{
	const struct svr_clock *c = &o->e->clock;

	fprintf(o->f, "clock: %s%s\n", c->ok ? "ok" : "UNSYNCHRONISED", c->single_host ? " (one host, one clock)" : "");
	for (unsigned i = 0; i < c->nreasons; i++)
		fprintf(o->f, "  ! %s\n", c->reasons[i]);
	for (unsigned i = 0; i < c->nnotes; i++)
		fprintf(o->f, "  note: %s\n", c->notes[i]);
}

void svr_text_warnings(struct svr_out *o)
{
	for (unsigned i = 0; i < svr_nwarnings(o->r); i++)
		fprintf(o->f, "warning: %s\n", svr_warning(o->r, i));
}

void svr_text_silent(struct svr_out *o)
{
	for (unsigned g = 0; g < svr_nguests(o->r); g++) {
		uint64_t lost;

		if (svr_guest_silent(o->r, g, &lost))
			fprintf(o->f, "warning: guest %s received no frame: %" PRIu64 " lost toward it (link down?)\n",
				svr_guest_name(o->r, g), lost);
	}
}

void svr_text_missing_points(struct svr_out *o)
{
	for (unsigned p = 0; p < SVR_NPOINTS; p++)
		if (!svr_point_anywhere(o->r, p))
			fprintf(o->f, "no records for %s: hops through it are not measured\n", sv_point_name(p));
}

void svr_text_setup(struct svr_out *o)
{
	for (unsigned i = 0; svr_setup(o->r, i); i++)
		fprintf(o->f, "setup: %s\n", svr_setup(o->r, i));
}

void svr_text_labels(struct svr_out *o)
{
	for (unsigned g = 0; g < svr_nguests(o->r); g++)
		if (svr_guest_label(o->r, g))
			fprintf(o->f, "guest %s: %s\n", svr_guest_name(o->r, g), svr_guest_label(o->r, g));
}

static void hop_row(struct svr_out *o, unsigned a, unsigned b, int guest, int stream)
{
	struct svr_hop h;
	char name[16], v[6][24];
	const char *tilde;

	if (svr_hop_get(o->r, a, b, guest, stream, &h))
		return;
	sv_hop_format(a, b, name, sizeof(name));
	fmt_ns(h.lat.min, h.count > 0, v[0], 24);
	fmt_ns(h.lat.p50, h.count > 0, v[1], 24);
	fmt_ns(h.lat.p99, h.count > 0, v[2], 24);
	fmt_ns(h.lat.p999, h.count > 0, v[3], 24);
	fmt_ns(h.lat.p9999, h.count > 0, v[4], 24);
	fmt_ns(h.lat.max, h.count > 0, v[5], 24);
	tilde = h.lat.exact || !h.count ? " " : "~";
	fprintf(o->f, "  %-8s %-12.12s %-14.14s %9" PRIu64 " %6" PRIu64 " %6" PRIu64 " %9s %s%-8s %s%-8s %s%-8s %s%-8s %9s%s%s\n",
		name, svr_out_guest(o->r, guest, "-"), stream < 0 ? "(all)" : svr_stream(o->r, (unsigned)stream)->svid,
		h.count, h.lost, h.missing, v[0], tilde, v[1], tilde, v[2], tilde, v[3], tilde, v[4], v[5],
		h.from_summaries ? "  (summaries)" : "",
		h.count && svr_hop_unsync(&o->e->clock, &h) ? "  (unsynchronised)" : "");
}

void svr_text_hops(struct svr_out *o)
{
	fprintf(o->f, "\nper hop (latency; ~ = from histograms, error <= 0.8%%)\n");
	fprintf(o->f, "  %-8s %-12s %-14s %9s %6s %6s %9s %-9s %-9s %-9s %-9s %9s\n", "hop", "guest", "stream", "count",
		"lost", "miss", "min", "p50", "p99", "p99.9", "p99.99", "max");
	svr_out_hops(o, SVR_ROWS_SEVERAL, hop_row);
}

static void compare_row(struct svr_out *o, unsigned k, unsigned g, const struct svr_hop *h)
{
	char hop[16], v[4][32];

	sv_hop_format(svr_compare_hops[k][0], svr_compare_hops[k][1], hop, sizeof(hop));
	fmt_ns(h->lat.p50, true, v[0], sizeof(v[0]));
	fmt_ns(h->lat.p99, true, v[1], sizeof(v[1]));
	fmt_ns(h->lat.p999, true, v[2], sizeof(v[2]));
	fmt_ns(h->lat.max, true, v[3], sizeof(v[3]));
	fprintf(o->f, "  %-8s %-12.12s %9" PRIu64 " %6" PRIu64 " %-9s %-9s %-9s %9s  %s\n", hop, svr_guest_name(o->r, g),
		h->count, h->lost, v[0], v[1], v[2], v[3], svr_guest_label(o->r, g) ? svr_guest_label(o->r, g) : "-");
}

void svr_text_compare(struct svr_out *o)
{
	if (svr_nguests(o->r) <= 1)
		return;
	fprintf(o->f, "\nguests side by side (all streams)\n  %-8s %-12s %9s %6s %-9s %-9s %-9s %9s  %s\n", "hop",
		"guest", "count", "lost", "p50", "p99", "p99.9", "max", "setup");
	svr_out_compare(o, compare_row);
}

static void point_row(struct svr_out *o, unsigned p, int g, const struct svr_point_stats *ps, void *arg)
{
	char buf[64], buf2[64], buf3[64];
	struct sv_stats_summary s;

	(void)arg;
	memset(&s, 0, sizeof(s));
	if (ps->pacing)
		sv_stats_summarize(ps->pacing, &s);
	fmt_ns(ps->nominal_ns, ps->nominal_ns > 0, buf, sizeof(buf));
	fmt_ns(s.p50, s.count > 0, buf2, sizeof(buf2));
	fmt_ns(s.p99, s.count > 0, buf3, sizeof(buf3));
	fprintf(o->f, "  %-4s %-12.12s %9" PRIu64 " %6" PRIu64 " %9" PRIu64 " %7" PRIu64 " %7" PRIu64 " %7" PRIu64
		      "           %-9s %-9s %-9s ",
		sv_point_name(p), svr_out_guest(o->r, g, "-"), ps->frames, ps->duplicates, ps->reordered, ps->dropped,
		ps->missing, ps->not_recorded, buf, buf2, buf3);
	fmt_ns(s.max, s.count > 0, buf, sizeof(buf));
	fprintf(o->f, "%s\n", buf);
}

void svr_text_points(struct svr_out *o)
{
	fprintf(o->f, "\npoints\n  %-4s %-12s %9s %6s %9s %7s %7s %7s   pacing: %-9s %-9s %-9s %-9s\n", "pt", "guest",
		"frames", "dup", "reordered", "dropped", "missing", "notrec", "nominal", "p50", "p99", "max");
	svr_out_points(o, point_row, NULL);
}

void svr_text_budgets(struct svr_out *o)
{
	const struct svr_budgets *b = o->b;
	const struct svr_eval *e = o->e;
	FILE *f = o->f;
	char buf[64];

	fprintf(f, "\nbudgets\n");
	for (unsigned i = 0; i < b->n; i++) {
		const struct svr_budget *bu = &b->b[i];
		char hop[16];

		sv_hop_format(bu->from, bu->to, hop, sizeof(hop));
		svr_out_budget_value(bu, bu->limit, " frames", buf, sizeof(buf));
		fprintf(f, "  %s %s <= %s%s%s:", hop, svr_stat_name(bu->stat), buf, bu->guest[0] ? " guest " : "",
			bu->guest);
		if (!e->nres[i])
			fprintf(f, " no guest");
		for (unsigned k = 0; k < e->nres[i]; k++) {
			const struct svr_budget_result *res = &e->res[i][k];

			if (res->unsync) {
				fprintf(f, " [%s: unsynchronised, not evaluated]", svr_out_guest(o->r, res->guest, "-"));
				continue;
			}
			if (!res->evaluated) {
				fprintf(f, " [%s: no data]", svr_out_guest(o->r, res->guest, "-"));
				continue;
			}
			svr_out_budget_value(bu, res->value, "", buf, sizeof(buf));
			fprintf(f, " [%s: %s%s %s]", svr_out_guest(o->r, res->guest, "-"), res->exact ? "" : "~", buf,
				res->pass ? "ok" : "EXCEEDED");
		}
		fputc('\n', f);
	}
}

void svr_text_late(struct svr_out *o)
{
	struct svr *r = o->r;
	FILE *f = o->f;
	char buf[64], buf2[64], buf3[64];

	if (!svr_nlate(r))
		return;
	fprintf(f, "\nwhy late (worst %u waits of the threads that fed the guests or carried the frames)\n",
		svr_nlate(r));
	for (unsigned i = 0; i < svr_nlate(r) && i < 10; i++) {
		const struct svr_late *l = svr_late_get(r, i);
		const struct svr_stream_info *st = svr_stream(r, l->stream);

		sv_stats_format_ns(l->wait_ns, buf, sizeof(buf));
		fprintf(f, "  %s smpCnt %u %s: %s waited %s", st ? st->svid : "?", l->smp_cnt,
			svr_out_guest(r, l->guest, "-"), l->feeder_comm, buf);
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
			fprintf(f, "  holder %s: %" PRIu64 " times, worst %s\n", svr_holder_label(h->comm, 0), h->count,
				buf);
		else
			fprintf(f, "  holder %s (%s %u): %" PRIu64 " times, worst %s\n", svr_holder_label(h->comm, 0),
				sv_sched_policy_name(h->policy), h->prio, h->count, buf);
	}
}

void svr_text_drops(struct svr_out *o)
{
	if (!svr_ndrops(o->r))
		return;
	fprintf(o->f, "\ndrops\n");
	for (unsigned i = 0; i < svr_ndrops(o->r); i++) {
		const struct svr_drop *d = svr_drop_get(o->r, i);

		fprintf(o->f, "  %s %s %s: %" PRIu64 "\n", sv_point_name(d->point), svr_out_guest(o->r, d->guest, "-"),
			d->name, d->count);
	}
}

void svr_text_cyclictest(struct svr_out *o)
{
	const struct svr_cyclic *ct = o->ct;

	if (ct && ct->present)
		fprintf(o->f, "\ncyclictest baseline (%s): %u thread(s), %" PRIu64 " cycles, min %" PRId64 "us avg %" PRId64
			      "us max %" PRId64 "us, overflows %" PRIu64 "\n",
			ct->path, ct->threads, ct->total, ct->min_us, ct->avg_us, ct->max_us, ct->overflows);
}

void svr_text_totals(struct svr_out *o)
{
	const struct svr_totals *t = svr_totals(o->r);
	FILE *f = o->f;

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
}

void svr_text_verdict(struct svr_out *o)
{
	fprintf(o->f, "\nverdict: %s (%s)\n", svr_verdict_name(o->e->verdict), o->e->why);
}

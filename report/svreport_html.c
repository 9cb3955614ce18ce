// SPDX-License-Identifier: Apache-2.0
/*
 * svreport's HTML report: one self-contained file (inline CSS and SVG only: no script, no font, no image,
 * no external reference), so it opens offline and can be mailed as one file. One emitter per section
 * (svreport_out.h); the plots are in svreport_plot.c.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "sv_clock.h"
#include "svreport_out.h"

void svr_html_esc(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '&':
			fputs("&amp;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		default:
			if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
				fprintf(f, "&#%u;", (unsigned char)*s);
			else
				fputc(*s, f);
		}
	}
}

void svr_html_begin(FILE *f)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
	      "<title>svkit latency report</title>\n<style>\n"
	      "body{font-family:sans-serif;margin:1.5em;max-width:1100px;color:#222}\n"
	      "table{border-collapse:collapse;margin:.5em 0;font-size:12px}\n"
	      "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}\n"
	      "td:nth-child(-n+3),th:nth-child(-n+3){text-align:left}\n"
	      ".PASS{color:#fff;background:#2a2}.FAIL{color:#fff;background:#c22}"
	      ".UNSYNCHRONISED{color:#000;background:#fc3}.NONE{color:#000;background:#ccc}\n"
	      ".verdict{display:inline-block;padding:.3em .8em;font-size:1.4em;font-weight:bold}\n"
	      ".bad{color:#c22;font-weight:bold}\nfigure{margin:1em 0}figcaption{font-weight:bold;margin:.3em 0}\n"
	      "svg{display:block;border:1px solid #eee}\n</style></head><body>\n",
	      f);
}

void svr_html_end(FILE *f)
{
	fprintf(f, "<p><small>svreport %s</small></p>\n</body></html>\n", SVKIT_VERSION);
}

void svr_html_verdict(struct svr_out *o)
{
	const char *v = svr_verdict_name(o->e->verdict);

	fprintf(o->f, "<h1>svkit latency report</h1>\n<p><span class=\"verdict %s\">%s</span> ", v, v);
	svr_html_esc(o->f, o->e->why);
	fputs("</p>\n", o->f);
}

void svr_html_warnings(struct svr_out *o)
{
	if (!svr_nwarnings(o->r))
		return;
	fputs("<h2>Warnings</h2><ul>", o->f);
	for (unsigned i = 0; i < svr_nwarnings(o->r); i++) {
		fputs("<li class=\"bad\">", o->f);
		svr_html_esc(o->f, svr_warning(o->r, i));
		fputs("</li>", o->f);
	}
	fputs("</ul>\n", o->f);
}

void svr_html_silent(struct svr_out *o)
{
	uint64_t lost;

	for (unsigned g = 0; g < svr_nguests(o->r); g++) {
		if (!svr_guest_silent(o->r, g, &lost))
			continue;
		fputs("<p class=\"bad\">Guest ", o->f);
		svr_html_esc(o->f, svr_guest_name(o->r, g));
		fprintf(o->f, " received no frame: %" PRIu64 " lost toward it (link down?)</p>\n", lost);
	}
}

void svr_html_missing_points(struct svr_out *o)
{
	const char *sep = "<p>No records for ";

	for (unsigned p = 0; p < SVR_NPOINTS; p++) {
		if (svr_point_anywhere(o->r, p))
			continue;
		fprintf(o->f, "%s%s", sep, sv_point_name(p));
		sep = ", ";
	}
	if (strcmp(sep, ", ") == 0)
		fputs(": hops through them are not measured.</p>\n", o->f);
}

void svr_html_setup(struct svr_out *o)
{
	if (!svr_setup(o->r, 0))
		return;
	fputs("<h2>Setup</h2><ul>", o->f);
	for (unsigned i = 0; svr_setup(o->r, i); i++) {
		fputs("<li>", o->f);
		svr_html_esc(o->f, svr_setup(o->r, i));
		fputs("</li>", o->f);
	}
	fputs("</ul>\n", o->f);
}

void svr_html_clock(struct svr_out *o)
{
	const struct svr_clock *c = &o->e->clock;
	FILE *f = o->f;

	fputs("<h2>Clock</h2><ul>", f);
	fprintf(f, "<li>%s%s</li>", c->ok ? "ok" : "UNSYNCHRONISED",
		c->single_host ? " (every record from one host: one clock)" : "");
	for (unsigned i = 0; i < c->nreasons; i++) {
		fputs("<li class=\"bad\">", f);
		svr_html_esc(f, c->reasons[i]);
		fputs("</li>", f);
	}
	for (unsigned i = 0; i < c->nnotes; i++) {
		fputs("<li>", f);
		svr_html_esc(f, c->notes[i]);
		fputs("</li>", f);
	}
	fputs("</ul>\n", f);
}

void svr_html_files(struct svr_out *o)
{
	FILE *f = o->f;

	fputs("<h2>Inputs</h2><table><tr><th>file</th><th>tool</th><th>host</th><th>guest</th><th>clock</th>"
	      "<th>records</th><th>end</th></tr>\n",
	      f);
	for (unsigned i = 0; i < svr_nfiles(o->r); i++) {
		const struct svr_file_info *fi = svr_file(o->r, i);

		fputs("<tr><td>", f);
		svr_html_esc(f, fi->path);
		fputs("</td><td>", f);
		svr_html_esc(f, fi->tool);
		fputs("</td><td>", f);
		svr_html_esc(f, fi->host);
		fputs("</td><td>", f);
		svr_html_esc(f, fi->guest);
		fprintf(f, "</td><td>%s%s</td><td>%" PRIu64 "</td><td>", sv_clock_name(fi->clock),
			fi->sync_ok ? "" : " (unsynchronised)", fi->records);
		svr_html_esc(f, fi->err ? fi->errmsg : fi->clean_end ? "clean" : "no END record");
		if (svr_damaged(&fi->damage)) {
			char dmg[256];

			svr_damage_format(&fi->damage, dmg, sizeof(dmg));
			fputs("; damaged: ", f);
			svr_html_esc(f, dmg);
		}
		if (fi->unwritten_records) {
			char u[320];

			svr_file_unwritten_format(fi, u, sizeof(u));
			fputs("; <span class=\"bad\">not written by its writer: ", f);
			svr_html_esc(f, u);
			fputs("</span> (frames there are not recorded, not lost)", f);
		}
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
}

void svr_html_budgets(struct svr_out *o)
{
	const struct svr_eval *e = o->e;
	FILE *f = o->f;

	fputs("<h2>Budgets</h2><table><tr><th>hop</th><th>statistic</th><th>guest</th><th>limit</th>"
	      "<th>value</th><th>result</th></tr>\n",
	      f);
	for (unsigned i = 0; i < o->b->n; i++) {
		const struct svr_budget *bu = &o->b->b[i];
		char hop[16];

		sv_hop_format(bu->from, bu->to, hop, sizeof(hop));
		for (unsigned k = 0; k < e->nres[i]; k++) {
			const struct svr_budget_result *res = &e->res[i][k];
			char lim[32], val[32];

			svr_out_budget_value(bu, bu->limit, "", lim, sizeof(lim));
			svr_out_budget_value(bu, res->value, "", val, sizeof(val));
			fprintf(f, "<tr><td>%s</td><td>%s</td><td>", hop, svr_stat_name(bu->stat));
			svr_html_esc(f, svr_out_guest(o->r, res->guest, "-"));
			fprintf(f, "</td><td>%s</td><td>%s%s</td><td%s>%s</td></tr>\n", lim,
				res->evaluated && !res->exact ? "~" : "", res->evaluated ? val : "-",
				res->evaluated && !res->pass ? " class=\"bad\"" : "",
				!res->evaluated ? "no data" : res->pass ? "pass" : "EXCEEDED");
		}
	}
	fputs("</table>\n", f);
}

static void compare_row(struct svr_out *o, unsigned k, unsigned g, const struct svr_hop *h)
{
	char hop[16], v[4][24];
	FILE *f = o->f;

	sv_hop_format(svr_compare_hops[k][0], svr_compare_hops[k][1], hop, sizeof(hop));
	sv_stats_format_ns(h->lat.p50, v[0], 24);
	sv_stats_format_ns(h->lat.p99, v[1], 24);
	sv_stats_format_ns(h->lat.p999, v[2], 24);
	sv_stats_format_ns(h->lat.max, v[3], 24);
	fprintf(f, "<tr><td>%s</td><td>", hop);
	svr_html_esc(f, svr_guest_name(o->r, g));
	fputs("</td><td>", f);
	svr_html_esc(f, svr_guest_label(o->r, g) ? svr_guest_label(o->r, g) : "-");
	fprintf(f, "</td><td>%" PRIu64 "</td><td%s>%" PRIu64 "</td><td>%s</td><td>%s</td><td>%s</td>"
		   "<td>%s</td></tr>\n",
		h->count, h->lost ? " class=\"bad\"" : "", h->lost, v[0], v[1], v[2], v[3]);
}

void svr_html_compare(struct svr_out *o)
{
	if (svr_nguests(o->r) <= 1)
		return;
	fputs("<h2>Guests side by side</h2>\n<p>The same hops of every guest, with the setup each guest stands "
	      "for: compare them to see what a traffic class or a noisy neighbour does to the SV path.</p>\n"
	      "<table><tr><th>hop</th><th>guest</th><th>setup</th><th>count</th><th>lost</th><th>p50</th>"
	      "<th>p99</th><th>p99.9</th><th>max</th></tr>\n",
	      o->f);
	svr_out_compare(o, compare_row);
	fputs("</table>\n", o->f);
	for (unsigned k = 0; k < SVR_NCOMPARE; k++)
		svr_plot_cdf_guests(o->f, o->r, svr_compare_hops[k][0], svr_compare_hops[k][1]);
}

static void hop_row(struct svr_out *o, unsigned a, unsigned b, int g, int stream)
{
	struct svr_hop h;
	char name[16], v[6][24];
	FILE *f = o->f;

	if (svr_hop_get(o->r, a, b, g, stream, &h))
		return;
	sv_hop_format(a, b, name, sizeof(name));
	sv_stats_format_ns(h.lat.min, v[0], 24);
	sv_stats_format_ns(h.lat.p50, v[1], 24);
	sv_stats_format_ns(h.lat.p99, v[2], 24);
	sv_stats_format_ns(h.lat.p999, v[3], 24);
	sv_stats_format_ns(h.lat.p9999, v[4], 24);
	sv_stats_format_ns(h.lat.max, v[5], 24);
	fprintf(f, "<tr><td>%s</td><td>", name);
	svr_html_esc(f, svr_out_guest(o->r, g, "-"));
	fputs("</td><td>", f);
	svr_html_esc(f, stream < 0 ? "(all)" : svr_stream(o->r, (unsigned)stream)->svid);
	fprintf(f, "</td><td>%" PRIu64 "</td><td%s>%" PRIu64 "</td><td>%" PRIu64 "</td>", h.count,
		h.lost ? " class=\"bad\"" : "", h.lost, h.missing);
	for (unsigned i = 0; i < 6; i++)
		fprintf(f, "<td>%s%s</td>", h.count ? (h.lat.exact || i == 0 || i == 5 ? "" : "~") : "",
			h.count ? v[i] : "-");
	fprintf(f, "<td>%s</td></tr>\n", h.from_summaries ? "summaries" : h.lat.exact ? "frames, exact" : "frames");
}

void svr_html_hops(struct svr_out *o)
{
	fputs("<h2>Per hop</h2><p>Latency in the SEAPATH model: Ts sample time, T0 publisher TX, T1 "
	      "hypervisor ingress, T2a hypervisor egress, T2b taken by the guest feeder, T3 guest receive, T4 guest "
	      "application. ~ = from histograms (error &lt;= 0.8 %).</p>\n"
	      "<table><tr><th>hop</th><th>guest</th><th>stream</th><th>count</th><th>lost</th><th>missing</th>"
	      "<th>min</th><th>p50</th><th>p99</th><th>p99.9</th><th>p99.99</th><th>max</th><th>source</th></tr>\n",
	      o->f);
	svr_out_hops(o, SVR_ROWS_SEVERAL, hop_row);
	fputs("</table>\n", o->f);
}

static void not_recorded_row(struct svr_out *o, unsigned p, int g, const struct svr_point_stats *ps, void *arg)
{
	(void)arg;
	if (!ps->not_recorded)
		return;
	fprintf(o->f, "<tr><td>%s</td><td>", sv_point_name(p));
	svr_html_esc(o->f, svr_out_guest(o->r, g, "-"));
	fprintf(o->f, "</td><td>%" PRIu64 "</td></tr>\n", ps->not_recorded);
}

void svr_html_totals(struct svr_out *o)
{
	uint64_t n = svr_totals(o->r)->not_recorded;

	if (!n)
		return;
	fprintf(o->f, "<h2>Not recorded</h2><p class=\"bad\">%" PRIu64 " frames fell where a point's file had not "
		      "written its records (a full disk at its writer, see the inputs): neither lost nor missing, "
		      "unknown.</p>\n<table><tr><th>point</th><th>guest</th><th>frames not recorded</th></tr>\n",
		n);
	svr_out_points(o, not_recorded_row, NULL);
	fputs("</table>\n", o->f);
}

static void hop_label(const struct svr *r, unsigned a, unsigned b, int g, char *buf, size_t n)
{
	char hop[16];

	sv_hop_format(a, b, hop, sizeof(hop));
	if (g < 0)
		snprintf(buf, n, "%s", hop);
	else
		snprintf(buf, n, "%s %s", hop, svr_guest_name(r, (unsigned)g));
}

static void histogram(struct svr_out *o, unsigned a, unsigned b, int g, int stream)
{
	char lab[96], title[160];
	const struct sv_stats *hs;
	struct svr_hop h;

	if (svr_hop_get(o->r, a, b, g, stream, &h) || !(hs = svr_plot_hop_hist(&h)) || !hs->count)
		return;
	hop_label(o->r, a, b, g, lab, sizeof(lab));
	snprintf(title, sizeof(title), "Latency histogram %s (%" PRIu64 " frames)", lab, hs->count);
	svr_plot_histogram(o->f, title, hs, o->color++);
}

void svr_html_histograms(struct svr_out *o)
{
	fputs("<h2>Latency histograms</h2>\n", o->f);
	svr_out_hops(o, SVR_ROWS_ALL, histogram);
}

static void over_time(struct svr_out *o, unsigned a, unsigned b, int g, int stream)
{
	char lab[96], title[160];
	const struct svr_bin *bins;
	uint32_t width;
	int64_t first;
	unsigned nb;

	(void)stream;	/* bins are kept for all streams */
	bins = svr_hop_bins(o->r, a, b, g, &nb, &width, &first);
	if (!bins)
		return;
	hop_label(o->r, a, b, g, lab, sizeof(lab));
	snprintf(title, sizeof(title), "Latency over time %s (bins of %" PRIu32 " s)", lab, width);
	svr_plot_over_time(o->f, title, bins, nb, width);
}

void svr_html_over_time(struct svr_out *o)
{
	fputs("<h2>Latency over time</h2>\n", o->f);
	svr_out_hops(o, SVR_ROWS_ALL, over_time);
}

void svr_html_cdf(struct svr_out *o)
{
	uint8_t pairs[64][2];

	fputs("<h2>CDF</h2>\n", o->f);
	for (int g = -1; g < (int)svr_nguests(o->r); g++) {
		unsigned n = svr_hop_list(o->r, g, pairs, 64);

		if (n)
			svr_plot_cdf(o->f, o->r, g, pairs, n);
	}
}

void svr_html_points(struct svr_out *o)
{
	fputs("<h2>Pacing</h2>\n", o->f);
	svr_plot_pacing(o);
}

void svr_html_loss(struct svr_out *o)
{
	fputs("<h2>Loss</h2>\n", o->f);
	svr_plot_loss(o->f, o->r);
}

void svr_html_cyclictest(struct svr_out *o)
{
	const struct svr_cyclic *ct = o->ct;
	FILE *f = o->f;

	fputs("<h2>Host real-time baseline (cyclictest)</h2>\n", f);
	if (!ct || !ct->present) {
		fputs("<p>No cyclictest output given (svreport --cyclictest FILE).</p>\n", f);
		return;
	}
	fprintf(f, "<p>%u thread(s), %" PRIu64 " cycles: min %" PRId64 " us, avg %" PRId64 " us, max %" PRId64
		   " us, %" PRIu64 " overflow(s). Compare with the SV latencies above: platform jitter shows "
		   "in both, the network path only in the hops.</p>\n",
		ct->threads, ct->total, ct->min_us, ct->avg_us, ct->max_us, ct->overflows);
	if (ct->hist_len)
		svr_plot_cyclic(f, ct);
}

void svr_html_late(struct svr_out *o)
{
	struct svr *r = o->r;
	FILE *f = o->f;
	char buf[32];

	if (!svr_nlate(r))
		return;
	fputs("<h2>Why late</h2><table><tr><th>svID</th><th>smpCnt</th><th>guest</th><th>thread (point)</th>"
	      "<th>waited</th><th>holder</th><th>policy/prio</th></tr>\n",
	      f);
	for (unsigned i = 0; i < svr_nlate(r); i++) {
		const struct svr_late *l = svr_late_get(r, i);
		const struct svr_stream_info *st = svr_stream(r, l->stream);

		fputs("<tr><td>", f);
		svr_html_esc(f, st ? st->svid : "?");
		fprintf(f, "</td><td>%u</td><td>", l->smp_cnt);
		svr_html_esc(f, svr_out_guest(r, l->guest, "-"));
		fputs("</td><td>", f);
		svr_html_esc(f, l->feeder_comm);
		/* T2b: it fed the guest; T2a: it carried the frame (a user-space switch's thread) */
		fprintf(f, " (%s)", sv_point_name(l->point));
		sv_stats_format_ns(l->wait_ns, buf, sizeof(buf));
		fprintf(f, "</td><td>%s</td><td>", buf);
		svr_html_esc(f, svr_holder_label(l->holder_comm, l->holder_pid));
		if (svr_late_unheld(l))
			fputs("</td><td>-</td></tr>\n", f);
		else
			fprintf(f, " (%u)</td><td>%s/%u</td></tr>\n", l->holder_pid, sv_sched_policy_name(l->holder_policy),
				l->holder_prio);
	}
	fputs("</table>\n", f);
}

void svr_html_drops(struct svr_out *o)
{
	FILE *f = o->f;

	if (!svr_ndrops(o->r))
		return;
	fputs("<h2>Drops</h2><table><tr><th>point</th><th>guest</th><th>reason</th><th>count</th></tr>\n", f);
	for (unsigned i = 0; i < svr_ndrops(o->r); i++) {
		const struct svr_drop *d = svr_drop_get(o->r, i);

		fprintf(f, "<tr><td>%s</td><td>", sv_point_name(d->point));
		svr_html_esc(f, svr_out_guest(o->r, d->guest, "-"));
		fputs("</td><td>", f);
		svr_html_esc(f, d->name);
		fprintf(f, "</td><td>%" PRIu64 "</td></tr>\n", d->count);
	}
	fputs("</table>\n", f);
}

void svr_html_disturbance(struct svr_out *o)
{
	if (o->dr)
		svr_plot_disturbance(o->f, o->dr);
}

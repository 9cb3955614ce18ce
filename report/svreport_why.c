// SPDX-License-Identifier: Apache-2.0
/* svreport's why late by cause: see svreport_why.h. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "svreport_out.h"
#include "svreport_private.h"

/* The frame gathered so far into the run's tally and, when among the worst, the list. */
static void flush(struct svr_why *w)
{
	unsigned i;

	if (!w->have_cur)
		return;
	w->have_cur = false;
	sv_why_tally_add(&w->tally, w->cur.hop, w->cur.n);
	if (w->nworst == SVR_MAX_WHY && w->worst[w->nworst - 1].total_ns >= w->cur.total_ns)
		return;
	if (w->nworst < SVR_MAX_WHY)
		w->nworst++;
	for (i = w->nworst - 1; i > 0 && w->worst[i - 1].total_ns < w->cur.total_ns; i--)
		w->worst[i] = w->worst[i - 1];
	w->worst[i] = w->cur;
}

void svr_why_record(struct svr *r, uint32_t stream, int guest, const struct sv_rec_why *y)
{
	struct svr_why *w = &r->why;
	struct svr_why_frame *c = &w->cur;

	w->records++;
	/* the next hop of the frame being gathered: same frame, starting where the last hop ended */
	if (w->have_cur && c->stream == stream && c->guest == guest && c->tai_sec == y->tai_sec &&
	    c->smp_cnt == y->smp_cnt && c->hop[c->n - 1].point == y->from_point) {
		if (c->n == 2) {
			w->orphans++;
			return;
		}
		c->hop[c->n++] = *y;
		c->total_ns += y->t_to_ns - y->t_from_ns;
		return;
	}
	flush(w);
	*c = (struct svr_why_frame){ .stream = stream, .guest = (int16_t)guest, .tai_sec = y->tai_sec,
				     .smp_cnt = y->smp_cnt, .n = 1, .total_ns = y->t_to_ns - y->t_from_ns };
	c->hop[0] = *y;
	w->have_cur = true;
}

struct svr_why *svr_why_finish(struct svr *r)
{
	struct svr_why *w = &r->why;

	if (!w->done) {
		flush(w);
		sv_why_tally_sort(&w->tally);
		w->done = true;
	}
	return w;
}

/* "T1-T2b" of a frame's hops. */
static void frame_hop(const struct svr_why_frame *fr, char *buf, size_t n)
{
	sv_hop_format(fr->hop[0].from_point, fr->hop[fr->n - 1].point, buf, n);
}

/* "steal 4.1ms, irq_timer 200us, unexplained 100us": the frame's causes over its hops, largest first, at most
 * @max of them ("+ K more" after). */
static void frame_causes(const struct svr_why_frame *fr, unsigned max, char *buf, size_t n)
{
	unsigned shown = 0;
	int64_t sum[SV_REC_WHY_SLOTS] = { 0 };
	size_t len = 0;
	char v[24];

	buf[0] = 0;
	for (unsigned i = 0; i < fr->n; i++)
		for (unsigned c = 0; c < SV_REC_WHY_SLOTS; c++)
			sum[c] += fr->hop[i].ns[c];
	for (;;) {
		unsigned best = SV_REC_WHY_SLOTS;

		for (unsigned c = 0; c < SV_WHY_NR; c++)
			if (sum[c] > 0 && (best == SV_REC_WHY_SLOTS || sum[c] > sum[best]))
				best = c;
		if (best == SV_REC_WHY_SLOTS || len + 1 >= n)
			return;
		if (shown++ == max) {
			unsigned more = 0;

			for (unsigned c = 0; c < SV_WHY_NR; c++)
				more += sum[c] > 0;
			snprintf(buf + len, n - len, " + %u more", more);
			return;
		}
		sv_stats_format_ns(sum[best], v, sizeof(v));
		len += (size_t)snprintf(buf + len, n - len, "%s%s %s", len ? ", " : "", sv_rec_why_cause_name(best), v);
		if (len >= n)
			return;
		sum[best] = 0;
	}
}

#define TEXT_WORST 10

void svr_text_why(struct svr_out *o)
{
	struct svr_why *w = svr_why_finish(o->r);
	char line[1024], v[24], causes[512], hop[32], dom[96];
	FILE *f = o->f;

	if (!w->tally.frames)
		return;
	sv_stats_format_ns(w->tally.late_ns, v, sizeof(v));
	fprintf(f, "\nwhy late, by cause (svtrace's decomposition: %" PRIu64 " late frames, %s)\n", w->tally.frames, v);
	sv_why_tally_format(&w->tally, line, sizeof(line));
	fprintf(f, "  %s\n", line);
	{
		struct svr_why_frame all = { .n = 1 };

		/* the run's causes, as one frame's, largest first */
		memcpy(all.hop[0].ns, w->tally.ns, sizeof(all.hop[0].ns));
		frame_causes(&all, SV_WHY_NR, causes, sizeof(causes));
	}
	fprintf(f, "  named causes: %.1f%% of the late time; %s\n", 100.0 * sv_why_named_share(&w->tally), causes);
	if (w->orphans)
		fprintf(f, "  %" PRIu64 " WHY records fitted no frame (more than two hops in a row): not counted\n",
			w->orphans);
	for (unsigned i = 0; i < w->nworst && i < TEXT_WORST; i++) {
		const struct svr_why_frame *fr = &w->worst[i];
		const struct svr_stream_info *st = svr_stream(o->r, fr->stream);
		struct sv_why_dom d;

		frame_hop(fr, hop, sizeof(hop));
		sv_stats_format_ns(fr->total_ns, v, sizeof(v));
		frame_causes(fr, 5, causes, sizeof(causes));
		sv_why_dominant(fr->hop, fr->n, &d);
		sv_why_dom_format(&d, dom, sizeof(dom));
		fprintf(f, "  %s smpCnt %u %s %s %s: %s (%s)\n", st ? st->svid : "?", fr->smp_cnt,
			svr_out_guest(o->r, fr->guest, "-"), hop, v, causes, dom);
	}
}

void svr_json_why(struct svr_out *o)
{
	struct svr_why *w = svr_why_finish(o->r);
	struct sv_json *j = o->j;
	char line[1024];

	sv_json_key(j, "why_by_cause");
	if (!w->tally.frames && !w->records) {
		sv_json_null(j);
		return;
	}
	sv_json_object_begin(j);
	sv_json_kv_uint(j, "records", w->records);
	sv_json_kv_uint(j, "orphans", w->orphans);
	sv_why_tally_format(&w->tally, line, sizeof(line));
	sv_json_kv_str(j, "summary", line);
	sv_why_json_totals(j, &w->tally);
	sv_json_key(j, "worst");
	sv_json_array_begin(j);
	for (unsigned i = 0; i < w->nworst; i++) {
		const struct svr_why_frame *fr = &w->worst[i];
		const struct svr_stream_info *st = svr_stream(o->r, fr->stream);
		struct sv_why_dom d;
		char dom[96];

		sv_why_dominant(fr->hop, fr->n, &d);
		sv_why_dom_format(&d, dom, sizeof(dom));
		sv_json_object_begin(j);
		sv_json_kv_str(j, "svID", st ? st->svid : NULL);
		sv_json_kv_uint(j, "tai_sec", fr->tai_sec);
		sv_json_kv_uint(j, "smpCnt", fr->smp_cnt);
		sv_json_kv_str(j, "guest", fr->guest < 0 ? NULL : svr_out_guest(o->r, fr->guest, NULL));
		sv_json_kv_int(j, "hop_ns", fr->total_ns);
		sv_json_kv_str(j, "dominant", dom);
		sv_json_key(j, "hops");
		sv_json_array_begin(j);
		for (unsigned k = 0; k < fr->n; k++)
			sv_why_json_hop(j, &fr->hop[k], sv_point_name(fr->hop[k].from_point),
					sv_point_name(fr->hop[k].point));
		sv_json_array_end(j);
		sv_json_object_end(j);
	}
	sv_json_array_end(j);
	sv_json_object_end(j);
}

/* ---- HTML: a stacked bar per frame (inline SVG, fixed size, as svreport_plot.c's) ---- */

#define BW 760		/* width */
#define BL 230		/* the frames' labels */
#define BR 20
#define BH 16		/* a bar */
#define BG 6		/* between bars */
#define BT 10
#define HTML_WORST 20

/* A colour per cause: steal red, hard IRQs orange, softirqs purple, queues brown, the run queue blue,
 * blocked grey, running and carried green, unexplained light grey. */
static const char *cause_color(unsigned c)
{
	static const char *const softirq[] = { "#9467bd", "#7b4fa6", "#b08fd1", "#5e3a8a", "#c9b3e6" };

	if (c == SV_WHY_STEAL)
		return "#d62728";
	if (c >= SV_WHY_IRQ_TIMER && c <= SV_WHY_IRQ_DEVICE)
		return c == SV_WHY_IRQ_TIMER ? "#ff7f0e" : c == SV_WHY_IRQ_IPI ? "#ffbb78" : "#e6550d";
	if (c >= SV_WHY_SOFTIRQ && c < SV_WHY_SOFTIRQ + 10)
		return softirq[(c - SV_WHY_SOFTIRQ) % 5];
	switch (c) {
	case SV_WHY_KSOFTIRQD:
		return "#8c564b";
	case SV_WHY_QDISC:
		return "#c49c94";
	case SV_WHY_BACKLOG:
		return "#a0522d";
	case SV_WHY_RUNQUEUE:
		return "#1f77b4";
	case SV_WHY_BLOCKED:
		return "#7f7f7f";
	case SV_WHY_RUNNING:
		return "#2ca02c";
	case SV_WHY_CARRIED:
		return "#98df8a";
	default:
		return "#dddddd";
	}
}

static void html_bars(struct svr_out *o, const struct svr_why *w)
{
	unsigned n = w->nworst < HTML_WORST ? w->nworst : HTML_WORST, nleg = 0;
	int64_t max = w->nworst ? w->worst[0].total_ns : 0;
	bool used[SV_WHY_NR] = { false };
	unsigned h = BT + n * (BH + BG) + 44;
	FILE *f = o->f;
	char v[24];

	if (!n || max <= 0)
		return;
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%u\" font-family=\"sans-serif\" "
		"font-size=\"11\">\n", BW, h);
	for (unsigned i = 0; i < n; i++) {
		const struct svr_why_frame *fr = &w->worst[i];
		const struct svr_stream_info *st = svr_stream(o->r, fr->stream);
		double x = BL, y = BT + i * (BH + BG), scale = (double)(BW - BL - BR) / (double)max;
		char hop[32];

		frame_hop(fr, hop, sizeof(hop));
		sv_stats_format_ns(fr->total_ns, v, sizeof(v));
		fprintf(f, "<text x=\"%d\" y=\"%.0f\" text-anchor=\"end\">", BL - 4, y + BH - 4);
		svr_html_esc(f, st ? st->svid : "?");
		fprintf(f, " %u ", fr->smp_cnt);
		svr_html_esc(f, svr_out_guest(o->r, fr->guest, "-"));
		fprintf(f, " %s %s</text>\n", hop, v);
		/* hop by hop, each cause a segment (its title says what and how long) */
		for (unsigned k = 0; k < fr->n; k++) {
			for (unsigned c = 0; c < SV_WHY_NR; c++) {
				double wd = (double)fr->hop[k].ns[c] * scale;

				if (fr->hop[k].ns[c] <= 0)
					continue;
				used[c] = true;
				sv_stats_format_ns(fr->hop[k].ns[c], v, sizeof(v));
				fprintf(f, "<rect x=\"%.1f\" y=\"%.0f\" width=\"%.2f\" height=\"%d\" fill=\"%s\"><title>%s-%s %s %s"
					"</title></rect>\n", x, y, wd, BH, cause_color(c), sv_point_name(fr->hop[k].from_point),
					sv_point_name(fr->hop[k].point), sv_rec_why_cause_name(c), v);
				x += wd;
			}
			if (k + 1 < fr->n)	/* where the next hop starts */
				fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.0f\" y2=\"%.0f\" stroke=\"#000\"/>\n", x, x,
					y - 2, y + BH + 2);
		}
	}
	/* the legend: the causes shown */
	for (unsigned c = 0; c < SV_WHY_NR; c++) {
		double lx = BL + (nleg % 6) * 86.0, ly = BT + n * (BH + BG) + 6 + (nleg / 6) * 14.0;

		if (!used[c])
			continue;
		if (nleg >= 12)
			break;
		fprintf(f, "<rect x=\"%.0f\" y=\"%.0f\" width=\"10\" height=\"10\" fill=\"%s\"/><text x=\"%.0f\" y=\"%.0f\">%s"
			"</text>\n", lx, ly, cause_color(c), lx + 13, ly + 9, sv_rec_why_cause_name(c));
		nleg++;
	}
	fputs("</svg>\n", f);
}

void svr_html_why(struct svr_out *o)
{
	struct svr_why *w = svr_why_finish(o->r);
	FILE *f = o->f;
	char line[1024], v[24];

	if (!w->tally.frames)
		return;
	sv_why_tally_format(&w->tally, line, sizeof(line));
	fputs("<h2>Why late, by cause</h2>\n<p>", f);
	svr_html_esc(f, line);
	sv_stats_format_ns(w->tally.late_ns, v, sizeof(v));
	fprintf(f, "; %.1f%% of their %s to named causes.</p>\n", 100.0 * sv_why_named_share(&w->tally), v);
	fputs("<table><tr><th>cause</th><th>time</th><th>share</th></tr>\n", f);
	for (unsigned c = 0; c < SV_WHY_NR; c++) {
		if (!w->tally.ns[c])
			continue;
		sv_stats_format_ns(w->tally.ns[c], v, sizeof(v));
		fprintf(f, "<tr><td>%s</td><td>%s</td><td>%.1f%%</td></tr>\n", sv_rec_why_cause_name(c), v,
			w->tally.late_ns ? 100.0 * (double)w->tally.ns[c] / (double)w->tally.late_ns : 0.0);
	}
	fputs("</table>\n", f);
	fprintf(f, "<p>The worst %u frames, each hop's time by cause (a line between the hops):</p>\n",
		w->nworst < HTML_WORST ? w->nworst : HTML_WORST);
	html_bars(o, w);
}

// SPDX-License-Identifier: Apache-2.0
/*
 * One self-contained HTML report: inline CSS and inline SVG only (no script, no font, no image, no
 * external reference), so it opens offline and can be mailed as one file. Every plot has fixed
 * width/height attributes, so it is drawn at a known size wherever it is opened.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sv_clock.h"
#include "svreport.h"

#define W 760
#define H 280
#define ML 70
#define MR 150
#define MT 14
#define MB 40

static const char *const colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
				     "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};
#define NCOLORS (sizeof(colors) / sizeof(colors[0]))

struct plot {
	FILE *f;
	double x0, x1, y0, y1;
	bool logx, logy;
	unsigned nlegend;
};

static void esc(FILE *f, const char *s)
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

static double tx(const struct plot *p, double x)
{
	double a = p->logx ? log10(x > 0 ? x : 1e-9) : x, lo = p->logx ? log10(p->x0) : p->x0,
	       hi = p->logx ? log10(p->x1) : p->x1;

	if (hi <= lo)
		hi = lo + 1;
	a = (a - lo) / (hi - lo);
	if (a < 0)
		a = 0;
	if (a > 1)
		a = 1;
	return ML + a * (W - ML - MR);
}

static double ty(const struct plot *p, double y)
{
	double a = p->logy ? log10(y > 0 ? y : 1e-9) : y, lo = p->logy ? log10(p->y0) : p->y0,
	       hi = p->logy ? log10(p->y1) : p->y1;

	if (hi <= lo)
		hi = lo + 1;
	a = (a - lo) / (hi - lo);
	if (a < 0)
		a = 0;
	if (a > 1)
		a = 1;
	return H - MB - a * (H - MT - MB);
}

static void fmt_axis(double v, bool ns, char *buf, size_t n)
{
	if (ns)
		sv_stats_format_ns((int64_t)v, buf, n);
	else if (fabs(v) >= 1e6)
		snprintf(buf, n, "%.3g", v);
	else
		snprintf(buf, n, "%g", v);
}

/* Axes with ticks: decades on log axes, ~5 round steps on linear ones. */
static void plot_begin(struct plot *p, FILE *f, const char *title, const char *xlabel, bool xns,
		       const char *ylabel, bool yns, double x0, double x1, bool logx, double y0, double y1,
		       bool logy)
{
	char buf[32];

	memset(p, 0, sizeof(*p));
	p->f = f;
	p->logx = logx;
	p->logy = logy;
	if (logx && x0 <= 0)
		x0 = 1;
	if (logy && y0 <= 0)
		y0 = 0.5;
	if (x1 <= x0)
		x1 = logx ? x0 * 10 : x0 + 1;
	if (y1 <= y0)
		y1 = logy ? y0 * 10 : y0 + 1;
	p->x0 = x0;
	p->x1 = x1;
	p->y0 = y0;
	p->y1 = y1;
	fputs("<figure><figcaption>", f);
	esc(f, title);
	fprintf(f, "</figcaption>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		   "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"11\">\n",
		W, H, W, H);
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#fff\" stroke=\"#888\"/>\n", ML, MT,
		W - ML - MR, H - MT - MB);
	for (int axis = 0; axis < 2; axis++) {
		double lo = axis ? y0 : x0, hi = axis ? y1 : x1;
		bool lg = axis ? logy : logx, isns = axis ? yns : xns;
		double ticks[24];
		unsigned nt = 0;

		if (lg) {
			for (double d = pow(10, floor(log10(lo))); d <= hi * 1.0001 && nt < 24; d *= 10)
				if (d >= lo * 0.9999)
					ticks[nt++] = d;
		} else {
			double span = hi - lo, step = pow(10, floor(log10(span / 5)));

			if (span / step > 10)
				step *= 2;
			if (span / step > 10)
				step *= 2.5;
			for (double v = ceil(lo / step) * step; v <= hi + step * 1e-9 && nt < 24; v += step)
				ticks[nt++] = v;
		}
		for (unsigned i = 0; i < nt; i++) {
			fmt_axis(ticks[i], isns, buf, sizeof(buf));
			if (!axis) {
				double x = tx(p, ticks[i]);

				fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>"
					   "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
					x, MT, x, H - MB, x, H - MB + 14, buf);
			} else {
				double y = ty(p, ticks[i]);

				fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>"
					   "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
					ML, y, W - MR, y, ML - 4, y + 4, buf);
			}
		}
	}
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", (ML + W - MR) / 2, H - 6);
	esc(f, xlabel);
	fprintf(f, "</text><text x=\"12\" y=\"%d\" text-anchor=\"middle\" transform=\"rotate(-90 12 %d)\">",
		(MT + H - MB) / 2, (MT + H - MB) / 2);
	esc(f, ylabel);
	fputs("</text>\n", f);
}

static void plot_legend(struct plot *p, const char *name, unsigned color, bool dashed)
{
	double y = MT + 12 + 16 * p->nlegend++;

	fprintf(p->f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"%s/>"
		      "<text x=\"%d\" y=\"%.1f\">",
		W - MR + 8, y - 4, W - MR + 28, y - 4, colors[color % NCOLORS],
		dashed ? " stroke-dasharray=\"4 3\"" : "", W - MR + 32, y);
	esc(p->f, name);
	fputs("</text>\n", p->f);
}

static void poly_begin(struct plot *p, unsigned color, bool dashed)
{
	fprintf(p->f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\"%s points=\"",
		colors[color % NCOLORS], dashed ? " stroke-dasharray=\"4 3\"" : "");
}

static void poly_pt(struct plot *p, double x, double y)
{
	fprintf(p->f, "%.1f,%.1f ", tx(p, x), ty(p, y));
}

static void poly_end(struct plot *p)
{
	fputs("\"/>\n", p->f);
}

static void plot_end(struct plot *p)
{
	fputs("</svg></figure>\n", p->f);
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

/* The histogram a hop's plots use: per-frame values, else the merged per-second summaries. */
static const struct sv_stats *hop_hist(const struct svr_hop *h)
{
	if (!h->series)
		return NULL;
	if (!h->from_summaries)
		return h->series->hist;
	return h->series->sum_hist;
}

/* Latency histogram: sv_stats buckets regrouped 8 per octave. */
static void plot_histogram(FILE *f, const char *title, const struct sv_stats *hs, unsigned color)
{
	enum { NB = 8 * 64 };
	static uint64_t cnt[NB];
	double xlo = 1e18, xhi = 0, ymax = 1;
	struct plot p;
	unsigned first = NB, last = 0;

	memset(cnt, 0, sizeof(cnt));
	for (uint32_t i = 0; i < hs->top && i < SV_STATS_BUCKETS; i++) {
		double mid;
		unsigned k;

		if (!hs->bucket[i])
			continue;
		mid = ((double)sv_stats_bucket_lo(i) + (double)sv_stats_bucket_hi(i)) / 2 + 0.5;
		k = (unsigned)(8 * log2(mid < 1 ? 1 : mid));
		if (k >= NB)
			k = NB - 1;
		cnt[k] += hs->bucket[i];
		if (k < first)
			first = k;
		if (k > last)
			last = k;
	}
	if (first > last)
		first = last = 0;
	for (unsigned k = first; k <= last; k++)
		if ((double)cnt[k] > ymax)
			ymax = (double)cnt[k];
	xlo = pow(2, first / 8.0);
	xhi = pow(2, (last + 1) / 8.0);
	plot_begin(&p, f, title, "latency", true, "frames", false, xlo / 1.5, xhi * 1.5, true, 0.5, ymax * 2,
		   true);
	for (unsigned k = first; k <= last; k++) {
		double x0 = pow(2, k / 8.0), x1 = pow(2, (k + 1) / 8.0);

		if (!cnt[k])
			continue;
		fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>\n", tx(&p, x0),
			ty(&p, (double)cnt[k]), tx(&p, x1) - tx(&p, x0) + 0.3, ty(&p, 0.5) - ty(&p, (double)cnt[k]),
			colors[color % NCOLORS]);
	}
	plot_legend(&p, "frames per bin", color, false);
	plot_end(&p);
}

static double bin_quantile(const struct svr_bin *b, double q)
{
	uint64_t need = (uint64_t)ceil(q * (double)b->count), cum = 0;

	for (unsigned k = 0; k < SVR_COARSE_BINS; k++) {
		cum += b->coarse[k];
		if (cum >= need && cum) {
			/* middle of the bin: [2^e, 1.5 * 2^e) or [1.5 * 2^e, 2^(e+1)) us (coarse_of) */
			if (!k)
				return 500;
			return 1000.0 * pow(2, (k - 1) / 2) * ((k - 1) % 2 ? 1.75 : 1.25);
		}
	}
	return (double)b->max;
}

static void plot_over_time(FILE *f, const char *title, const struct svr_bin *b, unsigned n, uint32_t width)
{
	double ymin = 1e18, ymax = 1;
	struct plot p;

	for (unsigned i = 0; i < n; i++)
		if (b[i].count) {
			if ((double)(b[i].min > 0 ? b[i].min : 1) < ymin)
				ymin = (double)(b[i].min > 0 ? b[i].min : 1);
			if ((double)b[i].max > ymax)
				ymax = (double)b[i].max;
		}
	if (ymin > ymax)
		ymin = 1;
	plot_begin(&p, f, title, "time since start (s)", false, "latency", true, 0, (double)n * width, false,
		   ymin / 1.5, ymax * 1.5, true);
	for (unsigned s = 0; s < 4; s++) {
		static const char *const nm[4] = {"max", "p99 (plot resolution)", "p50 (plot resolution)", "min"};

		poly_begin(&p, s, s == 1 || s == 2);
		for (unsigned i = 0; i < n; i++) {
			double v;

			if (!b[i].count)
				continue;
			v = s == 0 ? (double)b[i].max : s == 3 ? (double)b[i].min : bin_quantile(&b[i], s == 1 ? 0.99 : 0.5);
			if (v > (double)b[i].max)
				v = (double)b[i].max;
			if (v < (double)b[i].min)
				v = (double)b[i].min;
			poly_pt(&p, ((double)i + 0.5) * width, v > 0 ? v : 1);
		}
		poly_end(&p);
		plot_legend(&p, nm[s], s, s == 1 || s == 2);
	}
	plot_end(&p);
}

/* CDF drawn on a tail scale: y = -log10(1 - F), ticks at 50 %, 90 %, 99 %, ... */
static void cdf_points(struct plot *p, const struct svr_hop *h)
{
	const struct svr_series *s = h->series;

	if (!h->from_summaries && s->vals && !s->inexact && s->nvals && h->stream < 0) {
		uint64_t n = s->nvals;	/* sorted by svr_hop_get */

		for (unsigned k = 0; k <= 400; k++) {
			double y = 5.0 * k / 400, F = 1 - pow(10, -y);
			uint64_t rank = (uint64_t)ceil(F * (double)n);

			if (rank < 1)
				rank = 1;
			if (rank > n)
				break;
			poly_pt(p, s->vals[rank - 1] > 0 ? s->vals[rank - 1] : 1, y < 0.001 ? 0.001 : y);
			if (rank == n)
				break;
		}
		return;
	}
	{
		const struct sv_stats *hs = hop_hist(h);
		uint64_t cum = 0;

		if (!hs || !hs->count)
			return;
		for (uint32_t i = 0; i < hs->top; i++) {
			double F, y;

			if (!hs->bucket[i])
				continue;
			cum += hs->bucket[i];
			F = (double)cum / (double)hs->count;
			y = F >= 1 ? 5 : -log10(1 - F);
			if (y > 5)
				y = 5;
			poly_pt(p, (double)(sv_stats_bucket_hi(i) > 0 ? sv_stats_bucket_hi(i) : 1), y < 0.001 ? 0.001 : y);
		}
	}
}

static void plot_cdf(FILE *f, struct svr *r, int g, uint8_t (*pairs)[2], unsigned n)
{
	double xlo = 1e18, xhi = 1;
	struct plot p;
	char title[128], lab[64];

	for (unsigned i = 0; i < n; i++) {
		struct svr_hop h;

		if (svr_hop_get(r, pairs[i][0], pairs[i][1], g, -1, &h) || !h.count)
			continue;
		if ((double)(h.lat.min > 0 ? h.lat.min : 1) < xlo)
			xlo = (double)(h.lat.min > 0 ? h.lat.min : 1);
		if ((double)h.lat.max > xhi)
			xhi = (double)h.lat.max;
	}
	if (xlo > xhi)
		xlo = 1;
	snprintf(title, sizeof(title), "CDF of latency per hop%s%s (tail scale: 1 = 90%%, 2 = 99%%, 3 = 99.9%%)",
		 g < 0 ? "" : ", guest ", g < 0 ? "" : svr_guest_name(r, (unsigned)g));
	plot_begin(&p, f, title, "latency", true, "-log10(1 - F)", false, xlo / 1.5, xhi * 1.5, true, 0, 5, false);
	for (unsigned i = 0; i < n; i++) {
		struct svr_hop h;

		if (svr_hop_get(r, pairs[i][0], pairs[i][1], g, -1, &h) || !h.count)
			continue;
		poly_begin(&p, i, false);
		cdf_points(&p, &h);
		poly_end(&p);
		sv_hop_format(pairs[i][0], pairs[i][1], lab, sizeof(lab));
		plot_legend(&p, lab, i, false);
	}
	plot_end(&p);
}

/* One hop, every guest on one plot: the comparison the lab's setups (own class vs shared class, CPU hog
 * or not) are about. */
static void plot_cdf_guests(FILE *f, struct svr *r, unsigned a, unsigned b)
{
	double xlo = 1e18, xhi = 1;
	char title[160], hop[16];
	struct plot p;
	unsigned drawn = 0;

	for (unsigned g = 0; g < svr_nguests(r); g++) {
		struct svr_hop h;

		if (svr_hop_get(r, a, b, (int)g, -1, &h) || !h.count)
			continue;
		drawn++;
		if ((double)(h.lat.min > 0 ? h.lat.min : 1) < xlo)
			xlo = (double)(h.lat.min > 0 ? h.lat.min : 1);
		if ((double)h.lat.max > xhi)
			xhi = (double)h.lat.max;
	}
	if (drawn < 2)
		return;
	sv_hop_format(a, b, hop, sizeof(hop));
	snprintf(title, sizeof(title), "CDF of %s per guest (tail scale: 1 = 90%%, 2 = 99%%, 3 = 99.9%%)", hop);
	plot_begin(&p, f, title, "latency", true, "-log10(1 - F)", false, xlo / 1.5, xhi * 1.5, true, 0, 5, false);
	for (unsigned g = 0; g < svr_nguests(r); g++) {
		struct svr_hop h;

		if (svr_hop_get(r, a, b, (int)g, -1, &h) || !h.count)
			continue;
		poly_begin(&p, g, false);
		cdf_points(&p, &h);
		poly_end(&p);
		plot_legend(&p, svr_guest_name(r, g), g, false);
	}
	plot_end(&p);
}

static void guests_side_by_side(FILE *f, struct svr *r)
{
	fputs("<h2>Guests side by side</h2>\n<p>The same hops of every guest, with the setup each guest stands "
	      "for: compare them to see what a traffic class or a noisy neighbour does to the SV path.</p>\n"
	      "<table><tr><th>hop</th><th>guest</th><th>setup</th><th>count</th><th>lost</th><th>p50</th>"
	      "<th>p99</th><th>p99.9</th><th>max</th></tr>\n",
	      f);
	for (unsigned k = 0; k < SVR_NCOMPARE; k++)
		for (unsigned g = 0; g < svr_nguests(r); g++) {
			struct svr_hop h;
			char hop[16], v[4][24];

			if (svr_hop_get(r, svr_compare_hops[k][0], svr_compare_hops[k][1], (int)g, -1, &h) || !h.count)
				continue;
			sv_hop_format(svr_compare_hops[k][0], svr_compare_hops[k][1], hop, sizeof(hop));
			sv_stats_format_ns(h.lat.p50, v[0], 24);
			sv_stats_format_ns(h.lat.p99, v[1], 24);
			sv_stats_format_ns(h.lat.p999, v[2], 24);
			sv_stats_format_ns(h.lat.max, v[3], 24);
			fprintf(f, "<tr><td>%s</td><td>", hop);
			esc(f, svr_guest_name(r, g));
			fputs("</td><td>", f);
			esc(f, svr_guest_label(r, g) ? svr_guest_label(r, g) : "-");
			fprintf(f, "</td><td>%" PRIu64 "</td><td%s>%" PRIu64 "</td><td>%s</td><td>%s</td><td>%s</td>"
				   "<td>%s</td></tr>\n",
				h.count, h.lost ? " class=\"bad\"" : "", h.lost, v[0], v[1], v[2], v[3]);
		}
	fputs("</table>\n", f);
	for (unsigned k = 0; k < SVR_NCOMPARE; k++)
		plot_cdf_guests(f, r, svr_compare_hops[k][0], svr_compare_hops[k][1]);
}

static void plot_pacing(FILE *f, struct svr *r)
{
	double xlo = 1e18, xhi = 1;
	struct plot p;
	unsigned c = 0;

	for (unsigned pt = 1; pt < SVR_NPOINTS; pt++)
		for (int g = -1; g < (int)svr_nguests(r); g++) {
			const struct svr_point_stats *ps;

			if ((pt <= SV_POINT_T1) != (g < 0) || !svr_point_present(r, pt, g))
				continue;
			ps = svr_point(r, pt, g);
			if (!ps->pacing || !ps->pacing->count)
				continue;
			if ((double)(ps->pacing->min > 0 ? ps->pacing->min : 1) < xlo)
				xlo = (double)(ps->pacing->min > 0 ? ps->pacing->min : 1);
			if ((double)ps->pacing->max > xhi)
				xhi = (double)ps->pacing->max;
		}
	if (xlo > xhi)
		xlo = 1;
	plot_begin(&p, f, "Pacing: interval between consecutive frames of a stream at each point (CDF, tail scale)",
		   "interval", true, "-log10(1 - F)", false, xlo / 1.5, xhi * 1.5, true, 0, 5, false);
	for (unsigned pt = 1; pt < SVR_NPOINTS; pt++)
		for (int g = -1; g < (int)svr_nguests(r); g++) {
			const struct svr_point_stats *ps;
			uint64_t cum = 0;
			char lab[80];

			if ((pt <= SV_POINT_T1) != (g < 0) || !svr_point_present(r, pt, g))
				continue;
			ps = svr_point(r, pt, g);
			if (!ps->pacing || !ps->pacing->count)
				continue;
			poly_begin(&p, c, false);
			for (uint32_t i = 0; i < ps->pacing->top; i++) {
				double F, y;

				if (!ps->pacing->bucket[i])
					continue;
				cum += ps->pacing->bucket[i];
				F = (double)cum / (double)ps->pacing->count;
				y = F >= 1 ? 5 : -log10(1 - F);
				poly_pt(&p, (double)(sv_stats_bucket_hi(i) > 0 ? sv_stats_bucket_hi(i) : 1),
					y < 0.001 ? 0.001 : (y > 5 ? 5 : y));
			}
			poly_end(&p);
			snprintf(lab, sizeof(lab), "%s %s", sv_point_name(pt), g < 0 ? "" : svr_guest_name(r, (unsigned)g));
			plot_legend(&p, lab, c, false);
			c++;
		}
	if (!c)
		fprintf(f, "<text x=\"%d\" y=\"%d\">no consecutive frames recorded</text>\n", ML + 10, MT + 20);
	plot_end(&p);
}

static void plot_loss(FILE *f, struct svr *r)
{
	double ymax = 1;
	unsigned n = 0, nb;
	uint32_t width = 1;
	int64_t first = 0;
	struct plot p;
	const struct svr_bin *any = NULL;
	uint8_t pairs[64][2];

	/* bin geometry from any series */
	for (int g = -1; g < (int)svr_nguests(r) && !any; g++) {
		unsigned np = svr_hop_list(r, g, pairs, 64);

		for (unsigned i = 0; i < np && !any; i++)
			any = svr_hop_bins(r, pairs[i][0], pairs[i][1], g, &nb, &width, &first);
	}
	for (int g = -1; g < (int)svr_nguests(r); g++) {
		const uint64_t *lb = svr_lost_bins(r, g, &nb);

		if (!lb)
			continue;
		if (nb > n)
			n = nb;
		for (unsigned i = 0; i < nb; i++)
			if ((double)lb[i] > ymax)
				ymax = (double)lb[i];
	}
	if (!n)
		n = 1;
	plot_begin(&p, f, "Loss over time: frames lost per time bin", "time since start (s)", false, "frames lost",
		   false, 0, (double)n * width, false, 0, ymax * 1.1, false);
	for (int g = -1; g < (int)svr_nguests(r); g++) {
		const uint64_t *lb = svr_lost_bins(r, g, &nb);

		if (!lb)
			continue;
		poly_begin(&p, (unsigned)(g + 1), false);
		for (unsigned i = 0; i < nb; i++)
			poly_pt(&p, ((double)i + 0.5) * width, (double)lb[i]);
		poly_end(&p);
		plot_legend(&p, g < 0 ? "before the guests" : svr_guest_name(r, (unsigned)g), (unsigned)(g + 1), false);
	}
	plot_end(&p);
}

static void plot_cyclic(FILE *f, const struct svr_cyclic *ct)
{
	double ymax = 1;
	unsigned last = 1;
	struct plot p;

	for (unsigned i = 0; i < ct->hist_len; i++)
		if (ct->hist[i]) {
			last = i + 1;
			if ((double)ct->hist[i] > ymax)
				ymax = (double)ct->hist[i];
		}
	plot_begin(&p, f, "cyclictest baseline: wake-up latency histogram of the host", "latency (us)", false,
		   "cycles", false, 0, last + 1, false, 0.5, ymax * 2, true);
	p.logy = true;
	for (unsigned i = 0; i < last; i++) {
		if (!ct->hist[i])
			continue;
		fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>\n", tx(&p, i),
			ty(&p, (double)ct->hist[i]), tx(&p, i + 1) - tx(&p, i) + 0.3,
			ty(&p, 0.5) - ty(&p, (double)ct->hist[i]), colors[4]);
	}
	plot_legend(&p, "cycles per us", 4, false);
	plot_end(&p);
}

static void table_hop(FILE *f, struct svr *r, unsigned a, unsigned b, int g, int stream)
{
	struct svr_hop h;
	char name[16], v[6][24];
	const int64_t vals[6] = {0};

	(void)vals;
	if (svr_hop_get(r, a, b, g, stream, &h))
		return;
	sv_hop_format(a, b, name, sizeof(name));
	sv_stats_format_ns(h.lat.min, v[0], 24);
	sv_stats_format_ns(h.lat.p50, v[1], 24);
	sv_stats_format_ns(h.lat.p99, v[2], 24);
	sv_stats_format_ns(h.lat.p999, v[3], 24);
	sv_stats_format_ns(h.lat.p9999, v[4], 24);
	sv_stats_format_ns(h.lat.max, v[5], 24);
	fprintf(f, "<tr><td>%s</td><td>", name);
	esc(f, g < 0 ? "-" : svr_guest_name(r, (unsigned)g));
	fputs("</td><td>", f);
	esc(f, stream < 0 ? "(all)" : svr_stream(r, (unsigned)stream)->svid);
	fprintf(f, "</td><td>%" PRIu64 "</td><td%s>%" PRIu64 "</td><td>%" PRIu64 "</td>", h.count,
		h.lost ? " class=\"bad\"" : "", h.lost, h.missing);
	for (unsigned i = 0; i < 6; i++)
		fprintf(f, "<td>%s%s</td>", h.count ? (h.lat.exact || i == 0 || i == 5 ? "" : "~") : "",
			h.count ? v[i] : "-");
	fprintf(f, "<td>%s</td></tr>\n", h.from_summaries ? "summaries" : h.lat.exact ? "frames, exact" : "frames");
}

/* A disturbance record: the phase currents (the A channels of phases A, B, C; else the first three) against
 * time from the trigger, vertical lines at the trigger (pickup) and where its TRIP status channel rises. */
static void plot_disturbance(FILE *f, const struct sv_ct_data *d)
{
	const struct sv_ct_record *r = &d->r;
	double t0 = (double)(r->trigger_utc_ns - r->start_utc_ns) / 1e9, lo = INFINITY, hi = -INFINITY;
	unsigned ch[3], nch = 0, trip_col = r->ndig;
	int trip_row = -1;
	struct plot p;
	char title[256];

	for (const char *ph = "ABC"; *ph && nch < 3; ph++)
		for (unsigned i = 0; i < r->nan; i++)
			if (!strcmp(r->an[i].uu, "A") && r->an[i].ph[0] == *ph) {
				ch[nch++] = i;
				break;
			}
	if (!nch)
		for (unsigned i = 0; i < r->nan && nch < 3; i++)
			ch[nch++] = i;
	for (unsigned i = 0; i < r->ndig; i++)
		if (!strcmp(r->dig[i].id, "TRIP"))
			trip_col = i;
	for (uint32_t n = 0; n < d->n; n++) {
		for (unsigned k = 0; k < nch; k++) {
			double v = d->v[(size_t)n * r->nan + ch[k]];

			if (isfinite(v)) {
				lo = v < lo ? v : lo;
				hi = v > hi ? v : hi;
			}
		}
		if (trip_row < 0 && trip_col < r->ndig && d->d[(size_t)n * r->ndig + trip_col])
			trip_row = (int)n;
	}
	if (!isfinite(lo))
		lo = hi = 0;
	fputs("<h2>Disturbance record</h2><p>", f);
	esc(f, r->station);
	fputs(" ", f);
	esc(f, r->device);
	fprintf(f, ": %u samples at %g/s, %s; time 0 is the trigger (pickup)%s</p>\n", d->n, r->rate,
		sv_ct_format_names[r->format], trip_row >= 0 ? ", the red line the trip" : "");
	snprintf(title, sizeof(title), "Phase currents around the trip (%u channels)", nch);
	plot_begin(&p, f, title, "seconds from the trigger", false, r->nan ? r->an[ch[0]].uu : "", false,
		   -t0, d->n ? d->t_s[d->n - 1] - t0 : 1, false, lo, hi, false);
	for (unsigned k = 0; k < nch; k++) {
		poly_begin(&p, k, false);
		for (uint32_t n = 0; n < d->n; n++) {
			double v = d->v[(size_t)n * r->nan + ch[k]];

			if (isfinite(v))
				poly_pt(&p, d->t_s[n] - t0, v);
		}
		poly_end(&p);
		plot_legend(&p, r->an[ch[k]].id, k, false);
	}
	fprintf(f, "<line class=\"trigger\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#000\" "
		   "stroke-dasharray=\"4 3\"/>\n", tx(&p, 0), MT, tx(&p, 0), H - MB);
	if (trip_row >= 0)
		fprintf(f, "<line class=\"trip\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#c00\" "
			   "stroke-width=\"2\"/>\n", tx(&p, d->t_s[trip_row] - t0), MT, tx(&p, d->t_s[trip_row] - t0),
			H - MB);
	plot_legend(&p, "trigger (pickup)", 7, true);
	plot_end(&p);
}

int svr_write_html(struct svr *r, const struct svr_budgets *b, const struct svr_eval *e,
		   const struct svr_cyclic *ct, const struct sv_ct_data *dr, FILE *f)
{
	uint8_t pairs[64][2];
	char lab[96], title[160], buf[32];
	unsigned color = 0;

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
	fprintf(f, "<h1>svkit latency report</h1>\n<p><span class=\"verdict %s\">%s</span> ",
		svr_verdict_name(e->verdict), svr_verdict_name(e->verdict));
	esc(f, e->why);
	fputs("</p>\n", f);
	if (svr_setup(r, 0)) {
		fputs("<h2>Setup</h2><ul>", f);
		for (unsigned i = 0; svr_setup(r, i); i++) {
			fputs("<li>", f);
			esc(f, svr_setup(r, i));
			fputs("</li>", f);
		}
		fputs("</ul>\n", f);
	}
	fputs("<h2>Clock</h2><ul>", f);
	fprintf(f, "<li>%s%s</li>", e->clock.ok ? "ok" : "UNSYNCHRONISED",
		e->clock.single_host ? " (every record from one host: one clock)" : "");
	for (unsigned i = 0; i < e->clock.nreasons; i++) {
		fputs("<li class=\"bad\">", f);
		esc(f, e->clock.reasons[i]);
		fputs("</li>", f);
	}
	for (unsigned i = 0; i < e->clock.nnotes; i++) {
		fputs("<li>", f);
		esc(f, e->clock.notes[i]);
		fputs("</li>", f);
	}
	fputs("</ul>\n<h2>Inputs</h2><table><tr><th>file</th><th>tool</th><th>host</th><th>guest</th><th>clock</th>"
	      "<th>records</th><th>end</th></tr>\n",
	      f);
	for (unsigned i = 0; i < svr_nfiles(r); i++) {
		const struct svr_file_info *fi = svr_file(r, i);

		fputs("<tr><td>", f);
		esc(f, fi->path);
		fputs("</td><td>", f);
		esc(f, fi->tool);
		fputs("</td><td>", f);
		esc(f, fi->host);
		fputs("</td><td>", f);
		esc(f, fi->guest);
		fprintf(f, "</td><td>%s%s</td><td>%" PRIu64 "</td><td>", sv_clock_name(fi->clock),
			fi->sync_ok ? "" : " (unsynchronised)", fi->records);
		esc(f, fi->err ? fi->errmsg : fi->clean_end ? "clean" : "no END record");
		if (svr_damaged(&fi->damage)) {
			char dmg[256];

			svr_damage_format(&fi->damage, dmg, sizeof(dmg));
			fputs("; damaged: ", f);
			esc(f, dmg);
		}
		if (fi->unwritten_records) {
			char u[320];

			svr_file_unwritten_format(fi, u, sizeof(u));
			fputs("; <span class=\"bad\">not written by its writer: ", f);
			esc(f, u);
			fputs("</span> (frames there are not recorded, not lost)", f);
		}
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n<h2>Budgets</h2><table><tr><th>hop</th><th>statistic</th><th>guest</th><th>limit</th>"
	      "<th>value</th><th>result</th></tr>\n",
	      f);
	for (unsigned i = 0; i < b->n; i++) {
		const struct svr_budget *bu = &b->b[i];
		char hop[16];

		sv_hop_format(bu->from, bu->to, hop, sizeof(hop));
		for (unsigned k = 0; k < e->nres[i]; k++) {
			const struct svr_budget_result *res = &e->res[i][k];
			char lim[32], val[32];

			if (bu->stat == SVR_STAT_LOST) {
				snprintf(lim, sizeof(lim), "%" PRId64, bu->limit);
				snprintf(val, sizeof(val), "%" PRId64, res->value);
			} else {
				sv_stats_format_ns(bu->limit, lim, sizeof(lim));
				sv_stats_format_ns(res->value, val, sizeof(val));
			}
			fprintf(f, "<tr><td>%s</td><td>%s</td><td>", hop, svr_stat_name(bu->stat));
			esc(f, res->guest < 0 ? "-" : svr_guest_name(r, (unsigned)res->guest));
			fprintf(f, "</td><td>%s</td><td>%s%s</td><td%s>%s</td></tr>\n", lim,
				res->evaluated && !res->exact ? "~" : "", res->evaluated ? val : "-",
				res->evaluated && !res->pass ? " class=\"bad\"" : "",
				!res->evaluated ? "no data" : res->pass ? "pass" : "EXCEEDED");
		}
	}
	fputs("</table>\n", f);
	if (svr_nguests(r) > 1)
		guests_side_by_side(f, r);
	fputs("<h2>Per hop</h2><p>Latency in the SEAPATH model: Ts sample time, T0 publisher TX, T1 "
	      "hypervisor ingress, T2a hypervisor egress, T2b taken by the guest feeder, T3 guest receive, T4 guest "
	      "application. ~ = from histograms (error &lt;= 0.8 %).</p>\n"
	      "<table><tr><th>hop</th><th>guest</th><th>stream</th><th>count</th><th>lost</th><th>missing</th>"
	      "<th>min</th><th>p50</th><th>p99</th><th>p99.9</th><th>p99.99</th><th>max</th><th>source</th></tr>\n",
	      f);
	for (int g = -1; g < (int)svr_nguests(r); g++) {
		unsigned n = svr_hop_list(r, g, pairs, 64);

		for (unsigned i = 0; i < n; i++) {
			table_hop(f, r, pairs[i][0], pairs[i][1], g, -1);
			if (svr_nstreams(r) > 1)
				for (unsigned s = 0; s < svr_nstreams(r); s++)
					table_hop(f, r, pairs[i][0], pairs[i][1], g, (int)s);
		}
	}
	fputs("</table>\n", f);

	if (svr_totals(r)->not_recorded) {
		fprintf(f, "<h2>Not recorded</h2><p class=\"bad\">%" PRIu64 " frames fell where a point's file had not "
			"written its records (a full disk at its writer, see the inputs): neither lost nor missing, "
			"unknown.</p>\n<table><tr><th>point</th><th>guest</th><th>frames not recorded</th></tr>\n",
			svr_totals(r)->not_recorded);
		for (unsigned p = 0; p < SVR_NPOINTS; p++)
			for (int g = -1; g < (int)svr_nguests(r); g++) {
				const struct svr_point_stats *ps;

				if ((p <= SV_POINT_T1) != (g < 0) || !svr_point_present(r, p, g))
					continue;
				ps = svr_point(r, p, g);
				if (!ps->not_recorded)
					continue;
				fprintf(f, "<tr><td>%s</td><td>", sv_point_name(p));
				esc(f, g < 0 ? "-" : svr_guest_name(r, (unsigned)g));
				fprintf(f, "</td><td>%" PRIu64 "</td></tr>\n", ps->not_recorded);
			}
		fputs("</table>\n", f);
	}
	fputs("<h2>Latency histograms</h2>\n", f);
	for (int g = -1; g < (int)svr_nguests(r); g++) {
		unsigned n = svr_hop_list(r, g, pairs, 64);

		for (unsigned i = 0; i < n; i++) {
			struct svr_hop h;
			const struct sv_stats *hs;

			if (svr_hop_get(r, pairs[i][0], pairs[i][1], g, -1, &h) || !(hs = hop_hist(&h)) || !hs->count)
				continue;
			hop_label(r, pairs[i][0], pairs[i][1], g, lab, sizeof(lab));
			snprintf(title, sizeof(title), "Latency histogram %s (%" PRIu64 " frames)", lab, hs->count);
			plot_histogram(f, title, hs, color++);
		}
	}
	fputs("<h2>Latency over time</h2>\n", f);
	for (int g = -1; g < (int)svr_nguests(r); g++) {
		unsigned n = svr_hop_list(r, g, pairs, 64);

		for (unsigned i = 0; i < n; i++) {
			unsigned nb;
			uint32_t width;
			int64_t first;
			const struct svr_bin *bins = svr_hop_bins(r, pairs[i][0], pairs[i][1], g, &nb, &width, &first);

			if (!bins)
				continue;
			hop_label(r, pairs[i][0], pairs[i][1], g, lab, sizeof(lab));
			snprintf(title, sizeof(title), "Latency over time %s (bins of %" PRIu32 " s)", lab, width);
			plot_over_time(f, title, bins, nb, width);
		}
	}
	fputs("<h2>CDF</h2>\n", f);
	for (int g = -1; g < (int)svr_nguests(r); g++) {
		unsigned n = svr_hop_list(r, g, pairs, 64);

		if (n)
			plot_cdf(f, r, g, pairs, n);
	}
	fputs("<h2>Pacing</h2>\n", f);
	plot_pacing(f, r);
	fputs("<h2>Loss</h2>\n", f);
	plot_loss(f, r);

	fputs("<h2>Host real-time baseline (cyclictest)</h2>\n", f);
	if (ct && ct->present) {
		fprintf(f, "<p>%u thread(s), %" PRIu64 " cycles: min %" PRId64 " us, avg %" PRId64 " us, max %" PRId64
			   " us, %" PRIu64 " overflow(s). Compare with the SV latencies above: platform jitter shows "
			   "in both, the network path only in the hops.</p>\n",
			ct->threads, ct->total, ct->min_us, ct->avg_us, ct->max_us, ct->overflows);
		if (ct->hist_len)
			plot_cyclic(f, ct);
	} else {
		fputs("<p>No cyclictest output given (svreport --cyclictest FILE).</p>\n", f);
	}

	if (svr_nlate(r)) {
		fputs("<h2>Why late</h2><table><tr><th>svID</th><th>smpCnt</th><th>guest</th><th>thread (point)</th>"
		      "<th>waited</th><th>holder</th><th>policy/prio</th></tr>\n",
		      f);
		for (unsigned i = 0; i < svr_nlate(r); i++) {
			const struct svr_late *l = svr_late_get(r, i);
			const struct svr_stream_info *st = svr_stream(r, l->stream);

			fputs("<tr><td>", f);
			esc(f, st ? st->svid : "?");
			fprintf(f, "</td><td>%u</td><td>", l->smp_cnt);
			esc(f, l->guest >= 0 ? svr_guest_name(r, (unsigned)l->guest) : "-");
			fputs("</td><td>", f);
			esc(f, l->feeder_comm);
			/* T2b: it fed the guest; T2a: it carried the frame (a user-space switch's thread) */
			fprintf(f, " (%s)", sv_point_name(l->point));
			sv_stats_format_ns(l->wait_ns, buf, sizeof(buf));
			fprintf(f, "</td><td>%s</td><td>", buf);
			esc(f, svr_holder_label(l->holder_comm, l->holder_pid));
			if (svr_late_unheld(l))
				fputs("</td><td>-</td></tr>\n", f);
			else
				fprintf(f, " (%u)</td><td>%s/%u</td></tr>\n", l->holder_pid, sv_sched_policy_name(l->holder_policy),
					l->holder_prio);
		}
		fputs("</table>\n", f);
	}
	if (svr_ndrops(r)) {
		fputs("<h2>Drops</h2><table><tr><th>point</th><th>guest</th><th>reason</th><th>count</th></tr>\n", f);
		for (unsigned i = 0; i < svr_ndrops(r); i++) {
			const struct svr_drop *d = svr_drop_get(r, i);

			fprintf(f, "<tr><td>%s</td><td>", sv_point_name(d->point));
			esc(f, d->guest >= 0 ? svr_guest_name(r, (unsigned)d->guest) : "-");
			fputs("</td><td>", f);
			esc(f, d->name);
			fprintf(f, "</td><td>%" PRIu64 "</td></tr>\n", d->count);
		}
		fputs("</table>\n", f);
	}
	if (dr)
		plot_disturbance(f, dr);
	fprintf(f, "<p><small>svreport %s</small></p>\n</body></html>\n", SVKIT_VERSION);
	return ferror(f) ? -EIO : 0;
}

// SPDX-License-Identifier: Apache-2.0
/*
 * svreport's plots: inline SVG only (no script, no font, no image), each with fixed width/height
 * attributes, so the HTML report opens offline at a known size wherever it is.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sv_clock.h"
#include "svreport_out.h"

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


/* Where @v lies between @v0 and @v1 on a linear or log axis, clamped to [0, 1]. */
static double axis_frac(double v, double v0, double v1, bool lg)
{
	double a = lg ? log10(v > 0 ? v : 1e-9) : v, lo = lg ? log10(v0) : v0, hi = lg ? log10(v1) : v1;

	if (hi <= lo)
		hi = lo + 1;
	a = (a - lo) / (hi - lo);
	if (a < 0)
		a = 0;
	if (a > 1)
		a = 1;
	return a;
}

static double tx(const struct plot *p, double x)
{
	return ML + axis_frac(x, p->x0, p->x1, p->logx) * (W - ML - MR);
}

static double ty(const struct plot *p, double y)
{
	return H - MB - axis_frac(y, p->y0, p->y1, p->logy) * (H - MT - MB);
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
	svr_html_esc(f, title);
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
	svr_html_esc(f, xlabel);
	fprintf(f, "</text><text x=\"12\" y=\"%d\" text-anchor=\"middle\" transform=\"rotate(-90 12 %d)\">",
		(MT + H - MB) / 2, (MT + H - MB) / 2);
	svr_html_esc(f, ylabel);
	fputs("</text>\n", f);
}

static void plot_legend(struct plot *p, const char *name, unsigned color, bool dashed)
{
	double y = MT + 12 + 16 * p->nlegend++;

	fprintf(p->f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"%s/>"
		      "<text x=\"%d\" y=\"%.1f\">",
		W - MR + 8, y - 4, W - MR + 28, y - 4, colors[color % NCOLORS],
		dashed ? " stroke-dasharray=\"4 3\"" : "", W - MR + 32, y);
	svr_html_esc(p->f, name);
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

/* The histogram a hop's plots use: per-frame values, else the merged per-second summaries. */
const struct sv_stats *svr_plot_hop_hist(const struct svr_hop *h)
{
	if (!h->series)
		return NULL;
	if (!h->from_summaries)
		return h->series->hist;
	return h->series->sum_hist;
}

/* Latency histogram: sv_stats buckets regrouped 8 per octave. */
void svr_plot_histogram(FILE *f, const char *title, const struct sv_stats *hs, unsigned color)
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

void svr_plot_over_time(FILE *f, const char *title, const struct svr_bin *b, unsigned n, uint32_t width)
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

/*
 * CDFs are drawn on a tail scale: y = -log10(1 - F) from 0 to 5 (ticks at 50 %, 90 %, 99 %, ...), x on a log
 * scale from the smallest positive minimum of the series to their largest maximum.
 */
struct range {
	double lo, hi;
};

static void range_add(struct range *x, int64_t min, int64_t max)
{
	if ((double)(min > 0 ? min : 1) < x->lo)
		x->lo = (double)(min > 0 ? min : 1);
	if ((double)max > x->hi)
		x->hi = (double)max;
}

static void cdf_begin(struct plot *p, FILE *f, const char *title, const char *xlabel, struct range *x)
{
	if (x->lo > x->hi)
		x->lo = 1;
	plot_begin(p, f, title, xlabel, true, "-log10(1 - F)", false, x->lo / 1.5, x->hi * 1.5, true, 0, 5, false);
}

/* The CDF of a histogram: a point at the top of each bucket. */
static void cdf_hist_points(struct plot *p, const struct sv_stats *hs)
{
	uint64_t cum = 0;

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

/* A hop's CDF: from its exact values while kept, else from its histogram. */
static void cdf_points(struct plot *p, const struct svr_hop *h)
{
	const struct svr_series *s = h->series;
	const struct sv_stats *hs;

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
	hs = svr_plot_hop_hist(h);
	if (hs && hs->count)
		cdf_hist_points(p, hs);
}

void svr_plot_cdf(FILE *f, struct svr *r, int g, uint8_t (*pairs)[2], unsigned n)
{
	struct range x = {1e18, 1};
	struct plot p;
	char title[128], lab[64];

	for (unsigned i = 0; i < n; i++) {
		struct svr_hop h;

		if (!svr_hop_get(r, pairs[i][0], pairs[i][1], g, -1, &h) && h.count)
			range_add(&x, h.lat.min, h.lat.max);
	}
	snprintf(title, sizeof(title), "CDF of latency per hop%s%s (tail scale: 1 = 90%%, 2 = 99%%, 3 = 99.9%%)",
		 g < 0 ? "" : ", guest ", g < 0 ? "" : svr_guest_name(r, (unsigned)g));
	cdf_begin(&p, f, title, "latency", &x);
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
void svr_plot_cdf_guests(FILE *f, struct svr *r, unsigned a, unsigned b)
{
	struct range x = {1e18, 1};
	char title[160], hop[16];
	struct plot p;
	unsigned drawn = 0;

	for (unsigned g = 0; g < svr_nguests(r); g++) {
		struct svr_hop h;

		if (svr_hop_get(r, a, b, (int)g, -1, &h) || !h.count)
			continue;
		drawn++;
		range_add(&x, h.lat.min, h.lat.max);
	}
	if (drawn < 2)
		return;
	sv_hop_format(a, b, hop, sizeof(hop));
	snprintf(title, sizeof(title), "CDF of %s per guest (tail scale: 1 = 90%%, 2 = 99%%, 3 = 99.9%%)", hop);
	cdf_begin(&p, f, title, "latency", &x);
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

/* The pacing plot, drawn over two walks of the points: the x range, then a series per point. */
struct pacing {
	struct range x;
	struct plot p;
	unsigned c;		/* series drawn */
};

static void pacing_range(struct svr_out *o, unsigned pt, int g, const struct svr_point_stats *ps, void *arg)
{
	struct pacing *pc = arg;

	(void)o, (void)pt, (void)g;
	if (ps->pacing && ps->pacing->count)
		range_add(&pc->x, ps->pacing->min, ps->pacing->max);
}

static void pacing_series(struct svr_out *o, unsigned pt, int g, const struct svr_point_stats *ps, void *arg)
{
	struct pacing *pc = arg;
	char lab[80];

	if (!ps->pacing || !ps->pacing->count)
		return;
	poly_begin(&pc->p, pc->c, false);
	cdf_hist_points(&pc->p, ps->pacing);
	poly_end(&pc->p);
	snprintf(lab, sizeof(lab), "%s %s", sv_point_name(pt), svr_out_guest(o->r, g, ""));
	plot_legend(&pc->p, lab, pc->c, false);
	pc->c++;
}

void svr_plot_pacing(struct svr_out *o)
{
	struct pacing pc = {.x = {1e18, 1}};

	svr_out_points(o, pacing_range, &pc);
	cdf_begin(&pc.p, o->f, "Pacing: interval between consecutive frames of a stream at each point (CDF, tail scale)",
		  "interval", &pc.x);
	svr_out_points(o, pacing_series, &pc);
	if (!pc.c)
		fprintf(o->f, "<text x=\"%d\" y=\"%d\">no consecutive frames recorded</text>\n", ML + 10, MT + 20);
	plot_end(&pc.p);
}

void svr_plot_loss(FILE *f, struct svr *r)
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

void svr_plot_cyclic(FILE *f, const struct svr_cyclic *ct)
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

/* A disturbance record: the phase currents (the A channels of phases A, B, C; else the first three) against
 * time from the trigger, vertical lines at the trigger (pickup) and where its TRIP status channel rises. */
void svr_plot_disturbance(FILE *f, const struct sv_ct_data *d)
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
	svr_html_esc(f, r->station);
	fputs(" ", f);
	svr_html_esc(f, r->device);
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

/*
 * A soak hop's timeline: the largest p50, p99 and max of the intervals of each point (log scale), the budgets
 * of the hop as horizontal lines, each window kept by a file of the hop (its guest's or every guest's) as an
 * orange tick at the top, each point with lost, missing or dropped frames as a red mark at the bottom, each
 * gap between two runs of a file of the hop shaded. x: hours since the soak's first whole hour (TAI).
 */
void svr_plot_soak_timeline(FILE *f, struct svr *r, unsigned hop, const struct svr_budgets *b)
{
	const struct svr_soak *k = svr_soak_get(r);
	const struct svr_soak_hop *h = &k->hops[hop];
	double ymin = 1e18, ymax = 1, w = (double)k->pt_width_s / 3600, x1 = (double)k->npts * w;
	char title[160], hn[16];
	struct plot p;
	unsigned legend = 3;

	for (unsigned i = 0; i < k->npts; i++)
		if (h->pts[i].intervals) {
			double lo = (double)(h->pts[i].p50 > 0 ? h->pts[i].p50 : 1);

			if (lo < ymin)
				ymin = lo;
			if ((double)h->pts[i].max > ymax)
				ymax = (double)h->pts[i].max;
		}
	for (unsigned i = 0; b && i < b->n; i++)
		if (b->b[i].from == h->from && b->b[i].to == h->to && b->b[i].stat != SVR_STAT_LOST &&
		    (double)b->b[i].limit > ymax)
			ymax = (double)b->b[i].limit;
	if (ymin > ymax)
		ymin = 1;
	sv_hop_format(h->from, h->to, hn, sizeof(hn));
	snprintf(title, sizeof(title), "%s %s: latency per interval over the soak (%u s a point)", hn,
		 svr_out_guest(r, h->guest, "(shared)"), k->pt_width_s);
	plot_begin(&p, f, title, "hours since the soak's first hour (TAI)", false, "latency", true, 0, x1 > 0 ? x1 : 1,
		   false, ymin / 1.5, ymax * 3, true);
	/* gaps between runs of a file of this hop */
	for (unsigned i = 0; i < k->nevents; i++) {
		const struct svr_soak_event *ev = &k->events[i];
		double a, z;

		if (ev->kind != SVR_SOAK_EV_GAP || !(h->files >> ev->file & 1))
			continue;
		a = (double)(ev->t_ns / SV_NSEC_PER_SEC - k->t0_sec) / 3600;
		z = (double)(ev->end_ns / SV_NSEC_PER_SEC - k->t0_sec) / 3600;
		fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"#bbb\" opacity=\"0.6\">"
			   "<title>gap: not recorded</title></rect>\n",
			tx(&p, a), MT, tx(&p, z) - tx(&p, a) + 1, H - MT - MB);
	}
	for (unsigned s = 0; s < 3; s++) {
		static const char *const nm[3] = {"max", "p99", "p50"};

		poly_begin(&p, s, s > 0);
		for (unsigned i = 0; i < k->npts; i++) {
			const struct svr_soak_point *pt = &h->pts[i];
			int64_t v = s == 0 ? pt->max : s == 1 ? pt->p99 : pt->p50;

			if (!pt->intervals) {	/* a gap breaks the line */
				poly_end(&p);
				poly_begin(&p, s, s > 0);
				continue;
			}
			poly_pt(&p, ((double)i + 0.5) * w, v > 0 ? (double)v : 1);
		}
		poly_end(&p);
		plot_legend(&p, nm[s], s, s > 0);
	}
	for (unsigned i = 0; b && i < b->n; i++) {
		const struct svr_budget *bu = &b->b[i];
		char lbl[64], v[24];
		double y;

		if (bu->from != h->from || bu->to != h->to || bu->stat == SVR_STAT_LOST ||
		    (bu->guest[0] && (h->guest < 0 || strcmp(bu->guest, svr_guest_name(r, (unsigned)h->guest)))))
			continue;
		y = ty(&p, (double)bu->limit);
		fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"1.5\" "
			   "stroke-dasharray=\"8 4\"/>\n", ML, y, W - MR, y, colors[4]);
		sv_stats_format_ns(bu->limit, v, sizeof(v));
		snprintf(lbl, sizeof(lbl), "%s %s", svr_stat_name(bu->stat), v);
		if (legend < 3 + 2) {
			plot_legend(&p, lbl, 4, true);
			legend++;
		}
	}
	for (unsigned i = 0; i < k->nevents; i++) {
		const struct svr_soak_event *ev = &k->events[i];
		double x;

		if (ev->kind != SVR_SOAK_EV_WINDOW || !(h->files >> ev->file & 1) ||
		    (ev->guest != SVR_GUEST_SHARED && ev->guest != h->guest))
			continue;
		x = tx(&p, (double)(ev->t_ns / SV_NSEC_PER_SEC - k->t0_sec) / 3600);
		fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\">"
			   "<title>window: %s</title></line>\n",
			x, MT, x, MT + 10, colors[3], sv_rec_window_class_name(ev->cls));
	}
	for (unsigned i = 0; i < k->npts; i++) {
		const struct svr_soak_point *pt = &h->pts[i];
		double x = tx(&p, ((double)i + 0.5) * w);

		if (!pt->lost && !pt->dropped)
			continue;
		fprintf(f, "<path d=\"M%.1f %d l-4 8 h8 z\" fill=\"%s\"><title>%" PRIu64 " lost or missing, %" PRIu64
			   " dropped</title></path>\n", x, H - MB - 9, colors[1], pt->lost, pt->dropped);
	}
	plot_legend(&p, "window", 3, false);
	plot_legend(&p, "loss, drop", 1, false);
	plot_end(&p);
}

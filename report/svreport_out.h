/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What svreport's three outputs share (private to svreport_out.c, _text.c, _json.c, _html.c, _plot.c).
 *
 * A report is a list of sections (svr_sections[]): the verdict, the clock check, the input files, the
 * budgets, the hops ... Each section has an emitter per format (text: the terminal summary; JSON: one
 * key of the document; HTML: a heading with its table or plots), NULL where a format leaves it out, and
 * every format walks the same table (svr_write_text/json/html). A section that says different things in
 * each format gets three emitters, not one emitter through an output interface: the terminal summary is
 * aligned columns for a person, the JSON every field for a machine, the HTML tables and plots, and an
 * interface general enough for all three would have changed what each of them prints. What the emitters
 * share is the data: the rows a section shows come from the same queries (svreport.h, and the walks
 * below).
 *
 * The table's order is the report's: every format writes its sections in that one order (the verdict first,
 * then how the run was set up and whether the clocks allow a judgement, the inputs, the results, the
 * detail), each with the emitters it has.
 */
#ifndef SVREPORT_OUT_H
#define SVREPORT_OUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sv_json.h"
#include "svreport.h"

enum svr_format { SVR_FMT_TEXT, SVR_FMT_JSON, SVR_FMT_HTML, SVR_FMT__COUNT };

/* What every emitter is given. */
struct svr_out {
	struct svr *r;
	const struct svr_budgets *b;
	const struct svr_eval *e;
	const struct svr_cyclic *ct;		/* NULL: none given */
	const struct sv_ct_data *dr;		/* HTML: a disturbance record to plot, or NULL */
	FILE *f;
	struct sv_json *j;			/* JSON */
	unsigned color;				/* HTML: the next histogram's colour */
};

typedef void svr_emit_fn(struct svr_out *o);

enum svr_section_id {	/* in the report's order */
	SVR_SEC_VERDICT,	/* the verdict and why */
	SVR_SEC_SETUP,		/* how the run was set up (--setup: the lab's switch and datapath) */
	SVR_SEC_CLOCK,		/* the clock check: reasons and notes */
	SVR_SEC_FILES,		/* the input files: tool, host, records, damage, what their writer could not write */
	SVR_SEC_HOSTS,		/* per host (its clock flagged, its guests) and the whole cluster (svreport_hosts.c) */
	SVR_SEC_WARNINGS,	/* about the set of files */
	SVR_SEC_SILENT,		/* guests that received nothing while frames were lost toward them */
	SVR_SEC_MISSING_POINTS,	/* points no file recorded */
	SVR_SEC_LABELS,		/* what each guest stands for */
	SVR_SEC_STREAMS,	/* svID, APPID, rate, ASDUs */
	SVR_SEC_GUESTS,		/* the guests' names */
	SVR_SEC_BUDGETS,	/* each budget against each guest */
	SVR_SEC_COMPARE,	/* the same hops of every guest, side by side */
	SVR_SEC_HOPS,		/* per hop, guest and stream: count, lost, missing, latency */
	SVR_SEC_SOAK,		/* soak: its span, windows, the verdict over it, per hop the whole soak's latency */
	SVR_SEC_SOAK_TIMELINE,	/* soak: per hop p50, p99, max per interval (the windows, losses, gaps marked) */
	SVR_SEC_SOAK_HOURS,	/* soak: the hourly table */
	SVR_SEC_SOAK_WORST,	/* soak: the worst intervals, their worst frames and why late */
	SVR_SEC_SOAK_EVENTS,	/* soak: windows, losses, drops, restarts, changes, run gaps, clock steps */
	SVR_SEC_TOTALS,		/* what was not joined, not recorded, or keyed late */
	SVR_SEC_POINTS,		/* per point: frames, duplicates, reordered, dropped, missing, pacing */
	SVR_SEC_HISTOGRAMS,	/* latency histogram per hop */
	SVR_SEC_OVER_TIME,	/* latency per time bin */
	SVR_SEC_CDF,		/* latency CDF per hop */
	SVR_SEC_LOSS,		/* loss per time bin */
	SVR_SEC_CYCLICTEST,	/* the host's real-time baseline */
	SVR_SEC_LATE,		/* why late: the worst waits, and per holder */
	SVR_SEC_WHY,		/* why late by cause: svtrace's decompositions (svreport_why.c) */
	SVR_SEC_DROPS,		/* drops by point, guest and reason */
	SVR_SEC_DISTURBANCE,	/* a COMTRADE disturbance record */
	SVR_SEC__COUNT,
};

struct svr_section {
	const char *name;
	svr_emit_fn *emit[SVR_FMT__COUNT];	/* NULL: the format leaves it out */
};

extern const struct svr_section svr_sections[SVR_SEC__COUNT];


/* ---- walks the sections share (svreport_out.c) ---- */

/* Every hop of the report: each guest's hops (svr_hop_list, the shared ones first), the all-streams row
 * (@stream -1) then, as @rows says, each stream's. */
enum svr_hop_rows {
	SVR_ROWS_ALL,		/* the all-streams rows only */
	SVR_ROWS_SEVERAL,	/* each stream's too when there are several */
	SVR_ROWS_EACH,		/* each stream's too */
};
typedef void svr_hop_row_fn(struct svr_out *o, unsigned a, unsigned b, int guest, int stream);
void svr_out_hops(struct svr_out *o, enum svr_hop_rows rows, svr_hop_row_fn *fn);
/* Every row of the points' tables (svr_point_shown), shared points first, then each guest's, in point order. */
typedef void svr_point_row_fn(struct svr_out *o, unsigned point, int guest, const struct svr_point_stats *ps,
			      void *arg);
void svr_out_points(struct svr_out *o, svr_point_row_fn *fn, void *arg);
/* Every row of the guests-side-by-side table: comparison hop @k of guest @g, with data (@h filled). */
typedef void svr_compare_row_fn(struct svr_out *o, unsigned k, unsigned g, const struct svr_hop *h);
void svr_out_compare(struct svr_out *o, svr_compare_row_fn *fn);
/* A budget's limit or value: frames for SVR_STAT_LOST (with @unit " frames" after it), else a latency. */
void svr_out_budget_value(const struct svr_budget *bu, int64_t v, const char *unit, char *buf, size_t size);
/* The guest's name, @none when @g < 0. */
const char *svr_out_guest(const struct svr *r, int g, const char *none);

/* ---- emitters (svreport_text.c, svreport_json.c, svreport_html.c; svreport_hosts.c) ---- */
svr_emit_fn svr_text_hosts, svr_json_hosts;
svr_emit_fn svr_text_verdict, svr_text_clock, svr_text_files, svr_text_warnings, svr_text_silent,
	svr_text_missing_points, svr_text_setup, svr_text_labels, svr_text_budgets, svr_text_compare, svr_text_hops, svr_text_points,
	svr_text_cyclictest, svr_text_late, svr_text_drops, svr_text_totals;
svr_emit_fn svr_json_verdict, svr_json_clock, svr_json_files, svr_json_warnings, svr_json_silent,
	svr_json_missing_points, svr_json_setup, svr_json_labels, svr_json_streams, svr_json_guests, svr_json_budgets, svr_json_hops,
	svr_json_points, svr_json_cyclictest, svr_json_late, svr_json_drops, svr_json_totals;
svr_emit_fn svr_html_verdict, svr_html_setup, svr_html_clock, svr_html_warnings, svr_html_silent,
	svr_html_missing_points, svr_html_files, svr_html_budgets, svr_html_compare, svr_html_hops,
	svr_html_points, svr_html_histograms, svr_html_over_time, svr_html_cdf, svr_html_loss, svr_html_cyclictest,
	svr_html_late, svr_html_drops, svr_html_totals, svr_html_disturbance;

svr_emit_fn svr_text_why, svr_json_why, svr_html_why;
/* soak sections (svreport_soak_out.c: the three formats of each) */
svr_emit_fn svr_text_soak, svr_text_soak_hours, svr_text_soak_worst, svr_text_soak_events;
svr_emit_fn svr_json_soak, svr_json_soak_timeline, svr_json_soak_hours, svr_json_soak_worst, svr_json_soak_events;
svr_emit_fn svr_html_soak, svr_html_soak_timeline, svr_html_soak_hours, svr_html_soak_worst, svr_html_soak_events;

/* ---- the HTML's pieces (svreport_html.c) and plots (svreport_plot.c) ---- */
/* @s escaped for HTML text and attributes. */
void svr_html_esc(FILE *f, const char *s);
/* The document's head and style, and its end. */
void svr_html_begin(FILE *f);
void svr_html_end(FILE *f);
/* The histogram a hop's plots use: per-frame values, else the merged per-second summaries. */
const struct sv_stats *svr_plot_hop_hist(const struct svr_hop *h);
/* One hop per guest on one plot: the CDF of comparison hop a-b (nothing when fewer than two guests have it). */
void svr_plot_cdf_guests(FILE *f, struct svr *r, unsigned a, unsigned b);
/* Latency histogram of @hs (sv_stats buckets regrouped 8 per octave). */
void svr_plot_histogram(FILE *f, const char *title, const struct sv_stats *hs, unsigned color);
/* min, p99, p50 and max of each time bin. */
void svr_plot_over_time(FILE *f, const char *title, const struct svr_bin *b, unsigned n, uint32_t width);
/* The CDF of guest @g's hops @pairs. */
void svr_plot_cdf(FILE *f, struct svr *r, int g, uint8_t (*pairs)[2], unsigned n);
/* The interval between consecutive frames at each point (CDF). */
void svr_plot_pacing(struct svr_out *o);
/* Frames lost per time bin, per guest. */
void svr_plot_loss(FILE *f, struct svr *r);
/* Soak hop @hop's timeline (p50, p99, max per point), its budgets, windows, losses and gaps marked. */
void svr_plot_soak_timeline(FILE *f, struct svr *r, unsigned hop, const struct svr_budgets *b);
/* cyclictest's histogram. */
void svr_plot_cyclic(FILE *f, const struct svr_cyclic *ct);
/* A disturbance record: its heading, then its phase currents around its trigger, the trip marked. */
void svr_plot_disturbance(FILE *f, const struct sv_ct_data *d);

#endif /* SVREPORT_OUT_H */

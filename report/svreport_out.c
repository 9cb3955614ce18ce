// SPDX-License-Identifier: Apache-2.0
/*
 * svreport's outputs: the table of sections every format walks (svreport_out.h), the walks over the rows
 * the sections share, and what the formats say alike about a file.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "svreport_out.h"

#define T SVR_FMT_TEXT
#define J SVR_FMT_JSON
#define H SVR_FMT_HTML

const struct svr_section svr_sections[SVR_SEC__COUNT] = {
	[SVR_SEC_VERDICT] = {"verdict", {[T] = svr_text_verdict, [J] = svr_json_verdict, [H] = svr_html_verdict}},
	[SVR_SEC_SETUP] = {"setup", {[T] = svr_text_setup, [J] = svr_json_setup, [H] = svr_html_setup}},
	[SVR_SEC_CLOCK] = {"clock", {[T] = svr_text_clock, [J] = svr_json_clock, [H] = svr_html_clock}},
	[SVR_SEC_FILES] = {"files", {[T] = svr_text_files, [J] = svr_json_files, [H] = svr_html_files}},
	[SVR_SEC_HOSTS] = {"hosts", {[T] = svr_text_hosts, [J] = svr_json_hosts}},
	[SVR_SEC_WARNINGS] = {"warnings", {[T] = svr_text_warnings, [J] = svr_json_warnings, [H] = svr_html_warnings}},
	[SVR_SEC_SILENT] = {"silent guests", {[T] = svr_text_silent, [J] = svr_json_silent, [H] = svr_html_silent}},
	[SVR_SEC_MISSING_POINTS] = {"missing points", {[T] = svr_text_missing_points, [J] = svr_json_missing_points,
						       [H] = svr_html_missing_points}},
	/* the HTML puts a guest's label beside it in the guests side by side */
	[SVR_SEC_LABELS] = {"guest labels", {[T] = svr_text_labels, [J] = svr_json_labels}},
	[SVR_SEC_STREAMS] = {"streams", {[J] = svr_json_streams}},
	[SVR_SEC_GUESTS] = {"guests", {[J] = svr_json_guests}},
	[SVR_SEC_BUDGETS] = {"budgets", {[T] = svr_text_budgets, [J] = svr_json_budgets, [H] = svr_html_budgets}},
	/* the JSON has every hop of every guest in "hops" */
	[SVR_SEC_COMPARE] = {"guests side by side", {[T] = svr_text_compare, [H] = svr_html_compare}},
	[SVR_SEC_HOPS] = {"hops", {[T] = svr_text_hops, [J] = svr_json_hops, [H] = svr_html_hops}},
	/* a soak's records (INTERVAL, WINDOW ...): nothing when there are none */
	[SVR_SEC_SOAK] = {"soak", {[T] = svr_text_soak, [J] = svr_json_soak, [H] = svr_html_soak}},
	/* the text's is the hourly table's worst per hour (a timeline is a plot) */
	[SVR_SEC_SOAK_TIMELINE] = {"soak timeline", {[J] = svr_json_soak_timeline, [H] = svr_html_soak_timeline}},
	[SVR_SEC_SOAK_HOURS] = {"soak hours", {[T] = svr_text_soak_hours, [J] = svr_json_soak_hours,
					       [H] = svr_html_soak_hours}},
	[SVR_SEC_SOAK_WORST] = {"soak worst intervals", {[T] = svr_text_soak_worst, [J] = svr_json_soak_worst,
							 [H] = svr_html_soak_worst}},
	[SVR_SEC_SOAK_EVENTS] = {"soak events", {[T] = svr_text_soak_events, [J] = svr_json_soak_events,
						 [H] = svr_html_soak_events}},
	/* the HTML's is the frames not recorded, per point */
	[SVR_SEC_TOTALS] = {"totals", {[T] = svr_text_totals, [J] = svr_json_totals, [H] = svr_html_totals}},
	/* the HTML plots the points' pacing */
	[SVR_SEC_POINTS] = {"points", {[T] = svr_text_points, [J] = svr_json_points, [H] = svr_html_points}},
	[SVR_SEC_HISTOGRAMS] = {"latency histograms", {[H] = svr_html_histograms}},
	[SVR_SEC_OVER_TIME] = {"latency over time", {[H] = svr_html_over_time}},
	[SVR_SEC_CDF] = {"latency CDF", {[H] = svr_html_cdf}},
	[SVR_SEC_LOSS] = {"loss over time", {[H] = svr_html_loss}},
	[SVR_SEC_CYCLICTEST] = {"cyclictest", {[T] = svr_text_cyclictest, [J] = svr_json_cyclictest,
					       [H] = svr_html_cyclictest}},
	[SVR_SEC_LATE] = {"why late", {[T] = svr_text_late, [J] = svr_json_late, [H] = svr_html_late}},
	[SVR_SEC_WHY] = {"why late by cause", {[T] = svr_text_why, [J] = svr_json_why, [H] = svr_html_why}},
	[SVR_SEC_DROPS] = {"drops", {[T] = svr_text_drops, [J] = svr_json_drops, [H] = svr_html_drops}},
	[SVR_SEC_DISTURBANCE] = {"disturbance record", {[H] = svr_html_disturbance}},
};

static void walk(struct svr_out *o, enum svr_format fmt)
{
	for (unsigned i = 0; i < SVR_SEC__COUNT; i++) {
		svr_emit_fn *fn = svr_sections[i].emit[fmt];

		if (fn)
			fn(o);
	}
}

int svr_write_text(struct svr *r, const struct svr_budgets *b, const struct svr_eval *e,
		   const struct svr_cyclic *ct, FILE *f)
{
	struct svr_out o = {.r = r, .b = b, .e = e, .ct = ct, .f = f};

	walk(&o, SVR_FMT_TEXT);
	return ferror(f) ? -EIO : 0;
}

int svr_write_json(struct svr *r, const struct svr_budgets *b, const struct svr_eval *e,
		   const struct svr_cyclic *ct, FILE *f)
{
	struct sv_json j;
	struct svr_out o = {.r = r, .b = b, .e = e, .ct = ct, .f = f, .j = &j};

	sv_json_init(&j, f, SV_JSON_PRETTY);
	sv_json_object_begin(&j);
	walk(&o, SVR_FMT_JSON);
	sv_json_object_end(&j);
	return sv_json_end(&j);
}

int svr_write_html(struct svr *r, const struct svr_budgets *b, const struct svr_eval *e,
		   const struct svr_cyclic *ct, const struct sv_ct_data *dr, FILE *f)
{
	struct svr_out o = {.r = r, .b = b, .e = e, .ct = ct, .dr = dr, .f = f};

	svr_html_begin(f);
	walk(&o, SVR_FMT_HTML);
	svr_html_end(f);
	return ferror(f) ? -EIO : 0;
}

/* ---- walks ---- */

const char *svr_out_guest(const struct svr *r, int g, const char *none)
{
	return g < 0 ? none : svr_guest_name(r, (unsigned)g);
}

void svr_out_hops(struct svr_out *o, enum svr_hop_rows rows, svr_hop_row_fn *fn)
{
	uint8_t pairs[64][2];

	for (int g = -1; g < (int)svr_nguests(o->r); g++) {
		unsigned n = svr_hop_list(o->r, g, pairs, 64);

		for (unsigned i = 0; i < n; i++) {
			fn(o, pairs[i][0], pairs[i][1], g, -1);
			if (rows == SVR_ROWS_EACH || (rows == SVR_ROWS_SEVERAL && svr_nstreams(o->r) > 1))
				for (unsigned s = 0; s < svr_nstreams(o->r); s++)
					fn(o, pairs[i][0], pairs[i][1], g, (int)s);
		}
	}
}

void svr_out_points(struct svr_out *o, svr_point_row_fn *fn, void *arg)
{
	for (unsigned p = 0; p < SVR_NPOINTS; p++)
		for (int g = -1; g < (int)svr_nguests(o->r); g++)
			if (svr_point_shown(o->r, p, g))
				fn(o, p, g, svr_point(o->r, p, g), arg);
}

void svr_out_compare(struct svr_out *o, svr_compare_row_fn *fn)
{
	for (unsigned k = 0; k < SVR_NCOMPARE; k++)
		for (unsigned g = 0; g < svr_nguests(o->r); g++) {
			struct svr_hop h;

			if (!svr_hop_get(o->r, svr_compare_hops[k][0], svr_compare_hops[k][1], (int)g, -1, &h) && h.count)
				fn(o, k, g, &h);
		}
}

void svr_out_budget_value(const struct svr_budget *bu, int64_t v, const char *unit, char *buf, size_t size)
{
	if (bu->stat == SVR_STAT_LOST)
		snprintf(buf, size, "%" PRId64 "%s", v, unit);
	else
		sv_stats_format_ns(v, buf, size);
}

/* ---- what every format says about a file ---- */

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

/* SPDX-License-Identifier: Apache-2.0 */
/* svsub's metrics (svsub_metrics.h; the families are configs/prometheus/metrics.txt's svkit_sub_*). */
#include "svsub_metrics.h"

#include <errno.h>
#include <stdio.h>

#include "sv_codec.h"
#include "sv_stats.h"
#include "svsub_track.h"

/* The table's columns, in values() order. */
enum col {
	COL_FRAMES, COL_SAMPLES, COL_LOST, COL_LOST_ESTIMATED, COL_DUPLICATES, COL_OUT_OF_ORDER, COL_RESTARTS, COL_CONFREV_CHANGES,
	COL_SMPSYNCH_CHANGES, COL_SIMULATED, COL_DECODE_ERRORS, COL_NOT_GOOD, COL_QUALITY, /* SVSUB_Q_KINDS of them */
	COL_LATENCY_REJECTED = COL_QUALITY + SVSUB_Q_KINDS, COL_CLOCK_SYNCHRONISED, COL_CONFREV, COL__COUNT
};

static const struct {
	const char *name, *help;
	enum sv_metric_type type;
} columns[] = {
	[COL_FRAMES] = { "svkit_sub_frames", "Frames that carried the stream", SV_METRIC_COUNTER },
	[COL_SAMPLES] = { "svkit_sub_samples", "Samples (ASDUs) of the stream accepted", SV_METRIC_COUNTER },
	[COL_LOST] = { "svkit_sub_lost_samples", "Samples never received (smpCnt gaps, across wraps)", SV_METRIC_COUNTER },
	[COL_LOST_ESTIMATED] = { "svkit_sub_lost_samples_estimated",
				 "Of the lost samples, whole smpCnt laps estimated from receive time (no sample times)",
				 SV_METRIC_COUNTER },
	[COL_DUPLICATES] = { "svkit_sub_duplicate_samples", "Samples received again in the same smpCnt lap",
			     SV_METRIC_COUNTER },
	[COL_OUT_OF_ORDER] = { "svkit_sub_out_of_order_samples", "Samples that arrived after a later one",
			       SV_METRIC_COUNTER },
	[COL_RESTARTS] = { "svkit_sub_smpcnt_restarts", "Confirmed smpCnt restarts of the publisher", SV_METRIC_COUNTER },
	[COL_CONFREV_CHANGES] = { "svkit_sub_confrev_changes", "Changes of confRev", SV_METRIC_COUNTER },
	[COL_SMPSYNCH_CHANGES] = { "svkit_sub_smpsynch_changes", "Changes of smpSynch", SV_METRIC_COUNTER },
	[COL_SIMULATED] = { "svkit_sub_simulated_frames", "Frames with the simulation bit set", SV_METRIC_COUNTER },
	[COL_DECODE_ERRORS] = { "svkit_sub_decode_errors", "Malformed frames of the stream's APPID", SV_METRIC_COUNTER },
	[COL_NOT_GOOD] = { "svkit_sub_samples_not_good", "Samples with any channel's validity not good",
			   SV_METRIC_COUNTER },
	[COL_QUALITY] = { "svkit_sub_quality_flags",
			  "Channel-samples with a quality flag (invalid, questionable, test, derived)", SV_METRIC_COUNTER },
	[COL_LATENCY_REJECTED] = { "svkit_sub_latency_rejected_samples",
				   "Latencies rejected as negative or too large (clock not synchronised)",
				   SV_METRIC_COUNTER },
	[COL_CLOCK_SYNCHRONISED] = { "svkit_sub_stream_clock_synchronised",
				     "1 while the stream's latencies pass the clock checks, 0 once one failed",
				     SV_METRIC_GAUGE },
	[COL_CONFREV] = { "svkit_sub_confrev", "The last confRev seen", SV_METRIC_GAUGE },
};
static const char *const qflag[SVSUB_Q_KINDS] = { "invalid", "questionable", "test", "derived" };

static unsigned rows_count(void *ctx)
{
	struct svsub_metrics *sm = ctx;

	return svsub_track_count_published(sm->t);
}

static int rows_labels(void *ctx, unsigned row, const char **val, size_t *len, char *buf, size_t size)
{
	struct svsub_metrics *sm = ctx;
	const struct svsub_stream_stats *s = svsub_track_stream_peek(sm->t, row);

	val[0] = s->svID;
	len[0] = s->svID_len;
	len[1] = (size_t)snprintf(buf, size, "0x%04x", s->appid);
	val[1] = buf;
	return 0;
}

static uint64_t ld(const uint64_t *p)
{
	return sv_metrics_load_u64(p);
}

static void rows_values(void *ctx, unsigned row, uint64_t *v)
{
	struct svsub_metrics *sm = ctx;
	const struct svsub_stream_stats *s = svsub_track_stream_peek(sm->t, row);
	unsigned nq = __atomic_load_n(&s->nquality, __ATOMIC_RELAXED);

	if (nq > SVSUB_TRACK_QCHANNELS)
		nq = SVSUB_TRACK_QCHANNELS;
	v[COL_FRAMES] = ld(&s->c.frames);
	v[COL_SAMPLES] = ld(&s->c.samples);
	v[COL_LOST] = ld(&s->c.lost);
	v[COL_LOST_ESTIMATED] = ld(&s->lost_estimated);
	v[COL_DUPLICATES] = ld(&s->c.duplicate);
	v[COL_OUT_OF_ORDER] = ld(&s->c.reordered);
	v[COL_RESTARTS] = ld(&s->resets);
	v[COL_CONFREV_CHANGES] = ld(&s->confrev_changes);
	v[COL_SMPSYNCH_CHANGES] = ld(&s->smpsynch_changes);
	v[COL_SIMULATED] = ld(&s->simulated);
	v[COL_DECODE_ERRORS] = svsub_track_stream_errors(sm->t, row);
	v[COL_NOT_GOOD] = ld(&s->samples_not_good);
	for (unsigned k = 0; k < SVSUB_Q_KINDS; k++) {
		uint64_t sum = 0;

		for (unsigned c = 0; c < nq; c++)
			sum += ld(&s->quality[c][k]);
		v[COL_QUALITY + k] = sum;
	}
	v[COL_LATENCY_REJECTED] = ld(&s->latency_outliers) + ld(&s->latency_negative);
	/* the verdict reads a few fields (racing the writer only formally); absent while no latency was possible */
	v[COL_CLOCK_SYNCHRONISED] = __atomic_load_n(&s->latency_possible, __ATOMIC_RELAXED)
					    ? svsub_track_clock_verdict(s)
					    : SV_METRICS_ABSENT;
	v[COL_CONFREV] = __atomic_load_n(&s->confRev, __ATOMIC_RELAXED);
}

static const struct sv_metrics_table_ops rows_ops = { rows_count, rows_labels, rows_values };

/* Ts-T3: the streams' latency histograms summed at scrape time. */
static void latency_sum(void *ctx, struct sv_metrics_hist *out)
{
	struct svsub_metrics *sm = ctx;
	unsigned n = svsub_track_count_published(sm->t);

	for (unsigned i = 0; i < n; i++)
		sv_metrics_hist_add(out, &svsub_track_stream_peek(sm->t, i)->latency);
}

static int overflow_value(void *ctx, struct sv_metrics_value *v)
{
	struct svsub_metrics *sm = ctx;

	v->kind = SV_METRICS_V_U64;
	v->u = svsub_track_overflow(sm->t);
	return 0;
}

static struct sv_metrics_family *family0(struct sv_metrics *m, const char *name, const char *help)
{
	return sv_metrics_family(m, name, SV_METRIC_COUNTER, NULL, help, 0, NULL);
}

int svsub_metrics_register(struct svsub_metrics *sm, struct sv_metrics *m, struct svsub_proc *p, const char *port)
{
	static const char *const stream_labels[] = { "svid", "appid" }, *const q_labels[] = { "svid", "appid", "flag" },
				 *const hop_labels[] = { "hop", "port" }, *const error_labels[] = { "error" };
	const struct svsub_proc_counts *n = svsub_proc_counters(p);
	const uint64_t *errors;
	struct sv_metrics_family *f;
	struct sv_metrics_table *t;
	int err;

	sm->p = p;
	sm->t = svsub_proc_tracker(p);
	errors = svsub_track_errors(sm->t);
	t = sv_metrics_table_new(m, 2, stream_labels, SVSUB_METRICS_MAX_ROWS, &rows_ops, sm);
	if (!t)
		return -errno;
	for (unsigned c = 0; c < COL__COUNT; c++) {
		bool q = c >= COL_QUALITY && c < COL_QUALITY + SVSUB_Q_KINDS;

		if (c > COL_QUALITY && q)
			continue; /* one family, a column per flag */
		f = sv_metrics_family(m, columns[c].name, columns[c].type, NULL, columns[c].help, q ? 3 : 2,
				      q ? q_labels : stream_labels);
		if (!f)
			return -errno;
		for (unsigned k = 0; k < (q ? SVSUB_Q_KINDS : 1u); k++) {
			const char *extra[] = { qflag[k] };

			err = sv_metrics_table_column(t, f, q ? extra : NULL);
			if (err < 0)
				return err;
		}
	}
	f = sv_metrics_family(m, "svkit_sub_malformed_frames", SV_METRIC_COUNTER, NULL,
			      "Frames that failed to decode, by decoder error name", 1, error_labels);
	if (!f)
		return -errno;
	for (int e = 1; e < SV_E__COUNT; e++) {
		const char *v[] = { sv_codec_strerror(e) };

		if (e == SV_E_NOT_SV)
			continue;
		err = sv_metrics_add_u64(f, v, &errors[e]);
		if (err)
			return err;
	}
	if (!(f = family0(m, "svkit_sub_non_sv_frames", "Frames received that were not SV")) ||
	    (err = sv_metrics_add_u64(f, NULL, &n->not_sv)))
		return f ? err : -errno;
	if (!(f = family0(m, "svkit_sub_truncated_frames", "Frames truncated by the receive path")) ||
	    (err = sv_metrics_add_u64(f, NULL, &n->truncated)))
		return f ? err : -errno;
	if (!(f = family0(m, "svkit_sub_streams_overflow_samples", "Samples of streams that did not fit the stream "
								   "table")) ||
	    (err = sv_metrics_add_fn(f, NULL, overflow_value, sm)))
		return f ? err : -errno;
	f = sv_metrics_family(m, "svkit_hop_latency_seconds", SV_METRIC_HISTOGRAM, "seconds",
			      "Latency of one hop (svpub Ts-T0; svtrace T1-T2a, T2a-T2b, T1-T2b; svsub Ts-T3, T3-T4)", 2,
			      hop_labels);
	if (!f)
		return -errno;
	sm->hop = f;
	{
		const char *v[] = { "Ts-T3", port };

		return sv_metrics_add_hist_fn(f, v, latency_sum, sm);
	}
}

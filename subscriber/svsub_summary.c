/* SPDX-License-Identifier: Apache-2.0 */
/* svsub's final summary: text and JSON (layout in svsub_summary.h). */
#include "svsub_summary.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "sv_json.h"
#include "sv_stats.h"

static const char *const qkind_name[SVSUB_Q_KINDS] = { "invalid", "questionable", "test", "derived" };

static double stream_duration_s(const struct svsub_stream_stats *s)
{
	return s->c.frames > 1 ? (double)(s->last_rx_ns - s->first_rx_ns) / 1e9 : 0.0;
}

/* Frames per second over the stream's lifetime: (frames - 1) intervals. */
static double stream_frame_rate(const struct svsub_stream_stats *s)
{
	double d = stream_duration_s(s);

	return d > 0 ? (double)(s->c.frames - 1) / d : 0.0;
}

static bool latency_reported(const struct svsub_stream_stats *s)
{
	return s->latency_possible && s->clock_synchronised && s->latency.count;
}

static void json_stream(struct sv_json *j, const struct svsub_stream_stats *s)
{
	unsigned nq = s->nquality < SVSUB_TRACK_QCHANNELS ? s->nquality : SVSUB_TRACK_QCHANNELS;

	sv_json_object_begin(j);
	sv_json_kv_uint(j, "appid", s->appid);
	sv_json_key(j, "svID");
	sv_json_string_n(j, s->svID, s->svID_len);
	sv_json_kv_uint(j, "frames", s->c.frames);
	sv_json_kv_uint(j, "samples", s->c.samples);
	sv_json_kv_uint(j, "lost", s->c.lost);
	sv_json_kv_uint(j, "lost_estimated", s->lost_estimated);
	sv_json_kv_uint(j, "duplicates", s->c.duplicate);
	sv_json_kv_uint(j, "out_of_order", s->c.reordered);
	sv_json_kv_uint(j, "resets", s->resets);
	sv_json_kv_uint(j, "confrev_changes", s->confrev_changes);
	sv_json_kv_uint(j, "smpsynch_changes", s->smpsynch_changes);
	sv_json_kv_uint(j, "simulated", s->simulated);
	sv_json_kv_uint(j, "errors", s->c.errors);
	sv_json_kv_uint(j, "confRev", s->confRev);
	sv_json_kv_uint(j, "smpSynch", s->smpSynch);
	if (s->has_smpRate)
		sv_json_kv_uint(j, "smpRate", s->smpRate);
	else
		sv_json_kv_null(j, "smpRate");
	if (s->rate)
		sv_json_kv_uint(j, "sample_rate", s->rate);
	else
		sv_json_kv_null(j, "sample_rate");
	sv_json_kv_uint(j, "wrap", s->wrap);
	sv_json_kv_str(j, "wrap_source", sv_rate_source_name(s->wrap_source));
	sv_json_kv_uint(j, "wrap_violations", s->wrap_violations);
	sv_json_kv_uint(j, "asdus_per_frame", s->asdus_per_frame);
	sv_json_kv_uint(j, "first_smpCnt", s->first_smpCnt);
	sv_json_kv_uint(j, "last_smpCnt", s->last_smpCnt);
	sv_json_kv_double(j, "duration_s", stream_duration_s(s));
	sv_json_kv_double(j, "frame_rate", stream_frame_rate(s));

	sv_json_key(j, "quality");
	sv_json_object_begin(j);
	sv_json_kv_str(j, "dataset", s->dataset ? s->dataset->name : NULL);
	sv_json_kv_str(j, "dataset_source", svsub_dataset_source_name(s->dataset_source));
	sv_json_kv_uint(j, "samples_uninterpreted", s->samples_uninterpreted);
	sv_json_kv_uint(j, "dataset_mismatch", s->dataset_mismatch);
	sv_json_kv_uint(j, "samples_not_good", s->samples_not_good);
	sv_json_key(j, "channels");
	sv_json_array_begin(j);
	for (unsigned c = 0; c < nq; c++) {
		sv_json_object_begin(j);
		sv_json_kv_str(j, "name", s->dataset->m[s->dataset->quality_member[c]].name);
		for (unsigned k = 0; k < SVSUB_Q_KINDS; k++)
			sv_json_kv_uint(j, qkind_name[k], s->quality[c][k]);
		sv_json_object_end(j);
	}
	sv_json_array_end(j);
	sv_json_object_end(j);

	sv_json_key(j, "prp");
	if (s->prp_frames[0] || s->prp_frames[1]) {
		sv_json_object_begin(j);
		sv_json_kv_uint(j, "lan_a_frames", s->prp_frames[0]);
		sv_json_kv_uint(j, "lan_b_frames", s->prp_frames[1]);
		sv_json_kv_uint(j, "lan_a_discarded", s->prp_discarded[0]);
		sv_json_kv_uint(j, "lan_b_discarded", s->prp_discarded[1]);
		sv_json_object_end(j);
	} else {
		sv_json_null(j);
	}

	sv_json_key(j, "interarrival_ns");
	sv_stats_json(j, &s->interarrival);
	sv_json_key(j, "latency_ns");
	if (latency_reported(s))
		sv_stats_json(j, &s->latency);
	else
		sv_json_null(j);
	sv_json_key(j, "latency_outliers");
	sv_json_object_begin(j);
	sv_json_kv_uint(j, "count", s->latency_outliers);
	if (s->latency_outliers) {
		sv_json_kv_int(j, "max_ns", s->latency_outlier_max);
		sv_json_kv_int(j, "first_rx_ns", s->latency_outlier_first_rx_ns);
		sv_json_kv_int(j, "last_rx_ns", s->latency_outlier_last_rx_ns);
	} else {
		sv_json_kv_null(j, "max_ns");
		sv_json_kv_null(j, "first_rx_ns");
		sv_json_kv_null(j, "last_rx_ns");
	}
	sv_json_object_end(j);
	sv_json_key(j, "latency_negative");
	sv_json_object_begin(j);
	sv_json_kv_uint(j, "count", s->latency_negative);
	if (s->latency_negative)
		sv_json_kv_int(j, "min_ns", s->latency_negative_min);
	else
		sv_json_kv_null(j, "min_ns");
	sv_json_object_end(j);
	sv_json_kv_uint(j, "latency_rate_unknown", s->latency_rate_unknown);
	sv_json_kv_uint(j, "latency_no_sample_time", s->latency_no_sample_time);
	sv_json_kv_bool(j, "host_clock_unsynchronised", s->host_unsync);
	if (s->latency_possible)
		sv_json_kv_bool(j, "clock_synchronised", s->clock_synchronised);
	else
		sv_json_kv_null(j, "clock_synchronised");
	sv_json_object_end(j);
}

int svsub_summary_json_body(struct sv_json *j, struct svsub_proc *p)
{
	struct svsub_tracker *t = svsub_proc_tracker(p);
	const uint64_t *errors = svsub_track_errors(t);
	struct svsub_track_mem mem;
	struct svsub_proc_counts n;

	svsub_proc_counts(p, &n);
	sv_json_kv_uint(j, "frames", n.frames);
	sv_json_kv_uint(j, "sv_frames", n.sv);
	sv_json_kv_uint(j, "malformed_frames", n.malformed);
	sv_json_kv_uint(j, "non_sv_frames", n.not_sv);
	sv_json_kv_uint(j, "truncated_frames", n.truncated);
	sv_json_kv_uint(j, "prp_frames", n.prp);
	sv_json_key(j, "errors");
	sv_json_object_begin(j);
	for (int e = 1; e < SV_E__COUNT; e++)
		if (errors[e])
			sv_json_kv_uint(j, sv_codec_strerror(e), errors[e]);
	sv_json_object_end(j);
	sv_json_kv_uint(j, "streams_overflow", svsub_track_overflow(t));
	svsub_track_memory(t, &mem);
	sv_json_key(j, "stream_table");
	sv_json_object_begin(j);
	sv_json_kv_uint(j, "max_streams", mem.max_streams);
	sv_json_kv_uint(j, "slot_bytes", mem.slot_bytes);
	sv_json_kv_uint(j, "reserved_bytes", mem.reserved_bytes);
	sv_json_kv_uint(j, "populated", mem.populated);
	sv_json_kv_uint(j, "unpopulated", mem.unpopulated);
	sv_json_kv_str(j, "populate_error", mem.populate_err ? strerror(-mem.populate_err) : NULL);
	sv_json_object_end(j);
	sv_json_key(j, "streams");
	sv_json_array_begin(j);
	for (unsigned i = 0; i < svsub_track_count(t); i++)
		json_stream(j, svsub_track_stream(t, i));
	sv_json_array_end(j);
	return sv_json_error(j);
}

static void print_quality(FILE *f, const struct svsub_stream_stats *s)
{
	unsigned nq = s->nquality < SVSUB_TRACK_QCHANNELS ? s->nquality : SVSUB_TRACK_QCHANNELS;
	bool any = false;

	if (!s->dataset) {
		/* nothing is known of values and qualities: nothing is claimed */
		fprintf(f, "  quality: not read, dataset %s (%" PRIu64 " samples; svsub -c: datasets)\n",
			s->dataset_source == SVSUB_DS_NONE ? "declared none" : "unknown", s->samples_uninterpreted);
		return;
	}
	fprintf(f, "  quality (dataset %s, %s): %" PRIu64 " samples not good", s->dataset->name,
		svsub_dataset_source_name(s->dataset_source), s->samples_not_good);
	for (unsigned c = 0; c < nq; c++) {
		for (unsigned k = 0; k < SVSUB_Q_KINDS; k++) {
			if (!s->quality[c][k])
				continue;
			fprintf(f, "%s ch%u %s=%" PRIu64, any ? "," : ";", c + 1, qkind_name[k], s->quality[c][k]);
			any = true;
		}
	}
	if (s->samples_uninterpreted)
		fprintf(f, "; %" PRIu64 " samples not read (%" PRIu64 " not of the dataset's %u octets)",
			s->samples_uninterpreted, s->dataset_mismatch, s->dataset->len);
	fputc('\n', f);
}

int svsub_summary_print(FILE *f, struct svsub_proc *p, bool histograms)
{
	struct svsub_tracker *t = svsub_proc_tracker(p);
	const uint64_t *errors = svsub_track_errors(t);
	struct svsub_proc_counts n;
	char buf[256];
	bool any = false;

	svsub_proc_counts(p, &n);
	fprintf(f, "%" PRIu64 " frames: %" PRIu64 " SV, %" PRIu64 " malformed SV, %" PRIu64 " not SV",
		n.frames, n.sv, n.malformed, n.not_sv);
	if (n.truncated)
		fprintf(f, ", %" PRIu64 " cut by the capture", n.truncated);
	if (n.prp)
		fprintf(f, ", %" PRIu64 " with a PRP trailer", n.prp);
	fprintf(f, "; %u stream%s\n", svsub_track_count(t), svsub_track_count(t) == 1 ? "" : "s");
	for (unsigned i = 0; i < svsub_track_count(t); i++) {
		const struct svsub_stream_stats *s = svsub_track_stream(t, i);

		fprintf(f, "stream appid 0x%04x svID \"%s\": %" PRIu64 " frames (%.1f/s, %u ASDU/frame), %" PRIu64
			" samples, smpCnt %u..%u\n",
			s->appid, s->svID, s->c.frames, stream_frame_rate(s), s->asdus_per_frame, s->c.samples,
			s->first_smpCnt, s->last_smpCnt);
		fprintf(f, "  lost %" PRIu64 ", duplicates %" PRIu64 ", out of order %" PRIu64 ", resets %" PRIu64
			", confRev changes %" PRIu64 ", smpSynch changes %" PRIu64 ", simulated %" PRIu64
			", errors %" PRIu64 "\n",
			s->c.lost, s->c.duplicate, s->c.reordered, s->resets, s->confrev_changes, s->smpsynch_changes,
			s->simulated, s->c.errors);
		if (s->lost_estimated)
			fprintf(f, "  of the lost, %" PRIu64 " estimated: whole wraps from the receive time (no sample times)\n",
				s->lost_estimated);
		if (s->has_smpRate)
			snprintf(buf, sizeof(buf), "%u", s->smpRate);
		else
			snprintf(buf, sizeof(buf), "absent");
		fprintf(f, "  confRev %u, smpSynch %u, smpRate %s, smpCnt wrap %u (%s)%s\n", s->confRev, s->smpSynch,
			buf, s->wrap, sv_rate_source_name(s->wrap_source),
			s->wrap_violations ? ", stated wrap violated" : "");
		if (s->prp_frames[0] || s->prp_frames[1])
			fprintf(f, "  PRP: LAN A %" PRIu64 " frames, LAN B %" PRIu64 " frames; copies discarded A %"
				PRIu64 " B %" PRIu64 "\n",
				s->prp_frames[0], s->prp_frames[1], s->prp_discarded[0], s->prp_discarded[1]);
		print_quality(f, s);
		struct sv_stats_summary sum;

		sv_stats_summarize(&s->interarrival, &sum);
		sv_stats_summary_format(&sum, buf, sizeof(buf));
		fprintf(f, "  inter-arrival: %s\n", buf);
		if (latency_reported(s)) {
			sv_stats_summarize(&s->latency, &sum);
			sv_stats_summary_format(&sum, buf, sizeof(buf));
			fprintf(f, "  latency (rx - Ts): %s\n", buf);
		} else if (s->latency_possible) {
			/* say which evidence made the clock suspect: the host's own flag, impossible values, or both */
			fprintf(f, "  latency: not reported, clock not synchronised:");
			if (s->host_unsync)
				fprintf(f, " the host clock says it is not (adjtimex; --clock-trusted when publisher "
					"and subscriber share it);");
			if (s->latency_negative)
				fprintf(f, " %" PRIu64 " samples received before they were sampled (down to %.3f ms);",
					s->latency_negative, (double)s->latency_negative_min / 1e6);
			if (!s->host_unsync && !s->latency_negative && s->latency_outliers)
				fprintf(f, " most samples (%" PRIu64 ") over --max-latency-ms;", s->latency_outliers);
			fputc('\n', f);
		} else {
			fprintf(f, "  latency: n/a (smpSynch %u%s)\n", s->smpSynch,
				s->smpSynch == SV_SMPSYNCH_GLOBAL ? ", sample rate unknown" : ", not globally synchronised");
		}
		if (s->latency_outliers) {
			char t0[48], t1[48];

			svsub_format_ts(s->latency_outlier_first_rx_ns, t0, sizeof(t0));
			svsub_format_ts(s->latency_outlier_last_rx_ns, t1, sizeof(t1));
			fprintf(f, "  latency outliers (over --max-latency-ms, not in the histogram): %" PRIu64
				", largest %.3f ms, received from %s to %s\n",
				s->latency_outliers, (double)s->latency_outlier_max / 1e6, t0, t1);
		}
		if (s->latency_possible && (s->latency_rate_unknown || s->latency_no_sample_time))
			fprintf(f, "  latency: none for %" PRIu64 " samples before the rate was known (smpRate absent, "
				"smpCnt wrap not learned yet), %" PRIu64 " with smpCnt >= the rate\n",
				s->latency_rate_unknown, s->latency_no_sample_time);
		if (histograms && s->interarrival.count) {
			fprintf(f, "  inter-arrival histogram:\n");
			sv_stats_print_log2(&s->interarrival, f, 1000, NULL);
		}
		if (histograms && latency_reported(s)) {
			fprintf(f, "  latency histogram:\n");
			sv_stats_print_log2(&s->latency, f, 1000, NULL);
		}
	}
	for (int e = 1; e < SV_E__COUNT; e++) {
		if (!errors[e])
			continue;
		fprintf(f, "%s %s %" PRIu64, any ? "," : "errors:", sv_codec_strerror(e), errors[e]);
		any = true;
	}
	if (any)
		fputc('\n', f);
	if (svsub_track_overflow(t))
		fprintf(f, "stream table full: %" PRIu64 " ASDUs of further streams ignored\n",
			svsub_track_overflow(t));
	fflush(f);
	return ferror(f) ? -EIO : 0;
}

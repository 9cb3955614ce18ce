/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svsub's final summary, the same for --read FILE and live modes: human text (stderr or stdout) and one
 * JSON object (--json, on stdout). JSON layout (keys are a contract with tests and svreport):
 *   { "source": {...caller's fields...},
 *     "frames": N, "sv_frames": N, "malformed_frames": N, "non_sv_frames": N, "truncated_frames": N,
 *     "errors": { "<error name>": N, ... },                  malformed frames by sv_codec_strerror() name
 *     "streams_overflow": N,
 *     "stream_table": { "max_streams", "slot_bytes", "reserved_bytes" (address space), "populated" (slots mapped
 *                       ahead of use, live), "unpopulated" (streams whose slot was not: their first frames
 *                       page-faulted), "populate_error" (why the helper stopped mapping ahead, or null) },
 *     "streams": [ { "appid", "svID", "frames", "samples", "lost", "duplicates", "out_of_order", "resets",
 *                    "confrev_changes", "smpsynch_changes", "simulated", "errors", "confRev", "smpSynch",
 *                    "smpRate", "sample_rate", "wrap", "wrap_source", "wrap_violations", "asdus_per_frame",
 *                    "first_smpCnt", "last_smpCnt", "duration_s", "frame_rate",
 *                    "quality": { "dataset": name | null, "dataset_source": "assumed" | "declared" | "unknown" |
 *                                 "none", "samples_uninterpreted", "dataset_mismatch", "samples_not_good",
 *                                 "channels": [ {name, invalid, questionable, test, derived} ] },
 *                    "prp": { "lan_a_frames", "lan_b_frames", "lan_a_discarded", "lan_b_discarded" } | null,
 *                    "interarrival_ns": {count,min,p50,p99,p999,p9999,max,...},
 *                    "latency_ns": {...} | null,
 *                    "latency_outliers": { "count", "max_ns", "first_rx_ns", "last_rx_ns" },
 *                    "latency_negative": { "count", "min_ns" },
 *                    "latency_rate_unknown", "latency_no_sample_time", "host_clock_unsynchronised",
 *                    "clock_synchronised": bool | null
 *                  } ],
 *   "scl": {...} with --scl (svsub_scl.h: file, edition, ied, expected, mismatches, errors, streams[].mismatches
 *            [{check, expected, received, frames, first_frame}], missing, unexpected),
 *   "comtrade": {...} with --comtrade (svsub_comtrade.h: dir, format, written, dropped, failed, error, files) }
 * latency_ns is null when the stream is not synchronised (smpSynch != 2 or rate unknown) or there is evidence
 * against its clock (svsub_track.h); clock_synchronised is null when no latency could be computed. Outliers
 * (over --max-latency-ms) and latencies negative beyond the tolerance are counted apart, never in latency_ns;
 * the *_rx_ns times are on the receive clock (source.rx_clock). max_ns/first_rx_ns/last_rx_ns and min_ns are
 * null when their count is 0. quality.channels has one entry per Quality member of the dataset (up to 16),
 * none when the dataset is unknown (svsub_track.h: nothing is claimed about data of an unknown layout).
 */
#ifndef SVSUB_SUMMARY_H
#define SVSUB_SUMMARY_H

#include <stdio.h>

#include "svsub_proc.h"

struct sv_json;

/* Writes the members of the top-level object after "source" (caller opened the object and wrote
 * "source"). Returns sv_json's sticky error. */
int svsub_summary_json_body(struct sv_json *j, struct svsub_proc *p);

/* Human summary: one block per stream, errors by name. Returns 0 or -EIO. */
int svsub_summary_print(FILE *f, struct svsub_proc *p, bool histograms);

#endif /* SVSUB_SUMMARY_H */

// SPDX-License-Identifier: Apache-2.0
/* svpub's metrics: see svpub_metrics.h (families: configs/prometheus/metrics.txt, svkit_pub_*). */
#include "svpub_metrics.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>

int svpub_metrics_register(struct sv_metrics *m, struct sv_metrics_health *h, struct svpub *p)
{
	static const char *const stream_l[] = { "svid", "appid" }, *const hop_l[] = { "hop", "port" };
	static const struct {
		const char *name, *help;
		size_t off; /* of the pointer in struct svpub_stream_counters */
	} per_stream[] = {
		{ "svkit_pub_frames", "Frames handed to the transmit back-end and accepted",
		  offsetof(struct svpub_stream_counters, frames) },
		{ "svkit_pub_late_frames", "Frames sent after their deadline plus the late threshold",
		  offsetof(struct svpub_stream_counters, late) },
		{ "svkit_pub_skipped_frames", "Frames not sent: late, with the skip policy",
		  offsetof(struct svpub_stream_counters, skipped) },
		{ "svkit_pub_stopped_frames", "Frames not sent: a STOP event of the scenario",
		  offsetof(struct svpub_stream_counters, stopped) },
		{ "svkit_pub_outage_frames", "Frames refused: the interface was down or gone",
		  offsetof(struct svpub_stream_counters, outage) },
		{ "svkit_pub_tx_errors", "Frames whose send failed otherwise",
		  offsetof(struct svpub_stream_counters, tx_errors) },
	};
	const struct svpub_totals *tot = svpub_totals_ref(p);
	const struct {
		const char *name, *help;
		const uint64_t *src;
	} totals[] = {
		{ "svkit_pub_overruns", "Wake-ups later than one frame period", &tot->overruns },
		{ "svkit_pub_tx_timestamps", "Transmit timestamps received", &tot->tx_timestamps },
		{ "svkit_pub_tx_timestamps_missing", "Frames whose transmit timestamp never came", &tot->tx_ts_missing },
		{ "svkit_pub_tx_timestamps_out_of_order", "Transmit timestamps earlier than the stream's previous one",
		  &tot->tx_ts_disorder },
	};
	struct sv_metrics_family *f;
	int err;

	for (size_t k = 0; k < sizeof(per_stream) / sizeof(per_stream[0]); k++) {
		f = sv_metrics_family(m, per_stream[k].name, SV_METRIC_COUNTER, NULL, per_stream[k].help, 2, stream_l);
		if (!f)
			return -errno;
		for (unsigned i = 0; i < svpub_nstreams(p); i++) {
			struct svpub_stream_counters c;
			char appid[8];
			const char *v[] = { NULL, appid };

			svpub_stream_counters(p, i, &c);
			v[0] = c.svid;
			snprintf(appid, sizeof(appid), "0x%04x", c.appid);
			err = sv_metrics_add_u64(f, v, *(const uint64_t *const *)((const char *)&c + per_stream[k].off));
			if (err)
				return err;
		}
	}
	for (size_t k = 0; k < sizeof(totals) / sizeof(totals[0]); k++) {
		f = sv_metrics_family(m, totals[k].name, SV_METRIC_COUNTER, NULL, totals[k].help, 0, NULL);
		if (!f)
			return -errno;
		err = sv_metrics_add_u64(f, NULL, totals[k].src);
		if (err)
			return err;
	}
	f = sv_metrics_family(m, "svkit_pub_wakeup_lateness_seconds", SV_METRIC_HISTOGRAM, "seconds",
			      "Scheduler lateness: frame deadline to the sender's wake-up", 0, NULL);
	if (!f)
		return -errno;
	err = sv_metrics_add_hist(f, NULL, svpub_lateness(p));
	if (err)
		return err;
	f = sv_metrics_family(m, "svkit_hop_latency_seconds", SV_METRIC_HISTOGRAM, "seconds",
			      "Latency of one hop (svpub Ts-T0; svtrace T1-T2a, T2a-T2b, T1-T2b; svsub Ts-T3, T3-T4)", 2,
			      hop_l);
	if (!f)
		return -errno;
	{
		const char *v[] = { "Ts-T0", svpub_out_name(p) };

		err = sv_metrics_add_hist(f, v, svpub_tx_lateness(p));
		if (err)
			return err;
	}
	svpub_set_metrics(p, h);
	return 0;
}

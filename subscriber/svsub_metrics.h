/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svsub's metrics (--metrics, docs/metrics.md "svsub"): the tracker's streams as a table (counters per svID,
 * APPID; overflow row past SVSUB_METRICS_MAX_ROWS), the pipeline's frame counters, the malformed frames by
 * decoder error and the Ts-T3 latency summed over the streams. All read at scrape time from the counters the
 * pipeline keeps (nothing added to the packet path). The receive back-end's families are svrx_live's.
 */
#ifndef SVSUB_METRICS_H
#define SVSUB_METRICS_H

#include "sv_metrics.h"
#include "svsub_proc.h"

#define SVSUB_METRICS_MAX_ROWS 256

struct svsub_metrics {
	struct svsub_proc *p;
	struct svsub_tracker *t;
	struct sv_metrics_family *hop; /* svkit_hop_latency_seconds: the receive path adds its T3-T4 */
};

/* Registers the families in @m; @port names the receive interface (or the file read). @sm must outlive the
 * registry's use. Returns 0 or a registration error. */
int svsub_metrics_register(struct svsub_metrics *sm, struct sv_metrics *m, struct svsub_proc *p, const char *port);

#endif /* SVSUB_METRICS_H */

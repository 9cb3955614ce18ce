/* SPDX-License-Identifier: Apache-2.0 */
/* svpub's metrics (--metrics, docs/metrics.md "svpub"): per stream the engine's counters, the totals, the
 * wake-up lateness and the Ts-T0 hop (deadline to TX stamp), read in place by the metrics thread. */
#ifndef SVPUB_METRICS_H
#define SVPUB_METRICS_H

#include "sv_metrics.h"
#include "svpub_engine.h"

/* Registers the families in @m and has the engine copy its other counters into @h. 0 or a registration error. */
int svpub_metrics_register(struct sv_metrics *m, struct sv_metrics_health *h, struct svpub *p);

#endif /* SVPUB_METRICS_H */

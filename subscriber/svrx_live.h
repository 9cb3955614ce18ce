/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svsub's live loop: one or two svrx handles (PRP: LAN A and LAN B into the same tracker, which recognises
 * the duplicate by its redundancy trailer) -> svsub_proc_frame(). Adds what only the live path knows: the
 * receive-path latency (frame receive stamp to the moment the pipeline, application included, is done with
 * the batch of frames that carried the frame - an upper bound of "done with the frame", read once per batch
 * - on the same clock), the back-end counters and modes, for the summary.
 * The receive options are keys of svsub's one table (svapp_config.c); svsub.c fills svrx_live_opts from it.
 */
#ifndef SVRX_LIVE_H
#define SVRX_LIVE_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "sv_stats.h"
#include "svrx.h"
#include "svsub_proc.h"

struct svrx_live_opts {
	struct svrx_config cfg;	 /* ifname = --interface; backend etc. */
	const char *ifname_b;	 /* --interface-b: PRP LAN B (same back-end and options) */
	double duration_s;	 /* 0: until *stop */
	bool status;		 /* one status line a second on stderr */
};

/* svrx_config_init() + defaults. */
void svrx_live_opts_init(struct svrx_live_opts *o);

struct svrx_live;

/* Opens the handle(s) and prints "receiving: ..." on stderr unless @quiet, and "IF is down (...), waiting"
 * whatever @quiet for a link that is down already. 0 or -errno (logged). */
int svrx_live_open(struct svrx_live **out, const struct svrx_live_opts *o, bool quiet);
/* Runs until *@stop, the duration, or an error. A link that goes down (or is down at open) is waited for:
 * said on stderr once per transition, counted (svrx_stats.link_down); the other LAN of a PRP pair goes on.
 * Returns 0, or -errno: -EIO (an output of @p failed), -ENODEV (an interface is gone), or the error of a
 * receive call that a link going down does not explain; these are said on stderr with the interface. */
int svrx_live_run(struct svrx_live *l, struct svsub_proc *p, volatile sig_atomic_t *stop);
/* Writes "rx": [ svrx_json of each handle ], "rx_to_app_ns": {stats} into the open object. */
int svrx_live_json(struct svrx_live *l, struct sv_json *j);
/* Receive-path latency (TAI-stamped frames only); NULL-safe. */
const struct sv_stats *svrx_live_rx_to_app(const struct svrx_live *l);
/* One line per handle with the kernel counters, on @f. */
void svrx_live_print(struct svrx_live *l, FILE *f);
void svrx_live_close(struct svrx_live *l);

/* svsub --metrics: registers the back-ends' families in @m (per interface: frames, drops by reason, link
 * down), the receive path's latency as hop T3-T4 in @hop (svkit_hop_latency_seconds), and from then on copies
 * the back-ends' counters once a second (and at the end of the run) for the metrics thread to read, their
 * ring overflows into @h. 0 or a registration error. */
struct sv_metrics;
struct sv_metrics_family;
struct sv_metrics_health;
int svrx_live_metrics(struct svrx_live *l, struct sv_metrics *m, struct sv_metrics_family *hop,
		      struct sv_metrics_health *h);

#endif /* SVRX_LIVE_H */

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svsub's live loop: one or two svrx handles (PRP: LAN A and LAN B into the same tracker, which recognises
 * the duplicate by its redundancy trailer) -> svsub_proc_frame(). Adds what only the live path knows: the
 * receive-path latency (frame receive stamp to the moment the pipeline, application included, is done with
 * the batch of frames that carried the frame - an upper bound of "done with the frame", read once per batch
 * - on the same clock), the back-end counters and modes, for the summary.
 * svsub.c owns the options table; this module gives it the rows (SVRX_LIVE_LONGOPTS) and the parser.
 */
#ifndef SVRX_LIVE_H
#define SVRX_LIVE_H

#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "sv_stats.h"
#include "svrx.h"
#include "svsub_proc.h"

enum {
	SVRX_OPT_INTERFACE_B = 0x1100,
	SVRX_OPT_XDP_MODE,
	SVRX_OPT_ZEROCOPY,
	SVRX_OPT_QUEUE,
	SVRX_OPT_BUSY_POLL,
	SVRX_OPT_NO_WAKEUP,
	SVRX_OPT_APPID,
	SVRX_OPT_GROUP,
	SVRX_OPT_PROMISC,
	SVRX_OPT_UMEM_FRAMES,
};

#define SVRX_LIVE_LONGOPTS                                                              \
	{ "interface-b", required_argument, NULL, SVRX_OPT_INTERFACE_B },               \
	{ "xdp-mode", required_argument, NULL, SVRX_OPT_XDP_MODE },                     \
	{ "zerocopy", required_argument, NULL, SVRX_OPT_ZEROCOPY },                     \
	{ "queue", required_argument, NULL, SVRX_OPT_QUEUE },                           \
	{ "busy-poll", required_argument, NULL, SVRX_OPT_BUSY_POLL },                   \
	{ "no-need-wakeup", no_argument, NULL, SVRX_OPT_NO_WAKEUP },                    \
	{ "appid", required_argument, NULL, SVRX_OPT_APPID },                           \
	{ "group", required_argument, NULL, SVRX_OPT_GROUP },                           \
	{ "promiscuous", no_argument, NULL, SVRX_OPT_PROMISC },                         \
	{ "umem-frames", required_argument, NULL, SVRX_OPT_UMEM_FRAMES }

struct svrx_live_opts {
	struct svrx_config cfg;	 /* ifname = --interface; backend etc. */
	const char *ifname_b;	 /* --interface-b: PRP LAN B (same back-end and options) */
	double duration_s;	 /* 0: until *stop */
	bool status;		 /* one status line a second on stderr */
};

/* svrx_config_init() + defaults. */
void svrx_live_opts_init(struct svrx_live_opts *o);
/* Handles one of the SVRX_OPT_* codes. Returns 0, -EINVAL (message printed on stderr), or -ENOENT when @c
 * is not one of ours. */
int svrx_live_parse_opt(struct svrx_live_opts *o, int c, const char *arg);
/* The --help lines of the options above. */
void svrx_live_usage(FILE *f);

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

#endif /* SVRX_LIVE_H */

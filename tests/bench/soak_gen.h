/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A synthetic soak of days for svreport's soak report (bench_soakgen, test_soak_gen): the records one svpub,
 * one svtrace and the svsub of two guests write in soak mode (10 s intervals, flight recorder) at 8 streams x
 * 4000 frames/s, through libsv's writer (tests/bench/soak_sim.h, interval by interval: seconds, not hours):
 *   pub.rec       svpub (host "pub1"): Ts-T0
 *   trace.rec     svtrace (host "hyper1"), ports 1 and 2: T1-T2a, T2a-T2b, T1-T2b; its host's TAI is stepped by
 *                 +3 ms a third of the way (a CLOCK record, the intervals then flagged STEP)
 *   g1.rec        svsub of guest 1 (host "guest1"): killed half way (its part ends without END), restarted
 *                 60 s later with a new run_id; the killed run set aside as systemd's svkit-set-aside does:
 *                 g1-STAMP.rec[.N] (STAMP: the restart's UTC time, 20270115T...Z)
 *   g2.rec        svsub of guest 2 (host "guest2")
 * Every file rotates every rotate_mib MiB (all parts kept). A late frame every 5 min and a loss / drop /
 * change / restart in turn every 15 min on one (stream, guest) in turn trigger flight-recorder windows (within
 * the budgets: most are counted, not kept), and the losses are counted in the intervals.
 * Header-only.
 */
#ifndef SV_SOAK_GEN_H
#define SV_SOAK_GEN_H

#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "soak_sim.h"

struct sg_cfg {
	const char *dir;
	unsigned hours;		/* the soak's length (72) */
	unsigned rotate_mib;	/* parts of this size (16) */
};

struct sg_result {
	struct ss_result pub, trace, g1a, g1b, g2; /* g1a: the killed run (frames, triggers only: it wrote no
						     * summary) */
	char g1_aside[64];	/* the killed run's file name in dir */
};

/* The set-aside name of the run killed at @t (ns from the soak's start): "g1-20270115T083959Z.rec". */
static inline void sg_stamp(char *buf, size_t size, int64_t t)
{
	time_t utc = (time_t)(SS_SEC0 - 37 + t / SV_NSEC_PER_SEC);
	struct tm tm;

	gmtime_r(&utc, &tm);
	strftime(buf, size, "g1-%Y%m%dT%H%M%SZ.rec", &tm);
}

/* Renames @dir/g1.rec and its parts to the set-aside name. */
static inline int sg_set_aside(const char *dir, const char *aside)
{
	char from[512], to[512];

	for (unsigned n = 1;; n++) {
		snprintf(from, sizeof(from), "%s/g1.rec.%u", dir, n);
		snprintf(to, sizeof(to), "%s/%s.%u", dir, aside, n);
		if (rename(from, to))
			break;
	}
	snprintf(from, sizeof(from), "%s/g1.rec", dir);
	snprintf(to, sizeof(to), "%s/%s", dir, aside);
	return rename(from, to) ? -errno : 0;
}

static inline int sg_generate(const struct sg_cfg *g, struct sg_result *res)
{
	const int64_t hour = 3600 * SV_NSEC_PER_SEC, len = (int64_t)g->hours * hour;
	const int64_t kill = len / 2, restart = kill + 60 * SV_NSEC_PER_SEC;
	char path[5][512];
	struct ss_cfg c = {
		.streams = 8, .guests = 2, .rate = 4000, .noise_ns = 300 * SV_NSEC_PER_SEC,
		.fault_ns = 900 * SV_NSEC_PER_SEC, .rotate_bytes = (uint64_t)(g->rotate_mib ? g->rotate_mib : 16) << 20,
	};
	int err, status;
	pid_t pid;

	memset(res, 0, sizeof(*res));
	for (unsigned i = 0; i < 4; i++)
		snprintf(path[i], sizeof(path[i]), "%s/%s", g->dir, (const char *[]){ "pub.rec", "trace.rec",
										    "g1.rec", "g2.rec" }[i]);
	c.tool = SS_SVPUB, c.path = path[0], c.host = "pub1", c.fast_ns = len;
	err = ss_run(&c, &res->pub);
	if (err)
		return err;
	c.tool = SS_SVTRACE, c.path = path[1], c.host = "hyper1", c.step_at_ns = len / 3,
	c.step_ns = 3 * SV_NSEC_PER_MSEC;
	err = ss_run(&c, &res->trace);
	if (err)
		return err;
	c.step_at_ns = c.step_ns = 0;
	c.tool = SS_SVSUB, c.path = path[3], c.host = "guest2", c.guests = 1;
	err = ss_run(&c, &res->g2);
	if (err)
		return err;
	/* guest 1's svsub is killed half way: its record ends at its last flushed block, no END */
	c.path = path[2], c.host = "guest1", c.fast_ns = kill, c.crash = true;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0)
		_exit(ss_run(&c, &res->g1a) ? 1 : 0);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return -EIO;
	sg_stamp(res->g1_aside, sizeof(res->g1_aside), restart);
	err = sg_set_aside(g->dir, res->g1_aside);
	if (err)
		return err;
	c.crash = false, c.start_ns = restart, c.fast_ns = len - restart;
	return ss_run(&c, &res->g1b);
}

#endif /* SV_SOAK_GEN_H */

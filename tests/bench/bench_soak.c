// SPDX-License-Identifier: Apache-2.0
/*
 * bench_soak [--wide] [DIR]: the bytes each tool writes in the default soak mode (10 s intervals, the flight recorder
 * at its budget) at 8 streams x 4000 frames/s to 2 guests, measured from what libsv's record writer wrote
 * (tests/bench/soak_sim.h, simulated clock): svpub (8 keys: Ts-T0), svsub (one guest: 16 keys, Ts-T3 and
 * Ts-T4), svtrace (48 keys: T1-T2a, T2a-T2b, T1-T2b for each stream and guest). Each tool runs a simulated day:
 * the first hour frame by frame (every frame through sv_interval_frame and sv_flight_push, as the tools'
 * loops will call them), the other 23 interval by interval (the same latencies as histogram buckets, the
 * frames only around the triggers). Triggers: a frame over 1 ms every 3 s (this VM's noise) and a loss,
 * a drop, a change and a restart in turn every 15 s, so every class spends its budget. The goal: at most
 * 100 MB a day per tool. --wide: svtrace again with latencies spread as on this VM (a tail in one frame of
 * 16 up to 400 us, one in 1024 up to 3 ms: wider histograms, larger HIST records; the daily cap holds the
 * day). Prints "figure:" lines for tests/bench/run (soak.bench).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "soak_sim.h"

#define HOUR_NS (3600 * SV_NSEC_PER_SEC)

struct hours {
	uint64_t bytes[26];	/* bytes written by the end of hour i (0: the header) */
	unsigned n;
};

static void at_hour(void *ctx, struct sv_record_writer *w, unsigned hour)
{
	struct hours *h = ctx;
	struct sv_record_writer_stats st;

	sv_record_writer_get_stats(w, &st);
	if (hour && hour < sizeof(h->bytes) / sizeof(h->bytes[0])) {
		h->bytes[hour] = st.bytes;
		h->n = hour;
	}
}

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int bench(const char *dir, enum ss_tool tool, const char *name, bool wide)
{
	char path[512];
	struct hours h = { { 0 }, 0 };
	struct ss_cfg c = {
		.tool = tool, .path = path, .streams = 8, .guests = 2, .rate = 4000, .frames_ns = HOUR_NS,
		.fast_ns = 23 * HOUR_NS, .noise_ns = 3 * SV_NSEC_PER_SEC, .fault_ns = 15 * SV_NSEC_PER_SEC,
		.at_mark = at_hour, .ctx = &h, .wide = wide,
	};
	struct ss_result r;
	double t0 = cpu_s(), t1;
	uint64_t dropped = 0, steady;
	int err;

	snprintf(path, sizeof(path), "%s/%s.rec", dir, name);
	err = ss_run(&c, &r);
	t1 = cpu_s();
	if (err || h.n < 24) {
		fprintf(stderr, "bench_soak: %s: %s (%u hours)\n", name, strerror(-err), h.n);
		return 1;
	}
	for (unsigned k = 0; k < SV_WINDOW_CLASSES; k++)
		dropped += r.fl.dropped[k];
	/* the steady hours: after the first, whose buckets started full */
	steady = (h.bytes[24] - h.bytes[1]) / 23;
	printf("%s: %u keys in %u (hop, guest) groups, %" PRIu64 " frames, %" PRIu64 " intervals, %" PRIu64
	       " INTERVAL + %" PRIu64 " HIST records; flight: ring %u records, budget %.3f windows/h per class, %" PRIu64
	       " windows kept of %" PRIu64 " triggers (%" PRIu64 " merged, %" PRIu64 " refused by the budget), %" PRIu64
	       " window records; memory %zu KiB at open; %.1f s CPU\n",
	       name, r.iv.keys, r.iv.groups, r.frames, r.iv.intervals, r.iv.records, r.iv.hists, r.fl.ring,
	       r.fl.budget_mwph[0] / 1000.0, r.fl.windows, r.triggers, r.fl.merged, dropped, r.fl.records,
	       (r.iv.memory + r.fl.memory) >> 10, t1 - t0);
	printf("figure: soak_bytes_per_hour_%s %" PRIu64 " bytes (steady hour: the mean of hours 2-24)\n", name,
	       steady);
	printf("figure: soak_bytes_first_hour_%s %" PRIu64 " bytes (frame by frame; every class's first window)\n",
	       name, h.bytes[1]);
	printf("figure: soak_bytes_per_day_%s %" PRIu64 " bytes (goal <= 100000000)\n", name, r.rec.bytes);
	printf("figure: soak_memory_%s %zu bytes (allocated at open: intervals + flight ring)\n", name,
	       r.iv.memory + r.fl.memory);
	return r.rec.bytes > 100000000u ? 1 : 0;
}

int main(int argc, char **argv)
{
	bool wide = argc > 1 && !strcmp(argv[1], "--wide");
	char dir[256];
	int rc = 0;

	if (argc > 2 + wide || (argc > 1 && argv[1][0] == '-' && !wide)) {
		fprintf(stderr, "usage: bench_soak [--wide] [DIR]\n");
		return 2;
	}
	snprintf(dir, sizeof(dir), "%s/bench_soak.XXXXXX", argc == 2 + wide ? argv[1 + wide] : "/var/tmp");
	if (!mkdtemp(dir)) {
		perror("bench_soak: mkdtemp");
		return 1;
	}
	if (wide) {
		rc |= bench(dir, SS_SVTRACE, "svtrace_wide", true);
	} else {
		rc |= bench(dir, SS_SVPUB, "svpub", false);
		rc |= bench(dir, SS_SVSUB, "svsub", false);
		rc |= bench(dir, SS_SVTRACE, "svtrace", false);
	}
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd))
			fprintf(stderr, "bench_soak: could not remove %s\n", dir);
	}
	return rc;
}

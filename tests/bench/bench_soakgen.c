// SPDX-License-Identifier: Apache-2.0
/*
 * bench_soakgen DIR [HOURS [ROTATE_MIB]]: writes a synthetic soak of HOURS (72) into DIR for svreport's soak
 * report (tests/bench/soak_gen.h: svpub, svtrace and two svsub in soak mode at 8 x 4000 frames/s, rotated parts,
 * guest 1's svsub killed and restarted half way with a new run_id, a clock step, triggered windows, losses).
 * Prints what it wrote and "figure: soakgen_seconds" (the time it took).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sv_config.h"
#include "soak_gen.h"

static void line(const char *name, const struct ss_result *r)
{
	uint64_t dropped = 0;

	for (unsigned k = 0; k < SV_WINDOW_CLASSES; k++)
		dropped += r->fl.dropped[k];
	printf("%-8s %" PRIu64 " bytes in %u parts, %" PRIu64 " intervals, %" PRIu64 " windows kept (%" PRIu64
	       " refused by the budget), %" PRIu64 " clock steps\n",
	       name, r->rec.bytes, r->rec.parts, r->iv.intervals, r->fl.windows, dropped, r->iv.steps);
}

int main(int argc, char **argv)
{
	struct sg_cfg g = { .hours = 72, .rotate_mib = 16 };
	struct sg_result r;
	struct timespec t0, t1;
	uint64_t v;
	int err;

	if (argc < 2 || argc > 4 || (argc > 2 && (sv_parse_uint64(argv[2], &v) || !v || v > 24 * 365)) ||
	    (argc > 3 && (sv_parse_uint64(argv[3], &v) || v < 1 || v > 1024))) {
		fprintf(stderr, "usage: bench_soakgen DIR [HOURS (1..8760, 72)] [ROTATE_MIB (1..1024, 16)]\n");
		return 2;
	}
	g.dir = argv[1];
	if (argc > 2)
		g.hours = (unsigned)strtoul(argv[2], NULL, 10);
	if (argc > 3)
		g.rotate_mib = (unsigned)strtoul(argv[3], NULL, 10);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	err = sg_generate(&g, &r);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (err) {
		fprintf(stderr, "bench_soakgen: %s: %s\n", g.dir, strerror(-err));
		return 1;
	}
	line("pub", &r.pub);
	line("trace", &r.trace);
	printf("g1       killed at %u h (no END), set aside as %s\n", g.hours / 2, r.g1_aside);
	line("g1", &r.g1b);
	line("g2", &r.g2);
	printf("figure: soakgen_seconds %.1f s (%u h of soak records, 4 tools)\n",
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9, g.hours);
	return 0;
}

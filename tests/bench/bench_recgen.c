// SPDX-License-Identifier: Apache-2.0
/*
 * bench_recgen DIR EVENTS: writes a synthetic lab record set of about EVENTS events into DIR (pub.rec,
 * trace.rec, g1.rec, g2.rec; 8 streams x 4000 samples/s, two guests) for report.bench.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "sv_config.h"
#include "report_gen.h"

int main(int argc, char **argv)
{
	struct rg_cfg c = {.streams = 8, .rate = 4000};
	uint64_t events, n;
	int err;

	if (argc != 3 || sv_parse_uint64(argv[2], &events) || events < 6) {
		fprintf(stderr, "usage: bench_recgen DIR EVENTS (>= 6)\n");
		return 2;
	}
	c.dir = argv[1];
	c.frames = events / (2 + 2 * RG_GUESTS);
	err = rg_generate(&c, &n);
	if (err) {
		fprintf(stderr, "bench_recgen: %s: %s\n", argv[1], strerror(-err));
		return 1;
	}
	printf("events %" PRIu64 " frames %" PRIu64 " seconds %.1f\n", n, c.frames,
	       (double)c.frames / c.streams / c.rate);
	return 0;
}

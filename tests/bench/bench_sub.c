// SPDX-License-Identifier: Apache-2.0
/*
 * svsub pipeline micro-benchmark: `bench_sub MODE N` passes N frames built in memory through svsub_proc_frame()
 * (decode through the shape-remembering decoder, tracking, quality, latency: what svsub does per frame after
 * the receive back-end) and prints "ns_per_frame X" on CLOCK_MONOTONIC. Under callgrind the difference
 * between two N gives instructions per frame with the set-up removed (as codec.bench does):
 *   valgrind --tool=callgrind --callgrind-out-file=/dev/null bench_sub track_92le 1000   (and 21000)
 * Modes: track_92le (one 9-2LE stream, 4000 samples/s, smpSynch 2: a latency per sample), track_64 (64 such
 * streams interleaved, the issue-5 feed's shape). The tracker is set up as live svsub sets it (prefault), with
 * `max_streams` streams (env BENCH_MAX_STREAMS, default 256).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sv_clock.h"
#include "sv_codec.h"
#include "svsub_proc.h"

#define MAX_STREAMS 64

static struct sv_template tpl[MAX_STREAMS];

static void build(struct sv_template *t, unsigned k)
{
	static uint8_t dst[6] = { 0x01, 0x0c, 0xcd, 0x04, 0x00, 0x00 }, src[6] = { 0x20, 0xb7, 0xc0, 0, 0xb8, 0x31 };
	static uint8_t data[64];
	char svid[24];
	struct sv_view v;

	memset(&v, 0, sizeof(v));
	snprintf(svid, sizeof(svid), "AA1J1Q01A1MU%04u", k);
	dst[5] = (uint8_t)k;
	for (unsigned i = 0; i < 64; i++)
		data[i] = (uint8_t)(i % 8 < 4 ? i * 13 + k : 0); /* values, good quality */
	v.dst = dst;
	v.src = src;
	v.vlan = true;
	v.vlan_pcp = 4;
	v.appid = (uint16_t)(0x4000 + k);
	v.noASDU = 1;
	v.asdu[0].svID = (const uint8_t *)svid;
	v.asdu[0].svID_len = (uint16_t)strlen(svid);
	v.asdu[0].confRev = 1;
	v.asdu[0].smpSynch = SV_SMPSYNCH_GLOBAL;
	v.asdu[0].smpRate = 80;
	v.asdu[0].present = SV_HAS_SMPRATE;
	v.asdu[0].seqData = data;
	v.asdu[0].seqData_len = 64;
	if (sv_template_init(t, &v))
		exit(1);
}

int main(int argc, char **argv)
{
	struct svsub_proc_cfg cfg = { .app_clock = -1 };
	struct svsub_proc *p;
	unsigned streams;
	uint64_t n;
	int64_t t0, t1, base = 1000 * SV_NSEC_PER_SEC;
	const char *ms = getenv("BENCH_MAX_STREAMS");

	if (argc != 3 || (strcmp(argv[1], "track_92le") && strcmp(argv[1], "track_64"))) {
		fprintf(stderr, "usage: bench_sub track_92le|track_64 N\n");
		return 2;
	}
	streams = strcmp(argv[1], "track_64") ? 1 : MAX_STREAMS;
	n = strtoull(argv[2], NULL, 10);
	cfg.track.prefault = true;
	cfg.track.max_streams = ms ? (uint32_t)strtoul(ms, NULL, 10) : 0;
	for (unsigned k = 0; k < streams; k++)
		build(&tpl[k], k);
	if (svsub_proc_create(&p, &cfg)) {
		fprintf(stderr, "bench_sub: cannot set up\n");
		return 1;
	}
	t0 = sv_clock_gettime_ns(CLOCK_MONOTONIC);
	for (uint64_t i = 0; i < n; i++) {
		unsigned k = (unsigned)(i % streams);
		uint64_t s = i / streams; /* the stream's sample number */
		struct svsub_frame f = { .len = tpl[k].len, .index = i + 1, .vlan_oob = SVSUB_VLAN_OOB_NONE };

		sv_template_set_smpcnt(&tpl[k], 0, (uint16_t)(s % 4000));
		f.data = tpl[k].frame;
		/* received 100 us after its sample */
		f.rx_ns = base + (int64_t)s * 250000 + 100000;
		if (svsub_proc_frame(p, &f) != 1)
			return 1;
	}
	t1 = sv_clock_gettime_ns(CLOCK_MONOTONIC);
	printf("ns_per_frame %.1f\n", n ? (double)(t1 - t0) / (double)n : 0.0);
	svsub_proc_destroy(p);
	return 0;
}

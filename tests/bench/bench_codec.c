// SPDX-License-Identifier: Apache-2.0
/*
 * Codec micro-benchmark driver. `bench_codec MODE N` runs MODE N times on a frame built in memory and prints
 * "ns_per_frame X" measured on CLOCK_MONOTONIC. Under callgrind, the difference between two values of N gives
 * instructions per frame with the set-up cost removed (tests/bench/codec.bench does that).
 * Modes: decode_92le (9-2LE, VLAN, 1 ASDU, every field and all 8 values and qualities read, through the
 * shape-remembering sv_decoder as svsub uses it), decode_92le_full (the same through the stateless full
 * decoder, every frame walked), decode_8asdu / decode_8asdu_full (9-2LE 256 samples/cycle frame: 8 ASDUs),
 * memcpy (copy of the 9-2LE frame), encode_92le (template: smpCnt, 8 values and 8 qualities patched).
 * Two frames that differ in smpCnt and values alternate, as consecutive frames of a stream do.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sv_codec.h"

static struct sv_view view;
static struct sv_decoder *dec;
static uint8_t frame92[2][256], frame8[2][1024];
static int len92, len8;
static volatile uint64_t sink;

static void build(uint8_t *buf, int *len, unsigned nasdu, unsigned variant)
{
	static const uint8_t dst[6] = { 0x01, 0x0c, 0xcd, 0x04, 0x00, 0x00 }, src[6] = { 0x20, 0xb7, 0xc0, 0, 0xb8, 0x31 };
	static uint8_t data[8][64];
	struct sv_view v;

	memset(&v, 0, sizeof(v));
	v.dst = dst;
	v.src = src;
	v.vlan = true;
	v.vlan_pcp = 4;
	v.appid = 0x4000;
	v.noASDU = (uint16_t)nasdu;
	for (unsigned i = 0; i < nasdu; i++) {
		for (unsigned k = 0; k < 64; k++)
			data[i][k] = (uint8_t)(k * 13 + i + variant * 7);
		v.asdu[i].svID = (const uint8_t *)"AA1J1Q01A1MU0102";
		v.asdu[i].svID_len = 16;
		v.asdu[i].smpCnt = (uint16_t)(i + variant * nasdu);
		v.asdu[i].confRev = 1;
		v.asdu[i].smpSynch = 2;
		v.asdu[i].smpRate = nasdu == 1 ? 80 : 256;
		v.asdu[i].present = SV_HAS_SMPRATE;
		v.asdu[i].seqData = data[i];
		v.asdu[i].seqData_len = 64;
	}
	*len = sv_codec_encode(&v, buf, 1024);
	if (*len < 0)
		exit(1);
}

/* Reads what an application reads: identity, counters, and every value and quality, into host-order arrays
 * (the arrays are made visible to the compiler as used, so nothing is optimised away). */
static uint64_t consume(const struct sv_view *v)
{
	static int32_t values[SV_MAX_ASDU][8];
	static uint32_t quality[SV_MAX_ASDU][8];
	uint64_t s = v->appid + v->vlan_pcp + v->simulated;

	for (unsigned i = 0; i < v->noASDU; i++) {
		const struct sv_asdu *a = &v->asdu[i];

		s += a->smpCnt + a->confRev + a->smpSynch + a->svID_len + a->svID[0];
		s += sv_asdu_read_channels(a, values[i], quality[i], 8);
	}
	__asm__ volatile("" : : "r"(values), "r"(quality) : "memory");
	return s;
}

int main(int argc, char **argv)
{
	static struct sv_template t;
	static uint8_t copy[256];
	struct timespec t0, t1;
	const char *mode;
	long n;

	if (argc != 3) {
		fprintf(stderr, "usage: bench_codec decode_92le|decode_8asdu|memcpy|encode_92le N\n");
		return 2;
	}
	mode = argv[1];
	n = strtol(argv[2], NULL, 10);
	build(frame92[0], &len92, 1, 0);
	build(frame92[1], &len92, 1, 1);
	build(frame8[0], &len8, 8, 0);
	build(frame8[1], &len8, 8, 1);
	if (sv_codec_decode(frame92[0], (size_t)len92, &view, NULL) || sv_template_init(&t, &view))
		return 1;
	if (sv_decoder_create(&dec))
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!strcmp(mode, "decode_92le")) {
		for (long i = 0; i < n; i++) {
			if (sv_decoder_decode(dec, frame92[i & 1], (size_t)len92, &view, NULL))
				return 1;
			sink += consume(&view);
		}
	} else if (!strcmp(mode, "decode_92le_full")) {
		for (long i = 0; i < n; i++) {
			if (sv_codec_decode(frame92[i & 1], (size_t)len92, &view, NULL))
				return 1;
			sink += consume(&view);
		}
	} else if (!strcmp(mode, "decode_8asdu")) {
		for (long i = 0; i < n; i++) {
			if (sv_decoder_decode(dec, frame8[i & 1], (size_t)len8, &view, NULL))
				return 1;
			sink += consume(&view);
		}
	} else if (!strcmp(mode, "decode_8asdu_full")) {
		for (long i = 0; i < n; i++) {
			if (sv_codec_decode(frame8[i & 1], (size_t)len8, &view, NULL))
				return 1;
			sink += consume(&view);
		}
	} else if (!strcmp(mode, "memcpy")) {
		for (long i = 0; i < n; i++) {
			memcpy(copy, frame92[i & 1], (size_t)len92);
			__asm__ volatile("" : : "r"(copy) : "memory");
			sink += copy[i & 63];
		}
	} else if (!strcmp(mode, "encode_92le")) {
		int32_t vals[8] = { 1, -2, 3, -4, 5, -6, 7, -8 };
		uint32_t q[8] = { 0 };

		for (long i = 0; i < n; i++) {
			vals[0] = (int32_t)i;
			sv_template_set_smpcnt(&t, 0, (uint16_t)(i % 4000));
			sv_template_set_values(&t, 0, vals, q);
			__asm__ volatile("" : : "r"(t.frame) : "memory");
		}
		sink += t.frame[40];
	} else {
		fprintf(stderr, "bench_codec: unknown mode '%s'\n", mode);
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("ns_per_frame %.2f\n", ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / (double)n);
	return 0;
}

// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target for the shape-remembering decoder: whatever frames it has seen before, its result on a
 * frame must be exactly sv_codec_decode()'s. The input is a frame; the decoder learns it, then sees it again
 * and copies with a few octets changed at positions derived from the input's hash (inside and outside the
 * fields that change per frame), and each result is compared field by field with the stateless decoder's.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sv_codec.h"

static struct sv_view a, b;
static struct sv_decoder *dec;
static uint8_t buf[4096];

static void check(const uint8_t *f, size_t n)
{
	struct sv_codec_error e1 = { 0 }, e2 = { 0 };
	int r1 = sv_decoder_decode(dec, f, n, &a, &e1);
	int r2 = sv_codec_decode(f, n, &b, &e2);

	if (r1 != r2)
		abort();
	if (r1)
		return;
	if (!sv_codec_view_equal(&a, &b))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t h = 2166136261u; /* FNV-1a of the input steers the mutations */
	size_t n = size;

	if (!dec && sv_decoder_create(&dec))
		abort();
	if (!size || size > sizeof(buf))
		return 0;
	for (size_t i = 0; i < size; i++)
		h = (h ^ data[i]) * 16777619u;
	memcpy(buf, data, n);
	check(buf, n); /* learn (or not) */
	check(buf, n); /* the remembered shape */
	for (unsigned k = 0; k <= (h & 3); k++) {
		h = h * 1103515245u + 12345u;
		buf[(h >> 8) % n] ^= (uint8_t)((h >> 24) | 1);
		check(buf, n);
		/* and back: the shape learned from the original must still match it */
		memcpy(buf, data, n);
		check(buf, n);
	}
	return 0;
}

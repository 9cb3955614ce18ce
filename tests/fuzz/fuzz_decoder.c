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

static void same_view(const struct sv_view *x, const struct sv_view *y)
{
#define SAME(f) if (x->f != y->f) abort()
	SAME(frame); SAME(frame_len); SAME(dst); SAME(src); SAME(vlan); SAME(vlan_pcp); SAME(vlan_dei); SAME(vlan_id);
	SAME(appid); SAME(length); SAME(reserved1); SAME(reserved2); SAME(simulated); SAME(noASDU); SAME(security);
	SAME(security_len); SAME(security_tag); SAME(sv_offset); SAME(pdu_end); SAME(trailer_len); SAME(redundancy);
	SAME(red_lan); SAME(red_seq); SAME(red_lsdu_size);
	for (unsigned i = 0; i < x->noASDU; i++) {
		SAME(asdu[i].svID); SAME(asdu[i].svID_len); SAME(asdu[i].datSet); SAME(asdu[i].datSet_len);
		SAME(asdu[i].smpCnt); SAME(asdu[i].confRev); SAME(asdu[i].refrTm); SAME(asdu[i].smpSynch);
		SAME(asdu[i].seqData); SAME(asdu[i].seqData_len); SAME(asdu[i].gmIdentity); SAME(asdu[i].present);
		SAME(asdu[i].offset);
		if (x->asdu[i].present & SV_HAS_SMPRATE)
			SAME(asdu[i].smpRate);
		if (x->asdu[i].present & SV_HAS_SMPMOD)
			SAME(asdu[i].smpMod);
	}
#undef SAME
}

static void check(const uint8_t *f, size_t n)
{
	struct sv_codec_error e1 = { 0 }, e2 = { 0 };
	int r1 = sv_decoder_decode(dec, f, n, &a, &e1);
	int r2 = sv_codec_decode(f, n, &b, &e2);

	if (r1 != r2)
		abort();
	if (r1)
		return;
	same_view(&a, &b);
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

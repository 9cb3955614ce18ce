// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target for the SV decoder. Properties checked beyond "no crash, no UB":
 *  - a failed decode names a known error and an offset inside (or just past) the frame;
 *  - a decoded view only points inside the input, and reading every field and value stays inside it;
 *  - decode -> encode -> decode gives the same view (the encoder writes what the decoder read);
 *  - a dataset description that fits seqData (9-2LE, and one whose member types the first octets choose)
 *    reads every member inside seqData: it is copied to a buffer of exactly its length first, so that an
 *    offset past it is an ASan report.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sv_codec.h"
#include "sv_dataset.h"

static struct sv_view v1, v2;
static uint8_t out[16384];

static void check_inside(const uint8_t *p, size_t n, const uint8_t *base, size_t len)
{
	if (n && (p < base || p + n > base + len))
		abort();
}

static uint64_t read_all(const struct sv_dataset *ds, const uint8_t *seq)
{
	struct sv_da_value v;
	uint64_t sum = 0; /* unsigned: a sink that may wrap */
	double d = 0;

	for (unsigned m = 0; m < ds->nmembers; m++) {
		sv_dataset_member(ds, seq, m, &v);
		sum += v.u;
	}
	for (unsigned c = 0; c < ds->nvalues; c++) {
		d += sv_dataset_channel(ds, seq, c);
		sum += sv_dataset_channel_quality(ds, seq, c);
	}
	for (unsigned k = 0; k < ds->nquality; k++)
		sum += sv_dataset_quality(ds, seq, k);
	return sum + (d != d); /* NaN is a value like another */
}

/* Members whose types the octets of seqData choose, until they fill it; the dataset fits only when the
 * widths add up exactly. */
static uint64_t fuzz_dataset(const uint8_t *seqData, uint16_t len)
{
	static struct sv_dataset ds;
	uint8_t *copy = malloc(len ? len : 1);
	uint64_t sum = 0;

	if (!copy)
		abort();
	memcpy(copy, seqData, len);
	if (sv_dataset_fits(sv_dataset_92le(), len))
		sum += read_all(sv_dataset_92le(), copy);
	sv_dataset_init(&ds, "fuzz");
	for (unsigned i = 0; ds.len < len && i < len; i++)
		if (sv_dataset_add(&ds, "m", (enum sv_da_type)(copy[i] % SV_DA__COUNT), 1))
			break;
	if (sv_dataset_fits(&ds, len)) {
		if (ds.len != len)
			abort();
		sum += read_all(&ds, copy);
	}
	free(copy);
	return sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sv_codec_error e;
	volatile int64_t sink = 0;
	int n;

	if (sv_codec_decode(data, size, &v1, &e)) {
		if (e.code <= SV_OK || e.code >= SV_E__COUNT || e.offset > size)
			abort();
		return 0;
	}
	for (unsigned i = 0; i < v1.noASDU; i++) {
		const struct sv_asdu *a = &v1.asdu[i];

		check_inside(a->svID, a->svID_len, data, size);
		check_inside(a->seqData, a->seqData_len, data, size);
		if (a->present & SV_HAS_DATSET)
			check_inside(a->datSet, a->datSet_len, data, size);
		if (a->present & SV_HAS_REFRTM)
			check_inside(a->refrTm, 8, data, size);
		if (a->present & SV_HAS_GMIDENTITY)
			check_inside(a->gmIdentity, 8, data, size);
		for (unsigned c = 0; c < sv_asdu_nchannels(a); c++)
			sink += sv_asdu_value(a, c) + sv_asdu_quality(a, c);
		sink += (int64_t)(fuzz_dataset(a->seqData, a->seqData_len) & 0xffff);
	}
	if (v1.pdu_end > size || v1.pdu_end + v1.trailer_len != size)
		abort();
	n = sv_codec_encode(&v1, out, sizeof(out));
	if (n < 0)
		abort(); /* everything the decoder accepts must be encodable */
	if (sv_codec_decode(out, (size_t)n, &v2, &e))
		abort();
	if (v2.noASDU != v1.noASDU || v2.appid != v1.appid || v2.simulated != v1.simulated ||
	    v2.security_len != v1.security_len)
		abort();
	for (unsigned i = 0; i < v1.noASDU; i++) {
		const struct sv_asdu *a = &v1.asdu[i], *b = &v2.asdu[i];

		if (a->smpCnt != b->smpCnt || a->confRev != b->confRev || a->smpSynch != b->smpSynch ||
		    a->present != b->present || a->seqData_len != b->seqData_len || a->svID_len != b->svID_len ||
		    memcmp(a->svID, b->svID, a->svID_len) || memcmp(a->seqData, b->seqData, a->seqData_len))
			abort();
	}
	(void)sink;
	return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* Record files as bytes for the record tests (test_record.c, test_record_soak.c): a file read whole and written
 * back, little-endian words, a record's kind and size as the writer stamps them, a block resealed (CRC-32C)
 * after a test changed it. Include after cmocka.h. */
#ifndef UNIT_REC_H
#define UNIT_REC_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sv_record.h"

static inline uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static inline void wr32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

/* Expected on-disk image of a record: the writer sets kind and size. */
static inline void stamp(void *rec, unsigned kind, unsigned size)
{
	struct sv_rec_hdr h;

	memcpy(&h, rec, sizeof(h));
	h.kind = (uint8_t)kind;
	h.size = (uint16_t)size;
	memcpy(rec, &h, sizeof(h));
}

/* The file at @path in a malloc'd buffer (one octet more), its length in *@len. */
static inline uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static inline void spill(const char *path, const uint8_t *buf, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* Re-seals the block starting at @blk after the test changed its content. */
static inline void reseal(uint8_t *blk)
{
	uint32_t len = rd32(blk + 4);

	wr32(blk + 12, sv_crc32c(sv_crc32c(0, blk, 12), blk + 16, len));
}

/* Re-seals the block of the file image @buf that holds file offset @at. */
static inline void reseal_at(uint8_t *buf, size_t len, uint64_t at)
{
	size_t b = SV_REC_HEADER_SIZE;

	for (;;) {
		assert_true(b + 16 <= len);
		if (at < b + 16 + rd32(buf + b + 4)) {
			reseal(buf + b);
			return;
		}
		b += 16 + rd32(buf + b + 4);
	}
}

#endif /* UNIT_REC_H */

// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target for the COMTRADE reader (common/sv_comtrade.c, what svreport's plot reads): the input is
 * split at its first 0xFF octet into a .cfg text and .dat bytes; anything parses or fails with a message,
 * never reads past either buffer, and a parsed record has no more rows than it announced.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sv_comtrade.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *sep = memchr(data, 0xff, size);
	size_t cfg_len = sep ? (size_t)(sep - data) : size;
	struct sv_ct_data d;
	char msg[256];
	char *cfg = malloc(cfg_len + 1);

	if (!cfg)
		return 0;
	memcpy(cfg, data, cfg_len);
	cfg[cfg_len] = '\0';
	if (sv_ct_parse(&d, cfg, cfg_len, sep ? sep + 1 : NULL, sep ? size - cfg_len - 1 : 0, msg, sizeof(msg)) == 0) {
		if (d.n > d.r.nsamples)
			abort();
		sv_ct_data_free(&d);
	} else if (!msg[0]) {
		abort();
	}
	free(cfg);
	return 0;
}

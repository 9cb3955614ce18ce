// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target for the SCL importer (common/sv_scl.c) over XML bytes: any input loads or fails with a
 * file:line error, never a crash, a leak or an unbounded read; a loaded file's results are consistent (every
 * subscription names control blocks of the file, every diagnostic names one or none).
 * Seeds: the real SCL files of shared/scl.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sv_scl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sv_scl *s = NULL;
	struct sv_scl_error err;
	char buf[1024];

	if (sv_scl_load_mem(&s, data, size, "fuzz.scd", &err)) {
		if (s || !err.text[0])
			abort();
		return 0;
	}
	for (unsigned i = 0; i < s->nsub; i++)
		for (unsigned k = 0; k < s->sub[i].ncand; k++)
			if (s->sub[i].cand[k] >= s->ncb)
				abort();
	for (unsigned i = 0; i < s->ndiag; i++) {
		if (s->diag[i].cb >= (int)s->ncb)
			abort();
		sv_scl_diag_format(s, &s->diag[i], buf, sizeof(buf));
	}
	for (unsigned i = 0; i < s->ncb; i++)
		if (s->cb[i].ds.len > 65535 || s->cb[i].ds.nmembers > SV_DS_MAX_MEMBERS)
			abort();
	sv_scl_free(s);
	return 0;
}

// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target for svreport's engine and outputs over one record file (svreport reads files copied from
 * other hosts): whatever records the reader hands out (every kind, the soak kinds with any counters, times,
 * guests, windows, clock steps and why-late records), the merged pass, the verdict and the three outputs run
 * without crashing, leaking or reading out of bounds, and the soak's tables stay within their fixed sizes.
 * Seeds: the record reader's (fuzz_record).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "svreport.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct svr_eval e;
	struct svr_budgets b;
	const struct svr_soak *k;
	struct svr *r = NULL;
	char path[64];
	FILE *out;
	int fd = memfd_create("fuzz_report", 0);

	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size || svr_create(&r, NULL)) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (!svr_add_file(r, path, NULL)) {
		(void)svr_run(r);
		svr_budgets_default(&b);
		svr_evaluate(r, &b, &e);
		k = svr_soak_get(r);
		if (k && (k->nhops > SVR_SOAK_HOPS || k->npts > SVR_SOAK_POINTS || k->nhours > SVR_SOAK_HOURS ||
			  k->nworst > SVR_SOAK_WORST || k->nevents > SVR_SOAK_EVENTS))
			abort();
		out = fopen("/dev/null", "w");
		if (out) {
			svr_write_text(r, &b, &e, NULL, out);
			svr_write_json(r, &b, &e, NULL, out);
			svr_write_html(r, &b, &e, NULL, NULL, out);
			fclose(out);
		}
	}
	svr_destroy(r);
	close(fd);
	return 0;
}

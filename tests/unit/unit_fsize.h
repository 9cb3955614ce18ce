/* SPDX-License-Identifier: Apache-2.0 */
/* A full disk for the unit tests without privileges: RLIMIT_FSIZE makes write(2) past @bytes fail with EFBIG
 * (SIGXFSZ ignored, as the tools do), which the record writer counts as it counts ENOSPC; RLIM_INFINITY
 * gives the room back. tests/fault/ fills a real tmpfs. */
#ifndef UNIT_FSIZE_H
#define UNIT_FSIZE_H

#include <signal.h>
#include <sys/resource.h>

static inline void fsize_limit(rlim_t bytes)
{
	struct rlimit rl;

	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &rl), 0);
	rl.rlim_cur = bytes;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &rl), 0);
}

#endif /* UNIT_FSIZE_H */

/* SPDX-License-Identifier: Apache-2.0 */
/* CHECK(cond, printf-args): a failed check is printed (FAIL file:line: ...) and counted in `failures`; the test
 * goes on, so one run lists every check that broke. Header-only, for the C programs of tests/net. */
#ifndef SVKIT_TEST_CHECK_H
#define SVKIT_TEST_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(cond, ...)                                                                                 \
	do {                                                                                             \
		if (!(cond)) {                                                                           \
			failures++;                                                                      \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                             \
			fprintf(stderr, __VA_ARGS__);                                                    \
			fputc('\n', stderr);                                                             \
		}                                                                                        \
	} while (0)

#endif /* SVKIT_TEST_CHECK_H */

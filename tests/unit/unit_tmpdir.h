/* SPDX-License-Identifier: Apache-2.0 */
/* A temporary folder for a test program's files: UNIT_TMPDIR("name") defines `dir` and the group setup and
 * teardown (cmocka_run_group_tests(tests, setup, teardown)) that make /tmp/name-XXXXXX and remove it. */
#ifndef UNIT_TMPDIR_H
#define UNIT_TMPDIR_H

#include <stdio.h>
#include <stdlib.h>

#define UNIT_TMPDIR(name)                                                        \
	static char dir[64];                                                     \
                                                                                 \
	static int setup(void **state)                                           \
	{                                                                        \
		(void)state;                                                     \
		snprintf(dir, sizeof(dir), "/tmp/" name "-XXXXXX");              \
		return mkdtemp(dir) ? 0 : -1;                                    \
	}                                                                        \
                                                                                 \
	static int teardown(void **state)                                        \
	{                                                                        \
		char cmd[128];                                                   \
                                                                                 \
		(void)state;                                                     \
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);                  \
		return system(cmd) == 0 ? 0 : -1;                                \
	}

#endif /* UNIT_TMPDIR_H */

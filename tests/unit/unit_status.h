/* SPDX-License-Identifier: Apache-2.0 */
/* The memory tests' figures from /proc/self/status ("VmRSS", "VmHWM"): kiB, or -1 when absent. */
#ifndef UNIT_STATUS_H
#define UNIT_STATUS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline long status_kib(const char *key)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	long v = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)) && line[strlen(key)] == ':') {
			v = strtol(line + strlen(key) + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

#endif /* UNIT_STATUS_H */

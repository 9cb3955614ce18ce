// SPDX-License-Identifier: Apache-2.0
/*
 * cyclictest's output as the host's real-time baseline. Two forms are read:
 *  - the histogram file of `cyclictest -q -h N --histfile FILE`: rows "BUCKET C0 C1 ..." (one column per
 *    thread, bucket = microseconds) and "# Min Latencies: a b", "# Avg Latencies:", "# Max Latencies:",
 *    "# Histogram Overflows:", "# Total:";
 *  - its saved terminal summary: "T: 0 ( 1234) P:95 I:250 C:  40000 Min:      3 Act:    5 Avg:    4
 *    Max:      40".
 * Lines are read whole, whatever their length: after a long run "# Thread N:" lists every overflow's cycle
 * number on one line (20 minutes of the lab: 19 kB).
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "svreport.h"

/* Strict unsigned decimal list after a label: returns how many numbers were read. */
static unsigned read_list(const char *s, int64_t *v, unsigned max, bool *bad)
{
	unsigned n = 0;

	for (;;) {
		char *end;
		unsigned long long x;

		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s || *s == '\n' || *s == '\r')
			break;
		if (!isdigit((unsigned char)*s)) {
			*bad = true;
			break;
		}
		errno = 0;
		x = strtoull(s, &end, 10);
		if (errno || x > INT64_MAX) {
			*bad = true;
			break;
		}
		if (n < max)
			v[n] = (int64_t)x;
		n++;
		s = end;
	}
	return n;
}

/* "Key:  123" inside a summary line. */
static bool field_after(const char *line, const char *key, int64_t *out)
{
	const char *p = strstr(line, key);
	char *end;
	unsigned long long x;

	if (!p)
		return false;
	p += strlen(key);
	while (*p == ' ')
		p++;
	errno = 0;
	x = strtoull(p, &end, 10);
	if (errno || end == p || x > INT64_MAX)
		return false;
	*out = (int64_t)x;
	return true;
}

int svr_cyclic_load(struct svr_cyclic *c, const char *path, char *errbuf, size_t errlen)
{
	char *line = NULL;
	size_t cap = 0;
	unsigned lineno = 0;
	int64_t v[64];
	bool bad = false, have_summary = false;
	int64_t sum_avg = 0, cnt_avg = 0;
	FILE *f = fopen(path, "re");

	memset(c, 0, sizeof(*c));
	if (!f) {
		snprintf(errbuf, errlen, "%s: %s", path, strerror(errno));
		return -errno;
	}
	snprintf(c->path, sizeof(c->path), "%s", path);
	c->min_us = INT64_MAX;
	while (getline(&line, &cap, f) > 0) {
		unsigned n;

		lineno++;
		if (line[0] == '#') {
			const char *labels[] = {"# Min Latencies:", "# Avg Latencies:", "# Max Latencies:",
						"# Histogram Overflows:", "# Total:"};

			for (unsigned k = 0; k < 5; k++) {
				size_t l = strlen(labels[k]);

				if (strncmp(line, labels[k], l))
					continue;
				n = read_list(line + l, v, 64, &bad);
				if (bad)
					goto bad_line;
				for (unsigned i = 0; i < n && i < 64; i++) {
					if (k == 0 && v[i] < c->min_us)
						c->min_us = v[i];
					if (k == 1) {
						sum_avg += v[i];
						cnt_avg++;
					}
					if (k == 2 && v[i] > c->max_us)
						c->max_us = v[i];
					if (k == 3)
						c->overflows += (uint64_t)v[i];
				}
				if (k == 0 && n > c->threads)
					c->threads = n;
				have_summary = true;
			}
			continue;
		}
		if (!strncmp(line, "T:", 2)) {
			int64_t mn, av, mx, cnt;

			/* terminal summary line of one thread */
			if (!field_after(line, "Min:", &mn) || !field_after(line, "Max:", &mx))
				goto bad_line;
			if (mn < c->min_us)
				c->min_us = mn;
			if (mx > c->max_us)
				c->max_us = mx;
			if (field_after(line, "C:", &cnt))
				c->total += (uint64_t)cnt;
			if (field_after(line, "Avg:", &av)) {
				sum_avg += av;
				cnt_avg++;
			}
			c->threads++;
			have_summary = true;
			continue;
		}
		if (!isdigit((unsigned char)line[0]))
			continue;	/* other chatter ("Policy: ...", blank lines) */
		n = read_list(line, v, 64, &bad);
		if (bad || n < 2)
			goto bad_line;
		if (v[0] >= SVR_CT_MAX_US)
			continue;
		for (unsigned i = 1; i < n && i < 64; i++)
			c->hist[v[0]] += (uint64_t)v[i];
		if ((unsigned)v[0] + 1 > c->hist_len)
			c->hist_len = (unsigned)v[0] + 1;
	}
	free(line);
	fclose(f);
	if (!have_summary && !c->hist_len) {
		snprintf(errbuf, errlen, "%s: no cyclictest histogram or summary found", path);
		return -EBADMSG;
	}
	if (c->hist_len && !c->total)
		for (unsigned i = 0; i < c->hist_len; i++)
			c->total += c->hist[i];
	if (c->min_us == INT64_MAX) {
		c->min_us = 0;
		for (unsigned i = 0; i < c->hist_len; i++)
			if (c->hist[i]) {
				c->min_us = i;
				break;
			}
	}
	if (cnt_avg)
		c->avg_us = sum_avg / cnt_avg;
	c->present = true;
	return 0;
bad_line:
	fclose(f);
	snprintf(errbuf, errlen, "%s:%u: not cyclictest output: %.60s", path, lineno, line);
	free(line);
	return -EBADMSG;
}

// SPDX-License-Identifier: Apache-2.0
/*
 * svreport's memory is bounded: reading 4x the records costs no more memory than reading 1x, once the
 * exact-percentile budget is spent (svreport.h: join window + histograms + time bins + the budget). The
 * record sets are synthetic lab runs (tests/bench/report_gen.h), longer than the join window; each
 * svreport run happens in a child process so its peak RSS (VmHWM) is its own. Timing and the
 * multi-gigabyte figures are in tests/bench/report.bench.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../bench/report_gen.h"
#include "svreport.h"
#include "unit_status.h"

#define RATE 4000u
#define FRAMES_1X (60u * RATE)	/* 60 s of one stream: 20x the 3 s join window */
#define EXACT_LIMIT 65536u	/* per-frame values kept: spent within the first seconds */

static char dir1[64], dir4[64];

struct result {
	long grown_kib;		/* VmHWM at the end - VmRSS before svr_create */
	uint64_t frames, events, exact_dropped;
	int err;
};

/* Runs the report over @dir in a child; returns what it measured. */
static struct result measure(const char *dir)
{
	struct result res = {.err = -1};
	int fds[2];
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		static const char *const files[] = {"pub.rec", "trace.rec", "g1.rec", "g2.rec"};
		static const char *const guests[] = {NULL, NULL, "g1", "g2"};
		struct svr_cfg cfg;
		struct svr *r = NULL;
		struct result out = {.err = 0};
		long before = status_kib("VmRSS");
		char path[128];

		svr_cfg_defaults(&cfg);
		cfg.exact_limit = EXACT_LIMIT;
		out.err = svr_create(&r, &cfg);
		for (unsigned i = 0; i < 4 && !out.err; i++) {
			snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
			out.err = svr_add_file(r, path, guests[i]);
		}
		if (!out.err)
			out.err = svr_run(r);
		if (!out.err) {
			struct svr_hop h;

			/* the results are computed too (sorting exact values is part of the cost) */
			for (unsigned g = 0; g < 2; g++)
				svr_hop_get(r, SV_POINT_T0, SV_POINT_T4, (int)g, -1, &h);
			out.frames = svr_totals(r)->frames;
			out.events = svr_totals(r)->events;
			out.exact_dropped = svr_totals(r)->exact_dropped;
			out.grown_kib = status_kib("VmHWM") - before;
		}
		if (write(fds[1], &out, sizeof(out)) != (ssize_t)sizeof(out))
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	assert_int_equal(read(fds[0], &res, sizeof(res)), (ssize_t)sizeof(res));
	close(fds[0]);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	return res;
}

static void gen(char *dir, uint64_t frames)
{
	struct rg_cfg c = {.dir = dir, .frames = frames, .streams = 1, .rate = RATE};
	uint64_t events;

	snprintf(dir, 64, "/tmp/test_report_memory.XXXXXX");
	assert_non_null(mkdtemp(dir));
	assert_int_equal(rg_generate(&c, &events), 0);
	assert_int_equal(events, frames * 6);
}

static void test_memory_flat(void **state)
{
	struct result a, b;

	(void)state;
	gen(dir1, FRAMES_1X);
	gen(dir4, 4 * FRAMES_1X);
	a = measure(dir1);
	b = measure(dir4);
	print_message("1x: %lu frames, %lu events, RSS grew %ld KiB; 4x: %lu frames, %lu events, RSS grew %ld KiB\n",
		      (unsigned long)a.frames, (unsigned long)a.events, a.grown_kib, (unsigned long)b.frames,
		      (unsigned long)b.events, b.grown_kib);
	assert_int_equal(a.err, 0);
	assert_int_equal(b.err, 0);
	/* everything was read and joined */
	assert_int_equal(a.frames, FRAMES_1X);
	assert_int_equal(b.frames, 4 * FRAMES_1X);
	assert_int_equal(b.events, 4 * a.events);
	/* the exact budget ran out in both: what is left must not grow with the input */
	assert_true(a.exact_dropped > 0);
	assert_true(b.exact_dropped > 0);
	assert_true(a.grown_kib > 0);
	/* 4x the input: at most 2 MiB or 10 % more peak memory (allocator noise), never 4x */
	assert_true(b.grown_kib <= a.grown_kib + (a.grown_kib / 10 > 2048 ? a.grown_kib / 10 : 2048));
}

static int teardown(void **state)
{
	char cmd[200];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", dir1[0] ? dir1 : "/nonexistent", dir4[0] ? dir4 : "/nonexistent");
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_memory_flat, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

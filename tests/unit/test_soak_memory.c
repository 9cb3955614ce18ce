// SPDX-License-Identifier: Apache-2.0
/*
 * Soak mode's memory is flat: svtrace's load (8 streams, 2 guests, 48 keys: tests/bench/soak_sim.h) through
 * sv_interval, sv_flight and the record writer for a simulated day, the first hour frame by frame, with a
 * late frame every 3 s and a fault every 15 s (windows opened, merged, refused all day), the record rotated
 * (two parts kept). Every 5 simulated minutes: the heap in use (mallinfo2: nothing allocated that is not
 * freed) must equal its value after the first 5 minutes, and the RSS stay within 5 % of it (the issue's
 * bound: everything is allocated and touched at open, so it does not move at all). The rate is 50 frames/s
 * per stream so the day runs in seconds; the allocations do not depend on the rate (tests/bench/soak.bench
 * runs 4000/s). The heap is read with glibc's thread cache off (GLIBC_TUNABLES, the test re-executes itself):
 * a freed chunk kept in it counts as in use, and the writer's rotation frees two small ones.
 */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../bench/soak_sim.h"
#include "unit_status.h"

#if defined(__SANITIZE_ADDRESS__)
/* libasan's (sanitizer/allocator_interface.h, which GCC 12 does not install) */
size_t __sanitizer_get_current_allocated_bytes(void);
/* ASan's allocator replaces glibc's: its own count of the heap in use; RSS is not checked, its quarantine of
 * freed memory (the stdio buffers of each reading) grows it by design */
static size_t heap_in_use(void)
{
	return __sanitizer_get_current_allocated_bytes();
}
#define RSS_CHECKED 0
#else
static size_t heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}
#define RSS_CHECKED 1
#endif

#define MARKS (24 * 12)

struct marks {
	size_t heap[MARKS + 1];
	long rss_kib[MARKS + 1];
	unsigned n;
};

static void at_mark(void *ctx, struct sv_record_writer *w, unsigned n)
{
	struct marks *m = ctx;

	(void)w;
	if (!n || n > MARKS)
		return;
	m->heap[n] = heap_in_use();
	m->rss_kib[n] = status_kib("VmRSS");
	m->n = n;
}

static void test_memory_flat_over_a_day(void **state)
{
	char dir[64], path[128], cmd[128];
	struct marks mk = { { 0 }, { 0 }, 0 };
	struct ss_cfg c = {
		.tool = SS_SVTRACE, .path = path, .streams = 8, .guests = 2, .rate = 50,
		.frames_ns = 3600 * SV_NSEC_PER_SEC, .fast_ns = 23 * 3600 * SV_NSEC_PER_SEC,
		.noise_ns = 3 * SV_NSEC_PER_SEC, .fault_ns = 15 * SV_NSEC_PER_SEC, .rotate_bytes = 8u << 20,
		.keep = 2, .at_mark = at_mark, .mark_ns = 300 * SV_NSEC_PER_SEC, .ctx = &mk,
	};
	struct ss_result r;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/test_soak_memory.XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/trace.rec", dir);
	status_kib("VmRSS"); /* glibc keeps ~1.5 KiB after the first fopen: the measurement's own, not the run's */
	assert_int_equal(ss_run(&c, &r), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(mk.n, MARKS);
	for (unsigned i = 2; i <= mk.n; i++) {
		if (mk.heap[i] != mk.heap[1])
			fail_msg("heap in use %zu octets after %u min, %zu after 5 min", mk.heap[i], i * 5, mk.heap[1]);
		if (RSS_CHECKED && mk.rss_kib[i] * 100 > mk.rss_kib[1] * 105)
			fail_msg("RSS %ld KiB after %u min, %ld KiB after 5 min (over 5 %%)", mk.rss_kib[i], i * 5,
				 mk.rss_kib[1]);
	}
	print_message("heap %zu octets, RSS %ld KiB after 5 min and %ld KiB after 24 h; %zu KiB at open "
		      "(intervals %zu, flight %zu); %" PRIu64 " windows kept, %u parts\n",
		      mk.heap[1], mk.rss_kib[1], mk.rss_kib[mk.n], (r.iv.memory + r.fl.memory) >> 10,
		      r.iv.memory, r.fl.memory, r.fl.windows, r.rec.parts);
	/* the day did what a soak does: intervals, windows, refusals, rotations */
	assert_int_equal(r.iv.intervals, 8640);
	assert_true(r.fl.windows >= 5);
	assert_true(r.fl.dropped[SV_WINDOW_LATENCY] > 1000);
	assert_true(r.rec.parts >= 3);
	assert_false(sv_record_stats_incomplete(&r.rec));
}

int main(int argc, char **argv)
{
	const char *tun = getenv("GLIBC_TUNABLES");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_memory_flat_over_a_day),
	};

	(void)argc;
	if (!tun || !strstr(tun, "glibc.malloc.tcache_count=0")) {
		setenv("GLIBC_TUNABLES", "glibc.malloc.tcache_count=0", 1);
		execv("/proc/self/exe", argv);
		fprintf(stderr, "test_soak_memory: cannot re-execute itself: %s\n", strerror(errno));
		return 1;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}

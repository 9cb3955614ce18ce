// SPDX-License-Identifier: Apache-2.0
/* svtrace correlation (bpf/svtrace_corr.c): table-driven, no root, no BPF. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "svtrace.h"
#include "svtrace_corr.h"

#define US 1000LL
#define MS 1000000LL

/* One observation in a table: kind, port, stream name, smpCnt, time (us), reason / wait. */
struct step {
	enum svtrace_obs_kind kind;
	unsigned port;
	const char *svid;
	uint16_t smpcnt;
	int64_t t_us;
	uint32_t reason;
};

/* Expected per (port, hop) after the run. */
struct expect {
	unsigned port;
	enum svtrace_hop hop;
	uint64_t frames, missing, dropped, unwanted;
	int64_t min_ns, max_ns;	/* checked when frames > 0 */
};

struct tcase {
	const char *name;
	unsigned nports;
	int64_t late_us;
	struct step steps[16];
	struct expect exp[8];
	uint64_t late_total;
	uint64_t orphans;
};

static const struct tcase cases[] = {
	{ "one frame, two guests, all hops", 2, 0,
	  { { SVTRACE_OBS_INGRESS, 0, "MU01", 7, 100, 0 }, { SVTRACE_OBS_EGRESS, 1, "MU01", 7, 103, 0 },
	    { SVTRACE_OBS_EGRESS, 2, "MU01", 7, 104, 0 }, { SVTRACE_OBS_TAKEN, 2, "MU01", 7, 120, 0 },
	    { SVTRACE_OBS_TAKEN, 1, "MU01", 7, 110, 0 } },
	  { { 1, SVTRACE_HOP_T1_T2A, 1, 0, 0, 0, 3 * US, 3 * US }, { 1, SVTRACE_HOP_T2A_T2B, 1, 0, 0, 0, 7 * US, 7 * US },
	    { 1, SVTRACE_HOP_T1_T2B, 1, 0, 0, 0, 10 * US, 10 * US }, { 2, SVTRACE_HOP_T1_T2A, 1, 0, 0, 0, 4 * US, 4 * US },
	    { 2, SVTRACE_HOP_T1_T2B, 1, 0, 0, 0, 20 * US, 20 * US } }, 0, 0 },
	{ "per-VM copies kept apart: drop on port 2 only", 2, 0,
	  { { SVTRACE_OBS_INGRESS, 0, "MU01", 1, 0, 0 }, { SVTRACE_OBS_EGRESS, 1, "MU01", 1, 2, 0 },
	    { SVTRACE_OBS_EGRESS, 2, "MU01", 1, 3, 0 }, { SVTRACE_OBS_TAKEN, 1, "MU01", 1, 5, 0 },
	    { SVTRACE_OBS_DROP, 2, "MU01", 1, 6, 77 } },
	  { { 1, SVTRACE_HOP_T2A_T2B, 1, 0, 0, 0, 3 * US, 3 * US }, { 2, SVTRACE_HOP_T2A_T2B, 0, 0, 1, 0, 0, 0 },
	    { 2, SVTRACE_HOP_T1_T2B, 0, 0, 1, 0, 0, 0 }, { 2, SVTRACE_HOP_T1_T2A, 1, 0, 0, 0, 3 * US, 3 * US } }, 0, 0 },
	{ "never taken: missing at T2a-T2b after flush", 1, 0,
	  { { SVTRACE_OBS_INGRESS, 0, "A", 1, 0, 0 }, { SVTRACE_OBS_EGRESS, 1, "A", 1, 1, 0 } },
	  { { 1, SVTRACE_HOP_T1_T2A, 1, 0, 0, 0, 1 * US, 1 * US }, { 1, SVTRACE_HOP_T2A_T2B, 0, 1, 0, 0, 0, 0 } }, 0, 0 },
	{ "never sent: missing at T1-T2a", 1, 0,
	  { { SVTRACE_OBS_INGRESS, 0, "A", 1, 0, 0 } },
	  { { 1, SVTRACE_HOP_T1_T2A, 0, 1, 0, 0, 0, 0 }, { 1, SVTRACE_HOP_T1_T2B, 0, 1, 0, 0, 0, 0 } }, 0, 0 },
	{ "port drop before T2a is dropped at T1-T2a", 1, 0,
	  { { SVTRACE_OBS_INGRESS, 0, "A", 1, 0, 0 }, { SVTRACE_OBS_PORT_DROP, 1, "A", 1, 1, 5 } },
	  { { 1, SVTRACE_HOP_T1_T2A, 0, 0, 1, 0, 0, 0 } }, 0, 0 },
	{ "unwanted copy reached the guest: not a loss", 1, 0,
	  { { SVTRACE_OBS_INGRESS, 0, "A", 1, 0, 0 }, { SVTRACE_OBS_EGRESS, 1, "A", 1, 1, 0 },
	    { SVTRACE_OBS_UNWANTED, 1, "A", 1, 4, 0 } },
	  { { 1, SVTRACE_HOP_T2A_T2B, 1, 0, 0, 1, 3 * US, 3 * US } }, 0, 0 },
	{ "same smpCnt, different svID: two frames (no collision)", 1, 0,
	  { { SVTRACE_OBS_INGRESS, 0, "MU01", 9, 0, 0 }, { SVTRACE_OBS_INGRESS, 0, "MU02", 9, 1, 0 },
	    { SVTRACE_OBS_EGRESS, 1, "MU02", 9, 11, 0 }, { SVTRACE_OBS_EGRESS, 1, "MU01", 9, 2, 0 },
	    { SVTRACE_OBS_TAKEN, 1, "MU01", 9, 3, 0 }, { SVTRACE_OBS_TAKEN, 1, "MU02", 9, 31, 0 } },
	  { { 1, SVTRACE_HOP_T1_T2A, 2, 0, 0, 0, 2 * US, 10 * US }, { 1, SVTRACE_HOP_T1_T2B, 2, 0, 0, 0, 3 * US, 30 * US } },
	  0, 0 },
	{ "taken before egress event (ring order across CPUs)", 1, 0,
	  { { SVTRACE_OBS_INGRESS, 0, "A", 3, 0, 0 }, { SVTRACE_OBS_TAKEN, 1, "A", 3, 9, 0 },
	    { SVTRACE_OBS_EGRESS, 1, "A", 3, 5, 0 } },
	  { { 1, SVTRACE_HOP_T2A_T2B, 1, 0, 0, 0, 4 * US, 4 * US }, { 1, SVTRACE_HOP_T1_T2A, 1, 0, 0, 0, 5 * US, 5 * US } },
	  0, 0 },
	{ "next second's frame evicts the incomplete one", 1, 0,
	  { { SVTRACE_OBS_INGRESS, 0, "A", 0, 0, 0 }, { SVTRACE_OBS_EGRESS, 1, "A", 0, 1, 0 },
	    { SVTRACE_OBS_INGRESS, 0, "A", 0, 1000000, 0 }, { SVTRACE_OBS_EGRESS, 1, "A", 0, 1000001, 0 },
	    { SVTRACE_OBS_TAKEN, 1, "A", 0, 1000002, 0 } },
	  { { 1, SVTRACE_HOP_T1_T2A, 2, 0, 0, 0, 1 * US, 1 * US }, { 1, SVTRACE_HOP_T2A_T2B, 1, 1, 0, 0, 1 * US, 1 * US } },
	  0, 0 },
	{ "late frame over threshold is listed", 1, 500,
	  { { SVTRACE_OBS_INGRESS, 0, "A", 1, 0, 0 }, { SVTRACE_OBS_EGRESS, 1, "A", 1, 1, 0 },
	    { SVTRACE_OBS_TAKEN, 1, "A", 1, 900, 0 }, { SVTRACE_OBS_INGRESS, 0, "A", 2, 1000, 0 },
	    { SVTRACE_OBS_EGRESS, 1, "A", 2, 1001, 0 }, { SVTRACE_OBS_TAKEN, 1, "A", 2, 1100, 0 } },
	  { { 1, SVTRACE_HOP_T1_T2B, 2, 0, 0, 0, 100 * US, 900 * US } }, 1, 0 },
	{ "taken with no ingress entry is an orphan", 1, 0,
	  { { SVTRACE_OBS_TAKEN, 1, "A", 1, 5, 0 } }, { { 1, SVTRACE_HOP_T2A_T2B, 0, 0, 0, 0, 0, 0 } }, 0, 1 },
};

static void run_case(const struct tcase *tc)
{
	struct svtrace_corr_cfg cfg = { .nports = tc->nports, .capacity = 1024, .timeout_ns = 2000 * MS,
					.late_ns = tc->late_us * US, .late_max = 4, .max_streams = 8 };
	struct svtrace_corr *c;
	const struct svtrace_late *late;
	unsigned nlate;

	assert_int_equal(svtrace_corr_new(&c, &cfg), 0);
	for (unsigned i = 0; i < 16 && tc->steps[i].kind; i++) {
		const struct step *s = &tc->steps[i];
		struct svtrace_obs o = { .kind = s->kind, .port = s->port, .appid = 0x4000, .smpcnt = s->smpcnt,
					 .svid = (const uint8_t *)s->svid, .svid_len = strlen(s->svid),
					 .t_mono_ns = s->t_us * US, .reason = s->reason, .feeder_comm = "napi/x",
					 .holder_comm = "hog", .holder_pid = 42, .holder_policy = 1,
					 .holder_prio = 50, .wait_ns = 800 * US };

		assert_int_equal(svtrace_corr_add(c, &o), 0);
	}
	svtrace_corr_flush(c);
	assert_int_equal(svtrace_corr_live(c), 0);
	for (unsigned i = 0; i < 8 && tc->exp[i].port; i++) {
		const struct expect *e = &tc->exp[i];
		const struct svtrace_hop_stats *h = svtrace_corr_hop(c, e->port, e->hop);

		print_message("  %s: port %u hop %d\n", tc->name, e->port, e->hop);
		assert_non_null(h);
		assert_int_equal(h->frames, e->frames);
		assert_int_equal(h->missing, e->missing);
		assert_int_equal(h->dropped, e->dropped);
		assert_int_equal(h->unwanted, e->unwanted);
		assert_int_equal(h->lat.count, e->frames);
		if (e->frames) {
			assert_int_equal(h->lat.min, e->min_ns);
			assert_int_equal(h->lat.max, e->max_ns);
		}
	}
	assert_int_equal(svtrace_corr_counters(c)->late_total, tc->late_total);
	assert_int_equal(svtrace_corr_counters(c)->orphans, tc->orphans);
	late = svtrace_corr_late(c, &nlate);
	assert_int_equal(nlate, tc->late_total);
	if (nlate) {
		assert_string_equal(late[0].holder_comm, "hog");
		assert_string_equal(late[0].feeder_comm, "napi/x");
		assert_int_equal(late[0].holder_prio, 50);
		assert_int_equal(late[0].hop, SVTRACE_HOP_T1_T2B);
	}
	svtrace_corr_free(c);
}

static void test_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(&cases[i]);
}

/* Days of running: the table never grows; what times out is missing; drops keep their reason. */
static void test_bounded_and_timeout(void **state)
{
	struct svtrace_corr_cfg cfg = { .nports = 1, .capacity = 1024, .timeout_ns = 100 * MS, .late_ns = 0,
					.max_streams = 4 };
	struct svtrace_corr *c;
	const struct svtrace_hop_stats *h;
	const struct svtrace_reason_count *rc;
	unsigned nr;
	int64_t t = 0;

	(void)state;
	assert_int_equal(svtrace_corr_new(&c, &cfg), 0);
	for (uint32_t k = 0; k < 100000; k++) {
		struct svtrace_obs o = { .kind = SVTRACE_OBS_INGRESS, .appid = 1, .smpcnt = (uint16_t)(k % 4000),
					 .svid = (const uint8_t *)"S", .svid_len = 1 };

		t += 250 * US;
		o.t_mono_ns = t;
		assert_int_equal(svtrace_corr_add(c, &o), 0);
		o.kind = SVTRACE_OBS_EGRESS;
		o.port = 1;
		o.t_mono_ns = t + 5 * US;
		assert_int_equal(svtrace_corr_add(c, &o), 0);
		if (k % 10 == 0) {		/* 10 % never taken */
		} else if (k % 10 == 1) {	/* 10 % dropped with reason 6 */
			o.kind = SVTRACE_OBS_DROP;
			o.reason = 6;
			assert_int_equal(svtrace_corr_add(c, &o), 0);
		} else {
			o.kind = SVTRACE_OBS_TAKEN;
			o.t_mono_ns = t + 20 * US;
			assert_int_equal(svtrace_corr_add(c, &o), 0);
		}
		if (k % 400 == 0)
			svtrace_corr_expire(c, t);
		assert_true(svtrace_corr_live(c) <= 1024);
	}
	svtrace_corr_flush(c);
	h = svtrace_corr_hop(c, 1, SVTRACE_HOP_T2A_T2B);
	assert_int_equal(h->frames, 80000);
	assert_int_equal(h->missing, 10000);
	assert_int_equal(h->dropped, 10000);
	assert_int_equal(h->lat.min, 15 * US);
	h = svtrace_corr_hop(c, 1, SVTRACE_HOP_T1_T2A);
	assert_int_equal(h->frames, 100000);
	rc = svtrace_corr_reasons(c, 1, &nr);
	assert_int_equal(nr, 1);
	assert_int_equal(rc[0].reason, 6);
	assert_int_equal(rc[0].count, 10000);
	assert_true(svtrace_corr_counters(c)->evicted_timeout > 0);
	svtrace_corr_free(c);
}

/* A bad port and a full stream table are counted, not crashes; invalid configs are refused. */
static void test_errors(void **state)
{
	struct svtrace_corr_cfg cfg = { .nports = 2, .capacity = 64, .timeout_ns = MS, .max_streams = 1 };
	struct svtrace_corr *c;
	struct svtrace_obs o = { .kind = SVTRACE_OBS_EGRESS, .port = 3, .svid = (const uint8_t *)"A", .svid_len = 1 };

	(void)state;
	assert_int_equal(svtrace_corr_new(&c, &cfg), 0);
	assert_int_equal(svtrace_corr_add(c, &o), -EINVAL);
	o.kind = SVTRACE_OBS_INGRESS;
	o.port = 0;
	assert_int_equal(svtrace_corr_add(c, &o), 0);
	o.svid = (const uint8_t *)"B";
	assert_int_equal(svtrace_corr_add(c, &o), -ENOSPC);
	assert_int_equal(svtrace_corr_counters(c)->streams_overflow, 1);
	assert_int_equal(svtrace_corr_counters(c)->bad_port, 1);
	assert_int_equal(svtrace_corr_stream_find(c, 0, (const uint8_t *)"A", 1), 0);
	assert_int_equal(svtrace_corr_stream_find(c, 0, (const uint8_t *)"B", 1), -ENOENT);
	svtrace_corr_free(c);
	cfg.nports = 0;
	assert_int_equal(svtrace_corr_new(&c, &cfg), -EINVAL);
	cfg.nports = SVTRACE_CORR_MAX_PORTS;
	assert_int_equal(svtrace_corr_new(&c, &cfg), -EINVAL);
}

/* The late list keeps the worst frames when full. */
static void test_late_keeps_worst(void **state)
{
	struct svtrace_corr_cfg cfg = { .nports = 1, .capacity = 256, .timeout_ns = 10000 * MS, .late_ns = 10 * US,
					.late_max = 3, .max_streams = 2 };
	struct svtrace_corr *c;
	const struct svtrace_late *l;
	unsigned n;
	const int64_t lat_us[] = { 50, 20, 90, 30, 70, 11 };

	(void)state;
	assert_int_equal(svtrace_corr_new(&c, &cfg), 0);
	for (unsigned k = 0; k < 6; k++) {
		struct svtrace_obs o = { .kind = SVTRACE_OBS_INGRESS, .smpcnt = (uint16_t)k, .svid = (const uint8_t *)"A",
					 .svid_len = 1, .t_mono_ns = k * MS };

		svtrace_corr_add(c, &o);
		o.kind = SVTRACE_OBS_EGRESS;
		o.port = 1;
		svtrace_corr_add(c, &o);
		o.kind = SVTRACE_OBS_TAKEN;
		o.t_mono_ns = k * MS + lat_us[k] * US;
		svtrace_corr_add(c, &o);
	}
	svtrace_corr_late_sort(c);
	l = svtrace_corr_late(c, &n);
	assert_int_equal(n, 3);
	assert_int_equal(l[0].hop_ns, 90 * US);
	assert_int_equal(l[1].hop_ns, 70 * US);
	assert_int_equal(l[2].hop_ns, 50 * US);
	assert_int_equal(svtrace_corr_counters(c)->late_total, 6);
	svtrace_corr_free(c);
}

static int cmp_desc(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x < y) - (x > y);
}

/* Many late frames (a stalled guest): the list is the worst late_max of them, also when it was sorted
 * for output in between (the heap is rebuilt). */
static void test_late_many(void **state)
{
	enum { N = 600, KEEP = 16 };
	struct svtrace_corr_cfg cfg = { .nports = 1, .capacity = 1024, .timeout_ns = 100000 * MS, .late_ns = US,
					.late_max = KEEP, .max_streams = 2 };
	static int64_t ref[N];
	struct svtrace_corr *c;
	const struct svtrace_late *l;
	uint32_t x = 12345;
	unsigned n;

	(void)state;
	assert_int_equal(svtrace_corr_new(&c, &cfg), 0);
	for (unsigned k = 0; k < N; k++) {
		struct svtrace_obs o = { .kind = SVTRACE_OBS_INGRESS, .smpcnt = (uint16_t)k, .svid = (const uint8_t *)"A",
					 .svid_len = 1, .t_mono_ns = (int64_t)k * MS };

		x = x * 1103515245u + 12345u;
		ref[k] = (int64_t)(2 + (x >> 8) % 100000) * US / 10;	/* 0.2 us .. 10 ms, some below 1 us */
		svtrace_corr_add(c, &o);
		o.kind = SVTRACE_OBS_EGRESS;
		o.port = 1;
		svtrace_corr_add(c, &o);
		o.kind = SVTRACE_OBS_TAKEN;
		o.t_mono_ns += ref[k];
		svtrace_corr_add(c, &o);
		if (k == N / 2) {
			svtrace_corr_late_sort(c);
			l = svtrace_corr_late(c, &n);
			for (unsigned i = 1; i < n; i++)
				assert_true(l[i - 1].hop_ns >= l[i].hop_ns);
		}
	}
	svtrace_corr_late_sort(c);
	l = svtrace_corr_late(c, &n);
	qsort(ref, N, sizeof(ref[0]), cmp_desc);
	assert_int_equal(n, KEEP);
	for (unsigned i = 0; i < KEEP; i++)
		assert_int_equal(l[i].hop_ns, ref[i]);
	svtrace_corr_free(c);
}

/* svtrace's data path: one resolved copy at a time (correlated in BPF), every outcome on its hops. */
static void test_copy_outcomes(void **state)
{
	struct svtrace_corr_cfg cfg = { .nports = 2, .capacity = 16, .timeout_ns = MS, .late_ns = 500 * US,
					.late_max = 4, .max_streams = 2 };
	struct svtrace_corr *c;
	const struct svtrace_hop_stats *h;
	const struct svtrace_reason_count *rc;
	const struct svtrace_late *l;
	unsigned n;
	int a, b;
	struct svtrace_copy_obs o = { .outcome = SVTRACE_COPY_TAKEN, .port = 1, .smpcnt = 7, .t1_ns = 100 * US,
				      .t2a_ns = 103 * US, .t2b_ns = 110 * US, .feeder_tid = 9, .feeder_comm = "napi/x",
				      .holder_comm = "hog", .holder_pid = 42, .holder_policy = 1, .holder_prio = 50,
				      .wait_ns = 800 * US };

	(void)state;
	assert_int_equal(svtrace_corr_new(&c, &cfg), 0);
	a = svtrace_corr_stream_add(c, 0x4000, (const uint8_t *)"MU01", 4);
	b = svtrace_corr_stream_add(c, 0x4000, (const uint8_t *)"MU02", 4);
	assert_int_equal(a, 0);
	assert_int_equal(b, 1);
	assert_int_equal(svtrace_corr_stream_add(c, 0x4000, (const uint8_t *)"MU01", 4), 0);
	assert_int_equal(svtrace_corr_stream_add(c, 0x4000, (const uint8_t *)"MU03", 4), -ENOSPC);
	o.stream = (unsigned)a;
	assert_int_equal(svtrace_corr_copy(c, &o), 0);		/* taken: 3, 7, 10 us */
	o.port = 2;
	o.t2b_ns = 700 * US;					/* taken late: 600 us T1-T2b */
	assert_int_equal(svtrace_corr_copy(c, &o), 0);
	o.outcome = SVTRACE_COPY_DROPPED;
	o.reason = 77;
	assert_int_equal(svtrace_corr_copy(c, &o), 0);
	o.outcome = SVTRACE_COPY_PORT_DROP;
	o.t2a_ns = 0;
	o.reason = 5;
	assert_int_equal(svtrace_corr_copy(c, &o), 0);
	o.outcome = SVTRACE_COPY_MISSING_T2A;
	assert_int_equal(svtrace_corr_copy(c, &o), 0);
	o.outcome = SVTRACE_COPY_MISSING_T2B;
	o.t2a_ns = 104 * US;
	o.t2b_ns = 0;
	assert_int_equal(svtrace_corr_copy(c, &o), 0);
	o.outcome = SVTRACE_COPY_UNWANTED;			/* reached guest 2, nobody wanted it */
	o.t2b_ns = 120 * US;
	assert_int_equal(svtrace_corr_copy(c, &o), 0);
	o.outcome = SVTRACE_COPY_TAKEN;				/* no T1: only T2a-T2b */
	o.t1_ns = 0;
	o.stream = (unsigned)b;
	assert_int_equal(svtrace_corr_copy(c, &o), 0);
	o.port = 3;						/* bad port: counted */
	assert_int_equal(svtrace_corr_copy(c, &o), -EINVAL);
	h = svtrace_corr_hop(c, 1, SVTRACE_HOP_T1_T2B);
	assert_int_equal(h->frames, 1);
	assert_int_equal(h->lat.min, 10 * US);
	h = svtrace_corr_hop(c, 2, SVTRACE_HOP_T1_T2A);
	assert_int_equal(h->frames, 4);		/* taken, dropped, missing at T2b, unwanted */
	assert_int_equal(h->missing, 1);
	assert_int_equal(h->dropped, 1);
	h = svtrace_corr_hop(c, 2, SVTRACE_HOP_T2A_T2B);
	assert_int_equal(h->frames, 3);		/* taken, unwanted, taken without T1 */
	assert_int_equal(h->dropped, 1);
	assert_int_equal(h->missing, 1);
	assert_int_equal(h->unwanted, 1);
	h = svtrace_corr_hop(c, 2, SVTRACE_HOP_T1_T2B);
	assert_int_equal(h->frames, 2);
	assert_int_equal(h->dropped, 2);
	assert_int_equal(h->missing, 2);
	rc = svtrace_corr_reasons(c, 2, &n);
	assert_int_equal(n, 2);
	assert_int_equal(rc[0].reason, 77);
	assert_int_equal(rc[1].reason, 5);
	l = svtrace_corr_late(c, &n);
	assert_int_equal(n, 1);
	assert_int_equal(l[0].hop_ns, 600 * US);
	assert_int_equal(l[0].port, 2);
	assert_int_equal(l[0].smpcnt, 7);
	assert_string_equal(l[0].holder_comm, "hog");
	assert_string_equal(l[0].feeder_comm, "napi/x");
	assert_int_equal(svtrace_corr_counters(c)->bad_port, 1);
	svtrace_corr_stream_set_frames(c, (unsigned)a, 5);
	assert_int_equal(svtrace_corr_stream(c, (unsigned)a, NULL, NULL, NULL, &(uint64_t){ 0 }), 0);
	{
		uint64_t fr = 0;

		svtrace_corr_stream(c, (unsigned)a, NULL, NULL, NULL, &fr);
		assert_int_equal(fr, 5);
	}
	svtrace_corr_free(c);
}

/* Latencies accounted outside (svtrace's BPF histograms): merged on the port (and its live interval)
 * or on one stream, adding up with the copies accounted one by one. */
static void test_hop_merge(void **state)
{
	struct svtrace_corr_cfg cfg = { .nports = 2, .capacity = 16, .timeout_ns = MS, .max_streams = 2 };
	static struct sv_stats d, direct;
	struct svtrace_corr *c;
	const struct svtrace_hop_stats *h;
	struct sv_stats_summary sa, sb;
	struct svtrace_copy_obs o = { .outcome = SVTRACE_COPY_TAKEN, .port = 2, .t1_ns = 10 * US,
				      .t2a_ns = 15 * US, .t2b_ns = 40 * US };
	int a;

	(void)state;
	assert_int_equal(svtrace_corr_new(&c, &cfg), 0);
	a = svtrace_corr_stream_add(c, 0x4000, (const uint8_t *)"MU01", 4);
	assert_int_equal(a, 0);
	sv_stats_init(&d);
	sv_stats_init(&direct);
	for (int64_t v = 1000; v < 200000; v += 997) {
		sv_stats_add(&d, v);
		sv_stats_add(&direct, v);
	}
	assert_int_equal(svtrace_corr_hop_merge(c, -1, 2, SVTRACE_HOP_T2A_T2B, &d), 0);
	assert_int_equal(svtrace_corr_hop_merge(c, a, 2, SVTRACE_HOP_T2A_T2B, &d), 0);
	o.stream = (unsigned)a;
	assert_int_equal(svtrace_corr_copy(c, &o), 0);		/* one more, 25 us */
	sv_stats_add(&direct, 25 * US);
	h = svtrace_corr_hop(c, 2, SVTRACE_HOP_T2A_T2B);
	assert_int_equal(h->frames, d.count + 1);
	assert_int_equal(h->missing, 0);
	sv_stats_summarize(&h->lat, &sa);
	sv_stats_summarize(&direct, &sb);
	assert_int_equal(sa.count, sb.count);
	assert_int_equal(sa.min, 1000);
	assert_int_equal(sa.max, sb.max);
	assert_int_equal(sa.p50, sb.p50);
	assert_int_equal(sa.p99, sb.p99);
	assert_int_equal(svtrace_corr_hop_interval(c, 2, SVTRACE_HOP_T2A_T2B)->frames, d.count + 1);
	assert_int_equal(svtrace_corr_stream_hop(c, (unsigned)a, 2, SVTRACE_HOP_T2A_T2B)->frames, d.count + 1);
	/* other hops and ports untouched by the merge */
	assert_int_equal(svtrace_corr_hop(c, 1, SVTRACE_HOP_T2A_T2B)->frames, 0);
	assert_int_equal(svtrace_corr_hop(c, 2, SVTRACE_HOP_T1_T2A)->frames, 1);
	svtrace_corr_interval_reset(c);
	assert_int_equal(svtrace_corr_hop_interval(c, 2, SVTRACE_HOP_T2A_T2B)->frames, 0);
	assert_int_equal(svtrace_corr_hop(c, 2, SVTRACE_HOP_T2A_T2B)->frames, d.count + 1);
	/* bad port, hop or stream: refused and counted */
	assert_int_equal(svtrace_corr_hop_merge(c, -1, 0, SVTRACE_HOP_T2A_T2B, &d), -EINVAL);
	assert_int_equal(svtrace_corr_hop_merge(c, -1, 3, SVTRACE_HOP_T2A_T2B, &d), -EINVAL);
	assert_int_equal(svtrace_corr_hop_merge(c, -1, 1, SVTRACE_HOP_NR, &d), -EINVAL);
	assert_int_equal(svtrace_corr_hop_merge(c, 1, 1, SVTRACE_HOP_T1_T2A, &d), -EINVAL);
	assert_int_equal(svtrace_corr_counters(c)->bad_port, 4);
	svtrace_corr_free(c);
}

/* no_interval (svtrace without --live): copies and merges count in the totals, the interval stays empty. */
static void test_no_interval(void **state)
{
	struct svtrace_corr_cfg cfg = { .nports = 1, .capacity = 16, .timeout_ns = MS, .max_streams = 1,
					.no_interval = true };
	struct svtrace_copy_obs o = { .outcome = SVTRACE_COPY_TAKEN, .port = 1, .t1_ns = 10 * US,
				      .t2a_ns = 15 * US, .t2b_ns = 40 * US };
	static struct sv_stats d;
	struct svtrace_corr *c;
	int a;

	(void)state;
	assert_int_equal(svtrace_corr_new(&c, &cfg), 0);
	a = svtrace_corr_stream_add(c, 0x4000, (const uint8_t *)"MU01", 4);
	assert_int_equal(a, 0);
	o.stream = (unsigned)a;
	assert_int_equal(svtrace_corr_copy(c, &o), 0);
	sv_stats_init(&d);
	sv_stats_add(&d, 7 * US);
	sv_stats_add(&d, 9 * US);
	assert_int_equal(svtrace_corr_hop_merge(c, -1, 1, SVTRACE_HOP_T1_T2A, &d), 0);
	assert_int_equal(svtrace_corr_hop_merge(c, a, 1, SVTRACE_HOP_T1_T2A, &d), 0);
	assert_int_equal(svtrace_corr_hop(c, 1, SVTRACE_HOP_T1_T2A)->frames, 3);
	assert_int_equal(svtrace_corr_hop(c, 1, SVTRACE_HOP_T1_T2A)->lat.min, 5 * US);
	assert_int_equal(svtrace_corr_hop(c, 1, SVTRACE_HOP_T1_T2A)->lat.max, 9 * US);
	assert_int_equal(svtrace_corr_stream_hop(c, (unsigned)a, 1, SVTRACE_HOP_T1_T2A)->frames, 3);
	assert_int_equal(svtrace_corr_hop(c, 1, SVTRACE_HOP_T1_T2B)->frames, 1);
	for (int h = 0; h < SVTRACE_HOP_NR; h++)
		assert_int_equal(svtrace_corr_hop_interval(c, 1, (enum svtrace_hop)h)->frames, 0);
	svtrace_corr_free(c);
}

/* The part of a feeder's wait within a late frame's hop (svtrace_wait_in_hop): only the overlap of the
 * wait [end - wait, end] with the hop [from, to] explains the hop; the end unknown (0): an upper bound. */
static void test_wait_in_hop(void **state)
{
	static const struct {
		const char *name;
		int64_t from, to, end, wait;	/* us */
		int64_t want, want_from;	/* us */
	} tc[] = {
		{ "wait inside the hop", 100, 200, 150, 30, 30, 120 },
		{ "wait covering the hop", 100, 200, 250, 500, 100, 100 },
		{ "wait starting before T1, ending inside", 100, 200, 130, 80, 30, 100 },
		{ "wait starting inside, ending after T2b", 100, 200, 260, 80, 20, 180 },
		{ "wait before T1 (the sender's wake-up): none", 100, 130, 90, 2392, 0, 0 },
		{ "wait ending exactly at T1: none", 100, 130, 100, 50, 0, 0 },
		{ "wait after T2b: none", 100, 130, 400, 50, 0, 0 },
		{ "end unknown: bounded by the hop", 100, 130, 0, 2392, 30, 100 },
		{ "end unknown, short wait", 100, 1000, 0, 40, 40, 960 },
		{ "no wait", 100, 200, 150, 0, 0, 0 },
		{ "empty hop", 200, 200, 200, 50, 0, 0 },
		{ "negative wait (bad input)", 100, 200, 150, -5, 0, 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(tc) / sizeof(tc[0]); i++) {
		int64_t from = -1, got = svtrace_wait_in_hop(tc[i].from * US, tc[i].to * US, tc[i].end * US,
							     tc[i].wait * US, &from);

		print_message("  %s: %lld us from %lld\n", tc[i].name, (long long)(got / US), (long long)(from / US));
		assert_int_equal(got, tc[i].want * US);
		assert_int_equal(from, tc[i].want_from * US);
	}
}

/* A late copy names its holder only when part of the feeder's wait lies within the hop; the part
 * that does is the late entry's wait_ns, the whole wait feeder_wait_ns. A copy untaken at the stop is
 * in flight, not missing. */
static void test_late_clipped_and_in_flight(void **state)
{
	struct svtrace_corr_cfg cfg = { .nports = 1, .capacity = 16, .timeout_ns = MS, .late_ns = 20 * US,
					.late_max = 8, .max_streams = 1 };
	struct svtrace_corr *c;
	const struct svtrace_late *l;
	const struct svtrace_hop_stats *h;
	unsigned n;
	/* hop T1-T2b 30 us (100..130); the feeder waited 2392 us, ending at 90 us: before T1 */
	struct svtrace_copy_obs o = { .outcome = SVTRACE_COPY_TAKEN, .port = 1, .smpcnt = 1, .t1_ns = 100 * US,
				      .t2a_ns = 110 * US, .t2b_ns = 130 * US, .feeder_tid = 9, .feeder_comm = "rx",
				      .holder_comm = "svtrace", .holder_pid = 42, .holder_policy = 0, .holder_prio = 20,
				      .wait_ns = 2392 * US, .wait_end_ns = 90 * US };

	(void)state;
	assert_int_equal(svtrace_corr_new(&c, &cfg), 0);
	assert_int_equal(svtrace_corr_stream_add(c, 0x4000, (const uint8_t *)"MU01", 4), 0);
	o.stream = 0;
	assert_int_equal(svtrace_corr_copy(c, &o), 0);
	/* a 12.4 ms hop (1000..13400 us) whose feeder waited 16 us within it */
	o.smpcnt = 2;
	o.t1_ns = 1000 * US;
	o.t2a_ns = 1010 * US;
	o.t2b_ns = 13400 * US;
	o.wait_ns = 16 * US;
	o.wait_end_ns = 13390 * US;
	assert_int_equal(svtrace_corr_copy(c, &o), 0);
	/* untaken at the stop: in flight (not missing, no latency) */
	o.outcome = SVTRACE_COPY_IN_FLIGHT_T2B;
	o.t2b_ns = 0;
	assert_int_equal(svtrace_corr_copy(c, &o), 0);
	svtrace_corr_late_sort(c);
	l = svtrace_corr_late(c, &n);
	assert_int_equal(n, 2);
	/* worst first: the 12.4 ms one, 16 us of it explained, holder named */
	assert_int_equal(l[0].hop_ns, 12400 * US);
	assert_int_equal(l[0].wait_ns, 16 * US);
	assert_int_equal(l[0].feeder_wait_ns, 16 * US);
	assert_int_equal(l[0].wait_from_ns, 13374 * US);
	assert_true(l[0].wait_end_known);
	assert_string_equal(l[0].holder_comm, "svtrace");
	/* the 30 us one: the wait was before T1, nothing in the hop, no holder */
	assert_int_equal(l[1].hop_ns, 30 * US);
	assert_int_equal(l[1].wait_ns, 0);
	assert_int_equal(l[1].feeder_wait_ns, 2392 * US);
	assert_int_equal(l[1].holder_pid, 0);
	assert_string_equal(l[1].holder_comm, "");
	h = svtrace_corr_hop(c, 1, SVTRACE_HOP_T2A_T2B);
	assert_int_equal(h->frames, 2);
	assert_int_equal(h->missing, 0);
	assert_int_equal(h->in_flight, 1);
	h = svtrace_corr_hop(c, 1, SVTRACE_HOP_T1_T2B);
	assert_int_equal(h->in_flight, 1);
	assert_int_equal(h->missing, 0);
	assert_int_equal(svtrace_corr_hop(c, 1, SVTRACE_HOP_T1_T2A)->frames, 3);
	assert_int_equal(svtrace_corr_stream_hop(c, 0, 1, SVTRACE_HOP_T2A_T2B)->in_flight, 1);
	svtrace_corr_free(c);
}

/* A frame carried through user space (Open vSwitch's netdev datapath): the carrier's wait explains the hop it
 * carried the frame over, T1-T2a, by its part there only; a wait after T2a (the carrier ran again before the
 * frame was taken) names no holder; a frame forwarded in the receiving context has no carrier. */
static void test_late_carrier(void **state)
{
	static const struct {
		const char *comm, *role;
	} roles[] = {
		{ "ovs-vswitchd", "ovs main thread" }, { "pmd-c01/id:6", "ovs pmd thread" },
		{ "handler5", "ovs handler (upcall)" }, { "revalidator4", "ovs revalidator" },
		{ "ksoftirqd/1", "ksoftirqd" }, { "vhost-4242", "vhost worker" }, { "svsub", "thread" }, { "", "thread" },
		{ NULL, "thread" },
	};
	struct svtrace_corr_cfg cfg = { .nports = 1, .capacity = 16, .timeout_ns = MS, .late_ns = 1000 * US,
					.late_max = 8, .max_streams = 1 };
	struct svtrace_corr *c;
	const struct svtrace_late *l;
	unsigned n;
	/* T1 100 us, T2a 5100 us (carried 5 ms), T2b 5110 us; the carrier waited 4 ms, ending at 5000 us */
	struct svtrace_copy_obs o = { .outcome = SVTRACE_COPY_TAKEN, .port = 1, .smpcnt = 1, .t1_ns = 100 * US,
				      .t2a_ns = 5100 * US, .t2b_ns = 5110 * US, .feeder_tid = 7, .feeder_comm = "ovs-vswitchd",
				      .carrier = { .tid = 7, .comm = "ovs-vswitchd", .wait_ns = 4000 * US,
						   .wait_end_ns = 5000 * US, .holder_pid = 42, .holder_comm = "svsub",
						   .holder_policy = 1, .holder_prio = 80 } };

	(void)state;
	for (unsigned i = 0; i < sizeof(roles) / sizeof(roles[0]); i++)
		assert_string_equal(svtrace_thread_role(roles[i].comm), roles[i].role);
	assert_int_equal(svtrace_corr_new(&c, &cfg), 0);
	assert_int_equal(svtrace_corr_stream_add(c, 0x4000, (const uint8_t *)"MU01", 4), 0);
	o.stream = 0;
	assert_int_equal(svtrace_corr_copy(c, &o), 0);
	/* the same, but the carrier's last wait ended after T2a: it is not this frame's */
	o.smpcnt = 2;
	o.t2b_ns = 5120 * US;
	o.carrier.wait_end_ns = 5105 * US;
	o.carrier.wait_ns = 3 * US;
	assert_int_equal(svtrace_corr_copy(c, &o), 0);
	/* no carrier (a kernel switch forwards in the receiving softirq) */
	o.smpcnt = 3;
	o.t2b_ns = 5130 * US;
	o.carrier = (struct svtrace_carrier){ 0 };
	assert_int_equal(svtrace_corr_copy(c, &o), 0);
	svtrace_corr_late_sort(c);
	l = svtrace_corr_late(c, &n);
	assert_int_equal(n, 3);
	for (unsigned i = 0; i < n; i++) {
		switch (l[i].smpcnt) {
		case 1:	/* 4 ms of wait from 1000 to 5000 us, all of it within 100..5100 */
			assert_int_equal(l[i].carrier_tid, 7);
			assert_string_equal(l[i].carrier_comm, "ovs-vswitchd");
			assert_int_equal(l[i].carrier_wait_ns, 4000 * US);
			assert_int_equal(l[i].carrier_wait_from_ns, 1000 * US);
			assert_int_equal(l[i].carrier_holder_pid, 42);
			assert_string_equal(l[i].carrier_holder_comm, "svsub");
			assert_int_equal(l[i].carrier_holder_policy, 1);
			break;
		case 2:
			assert_int_equal(l[i].carrier_tid, 7);
			assert_int_equal(l[i].carrier_wait_ns, 0);
			assert_int_equal(l[i].carrier_whole_wait_ns, 3 * US);
			assert_int_equal(l[i].carrier_holder_pid, 0);
			assert_string_equal(l[i].carrier_holder_comm, "");
			break;
		default:
			assert_int_equal(l[i].carrier_tid, 0);
			assert_string_equal(l[i].carrier_comm, "");
		}
	}
	svtrace_corr_free(c);
}

/* The hop log's one-word entry (svtrace.h): every field at its extremes comes back whole, none spills into
 * another, and a hop at the limit does not fit (the producer sends such a copy elsewhere). */
static void test_hop_log_entry(void **state)
{
	static const uint32_t d[] = { 0, 1, 999, 123456, SVTRACE_HLOG_LIMIT_NS - 1 };
	uint64_t w;

	(void)state;
	for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++)
		for (size_t j = 0; j < sizeof(d) / sizeof(d[0]); j++)
			for (uint32_t port = 1; port < SVTRACE_MAX_PORTS; port += 7)
				for (uint32_t stream = 0; stream < SVTRACE_MAX_STREAMS; stream += 85) {
					w = svtrace_hent_pack(d[i], d[j], port, stream);
					assert_int_equal(svtrace_hent_d1(w), d[i]);
					assert_int_equal(svtrace_hent_d2(w), d[j]);
					assert_int_equal(svtrace_hent_port(w), port);
					assert_int_equal(svtrace_hent_stream(w), stream);
				}
	w = svtrace_hent_pack(SVTRACE_HLOG_NO_T1, SVTRACE_HLOG_LIMIT_NS - 1, SVTRACE_MAX_PORTS - 1,
			      SVTRACE_MAX_STREAMS - 1);
	assert_int_equal(svtrace_hent_d1(w), SVTRACE_HLOG_NO_T1);
	assert_int_equal(svtrace_hent_d2(w), SVTRACE_HLOG_LIMIT_NS - 1);
	assert_int_equal(svtrace_hent_port(w), SVTRACE_MAX_PORTS - 1);
	assert_int_equal(svtrace_hent_stream(w), SVTRACE_MAX_STREAMS - 1);
	/* the limit: 67 ms, above any SV deadline and below the histograms' own */
	assert_true(SVTRACE_HLOG_LIMIT_NS > 60000000u && SVTRACE_HLOG_LIMIT_NS < SVTRACE_HIST_LIMIT_NS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hop_log_entry),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_bounded_and_timeout),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_late_keeps_worst),
		cmocka_unit_test(test_late_many),
		cmocka_unit_test(test_copy_outcomes),
		cmocka_unit_test(test_hop_merge),
		cmocka_unit_test(test_no_interval),
		cmocka_unit_test(test_wait_in_hop),
		cmocka_unit_test(test_late_clipped_and_in_flight),
		cmocka_unit_test(test_late_carrier),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

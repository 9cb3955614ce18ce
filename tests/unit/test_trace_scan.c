// SPDX-License-Identifier: Apache-2.0
/*
 * svtrace's table scans (bpf/svtrace_scan.c) on BPF's tables as plain memory, the way svtrace mmap()s
 * them: frames that never reached a port ("inflight"), copies never freed ("track"), the timeout, the stop,
 * --expect seen, the slots' release. And days of traffic through the ring and the scans: what times out
 * is missing, drops keep their reason, the tables never grow. No root, no BPF.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "svtrace_scan.h"
#include "trace_fixture.h"

#define NIDS 2
#define TRACK_N 16
#define SKB(i) (0xffff888000000000ull | ((uint64_t)(i) << 8))

static struct svtrace_inflight inflight[NIDS * SVTRACE_INFLIGHT_SLOTS];
static uint64_t incomplete[NIDS * SVTRACE_INFLIGHT_SLOTS / 64];
static struct svtrace_track track[1024];
static uint64_t track_rel[1024];

/* T1 at @t1_ns of stream @id's frame @smp, which passed T2a at the ports @seen, dropped before at @predrop. */
static void frame_in_flight(uint32_t id, uint16_t smp, uint64_t t1_ns, uint32_t seen, uint32_t predrop)
{
	uint32_t i = id * SVTRACE_INFLIGHT_SLOTS + smp % SVTRACE_INFLIGHT_SLOTS;

	inflight[i] = (struct svtrace_inflight){ .t1_ns = t1_ns, .smpcnt = smp, .seen = seen, .predrop = predrop,
						 .tid1 = 77, .cpu1 = 1 };
	incomplete[i / 64] |= 1ull << (i & 63);
}

static bool slot_open(uint32_t id, uint16_t smp)
{
	uint32_t i = id * SVTRACE_INFLIGHT_SLOTS + smp % SVTRACE_INFLIGHT_SLOTS;

	return inflight[i].t1_ns || (incomplete[i / 64] >> (i & 63) & 1);
}

/* --expect seen's stand-in: stream 1 reached port 1 only; stream 0 is not in the map. */
static int ports_of(void *ctx, uint32_t id, uint32_t *ports)
{
	(void)ctx;
	if (id != 1)
		return -ENOENT;
	*ports = 1u << 1;
	return 0;
}

static void test_inflight(void **state)
{
	struct svtrace_scan sc = { .inflight = inflight, .incomplete = incomplete, .timeout_ns = 100 * MS,
				   .all_ports = (1u << 1) | (1u << 2) };
	struct tfix f;

	(void)state;
	memset(inflight, 0, sizeof(inflight));
	memset(incomplete, 0, sizeof(incomplete));
	tfix_init(&f, 2, 0, 0, 4, NULL);
	f.svid[0] = "MU01";
	f.svid[1] = "MU02";
	assert_non_null(svtrace_streams_of(&f.streams, 1));	/* nids 2 */
	frame_in_flight(0, 5, 1000 * MS, 1u << 1, 0);			/* port 2 never reached */
	frame_in_flight(0, 6, 1000 * MS, 1u << 1, 1u << 2);		/* dropped on port 2: not missing */
	frame_in_flight(0, 7, 1000 * MS, 0, 0);				/* neither port */
	frame_in_flight(0, 8, 1150 * MS, 0, 0);				/* younger */
	svtrace_scan_inflight(&sc, &f.ev, 1200 * MS, false);
	assert_int_equal(svtrace_corr_hop(f.corr, 1, SVTRACE_HOP_T1_T2A)->missing, 1);
	assert_int_equal(svtrace_corr_hop(f.corr, 2, SVTRACE_HOP_T1_T2A)->missing, 2);
	assert_int_equal(svtrace_corr_hop(f.corr, 2, SVTRACE_HOP_T1_T2B)->missing, 2);
	assert_false(slot_open(0, 5));
	assert_false(slot_open(0, 6));
	assert_false(slot_open(0, 7));
	assert_true(slot_open(0, 8));
	/* again: nothing twice */
	svtrace_scan_inflight(&sc, &f.ev, 1200 * MS, false);
	assert_int_equal(svtrace_corr_hop(f.corr, 2, SVTRACE_HOP_T1_T2A)->missing, 2);
	/* the stop's pass takes the young one too */
	svtrace_scan_inflight(&sc, &f.ev, 1200 * MS, true);
	assert_int_equal(svtrace_corr_hop(f.corr, 1, SVTRACE_HOP_T1_T2A)->missing, 2);
	assert_int_equal(svtrace_corr_hop(f.corr, 2, SVTRACE_HOP_T1_T2A)->missing, 3);
	assert_false(slot_open(0, 8));
	/* --expect seen: stream 1 is expected at port 1 only; stream 0, not in the map, nowhere */
	sc.ports_of = ports_of;
	frame_in_flight(1, 9, 1000 * MS, 0, 0);
	frame_in_flight(0, 9, 1000 * MS, 0, 0);
	svtrace_scan_inflight(&sc, &f.ev, 2000 * MS, false);
	assert_int_equal(svtrace_corr_hop(f.corr, 1, SVTRACE_HOP_T1_T2A)->missing, 3);
	assert_int_equal(svtrace_corr_hop(f.corr, 2, SVTRACE_HOP_T1_T2A)->missing, 3);
	assert_false(slot_open(1, 9));
	assert_false(slot_open(0, 9));
	tfix_free(&f);
}

/* Copy of stream 0 in "track" slot @i, claimed at epoch @epoch, passed T2a at @t2a_ns on port 1. */
static void copy_tracked(uint32_t i, uint16_t epoch, uint64_t t2a_ns)
{
	track[i] = (struct svtrace_track){ .skb = SKB(i), .state = epoch, .port = 1, .smpcnt = (uint16_t)i,
					   .t1_ns = t2a_ns - 2 * US, .t2a_ns = t2a_ns };
	track_rel[i] = 0;
}

static void test_track(void **state)
{
	struct svtrace_scan sc = { .track = track, .track_rel = track_rel, .track_n = TRACK_N, .timeout_ns = 100 * MS,
				   .all_ports = 1u << 1 };
	const struct svtrace_hop_stats *h;
	struct svtrace_track tp;
	struct tfix f;

	(void)state;
	memset(track, 0, sizeof(track));
	tfix_init(&f, 1, 0, 0, 4, NULL);
	f.svid[0] = "MU01";
	copy_tracked(3, 5, 1000 * MS);				/* never freed */
	copy_tracked(4, 6, 1000 * MS);
	track_rel[4] = svtrace_claim_word(SKB(4), 6);		/* freed (released by its free) */
	copy_tracked(13, 7, 1150 * MS);				/* younger than the timeout */
	/* a quarter per pass: slots 0-3, 4-7, 8-11, 12-15 */
	svtrace_scan_track(&sc, &f.ev, 1200 * MS, false);
	h = svtrace_corr_hop(f.corr, 1, SVTRACE_HOP_T2A_T2B);
	assert_int_equal(h->missing, 1);
	assert_int_equal(track_rel[3], svtrace_claim_word(SKB(3), 5));	/* released as its free would */
	assert_int_equal(sc.cursor, 4);
	for (int i = 0; i < 3; i++)
		svtrace_scan_track(&sc, &f.ev, 1200 * MS, false);
	assert_int_equal(sc.cursor, 0);
	assert_int_equal(h->missing, 1);
	assert_int_equal(h->in_flight, 0);
	/* a full sweep later, the released slot is not taken again */
	for (int i = 0; i < 4; i++)
		svtrace_scan_track(&sc, &f.ev, 1200 * MS, false);
	assert_int_equal(h->missing, 1);
	/* the stop: the young copy is in flight, not missing; T1-T2a was seen for both */
	svtrace_scan_track(&sc, &f.ev, 1200 * MS, true);
	assert_int_equal(h->missing, 1);
	assert_int_equal(h->in_flight, 1);
	assert_int_equal(svtrace_corr_hop(f.corr, 1, SVTRACE_HOP_T1_T2B)->in_flight, 1);
	assert_int_equal(svtrace_corr_hop(f.corr, 1, SVTRACE_HOP_T1_T2A)->frames, 2);
	assert_int_equal(svtrace_corr_hop(f.corr, 1, SVTRACE_HOP_T1_T2A)->lat.max, 2 * US);
	/* the fallback hash's entries: due when expired or at the stop; resolved the same way */
	tp = track[3];
	assert_true(svtrace_scan_due(&sc, &tp, 1101 * MS, false));
	assert_false(svtrace_scan_due(&sc, &tp, 1099 * MS, false));
	assert_true(svtrace_scan_due(&sc, &tp, 1000 * MS, true));
	svtrace_scan_resolve(&sc, &f.ev, &tp, 1101 * MS);
	svtrace_scan_resolve(&sc, &f.ev, &tp, 1050 * MS);
	assert_int_equal(h->missing, 2);
	assert_int_equal(h->in_flight, 2);
	tfix_free(&f);
}

/*
 * Days of running, 4000 frames/s of one stream to one guest: 80 % taken (the ring's copies), 10 %
 * dropped with a reason, 10 % never freed (left in "track" until the scan finds them). The scans run
 * every 100 ms of traffic as svtrace's loop runs them; a slot is needed again only long after: the scan
 * must have released it by then (the table never grows, nothing is lost).
 */
static void test_days_of_running(void **state)
{
	struct svtrace_scan sc = { .track = track, .track_rel = track_rel, .track_n = 1024, .timeout_ns = 100 * MS,
				   .all_ports = 1u << 1 };
	const struct svtrace_hop_stats *h;
	const struct svtrace_reason_count *rc;
	struct tfix f;
	unsigned nr;
	uint64_t t = 0;

	(void)state;
	memset(track, 0, sizeof(track));
	memset(track_rel, 0, sizeof(track_rel));
	tfix_init(&f, 1, 0, 0, 4, NULL);
	f.svid[0] = "S";
	for (uint32_t k = 0; k < 100000; k++) {
		struct svtrace_copy c = { .type = SVTRACE_EV_TAKEN, .port = 1, .smpcnt = (uint16_t)(k % 4000) };

		t += 250 * US;
		c.t1_ns = t;
		c.t2a_ns = t + 5 * US;
		if (k % 10 == 0) {		/* never freed: its copy stays in "track" */
			uint32_t i = (k / 10) % 1024;

			if (track[i].skb)
				assert_int_equal(track_rel[i], svtrace_claim_word(track[i].skb, track[i].state));
			track[i] = (struct svtrace_track){ .skb = SKB(k), .state = (uint16_t)(k & 127), .port = 1,
							   .smpcnt = c.smpcnt, .t1_ns = c.t1_ns, .t2a_ns = c.t2a_ns };
			track_rel[i] = 0;
		} else if (k % 10 == 1) {	/* dropped, reason 9006 */
			c.type = SVTRACE_EV_DROP;
			c.reason = 9006;
			c.t2b_ns = t + 20 * US;
			tfix_event(&f, &c);
		} else {
			c.t2b_ns = t + 20 * US;
			tfix_event(&f, &c);
		}
		if (k % 400 == 0)
			svtrace_scan_track(&sc, &f.ev, (int64_t)t, false);
	}
	svtrace_scan_track(&sc, &f.ev, (int64_t)t + 1000 * MS, true);
	h = svtrace_corr_hop(f.corr, 1, SVTRACE_HOP_T2A_T2B);
	assert_int_equal(h->frames, 80000);
	assert_int_equal(h->missing, 10000);
	assert_int_equal(h->dropped, 10000);
	assert_int_equal(h->in_flight, 0);
	assert_int_equal(h->lat.min, 15 * US);
	h = svtrace_corr_hop(f.corr, 1, SVTRACE_HOP_T1_T2A);
	assert_int_equal(h->frames, 100000);
	rc = svtrace_corr_reasons(f.corr, 1, &nr);
	assert_int_equal(nr, 1);
	assert_int_equal(rc[0].reason, 9006);
	assert_int_equal(rc[0].count, 10000);
	assert_int_equal(svtrace_corr_nstreams(f.corr), 1);
	assert_int_equal(sv_rate_samples(&f.streams.s[0].rl), 4000);
	tfix_free(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inflight),
		cmocka_unit_test(test_track),
		cmocka_unit_test(test_days_of_running),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

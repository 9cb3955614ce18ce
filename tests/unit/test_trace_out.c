// SPDX-License-Identifier: Apache-2.0
/*
 * svtrace's output (bpf/svtrace_out.c) from a run's collected state, built through the modules that
 * collect it (ring events, ports, streams): the --json object's keys in their order with their values
 * (svtrace(8) and docs/metrics.md read them), the final summary's lines, the --live interval. No root, no
 * BPF: BPF's counters and the probes are given.
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

#include "svtrace_out.h"
#include "svtrace_ports.h"
#include "svtrace_setup.h"
#include "svtrace_why.h"
#include "trace_fixture.h"

static const char long_svid[] = "0123456789012345678901234567890123456789012345678901234567890123456789";

static struct svtrace_ports ports = {
	.port = { { "up0", 10, 4026531992u }, { "vm1p", 11, 4026531992u, false, 2 }, { "vm2p", 12, 4026531992u, true } },
	.n = 2, .all = 6, .ovs_bridge = "br0", .ovs_datapath = "netdev",
};

static struct svtrace_probes probes = {
	.attach_mode = "tp_btf", .wait_from_rq = true, .tracepoints = { "netif_receive_skb", "consume_skb" },
	.ntracepoints = 2, .ovs = true, .direct = true, .why = true, .why_steal = "steal_time",
	.why_missing = "irq_work,page_fault_user",
};

/* A run: MU01 taken twice on port 1 (one late, its feeder waiting on "hog", its decomposition: T1-T2a
 * carried, T2a-T2b 200 us steal, 1500 us on the run queue behind "hog", 240 us running, 50 us
 * unexplained), dropped once on port 2 with reason 9000; a stream with a 70-octet svID taken once on port 2. */
static void collect(struct tfix *f, struct svtrace_out *o)
{
	struct svtrace_late_ev l = { .c = { .type = SVTRACE_EV_TAKEN, .port = 1, .flags = SVTRACE_F_LATE,
					    .smpcnt = 7, .t1_ns = 1000 * US, .t2a_ns = 1010 * US,
					    .t2b_ns = 3000 * US, .feeder_tid = 9, .wait_ns = 1500 * US,
					    .holder_pid = 42, .holder_policy = 1, .holder_prio = 50 } };
	struct svtrace_copy c = { .type = SVTRACE_EV_TAKEN, .port = 1, .smpcnt = 8, .t1_ns = 2000 * US,
				  .t2a_ns = 2010 * US, .t2b_ns = 2030 * US };

	tfix_init(f, 2, 1000 * US, 8, 8, NULL);
	f->ev.late_ns = 1000 * US;
	f->svid[0] = "MU01";
	f->svid[1] = long_svid;
	memcpy(l.feeder_comm, "napi/x", 7);
	memcpy(l.holder_comm, "hog", 4);
	l.wait_end_ns = l.c.t2b_ns;
	assert_int_equal(svtrace_events_handle(&f->ev, &l, sizeof(l)), 0);
	{
		struct svtrace_why_ev w = { .type = SVTRACE_EV_WHY, .port = 1, .smpcnt = 7, .t1_ns = 1000 * US,
					    .t2a_ns = 1010 * US, .t2b_ns = 3000 * US, .nhops = 2 };

		w.hop[0] = (struct svtrace_why_hop){ .t_from = 1000 * US, .t_to = 1010 * US, .from_point = SVTRACE_WHY_PT_T1,
						     .to_point = SVTRACE_WHY_PT_T2A, .flags = SVTRACE_WHY_F_QDISC };
		w.hop[0].ns[SVTRACE_WHY_CARRIED] = 10 * US;
		w.hop[1] = (struct svtrace_why_hop){ .t_from = 1010 * US, .t_to = 3000 * US, .from_point = SVTRACE_WHY_PT_T2A,
						     .to_point = SVTRACE_WHY_PT_T2B, .carrier_tid = 9, .holder_pid = 42,
						     .holder_policy = 1, .holder_prio = 50, .holder_ns = 1500 * US,
						     .cpu = 1, .flags = SVTRACE_WHY_F_RX };
		w.hop[1].ns[SVTRACE_WHY_STEAL] = 200 * US;
		w.hop[1].ns[SVTRACE_WHY_RUNQUEUE] = 1500 * US;
		w.hop[1].ns[SVTRACE_WHY_RUNNING] = 240 * US;
		w.hop[1].ns[SVTRACE_WHY_UNEXPLAINED] = 50 * US;
		memcpy(w.hop[1].carrier_comm, "napi/x", 7);
		memcpy(w.hop[1].holder_comm, "hog", 4);
		assert_int_equal(svtrace_events_handle(&f->ev, &w, sizeof(w)), 0);
		/* one that follows no late frame here (a late drop): counted, not told */
		w.smpcnt = 99;
		assert_int_equal(svtrace_events_handle(&f->ev, &w, sizeof(w)), 0);
	}
	tfix_event(f, &c);
	c.type = SVTRACE_EV_DROP;
	c.port = 2;
	c.reason = 9000;
	tfix_event(f, &c);
	c.type = SVTRACE_EV_TAKEN;
	c.stream = 1;
	tfix_event(f, &c);
	c.type = SVTRACE_EV_UPCALL;
	tfix_event(f, &c);
	svtrace_corr_stream_set_frames(f->corr, 0, 3);
	*o = (struct svtrace_out){ .ports = &ports, .streams = &f->streams, .corr = f->corr, .probes = &probes,
				   .events = f->ev.events, .upcalls = f->ev.upcalls, .filtered = 4, .hlog_copies = 100,
				   .threshold_ns = 1000 * US, .expect_seen = true, .ev = &f->ev, .why_steal_ns = 777 };
	for (unsigned i = 0; i < SVTRACE_CNT_NR; i++)
		o->cnt[i] = 1000 + i;
}

/* The output @which (0 JSON, 1 summary, 2 live) as a string (freed by the caller). */
static char *capture(const struct svtrace_out *o, int which)
{
	static char *buf;
	static size_t len;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	if (which == 0)
		assert_int_equal(svtrace_out_json(o, f, 2500000000), 0);
	else if (which == 1)
		svtrace_out_summary(o, f);
	else
		svtrace_out_live(o, f);
	fclose(f);
	return buf;
}

/* Each fragment in @want, in this order, in @s. */
static void in_order(const char *s, const char *const *want, size_t n)
{
	const char *p = s;

	for (size_t i = 0; i < n; i++) {
		const char *q = strstr(p, want[i]);

		if (!q)
			print_message("not found (in order) in the output: %s\n%s\n", want[i], s);
		assert_non_null(q);
		p = q + strlen(want[i]);
	}
}

static void test_json(void **state)
{
	static const char *const want[] = {
		"{\"tool\":\"svtrace\",\"version\":\"", "\"duration_s\":2.5,",
		"\"probes\":{\"base\":\"tp_btf\",\"wait\":\"sched_info\",\"tracepoints\":[\"netif_receive_skb\","
		"\"consume_skb\"],\"ovs\":true,\"tun_net_xmit\":false,\"dev_direct_xmit\":true,\"vhost_handle_rx\":false},",
		"\"events\":7,\"events_lost\":1000,\"parse_errors\":1001,\"frames_walked\":1003,\"copies_logged\":100,"
		"\"copies_bpf_hist\":1011,\"track_collisions\":1010,\"track_full\":1002,\"stale_skbs\":1005,"
		"\"ovs_upcalls_frames\":1,\"streams_full\":1008,\"events_filtered\":4,\"orphans\":0,"
		"\"evicted_timeout\":0,\"evicted_reuse\":0,\"evicted_full\":0,\"streams_overflow\":0,",
		"\"ports_gone\":[\"vm2p\"],\"ports_recreated\":[{\"name\":\"vm1p\",\"times\":2,\"ifindex\":11,"
		"\"netns\":4026531992}],\"expect\":\"seen\",\"ovs_bridge\":{\"name\":\"br0\",\"datapath\":\"netdev\"},",
		"\"ingress\":{\"name\":\"up0\",\"ifindex\":10,\"netns\":4026531992,\"dropped\":1012,\"unhandled\":1013},",
		"\"hops\":[{\"from\":\"T1\",\"to\":\"T2a\",\"egress\":\"vm1p\",\"frames\":2,\"missing\":0,\"dropped\":0,"
		"\"unwanted\":0,\"in_flight_at_stop\":0,\"latency_ns\":{",
		"{\"from\":\"T2a\",\"to\":\"T2b\",\"egress\":\"vm2p\",\"frames\":1,\"missing\":0,\"dropped\":1,"
		"\"unwanted\":0,\"in_flight_at_stop\":0,\"drop_reasons\":{\"9000\":1},\"latency_ns\":{",
		"\"streams\":[{\"svID\":\"MU01\",\"svID_truncated\":false,\"appid\":16384,\"frames\":3,\"hops\":[",
		"{\"svID\":\"0123456789012345678901234567890123456789012345678901234567890123\",\"svID_truncated\":true,"
		"\"svID_octets\":70,\"appid\":16385,\"frames\":0,\"hops\":[",
		"\"late_detection\":true,\"late_total\":1,\"threshold_ns\":1000000,",
		"\"late\":[{\"svID\":\"MU01\",\"svID_truncated\":false,\"smpCnt\":7,\"hop\":\"T1-T2b\",\"egress\":\"vm1p\","
		"\"hop_ns\":2000000,\"feeder_thread\":\"napi/x\",\"feeder_tid\":9,\"wait_ns\":1500000,"
		"\"feeder_wait_ns\":1500000,\"wait_end_known\":true,\"unexplained_ns\":50000,\"holder_thread\":\"hog\","
		"\"holder_pid\":42,\"holder_policy\":\"SCHED_FIFO\",\"holder_prio\":50,\"carrier_thread\":null,",
		"\"why\":{\"dominant\":\"runqueue behind hog (SCHED_FIFO 50)\",\"hops\":[{\"from\":\"T1\",\"to\":\"T2a\","
		"\"hop_ns\":10000,\"causes\":{\"carried\":10000},\"unexplained_ns\":0,\"holder\":null,\"carrier\":null,"
		"\"cpu\":0,\"faults\":0,\"flags\":[\"qdisc\"]},{\"from\":\"T2a\",\"to\":\"T2b\",\"hop_ns\":1990000,"
		"\"causes\":{\"steal\":200000,\"runqueue\":1500000,\"running\":240000},\"unexplained_ns\":50000,"
		"\"holder\":{\"pid\":42,\"comm\":\"hog\",\"policy\":\"SCHED_FIFO\",\"prio\":50,\"ns\":1500000},"
		"\"carrier\":{\"tid\":9,\"comm\":\"napi/x\"},\"cpu\":1,\"faults\":0,\"flags\":[\"rx\",\"hop_late\"]}]}}],",
		"\"why\":{\"on\":true,\"off_reason\":null,\"steal_clock\":\"steal_time\",\"qdisc_stamps\":false,"
		"\"hooks_missing\":[\"irq_work\",\"page_fault_user\"],\"steal_booked_ns\":777,\"events\":2,\"skipped\":1014,\"nested\":0,"
		"\"unmatched\":1,\"bad\":0},\"why_frames\":1,\"why_late_ns\":2000000,\"why_named_ns\":1950000,"
		"\"why_named_share\":0.975,\"why_totals\":{\"steal\":200000,\"irq_timer\":0,",
		"\"runqueue\":1500000,\"blocked\":0,\"running\":240000,\"carried\":10000,\"unexplained\":50000},"
		"\"why_dominant\":[{\"cause\":\"runqueue\",\"holder\":\"hog\",\"holder_policy\":\"SCHED_FIFO\","
		"\"holder_prio\":50,\"frames\":1}],",
		"\"record\":null}",
	};
	struct svtrace_out o;
	struct tfix f;
	char *s;

	(void)state;
	collect(&f, &o);
	s = capture(&o, 0);
	in_order(s, want, sizeof(want) / sizeof(want[0]));
	/* one object on one line, nothing after it */
	assert_int_equal(strchr(s, '\n') - s, strlen(s) - 1);
	free(s);
	tfix_free(&f);
}

static void test_summary(void **state)
{
	static const char *const want[] = {
		"svtrace: 7 events, 1111 copies counted in BPF, 1000 lost, 2 streams, 1001 parse errors, 1 late (> 1000 us)\n",
		"svtrace: egress interface 'vm1p' was re-created 2 time(s) during the run and followed (frames toward it "
		"while it was away count as missing at it)\n",
		"svtrace: egress interface 'vm2p' was away at the end of the run: its counts stop where it went\n",
		"svtrace: skb table: 1010 slot collisions (overflow table), 1002 copies not tracked (both full: --table)\n",
		"  T1-T2a vm1p       frames=2 missing=0 dropped=0 ",
		"  T2a-T2b vm2p       frames=1 missing=0 dropped=1 ",
		"svtrace: why late: of 1 late frames: 1 runqueue behind hog (SCHED_FIFO 50); 97.5% of their 2.0 ms to "
		"named causes; 1014 more not decomposed (over --why-rate)\n",
		"svtrace: record /x.rec: ",
		"svtrace: record /x.rec: 3 records refused as invalid (a bug: please report)\n",
	};
	struct sv_record_writer_stats st = { 0 };
	struct svtrace_out o;
	struct tfix f;
	char *s;

	(void)state;
	collect(&f, &o);
	o.record = "/x.rec";
	o.rec_st = &st;
	o.rec_refused = 3;
	s = capture(&o, 1);
	in_order(s, want, sizeof(want) / sizeof(want[0]));
	free(s);
	/* late detection off; no record: no record line */
	o.threshold_ns = 0;
	o.rec_st = NULL;
	s = capture(&o, 1);
	assert_non_null(strstr(s, " parse errors, late detection off\n"));
	assert_null(strstr(s, "record"));
	free(s);
	s = capture(&o, 0);
	assert_non_null(strstr(s, "\"late_detection\":false,"));
	free(s);
	tfix_free(&f);
}

/* --live: the interval's counts per (port, hop) and its histogram, then a new interval; the run's totals
 * stay. */
static void test_live(void **state)
{
	struct svtrace_out o;
	struct tfix f;
	char *s;

	(void)state;
	collect(&f, &o);
	s = capture(&o, 2);
	assert_non_null(strstr(s, "\n---- svtrace: events 7, lost 1000, streams 2\n"));
	assert_non_null(strstr(s, "T1-T2a egress vm1p: frames 2 missing 0 dropped 0 "));
	assert_non_null(strstr(s, "T2a-T2b egress vm2p: frames 1 missing 0 dropped 1 "));
	free(s);
	s = capture(&o, 2);
	assert_non_null(strstr(s, "T1-T2a egress vm1p: frames 0 missing 0 dropped 0 "));
	assert_non_null(strstr(s, "T2a-T2b egress vm2p: frames 0 missing 0 dropped 0 "));
	free(s);
	assert_int_equal(svtrace_corr_hop(f.corr, 1, SVTRACE_HOP_T1_T2A)->frames, 2);
	tfix_free(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_summary),
		cmocka_unit_test(test_live),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: Apache-2.0
/*
 * svtrace's events (bpf/svtrace_events.c): ring events as BPF writes them (svtrace.h svtrace_copy,
 * svtrace_late_ev) through svtrace_events_handle into the statistics, the drop reasons and the late
 * list. Table-driven; no root, no BPF (the "streams" map is trace_fixture.h's). The frame table these
 * cases were first written against (svtrace_corr_add) is gone: BPF correlates, and these are its copies.
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

#include "svtrace_sys.h"
#include "trace_fixture.h"

#define REASON_PLAIN 9000u	/* no kernel's skb_drop_reason: a plain drop */
#define REASON_UNHANDLED 1u	/* stands for the kernel's UNHANDLED_PROTO (looked up at run time) */

/* One ring event: type, port, flags, BPF stream id, smpCnt, T1/T2a/T2b in us (0: not seen), reason. */
struct ev {
	uint8_t type, port;
	uint16_t flags;
	uint32_t id;
	uint16_t smp;
	int64_t t1, t2a, t2b;
	uint32_t reason;
};

/* Expected per (port, hop) after the run (latencies checked when frames > 0). */
struct expect {
	unsigned port;
	enum svtrace_hop hop;
	uint64_t frames, missing, dropped, unwanted;
	int64_t min_us, max_us;
};

/* The counts after the run. */
struct want {
	uint64_t late_total, orphans, bad_port, filtered, upcalls;
};

struct tcase {
	const char *name;
	unsigned nports;
	int64_t late_us;
	struct want n;
	struct ev evs[8];
	struct expect exp[6];
};

#define TAKEN SVTRACE_EV_TAKEN
#define DROP SVTRACE_EV_DROP
#define PORT_DROP SVTRACE_EV_PORT_DROP
#define MISSING SVTRACE_EV_MISSING
#define UPCALL SVTRACE_EV_UPCALL
#define LATE SVTRACE_F_LATE
#define T1A SVTRACE_HOP_T1_T2A
#define T2AB SVTRACE_HOP_T2A_T2B
#define T1B SVTRACE_HOP_T1_T2B

static const struct tcase cases[] = {
	{ "one frame, two guests, all hops", 2, 0, { 0 },
	  { { TAKEN, 1, 0, 0, 7, 100, 103, 110, 0 }, { TAKEN, 2, 0, 0, 7, 100, 104, 120, 0 } },
	  { { 1, T1A, 1, 0, 0, 0, 3, 3 }, { 1, T2AB, 1, 0, 0, 0, 7, 7 }, { 1, T1B, 1, 0, 0, 0, 10, 10 },
	    { 2, T1A, 1, 0, 0, 0, 4, 4 }, { 2, T1B, 1, 0, 0, 0, 20, 20 } } },
	{ "per-VM copies kept apart: drop on port 2 only", 2, 0, { 0 },
	  { { TAKEN, 1, 0, 0, 1, 1000, 1002, 1005, 0 }, { DROP, 2, 0, 0, 1, 1000, 1003, 1006, REASON_PLAIN } },
	  { { 1, T2AB, 1, 0, 0, 0, 3, 3 }, { 2, T2AB, 0, 0, 1, 0, 0, 0 }, { 2, T1B, 0, 0, 1, 0, 0, 0 },
	    { 2, T1A, 1, 0, 0, 0, 3, 3 } } },
	{ "never sent: missing at T1-T2a (a mask of ports)", 2, 0, { 0 },
	  { { MISSING, 0, 0, 0, 1, 1000, 0, 0, 1u << 2 } },
	  { { 2, T1A, 0, 1, 0, 0, 0, 0 }, { 2, T1B, 0, 1, 0, 0, 0, 0 }, { 1, T1A, 0, 0, 0, 0, 0, 0 } } },
	{ "missing at both ports: one event", 2, 0, { 0 },
	  { { MISSING, 0, 0, 0, 1, 1000, 0, 0, (1u << 1) | (1u << 2) } },
	  { { 1, T1A, 0, 1, 0, 0, 0, 0 }, { 2, T1A, 0, 1, 0, 0, 0, 0 }, { 1, T2AB, 0, 0, 0, 0, 0, 0 } } },
	{ "port drop before T2a is dropped at T1-T2a", 1, 0, { 0 },
	  { { PORT_DROP, 1, 0, 0, 1, 1000, 0, 1001, REASON_PLAIN } },
	  { { 1, T1A, 0, 0, 1, 0, 0, 0 }, { 1, T1B, 0, 0, 1, 0, 0, 0 }, { 1, T2AB, 0, 0, 0, 0, 0, 0 } } },
	{ "port drop without T1 is an orphan", 1, 0, { .orphans = 1 },
	  { { PORT_DROP, 1, 0, 0, 1, 0, 0, 1001, REASON_PLAIN } },
	  { { 1, T1A, 0, 0, 0, 0, 0, 0 }, { 1, T1B, 0, 0, 0, 0, 0, 0 } } },
	{ "unwanted copy reached the guest: not a loss", 1, 0, { 0 },
	  { { DROP, 1, 0, 0, 1, 1000, 1001, 1004, REASON_UNHANDLED } },
	  { { 1, T2AB, 1, 0, 0, 1, 3, 3 }, { 1, T1B, 1, 0, 0, 1, 4, 4 } } },
	{ "same smpCnt, different svID: two frames", 1, 0, { 0 },
	  { { TAKEN, 1, 0, 0, 9, 1000, 1002, 1003, 0 }, { TAKEN, 1, 0, 1, 9, 1001, 1011, 1031, 0 } },
	  { { 1, T1A, 2, 0, 0, 0, 2, 10 }, { 1, T1B, 2, 0, 0, 0, 3, 30 } } },
	{ "a copy without T1 (after T1 was detached): T2a-T2b only", 1, 0, { 0 },
	  { { TAKEN, 1, 0, 0, 3, 0, 1000, 1004, 0 } },
	  { { 1, T2AB, 1, 0, 0, 0, 4, 4 }, { 1, T1A, 0, 0, 0, 0, 0, 0 }, { 1, T1B, 0, 0, 0, 0, 0, 0 } } },
	{ "late frame over threshold is listed", 1, 500, { .late_total = 1 },
	  { { TAKEN, 1, LATE, 0, 1, 1000, 1001, 1900, 0 }, { TAKEN, 1, 0, 0, 2, 2000, 2001, 2100, 0 } },
	  { { 1, T1B, 2, 0, 0, 0, 100, 900 } } },
	{ "bad port: counted, not accounted", 2, 0, { .bad_port = 1 },
	  { { TAKEN, 3, 0, 0, 1, 1000, 1001, 1002, 0 } },
	  { { 1, T2AB, 0, 0, 0, 0, 0, 0 }, { 2, T2AB, 0, 0, 0, 0, 0, 0 } } },
	{ "the ingress's drops are BPF's count, not a copy", 1, 0, { 0 },
	  { { PORT_DROP, 0, 0, 0, 1, 1000, 0, 1001, REASON_PLAIN } },
	  { { 1, T1A, 0, 0, 0, 0, 0, 0 } } },
	{ "an Open vSwitch upcall is counted, not a copy", 1, 0, { .upcalls = 1 },
	  { { UPCALL, 0, 0, 0, 1, 1000, 0, 0, 0 } }, { { 1, T1A, 0, 0, 0, 0, 0, 0 } } },
	{ "a stream BPF's map does not know: filtered", 1, 0, { .filtered = 1 },
	  { { TAKEN, 1, 0, 9, 1, 1000, 1001, 1002, 0 } }, { { 1, T2AB, 0, 0, 0, 0, 0, 0 } } },
};

/* The value of the kernel's UNHANDLED_PROTO (from its BTF), or -1. */
static int64_t unhandled_reason(void)
{
	return svtrace_drop_reason_value("UNHANDLED_PROTO");
}

/* A late event's names: feeder "napi/x" waited 800 us (ending at T2b) while "hog" (FIFO 50) ran. */
static void late_names(struct svtrace_late_ev *l)
{
	l->c.feeder_tid = 9;
	l->c.wait_ns = 800 * US;
	l->c.holder_pid = 42;
	l->c.holder_policy = 1;
	l->c.holder_prio = 50;
	l->wait_end_ns = l->c.t2b_ns;
	memcpy(l->feeder_comm, "napi/x", 7);
	memcpy(l->holder_comm, "hog", 4);
}

static void run_case(const struct tcase *tc, int64_t unhandled)
{
	struct tfix f;
	const struct svtrace_late *late;
	unsigned nlate, nev = 0;

	tfix_init(&f, tc->nports, tc->late_us * US, 4, 8, NULL);
	f.svid[0] = "MU01";
	f.svid[1] = "MU02";
	for (unsigned i = 0; i < 8 && tc->evs[i].type; i++, nev++) {
		const struct ev *e = &tc->evs[i];
		struct svtrace_late_ev l = { .c = {
			.type = e->type, .port = e->port, .flags = e->flags, .stream = e->id, .smpcnt = e->smp,
			.t1_ns = (uint64_t)(e->t1 * US), .t2a_ns = (uint64_t)(e->t2a * US), .t2b_ns = (uint64_t)(e->t2b * US),
			.reason = e->reason == REASON_UNHANDLED ? (uint32_t)unhandled : e->reason } };

		if (e->flags & LATE)
			late_names(&l);
		assert_int_equal(svtrace_events_handle(&f.ev, &l, e->flags & LATE ? sizeof(l) : sizeof(l.c)), 0);
	}
	for (unsigned i = 0; i < 6 && tc->exp[i].port; i++) {
		const struct expect *e = &tc->exp[i];
		const struct svtrace_hop_stats *h = svtrace_corr_hop(f.corr, e->port, e->hop);

		print_message("  %s: port %u hop %s-%s\n", tc->name, e->port, svtrace_hop_from(e->hop),
			      svtrace_hop_to(e->hop));
		assert_non_null(h);
		assert_int_equal(h->frames, e->frames);
		assert_int_equal(h->missing, e->missing);
		assert_int_equal(h->dropped, e->dropped);
		assert_int_equal(h->unwanted, e->unwanted);
		assert_int_equal(h->lat.count, e->frames);
		if (e->frames) {
			assert_int_equal(h->lat.min, e->min_us * US);
			assert_int_equal(h->lat.max, e->max_us * US);
		}
	}
	assert_int_equal(f.ev.events, nev);
	assert_int_equal(svtrace_corr_counters(f.corr)->late_total, tc->n.late_total);
	assert_int_equal(svtrace_corr_counters(f.corr)->orphans, tc->n.orphans);
	assert_int_equal(svtrace_corr_counters(f.corr)->bad_port, tc->n.bad_port);
	assert_int_equal(f.ev.filtered, tc->n.filtered);
	assert_int_equal(f.ev.upcalls, tc->n.upcalls);
	late = svtrace_corr_late(f.corr, &nlate);
	assert_int_equal(nlate, tc->n.late_total);
	if (nlate) {
		assert_string_equal(late[0].holder_comm, "hog");
		assert_string_equal(late[0].feeder_comm, "napi/x");
		assert_int_equal(late[0].holder_prio, 50);
		assert_int_equal(late[0].holder_pid, 42);
		assert_int_equal(late[0].hop, SVTRACE_HOP_T1_T2B);
		assert_int_equal(late[0].wait_ns, 800 * US);
	}
	tfix_free(&f);
}

static void test_table(void **state)
{
	int64_t unhandled = unhandled_reason();

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct ev *e = cases[i].evs;

		if (e->reason == REASON_UNHANDLED && unhandled < 0) {
			print_message("  %s: skipped, the kernel's BTF names no UNHANDLED_PROTO\n", cases[i].name);
			continue;
		}
		run_case(&cases[i], unhandled);
	}
}

/* A drop is "unwanted" by its reason's name: UNHANDLED_PROTO anywhere, NOT_SPECIFIED only when freed in
 * the guest's namespace (another than the egress port's); other reasons are drops, and named per port. */
static void test_drop_reasons(void **state)
{
	int64_t unhandled = unhandled_reason(), unspec = svtrace_drop_reason_value("NOT_SPECIFIED");
	const struct svtrace_hop_stats *h;
	const struct svtrace_reason_count *rc;
	struct tfix f;
	unsigned n;
	struct svtrace_copy c = { .type = SVTRACE_EV_DROP, .port = 1, .t1_ns = 1000 * US, .t2a_ns = 1001 * US,
				  .t2b_ns = 1002 * US };

	(void)state;
	if (unhandled < 0 || unspec < 0)
		skip();
	tfix_init(&f, 1, 0, 0, 8, NULL);
	f.svid[0] = "MU01";
	c.reason = (uint32_t)unspec;
	tfix_event(&f, &c);				/* in the egress port's namespace: a drop */
	c.flags = SVTRACE_F_OTHER_NS;
	tfix_event(&f, &c);				/* in the guest's: unwanted */
	c.flags = 0;
	c.reason = (uint32_t)unhandled;
	tfix_event(&f, &c);				/* unwanted anywhere */
	c.reason = REASON_PLAIN;
	tfix_event(&f, &c);
	tfix_event(&f, &c);
	h = svtrace_corr_hop(f.corr, 1, SVTRACE_HOP_T2A_T2B);
	assert_int_equal(h->dropped, 3);
	assert_int_equal(h->unwanted, 2);
	assert_int_equal(h->frames, 2);
	rc = svtrace_corr_reasons(f.corr, 1, &n);
	assert_int_equal(n, 2);
	assert_int_equal(rc[0].reason, unspec);
	assert_int_equal(rc[0].count, 1);
	assert_int_equal(rc[1].reason, REASON_PLAIN);
	assert_int_equal(rc[1].count, 2);
	tfix_free(&f);
}

/* The late list through the ring: it keeps the worst late_max frames, also when it was sorted for output
 * in between (a stalled guest makes thousands). */
static int cmp_desc(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x < y) - (x > y);
}

static void test_late_keeps_worst(void **state)
{
	enum { N = 600, KEEP = 16 };
	static int64_t ref[N];
	const struct svtrace_late *l;
	struct tfix f;
	uint32_t x = 12345;
	unsigned n;

	(void)state;
	tfix_init(&f, 1, US, KEEP, 2, NULL);
	f.svid[0] = "A";
	for (unsigned k = 0; k < N; k++) {
		struct svtrace_copy c = { .type = SVTRACE_EV_TAKEN, .port = 1, .smpcnt = (uint16_t)k,
					  .t1_ns = (uint64_t)(k + 1) * MS, .t2a_ns = (uint64_t)(k + 1) * MS };

		x = x * 1103515245u + 12345u;
		ref[k] = (int64_t)(2 + (x >> 8) % 100000) * US / 10;	/* 0.2 us .. 10 ms, some below 1 us */
		c.t2b_ns = c.t1_ns + (uint64_t)ref[k];
		c.flags = ref[k] > US ? SVTRACE_F_LATE : 0;		/* BPF flags what passes the threshold */
		tfix_event(&f, &c);
		if (k == N / 2) {
			svtrace_corr_late_sort(f.corr);
			l = svtrace_corr_late(f.corr, &n);
			for (unsigned i = 1; i < n; i++)
				assert_true(l[i - 1].hop_ns >= l[i].hop_ns);
		}
	}
	svtrace_corr_late_sort(f.corr);
	l = svtrace_corr_late(f.corr, &n);
	qsort(ref, N, sizeof(ref[0]), cmp_desc);
	assert_int_equal(n, KEEP);
	for (unsigned i = 0; i < KEEP; i++)
		assert_int_equal(l[i].hop_ns, ref[i]);
	n = 0;
	for (unsigned k = 0; k < N; k++)
		n += ref[k] > US;
	assert_int_equal(svtrace_corr_counters(f.corr)->late_total, n);
	tfix_free(&f);
}

/* A late copy carried through user space (SVTRACE_F_CARRIED): the carrier is T2a's thread, its names and
 * wait come with the event, its wait clipped to T1-T2a; a late event cut short carries no names. */
static void test_late_event_names(void **state)
{
	struct svtrace_late_ev l = { .c = {
		.type = SVTRACE_EV_TAKEN, .port = 1, .flags = SVTRACE_F_LATE | SVTRACE_F_CARRIED, .smpcnt = 1,
		.t1_ns = 100 * US, .t2a_ns = 5100 * US, .t2b_ns = 5110 * US, .tid2a = 7, .feeder_tid = 7 } };
	const struct svtrace_late *late;
	struct tfix f;
	unsigned n;

	(void)state;
	tfix_init(&f, 1, 1000 * US, 8, 2, NULL);
	f.svid[0] = "MU01";
	memcpy(l.feeder_comm, "ovs-vswitchd", 13);
	memcpy(l.carrier_comm, "ovs-vswitchd", 13);
	memcpy(l.carrier_holder_comm, "svsub", 6);
	l.carrier_wait_ns = 4000 * US;
	l.carrier_wait_end_ns = 5000 * US;
	l.carrier_holder_pid = 42;
	l.carrier_holder_policy = 1;
	l.carrier_holder_prio = 80;
	assert_int_equal(svtrace_events_handle(&f.ev, &l, sizeof(l)), 0);
	/* the same event cut at the copy: no names, no carrier */
	l.c.smpcnt = 2;
	assert_int_equal(svtrace_events_handle(&f.ev, &l, sizeof(l.c)), 0);
	/* shorter than a copy: ignored */
	assert_int_equal(svtrace_events_handle(&f.ev, &l, sizeof(l.c) - 1), 0);
	assert_int_equal(f.ev.events, 2);
	svtrace_corr_late_sort(f.corr);
	late = svtrace_corr_late(f.corr, &n);
	assert_int_equal(n, 2);
	for (unsigned i = 0; i < n; i++) {
		if (late[i].smpcnt == 1) {
			assert_string_equal(late[i].feeder_comm, "ovs-vswitchd");
			assert_int_equal(late[i].carrier_tid, 7);
			assert_string_equal(late[i].carrier_comm, "ovs-vswitchd");
			assert_int_equal(late[i].carrier_wait_ns, 4000 * US);
			assert_int_equal(late[i].carrier_wait_from_ns, 1000 * US);
			assert_int_equal(late[i].carrier_holder_pid, 42);
			assert_string_equal(late[i].carrier_holder_comm, "svsub");
		} else {
			assert_string_equal(late[i].feeder_comm, "");
			assert_int_equal(late[i].carrier_tid, 0);
		}
	}
	tfix_free(&f);
}

/* Copies teach their stream its rate (smpCnt wrap) and VLAN; a missing copy, reported a thousand frames
 * after its own (its slot reused), does not (its old smpCnt would look like a wrap). */
static void test_copies_teach_the_stream(void **state)
{
	struct svtrace_copy c = { .type = SVTRACE_EV_TAKEN, .port = 1, .vlan_tci = 0x2005 };
	struct svtrace_stream *s;
	struct tfix f;

	(void)state;
	tfix_init(&f, 1, 0, 0, 2, NULL);
	f.svid[0] = "MU01";
	for (uint32_t k = 3000; k < 4000 + 100; k++) {
		c.smpcnt = (uint16_t)(k % 4000);
		c.t1_ns = c.t2a_ns = c.t2b_ns = (uint64_t)(k + 1) * 250 * US;
		tfix_event(&f, &c);
		if (k == 3500) {
			/* missing at T1-T2a: smpCnt 10 (an old frame) */
			struct svtrace_copy m = { .type = SVTRACE_EV_MISSING, .smpcnt = 10, .t1_ns = c.t1_ns,
						  .reason = 1u << 1 };

			tfix_event(&f, &m);
			assert_int_equal(sv_rate_samples(&f.streams.s[0].rl), 0);
		}
	}
	s = &f.streams.s[0];
	assert_int_equal(sv_rate_samples(&s->rl), 4000);
	assert_int_equal(s->vlan_tci, 0x2005);
	assert_int_equal(svtrace_corr_hop(f.corr, 1, SVTRACE_HOP_T1_T2A)->missing, 1);
	tfix_free(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_drop_reasons),
		cmocka_unit_test(test_late_keeps_worst),
		cmocka_unit_test(test_late_event_names),
		cmocka_unit_test(test_copies_teach_the_stream),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

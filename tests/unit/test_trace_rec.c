// SPDX-License-Identifier: Apache-2.0
/*
 * svtrace's records (bpf/svtrace_rec.c) through the path that writes them in svtrace --record: ring events
 * (svtrace_events), the timeout scan's copies, late frames (svtrace_corr's on_late), the run's summaries;
 * read back with libsv's reader. Every point of a copy, its second (the sample's), the drops with their
 * reason, missing frames as events, the threads that made a frame late. No root, no BPF.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "sv_clock.h"
#include "sv_record.h"
#include "svtrace_ports.h"
#include "svtrace_scan.h"
#include "trace_fixture.h"

#define SEC 1000000000LL
#define MONO0 (1000 * SEC)		/* the copies' T1 second on CLOCK_MONOTONIC */
#define TAI0 1700000000LL		/* ... is this TAI second */
#define PLAIN 9000u			/* a drop reason no kernel names */

static const struct svtrace_ports ports = {
	.port = { { "up0", 10, 4026531992u }, { "vm1p", 11, 4026531992u }, { "vm2p", 12, 4026531992u } },
	.n = 2, .all = 6,
};

/* One EVENT as expected: point, guest, flags, reason, the sample's second - TAI0, smpCnt, ifindex, ts_src. */
struct want_ev {
	uint8_t point;
	uint16_t guest, flags, reason;
	int tai_sec;
	uint16_t smp;
	uint32_t ifindex;
	uint8_t ts_src;
};

#define NONE SV_REC_GUEST_NONE
#define DROPPED SV_REC_F_DROPPED
#define MISS SV_REASON_MISSING

static const struct want_ev want_events[] = {
	/* taken on port 1, smpCnt 3999 100 us into TAI0: the sample is TAI0 - 1's */
	{ SV_POINT_T1, NONE, 0, 0, -1, 3999, 10, SV_TS_BPF },
	{ SV_POINT_T2A, 1, 0, 0, -1, 3999, 11, SV_TS_BPF },
	{ SV_POINT_T2B, 1, 0, 0, -1, 3999, 21, SV_TS_BPF },
	/* its copy to port 2 (not the one carrying T1) */
	{ SV_POINT_T2A, 2, 0, 0, -1, 3999, 12, SV_TS_BPF },
	{ SV_POINT_T2B, 2, 0, 0, -1, 3999, 22, SV_TS_BPF },
	/* smpCnt 0: dropped after T2a on port 2 */
	{ SV_POINT_T1, NONE, 0, 0, 0, 0, 10, SV_TS_BPF },
	{ SV_POINT_T2A, 2, 0, 0, 0, 0, 12, SV_TS_BPF },
	{ SV_POINT_T2B, 2, DROPPED, PLAIN, 0, 0, 22, SV_TS_BPF },
	/* ... dropped on port 1 before T2a */
	{ SV_POINT_T2A, 1, DROPPED, PLAIN, 0, 0, 11, SV_TS_BPF },
	/* smpCnt 1: at neither port (one event, a mask) */
	{ SV_POINT_T1, NONE, 0, 0, 0, 1, 10, SV_TS_BPF },
	{ SV_POINT_T2A, 1, DROPPED, MISS, 0, 1, 11, SV_TS_NONE },
	{ SV_POINT_T2A, 2, DROPPED, MISS, 0, 1, 12, SV_TS_NONE },
	/* smpCnt 2: late on port 1, carried by a user-space switch */
	{ SV_POINT_T2A, 1, 0, 0, 0, 2, 11, SV_TS_BPF },
	{ SV_POINT_T2B, 1, SV_REC_F_LATE, 0, 0, 2, 21, SV_TS_BPF },
	/* smpCnt 3: never freed on port 2 (the timeout scan) */
	{ SV_POINT_T2A, 2, 0, 0, 0, 3, 12, SV_TS_BPF },
	{ SV_POINT_T2B, 2, DROPPED, MISS, 0, 3, 12, SV_TS_NONE },
	/* smpCnt 4: not freed yet at the stop: T2a only (in flight) */
	{ SV_POINT_T2A, 1, 0, 0, 0, 4, 11, SV_TS_BPF },
};

/* A record file of this test's own (the writer creates it; the test removes it). */
static void rec_path(char *path, size_t size, const char *what)
{
	snprintf(path, size, "%s/svtrace-unit-%s-%d.rec", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", what,
		 (int)getpid());
	unlink(path);
}

static struct svtrace_copy copy(uint8_t type, uint8_t port, uint16_t flags, uint16_t smp, int64_t t1_us)
{
	int64_t t1 = MONO0 + t1_us * US;

	return (struct svtrace_copy){ .type = type, .port = port, .flags = flags, .smpcnt = smp,
				      .t1_ns = (uint64_t)t1, .t2a_ns = (uint64_t)(t1 + 5 * US),
				      .t2b_ns = (uint64_t)(t1 + 20 * US), .ifindex2b = 20u + port,
				      .netns2b = 4026532000u, .tid1 = 100, .tid2a = 101, .tid2b = 102, .cpu2b = 1 };
}

/* The run: the events and the scans' copies of one stream to two guests, then the summaries. */
static void write_run(const char *path, struct tfix *f)
{
	struct sv_clock_xlate to_tai = { .from = CLOCK_MONOTONIC, .to = CLOCK_TAI,
					 .offset_ns = TAI0 * SEC - MONO0 };
	struct sv_record_opts o = { 0 };	/* one file, no floor: the writer's plain behaviour */
	struct svtrace_rec *rec;
	struct svtrace_copy c;
	struct svtrace_late_ev l;
	struct svtrace_track tp;
	struct svtrace_scan sc = { .timeout_ns = 100 * MS };
	struct sv_record_writer_stats st;
	uint64_t refused = 1;

	tfix_init(f, 2, 500 * US, 8, 8, NULL);
	f->svid[0] = "MU01";
	assert_int_equal(svtrace_rec_open(&rec, path, &o, &ports, f->corr, &to_tai), 0);
	tfix_record(f, rec);
	c = copy(SVTRACE_EV_TAKEN, 1, SVTRACE_F_T1_FIRST, 3999, 100);
	tfix_event(f, &c);
	c = copy(SVTRACE_EV_TAKEN, 2, 0, 3999, 100);
	tfix_event(f, &c);
	c = copy(SVTRACE_EV_DROP, 2, SVTRACE_F_T1_FIRST, 0, 350);
	c.reason = PLAIN;
	tfix_event(f, &c);
	c = copy(SVTRACE_EV_PORT_DROP, 1, 0, 0, 350);
	c.t2a_ns = 0;
	c.reason = PLAIN;
	c.ifindex2b = 11;
	tfix_event(f, &c);
	c = copy(SVTRACE_EV_MISSING, 0, SVTRACE_F_T1_FIRST, 1, 600);
	c.reason = (1u << 1) | (1u << 2);
	tfix_event(f, &c);
	/* late: 2 ms T1 -> T2b; the feeder waited 1.5 ms for "hog"; carried by "ovs-vswitchd", which waited
	 * 1 ms for "svsub" between T1 and T2a */
	memset(&l, 0, sizeof(l));
	l.c = copy(SVTRACE_EV_TAKEN, 1, SVTRACE_F_LATE | SVTRACE_F_CARRIED, 2, 850);
	l.c.t2a_ns = l.c.t1_ns + 1200 * US;
	l.c.t2b_ns = l.c.t1_ns + 2000 * US;
	l.c.feeder_tid = 55;
	l.c.wait_ns = 1500 * US;
	l.c.holder_pid = 66;
	l.wait_end_ns = l.c.t2b_ns;
	memcpy(l.feeder_comm, "vhost-4242", 11);
	memcpy(l.holder_comm, "hog", 4);
	memcpy(l.carrier_comm, "ovs-vswitchd", 13);
	memcpy(l.carrier_holder_comm, "svsub", 6);
	l.carrier_wait_ns = 1000 * US;
	l.carrier_wait_end_ns = l.c.t1_ns + 1100 * US;
	l.carrier_holder_pid = 77;
	assert_int_equal(svtrace_events_handle(&f->ev, &l, sizeof(l)), 0);
	/* the timeout scan: a copy of smpCnt 3 never freed (expired), one of smpCnt 4 at the stop (young) */
	tp = (struct svtrace_track){ .port = 2, .smpcnt = 3, .t1_ns = (uint64_t)(MONO0 + 1100 * US),
				     .t2a_ns = (uint64_t)(MONO0 + 1105 * US) };
	svtrace_scan_resolve(&sc, &f->ev, &tp, MONO0 + 500 * MS);
	tp.port = 1;
	tp.smpcnt = 4;
	svtrace_scan_resolve(&sc, &f->ev, &tp, MONO0 + 50 * MS);
	svtrace_rec_summaries(rec, MONO0 - 2 * SEC, MONO0 + 3 * SEC);
	assert_int_equal(svtrace_rec_close(rec, &st, &refused), 0);
	tfix_record(f, NULL);
	assert_int_equal(refused, 0);
	assert_false(sv_record_stats_incomplete(&st));
}

static void test_run_recorded(void **state)
{
	char path[256];
	struct sv_record_reader *r;
	struct sv_rec rec;
	struct tfix f;
	unsigned nev = 0, ndrop = 0, nthread = 0, nsum = 0, nstream = 0, ngone = 0;
	bool named_missing = false, named_plain = false, named_guest[3] = { 0 }, named_if[3] = { 0 };

	(void)state;
	rec_path(path, sizeof(path), "run");
	write_run(path, &f);
	assert_int_equal(sv_record_reader_open(&r, path), 0);
	assert_string_equal(sv_record_reader_header(r)->tool, "svtrace");
	assert_int_equal(sv_record_reader_header(r)->clock, SV_CLOCK_TAI);
	while (sv_record_reader_next(r, &rec) == 1) {
		switch (rec.kind) {
		case SV_REC_STREAM:
			/* at its first copy, then with the rate its wrap taught (3999 -> 0) */
			assert_int_equal(rec.u.stream.stream, 0);
			assert_int_equal(rec.u.stream.appid, 0x4000);
			assert_string_equal(rec.u.stream.svid, "MU01");
			assert_int_equal(rec.u.stream.sample_rate, nstream ? 4000 : 0);
			nstream++;
			break;
		case SV_REC_NAME:
			if (rec.u.name.name_kind == SV_REC_NAME_DROP_REASON) {
				named_missing |= rec.u.name.id == MISS && !strcmp(rec.u.name.name, "missing");
				named_plain |= rec.u.name.id == PLAIN && !strcmp(rec.u.name.name, "unknown");
			} else if (rec.u.name.name_kind == SV_REC_NAME_GUEST) {
				assert_true(rec.u.name.id >= 1 && rec.u.name.id <= 2);
				assert_string_equal(rec.u.name.name, ports.port[rec.u.name.id].name);
				named_guest[rec.u.name.id] = true;
			} else if (rec.u.name.name_kind == SV_REC_NAME_IFINDEX) {
				assert_true(rec.u.name.id >= 10 && rec.u.name.id <= 12);
				assert_string_equal(rec.u.name.name, ports.port[rec.u.name.id - 10].name);
				named_if[rec.u.name.id - 10] = true;
			}
			break;
		case SV_REC_EVENT: {
			const struct want_ev *w = &want_events[nev];

			print_message("  event %u: %s guest %u\n", nev, sv_point_name(rec.u.event.point),
				      rec.u.event.guest);
			assert_true(nev < sizeof(want_events) / sizeof(want_events[0]));
			assert_int_equal(rec.u.event.point, w->point);
			assert_int_equal(rec.u.event.guest, w->guest);
			assert_int_equal(rec.u.event.flags, w->flags);
			assert_int_equal(rec.u.event.reason, w->reason);
			assert_int_equal(rec.u.event.tai_sec, TAI0 + w->tai_sec);
			assert_int_equal(rec.u.event.smp_cnt, w->smp);
			assert_int_equal(rec.u.event.ifindex, w->ifindex);
			assert_int_equal(rec.u.event.ts_src, w->ts_src);
			assert_int_equal(rec.u.event.stream, 0);
			/* on TAI: the copies' times are within their second */
			assert_true(rec.u.event.t_ns >= TAI0 * SEC && rec.u.event.t_ns < (TAI0 + 1) * SEC);
			nev++;
			break;
		}
		case SV_REC_DROP:
			assert_int_equal(rec.u.drop.reason, PLAIN);
			assert_string_equal(rec.u.drop.reason_name, "unknown");
			assert_int_equal(rec.u.drop.point, ndrop ? SV_POINT_T2A : SV_POINT_T2B);
			assert_int_equal(rec.u.drop.guest, ndrop ? 1 : 2);
			ndrop++;
			break;
		case SV_REC_THREAD:
			/* the feeder at T2b, its wait clipped to the hop; then the carrier at T2a */
			assert_int_equal(rec.u.thread.smp_cnt, 2);
			assert_int_equal(rec.u.thread.guest, 1);
			assert_int_equal(rec.u.thread.ifindex, 11);
			if (!nthread) {
				assert_int_equal(rec.u.thread.point, SV_POINT_T2B);
				assert_string_equal(rec.u.thread.feeder_comm, "vhost-4242");
				assert_string_equal(rec.u.thread.holder_comm, "hog");
				assert_int_equal(rec.u.thread.holder_pid, 66);
				assert_int_equal(rec.u.thread.wait_ns, 1500 * US);
				assert_int_equal(rec.u.thread.cause, SV_WAIT_RUNQUEUE);
			} else {
				assert_int_equal(rec.u.thread.point, SV_POINT_T2A);
				assert_string_equal(rec.u.thread.feeder_comm, "ovs-vswitchd");
				assert_string_equal(rec.u.thread.holder_comm, "svsub");
				assert_int_equal(rec.u.thread.holder_pid, 77);
				assert_int_equal(rec.u.thread.wait_ns, 1000 * US);
				assert_int_equal(rec.u.thread.t_ns, TAI0 * SEC + 950 * US);
			}
			nthread++;
			break;
		case SV_REC_SUMMARY:
			/* the whole run, from its first TAI second, 5 s long */
			assert_int_equal(rec.u.summary.tai_sec, TAI0 - 2);
			assert_int_equal(rec.u.summary.period_ms, 5000);
			if (rec.u.summary.guest == 2 && rec.u.summary.from_point == SV_POINT_T1 &&
			    rec.u.summary.point == SV_POINT_T2B) {
				assert_int_equal(rec.u.summary.frames, 1);	/* taken */
				assert_int_equal(rec.u.summary.dropped, 1);
				assert_int_equal(rec.u.summary.lost, 2);	/* at neither port; never freed */
				ngone++;
			}
			if (rec.u.summary.guest == 1 && rec.u.summary.from_point == SV_POINT_T1 &&
			    rec.u.summary.point == SV_POINT_T2A) {
				assert_int_equal(rec.u.summary.frames, 3);	/* taken, late, in flight */
				assert_int_equal(rec.u.summary.dropped, 1);
				assert_int_equal(rec.u.summary.lost, 1);
				ngone++;
			}
			nsum++;
			break;
		default:
			break;
		}
	}
	sv_record_reader_close(r);
	unlink(path);
	assert_int_equal(nev, sizeof(want_events) / sizeof(want_events[0]));
	assert_int_equal(nstream, 2);
	assert_int_equal(ndrop, 2);
	assert_int_equal(nthread, 2);
	assert_int_equal(nsum, 2 * SVTRACE_HOP_NR);
	assert_int_equal(ngone, 2);
	assert_true(named_missing && named_plain);
	assert_true(named_guest[1] && named_guest[2]);
	assert_true(named_if[0] && named_if[1] && named_if[2]);
	tfix_free(&f);
}

/* The rate learned from the copies goes into the record: the stream is defined again with it, and with
 * the VLAN its copies carry. A record that is not open takes nothing (no --record). */
static void test_stream_definition(void **state)
{
	struct sv_clock_xlate to_tai = { .from = CLOCK_MONOTONIC, .to = CLOCK_TAI, .offset_ns = 0 };
	struct svtrace_copy c = { .type = SVTRACE_EV_TAKEN, .port = 1, .vlan_tci = 0x6005 };
	struct sv_record_reader *r;
	struct svtrace_rec *rec;
	struct sv_record_opts o = { 0 };	/* one file, no floor: the writer's plain behaviour */
	struct sv_rec out;
	struct tfix f;
	char path[256];
	unsigned n = 0;

	(void)state;
	rec_path(path, sizeof(path), "rate");
	tfix_init(&f, 2, 0, 0, 8, NULL);
	f.svid[0] = "MU01";
	assert_int_equal(svtrace_rec_open(&rec, path, &o, &ports, f.corr, &to_tai), 0);
	tfix_record(&f, rec);
	for (uint32_t k = 0; k < 4800 + 10; k++) {
		c.smpcnt = (uint16_t)(k % 4800);
		c.t1_ns = c.t2a_ns = c.t2b_ns = (uint64_t)(k + 1) * 208 * US;
		tfix_event(&f, &c);
	}
	assert_int_equal(svtrace_rec_close(rec, NULL, NULL), 0);
	tfix_record(&f, NULL);
	assert_int_equal(sv_record_reader_open(&r, path), 0);
	while (sv_record_reader_next(r, &out) == 1) {
		if (out.kind != SV_REC_STREAM)
			continue;
		/* first unknown and untagged (defined before its first copy), then the learned rate */
		assert_int_equal(out.u.stream.sample_rate, n ? 4800 : 0);
		assert_int_equal(out.u.stream.smp_wrap, n ? 4800 : 0);
		assert_int_equal(out.u.stream.vlan, n ? 5 : 0xFFFF);
		n++;
	}
	sv_record_reader_close(r);
	unlink(path);
	assert_int_equal(n, 2);
	/* no record: nothing written, nothing fails */
	svtrace_rec_stream(NULL, 0, 0, 4000);
	svtrace_rec_copy(NULL, 0, 4000, &c, SVTRACE_COPY_TAKEN);
	svtrace_rec_port_name(NULL, 1);
	svtrace_rec_summaries(NULL, 0, 1);
	svtrace_rec_tick(NULL, 1);
	assert_int_equal(svtrace_rec_close(NULL, NULL, NULL), 0);
	/* a record that cannot be created is said and refused */
	assert_int_not_equal(svtrace_rec_open(&rec, "/nonexistent/dir/x.rec", &o, &ports, f.corr, &to_tai), 0);
	tfix_free(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_recorded),
		cmocka_unit_test(test_stream_definition),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: Apache-2.0
/*
 * svsub's records: the bundled real capture through the svsub pipeline with a recorder, read back with the
 * record reader: one T3 event per sample, the join key (stream, second, smpCnt) exact, the stream table
 * carrying the svID, and T4 events only when an application clock is given.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "sv_pcap.h"
#include "sv_record.h"
#include "svsub_proc.h"
#include "svsub_rec.h"

static const char *capture(void)
{
	static char path[1024];
	const char *src = getenv("SVKIT_SRC");

	snprintf(path, sizeof(path), "%s/tests/data/sv92le_omicron_50hz_fault_Z1_seapath.pcap", src ? src : ".");
	return path;
}

/* Capture @cap through the svsub pipeline into a recorder configured by @rc (closed on return); frame @dup
 * (an index, or 0 for none) is fed twice. With rc->app_points, T4 is read on CLOCK_REALTIME. */
static void pipe_capture_dup(const char *cap, const struct svsub_rec_cfg *rc, uint64_t dup)
{
	struct svsub_proc_cfg pc = { 0 };
	struct sv_pcap_reader *r;
	struct svsub_proc *p;
	struct svsub_rec *rec;
	struct sv_pcap_pkt pkt;

	assert_int_equal(sv_pcap_open_read(&r, cap), 0);
	assert_int_equal(svsub_rec_open(&rec, rc), 0);
	pc.rec = rec;
	pc.app_clock = rc->app_points ? SV_CLOCK_REALTIME : -1;
	assert_int_equal(svsub_proc_create(&p, &pc), 0);
	while (sv_pcap_next(r, &pkt) == 1) {
		struct svsub_frame f = { .data = pkt.data, .len = pkt.caplen, .index = pkt.index, .rx_ns = pkt.ts_ns };

		assert_true(svsub_proc_frame(p, &f) >= 0);
		if (dup && pkt.index == dup)
			assert_true(svsub_proc_frame(p, &f) >= 0);
	}
	svsub_proc_destroy(p);
	sv_pcap_close_read(r);
	assert_int_equal(svsub_rec_close(rec, NULL), 0);
}

static void pipe_capture(const char *cap, const struct svsub_rec_cfg *rc)
{
	pipe_capture_dup(cap, rc, 0);
}

static void run(const char *rec_path, bool app_points, uint64_t *t3, uint64_t *t4, uint32_t *bad_key)
{
	struct svsub_rec_cfg rc = { .path = rec_path, .clock = SV_CLOCK_REALTIME, .rx_ts_src = SV_TS_SOFTWARE,
				    .app_points = app_points };
	struct sv_record_reader *rd;
	struct sv_rec ev;
	int expect_cnt = -1, n;

	pipe_capture(capture(), &rc);

	*t3 = *t4 = 0;
	*bad_key = 0;
	assert_int_equal(sv_record_reader_open(&rd, rec_path), 0);
	while ((n = sv_record_reader_next(rd, &ev)) == 1) {
		const struct sv_rec_stream *s;

		if (ev.kind != SV_REC_EVENT)
			continue;
		s = sv_record_reader_stream(rd, ev.u.event.stream);
		assert_non_null(s);
		assert_string_equal(s->svid, "AA1J1Q01A1MU0102");
		assert_int_equal(s->appid, 0x4000);
		if (ev.u.event.point == SV_POINT_T3) {
			(*t3)++;
			/* smpCnt continuous across the wraps at 4000 in this capture */
			if (expect_cnt >= 0 && ev.u.event.smp_cnt != expect_cnt)
				(*bad_key)++;
			expect_cnt = (ev.u.event.smp_cnt + 1) % 4000;
			/* synchronised stream: t2 is the sample time and its second is the join key */
			if (ev.u.event.t2_kind != SV_T2_SAMPLE ||
			    ev.u.event.tai_sec != (uint32_t)(ev.u.event.t2_ns / 1000000000) ||
			    ev.u.event.t_ns <= ev.u.event.t2_ns)
				(*bad_key)++;
		} else if (ev.u.event.point == SV_POINT_T4) {
			(*t4)++;
		}
	}
	assert_int_equal(n, 0);
	assert_true(sv_record_reader_clean_end(rd));
	sv_record_reader_close(rd);
}

static void test_records_of_capture(void **state)
{
	char path[] = "/tmp/svkit-test-subrec-XXXXXX";
	uint64_t t3, t4;
	uint32_t bad;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	run(path, false, &t3, &t4, &bad);
	assert_int_equal(t3, 12000);
	assert_int_equal(t4, 0); /* no application clock offline: no T4 */
	assert_int_equal(bad, 0);
	unlink(path);
}

/* A 9-2LE stream that states no smpRate (the DINA capture, 60 Hz, 4800 samples/s): once svsub has learned
 * the wrap, the record's stream table says the rate (svreport times the samples with it) and the events
 * carry the sample's time. */
static void test_records_learned_rate(void **state)
{
	const char *shared = getenv("SVKIT_SHARED");
	char cap[1024], path[] = "/tmp/svkit-test-subrec-XXXXXX";
	struct svsub_rec_cfg rc = { .path = path, .clock = SV_CLOCK_REALTIME, .rx_ts_src = SV_TS_SOFTWARE };
	struct sv_record_reader *rd;
	struct sv_rec ev;
	uint64_t sample = 0, events = 0;
	int fd, n;

	(void)state;
	snprintf(cap, sizeof(cap), "%s/captures/sv92le_60hz_vlan1_normal_dina.pcap", shared ? shared : "../shared");
	if (access(cap, R_OK)) {
		print_message("%s: not readable: skipped\n", cap);
		skip();
	}
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	pipe_capture(cap, &rc);
	assert_int_equal(sv_record_reader_open(&rd, path), 0);
	while ((n = sv_record_reader_next(rd, &ev)) == 1) {
		if (ev.kind != SV_REC_EVENT || ev.u.event.point != SV_POINT_T3)
			continue;
		events++;
		sample += ev.u.event.t2_kind == SV_T2_SAMPLE;
	}
	assert_int_equal(n, 0);
	assert_non_null(sv_record_reader_stream(rd, 0));
	assert_int_equal(sv_record_reader_stream(rd, 0)->sample_rate, 4800);
	/* every sample after the first wrap (less than a second of the capture's 10161) is timed */
	assert_true(events > 0 && sample > events - 4800);
	sv_record_reader_close(rd);
	unlink(path);
}

/* T4 is the application getting the sample: a duplicate (the tracker withholds it from the application) has
 * its T3 and no T4; every accepted sample has both. */
static void test_records_t4_accepted_only(void **state)
{
	char path[] = "/tmp/svkit-test-subrec-XXXXXX";
	struct svsub_rec_cfg rc = { .path = path, .clock = SV_CLOCK_REALTIME, .rx_ts_src = SV_TS_SOFTWARE,
				    .app_points = true };
	struct sv_record_reader *rd;
	struct sv_rec ev;
	uint64_t t3 = 0, t4 = 0;
	int fd, n;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	pipe_capture_dup(capture(), &rc, 100);
	assert_int_equal(sv_record_reader_open(&rd, path), 0);
	while ((n = sv_record_reader_next(rd, &ev)) == 1) {
		if (ev.kind != SV_REC_EVENT)
			continue;
		t3 += ev.u.event.point == SV_POINT_T3;
		t4 += ev.u.event.point == SV_POINT_T4;
	}
	assert_int_equal(n, 0);
	sv_record_reader_close(rd);
	assert_int_equal(t3, 12001);
	assert_int_equal(t4, 12000);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_records_of_capture),
		cmocka_unit_test(test_records_learned_rate),
		cmocka_unit_test(test_records_t4_accepted_only),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

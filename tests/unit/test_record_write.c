// SPDX-License-Identifier: Apache-2.0
/* sv_record writer on a full disk and its time bounds: blocks that cannot be written are dropped and
 * counted exactly (records, events, frames per point), the definitions they held are written again, the
 * UNWRITTEN record that follows says what and where (sample times of the missing events), END counts
 * them; a part whose header found no room starts when room returns; sv_record_tick writes a partial
 * block after the flush period and syncs after the sync period. The full disk is RLIMIT_FSIZE here (no
 * privileges needed: write(2) fails with EFBIG past it); tests/fault/record_full_disk.sh fills a real
 * tmpfs (ENOSPC, the space reserve, the free-space floor). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "sv_record.h"
#include "unit_fsize.h"
#include "unit_tmpdir.h"

#define RATE 4000u
#define SEC0 1700000000u

UNIT_TMPDIR("svrecw-test")

static const char *path_of(const char *name)
{
	static char buf[128];

	snprintf(buf, sizeof(buf), "%s/%s", dir, name);
	return buf;
}

static off_t file_size(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_size;
}

static struct sv_record_writer *open_writer(const char *path, int64_t flush_ns, int64_t sync_ns)
{
	static const struct sv_clock_sync sync = { .status = 0x2001, .tai_offset_s = 37 };
	struct sv_record_writer_cfg cfg = {
		.path = path,
		.tool = "svtest",
		.clock = SV_CLOCK_TAI,
		.block_bytes = SV_REC_BLOCK_MIN,
		.flush_ns = flush_ns,
		.sync_ns = sync_ns,
		.sync = &sync,
		.host = "h",
	};
	struct sv_record_writer *w;

	assert_int_equal(sv_record_writer_open(&w, &cfg), 0);
	return w;
}

static void define(struct sv_record_writer *w, uint32_t idx, uint32_t conf_rev)
{
	struct sv_rec_stream s;

	memset(&s, 0, sizeof(s));
	s.stream = idx;
	s.appid = (uint16_t)(0x4000 + idx);
	s.asdus = 1;
	s.sample_rate = RATE;
	s.conf_rev = conf_rev;
	s.vlan = 0xFFFF;
	s.smp_synch = 2;
	s.smp_wrap = RATE;
	snprintf(s.svid, sizeof(s.svid), "MU%02u", idx);
	assert_int_equal(sv_record_define_stream(w, &s), 0);
}

static int64_t ts_of(uint32_t seq)
{
	return sv_sample_time_ns(SEC0 + seq / RATE, seq % RATE, RATE);
}

/* Event @seq of stream seq % 2 at point T3 (and, for odd seq, an ASDU 1 event too: not a frame). */
static int put(struct sv_record_writer *w, uint32_t seq, unsigned point, unsigned asdu)
{
	struct sv_rec_event e;

	memset(&e, 0, sizeof(e));
	e.point = (uint8_t)point;
	e.stream = seq % 2;
	e.tai_sec = SEC0 + seq / RATE;
	e.smp_cnt = (uint16_t)(seq % RATE);
	e.t_ns = ts_of(seq) + 50000;
	e.ts_src = SV_TS_SOFTWARE;
	e.guest = SV_REC_GUEST_NONE;
	e.asdu = (uint8_t)asdu;
	e.nasdu = 2;
	e.seq = seq;
	return sv_record_write_event(w, &e);
}

struct readback {
	uint64_t events, frames_t3, frames_t4;
	uint32_t first_missing, last_missing; /* seq range of the T3 frames absent (UINT32_MAX: none) */
	unsigned nunwritten;
	struct sv_rec_unwritten u[4];
	bool end;
	struct sv_rec_end e;
	uint32_t conf_rev1; /* stream 1's conf_rev as the file defines it at its end */
	int ret;
};

static void read_back(const char *path, uint32_t nseq, struct readback *rb)
{
	struct sv_record_reader *r;
	struct sv_rec rec;
	uint8_t *seen = calloc(nseq, 1);
	int ret;

	memset(rb, 0, sizeof(*rb));
	assert_non_null(seen);
	assert_int_equal(sv_record_reader_open(&r, path), 0);
	while ((ret = sv_record_reader_next(r, &rec)) > 0) {
		if (rec.kind == SV_REC_EVENT) {
			rb->events++;
			if (rec.u.event.asdu == 0 && rec.u.event.point == SV_POINT_T3) {
				rb->frames_t3++;
				assert_true(rec.u.event.seq < nseq);
				seen[rec.u.event.seq] = 1;
			}
			if (rec.u.event.asdu == 0 && rec.u.event.point == SV_POINT_T4)
				rb->frames_t4++;
		} else if (rec.kind == SV_REC_UNWRITTEN) {
			assert_true(rb->nunwritten < 4);
			rb->u[rb->nunwritten++] = rec.u.unwritten;
		} else if (rec.kind == SV_REC_END) {
			rb->end = true;
			rb->e = rec.u.end;
		}
	}
	rb->ret = ret;
	if (sv_record_reader_stream(r, 1))
		rb->conf_rev1 = sv_record_reader_stream(r, 1)->conf_rev;
	sv_record_reader_close(r);
	rb->first_missing = rb->last_missing = UINT32_MAX;
	for (uint32_t i = 0; i < nseq; i++) {
		if (seen[i])
			continue;
		if (rb->first_missing == UINT32_MAX)
			rb->first_missing = i;
		rb->last_missing = i;
	}
	free(seen);
}

/* A full disk for a while in the middle of a run, then room again: exact counts, one UNWRITTEN record
 * right where the gap is, the stream redefined inside the gap still defined after it, END's count. */
static void test_gap_counted_exactly(void **state)
{
	const char *path = path_of("gap.svrec");
	struct sv_record_writer_stats st;
	struct sv_record_writer *w = open_writer(path, 0, 0);
	struct readback rb;
	uint32_t seq = 0, gap_from, gap_to, written_t3;

	(void)state;
	define(w, 0, 1);
	define(w, 1, 1);
	for (; seq < 3000; seq++) {
		assert_int_equal(put(w, seq, SV_POINT_T3, 0), 0);
		assert_int_equal(put(w, seq, SV_POINT_T4, 0), 0);
	}
	assert_int_equal(sv_record_flush(w), 0);
	fsize_limit((rlim_t)file_size(path)); /* full */
	gap_from = seq;
	for (; seq < 9000; seq++) {
		if (seq == 5000)
			define(w, 1, 2); /* a confRev change inside the gap: must not be lost */
		put(w, seq, SV_POINT_T3, 0);
		if (seq % 2)
			put(w, seq, SV_POINT_T3, 1); /* a second ASDU: an event, not a frame */
		put(w, seq, SV_POINT_T4, 0);
	}
	/* the block being filled when room returns still reaches the disk: the gap ends at the last drop */
	sv_record_writer_get_stats(w, &st);
	assert_true(st.write_errors >= 2);
	assert_true(st.pending);
	assert_int_equal(st.last_errno, EFBIG);
	assert_int_equal(st.stretches, 1);
	fsize_limit(RLIM_INFINITY);
	for (; seq < 12000; seq++) {
		assert_int_equal(put(w, seq, SV_POINT_T3, 0), 0);
		assert_int_equal(put(w, seq, SV_POINT_T4, 0), 0);
	}
	assert_int_equal(sv_record_writer_close_stats(w, &st), 0);
	assert_false(st.pending);
	assert_true(sv_record_stats_incomplete(&st));

	read_back(path, seq, &rb);
	assert_int_equal(rb.ret, 0); /* no stream_undefined after the gap, END reads */
	assert_true(rb.end);
	assert_int_equal(rb.conf_rev1, 2);
	assert_int_equal(rb.nunwritten, 1);
	gap_to = rb.last_missing;
	/* the frames missing are exactly one run inside the gap's writes, as counted */
	assert_true(rb.first_missing >= gap_from && gap_to < 9000);
	written_t3 = (uint32_t)rb.frames_t3;
	assert_int_equal(written_t3 + (gap_to - rb.first_missing + 1), seq);
	assert_int_equal(st.lost_frames[SV_POINT_T3], gap_to - rb.first_missing + 1);
	assert_int_equal(rb.frames_t4 + st.lost_frames[SV_POINT_T4], seq);
	assert_int_equal(rb.events + st.lost_events, 2 * seq + (9000 - gap_from) / 2);
	/* what was lost: events plus nothing else (the STREAM record written again is not counted) */
	assert_int_equal(st.lost_records, st.lost_events);
	assert_int_equal(rb.u[0].records, st.lost_records);
	assert_int_equal(rb.u[0].events, st.lost_events);
	assert_int_equal(rb.u[0].total, st.lost_records);
	assert_int_equal(rb.u[0].frames[SV_POINT_T3], st.lost_frames[SV_POINT_T3]);
	assert_int_equal(rb.u[0].frames[SV_POINT_T4], st.lost_frames[SV_POINT_T4]);
	assert_int_equal(rb.u[0].err, EFBIG);
	assert_int_equal(rb.u[0].blocks, st.write_errors);
	/* where: the sample times of the first and last frames missing, and their own times */
	assert_int_equal(rb.u[0].ts_min_ns, ts_of(rb.first_missing));
	assert_int_equal(rb.u[0].ts_max_ns, ts_of(gap_to));
	assert_int_equal(rb.u[0].t_min_ns, ts_of(rb.first_missing) + 50000);
	assert_true(rb.u[0].t_first_ns <= rb.u[0].t_last_ns);
	assert_int_equal(rb.e.lost_records, st.lost_records);
}

/* The disk stays full to the end: without a reserve (a size limit is not a full disk: fallocate cannot
 * help) the stretch is counted in the stats, said pending, and the file reads up to its last block. */
static void test_full_to_the_end(void **state)
{
	const char *path = path_of("tail.svrec");
	struct sv_record_writer_stats st;
	struct sv_record_writer *w = open_writer(path, 0, 0);
	struct readback rb;
	uint32_t seq;

	(void)state;
	define(w, 0, 1);
	define(w, 1, 1);
	for (seq = 0; seq < 2000; seq++)
		put(w, seq, SV_POINT_T3, 0);
	assert_int_equal(sv_record_flush(w), 0);
	fsize_limit((rlim_t)file_size(path));
	for (; seq < 6000; seq++)
		put(w, seq, SV_POINT_T3, 0);
	assert_int_equal(sv_record_writer_close_stats(w, &st), -EFBIG);
	fsize_limit(RLIM_INFINITY);
	assert_true(st.pending);
	assert_int_equal(st.lost_frames[SV_POINT_T3], 4000);
	assert_int_equal(st.lost_records, 4000);
	read_back(path, seq, &rb);
	assert_int_equal(rb.ret, 0);
	assert_false(rb.end);
	assert_int_equal(rb.frames_t3, 2000);
	assert_int_equal(rb.first_missing, 2000);
}

/* No room for the header at open: not a failure. The header goes with the first block that fits, after
 * the UNWRITTEN record of what came before and the definitions. */
static void test_header_when_room_returns(void **state)
{
	const char *path = path_of("late-header.svrec");
	struct sv_record_writer_stats st;
	struct sv_record_writer *w;
	struct readback rb;
	uint32_t seq;

	(void)state;
	unlink(path);
	fsize_limit(0);
	w = open_writer(path, 0, 0);
	assert_int_equal(file_size(path), 0);
	define(w, 0, 1);
	define(w, 1, 1);
	for (seq = 0; seq < 3000; seq++)
		put(w, seq, SV_POINT_T3, 0);
	fsize_limit(RLIM_INFINITY);
	for (; seq < 4000; seq++)
		put(w, seq, SV_POINT_T3, 0);
	assert_int_equal(sv_record_writer_close_stats(w, &st), 0);
	read_back(path, seq, &rb);
	assert_int_equal(rb.ret, 0);
	assert_true(rb.end);
	assert_int_equal(rb.nunwritten, 1);
	assert_int_equal(rb.frames_t3 + st.lost_frames[SV_POINT_T3], 4000);
	assert_int_equal(rb.first_missing, 0);
	assert_int_equal(rb.u[0].records, st.lost_records);
}

/* The flush period: a partial block waits at most flush_ns of ticks (a killed writer loses no more), no
 * write while it is not due; the sync period fdatasyncs only after blocks were written. */
static void test_tick_bounds(void **state)
{
	const char *path = path_of("tick.svrec");
	struct sv_record_writer_stats st;
	struct sv_record_writer *w = open_writer(path, 1000, 5000);
	off_t head;
	uint32_t seq;

	(void)state;
	define(w, 0, 1);
	define(w, 1, 1);
	assert_int_equal(sv_record_tick(w, 100), 0); /* the definitions wait from here */
	assert_int_equal(sv_record_tick(w, 1099), 0);
	head = file_size(path);
	assert_int_equal(head, SV_REC_HEADER_SIZE);
	assert_int_equal(sv_record_tick(w, 1100), 0);
	assert_true(file_size(path) > head);
	head = file_size(path);
	for (seq = 0; seq < 10; seq++)
		put(w, seq, SV_POINT_T3, 0);
	sv_record_tick(w, 2000); /* records seen: their wait starts */
	sv_record_tick(w, 2999);
	assert_int_equal(file_size(path), head);
	sv_record_tick(w, 3000);
	assert_int_equal(file_size(path), head + 16 + 10 * 64);
	sv_record_writer_get_stats(w, &st);
	assert_int_equal(st.timed_flushes, 2);
	assert_int_equal(st.syncs, 1); /* at 1100, after the first block; at 3000 within 5000 of it */
	sv_record_tick(w, 6099);
	sv_record_writer_get_stats(w, &st);
	assert_int_equal(st.syncs, 1);
	sv_record_tick(w, 6100); /* nothing waits: nothing written, but the block of 3000 is synced */
	assert_int_equal(file_size(path), head + 16 + 10 * 64);
	sv_record_writer_get_stats(w, &st);
	assert_int_equal(st.timed_flushes, 2);
	assert_int_equal(st.syncs, 2);
	sv_record_tick(w, 20000); /* nothing written since: no sync */
	sv_record_writer_get_stats(w, &st);
	assert_int_equal(st.syncs, 2);
	assert_int_equal(sv_record_writer_close_stats(w, &st), 0);
	assert_false(sv_record_stats_incomplete(&st));
	sv_record_tick(NULL, 0); /* no writer: nothing */
}

/* The reserve: on a filesystem with fallocate the part keeps room past its end, and gives it back when it
 * ends (a closed file holds only its own blocks). */
static void test_reserve_released(void **state)
{
	const char *path = path_of("reserve.svrec");
	struct sv_record_writer_stats st;
	struct sv_record_writer *w = open_writer(path, 0, 0);
	struct stat sb;
	uint32_t seq;

	(void)state;
	define(w, 0, 1);
	sv_record_writer_get_stats(w, &st);
	if (!st.reserve) {
		sv_record_writer_close(w);
		print_message("no fallocate on %s: skipped\n", dir);
		skip();
	}
	assert_int_equal(stat(path, &sb), 0);
	assert_true((uint64_t)sb.st_blocks * 512 >= SV_REC_BLOCK_MIN); /* allocated past its 256 octets */
	for (seq = 0; seq < 100; seq++)
		put(w, seq, SV_POINT_T3, 0);
	assert_int_equal(sv_record_writer_close_stats(w, &st), 0);
	assert_int_equal(stat(path, &sb), 0);
	assert_true((uint64_t)sb.st_blocks * 512 < (uint64_t)sb.st_size + 8192);
}

/* The summary line says what a person needs: how many of how many, why (errno name), where they are. */
static void test_stats_format(void **state)
{
	struct sv_record_writer_stats st;
	char buf[512];

	(void)state;
	memset(&st, 0, sizeof(st));
	st.records = 20000;
	st.blocks = 5;
	st.parts = 1;
	st.rotate_keep = 16;
	sv_record_stats_format(&st, buf, sizeof(buf));
	assert_non_null(strstr(buf, "every record written"));
	st.lost_records = 1234;
	st.lost_events = 1200;
	st.lost_frames[SV_POINT_T0] = 1200;
	st.stretches = 2;
	st.write_errors = 5;
	st.first_errno = st.last_errno = ENOSPC;
	sv_record_stats_format(&st, buf, sizeof(buf));
	assert_non_null(strstr(buf, "1234 of 20000 records NOT WRITTEN"));
	assert_non_null(strstr(buf, "T0 1200 frames"));
	assert_non_null(strstr(buf, "ENOSPC"));
	assert_non_null(strstr(buf, "each stretch is in the file"));
	st.pending = true;
	sv_record_stats_format(&st, buf, sizeof(buf));
	assert_non_null(strstr(buf, "NOT in the file"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gap_counted_exactly),   cmocka_unit_test(test_full_to_the_end),
		cmocka_unit_test(test_header_when_room_returns), cmocka_unit_test(test_tick_bounds),
		cmocka_unit_test(test_reserve_released),      cmocka_unit_test(test_stats_format),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

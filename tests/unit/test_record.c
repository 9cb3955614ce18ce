// SPDX-License-Identifier: Apache-2.0
/* sv_record: write -> read round trip of every kind, blocks, rotation (keep N, each part alone),
 * truncated and corrupted files give the named error at the right offset, CSV export. */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "sv_log.h"
#include "sv_record.h"
#include "sv_stats.h"
#include "unit_rec.h"
#include "unit_tmpdir.h"

UNIT_TMPDIR("svrec-test")

static char *path_of(const char *name)
{
	static char buf[4][128];
	static int n;

	n = (n + 1) % 4;
	snprintf(buf[n], sizeof(buf[n]), "%s/%s", dir, name);
	return buf[n];
}

static struct sv_clock_sync fixed_sync(void)
{
	struct sv_clock_sync s;

	memset(&s, 0, sizeof(s));
	s.status = 0x2001;
	s.tai_offset_s = 37;
	s.maxerror_ns = 16000;
	s.esterror_ns = 1000;
	return s;
}

static struct sv_record_writer *open_writer(const char *path, uint32_t block, uint64_t rot, uint32_t keep)
{
	struct sv_clock_sync sync = fixed_sync();
	struct sv_record_writer_cfg cfg = {
		.path = path,
		.tool = "svtest",
		.tool_version = "9.9",
		.clock = SV_CLOCK_TAI,
		.block_bytes = block,
		.rotate_bytes = rot,
		.rotate_keep = keep,
		.sync = &sync,
		.host = "host,with\"comma",
	};
	struct sv_record_writer *w;

	assert_int_equal(sv_record_writer_open(&w, &cfg), 0);
	return w;
}

static void make_stream(struct sv_rec_stream *s, uint32_t idx, const char *svid)
{
	memset(s, 0, sizeof(*s));
	s->stream = idx;
	s->appid = 0x4000 + (uint16_t)idx;
	s->asdus = 2;
	s->sample_rate = 4800;
	s->conf_rev = 1;
	s->vlan = 0xFFFF;
	s->smp_synch = 2;
	s->smp_wrap = 4800;
	memcpy(s->dst_mac, "\x01\x0c\xcd\x04\x00\x01", 6);
	strcpy(s->svid, svid);
}

static void make_event(struct sv_rec_event *e, uint32_t stream, uint32_t seq)
{
	memset(e, 0, sizeof(*e));
	e->point = SV_POINT_T3;
	e->stream = stream;
	e->tai_sec = 1700000000u + seq / 2400;
	e->smp_cnt = (uint16_t)((seq % 2400) * 2);
	e->t_ns = sv_sample_time_ns(e->tai_sec, e->smp_cnt, 4800) + 31000 + seq % 100;
	e->t2_ns = e->t_ns - 500;
	e->ts_src = SV_TS_XDP_META;
	e->t2_kind = SV_T2_SOFTWARE;
	e->ifindex = 7;
	e->netns = 4026531840u;
	e->guest = 3;
	e->flags = (seq % 10 == 0) ? SV_REC_F_LATE | SV_REC_F_GAP : 0;
	e->cpu = 1;
	e->tid = 4242;
	e->nasdu = 2;
	e->frame_len = 250;
	e->quality = 0x2000;
	e->seq = seq;
}

static void test_roundtrip_all_kinds(void **state)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/all.svrec", dir);
	struct sv_record_writer *w = open_writer(path, 0, 0, 0);
	struct sv_rec_stream s0, s1;
	struct sv_rec_name nm;
	struct sv_rec_event ev;
	struct sv_rec_summary sum;
	struct sv_rec_hist hh;
	struct sv_rec_drop dr;
	struct sv_rec_thread th;
	struct sv_clock_sync sync = fixed_sync();
	struct sv_stats *h = malloc(sizeof(*h)), *h2 = malloc(sizeof(*h2));
	struct sv_record_reader *r;
	struct sv_rec rec;
	char long_id[130];
	int i, n = 0;

	(void)state;
	assert_non_null(h);
	assert_non_null(h2);
	memset(long_id, 'x', 129);
	long_id[129] = '\0';
	make_stream(&s0, 0, "MU01,\"quoted\"");
	make_stream(&s1, 5, long_id);
	assert_int_equal(sv_record_define_stream(w, &s0), 0);
	assert_int_equal(sv_record_define_stream(w, &s1), 0);
	memset(&nm, 0, sizeof(nm));
	nm.name_kind = SV_REC_NAME_IFINDEX;
	nm.id = 7;
	nm.netns = 4026531840u;
	strcpy(nm.name, "veth-g3");
	assert_int_equal(sv_record_define_name(w, &nm), 0);
	make_event(&ev, 5, 77);
	assert_int_equal(sv_record_write_event(w, &ev), 0);

	sv_stats_init(h);
	for (i = 0; i < 4800; i++)
		sv_stats_add(h, 20000 + i * 3);
	memset(&sum, 0, sizeof(sum));
	sum.point = SV_POINT_T3;
	sum.from_point = SV_POINT_TS;
	sum.stream = 0;
	sum.guest = 3;
	sum.tai_sec = 1700000001;
	sum.period_ms = 1000;
	sum.frames = 2400;
	sum.samples = 4800;
	sum.lost = 2;
	sv_rec_summary_fill(&sum, h);
	assert_int_equal(sum.count, 4800);
	assert_int_equal(sv_record_write_summary(w, &sum), 0);

	memset(&hh, 0, sizeof(hh));
	hh.point = SV_POINT_T3;
	hh.from_point = SV_POINT_TS;
	hh.stream = 0;
	hh.tai_sec = 1700000001;
	hh.period_ms = 1000;
	assert_int_equal(sv_record_write_hist(w, &hh, h), 0);

	memset(&dr, 0, sizeof(dr));
	dr.point = SV_POINT_T2A;
	dr.stream = SV_REC_STREAM_NONE;
	dr.t_ns = 123;
	dr.location = 0xffffffff81234567ull;
	dr.reason = 2;
	strcpy(dr.reason_name, "NOT_SPECIFIED");
	assert_int_equal(sv_record_write_drop(w, &dr), 0);

	memset(&th, 0, sizeof(th));
	th.point = SV_POINT_T2B;
	th.stream = 5;
	th.t_ns = 999;
	th.wait_ns = 180000;
	th.feeder_tid = 1001;
	th.holder_pid = 2002;
	th.holder_policy = 1;
	th.holder_prio = 50;
	th.cause = SV_WAIT_RUNQUEUE;
	strcpy(th.feeder_comm, "vhost-1000");
	strcpy(th.holder_comm, "stress-ng");
	assert_int_equal(sv_record_write_thread(w, &th), 0);

	assert_int_equal(sv_record_write_sync(w, &sync, 5555), 0);
	assert_int_equal(sv_record_writer_close(w), 0);

	assert_int_equal(sv_record_reader_open(&r, path), 0);
	{
		const struct sv_rec_file_header *fh = sv_record_reader_header(r);

		assert_string_equal(fh->tool, "svtest");
		assert_string_equal(fh->tool_version, "9.9");
		assert_string_equal(fh->host, "host,with\"comma");
		assert_int_equal(fh->clock, SV_CLOCK_TAI);
		assert_int_equal(fh->part, 0);
		assert_int_equal(fh->tai_offset_s, 37);
		assert_int_equal(fh->sync.maxerror_ns, 16000);
		assert_true(fh->flags & SV_REC_FH_TO_TAI);
		assert_false(fh->flags & SV_REC_FH_TAI_UNSET);
		assert_int_equal(fh->to_tai_ns, 0);
	}
	stamp(&s0, SV_REC_STREAM, sizeof(s0));
	stamp(&s1, SV_REC_STREAM, sizeof(s1));
	s0.svid_len = (uint8_t)strlen(s0.svid);
	s1.svid_len = 129;
	stamp(&nm, SV_REC_NAME, sizeof(nm));
	stamp(&ev, SV_REC_EVENT, sizeof(ev));
	stamp(&sum, SV_REC_SUMMARY, sizeof(sum));
	stamp(&dr, SV_REC_DROP, sizeof(dr));
	stamp(&th, SV_REC_THREAD, sizeof(th));
	while (sv_record_reader_next(r, &rec) == 1) {
		switch (n++) {
		case 0:
			assert_int_equal(rec.kind, SV_REC_STREAM);
			assert_int_equal(rec.offset, SV_REC_HEADER_SIZE + 16);
			assert_memory_equal(&rec.u.stream, &s0, sizeof(s0));
			break;
		case 1:
			assert_memory_equal(&rec.u.stream, &s1, sizeof(s1));
			break;
		case 2:
			assert_memory_equal(&rec.u.name, &nm, sizeof(nm));
			break;
		case 3:
			assert_int_equal(rec.kind, SV_REC_EVENT);
			assert_memory_equal(&rec.u.event, &ev, sizeof(ev));
			break;
		case 4:
			assert_int_equal(rec.kind, SV_REC_SUMMARY);
			assert_memory_equal(&rec.u.summary, &sum, sizeof(sum));
			break;
		case 5:
			assert_int_equal(rec.kind, SV_REC_HIST);
			assert_int_equal(rec.u.hist.tai_sec, 1700000001);
			assert_int_equal(rec.u.hist.from_point, SV_POINT_TS);
			assert_int_equal(sv_stats_deserialize(h2, rec.hist_data, rec.u.hist.len), 0);
			assert_int_equal(h2->count, h->count);
			assert_memory_equal(h2->bucket, h->bucket, sizeof(h->bucket));
			break;
		case 6:
			assert_memory_equal(&rec.u.drop, &dr, sizeof(dr));
			break;
		case 7:
			assert_memory_equal(&rec.u.thread, &th, sizeof(th));
			break;
		case 8:
			assert_int_equal(rec.kind, SV_REC_SYNC);
			assert_int_equal(rec.u.sync.t_ns, 5555);
			assert_int_equal(rec.u.sync.tai_offset_s, 37);
			assert_int_equal(rec.u.sync.status, 0x2001);
			break;
		case 9:
			assert_int_equal(rec.kind, SV_REC_END);
			assert_int_equal(rec.u.end.records, 9);
			assert_int_equal(rec.u.end.rotated, 0);
			break;
		default:
			fail_msg("unexpected record %d", n);
		}
	}
	assert_int_equal(n, 10);
	assert_int_equal(sv_record_reader_err(r, NULL), SV_RECORD_OK);
	assert_true(sv_record_reader_clean_end(r));
	assert_string_equal(sv_record_reader_stream(r, 5)->svid, long_id);
	assert_null(sv_record_reader_stream(r, 4));
	assert_string_equal(sv_record_reader_name(r, SV_REC_NAME_IFINDEX, 7, 4026531840u), "veth-g3");
	assert_null(sv_record_reader_name(r, SV_REC_NAME_IFINDEX, 7, 0));
	sv_record_reader_close(r);
	free(h);
	free(h2);
}

static void test_writer_rejects(void **state)
{
	struct sv_record_writer *w = open_writer(path_of("rej.svrec"), 0, 0, 0);
	struct sv_rec_stream s;
	struct sv_rec_event ev;
	struct sv_rec_summary sum;
	struct sv_record_writer_cfg bad = { .path = path_of("x"), .tool = "t", .block_bytes = 1000 };
	struct sv_record_writer *w2;

	(void)state;
	make_stream(&s, 1, "ok");
	assert_int_equal(sv_record_define_stream(w, &s), 0);
	s.stream = SV_REC_MAX_STREAMS;
	assert_int_equal(sv_record_define_stream(w, &s), -EINVAL);
	make_stream(&s, 2, "");
	assert_int_equal(sv_record_define_stream(w, &s), -EINVAL); /* empty svID */
	memset(s.svid, 'a', sizeof(s.svid));
	assert_int_equal(sv_record_define_stream(w, &s), -EINVAL); /* not terminated / > 129 */
	memset(s.svid, 0, sizeof(s.svid));
	memset(s.svid, 'a', 130);
	assert_int_equal(sv_record_define_stream(w, &s), -EINVAL); /* 130 octets */

	make_event(&ev, 1, 0);
	assert_int_equal(sv_record_write_event(w, &ev), 0);
	ev.point = SV_POINT_COUNT;
	assert_int_equal(sv_record_write_event(w, &ev), -EINVAL);
	make_event(&ev, 3, 0); /* stream 3 undefined */
	assert_int_equal(sv_record_write_event(w, &ev), -EINVAL);
	make_event(&ev, 1, 0);
	ev.ts_src = SV_TS_COUNT;
	assert_int_equal(sv_record_write_event(w, &ev), -EINVAL);
	make_event(&ev, 1, 0);
	ev.flags = 0x8000;
	assert_int_equal(sv_record_write_event(w, &ev), -EINVAL);
	memset(&sum, 0, sizeof(sum));
	sum.point = SV_POINT_T4;
	sum.from_point = 9;
	sum.stream = 1;
	assert_int_equal(sv_record_write_summary(w, &sum), -EINVAL);
	assert_int_equal(sv_record_writer_close(w), 0);

	assert_int_equal(sv_record_writer_open(&w2, &bad), -EINVAL); /* block below minimum */
	bad.block_bytes = 0;
	bad.rotate_bytes = 1000; /* below two blocks */
	assert_int_equal(sv_record_writer_open(&w2, &bad), -EINVAL);
	bad.rotate_bytes = 0;
	bad.path = "/nonexistent-dir/x.svrec";
	assert_int_equal(sv_record_writer_open(&w2, &bad), -ENOENT);
}

/* Writes @n events on stream 0 (seq 0..n-1) into @path. */
static void write_events(const char *path, uint32_t n, uint32_t block, uint64_t rot, uint32_t keep,
			 struct sv_record_writer_stats *st)
{
	struct sv_record_writer *w = open_writer(path, block, rot, keep);
	struct sv_rec_stream s;
	struct sv_rec_event ev;
	uint32_t i;

	make_stream(&s, 0, "MU01");
	assert_int_equal(sv_record_define_stream(w, &s), 0);
	for (i = 0; i < n; i++) {
		make_event(&ev, 0, i);
		assert_int_equal(sv_record_write_event(w, &ev), 0);
	}
	if (st)
		sv_record_writer_get_stats(w, st);
	assert_int_equal(sv_record_writer_close(w), 0);
}

/* Reads a whole file; returns the number of events, first/last seq, and checks contiguity. */
static int read_events(const char *path, uint32_t *first, uint32_t *last, struct sv_rec_file_header *fh)
{
	struct sv_record_reader *r;
	struct sv_rec rec;
	int n = 0, ret;

	assert_int_equal(sv_record_reader_open(&r, path), 0);
	if (fh)
		*fh = *sv_record_reader_header(r);
	while ((ret = sv_record_reader_next(r, &rec)) == 1) {
		if (rec.kind != SV_REC_EVENT)
			continue;
		if (n == 0)
			*first = rec.u.event.seq;
		else
			assert_int_equal(rec.u.event.seq, *last + 1);
		*last = rec.u.event.seq;
		n++;
	}
	assert_int_equal(ret, 0);
	assert_true(sv_record_reader_clean_end(r));
	sv_record_reader_close(r);
	return n;
}

static void test_many_blocks(void **state)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/many.svrec", dir);
	struct sv_record_writer_stats st;
	uint32_t first = 0, last = 0;
	struct stat sb;

	(void)state;
	write_events(path, 50000, SV_REC_BLOCK_MIN, 0, 0, &st);
	assert_int_equal(read_events(path, &first, &last, NULL), 50000);
	assert_int_equal(first, 0);
	assert_int_equal(last, 49999);
	assert_true(st.blocks >= 48); /* 50000 * 64 B over 64 KiB blocks */
	assert_int_equal(st.parts, 1);
	assert_int_equal(stat(path, &sb), 0);
	/* compact: header + 64 B per event + 16 B per block + the END block */
	assert_true((uint64_t)sb.st_size < 256 + 50001ull * 64 + 200 * 16 + 256);
}

static void test_rotation(void **state)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/rot.svrec", dir);
	const uint64_t rot = 2 * SV_REC_BLOCK_MIN + SV_REC_HEADER_SIZE;
	struct sv_rec_file_header fh[3];
	uint32_t first[3], last[3];
	struct sv_record_writer_stats st;
	struct stat sb;
	int i, n;

	(void)state;
	/* ~6.4 MB of events over ~130 KiB parts: dozens of rotations, only 3 files stay */
	write_events(path, 100000, SV_REC_BLOCK_MIN, rot, 2, &st);
	assert_true(st.parts > 20);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(stat(path_of("rot.svrec.1"), &sb), 0);
	assert_int_equal(stat(path_of("rot.svrec.2"), &sb), 0);
	assert_true((uint64_t)sb.st_size <= rot + SV_REC_BLOCK_MIN + 16);
	assert_int_equal(stat(path_of("rot.svrec.3"), &sb), -1);
	/* each part reads alone (own header + stream table), parts are consecutive */
	n = read_events(path_of("rot.svrec.2"), &first[2], &last[2], &fh[2]);
	assert_true(n > 0);
	n = read_events(path_of("rot.svrec.1"), &first[1], &last[1], &fh[1]);
	assert_true(n > 0);
	n = read_events(path, &first[0], &last[0], &fh[0]);
	assert_true(n > 0);
	assert_int_equal(first[1], last[2] + 1);
	assert_int_equal(first[0], last[1] + 1);
	assert_int_equal(last[0], 99999);
	assert_int_equal(fh[1].part, fh[2].part + 1);
	assert_int_equal(fh[0].part, fh[1].part + 1);
	assert_int_equal(fh[0].part, st.parts - 1);
	for (i = 0; i < 3; i++) {
		assert_int_equal(fh[i].run_id, fh[0].run_id);
		assert_int_equal(fh[i].start_ns, fh[0].start_ns);
	}
	assert_true(fh[0].part_start_ns >= fh[1].part_start_ns);
}

static void test_rotation_keep0(void **state)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/rot0.svrec", dir);
	struct stat sb;
	uint32_t first, last;

	(void)state;
	write_events(path, 20000, SV_REC_BLOCK_MIN, 2 * SV_REC_BLOCK_MIN + SV_REC_HEADER_SIZE, 0, NULL);
	assert_int_equal(stat(path_of("rot0.svrec.1"), &sb), -1);
	assert_true(read_events(path, &first, &last, NULL) > 0);
	assert_int_equal(last, 19999);
}

/* SV_REC_KEEP_ALL: every part stays, numbered newest first, consecutive, nothing lost between them. */
static void test_rotation_keep_all(void **state)
{
	char path[128], part[160];
	struct sv_rec_file_header fh;
	struct sv_record_writer_stats st;
	uint32_t first, last, next = 0;

	(void)state;
	snprintf(path, sizeof(path), "%s/rota.svrec", dir);
	write_events(path, 40000, SV_REC_BLOCK_MIN, 2 * SV_REC_BLOCK_MIN + SV_REC_HEADER_SIZE, SV_REC_KEEP_ALL, &st);
	assert_true(st.parts > 5);
	for (uint32_t k = st.parts - 1; k > 0; k--) {
		snprintf(part, sizeof(part), "%s.%u", path, k);
		assert_true(read_events(part, &first, &last, &fh) > 0);
		assert_int_equal(fh.part, st.parts - 1 - k);
		assert_int_equal(first, next);
		next = last + 1;
	}
	snprintf(part, sizeof(part), "%s.%u", path, st.parts);
	assert_int_not_equal(access(part, F_OK), 0);
	assert_true(read_events(path, &first, &last, &fh) > 0);
	assert_int_equal(first, next);
	assert_int_equal(last, 39999);
	assert_int_equal(fh.part, st.parts - 1);
}

/* ---- Damaged files ---------------------------------------------------------------------------- */

static struct sv_record_reader_damage mem_damage; /* of read_mem()'s last read */

/* Reads @len bytes of @buf as a file; returns the final error and its offset (records counted). */
static enum sv_record_err read_mem(const uint8_t *buf, size_t len, uint64_t *off, int *records, char *msg,
				   size_t msgsize)
{
	FILE *f = fmemopen((void *)buf, len ? len : 1, "rb");
	struct sv_record_reader *r;
	struct sv_rec rec;
	enum sv_record_err e;
	int ret;

	assert_non_null(f);
	if (!len) {
		fclose(f);
		f = fopen("/dev/null", "rb");
	}
	*records = 0;
	ret = sv_record_reader_open_fp(&r, f, "mem");
	if (ret == 0) {
		while ((ret = sv_record_reader_next(r, &rec)) == 1)
			(*records)++;
		/* failed readers stay failed */
		if (ret < 0)
			assert_int_equal(sv_record_reader_next(r, &rec), ret);
	}
	assert_non_null(r);
	e = sv_record_reader_err(r, off);
	if (msg)
		sv_record_reader_strerror(r, msg, msgsize);
	sv_record_reader_get_damage(r, &mem_damage);
	sv_record_reader_close(r);
	fclose(f);
	return e;
}

static void test_truncated(void **state)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/trunc.svrec", dir);
	size_t len, first_block_end;
	uint8_t *buf;
	uint64_t off;
	int recs;
	char msg[256];
	const size_t H = SV_REC_HEADER_SIZE;

	(void)state;
	write_events(path, 3000, SV_REC_BLOCK_MIN, 0, 0, NULL);
	buf = slurp(path, &len);
	first_block_end = H + 16 + rd32(buf + H + 4);
	{
		const struct {
			size_t cut;
			enum sv_record_err err;
			uint64_t off;
		} cases[] = {
			{ 0, SV_RECORD_E_HEADER_TRUNCATED, 0 },
			{ 5, SV_RECORD_E_HEADER_TRUNCATED, 5 },
			{ 100, SV_RECORD_E_HEADER_TRUNCATED, 100 },
			{ H - 1, SV_RECORD_E_HEADER_TRUNCATED, H - 1 },
			{ H + 3, SV_RECORD_E_BLOCK_TRUNCATED, H },
			{ H + 16, SV_RECORD_E_BLOCK_TRUNCATED, H + 16 },
			{ H + 16 + 1000, SV_RECORD_E_BLOCK_TRUNCATED, H + 16 + 1000 },
			{ first_block_end + 7, SV_RECORD_E_BLOCK_TRUNCATED, first_block_end },
			{ len - 1, SV_RECORD_E_BLOCK_TRUNCATED, len - 1 },
		};
		unsigned i;

		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			enum sv_record_err e = read_mem(buf, cases[i].cut, &off, &recs, msg, sizeof(msg));

			if (e != cases[i].err || off != cases[i].off)
				fail_msg("cut %zu: %s at %llu, want %s at %llu", cases[i].cut, sv_record_errname(e),
					 (unsigned long long)off, sv_record_errname(cases[i].err),
					 (unsigned long long)cases[i].off);
		}
	}
	/* cut exactly at a block boundary: no error, but not a clean end either */
	{
		FILE *f = fmemopen(buf, first_block_end, "rb");
		struct sv_record_reader *r;
		struct sv_rec rec;
		int n = 0, ret;

		assert_int_equal(sv_record_reader_open_fp(&r, f, "cut"), 0);
		while ((ret = sv_record_reader_next(r, &rec)) == 1)
			n++;
		assert_int_equal(ret, 0);
		assert_true(n > 0);
		assert_false(sv_record_reader_clean_end(r));
		sv_record_reader_close(r);
		fclose(f);
	}
	/* the message names the file, the offset and the error */
	read_mem(buf, H + 16 + 1000, &off, &recs, msg, sizeof(msg));
	snprintf((char *)buf, 0, "%s", ""); /* keep buf alive */
	assert_string_equal(msg, "mem: offset 1272: block_truncated: file ends inside a block (writer killed "
				 "mid-write?) (payload)");
	free(buf);
}

static void test_corrupted(void **state)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/corrupt.svrec", dir);
	const size_t H = SV_REC_HEADER_SIZE, B = H + 16; /* first payload */
	size_t len, i;
	uint8_t *orig, *buf;
	uint64_t off;
	int recs;

	(void)state;
	write_events(path, 3000, SV_REC_BLOCK_MIN, 0, 0, NULL);
	orig = slurp(path, &len);
	buf = malloc(len);
	assert_non_null(buf);

	/* header: magic, version, checksum, fields */
	memcpy(buf, orig, len);
	buf[0] = 'X';
	assert_int_equal(read_mem(buf, len, &off, &recs, NULL, 0), SV_RECORD_E_BAD_MAGIC);
	memcpy(buf, orig, len);
	buf[8] = 2;
	assert_int_equal(read_mem(buf, len, &off, &recs, NULL, 0), SV_RECORD_E_VERSION);
	memcpy(buf, orig, len);
	buf[200] ^= 1; /* inside host[] */
	assert_int_equal(read_mem(buf, len, &off, &recs, NULL, 0), SV_RECORD_E_HEADER_CRC);
	memcpy(buf, orig, len);
	buf[14] = 9; /* clock, re-sealed: a field check, not the CRC */
	wr32(buf + 252, sv_crc32c(0, buf, 252));
	assert_int_equal(read_mem(buf, len, &off, &recs, NULL, 0), SV_RECORD_E_HEADER_FIELD);
	assert_int_equal(off, 14);

	/* block framing: the first block is skipped (named, at its offset) and the reader goes on; the
	 * STREAM record went with it, so every later event is dropped as an orphan, counted */
	{
		const size_t L = 16 + rd32(orig + H + 4);
		const struct {
			size_t at;
			uint32_t val;
			bool word;
			bool seal;
			enum sv_record_err why;
		} cases[] = {
			{ H, 0x4b425600, true, false, SV_RECORD_E_BLOCK_MAGIC },
			{ H + 4, (uint32_t)L - 16 + 4, true, false, SV_RECORD_E_BLOCK_LENGTH },
			{ H + 4, 16u << 20, true, false, SV_RECORD_E_BLOCK_LENGTH },
			{ B + 100, 0x10, false, false, SV_RECORD_E_BLOCK_CRC },
			/* valid checksum, wrong content: the reader still checks every record */
			{ H + 8, rd32(orig + H + 8) + 1, true, true, SV_RECORD_E_RECORD_COUNT },
			{ B + 176 + 2, 12, false, true, SV_RECORD_E_RECORD_SIZE }, /* first event size 12 */
		};

		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			memcpy(buf, orig, len);
			if (cases[i].word)
				wr32(buf + cases[i].at, cases[i].val);
			else
				buf[cases[i].at] ^= (uint8_t)cases[i].val;
			if (cases[i].seal)
				reseal(buf + H);
			assert_int_equal(read_mem(buf, len, &off, &recs, NULL, 0), SV_RECORD_OK);
			assert_int_equal(recs, 1); /* END */
			assert_int_equal(mem_damage.blocks_skipped, 1);
			assert_int_equal(mem_damage.first_err, cases[i].why);
			assert_int_equal(mem_damage.first_offset, H);
			assert_int_equal(mem_damage.octets_skipped, L);
			assert_true(mem_damage.records_orphaned > 1000);
		}
	}
	/* one flipped payload bit anywhere in the first block */
	for (i = B; i < B + rd32(orig + H + 4); i += 97) {
		memcpy(buf, orig, len);
		buf[i] ^= 0x10;
		assert_int_equal(read_mem(buf, len, &off, &recs, NULL, 0), SV_RECORD_OK);
		assert_int_equal(mem_damage.first_err, SV_RECORD_E_BLOCK_CRC);
		assert_int_equal(mem_damage.first_offset, H);
		assert_int_equal(mem_damage.records_lost, rd32(orig + H + 8));
		assert_int_equal(recs, 1);
	}
	/* a damaged block and a crash's partial last block: the first is skipped, the second ends the read
	 * (and is counted: a skip to the end of the file) */
	memcpy(buf, orig, len);
	buf[B + 100] ^= 1;
	assert_int_equal(read_mem(buf, len - 1, &off, &recs, NULL, 0), SV_RECORD_E_BLOCK_TRUNCATED);
	assert_int_equal(off, len - 1);
	assert_int_equal(mem_damage.blocks_skipped, 2);
	assert_int_equal(mem_damage.last_err, SV_RECORD_E_BLOCK_TRUNCATED);
	/* a field out of range, a stream never defined, in a block whose CRC checks out: that record alone is
	 * dropped, counted (the first damage named, at its offset), and the read goes on */
	memcpy(buf, orig, len);
	buf[B + 176 + 1] = 42; /* first event's point */
	reseal(buf + H);
	assert_int_equal(read_mem(buf, len, &off, &recs, NULL, 0), SV_RECORD_OK);
	assert_int_equal(recs, 3000 + 2 - 1); /* STREAM, events, END */
	assert_int_equal(mem_damage.records_invalid, 1);
	assert_int_equal(mem_damage.first_err, SV_RECORD_E_RECORD_FIELD);
	assert_int_equal(mem_damage.first_offset, B + 176);
	memcpy(buf, orig, len);
	wr32(buf + B + 176 + 4, 9); /* first event's stream: never defined */
	reseal(buf + H);
	assert_int_equal(read_mem(buf, len, &off, &recs, NULL, 0), SV_RECORD_OK);
	assert_int_equal(recs, 3000 + 2 - 1);
	assert_int_equal(mem_damage.records_orphaned, 1);
	assert_int_equal(mem_damage.first_err, SV_RECORD_E_STREAM_UNDEFINED);
	assert_int_equal(mem_damage.first_offset, B + 176);
	memcpy(buf, orig, len);
	buf[B + 32 + 1] = 'y'; /* svid "MU01" -> "MyU01"? no: overwrite -> "MyU..": length mismatch */
	buf[B + 32 + 4] = 'z';
	reseal(buf + H);
	assert_int_equal(read_mem(buf, len, &off, &recs, NULL, 0), SV_RECORD_OK);
	assert_int_equal(recs, 1); /* END: the stream's events are orphans */
	assert_int_equal(mem_damage.records_invalid, 1);
	assert_int_equal(mem_damage.records_orphaned, 3000);
	assert_int_equal(mem_damage.first_offset, B);
	/* an unknown kind of a newer minor version is skipped, not an error */
	memcpy(buf, orig, len);
	buf[B + 176] = 200;
	reseal(buf + H);
	{
		FILE *f = fmemopen(buf, len, "rb");
		struct sv_record_reader *r;
		struct sv_rec rec;
		int ret;

		assert_int_equal(sv_record_reader_open_fp(&r, f, "m"), 0);
		while ((ret = sv_record_reader_next(r, &rec)) == 1)
			assert_int_not_equal(rec.kind, 200);
		assert_int_equal(ret, 0);
		assert_int_equal(sv_record_reader_skipped(r), 1);
		sv_record_reader_close(r);
		fclose(f);
	}
	/* data after END */
	{
		uint8_t *big = malloc(len + 16 + 64);
		size_t first_len = 16 + rd32(orig + H + 4);

		assert_non_null(big);
		memcpy(big, orig, len);
		/* append a copy of a block holding one event: take the first event of block 1 */
		wr32(big + len, SV_REC_BLOCK_MAGIC);
		wr32(big + len + 4, 64);
		wr32(big + len + 8, 1);
		memcpy(big + len + 16, orig + B + 176, 64);
		reseal(big + len);
		assert_int_equal(read_mem(big, len + 80, &off, &recs, NULL, 0), SV_RECORD_E_AFTER_END);
		assert_int_equal(off, len);
		(void)first_len;
		free(big);
	}
	/* random damage: always a named error or a clean read, never a crash (ASan/UBSan run) */
	for (i = 0; i < 3000; i++) {
		size_t pos = (size_t)rand() % len;
		enum sv_record_err e;

		memcpy(buf, orig, len);
		buf[pos] = (uint8_t)rand();
		if (i % 3 == 0 && rd32(buf + H + 4) <= len - H - 16)
			reseal(buf + H); /* CRC made valid: exercises the field checks */
		e = read_mem(buf, len - (i % 5 == 0 ? (size_t)rand() % 100 : 0), &off, &recs, NULL, 0);
		assert_true(e < SV_RECORD_E_COUNT);
		assert_true(off <= len);
	}
	free(orig);
	free(buf);
}

static void test_csv(void **state)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/csv.svrec", dir);
	struct sv_record_writer *w = open_writer(path, 0, 0, 0);
	struct sv_record_reader *r;
	struct sv_rec_stream s;
	struct sv_rec_name nm;
	struct sv_rec_event ev;
	char *out = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	make_stream(&s, 0, "MU,\"1\"");
	assert_int_equal(sv_record_define_stream(w, &s), 0);
	memset(&nm, 0, sizeof(nm));
	nm.name_kind = SV_REC_NAME_IFINDEX;
	nm.id = 7;
	nm.netns = 4026531840u;
	strcpy(nm.name, "veth0");
	assert_int_equal(sv_record_define_name(w, &nm), 0);
	make_event(&ev, 0, 10); /* flags late|gap */
	assert_int_equal(sv_record_write_event(w, &ev), 0);
	make_event(&ev, SV_REC_STREAM_NONE, 11);
	ev.tai_sec = 0;
	ev.t2_kind = SV_T2_NONE;
	ev.guest = SV_REC_GUEST_NONE;
	ev.ifindex = 0;
	ev.reason = SV_REASON_DECODE_ERROR;
	ev.flags = SV_REC_F_DROPPED;
	assert_int_equal(sv_record_write_event(w, &ev), 0);
	assert_int_equal(sv_record_writer_close(w), 0);

	assert_int_equal(sv_record_reader_open(&r, path), 0);
	f = open_memstream(&out, &len);
	assert_non_null(f);
	assert_int_equal(sv_record_export_csv(r, f), 0);
	fclose(f);
	sv_record_reader_close(r);
	/* event 10: tai 1700000000, smpCnt 20 -> Ts = ...000 + 20/4800 s = 4166666 ns */
	assert_string_equal(out,
			    "tool,host,point,stream,svid,appid,tai_sec,smp_cnt,ts_ns,t_ns,t_tai_ns,ts_src,t2_ns,"
			    "t2_kind,ifindex,ifname,netns,guest,flags,reason,cpu,tid,asdu,nasdu,frame_len,quality,seq\n"
			    "svtest,\"host,with\"\"comma\",T3,0,\"MU,\"\"1\"\"\",16384,1700000000,20,"
			    "1700000000004166666,1700000000004197676,1700000000004197676,xdp_meta,"
			    "1700000000004197176,software,7,veth0,4026531840,3,late|gap,0,1,4242,0,2,250,8192,10\n"
			    "svtest,\"host,with\"\"comma\",T3,,,,,22,,1700000000004614344,1700000000004614344,"
			    "xdp_meta,,none,0,,4026531840,,dropped,32772,1,4242,0,2,250,8192,11\n");
	free(out);
}

static void test_names(void **state)
{
	enum sv_point p;
	enum sv_ts_source t;
	char buf[64];
	unsigned i;

	(void)state;
	for (i = 0; i < SV_POINT_COUNT; i++) {
		assert_int_equal(sv_point_parse(sv_point_name(i), &p), 0);
		assert_int_equal(p, i);
	}
	assert_string_equal(sv_point_name(SV_POINT_TS), "Ts");
	assert_string_equal(sv_point_name(SV_POINT_T2A), "T2a");
	assert_string_equal(sv_point_name(SV_POINT_T2B), "T2b");
	assert_int_equal(sv_point_parse("t2a", &p), -EINVAL);
	for (i = 0; i < SV_TS_COUNT; i++) {
		assert_int_equal(sv_ts_source_parse(sv_ts_source_name(i), &t), 0);
		assert_int_equal(t, i);
	}
	assert_string_equal(sv_ts_source_name(SV_TS_XDP_META), "xdp_meta");
	sv_hop_format(SV_POINT_T1, SV_POINT_T2A, buf, sizeof(buf));
	assert_string_equal(buf, "T1-T2a");
	sv_hop_format(SV_POINT_TS, SV_POINT_T4, buf, sizeof(buf));
	assert_string_equal(buf, "Ts-T4");
	sv_rec_flags_format(SV_REC_F_LATE | SV_REC_F_DROPPED | SV_REC_F_NOT_SYNCED, buf, sizeof(buf));
	assert_string_equal(buf, "late|dropped|not_synced");
	sv_rec_flags_format(0, buf, sizeof(buf));
	assert_string_equal(buf, "");
	assert_string_equal(sv_record_errname(SV_RECORD_E_BLOCK_CRC), "block_crc");
	assert_string_equal(sv_rec_reason_name(SV_REASON_TX_RING_FULL), "tx_ring_full");
	assert_null(sv_rec_reason_name(2));
	/* CRC-32C check value (RFC 3720 B.4: "123456789" -> 0xE3069283) */
	assert_int_equal(sv_crc32c(0, "123456789", 9), 0xE3069283u);
	assert_int_equal(sv_crc32c(sv_crc32c(0, "1234", 4), "56789", 5), 0xE3069283u);
}

static void test_monotonic_file(void **state)
{
	struct sv_record_writer_cfg cfg = {
		.path = path_of("mono.svrec"),
		.tool = "svsub",
		.clock = SV_CLOCK_MONOTONIC,
	};
	struct sv_record_writer *w;
	struct sv_record_reader *r;
	int64_t tai, now_mono, now_tai;

	(void)state;
	assert_int_equal(sv_record_writer_open(&w, &cfg), 0);
	assert_int_equal(sv_record_writer_close(w), 0);
	assert_int_equal(sv_record_reader_open(&r, cfg.path), 0);
	assert_int_equal(sv_record_reader_header(r)->clock, SV_CLOCK_MONOTONIC);
	now_mono = sv_clock_now_ns(SV_CLOCK_MONOTONIC);
	now_tai = sv_clock_now_ns(SV_CLOCK_TAI);
	assert_true(sv_record_reader_to_tai(r, now_mono, &tai));
	assert_true(tai - now_tai < 50000000 && now_tai - tai < 50000000);
	/* the real host state is recorded */
	{
		struct sv_clock_sync s;

		assert_int_equal(sv_clock_sync_read(&s), 0);
		assert_int_equal(!!(sv_record_reader_header(r)->flags & SV_REC_FH_TAI_UNSET), s.tai_unset);
	}
	sv_record_reader_close(r);
}

/* A failed start removes only what it created: a device node the user named stays (a "full" device is a
 * full disk: the writer opens and counts what it cannot write, with no reserve on a device), and rotation
 * refuses a path that is not a regular file. Needs CAP_MKNOD. */
static void test_writer_leaves_user_path(void **state)
{
	struct sv_record_writer_cfg cfg = { .path = path_of("full"), .tool = "t" };
	struct sv_record_writer_stats ws;
	struct sv_record_writer *w;
	struct sv_rec_event ev;
	struct stat st;

	(void)state;
	if (mknod(cfg.path, S_IFCHR | 0666, makedev(1, 7))) {
		print_message("no mknod (%s): skipped\n", strerror(errno));
		skip();
	}
	assert_int_equal(sv_record_writer_open(&w, &cfg), 0);
	make_event(&ev, SV_REC_STREAM_NONE, 1);
	assert_int_equal(sv_record_write_event(w, &ev), 0);
	assert_int_equal(sv_record_writer_close_stats(w, &ws), -ENOSPC);
	assert_int_equal(ws.lost_records, 1);
	assert_int_equal(ws.last_errno, ENOSPC);
	assert_false(ws.reserve);
	assert_true(ws.pending && sv_record_stats_incomplete(&ws));
	assert_int_equal(stat(cfg.path, &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	cfg.rotate_bytes = 1u << 20;
	assert_int_equal(sv_record_writer_open(&w, &cfg), -EINVAL);
	assert_int_equal(stat(cfg.path, &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	/* a new path is created, an existing regular file truncated and rewritten (rotation allowed) */
	cfg.path = path_of("fresh.svrec");
	for (int i = 0; i < 2; i++) {
		assert_int_equal(sv_record_writer_open(&w, &cfg), 0);
		assert_int_equal(sv_record_writer_close(w), 0);
		assert_int_equal(stat(cfg.path, &st), 0);
		assert_true(S_ISREG(st.st_mode) && st.st_size > 0);
	}
}

/* ---- Reading past damage -------------------------------------------------------------------- */

#define DMG_EVENTS 20000u
#define DMG_MAX_BLOCKS 64

static char logged[8][512];
static unsigned nlogged;

static void log_capture(enum sv_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	if (level != SV_LOG_WARN)
		return;
	if (nlogged < 8)
		snprintf(logged[nlogged], sizeof(logged[0]), "%s", msg);
	nlogged++;
}

/* An intact file's blocks: offsets, and for each event seq the block holding it. */
struct dmg_file {
	uint8_t *orig;
	size_t len;
	unsigned nblocks;
	size_t off[DMG_MAX_BLOCKS + 1]; /* off[nblocks] = len */
	uint32_t events[DMG_MAX_BLOCKS];
	uint8_t blk_of[DMG_EVENTS];
};

static void dmg_file_make(struct dmg_file *df, const char *name)
{
	char path[128];
	size_t at;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	memset(df, 0, sizeof(*df));
	write_events(path, DMG_EVENTS, SV_REC_BLOCK_DEFAULT, 0, 0, NULL);
	df->orig = slurp(path, &df->len);
	for (at = SV_REC_HEADER_SIZE; at < df->len; at += 16 + rd32(df->orig + at + 4)) {
		size_t pos, end = at + 16 + rd32(df->orig + at + 4);

		assert_true(df->nblocks < DMG_MAX_BLOCKS);
		assert_int_equal(rd32(df->orig + at), SV_REC_BLOCK_MAGIC);
		df->off[df->nblocks] = at;
		for (pos = at + 16; pos < end; pos += (size_t)df->orig[pos + 2] | (size_t)df->orig[pos + 3] << 8) {
			if (df->orig[pos] == SV_REC_EVENT) {
				uint32_t seq = rd32(df->orig + pos + offsetof(struct sv_rec_event, seq));

				assert_true(seq < DMG_EVENTS);
				df->blk_of[seq] = (uint8_t)df->nblocks;
				df->events[df->nblocks]++;
			}
		}
		df->nblocks++;
	}
	df->off[df->nblocks] = df->len;
	/* the shape the review saw: several blocks, STREAM in the first, events only in the middle ones */
	assert_true(df->nblocks >= 5);
	assert_int_equal(df->events[1], rd32(df->orig + df->off[1] + 8));
}

struct dmg_read {
	int ret;
	bool clean_end;
	enum sv_record_err err;
	uint32_t events;
	struct sv_record_reader_damage d;
	uint8_t seen[DMG_EVENTS];
};

/* Reads @buf through a real file (sv_record_reader_open: the path svreport takes), logging into logged[]. */
static void dmg_read(const uint8_t *buf, size_t len, struct dmg_read *out)
{
	char path[128];
	struct sv_record_reader *r;
	struct sv_rec rec;
	FILE *f;

	snprintf(path, sizeof(path), "%s/damaged.svrec", dir);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
	memset(out, 0, sizeof(*out));
	nlogged = 0;
	sv_log_set(log_capture, NULL, SV_LOG_DEBUG);
	assert_int_equal(sv_record_reader_open(&r, path), 0);
	while ((out->ret = sv_record_reader_next(r, &rec)) == 1) {
		if (rec.kind != SV_REC_EVENT)
			continue;
		assert_true(rec.u.event.seq < DMG_EVENTS);
		assert_false(out->seen[rec.u.event.seq]); /* nothing twice */
		out->seen[rec.u.event.seq] = 1;
		out->events++;
	}
	sv_log_set(NULL, NULL, SV_LOG_INFO);
	out->err = sv_record_reader_err(r, NULL);
	out->clean_end = sv_record_reader_clean_end(r);
	sv_record_reader_get_damage(r, &out->d);
	sv_record_reader_close(r);
}

/* Every event outside the blocks in @lost[] came out, none inside them. */
static void assert_events_except(const struct dmg_file *df, const struct dmg_read *rd, const unsigned *lost,
				 unsigned nlost)
{
	uint32_t seq, want = DMG_EVENTS;
	unsigned i;

	for (i = 0; i < nlost; i++)
		want -= df->events[lost[i]];
	assert_int_equal(rd->events, want);
	for (seq = 0; seq < DMG_EVENTS; seq++) {
		bool gone = false;

		for (i = 0; i < nlost; i++)
			gone |= df->blk_of[seq] == lost[i];
		if (rd->seen[seq] == gone)
			fail_msg("seq %u (block %u): %s", seq, df->blk_of[seq], gone ? "read" : "missing");
	}
}

static bool logged_has(unsigned i, const char *what)
{
	return i < nlogged && i < 8 && strstr(logged[i], what) != NULL;
}

/* The review's case: one payload octet of block 2 flipped; every other block is read, the skip counted. */
static void test_damage_skips_one_block(void **state)
{
	static struct dmg_file df;
	static struct dmg_read rd;
	const unsigned k = 1, lost[] = { 1 };
	char want[128];
	uint8_t *buf;

	(void)state;
	dmg_file_make(&df, "dmg1.svrec");
	buf = malloc(df.len);
	assert_non_null(buf);
	memcpy(buf, df.orig, df.len);
	buf[df.off[k] + 16 + 1000] ^= 0x01; /* nothing re-sealed */
	dmg_read(buf, df.len, &rd);
	assert_int_equal(rd.ret, 0);
	assert_int_equal(rd.err, SV_RECORD_OK);
	assert_true(rd.clean_end); /* END still checks out: it counts more records than the reader saw */
	assert_events_except(&df, &rd, lost, 1);
	assert_int_equal(rd.d.blocks_skipped, 1);
	assert_int_equal(rd.d.octets_skipped, df.off[k + 1] - df.off[k]);
	assert_int_equal(rd.d.records_lost, df.events[k]);
	assert_int_equal(rd.d.skips_uncounted, 0);
	assert_int_equal(rd.d.records_orphaned, 0);
	assert_int_equal(rd.d.first_err, SV_RECORD_E_BLOCK_CRC);
	assert_int_equal(rd.d.first_offset, df.off[k]);
	assert_int_equal(rd.d.last_offset, df.off[k]);
	/* reported once, with the offset and the reason */
	assert_int_equal(nlogged, 1);
	snprintf(want, sizeof(want), ": offset %zu: block_crc: ", df.off[k]);
	assert_true(logged_has(0, want));
	snprintf(want, sizeof(want), "skipped %zu octets (%u records lost), reading on at offset %zu",
		 df.off[k + 1] - df.off[k], df.events[k], df.off[k + 1]);
	if (!logged_has(0, want))
		fail_msg("log: %s", logged[0]);
	/* the same through fmemopen (the fuzzer's path) */
	{
		uint64_t off;
		int recs;

		assert_int_equal(read_mem(buf, df.len, &off, &recs, NULL, 0), SV_RECORD_OK);
		assert_int_equal(mem_damage.blocks_skipped, 1);
		assert_int_equal(mem_damage.first_offset, df.off[k]);
	}
	free(buf);
	free(df.orig);
}

/* A damaged length field: the block's own length is no guide, the reader scans for the next block. */
static void test_damage_length_resyncs(void **state)
{
	static struct dmg_file df;
	static struct dmg_read rd;
	const unsigned k = 2, lost[] = { 2 };
	uint8_t *buf;
	unsigned i;

	(void)state;
	dmg_file_make(&df, "dmg2.svrec");
	buf = malloc(df.len);
	assert_non_null(buf);
	{
		const uint32_t len_k = rd32(df.orig + df.off[k] + 4);
		const struct {
			size_t at;
			uint32_t val;
			enum sv_record_err why;
		} cases[] = {
			/* plausible but wrong: leads into its own payload (CRC covers the length) */
			{ 4, len_k - 4096, SV_RECORD_E_BLOCK_CRC },
			{ 4, 8, SV_RECORD_E_BLOCK_CRC },
			/* absurd: never allocated, never skipped by; bounded by block_max */
			{ 4, 0xFFFFFFF8u, SV_RECORD_E_BLOCK_LENGTH },
			{ 4, SV_REC_BLOCK_DEFAULT + 8, SV_RECORD_E_BLOCK_LENGTH },
			{ 4, 0, SV_RECORD_E_BLOCK_LENGTH },
			{ 4, len_k + 4, SV_RECORD_E_BLOCK_LENGTH },
			/* the magic itself */
			{ 0, 0x4b425654, SV_RECORD_E_BLOCK_MAGIC },
		};

		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			char want[64];

			memcpy(buf, df.orig, df.len);
			wr32(buf + df.off[k] + cases[i].at, cases[i].val);
			dmg_read(buf, df.len, &rd);
			if (rd.ret != 0 || rd.d.blocks_skipped != 1)
				fail_msg("case %u: ret %d, %" PRIu64 " skips", i, rd.ret, rd.d.blocks_skipped);
			assert_true(rd.clean_end);
			assert_events_except(&df, &rd, lost, 1);
			assert_int_equal(rd.d.first_err, cases[i].why);
			assert_int_equal(rd.d.first_offset, df.off[k]);
			assert_int_equal(rd.d.octets_skipped, df.off[k + 1] - df.off[k]);
			if (cases[i].why == SV_RECORD_E_BLOCK_MAGIC) {
				/* only the magic: the length leads to the block found and the framing agrees */
				assert_int_equal(rd.d.skips_uncounted, 0);
				assert_int_equal(rd.d.records_lost, df.events[k]);
			} else {
				assert_int_equal(rd.d.skips_uncounted, 1); /* found by scanning: a lower bound */
				assert_true(rd.d.records_lost <= df.events[k]);
			}
			assert_int_equal(nlogged, 1);
			snprintf(want, sizeof(want), ": offset %zu: %s: ", df.off[k], sv_record_errname(cases[i].why));
			if (!logged_has(0, want))
				fail_msg("case %u: log: %s", i, logged[0]);
		}
	}
	free(buf);
	free(df.orig);
}

/* A length running past the end of the file looks like a crash's partial block, unless a valid block
 * follows within it: then the length was the damage (block_length), and the reader goes on there. */
static void test_damage_length_past_end(void **state)
{
	char path[128];
	struct sv_record_writer *w;
	struct sv_rec_stream s;
	struct sv_rec_event ev;
	struct sv_rec rec;
	struct sv_record_reader *r;
	struct sv_record_reader_damage d;
	size_t len, off[4], at;
	uint8_t *buf;
	uint32_t i, n = 0;
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/small-blocks.svrec", dir);
	w = open_writer(path, 0, 0, 0);
	make_stream(&s, 0, "MU01");
	assert_int_equal(sv_record_define_stream(w, &s), 0);
	for (i = 0; i < 300; i++) {
		make_event(&ev, 0, i);
		assert_int_equal(sv_record_write_event(w, &ev), 0);
		if (i % 100 == 99 && i < 299)
			assert_int_equal(sv_record_flush(w), 0);
	}
	assert_int_equal(sv_record_writer_close(w), 0); /* blocks: stream+0..99, 100..199, 200..299, END */
	buf = slurp(path, &len);
	for (i = 0, at = SV_REC_HEADER_SIZE; at < len && i < 4; i++, at += 16 + rd32(buf + at + 4))
		off[i] = at;
	assert_int_equal(i, 4);
	assert_int_equal(at, len);
	/* block 1 claims block_max octets: past the end of this ~20 KB file */
	wr32(buf + off[1] + 4, SV_REC_BLOCK_DEFAULT);
	f = fmemopen(buf, len, "rb");
	assert_non_null(f);
	assert_int_equal(sv_record_reader_open_fp(&r, f, "m"), 0);
	while (sv_record_reader_next(r, &rec) == 1) {
		if (rec.kind == SV_REC_EVENT) {
			assert_true(rec.u.event.seq < 100 || rec.u.event.seq >= 200);
			n++;
		}
	}
	assert_int_equal(sv_record_reader_err(r, NULL), SV_RECORD_OK);
	assert_true(sv_record_reader_clean_end(r));
	assert_int_equal(n, 200);
	sv_record_reader_get_damage(r, &d);
	assert_int_equal(d.blocks_skipped, 1);
	assert_int_equal(d.first_err, SV_RECORD_E_BLOCK_LENGTH);
	assert_int_equal(d.first_offset, off[1]);
	assert_int_equal(d.octets_skipped, off[2] - off[1]);
	assert_int_equal(d.records_lost, 100);
	assert_int_equal(d.skips_uncounted, 1);
	sv_record_reader_close(r);
	fclose(f);
	free(buf);
}

/* Two damaged blocks side by side: each skipped and reported; one bad sector across their boundary:
 * one skip found by scanning; a damaged last block: the read ends there, not clean, without error;
 * garbage from a block to the end: the fault is the error, the rest counted. */
static void test_damage_adjacent_blocks(void **state)
{
	static struct dmg_file df;
	static struct dmg_read rd;
	const unsigned k = 1, lost2[] = { 1, 2 };
	char want[64];
	uint8_t *buf;

	(void)state;
	dmg_file_make(&df, "dmg3.svrec");
	buf = malloc(df.len);
	assert_non_null(buf);

	memcpy(buf, df.orig, df.len);
	buf[df.off[k] + 16 + 64 * 7 + 3] ^= 0x80;
	buf[df.off[k + 1] + 16 + 64 * 9 + 5] ^= 0x04;
	dmg_read(buf, df.len, &rd);
	assert_int_equal(rd.ret, 0);
	assert_true(rd.clean_end);
	assert_events_except(&df, &rd, lost2, 2);
	assert_int_equal(rd.d.blocks_skipped, 2);
	assert_int_equal(rd.d.octets_skipped, df.off[k + 2] - df.off[k]);
	assert_int_equal(rd.d.records_lost, df.events[k] + df.events[k + 1]);
	assert_int_equal(rd.d.skips_uncounted, 0);
	assert_int_equal(rd.d.first_offset, df.off[k]);
	assert_int_equal(rd.d.last_offset, df.off[k + 1]);
	assert_int_equal(nlogged, 2);
	snprintf(want, sizeof(want), ": offset %zu: block_crc: ", df.off[k]);
	assert_true(logged_has(0, want));
	snprintf(want, sizeof(want), ": offset %zu: block_crc: ", df.off[k + 1]);
	assert_true(logged_has(1, want));

	/* a zeroed 512-octet sector across the boundary: block k's CRC and block k+1's header */
	memcpy(buf, df.orig, df.len);
	memset(buf + df.off[k + 1] - 256, 0, 512);
	dmg_read(buf, df.len, &rd);
	assert_int_equal(rd.ret, 0);
	assert_true(rd.clean_end);
	assert_events_except(&df, &rd, lost2, 2);
	assert_int_equal(rd.d.blocks_skipped, 1);
	assert_int_equal(rd.d.octets_skipped, df.off[k + 2] - df.off[k]);
	assert_int_equal(rd.d.records_lost, df.events[k]); /* the one header that could be read */
	assert_int_equal(rd.d.skips_uncounted, 1);
	assert_int_equal(nlogged, 1);

	/* the last block (with END) damaged: skipped to the end of the file; no END, so not a clean end */
	{
		const unsigned last = df.nblocks - 1, lostl[] = { df.nblocks - 1 };

		memcpy(buf, df.orig, df.len);
		buf[df.len - 20] ^= 0x20;
		dmg_read(buf, df.len, &rd);
		assert_int_equal(rd.ret, 0);
		assert_false(rd.clean_end);
		assert_events_except(&df, &rd, lostl, 1);
		assert_int_equal(rd.d.blocks_skipped, 1);
		assert_int_equal(rd.d.first_offset, df.off[last]);
		assert_int_equal(rd.d.octets_skipped, df.len - df.off[last]);
	}
	/* nothing valid after the damage (garbage to the end): the fault stays the error, records before used;
	 * the rest of the file is counted as one skip, its loss not exact (block 2's count is garbage) */
	{
		const unsigned lost_tail[] = { 2, 3, 4, 5, 6, 7, 8 };
		size_t p;

		memcpy(buf, df.orig, df.len);
		for (p = df.off[2] + 8; p < df.len; p++)
			buf[p] = (uint8_t)(p * 131);
		dmg_read(buf, df.len, &rd);
		assert_int_equal(rd.ret, -EBADMSG);
		assert_int_equal(rd.err, SV_RECORD_E_BLOCK_CRC); /* block 2's magic and length survived */
		assert_int_equal(rd.d.blocks_skipped, 1);
		assert_int_equal(rd.d.octets_skipped, df.len - df.off[2]);
		assert_int_equal(rd.d.skips_uncounted, 1);
		assert_true(df.nblocks - 2 <= sizeof(lost_tail) / sizeof(lost_tail[0]));
		assert_events_except(&df, &rd, lost_tail, df.nblocks - 2);
	}
	free(buf);
	free(df.orig);
}

/* Crafted damage: a false block header every 8 octets after a bad block. Each probe would re-read
 * block_max octets; the probe budget gives up (the original fault, records before used, the rest counted as
 * lost, how much unknown) in linear time. */
static void test_damage_false_magics_bounded(void **state)
{
	static struct dmg_file df;
	static struct dmg_read rd;
	const unsigned lost[] = { 2, 3, 4, 5, 6, 7, 8 };
	uint8_t *buf;
	size_t p;

	(void)state;
	dmg_file_make(&df, "dmg4.svrec");
	buf = malloc(df.len);
	assert_non_null(buf);
	memcpy(buf, df.orig, df.len);
	wr32(buf + df.off[2], 0);
	for (p = df.off[2] + 8; p + 8 <= df.off[4]; p += 8) {
		wr32(buf + p, SV_REC_BLOCK_MAGIC);
		wr32(buf + p + 4, SV_REC_BLOCK_DEFAULT);
	}
	dmg_read(buf, df.len, &rd);
	assert_int_equal(rd.ret, -EBADMSG);
	assert_int_equal(rd.err, SV_RECORD_E_BLOCK_MAGIC);
	assert_int_equal(rd.d.blocks_skipped, 1); /* the rest of the file, its loss unknown */
	assert_int_equal(rd.d.skips_uncounted, 1);
	assert_int_equal(rd.d.records_lost, 0);
	assert_true(df.nblocks - 2 <= sizeof(lost) / sizeof(lost[0]));
	assert_events_except(&df, &rd, lost, df.nblocks - 2);
	free(buf);
	free(df.orig);
}

/* Damage at the end of a file (issue 27): nothing valid follows, so the fault stays the reader's error, but what
 * it cost is counted: the records the damaged block's header declares where something confirms them (its
 * block reaches the end of the file, or only the magic is damaged and the payload's framing agrees), else the
 * loss is marked uncounted; never "0 lost, exact". The same magic-only damage before a valid block: exact. */
static void test_damage_tail_counted(void **state)
{
	static struct dmg_file df;
	static struct dmg_read rd;
	unsigned e;
	uint32_t nrec;
	size_t cut;
	char want[96];
	uint8_t *buf;

	(void)state;
	dmg_file_make(&df, "dmg5.svrec");
	for (e = df.nblocks - 1; !df.events[e]; e--) /* the last block with events (END may follow alone) */
		;
	nrec = rd32(df.orig + df.off[e] + 8);
	cut = df.off[e + 1]; /* the file as if it ended after block e */
	buf = malloc(df.len + 4096);
	assert_non_null(buf);
	{
		const unsigned lost[] = { e };

		/* the case: the last block's magic zeroed (its length and count intact) */
		memcpy(buf, df.orig, cut);
		wr32(buf + df.off[e], 0);
		dmg_read(buf, cut, &rd);
		assert_int_equal(rd.ret, -EBADMSG);
		assert_int_equal(rd.err, SV_RECORD_E_BLOCK_MAGIC);
		assert_false(rd.clean_end);
		assert_events_except(&df, &rd, lost, 1);
		assert_int_equal(rd.d.blocks_skipped, 1);
		assert_int_equal(rd.d.octets_skipped, cut - df.off[e]);
		assert_int_equal(rd.d.records_lost, nrec);
		assert_int_equal(rd.d.skips_uncounted, 0); /* the framing of the payload confirms the count */
		assert_int_equal(rd.d.first_err, SV_RECORD_E_BLOCK_MAGIC);
		assert_int_equal(rd.d.first_offset, df.off[e]);
		assert_int_equal(nlogged, 1);
		snprintf(want, sizeof(want), ": offset %zu: block_magic: ", df.off[e]);
		assert_true(logged_has(0, want));
		snprintf(want, sizeof(want), "(%u records lost) to the end of the file", nrec);
		if (!logged_has(0, want))
			fail_msg("log: %s", logged[0]);

		/* the same with the rest of the file after it: found by scanning, the count as exact */
		memcpy(buf, df.orig, df.len);
		wr32(buf + df.off[e], 0);
		dmg_read(buf, df.len, &rd);
		assert_int_equal(rd.ret, 0);
		assert_events_except(&df, &rd, lost, 1);
		assert_int_equal(rd.d.blocks_skipped, 1);
		assert_int_equal(rd.d.records_lost, nrec);
		assert_int_equal(rd.d.skips_uncounted, 0);

		/* the whole block header gone: how many records it held is unknown, and said so */
		memcpy(buf, df.orig, cut);
		memset(buf + df.off[e], 0, 16);
		dmg_read(buf, cut, &rd);
		assert_int_equal(rd.err, SV_RECORD_E_BLOCK_MAGIC);
		assert_events_except(&df, &rd, lost, 1);
		assert_int_equal(rd.d.blocks_skipped, 1);
		assert_int_equal(rd.d.octets_skipped, cut - df.off[e]);
		assert_int_equal(rd.d.records_lost, 0);
		assert_int_equal(rd.d.skips_uncounted, 1);
		assert_true(logged_has(0, "records lost unknown"));

		/* a crash's partial last block: its header says what was lost */
		dmg_read(df.orig, cut - 100, &rd);
		assert_int_equal(rd.err, SV_RECORD_E_BLOCK_TRUNCATED);
		assert_events_except(&df, &rd, lost, 1);
		assert_int_equal(rd.d.blocks_skipped, 1);
		assert_int_equal(rd.d.octets_skipped, cut - 100 - df.off[e]);
		assert_int_equal(rd.d.records_lost, nrec);
		assert_int_equal(rd.d.skips_uncounted, 0);

		/* cut inside the last block's header: unknown */
		dmg_read(df.orig, df.off[e] + 10, &rd);
		assert_int_equal(rd.err, SV_RECORD_E_BLOCK_TRUNCATED);
		assert_events_except(&df, &rd, lost, 1);
		assert_int_equal(rd.d.blocks_skipped, 1);
		assert_int_equal(rd.d.octets_skipped, 10);
		assert_int_equal(rd.d.skips_uncounted, 1);

		/* the magic zeroed and garbage after the block: the count cannot be confirmed */
		memcpy(buf, df.orig, cut);
		memset(buf + cut, 0x5a, 4096);
		wr32(buf + df.off[e], 0);
		dmg_read(buf, cut + 4096, &rd);
		assert_int_equal(rd.err, SV_RECORD_E_BLOCK_MAGIC);
		assert_events_except(&df, &rd, lost, 1);
		assert_int_equal(rd.d.octets_skipped, cut + 4096 - df.off[e]);
		assert_int_equal(rd.d.skips_uncounted, 1);
	}
	free(buf);
	free(df.orig);
}

/* A record with a field out of range inside a block whose CRC checks out (issue 27): it costs that record
 * alone, counted and said; every later block is read. */
static void test_damage_record_field_costs_one(void **state)
{
	static struct dmg_file df;
	static struct dmg_read rd;
	const unsigned k = 1;
	size_t ev0;
	uint32_t seq0;
	char want[96];
	uint8_t *buf;

	(void)state;
	dmg_file_make(&df, "dmg6.svrec");
	ev0 = df.off[k] + 16; /* block k holds only events */
	seq0 = rd32(df.orig + ev0 + offsetof(struct sv_rec_event, seq));
	buf = malloc(df.len);
	assert_non_null(buf);
	{
		const struct {
			size_t at;
			uint32_t val;
			enum sv_record_err why;
			const char *field;
		} cases[] = {
			{ offsetof(struct sv_rec_event, point), 42, SV_RECORD_E_RECORD_FIELD, "event.point" },
			{ offsetof(struct sv_rec_event, ts_src), 77, SV_RECORD_E_RECORD_FIELD, "event.ts_src" },
			{ offsetof(struct sv_rec_event, stream), 9, SV_RECORD_E_STREAM_UNDEFINED, "event" },
		};
		unsigned i;

		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			memcpy(buf, df.orig, df.len);
			if (cases[i].at == offsetof(struct sv_rec_event, stream))
				wr32(buf + ev0 + cases[i].at, cases[i].val);
			else
				buf[ev0 + cases[i].at] = (uint8_t)cases[i].val;
			reseal(buf + df.off[k]);
			dmg_read(buf, df.len, &rd);
			if (rd.ret != 0 || rd.events != DMG_EVENTS - 1)
				fail_msg("case %u: ret %d, %u events", i, rd.ret, rd.events);
			assert_int_equal(rd.err, SV_RECORD_OK);
			assert_true(rd.clean_end); /* END's count matches: the dropped record was read */
			assert_false(rd.seen[seq0]);
			assert_int_equal(rd.d.blocks_skipped, 0);
			assert_int_equal(rd.d.records_lost, 0);
			assert_int_equal(rd.d.records_invalid + rd.d.records_orphaned, 1);
			assert_int_equal(rd.d.first_err, cases[i].why);
			assert_int_equal(rd.d.first_offset, ev0);
			assert_int_equal(nlogged, 1);
			snprintf(want, sizeof(want), ": offset %zu: %s: ", ev0, sv_record_errname(cases[i].why));
			if (!logged_has(0, want) || !logged_has(0, cases[i].field))
				fail_msg("case %u: log: %s", i, logged[0]);
		}
		assert_int_equal(rd.d.records_orphaned, 1); /* the undefined stream's event */
	}
	/* the STREAM record itself out of range: dropped, and every event of its stream with it (orphans) */
	memcpy(buf, df.orig, df.len);
	buf[df.off[0] + 16 + offsetof(struct sv_rec_stream, svid) + 1] = 0; /* svid shorter than svid_len */
	reseal(buf + df.off[0]);
	dmg_read(buf, df.len, &rd);
	assert_int_equal(rd.ret, 0);
	assert_int_equal(rd.events, 0);
	assert_true(rd.clean_end);
	assert_int_equal(rd.d.records_invalid, 1);
	assert_int_equal(rd.d.records_orphaned, DMG_EVENTS);
	assert_int_equal(rd.d.first_err, SV_RECORD_E_RECORD_FIELD);
	assert_int_equal(rd.d.first_offset, df.off[0] + 16);
	/* many bad records: each counted, the log bounded */
	memcpy(buf, df.orig, df.len);
	for (size_t p = ev0; p < df.off[k + 1]; p += sizeof(struct sv_rec_event))
		buf[p + offsetof(struct sv_rec_event, point)] = 42;
	reseal(buf + df.off[k]);
	dmg_read(buf, df.len, &rd);
	assert_int_equal(rd.ret, 0);
	assert_int_equal(rd.d.records_invalid, df.events[k]);
	assert_int_equal(rd.events, DMG_EVENTS - df.events[k]);
	assert_true(nlogged <= 100);
	free(buf);
	free(df.orig);
}

static void make_why(struct sv_rec_why *y)
{
	memset(y, 0, sizeof(*y));
	y->point = SV_POINT_T2B;
	y->from_point = SV_POINT_T2A;
	y->stream = 0;
	y->t_from_ns = 1000000;
	y->t_to_ns = 1000000 + 4400000;
	y->tai_sec = 1700000000u;
	y->smp_cnt = 1234;
	y->guest = 1;
	y->cpu = 1;
	y->flags = SV_REC_WHY_F_RX | SV_REC_WHY_F_HOP_LATE;
	y->carrier_tid = 4321;
	y->holder_pid = 999;
	y->holder_policy = 1;
	y->holder_prio = 90;
	y->faults = 2;
	strcpy(y->carrier_comm, "python3");
	strcpy(y->holder_comm, "stress-ng");
	y->ns[SV_WHY_STEAL] = 3000000;
	y->ns[SV_WHY_SOFTIRQ + 3] = 400000; /* NET_RX */
	y->ns[SV_WHY_RUNQUEUE] = 900000;
	y->ns[SV_WHY_UNEXPLAINED] = 100000;
	y->holder_ns = 800000;
}

/* @len octets of @buf written to @path and read to their end: the WHY records read, the damage, the records
 * skipped (unknown kinds), whether the part ended cleanly. */
static int read_whys(const uint8_t *buf, size_t len, const char *path, struct sv_record_reader_damage *d,
		     uint64_t *skipped, bool *clean)
{
	struct sv_record_reader *r;
	struct sv_rec rec;
	FILE *f = fopen(path, "wb");
	int n = 0, ret;

	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	fclose(f);
	assert_int_equal(sv_record_reader_open(&r, path), 0);
	while ((ret = sv_record_reader_next(r, &rec)) == 1)
		n += rec.kind == SV_REC_WHY;
	assert_int_equal(ret, 0);
	sv_record_reader_get_damage(r, d);
	*skipped = sv_record_reader_skipped(r);
	*clean = sv_record_reader_clean_end(r);
	sv_record_reader_close(r);
	return n;
}

/* WHY (kind 14): the causes add up to the hop, on writing and on reading; a record of an unnamed kind
 * (a number this version does not name) or of a newer minor is skipped, as older readers skip WHY. */
static void test_why_records(void **state)
{
	struct sv_record_writer *w = open_writer(path_of("why.svrec"), 0, 0, 0);
	struct sv_rec_stream s;
	struct sv_rec_why y, bad;
	struct sv_record_reader *r;
	struct sv_record_reader_damage d;
	struct sv_rec rec;
	size_t len, at = 0;
	uint64_t skipped;
	uint8_t *buf;
	bool clean;
	int n = 0, ret;

	(void)state;
	assert_string_equal(sv_rec_kind_name(SV_REC_WHY), "why");
	assert_string_equal(sv_rec_kind_name(SV_REC_KIND_MAX), "unknown");
	assert_string_equal(sv_rec_why_cause_name(SV_WHY_SOFTIRQ + 3), "softirq_net_rx");
	assert_string_equal(sv_rec_why_cause_name(SV_WHY_UNEXPLAINED), "unexplained");
	assert_string_equal(sv_rec_why_cause_name(SV_WHY_NR), "unknown");
	make_stream(&s, 0, "MU01");
	assert_int_equal(sv_record_define_stream(w, &s), 0);
	make_why(&y);
	assert_int_equal(sv_record_write_why(w, &y), 0);
	/* refused: causes that do not add up, a negative one, an unknown flag, no start point, a stream not
	 * defined, a holder's share beyond the waits */
	bad = y;
	bad.ns[SV_WHY_RUNNING] = 1;
	assert_int_equal(sv_record_write_why(w, &bad), -EINVAL);
	bad = y;
	bad.ns[SV_WHY_STEAL] += 100;
	bad.ns[SV_WHY_RUNNING] = -100;
	assert_int_equal(sv_record_write_why(w, &bad), -EINVAL);
	bad = y;
	bad.flags = 0x40;
	assert_int_equal(sv_record_write_why(w, &bad), -EINVAL);
	bad = y;
	bad.from_point = SV_POINT_NONE;
	assert_int_equal(sv_record_write_why(w, &bad), -EINVAL);
	bad = y;
	bad.stream = 3;
	assert_int_equal(sv_record_write_why(w, &bad), -EINVAL);
	bad = y;
	bad.holder_ns = 2000000;
	assert_int_equal(sv_record_write_why(w, &bad), -EINVAL);
	y.t_to_ns = y.t_from_ns + 5000000; /* a second record, its hop 600 us longer: unexplained */
	y.ns[SV_WHY_UNEXPLAINED] += 600000;
	assert_int_equal(sv_record_write_why(w, &y), 0);
	assert_int_equal(sv_record_writer_close(w), 0);

	assert_int_equal(sv_record_reader_open(&r, path_of("why.svrec")), 0);
	stamp(&y, SV_REC_WHY, sizeof(y));
	while ((ret = sv_record_reader_next(r, &rec)) == 1) {
		if (rec.kind != SV_REC_WHY)
			continue;
		if (n++ == 1)
			assert_memory_equal(&rec.u.why, &y, sizeof(y));
		else
			assert_int_equal(rec.u.why.ns[SV_WHY_UNEXPLAINED], 100000);
		at = rec.offset;
	}
	assert_int_equal(ret, 0);
	assert_int_equal(n, 2);
	assert_true(sv_record_reader_clean_end(r));
	sv_record_reader_close(r);

	/* the second record as a kind this version has no name for: skipped, counted, the file reads to its
	 * clean end */
	buf = slurp(path_of("why.svrec"), &len);
	assert_non_null(buf);
	buf[at] = SV_REC_KIND_MAX;
	reseal(buf + SV_REC_HEADER_SIZE);
	assert_int_equal(read_whys(buf, len, path_of("why11.svrec"), &d, &skipped, &clean), 1);
	assert_int_equal(skipped, 1);
	assert_true(clean);
	/* a WHY record whose causes do not add up: dropped alone (why.ns), counted */
	buf[at] = SV_REC_WHY;
	buf[at + offsetof(struct sv_rec_why, ns)] ^= 1;
	reseal(buf + SV_REC_HEADER_SIZE);
	assert_int_equal(read_whys(buf, len, path_of("whybad.svrec"), &d, &skipped, &clean), 1);
	assert_int_equal(d.records_invalid, 1);
	assert_int_equal(d.first_err, SV_RECORD_E_RECORD_FIELD);
	assert_int_equal(d.first_offset, at);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip_all_kinds), cmocka_unit_test(test_writer_rejects),
		cmocka_unit_test(test_many_blocks),	    cmocka_unit_test(test_rotation),
		cmocka_unit_test(test_rotation_keep0),	    cmocka_unit_test(test_rotation_keep_all),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_corrupted),	    cmocka_unit_test(test_csv),
		cmocka_unit_test(test_names),		    cmocka_unit_test(test_monotonic_file),
		cmocka_unit_test(test_writer_leaves_user_path),
		cmocka_unit_test(test_damage_skips_one_block), cmocka_unit_test(test_damage_length_resyncs),
		cmocka_unit_test(test_damage_length_past_end), cmocka_unit_test(test_damage_adjacent_blocks),
		cmocka_unit_test(test_damage_false_magics_bounded), cmocka_unit_test(test_damage_tail_counted),
		cmocka_unit_test(test_damage_record_field_costs_one),
		cmocka_unit_test(test_why_records),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

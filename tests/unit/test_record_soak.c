// SPDX-License-Identifier: Apache-2.0
/*
 * sv_record's soak kinds (minor version 2): INTERVAL (short and long forms), WINDOW, CLOCK round trip field
 * for field; the writer refuses and the reader drops out-of-range fields; a file of version 1.1 written by
 * the previous writer (tests/data/record-v1.1.svrec) still reads whole; kind 14 (reserved) is skipped; CLOCK
 * records move a file's conversion to TAI; a writer on a simulated clock stamps its header and END with it.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "sv_record.h"
#include "sv_stats.h"
#include "unit_rec.h"
#include "unit_tmpdir.h"

#define SEC0 1800000000u

UNIT_TMPDIR("svrecsoak-test")

static int64_t fake_now_ns;

static int64_t fake_now(void *ctx)
{
	(void)ctx;
	return fake_now_ns;
}

static struct sv_record_writer *open_writer(const char *name, enum sv_clock_id clock)
{
	struct sv_clock_sync sync = { .status = 0x2001, .tai_offset_s = 37, .maxerror_ns = 16000 };
	char path[128];
	struct sv_record_writer_cfg cfg = {
		.path = path, .tool = "svsoak", .tool_version = "2.0", .clock = clock, .sync = &sync,
		.host = "soakhost", .now = fake_now,
	};
	struct sv_record_writer *w;
	struct sv_rec_stream s = { .stream = 0, .appid = 0x4000, .asdus = 1, .sample_rate = 4000, .conf_rev = 1,
				   .vlan = 0xFFFF, .smp_synch = 2, .smp_wrap = 4000 };

	fake_now_ns = (int64_t)SEC0 * SV_NSEC_PER_SEC;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_int_equal(sv_record_writer_open(&w, &cfg), 0);
	strcpy(s.svid, "SOAKMU01");
	assert_int_equal(sv_record_define_stream(w, &s), 0);
	s.stream = 1;
	strcpy(s.svid, "SOAKMU02");
	assert_int_equal(sv_record_define_stream(w, &s), 0);
	return w;
}

static char *path_of(const char *name)
{
	static char buf[128];

	snprintf(buf, sizeof(buf), "%s/%s", dir, name);
	return buf;
}

static struct sv_rec_interval interval_short(void)
{
	return (struct sv_rec_interval){
		.point = SV_POINT_T2B, .from_point = SV_POINT_T2A, .guest = 2, .stream = 1, .tai_sec = SEC0,
		.period_ms = 10000, .frames = 40000, .samples = 40000, .count = 39999, .late = 2,
		.flags = SV_REC_INTERVAL_F_WORST | SV_REC_INTERVAL_F_WHY, .worst_tai_sec = SEC0 + 7,
		.worst_ns = 1512345, .worst_smp_cnt = 1234, .strays = 3,
	};
}

static struct sv_rec_window window_rec(void)
{
	return (struct sv_rec_window){
		.point = SV_POINT_T2B, .cls = SV_WINDOW_LATENCY,
		.classes = (1u << SV_WINDOW_LATENCY) | (1u << SV_WINDOW_LOSS), .guest = 2, .stream = 1,
		.flags = SV_REC_WINDOW_F_CUT, .t_trigger_ns = (int64_t)SEC0 * SV_NSEC_PER_SEC + 7000000000,
		.t_start_ns = (int64_t)SEC0 * SV_NSEC_PER_SEC + 5000000000,
		.t_end_ns = (int64_t)SEC0 * SV_NSEC_PER_SEC + 15000000000, .value = 1512345,
		.trigger_tai_sec = SEC0 + 7, .trigger_smp_cnt = 1234, .triggers = 4, .id = 1, .records = 96000,
		.lost = 0, .busy = 1, .dropped = { 5, 0, 1, 0, 0 },
	};
}

static struct sv_rec_clock clock_rec(uint8_t clock, int64_t old, int64_t new_, uint8_t flags)
{
	return (struct sv_rec_clock){ .clock = clock, .flags = flags, .t_ns = 1000 * SV_NSEC_PER_SEC,
				      .old_to_tai_ns = old, .new_to_tai_ns = new_, .step_ns = new_ - old,
				      .gap_ns = 80, .threshold_ns = 10000, .tai_offset_s = 37 };
}

/* Every soak kind written, read back field for field, the short INTERVAL in 56 octets. */
static void test_soak_kinds_roundtrip(void **state)
{
	struct sv_record_writer *w = open_writer("kinds.svrec", SV_CLOCK_TAI);
	struct sv_rec_interval is = interval_short(), il = interval_short();
	struct sv_rec_window win = window_rec(), sum = { 0 };
	struct sv_rec_clock ck = clock_rec(SV_CLOCK_MONOTONIC, 5, 3000005, SV_REC_CLOCK_F_STEP);
	struct sv_rec_hist hh = { .point = SV_POINT_T2B, .from_point = SV_POINT_T2A, .guest = 2,
				  .stream = SV_REC_STREAM_NONE, .tai_sec = SEC0, .period_ms = 10000 };
	struct sv_stats *h = malloc(sizeof(*h)), *h2 = malloc(sizeof(*h2));
	struct sv_record_reader *r;
	struct sv_rec rec;
	uint64_t off[16];
	int n = 0;

	(void)state;
	assert_non_null(h);
	assert_non_null(h2);
	il.lost = 40;
	il.missing = 1;
	il.dropped = 7;
	il.duplicate = 1;
	il.reordered = 2;
	il.outliers = 3;
	il.errors = 4;
	il.restarts = 1;
	il.changes = 2;
	il.drop_reason[0] = SV_REASON_RING_OVERFLOW;
	il.drop_count[0] = 5;
	il.drop_reason[1] = 2;
	il.drop_count[1] = 1;
	sum.point = SV_POINT_NONE;
	sum.cls = SV_WINDOW_CLASS_NONE;
	sum.guest = SV_REC_GUEST_NONE;
	sum.stream = SV_REC_STREAM_NONE;
	sum.flags = SV_REC_WINDOW_F_SUMMARY;
	sum.dropped[0] = 9;
	sv_stats_init(h);
	for (int i = 0; i < 1000; i++)
		sv_stats_add(h, 10000 + i * 17);
	assert_int_equal(sv_record_write_clock(w, &ck), 0);
	assert_int_equal(sv_record_write_interval(w, &is), 0);
	assert_int_equal(sv_record_write_interval(w, &il), 0);
	assert_int_equal(sv_record_write_hist(w, &hh, h), 0);
	assert_int_equal(sv_record_write_window(w, &win), 0);
	assert_int_equal(sv_record_write_window(w, &sum), 0);
	fake_now_ns += 20 * SV_NSEC_PER_SEC;
	assert_int_equal(sv_record_writer_close(w), 0);

	stamp(&ck, SV_REC_CLOCK, sizeof(ck));
	stamp(&is, SV_REC_INTERVAL, SV_REC_INTERVAL_SHORT);
	stamp(&il, SV_REC_INTERVAL, sizeof(il));
	stamp(&win, SV_REC_WINDOW, sizeof(win));
	stamp(&sum, SV_REC_WINDOW, sizeof(sum));
	assert_int_equal(sv_record_reader_open(&r, path_of("kinds.svrec")), 0);
	assert_int_equal(sv_record_reader_header(r)->version_minor, 2);
	while (sv_record_reader_next(r, &rec) == 1) {
		off[n] = rec.offset;
		switch (n++) {
		case 0:
		case 1:
			assert_int_equal(rec.kind, SV_REC_STREAM);
			break;
		case 2:
			assert_int_equal(rec.kind, SV_REC_CLOCK);
			assert_memory_equal(&rec.u.clock, &ck, sizeof(ck));
			break;
		case 3:
			assert_int_equal(rec.kind, SV_REC_INTERVAL);
			assert_memory_equal(&rec.u.interval, &is, sizeof(is)); /* the long part read as 0 */
			break;
		case 4:
			assert_int_equal(rec.kind, SV_REC_INTERVAL);
			assert_int_equal(rec.offset - off[3], SV_REC_INTERVAL_SHORT);
			assert_memory_equal(&rec.u.interval, &il, sizeof(il));
			break;
		case 5:
			assert_int_equal(rec.kind, SV_REC_HIST);
			assert_int_equal(rec.offset - off[4], sizeof(il));
			assert_int_equal(rec.u.hist.stream, SV_REC_STREAM_NONE);
			assert_int_equal(rec.u.hist.period_ms, 10000);
			assert_int_equal(sv_stats_deserialize(h2, rec.hist_data, rec.u.hist.len), 0);
			assert_memory_equal(h2, h, sizeof(*h));
			break;
		case 6:
			assert_int_equal(rec.kind, SV_REC_WINDOW);
			assert_memory_equal(&rec.u.window, &win, sizeof(win));
			break;
		case 7:
			assert_int_equal(rec.kind, SV_REC_WINDOW);
			assert_memory_equal(&rec.u.window, &sum, sizeof(sum));
			break;
		case 8:
			assert_int_equal(rec.kind, SV_REC_END);
			assert_int_equal(rec.u.end.records, 8);
			break;
		default:
			fail_msg("unexpected record %d (%s)", n, sv_rec_kind_name(rec.kind));
		}
	}
	assert_int_equal(n, 9);
	assert_int_equal(sv_record_reader_err(r, NULL), SV_RECORD_OK);
	assert_int_equal(sv_record_reader_skipped(r), 0);
	sv_record_reader_close(r);
	assert_string_equal(sv_rec_kind_name(SV_REC_INTERVAL), "interval");
	assert_string_equal(sv_rec_kind_name(SV_REC_WINDOW), "window");
	assert_string_equal(sv_rec_kind_name(SV_REC_CLOCK), "clock");
	assert_string_equal(sv_rec_kind_name(SV_REC_KIND_MAX), "unknown");
	assert_string_equal(sv_rec_window_class_name(SV_WINDOW_RESTART), "restart");
	assert_string_equal(sv_rec_window_class_name(SV_WINDOW_CLASS_NONE), "none");
	free(h);
	free(h2);
}

/* Field rules: what the writer refuses is what the reader drops (one table). */
enum rej_kind { REJ_INTERVAL, REJ_WINDOW, REJ_CLOCK };
struct rej_case {
	const char *what;
	enum rej_kind kind;
	void (*bend)(void *rec);
};

static void bad_point(void *p) { ((struct sv_rec_interval *)p)->point = SV_POINT_COUNT; }
static void bad_from(void *p) { ((struct sv_rec_interval *)p)->from_point = 7; }
static void bad_iflags(void *p) { ((struct sv_rec_interval *)p)->flags = 0x80; }
static void bad_period(void *p) { ((struct sv_rec_interval *)p)->period_ms = 0; }
static void bad_drops(void *p)
{
	struct sv_rec_interval *iv = p;

	iv->dropped = 3;
	iv->drop_count[0] = 2;
	iv->drop_count[1] = 2;
}
static void bad_istream(void *p) { ((struct sv_rec_interval *)p)->stream = 5; }
static void bad_cls(void *p) { ((struct sv_rec_window *)p)->cls = SV_WINDOW_CLASSES; }
static void bad_classes(void *p) { ((struct sv_rec_window *)p)->classes = 1u << SV_WINDOW_LOSS; }
static void bad_classes_high(void *p) { ((struct sv_rec_window *)p)->classes |= 0x80; }
static void bad_span(void *p) { ((struct sv_rec_window *)p)->t_end_ns = 0; }
static void bad_wstream(void *p) { ((struct sv_rec_window *)p)->stream = SV_REC_STREAM_NONE; }
static void bad_wflags(void *p) { ((struct sv_rec_window *)p)->flags = 0x20; }
static void bad_summary(void *p) { ((struct sv_rec_window *)p)->flags |= SV_REC_WINDOW_F_SUMMARY; }
static void bad_wpoint(void *p) { ((struct sv_rec_window *)p)->point = 9; }
static void bad_ckid(void *p) { ((struct sv_rec_clock *)p)->clock = SV_CLOCK_COUNT; }
static void bad_step(void *p) { ((struct sv_rec_clock *)p)->step_ns = 1; }
static void bad_gap(void *p) { ((struct sv_rec_clock *)p)->gap_ns = -1; }
static void bad_ckflags(void *p) { ((struct sv_rec_clock *)p)->flags = 4; }

static const struct rej_case rej_cases[] = {
	{ "interval.point", REJ_INTERVAL, bad_point },	  { "interval.point", REJ_INTERVAL, bad_from },
	{ "interval.flags", REJ_INTERVAL, bad_iflags },	  { "interval.period_ms", REJ_INTERVAL, bad_period },
	{ "interval.drop_count", REJ_INTERVAL, bad_drops }, { NULL, REJ_INTERVAL, bad_istream },
	{ "window.cls", REJ_WINDOW, bad_cls },		  { "window.classes", REJ_WINDOW, bad_classes },
	{ "window.classes", REJ_WINDOW, bad_classes_high }, { "window.span", REJ_WINDOW, bad_span },
	{ "window.span", REJ_WINDOW, bad_wstream },	  { "window.flags", REJ_WINDOW, bad_wflags },
	{ "window.cls", REJ_WINDOW, bad_summary },	  { "window.point", REJ_WINDOW, bad_wpoint },
	{ "clock.clock", REJ_CLOCK, bad_ckid },		  { "clock.step", REJ_CLOCK, bad_step },
	{ "clock.step", REJ_CLOCK, bad_gap },		  { "clock.flags", REJ_CLOCK, bad_ckflags },
};

static int write_kind(struct sv_record_writer *w, enum rej_kind k, const void *rec)
{
	switch (k) {
	case REJ_INTERVAL:
		return sv_record_write_interval(w, rec);
	case REJ_WINDOW:
		return sv_record_write_window(w, rec);
	default:
		return sv_record_write_clock(w, rec);
	}
}

static void make_kind(enum rej_kind k, void *rec)
{
	struct sv_rec_interval iv = interval_short();
	struct sv_rec_window win = window_rec();
	struct sv_rec_clock ck = clock_rec(SV_CLOCK_MONOTONIC, 5, 7, 0);

	iv.lost = 1; /* the long form: every field can be bent */
	if (k == REJ_INTERVAL)
		memcpy(rec, &iv, sizeof(iv));
	else if (k == REJ_WINDOW)
		memcpy(rec, &win, sizeof(win));
	else
		memcpy(rec, &ck, sizeof(ck));
}

/*
 * Each bad field: the writer refuses it (-EINVAL); written valid then bent in the file (the block resealed),
 * the reader drops that record alone with the field's name, counted, and reads on to the END.
 */
static void test_soak_fields_checked(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rej_cases) / sizeof(rej_cases[0]); i++) {
		const struct rej_case *c = &rej_cases[i];
		union {
			struct sv_rec_interval iv;
			struct sv_rec_window win;
			struct sv_rec_clock ck;
		} good, bad;
		struct sv_record_writer *w = open_writer("rej.svrec", SV_CLOCK_TAI);
		struct sv_record_reader *r;
		struct sv_record_reader_damage d;
		struct sv_rec rec;
		uint64_t at = 0;
		size_t len, size;
		uint8_t *buf;
		int n = 0, ret;

		make_kind(c->kind, &good);
		make_kind(c->kind, &bad);
		c->bend(&bad);
		if (write_kind(w, c->kind, &bad) != -EINVAL)
			fail_msg("case %zu (%s): the writer took it", i, c->what ? c->what : "stream");
		assert_int_equal(write_kind(w, c->kind, &good), 0);
		assert_int_equal(sv_record_writer_close(w), 0);
		if (!c->what)
			continue; /* an undefined stream cannot be bent in: the write refused it */
		/* the good record's position, then the bad one's bytes in its place */
		assert_int_equal(sv_record_reader_open(&r, path_of("rej.svrec")), 0);
		while (sv_record_reader_next(r, &rec) == 1)
			if (rec.kind != SV_REC_STREAM && rec.kind != SV_REC_END)
				at = rec.offset;
		sv_record_reader_close(r);
		assert_true(at > 0);
		buf = slurp(path_of("rej.svrec"), &len);
		size = c->kind == REJ_INTERVAL ? sizeof(bad.iv) : c->kind == REJ_WINDOW ? sizeof(bad.win)
										       : sizeof(bad.ck);
		buf[at + 1] = ((uint8_t *)&bad)[1]; /* point; kind and size stay */
		memcpy(buf + at + 4, (uint8_t *)&bad + 4, size - 4);
		reseal_at(buf, len, at);
		spill(path_of("bent.svrec"), buf, len);
		free(buf);
		assert_int_equal(sv_record_reader_open(&r, path_of("bent.svrec")), 0);
		while ((ret = sv_record_reader_next(r, &rec)) == 1)
			n++;
		assert_int_equal(ret, 0);
		if (n != 3) /* two STREAM, END */
			fail_msg("case %zu (%s): %d records read", i, c->what, n);
		sv_record_reader_get_damage(r, &d);
		assert_int_equal(d.records_invalid, 1);
		assert_int_equal(d.first_err, SV_RECORD_E_RECORD_FIELD);
		assert_int_equal(d.first_offset, at);
		assert_true(sv_record_reader_clean_end(r));
		sv_record_reader_close(r);
	}
}

/* A file of format 1.1 (tests/data/record-v1.1.svrec, written by the writer before the soak kinds: every kind
 * of that version) reads whole with this reader: its records, values and END. */
static void test_old_file_reads(void **state)
{
	const char *src = getenv("SVKIT_SRC");
	char path[512];
	struct sv_record_reader *r;
	struct sv_record_reader_damage d;
	struct sv_rec rec;
	struct sv_stats *h = malloc(sizeof(*h));
	unsigned n[SV_REC_KIND_MAX] = { 0 };
	int ret;

	(void)state;
	assert_non_null(h);
	snprintf(path, sizeof(path), "%s/tests/data/record-v1.1.svrec", src ? src : "../..");
	assert_int_equal(sv_record_reader_open(&r, path), 0);
	assert_int_equal(sv_record_reader_header(r)->version_major, 1);
	assert_int_equal(sv_record_reader_header(r)->version_minor, 1);
	assert_string_equal(sv_record_reader_header(r)->tool, "svold");
	while ((ret = sv_record_reader_next(r, &rec)) == 1) {
		n[rec.kind]++;
		switch (rec.kind) {
		case SV_REC_EVENT:
			assert_int_equal(rec.u.event.seq + 1, n[SV_REC_EVENT]);
			assert_int_equal(rec.u.event.point, SV_POINT_T3);
			break;
		case SV_REC_SUMMARY:
			assert_int_equal(rec.u.summary.lost, 3);
			assert_int_equal(rec.u.summary.count, 100);
			break;
		case SV_REC_HIST:
			assert_int_equal(sv_stats_deserialize(h, rec.hist_data, rec.u.hist.len), 0);
			assert_int_equal(h->count, 100);
			assert_int_equal(h->min, 30000);
			assert_int_equal(h->max, 30990);
			break;
		case SV_REC_DROP:
			assert_string_equal(rec.u.drop.reason_name, "tx_ring_full");
			break;
		case SV_REC_THREAD:
			assert_string_equal(rec.u.thread.holder_comm, "stress-ng");
			break;
		case SV_REC_END:
			assert_int_equal(rec.u.end.records, 108);
			break;
		default:
			break;
		}
	}
	assert_int_equal(ret, 0);
	assert_int_equal(n[SV_REC_STREAM], 2);
	assert_int_equal(n[SV_REC_NAME], 1);
	assert_int_equal(n[SV_REC_EVENT], 100);
	assert_int_equal(n[SV_REC_SUMMARY], 1);
	assert_int_equal(n[SV_REC_HIST], 1);
	assert_int_equal(n[SV_REC_DROP], 1);
	assert_int_equal(n[SV_REC_THREAD], 1);
	assert_int_equal(n[SV_REC_SYNC], 1);
	assert_int_equal(n[SV_REC_END], 1);
	assert_string_equal(sv_record_reader_stream(r, 1)->svid, "OLDMU02");
	assert_true(sv_record_reader_clean_end(r));
	assert_int_equal(sv_record_reader_skipped(r), 0);
	sv_record_reader_get_damage(r, &d);
	assert_int_equal(d.first_err, SV_RECORD_OK);
	sv_record_reader_close(r);
	free(h);
}

/* A kind this version has no name for (a newer minor's): this reader skips it, counted, and the part's END
 * still agrees. */
static void test_reserved_kind_skipped(void **state)
{
	struct sv_record_writer *w = open_writer("k14.svrec", SV_CLOCK_TAI);
	struct sv_rec_window win = window_rec();
	struct sv_record_reader *r;
	struct sv_rec rec;
	uint64_t at = 0;
	size_t len;
	uint8_t *buf;
	int n = 0, ret;

	(void)state;
	assert_int_equal(sv_record_write_window(w, &win), 0);
	assert_int_equal(sv_record_write_window(w, &win), 0);
	assert_int_equal(sv_record_writer_close(w), 0);
	assert_int_equal(sv_record_reader_open(&r, path_of("k14.svrec")), 0);
	while (sv_record_reader_next(r, &rec) == 1)
		if (rec.kind == SV_REC_WINDOW && !at)
			at = rec.offset;
	sv_record_reader_close(r);
	buf = slurp(path_of("k14.svrec"), &len);
	buf[at] = SV_REC_KIND_MAX;
	reseal_at(buf, len, at);
	spill(path_of("k14b.svrec"), buf, len);
	free(buf);
	assert_int_equal(sv_record_reader_open(&r, path_of("k14b.svrec")), 0);
	while ((ret = sv_record_reader_next(r, &rec)) == 1) {
		assert_int_not_equal(rec.offset, at);
		n++;
	}
	assert_int_equal(ret, 0);
	assert_int_equal(n, 4); /* two STREAM, one WINDOW, END */
	assert_int_equal(sv_record_reader_skipped(r), 1);
	assert_true(sv_record_reader_clean_end(r));
	sv_record_reader_close(r);
}

/* A MONOTONIC file converts with its header's to_tai until a CLOCK record of its own clock, then with that
 * record's; a CLOCK record of another clock does not move it. */
static void test_clock_moves_conversion(void **state)
{
	struct sv_record_writer *w = open_writer("mono.svrec", SV_CLOCK_MONOTONIC);
	struct sv_rec_clock other = clock_rec(SV_CLOCK_REALTIME, 1, 2, SV_REC_CLOCK_F_STEP);
	struct sv_rec_clock step;
	struct sv_record_reader *r;
	struct sv_rec rec;
	int64_t hdr_to_tai, tai;
	int clocks = 0;

	(void)state;
	assert_int_equal(sv_record_writer_close(w), 0);
	assert_int_equal(sv_record_reader_open(&r, path_of("mono.svrec")), 0);
	hdr_to_tai = sv_record_reader_header(r)->to_tai_ns; /* measured at open (this host's clocks) */
	sv_record_reader_close(r);

	w = open_writer("mono.svrec", SV_CLOCK_MONOTONIC);
	step = clock_rec(SV_CLOCK_MONOTONIC, hdr_to_tai, hdr_to_tai + 3 * SV_NSEC_PER_MSEC, SV_REC_CLOCK_F_STEP);
	assert_int_equal(sv_record_write_clock(w, &other), 0);
	assert_int_equal(sv_record_write_clock(w, &step), 0);
	assert_int_equal(sv_record_writer_close(w), 0);
	assert_int_equal(sv_record_reader_open(&r, path_of("mono.svrec")), 0);
	hdr_to_tai = sv_record_reader_header(r)->to_tai_ns;
	assert_true(sv_record_reader_to_tai(r, 1000, &tai));
	assert_int_equal(tai, 1000 + hdr_to_tai);
	while (sv_record_reader_next(r, &rec) == 1) {
		if (rec.kind != SV_REC_CLOCK)
			continue;
		assert_true(sv_record_reader_to_tai(r, 1000, &tai));
		if (clocks++ == 0)
			assert_int_equal(tai, 1000 + hdr_to_tai); /* REALTIME's: not this file's clock */
		else
			assert_int_equal(tai, 1000 + rec.u.clock.new_to_tai_ns);
	}
	assert_int_equal(clocks, 2);
	sv_record_reader_close(r);
}

/* A writer on a simulated clock (a synthetic soak): its header, part and END times are that clock's, the
 * header's UTC start its TAI minus the TAI offset. */
static void test_writer_simulated_clock(void **state)
{
	struct sv_record_writer *w = open_writer("sim.svrec", SV_CLOCK_TAI);
	const struct sv_rec_file_header *fh;
	struct sv_record_reader *r;
	struct sv_rec rec;

	(void)state;
	fake_now_ns += 72 * 3600 * SV_NSEC_PER_SEC;
	assert_int_equal(sv_record_writer_close(w), 0);
	assert_int_equal(sv_record_reader_open(&r, path_of("sim.svrec")), 0);
	fh = sv_record_reader_header(r);
	assert_int_equal(fh->start_ns, (int64_t)SEC0 * SV_NSEC_PER_SEC);
	assert_int_equal(fh->part_start_ns, (int64_t)SEC0 * SV_NSEC_PER_SEC);
	assert_int_equal(fh->start_realtime_ns, ((int64_t)SEC0 - 37) * SV_NSEC_PER_SEC);
	while (sv_record_reader_next(r, &rec) == 1)
		if (rec.kind == SV_REC_END)
			assert_int_equal(rec.u.end.t_ns, ((int64_t)SEC0 + 72 * 3600) * SV_NSEC_PER_SEC);
	assert_true(sv_record_reader_clean_end(r));
	sv_record_reader_close(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_soak_kinds_roundtrip), cmocka_unit_test(test_soak_fields_checked),
		cmocka_unit_test(test_old_file_reads),	     cmocka_unit_test(test_reserved_kind_skipped),
		cmocka_unit_test(test_clock_moves_conversion), cmocka_unit_test(test_writer_simulated_clock),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

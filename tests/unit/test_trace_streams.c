// SPDX-License-Identifier: Apache-2.0
/* svtrace's streams (bpf/svtrace_streams.c): BPF ids to statistics, the --svid filter, truncated svIDs,
 * the sample rate from the smpCnt wrap. No root, no BPF: the "streams" map is a table (trace_fixture.h). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "trace_fixture.h"

/* Ids resolve once (the map is asked once per id), in the order they come up; an id not in the map is
 * counted and asked again next time; nids covers the ids resolved. */
static void test_resolve_once(void **state)
{
	struct tfix f;
	struct svtrace_stream *s;
	const uint8_t *svid;
	size_t len;
	uint16_t appid;

	(void)state;
	tfix_init(&f, 2, 0, 0, 8, NULL);
	f.svid[3] = "MU03";
	f.svid[0] = "MU00";
	s = svtrace_streams_of(&f.streams, 3);
	assert_non_null(s);
	assert_int_equal(s->corr, 0);
	assert_int_equal(f.streams.nids, 4);
	assert_int_equal(svtrace_streams_of(&f.streams, 0)->corr, 1);
	for (int i = 0; i < 10; i++)
		assert_ptr_equal(svtrace_streams_of(&f.streams, 3), s);
	assert_int_equal(f.key_lookups, 2);
	assert_int_equal(svtrace_corr_stream(f.corr, 0, &appid, &svid, &len, NULL), 0);
	assert_int_equal(appid, 0x4003);
	assert_int_equal(len, 4);
	assert_memory_equal(svid, "MU03", 4);
	/* not in the map: counted, asked again (BPF may add it later) */
	assert_null(svtrace_streams_of(&f.streams, 7));
	assert_null(svtrace_streams_of(&f.streams, 7));
	assert_int_equal(f.streams.unknown, 2);
	assert_int_equal(f.key_lookups, 4);
	f.svid[7] = "MU07";
	assert_int_equal(svtrace_streams_of(&f.streams, 7)->corr, 2);
	assert_int_equal(f.streams.nids, 8);
	/* out of BPF's range */
	assert_null(svtrace_streams_of(&f.streams, SVTRACE_MAX_STREAMS));
	assert_null(svtrace_streams_key(&f.streams, SVTRACE_MAX_STREAMS, NULL));
	tfix_free(&f);
}

/* The --svid filter on what BPF kept (64 octets) and the length on the wire; a filtered id is never
 * asked again; an svID longer than BPF keeps is said once and remembered by its statistics' index. */
static void test_svid_filter(void **state)
{
	static const char long_id[] = "0123456789012345678901234567890123456789012345678901234567890123456789";
	static const struct {
		const char *filter, *svid;
		uint16_t wire_len;
		bool traced;
	} tc[] = {
		{ NULL, "MU01", 0, true },
		{ "MU01", "MU01", 0, true },
		{ "MU01", "MU02", 0, false },
		{ "MU01", "MU011", 0, false },		/* same prefix, longer */
		{ "MU011", "MU01", 0, false },
		{ long_id, long_id, 0, true },		/* 70 octets: BPF keeps 64, matched on those and the length */
		{ long_id, long_id, 71, false },	/* the same 64 octets, another length on the wire */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(tc) / sizeof(tc[0]); i++) {
		struct tfix f;
		struct svtrace_stream *s;
		bool trunc;

		print_message("  --svid %.10s, svID %.10s (%u on the wire)\n", tc[i].filter ? tc[i].filter : "(none)",
			      tc[i].svid, tc[i].wire_len);
		tfix_init(&f, 1, 0, 0, 8, tc[i].filter);
		f.svid[5] = tc[i].svid;
		f.wire_len[5] = tc[i].wire_len;
		s = svtrace_streams_of(&f.streams, 5);
		assert_int_equal(s != NULL, tc[i].traced);
		assert_ptr_equal(svtrace_streams_of(&f.streams, 5), s);
		assert_int_equal(f.key_lookups, 1);
		if (!tc[i].traced) {
			assert_int_equal(f.streams.s[5].corr, SVTRACE_STREAM_FILTERED);
			assert_int_equal(svtrace_corr_nstreams(f.corr), 0);
			tfix_free(&f);
			continue;
		}
		trunc = strlen(tc[i].svid) > SVTRACE_SVID_MAX;
		assert_int_equal(f.streams.svid_wire_len[s->corr], trunc ? strlen(tc[i].svid) : 0);
		tfix_free(&f);
	}
}

/* No room left in svtrace_corr (max_streams): the id is filtered out, counted there. */
static void test_corr_full(void **state)
{
	struct tfix f;

	(void)state;
	tfix_init(&f, 1, 0, 0, 1, NULL);
	f.svid[0] = "A";
	f.svid[1] = "B";
	assert_non_null(svtrace_streams_of(&f.streams, 0));
	assert_null(svtrace_streams_of(&f.streams, 1));
	assert_int_equal(svtrace_corr_counters(f.corr)->streams_overflow, 1);
	assert_int_equal(f.streams.s[1].corr, SVTRACE_STREAM_FILTERED);
	tfix_free(&f);
}

/* The map walk's path (svtrace_setup_streams_sync): the key comes with the id; nids covers every id
 * walked, filtered ones too; an id resolved before is not looked up again. */
static void test_key_path(void **state)
{
	struct svtrace_stream_key k = { .appid = 0x4000, .svid_len = 4 };
	struct tfix f;

	(void)state;
	tfix_init(&f, 1, 0, 0, 8, "MU01");
	memcpy(k.svid, "MU02", 4);
	assert_null(svtrace_streams_key(&f.streams, 9, &k));
	assert_int_equal(f.streams.nids, 10);
	memcpy(k.svid, "MU01", 4);
	assert_null(svtrace_streams_key(&f.streams, 9, &k));	/* filtered stays filtered */
	assert_int_equal(svtrace_streams_key(&f.streams, 2, &k)->corr, 0);
	assert_int_equal(svtrace_streams_key(&f.streams, 2, NULL)->corr, 0);
	assert_int_equal(f.key_lookups, 0);
	tfix_free(&f);
}

/* The rate from the smpCnt wrap (IEC 61850-9-2 §8.5.2: smpCnt counts the samples of the second), and
 * before it is known, the smallest nominal rate above what was seen: libsv's learner's rules (sv_rate.h),
 * as svsub and svreport apply them. */
static void test_learn(void **state)
{
	static const struct {
		const char *name;
		uint16_t from, to, step;	/* a run of smpCnt from..to, then the next run */
		uint16_t from2, to2;
		uint32_t rate, rate_for_align;
	} tc[] = {
		{ "no wrap yet, below 4000", 0, 3000, 1, 3001, 3500, 0, 4000 },
		{ "no wrap yet, above 4000", 0, 4500, 1, 4501, 4600, 0, 4800 },
		{ "wrap at 4000", 0, 3999, 1, 0, 100, 4000, 4000 },
		{ "wrap at 4800", 0, 4799, 1, 0, 10, 4800, 4800 },
		{ "every 4th frame of 14400 seen: the largest count + 1", 0, 14399, 4, 0, 40, 14397, 14397 },
		{ "unsynchronised 16-bit count", 0, 65535, 1, 0, 10, 65536, 65536 },
		{ "a small fall is no wrap", 100, 200, 1, 150, 160, 0, 4000 },
		{ "a count above the learned rate raises it (its lap lost its top)", 0, 3999, 1, 0, 4100, 4101, 4101 },
		{ "a reordering near the start of a second is no wrap", 0, 40, 1, 30, 60, 0, 4000 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(tc) / sizeof(tc[0]); i++) {
		struct tfix f;
		struct svtrace_stream *s;

		print_message("  %s\n", tc[i].name);
		tfix_init(&f, 1, 0, 0, 8, NULL);
		f.svid[0] = "MU01";
		s = svtrace_streams_of(&f.streams, 0);
		for (uint32_t n = tc[i].from; n <= tc[i].to; n += tc[i].step)
			svtrace_streams_learn(&f.streams, s, (uint16_t)n);
		for (uint32_t n = tc[i].from2; n <= tc[i].to2; n++)
			svtrace_streams_learn(&f.streams, s, (uint16_t)n);
		assert_int_equal(sv_rate_samples(&s->rl), tc[i].rate);
		assert_int_equal(svtrace_streams_rate(s), tc[i].rate_for_align);
		tfix_free(&f);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resolve_once),
		cmocka_unit_test(test_svid_filter),
		cmocka_unit_test(test_corr_full),
		cmocka_unit_test(test_key_path),
		cmocka_unit_test(test_learn),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

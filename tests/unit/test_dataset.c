/* SPDX-License-Identifier: Apache-2.0 */
/* Dataset descriptions (common/sv_dataset.h): layout, qualities, reading every type, the 9-2LE profile. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sv_codec.h"
#include "sv_dataset.h"

/* ---- layouts: offsets, length, channels, which Quality qualifies which value ----------------------- */

#define MEND { NULL, 0, 0 }

struct layout_case {
	const char *name;
	struct {
		const char *name;
		int type;
		double scale;
	} m[8];
	uint16_t len;
	uint8_t nvalues, nquality;
	uint16_t offset[8];
	int8_t quality[8]; /* per member: the Quality index of a value, -1 none (Quality/Timestamp: -1) */
	uint16_t stride;   /* quality_stride */
};

static const struct layout_case layout_cases[] = {
	{ "INT32 + q twice (9-2LE shape)",
	  { { "A.i", SV_DA_INT32, 0.001 }, { "A.q", SV_DA_QUALITY, 1 }, { "B.i", SV_DA_INT32, 0.001 },
	    { "B.q", SV_DA_QUALITY, 1 }, MEND },
	  16, 2, 2, { 0, 4, 8, 12 }, { 0, -1, 1, -1 }, 8 },
	/* libiec61850's example publisher: FLOAT32 + Timestamp twice, no quality at all */
	{ "FLOAT32 + Timestamp twice",
	  { { "f1", SV_DA_FLOAT32, 1 }, { "t1", SV_DA_TIMESTAMP, 1 }, { "f2", SV_DA_FLOAT32, 1 },
	    { "t2", SV_DA_TIMESTAMP, 1 }, MEND },
	  24, 2, 0, { 0, 4, 12, 16 }, { -1, -1, -1, -1 }, 0 },
	/* a CMV's mag.f and ang.f share the DO's q */
	{ "two values, one Quality",
	  { { "phsA.cVal.mag.f", SV_DA_FLOAT32, 1 }, { "phsA.cVal.ang.f", SV_DA_FLOAT32, 1 },
	    { "phsA.q", SV_DA_QUALITY, 1 }, { "x", SV_DA_INT8, 1 }, MEND },
	  13, 3, 1, { 0, 4, 8, 12 }, { 0, 0, -1, -1 }, 0 },
	/* Quality members at 4, 10, 18: no stride, the table is read */
	{ "irregular qualities",
	  { { "a", SV_DA_INT32, 1 }, { "a.q", SV_DA_QUALITY, 1 }, { "b", SV_DA_INT16, 1 }, { "b.q", SV_DA_QUALITY, 1 },
	    { "c", SV_DA_INT32, 1 }, { "c.q", SV_DA_QUALITY, 1 }, MEND },
	  22, 3, 3, { 0, 4, 8, 10, 14, 18 }, { 0, -1, 1, -1, 2, -1 }, 0 },
	{ "every width",
	  { { "b", SV_DA_BOOLEAN, 1 }, { "i8", SV_DA_INT8, 1 }, { "i16", SV_DA_INT16, 1 }, { "i64", SV_DA_INT64, 1 },
	    { "u8", SV_DA_INT8U, 1 }, { "u16", SV_DA_INT16U, 1 }, { "u32", SV_DA_INT32U, 1 },
	    { "f64", SV_DA_FLOAT64, 1 } },
	  1 + 1 + 2 + 8 + 1 + 2 + 4 + 8, 8, 0, { 0, 1, 2, 4, 12, 13, 15, 19 }, { -1, -1, -1, -1, -1, -1, -1, -1 },
	  0 },
};

static void test_layouts(void **state)
{
	(void)state;
	for (unsigned k = 0; k < sizeof(layout_cases) / sizeof(layout_cases[0]); k++) {
		const struct layout_case *tc = &layout_cases[k];
		struct sv_dataset ds;
		unsigned n = 0;

		print_message("case: %s\n", tc->name);
		sv_dataset_init(&ds, tc->name);
		for (; n < 8 && tc->m[n].name; n++)
			assert_int_equal(sv_dataset_add(&ds, tc->m[n].name, (enum sv_da_type)tc->m[n].type, tc->m[n].scale),
					 0);
		assert_int_equal(ds.nmembers, n);
		assert_int_equal(ds.len, tc->len);
		assert_int_equal(ds.nvalues, tc->nvalues);
		assert_int_equal(ds.nquality, tc->nquality);
		assert_true(sv_dataset_fits(&ds, tc->len));
		assert_false(sv_dataset_fits(&ds, (uint16_t)(tc->len + 1)));
		for (unsigned i = 0; i < n; i++) {
			assert_int_equal(ds.m[i].offset, tc->offset[i]);
			assert_int_equal(ds.m[i].quality, tc->quality[i]);
			assert_string_equal(ds.m[i].name, tc->m[i].name);
		}
		assert_int_equal(ds.quality_stride, tc->stride);
		/* the one-pass OR reads what the members read, with or without a stride */
		uint8_t seq[64];
		uint32_t want = 0;

		for (unsigned i = 0; i < sizeof(seq); i++)
			seq[i] = (uint8_t)(i * 37 + 11);
		for (unsigned q = 0; q < ds.nquality; q++) {
			assert_int_equal(ds.quality_off[q], ds.m[ds.quality_member[q]].offset);
			want |= sv_dataset_quality(&ds, seq, q);
		}
		assert_int_equal(sv_dataset_quality_or(&ds, seq), want);
	}
}

static void test_add_errors(void **state)
{
	struct sv_dataset ds;
	char long_name[SV_DS_NAME_LEN + 1];

	(void)state;
	sv_dataset_init(&ds, "x");
	assert_int_equal(sv_dataset_add(&ds, "a", SV_DA__COUNT, 1), -EINVAL);
	assert_int_equal(sv_dataset_add(&ds, "a", SV_DA_INT32, 0), -EINVAL);
	assert_int_equal(sv_dataset_add(&ds, "a", SV_DA_INT32, NAN), -EINVAL);
	assert_int_equal(sv_dataset_add(&ds, "a", SV_DA_INT32, INFINITY), -EINVAL);
	assert_int_equal(sv_dataset_add(&ds, "q", SV_DA_QUALITY, 0), 0); /* no scale for a Quality */
	memset(long_name, 'n', SV_DS_NAME_LEN);
	long_name[SV_DS_NAME_LEN] = '\0';
	assert_int_equal(sv_dataset_add(&ds, long_name, SV_DA_INT32, 1), -EINVAL);
	long_name[SV_DS_NAME_LEN - 1] = '\0';
	assert_int_equal(sv_dataset_add(&ds, long_name, SV_DA_INT32, -2.5), 0); /* negative: a reversed CT */
	while (ds.nmembers < SV_DS_MAX_MEMBERS)
		assert_int_equal(sv_dataset_add(&ds, "v", SV_DA_INT8, 1), 0);
	assert_int_equal(sv_dataset_add(&ds, "v", SV_DA_INT8, 1), -ENOSPC);
	assert_int_equal(ds.nmembers, SV_DS_MAX_MEMBERS);
	assert_int_equal(sv_dataset_profile(&ds, "9-2lf"), -ENOENT);
	assert_int_equal(sv_da_type_size(SV_DA__COUNT), 0);
	for (unsigned t = 0; t < SV_DA__COUNT; t++)
		assert_non_null(sv_da_type_names[t]);
	assert_null(sv_da_type_names[SV_DA__COUNT]);
}

/* ---- reading: every type from known octets -------------------------------------------------------- */

struct read_case {
	const char *name;
	int type;
	uint8_t bytes[8];
	int64_t i;    /* integers, BOOLEAN */
	uint64_t u;   /* unsigned, Quality */
	double f;     /* floats, and every channel's number */
	int64_t t_ns; /* Timestamp */
};

static const struct read_case read_cases[] = {
	{ "BOOLEAN false", SV_DA_BOOLEAN, { 0x00 }, 0, 0, 0, 0 },
	{ "BOOLEAN: anything else is true", SV_DA_BOOLEAN, { 0x80 }, 1, 0, 1, 0 },
	{ "INT8 -1", SV_DA_INT8, { 0xff }, -1, 0, -1, 0 },
	{ "INT16 -2", SV_DA_INT16, { 0xff, 0xfe }, -2, 0, -2, 0 },
	{ "INT32 28212856 (Omicron peak)", SV_DA_INT32, { 0x01, 0xae, 0x7e, 0x78 }, 28212856, 0, 28212856, 0 },
	{ "INT32 most negative", SV_DA_INT32, { 0x80, 0, 0, 0 }, INT32_MIN, 0, INT32_MIN, 0 },
	{ "INT64", SV_DA_INT64, { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfd }, -3, 0, -3, 0 },
	{ "INT8U 255", SV_DA_INT8U, { 0xff }, 0, 255, 255, 0 },
	{ "INT16U 65535", SV_DA_INT16U, { 0xff, 0xff }, 0, 65535, 65535, 0 },
	{ "INT32U 4294967295", SV_DA_INT32U, { 0xff, 0xff, 0xff, 0xff }, 0, 4294967295u, 4294967295.0, 0 },
	{ "FLOAT32 1.5", SV_DA_FLOAT32, { 0x3f, 0xc0, 0, 0 }, 0, 0, 1.5, 0 },
	{ "FLOAT32 -230.25", SV_DA_FLOAT32, { 0xc3, 0x66, 0x40, 0x00 }, 0, 0, -230.25, 0 },
	{ "FLOAT64 0.1", SV_DA_FLOAT64, { 0x3f, 0xb9, 0x99, 0x99, 0x99, 0x99, 0x99, 0x9a }, 0, 0, 0.1, 0 },
	{ "Quality derived", SV_DA_QUALITY, { 0, 0, 0x20, 0 }, 0, SV_Q_DERIVED, 0, 0 },
	/* 1700000000 s + half a second (0x800000 / 2^24), TimeQuality 0x0a */
	{ "Timestamp", SV_DA_TIMESTAMP, { 0x65, 0x53, 0xf1, 0x00, 0x80, 0x00, 0x00, 0x0a }, 0, 0, 0,
	  1700000000500000000LL },
};

static void test_read_types(void **state)
{
	(void)state;
	for (unsigned k = 0; k < sizeof(read_cases) / sizeof(read_cases[0]); k++) {
		const struct read_case *tc = &read_cases[k];
		struct sv_dataset ds;
		struct sv_da_value v;
		uint8_t seq[11];
		unsigned size = sv_da_type_size((enum sv_da_type)tc->type);

		print_message("case: %s\n", tc->name);
		/* after 3 octets of something else, so that offsets count */
		sv_dataset_init(&ds, "r");
		assert_int_equal(sv_dataset_add(&ds, "pad", SV_DA_INT16U, 1), 0);
		assert_int_equal(sv_dataset_add(&ds, "pad2", SV_DA_INT8, 1), 0);
		assert_int_equal(sv_dataset_add(&ds, "x", (enum sv_da_type)tc->type, 1), 0);
		memset(seq, 0x55, sizeof(seq));
		memcpy(seq + 3, tc->bytes, size);
		sv_dataset_member(&ds, seq, 2, &v);
		assert_int_equal(v.type, tc->type);
		switch (tc->type) {
		case SV_DA_FLOAT32:
		case SV_DA_FLOAT64:
			assert_true(v.f == tc->f);
			break;
		case SV_DA_TIMESTAMP:
			assert_int_equal(v.t_ns, tc->t_ns);
			break;
		case SV_DA_INT8U:
		case SV_DA_INT16U:
		case SV_DA_INT32U:
		case SV_DA_QUALITY:
			assert_int_equal(v.u, tc->u);
			break;
		default:
			assert_int_equal(v.i, tc->i);
		}
		if (tc->type == SV_DA_QUALITY)
			assert_int_equal(sv_dataset_quality(&ds, seq, 0), tc->u);
		else if (tc->type != SV_DA_TIMESTAMP)
			assert_true(sv_dataset_channel(&ds, seq, 2) == tc->f);
	}
}

/* ---- 9-2LE: the profile reads what the codec's INT32 + q reader reads ------------------------------ */

static void test_92le(void **state)
{
	const struct sv_dataset *ds = sv_dataset_92le();
	struct sv_dataset byname;
	struct sv_asdu a = { 0 };
	uint8_t seq[SV_92LE_SEQDATA_LEN];
	int32_t v[8];
	uint32_t q[8];

	(void)state;
	assert_ptr_equal(ds, sv_dataset_92le());
	assert_int_equal(sv_dataset_profile(&byname, "9-2LE"), 0); /* case-insensitive */
	assert_memory_equal(&byname, ds, sizeof(byname));
	assert_string_equal(ds->name, "9-2le");
	assert_int_equal(ds->len, SV_92LE_SEQDATA_LEN);
	assert_int_equal(ds->nvalues, 8);
	assert_int_equal(ds->nquality, 8);
	assert_string_equal(ds->m[0].name, "TCTR1.Amp.instMag.i");
	assert_string_equal(ds->m[15].name, "TVTR4.Vol.q");
	for (unsigned c = 0; c < 8; c++) {
		sv_put_be32(seq + 8 * c, (uint32_t)(c * 1000003 - 4000000));
		sv_put_be32(seq + 8 * c + 4, c == 3 || c == 7 ? SV_Q_DERIVED : c);
		assert_true(ds->m[ds->value[c]].scale == (c < 4 ? SV_CURRENT_LSB_A : SV_VOLTAGE_LSB_V));
	}
	a.seqData = seq;
	a.seqData_len = sizeof(seq);
	assert_int_equal(sv_asdu_read_channels(&a, v, q, 8), 8);
	for (unsigned c = 0; c < 8; c++) {
		assert_true(sv_dataset_channel(ds, seq, c) == (double)v[c]);
		assert_int_equal(sv_dataset_channel_quality(ds, seq, c), q[c]);
		assert_int_equal(sv_dataset_quality(ds, seq, c), q[c]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layouts),
		cmocka_unit_test(test_add_errors),
		cmocka_unit_test(test_read_types),
		cmocka_unit_test(test_92le),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

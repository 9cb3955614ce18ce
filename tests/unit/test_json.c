// SPDX-License-Identifier: Apache-2.0
/* sv_json: exact output for escaping, nesting, numbers, pretty printing; misuse is refused. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sv_json.h"

struct cap {
	char *buf;
	size_t len;
	FILE *f;
	struct sv_json j;
};

static void cap_open(struct cap *c, unsigned flags)
{
	c->buf = NULL;
	c->len = 0;
	c->f = open_memstream(&c->buf, &c->len);
	assert_non_null(c->f);
	sv_json_init(&c->j, c->f, flags);
}

/* Ends the document, checks the return code, returns the text (caller frees). */
static char *cap_close(struct cap *c, int want)
{
	assert_int_equal(sv_json_end(&c->j), want);
	fclose(c->f);
	return c->buf;
}

static void test_escaping(void **state)
{
	static const struct {
		const char *in;
		size_t len;
		const char *out;
	} cases[] = {
		{ "plain", 5, "\"plain\"\n" },
		{ "", 0, "\"\"\n" },
		{ "a\"b", 3, "\"a\\\"b\"\n" },
		{ "back\\slash", 10, "\"back\\\\slash\"\n" },
		{ "\b\f\n\r\t", 5, "\"\\b\\f\\n\\r\\t\"\n" },
		{ "\x01\x1f", 2, "\"\\u0001\\u001f\"\n" },
		{ "nul\0x", 5, "\"nul\\u0000x\"\n" },
		{ "\x7f", 1, "\"\\u007f\"\n" },
		/* non-ASCII bytes are escaped one by one: output stays ASCII whatever the input */
		{ "caf\xc3\xa9", 5, "\"caf\\u00c3\\u00a9\"\n" },
		{ "\xff", 1, "\"\\u00ff\"\n" },
		{ "/ is fine", 9, "\"/ is fine\"\n" },
	};
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cap c;
		char *out;

		cap_open(&c, 0);
		assert_int_equal(sv_json_string_n(&c.j, cases[i].in, cases[i].len), 0);
		out = cap_close(&c, 0);
		assert_string_equal(out, cases[i].out);
		free(out);
	}
}

static void test_long_string(void **state)
{
	char in[1000], want[1000 * 2 + 4];
	struct cap c;
	char *out;
	size_t i, n = 0;

	(void)state;
	/* longer than the escaper's internal chunk, with escapes on the chunk edges */
	want[n++] = '"';
	for (i = 0; i < sizeof(in); i++) {
		in[i] = (i % 7 == 0) ? '"' : (char)('a' + i % 26);
		if (in[i] == '"')
			want[n++] = '\\';
		want[n++] = in[i];
	}
	want[n++] = '"';
	want[n++] = '\n';
	want[n] = '\0';
	cap_open(&c, 0);
	sv_json_string_n(&c.j, in, sizeof(in));
	out = cap_close(&c, 0);
	assert_string_equal(out, want);
	free(out);
}

static void test_document(void **state)
{
	struct cap c;
	char *out;

	(void)state;
	cap_open(&c, 0);
	sv_json_object_begin(&c.j);
	sv_json_kv_str(&c.j, "svID", "MU01");
	sv_json_kv_int(&c.j, "min", INT64_MIN);
	sv_json_kv_int(&c.j, "max", INT64_MAX);
	sv_json_kv_uint(&c.j, "u", UINT64_MAX);
	sv_json_kv_bool(&c.j, "ok", true);
	sv_json_kv_bool(&c.j, "bad", false);
	sv_json_kv_null(&c.j, "none");
	sv_json_kv_str(&c.j, "nullstr", NULL);
	sv_json_key(&c.j, "list");
	sv_json_array_begin(&c.j);
	sv_json_int(&c.j, 1);
	sv_json_object_begin(&c.j);
	sv_json_object_end(&c.j);
	sv_json_array_begin(&c.j);
	sv_json_array_end(&c.j);
	sv_json_object_begin(&c.j);
	sv_json_kv_int(&c.j, "x", -2);
	sv_json_object_end(&c.j);
	sv_json_array_end(&c.j);
	sv_json_key(&c.j, "w\"eird");
	sv_json_int(&c.j, 0);
	sv_json_object_end(&c.j);
	out = cap_close(&c, 0);
	assert_string_equal(out, "{\"svID\":\"MU01\",\"min\":-9223372036854775808,\"max\":9223372036854775807,"
				 "\"u\":18446744073709551615,\"ok\":true,\"bad\":false,\"none\":null,"
				 "\"nullstr\":null,\"list\":[1,{},[],{\"x\":-2}],\"w\\\"eird\":0}\n");
	free(out);
}

static void test_doubles(void **state)
{
	static const struct {
		double v;
		const char *out;
	} cases[] = {
		{ 0.0, "0" },	  { 0.1, "0.1" },	{ -2.5, "-2.5" },  { 1e300, "1e+300" },
		{ 1.0 / 3, "0.3333333333333333" }, { 123456789.0, "123456789" },
	};
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cap c;
		char *out, want[64];

		cap_open(&c, 0);
		sv_json_double(&c.j, cases[i].v);
		out = cap_close(&c, 0);
		snprintf(want, sizeof(want), "%s\n", cases[i].out);
		assert_string_equal(out, want);
		/* and it reads back exactly */
		assert_true(strtod(out, NULL) == cases[i].v);
		free(out);
	}
	{
		struct cap c;
		char *out;

		cap_open(&c, 0);
		sv_json_array_begin(&c.j);
		sv_json_double(&c.j, NAN);
		sv_json_double(&c.j, INFINITY);
		sv_json_double(&c.j, -INFINITY);
		sv_json_array_end(&c.j);
		out = cap_close(&c, 0);
		assert_string_equal(out, "[null,null,null]\n");
		free(out);
	}
}

static void test_pretty(void **state)
{
	struct cap c;
	char *out;

	(void)state;
	cap_open(&c, SV_JSON_PRETTY);
	sv_json_object_begin(&c.j);
	sv_json_kv_int(&c.j, "a", 1);
	sv_json_key(&c.j, "b");
	sv_json_array_begin(&c.j);
	sv_json_int(&c.j, 2);
	sv_json_int(&c.j, 3);
	sv_json_array_end(&c.j);
	sv_json_key(&c.j, "c");
	sv_json_object_begin(&c.j);
	sv_json_object_end(&c.j);
	sv_json_object_end(&c.j);
	out = cap_close(&c, 0);
	assert_string_equal(out, "{\n  \"a\": 1,\n  \"b\": [\n    2,\n    3\n  ],\n  \"c\": {}\n}\n");
	free(out);
}

static void test_jsonl(void **state)
{
	struct cap c;
	int i;

	(void)state;
	cap_open(&c, 0);
	for (i = 0; i < 3; i++) {
		sv_json_object_begin(&c.j);
		sv_json_kv_int(&c.j, "i", i);
		sv_json_object_end(&c.j);
		assert_int_equal(sv_json_end(&c.j), 0);
	}
	fclose(c.f);
	assert_string_equal(c.buf, "{\"i\":0}\n{\"i\":1}\n{\"i\":2}\n");
	free(c.buf);
}

enum misuse { M_VALUE_NO_KEY, M_KEY_IN_ARRAY, M_WRONG_CLOSE, M_UNCLOSED, M_TOO_DEEP, M_TWO_TOP, M_EMPTY,
	      M_KEY_THEN_CLOSE, M_CLOSE_TOP, M_COUNT };

static void test_misuse(void **state)
{
	static const int want[M_COUNT] = { -EINVAL, -EINVAL, -EINVAL, -EINVAL, -E2BIG, -EINVAL, -EINVAL,
					   -EINVAL, -EINVAL };
	unsigned m;
	int i;

	(void)state;
	for (m = 0; m < M_COUNT; m++) {
		struct cap c;
		char *out;

		cap_open(&c, 0);
		switch (m) {
		case M_VALUE_NO_KEY:
			sv_json_object_begin(&c.j);
			sv_json_int(&c.j, 1);
			sv_json_object_end(&c.j);
			break;
		case M_KEY_IN_ARRAY:
			sv_json_array_begin(&c.j);
			sv_json_key(&c.j, "k");
			sv_json_array_end(&c.j);
			break;
		case M_WRONG_CLOSE:
			sv_json_array_begin(&c.j);
			sv_json_object_end(&c.j);
			break;
		case M_UNCLOSED:
			sv_json_object_begin(&c.j);
			break;
		case M_TOO_DEEP:
			for (i = 0; i < SV_JSON_MAX_DEPTH + 1; i++)
				sv_json_array_begin(&c.j);
			break;
		case M_TWO_TOP:
			sv_json_int(&c.j, 1);
			sv_json_int(&c.j, 2);
			break;
		case M_EMPTY:
			break;
		case M_KEY_THEN_CLOSE:
			sv_json_object_begin(&c.j);
			sv_json_key(&c.j, "k");
			sv_json_object_end(&c.j);
			break;
		case M_CLOSE_TOP:
			sv_json_array_end(&c.j);
			break;
		}
		/* sticky: once failed, later calls are no-ops returning the first error */
		if (sv_json_error(&c.j)) {
			int first = sv_json_error(&c.j);

			assert_int_equal(sv_json_null(&c.j), first);
			assert_int_equal(sv_json_object_begin(&c.j), first);
		}
		out = cap_close(&c, want[m]);
		/* nothing written after the error; in particular no newline */
		assert_null(strchr(out, '\n'));
		free(out);
	}
	/* exactly the maximum depth is fine */
	{
		struct cap c;
		char *out;

		cap_open(&c, 0);
		for (i = 0; i < SV_JSON_MAX_DEPTH; i++)
			sv_json_array_begin(&c.j);
		for (i = 0; i < SV_JSON_MAX_DEPTH; i++)
			sv_json_array_end(&c.j);
		out = cap_close(&c, 0);
		assert_int_equal(strlen(out), 2 * SV_JSON_MAX_DEPTH + 1);
		free(out);
	}
}

static void test_write_error(void **state)
{
	struct sv_json j;
	FILE *f = fopen("/dev/full", "w");
	int i;

	(void)state;
	if (!f)
		skip();
	sv_json_init(&j, f, 0);
	sv_json_array_begin(&j);
	for (i = 0; i < 10000; i++)
		sv_json_int(&j, i);
	sv_json_array_end(&j);
	assert_int_equal(sv_json_end(&j), -EIO);
	fclose(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escaping), cmocka_unit_test(test_long_string), cmocka_unit_test(test_document),
		cmocka_unit_test(test_doubles),	 cmocka_unit_test(test_pretty),	     cmocka_unit_test(test_jsonl),
		cmocka_unit_test(test_misuse),	 cmocka_unit_test(test_write_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

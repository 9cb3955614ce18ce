// SPDX-License-Identifier: Apache-2.0
/* sv_config: YAML loading with positions, strict scalars, ranges, overrides, dump round trip, help. */
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

#include "sv_config.h"
#include "svpub_config.h"

struct item {
	char name[16];
	uint16_t id;
	double gain[3];
};

struct sect {
	bool on;
	int32_t level;
};

struct conf {
	char label[12];
	uint16_t port;
	int8_t offset;
	uint64_t big;
	double ratio;
	int mode;
	uint8_t mac[6];
	struct sect s;
	unsigned nitems;
	struct item items[3];
};

static const char *const modes[] = { "fast", "slow", NULL };

#define I struct item
static const struct sv_cfg_key item_tab[] = {
	SV_CFG_KEY_STRING(I, name, "name", "x", "item name"),
	SV_CFG_KEY_UINT(I, id, "id", 1, 100, "1", "id"),
	SV_CFG_KEY_DOUBLES(I, gain, "gain", -10, 10, "[1, 2, 3]", "gains"),
	SV_CFG_KEY_END,
};
#undef I
#define S struct sect
static const struct sv_cfg_key sect_tab[] = {
	SV_CFG_KEY_BOOL(S, on, "on", "true", "switch"),
	SV_CFG_KEY_INT(S, level, "level", -5, 5, "-1", "level"),
	SV_CFG_KEY_END,
};
#undef S
#define C struct conf
static const struct sv_cfg_key tab[] = {
	SV_CFG_KEY_STRING(C, label, "label", "lab", "a label"),
	SV_CFG_KEY_UINT(C, port, "port", 1, 65535, "0x100", "port"),
	SV_CFG_KEY_INT(C, offset, "offset", 1, 0, "0", "no range: type limits only"),
	SV_CFG_KEY_UINT(C, big, "big", 1, 0, "18446744073709551615", "full u64"),
	SV_CFG_KEY_DOUBLE(C, ratio, "ratio", 0, 1, "0.1", "ratio"),
	SV_CFG_KEY_ENUM(C, mode, "mode", modes, "slow", "mode"),
	SV_CFG_KEY_MAC(C, mac, "mac", "01:0c:cd:04:00:01", "mac"),
	SV_CFG_KEY_SECTION(C, s, "sect", sect_tab, "a section"),
	SV_CFG_KEY_LIST(C, items, nitems, "items", item_tab, "1", "items"),
	SV_CFG_KEY_END,
};
#undef C

static int load(struct conf *c, const char *yaml, struct sv_cfg_error *err)
{
	memset(c, 0, sizeof(*c));
	assert_int_equal(sv_config_defaults(tab, c, err), 0);
	return sv_config_load_string(tab, c, yaml, strlen(yaml), "t.yaml", err);
}

static void test_defaults(void **state)
{
	struct conf c;
	struct sv_cfg_error err;

	(void)state;
	assert_int_equal(load(&c, "", &err), 0);
	assert_string_equal(c.label, "lab");
	assert_int_equal(c.port, 0x100);
	assert_true(c.big == UINT64_MAX);
	assert_int_equal(c.mode, 1);
	assert_int_equal(c.mac[5], 1);
	assert_true(c.s.on);
	assert_int_equal(c.s.level, -1);
	assert_int_equal(c.nitems, 1);
	assert_string_equal(c.items[0].name, "x");
	assert_true(c.items[0].gain[2] == 3.0);
}

static void test_load_nested(void **state)
{
	struct conf c;
	struct sv_cfg_error err;
	const char *y = "label: hello\n"
			"port: 4000\n"
			"ratio: 0.25\n"
			"mode: fast\n"
			"mac: 01-0C-CD-04-00-FF\n"
			"sect:\n"
			"  level: 5\n"
			"items:\n"
			"  - name: a\n"
			"    id: 7\n"
			"    gain: [0.5, -1, 2]\n"
			"  - name: b\n"
			"    gain: 4\n";

	(void)state;
	assert_int_equal(load(&c, y, &err), 0);
	assert_string_equal(c.label, "hello");
	assert_int_equal(c.port, 4000);
	assert_true(c.ratio == 0.25);
	assert_int_equal(c.mode, 0);
	assert_int_equal(c.mac[5], 0xff);
	assert_true(c.s.on); /* default kept inside a partly given section */
	assert_int_equal(c.s.level, 5);
	assert_int_equal(c.nitems, 2);
	assert_int_equal(c.items[0].id, 7);
	assert_true(c.items[0].gain[1] == -1.0);
	assert_string_equal(c.items[1].name, "b");
	assert_int_equal(c.items[1].id, 1); /* element defaults */
	assert_true(c.items[1].gain[0] == 4.0 && c.items[1].gain[2] == 4.0);
}

/* Each bad document must fail at the given line:column with a message containing @what. */
static const struct {
	const char *yaml;
	unsigned line, col;
	const char *what;
	const char *path;
} bad[] = {
	{ "label: a\nbogus: 1\n", 2, 1, "unknown key 'bogus'", "bogus" },
	{ "sect:\n  on: true\n  levle: 2\n", 3, 3, "unknown key", "sect.levle" },
	{ "port: 70000\n", 1, 7, "out of range 1..65535", "port" },
	{ "port: 0\n", 1, 7, "out of range", "port" },
	{ "port: 12abc\n", 1, 7, "not an unsigned integer", "port" },
	{ "port: 010\n", 1, 7, "not an unsigned integer", "port" },
	{ "port: -1\n", 1, 7, "not an unsigned integer", "port" },
	{ "port: 1e3\n", 1, 7, "not an unsigned integer", "port" },
	{ "port: ''\n", 1, 7, "not an unsigned integer", "port" },
	{ "offset: 128\n", 1, 9, "out of range", "offset" },
	{ "offset: -129\n", 1, 9, "out of range", "offset" },
	{ "big: 18446744073709551616\n", 1, 6, "out of range", "big" },
	{ "ratio: 1.5\n", 1, 8, "out of range 0..1", "ratio" },
	{ "ratio: nan\n", 1, 8, "not a number", "ratio" },
	{ "ratio: 0x1p-2\n", 1, 8, "not a number", "ratio" },
	{ "mode: medium\n", 1, 7, "not one of: fast, slow", "mode" },
	{ "mac: 01:02:03:04:05\n", 1, 6, "not a MAC", "mac" },
	{ "label: this-is-far-too-long\n", 1, 8, "at most 11", "label" },
	{ "sect:\n  on: maybe\n", 2, 7, "not a boolean", "sect.on" },
	{ "sect: 3\n", 1, 7, "expected a mapping", "sect" },
	{ "items:\n  - name: a\n    id: 101\n", 3, 9, "out of range 1..100", "items[0].id" },
	{ "items:\n  - name: a\n  - 5\n", 3, 5, "expected a mapping", "items[1]" },
	{ "items:\n  - {}\n  - {}\n  - {}\n  - {}\n", 5, 5, "more than 3", "items[3]" },
	{ "items:\n  - gain: [1, 2]\n", 2, 11, "2 values given, 3 expected", "items[0].gain" },
	{ "items:\n  - gain: [1, 2, 30]\n", 2, 18, "out of range", "items[0].gain" },
	{ "items: 4\n", 1, 8, "expected a sequence", "items" },
	{ "label: a\nlabel: b\n", 2, 1, "duplicate key 'label' (first at line 1)", "label" },
	{ "port: [1]\n", 1, 7, "expected a uint value", "port" },
	{ "label: a\n  port: 3\n", 2, 7, "YAML syntax", "" },
	{ "- a\n- b\n", 1, 1, "top level must be a mapping", "" },
	{ "label: a\n---\nport: 3\n", 3, 1, "more than one YAML document", "" },
};

static void test_errors_positions(void **state)
{
	(void)state;
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct conf c;
		struct sv_cfg_error err;
		char where[64];

		memset(&err, 0, sizeof(err));
		if (load(&c, bad[i].yaml, &err) != -EINVAL)
			fail_msg("case %u accepted: %s", i, bad[i].yaml);
		if (err.line != bad[i].line || err.column != bad[i].col || !strstr(err.msg, bad[i].what) ||
		    strcmp(err.path, bad[i].path))
			fail_msg("case %u: got '%s' (line %u col %u path '%s')", i, err.text, err.line, err.column,
				 err.path);
		snprintf(where, sizeof(where), "t.yaml:%u:%u: ", bad[i].line, bad[i].col);
		assert_true(strncmp(err.text, where, strlen(where)) == 0);
	}
}

static void test_file_errors(void **state)
{
	char path[] = "/tmp/test_config_XXXXXX";
	struct conf c;
	struct sv_cfg_error err;
	int fd = mkstemp(path);
	FILE *f;

	(void)state;
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fputs("# comment\nsect:\n  level: 9\n", f);
	fclose(f);
	memset(&c, 0, sizeof(c));
	sv_config_defaults(tab, &c, &err);
	assert_int_equal(sv_config_load_file(tab, &c, path, &err), -EINVAL);
	assert_int_equal(err.line, 3);
	assert_int_equal(err.column, 10);
	assert_non_null(strstr(err.text, path));
	assert_non_null(strstr(err.text, ":3:10: sect.level: 9 is out of range -5..5"));
	unlink(path);
	assert_int_equal(sv_config_load_file(tab, &c, "/nonexistent/x.yaml", &err), -ENOENT);
	assert_non_null(strstr(err.text, "cannot open"));
}

/* sv_config_locate: where a path is in a file, as the load errors count (1-based line:column). */
static void test_locate(void **state)
{
	static const char yaml[] = "# positions\n"
				   "label: hello\n"
				   "sect:\n"
				   "  level: 5\n"
				   "items:\n"
				   "  - name: a\n"
				   "    gain: [0.5, -1, 2]\n"
				   "  - name: \"b\"\n"
				   "    id:   9\n";
	static const struct {
		const char *path, *value;
		int ret;
		unsigned line, col;
	} cases[] = {
		{ "label", NULL, 0, 2, 8 },
		{ "label", "hello", 0, 2, 8 },
		{ "sect.level", NULL, 0, 4, 10 },
		{ "sect", NULL, 0, 4, 3 },	    /* a mapping starts at its first key */
		{ "items[1]", NULL, 0, 8, 5 },	    /* an element, after its "- " */
		{ "items[1].id", NULL, 0, 9, 11 },
		{ "items[1].id", "9", 0, 9, 11 },
		{ "items[1].name", "b", 0, 8, 11 }, /* the quote: where the value starts */
		{ "items[0].gain[2]", NULL, 0, 7, 21 },
		{ "items[0x1].id", NULL, 0, 9, 11 }, /* indexes as sv_config_set reads them */
		{ "label", "other", -ENOENT, 0, 0 }, /* an override replaced what the file says */
		{ "sect", "5", -ENOENT, 0, 0 },	     /* not a scalar */
		{ "nope", NULL, -ENOENT, 0, 0 },
		{ "sect.nope", NULL, -ENOENT, 0, 0 },
		{ "items[2].id", NULL, -ENOENT, 0, 0 },
		{ "items[0].id", NULL, -ENOENT, 0, 0 }, /* absent: the default applies */
		{ "items[0].gain[3]", NULL, -ENOENT, 0, 0 },
		{ "label.x", NULL, -ENOENT, 0, 0 },
		{ "label[0]", NULL, -ENOENT, 0, 0 },
		{ "", NULL, -EINVAL, 0, 0 },
		{ "items[*].id", NULL, -EINVAL, 0, 0 }, /* many nodes, not one */
		{ "items[01].id", NULL, -EINVAL, 0, 0 },
		{ "items[].id", NULL, -EINVAL, 0, 0 },
		{ "items[1", NULL, -EINVAL, 0, 0 },
		{ "items[1]id", NULL, -EINVAL, 0, 0 },
		{ "sect.", NULL, -EINVAL, 0, 0 },
		{ ".sect", NULL, -EINVAL, 0, 0 },
		{ "sect..level", NULL, -EINVAL, 0, 0 },
		{ "nope[x]", NULL, -EINVAL, 0, 0 }, /* malformed even where the file has nothing */
	};
	char path[] = "/tmp/test_config_locate_XXXXXX";
	unsigned line, col;
	int fd = mkstemp(path);
	FILE *f;

	(void)state;
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs(yaml, f);
	fclose(f);
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int ret;

		line = col = 77;
		ret = sv_config_locate(path, cases[i].path, cases[i].value, &line, &col);
		if (ret != cases[i].ret || line != cases[i].line || col != cases[i].col)
			fail_msg("case %u '%s': got %d at %u:%u, want %d at %u:%u", i, cases[i].path, ret, line, col,
				 cases[i].ret, cases[i].line, cases[i].col);
	}

	/* Agrees with the load errors: the same value, out of range, is reported at the same place. */
	{
		struct conf c;
		struct sv_cfg_error err;

		f = fopen(path, "w");
		assert_non_null(f);
		fputs("items:\n  - name: a\n  -   id:    101\n", f);
		fclose(f);
		memset(&c, 0, sizeof(c));
		assert_int_equal(sv_config_defaults(tab, &c, &err), 0);
		assert_int_equal(sv_config_load_file(tab, &c, path, &err), -EINVAL);
		assert_string_equal(err.path, "items[1].id");
		assert_int_equal(sv_config_locate(path, err.path, "101", &line, &col), 0);
		assert_int_equal(line, err.line);
		assert_int_equal(col, err.column);
	}

	/* Not YAML; empty; absent. */
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("label: a\n  port: 3\n", f);
	fclose(f);
	assert_int_equal(sv_config_locate(path, "label", NULL, &line, &col), -EINVAL);
	f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(sv_config_locate(path, "label", NULL, &line, &col), -ENOENT);
	unlink(path);
	assert_int_equal(sv_config_locate(path, "label", NULL, &line, &col), -ENOENT);
	assert_int_equal(line, 0);
}

/* The row lookup and range text that programs share with sv_config's own messages and help. */
static void test_find_key_range(void **state)
{
	char buf[64];

	(void)state;
	assert_ptr_equal(sv_config_find_key(tab, "port"), &tab[1]);
	assert_ptr_equal(sv_config_find_key(sect_tab, "level"), &sect_tab[1]);
	errno = 0;
	assert_null(sv_config_find_key(tab, "por"));
	assert_int_equal(errno, ENOENT);
	assert_null(sv_config_find_key(tab, "sect.level")); /* one level, not a path */
	assert_int_equal(sv_config_format_range(sv_config_find_key(tab, "port"), buf, sizeof(buf)), 0);
	assert_string_equal(buf, "1..65535");
	assert_int_equal(sv_config_format_range(sv_config_find_key(tab, "ratio"), buf, sizeof(buf)), 0);
	assert_string_equal(buf, "0..1");
	assert_int_equal(sv_config_format_range(sv_config_find_key(tab, "offset"), buf, sizeof(buf)), -ENOENT);
	assert_string_equal(buf, "");
}

static void test_overrides(void **state)
{
	struct conf c;
	struct sv_cfg_error err;

	(void)state;
	assert_int_equal(load(&c, "items:\n  - name: a\n  - name: b\n", &err), 0);
	assert_int_equal(sv_config_set(tab, &c, "port=0x4000", &err), 0);
	assert_int_equal(c.port, 0x4000);
	assert_int_equal(sv_config_set(tab, &c, "sect.level=-5", &err), 0);
	assert_int_equal(c.s.level, -5);
	assert_int_equal(sv_config_set(tab, &c, "items[1].id=9", &err), 0);
	assert_int_equal(c.items[1].id, 9);
	assert_int_equal(sv_config_set(tab, &c, "items[*].gain=[1.5, 2.5, 3.5]", &err), 0);
	assert_true(c.items[0].gain[1] == 2.5 && c.items[1].gain[2] == 3.5);
	assert_int_equal(sv_config_set(tab, &c, "items[2].name=new", &err), 0); /* append */
	assert_int_equal(c.nitems, 3);
	assert_string_equal(c.items[2].name, "new");
	assert_int_equal(c.items[2].id, 1);
	assert_int_equal(sv_config_set(tab, &c, "label=", &err), 0);
	assert_string_equal(c.label, "");

	static const struct {
		const char *a;
		const char *what;
	} e[] = {
		{ "port", "not KEY=VALUE" },
		{ "nope=1", "unknown key" },
		{ "port=0", "out of range" },
		{ "port= 5", "not an unsigned integer" },
		{ "sect=1", "a section" },
		{ "sect.nope=1", "unknown key" },
		{ "items.id=3", "a list" },
		{ "items[5].id=3", "out of range" },
		{ "items[x].id=3", "out of range" },
		{ "items[0].id=0", "out of range 1..100" },
		{ "items[0].gain=[1,2]", "2 values given" },
		{ "ratio=2", "out of range" },
		{ "label.x=1", "not a section or list" },
	};
	for (unsigned i = 0; i < sizeof(e) / sizeof(e[0]); i++) {
		if (sv_config_set(tab, &c, e[i].a, &err) != -EINVAL || !strstr(err.text, e[i].what))
			fail_msg("override %s: got '%s'", e[i].a, err.text);
		assert_int_equal(err.line, 0);
	}
	assert_non_null(strstr(err.text, "label: not a section or list"));
}

static char *print_to_string(const struct sv_cfg_key *t, const void *obj)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(sv_config_print(t, obj, f), 0);
	fclose(f);
	return buf;
}

static void test_print_round_trip(void **state)
{
	struct conf a, b;
	struct sv_cfg_error err;
	char *t1, *t2;

	(void)state;
	assert_int_equal(load(&a, "label: \"q\\\"u\\\\o\"\nratio: 0.1\nitems:\n  - gain: [0.1, 1e-300, -7.25]\n"
				  "  - name: z\n",
			      &err),
			 0);
	a.ratio = 1.0 / 3.0; /* needs 17 digits */
	t1 = print_to_string(tab, &a);
	assert_int_equal(load(&b, t1, &err), 0);
	t2 = print_to_string(tab, &b);
	assert_string_equal(t1, t2);
	assert_true(b.ratio == a.ratio);
	assert_true(b.items[0].gain[1] == 1e-300);
	assert_string_equal(b.label, "q\"u\\o");
	assert_int_equal(b.nitems, 2);
	assert_non_null(strstr(t1, "port: 0x100\n")); /* hex default -> hex dump */
	free(t1);
	free(t2);

	/* The real svpub table: defaults, resolve, dump, reload, dump again. */
	static struct svpub_config pc, pc2;

	assert_int_equal(svpub_config_init(&pc), 0);
	assert_int_equal(sv_config_set(svpub_config_table, &pc, "output=/tmp/x.pcap", &err), 0);
	assert_int_equal(sv_config_set(svpub_config_table, &pc, "backend=pcap", &err), 0);
	assert_int_equal(sv_config_set(svpub_config_table, &pc, "streams[1].profile=F4800S2I4U4", &err), 0);
	assert_int_equal(sv_config_set(svpub_config_table, &pc, "streams[1].signal.events[0].type=frequency", &err), 0);
	/* keys and values the issue-27 rules look at: the most that fits, printable edge characters */
	assert_int_equal(sv_config_set(svpub_config_table, &pc, "af_packet.ts_key=counted", &err), 0);
	assert_int_equal(sv_config_set(svpub_config_table, &pc, "streams[2].asdus=15", &err), 0);
	assert_int_equal(sv_config_set(svpub_config_table, &pc, "streams[2].sample_rate=6000", &err), 0);
	assert_int_equal(sv_config_set(svpub_config_table, &pc, "streams[0].datset= ~\"x\\y: #z", &err), 0);
	assert_int_equal(svpub_config_resolve(&pc, &err), 0);
	t1 = print_to_string(svpub_config_table, &pc);
	assert_int_equal(svpub_config_init(&pc2), 0);
	assert_int_equal(sv_config_load_string(svpub_config_table, &pc2, t1, strlen(t1), "dump", &err), 0);
	t2 = print_to_string(svpub_config_table, &pc2);
	assert_string_equal(t1, t2);
	assert_int_equal(pc2.nstreams, 3);
	assert_string_equal(pc2.streams[1].svid, "svpub02");
	assert_int_equal(pc2.streams[1].appid, 0x4001);
	assert_int_equal(pc2.streams[1].dst[5], 1);
	assert_int_equal(pc2.streams[1].signal.events[0].type, SVPUB_EV_FREQUENCY);
	assert_int_equal(pc2.af_packet.ts_key, SVPUB_TS_KEY_COUNTED);
	assert_string_equal(pc2.streams[0].datset, " ~\"x\\y: #z");
	assert_int_equal(svpub_config_resolve(&pc2, &err), 0); /* what --print-config prints passes the rules again */
	free(t1);
	free(t2);
}

static void test_help(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	sv_config_help(tab, f);
	fclose(f);
	assert_non_null(strstr(buf, "items[].gain"));
	assert_non_null(strstr(buf, "sect.level"));
	assert_non_null(strstr(buf, "-5..5"));
	assert_non_null(strstr(buf, "fast|slow"));
	free(buf);
}

static void test_strict_parsers(void **state)
{
	int64_t i;
	uint64_t u;
	double d;
	bool b;
	uint8_t mac[6];

	(void)state;
	assert_int_equal(sv_parse_int64("-9223372036854775808", &i), 0);
	assert_true(i == INT64_MIN);
	assert_int_equal(sv_parse_int64("9223372036854775808", &i), -ERANGE);
	assert_int_equal(sv_parse_int64("+5", &i), -EINVAL);
	assert_int_equal(sv_parse_int64("5 ", &i), -EINVAL);
	assert_int_equal(sv_parse_int64("0x", &i), -EINVAL);
	assert_int_equal(sv_parse_int64("-0x10", &i), 0);
	assert_int_equal(i, -16);
	assert_int_equal(sv_parse_uint64("0", &u), 0);
	assert_int_equal(sv_parse_uint64("00", &u), -EINVAL);
	assert_int_equal(sv_parse_double("inf", &d), -EINVAL);
	assert_int_equal(sv_parse_double("1e999", &d), -ERANGE);
	assert_int_equal(sv_parse_double("-2.5e-3", &d), 0);
	assert_true(d == -2.5e-3);
	assert_int_equal(sv_parse_bool("yes", &b), 0);
	assert_true(b);
	assert_int_equal(sv_parse_bool("2", &b), -EINVAL);
	assert_int_equal(sv_parse_mac("01:02:03-04:05:06", mac), -EINVAL);
	assert_int_equal(sv_parse_mac("aA:bb:cc:dd:ee:0f", mac), 0);
	assert_int_equal(mac[0], 0xaa);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),	  cmocka_unit_test(test_load_nested),
		cmocka_unit_test(test_errors_positions), cmocka_unit_test(test_file_errors),
		cmocka_unit_test(test_overrides),	  cmocka_unit_test(test_print_round_trip),
		cmocka_unit_test(test_help),		  cmocka_unit_test(test_strict_parsers),
		cmocka_unit_test(test_locate),		  cmocka_unit_test(test_find_key_range),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

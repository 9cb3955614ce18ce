// SPDX-License-Identifier: Apache-2.0
/*
 * sv_cli: the command line from a config table (the file first, early options, the hook, the rest in order;
 * messages naming the option; --help lines with values and defaults; --features), the rows' own rules
 * (SV_CFG_ZERO, SV_CFG_POW2, check), and sv_ready (NOTIFY_SOCKET datagrams, the atomic ready file).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "sv_cli.h"
#include "sv_ready.h"

struct sect {
	char file[32];
};

struct conf {
	char name[16];
	uint32_t wrap;
	uint32_t ring;
	double gain;
	int mode;
	bool status;
	char keep[8];
	struct sect s;
};

static const char *const modes[] = { "fast", "slow", NULL };

static int check_even(const char *v, char *msg, size_t n)
{
	if (strlen(v) % 2) {
		snprintf(msg, n, "'%s' has an odd length", v);
		return -EINVAL;
	}
	return 0;
}

enum { OPT_LOG = 1, OPT_NAME, OPT_TAG };

#define S struct sect
static const struct sv_cfg_key sect_tab[] = {
	SV_CFG_KEY_STRING(S, file, "file", "", "a file"),
	SV_CFG_KEY_END,
};
#undef S
#define C struct conf
static const struct sv_cfg_key tab[] = {
	SV_CLI_HEADING("Things:"),
	SV_CFG_KEY_STRING(C, name, "name", "none", "a name", SV_OPT_ID("name", 'n', "NAME", OPT_NAME)),
	SV_CFG_KEY_UINT(C, wrap, "wrap", 2, 100, "0", "wraps; 0 = learned", .flags = SV_CFG_ZERO,
			SV_OPT("wrap", 'w', "N")),
	SV_CFG_KEY_UINT(C, ring, "ring", 4, 1024, "8", "ring size", .flags = SV_CFG_POW2, SV_OPT("ring", 0, "N")),
	SV_CFG_KEY_DOUBLE(C, gain, "gain", 0, 10, "1.5", "gain", SV_OPT("gain", 0, "G")),
	SV_CFG_KEY_ENUM(C, mode, "mode", modes, "slow", "mode", SV_OPT("mode", 'm', "M")),
	SV_CFG_KEY_BOOL(C, status, "status", "true", "status lines"),
	SV_CLI_FLAG("quiet", 'q', "status", "false", "no status lines"),
	SV_CFG_KEY_STRING(C, keep, "keep", "ab", "even", .check = check_even, SV_OPT("keep", 0, "K")),
	SV_CFG_KEY_SECTION(C, s, "sect", sect_tab, "a section"),
	SV_CLI_ROW("file", 0, "FILE", "sect.file", NULL, 0, SV_OPT_EARLY, NULL),
	SV_CLI_OPT_RANGE("tag", 't', "T", OPT_TAG, 1, 9, "a tag, repeated"),
	SV_CLI_OPT("log", 'l', NULL, OPT_LOG, "log more"),
	SV_CLI_OPT("set", 's', "KEY=VALUE", SV_CLI_SET, "any key"),
	SV_CLI_ROW_CONFIG('c'),
	SV_CLI_ROW_READY_FILE,
	SV_CLI_ROWS_END,
};
#undef C

/* What the hooks saw, in order. */
struct seen {
	char log[512];
	unsigned tags[8], ntags;
	char file_at_loaded[32];
	char name_at_loaded[16];
};

static int hook(void *ctx, const struct sv_cfg_key *row, const char *arg, struct sv_cfg_error *err)
{
	struct seen *s = ctx;
	size_t used = strlen(s->log);
	uint64_t v;

	snprintf(s->log + used, sizeof(s->log) - used, "%s%s=%s", used ? " " : "", row->opt.name, arg ? arg : "");
	if (row->opt.id == OPT_TAG) {
		if (sv_cli_uint(row, arg, &v, err))
			return -EINVAL;
		s->tags[s->ntags++] = (unsigned)v;
	}
	if (row->opt.id == OPT_NAME && !strcmp(arg, "bad")) {
		snprintf(err->msg, sizeof(err->msg), "not this name");
		return -EINVAL;
	}
	return 0;
}

static struct seen *loaded_seen;

static int loaded(void *ctx, void *obj, const char *config, FILE *f)
{
	struct conf *c = obj;

	(void)config;
	(void)f;
	snprintf(loaded_seen->file_at_loaded, sizeof(loaded_seen->file_at_loaded), "%s", c->s.file);
	snprintf(loaded_seen->name_at_loaded, sizeof(loaded_seen->name_at_loaded), "%s", c->name);
	return ctx ? 0 : -EINVAL;
}

static const char *const feats[] = { "thing", NULL };

struct run {
	int rc;
	struct conf c;
	struct sv_cli cli;
	struct seen seen;
	char out[8192], err[2048];
	char words[512];	/* the argv words: sv_cli keeps pointers into them (cli.config, ready_file) */
};

/* Parses the words of @line (space-separated) as argv after "prog". */
static void run_line(struct run *r, bool operands, const char *line)
{
	char *argv[32], *save = NULL;
	int argc = 0;
	FILE *o, *e;
	struct sv_cfg_error cerr;
	const struct sv_cli_prog p = {
		.name = "prog", .usage = "prog [OPTIONS]\nprog --other", .about = "Does things.",
		.epilog = "EXAMPLES\n  prog -n x\n", .tab = tab, .features = feats, .operands = operands,
		.option = hook, .loaded = loaded, .ctx = &r->seen,
	};

	memset(r, 0, sizeof(*r));
	loaded_seen = &r->seen;
	snprintf(r->words, sizeof(r->words), "%s", line);
	argv[argc++] = "prog";
	for (char *w = strtok_r(r->words, " ", &save); w; w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	argv[argc] = NULL;
	assert_int_equal(sv_config_defaults(tab, &r->c, &cerr), 0);
	o = fmemopen(r->out, sizeof(r->out) - 1, "w");
	e = fmemopen(r->err, sizeof(r->err) - 1, "w");
	assert_non_null(o);
	assert_non_null(e);
	r->rc = sv_cli_parse(&p, argc, argv, &r->c, &r->cli, o, e);
	fclose(o);
	fclose(e);
}

static char cfg_path[64];

static int setup(void **state)
{
	FILE *f;
	int fd;

	(void)state;
	snprintf(cfg_path, sizeof(cfg_path), "/tmp/test_cli_XXXXXX");
	fd = mkstemp(cfg_path);
	if (fd < 0)
		return -1;
	f = fdopen(fd, "w");
	fputs("name: file\nwrap: 50\nmode: fast\nsect:\n  file: fromfile\n", f);
	fclose(f);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(cfg_path);
	return 0;
}

static void test_order_and_values(void **state)
{
	static struct run r;
	char line[256];

	(void)state;
	/* the file first wherever -c stands; the early option before loaded(); the rest in order, the last wins */
	snprintf(line, sizeof(line), "-n one --file early -q --wrap 0 -c %s -t 3 --tag=4 -n two -l -s gain=2.5", cfg_path);
	run_line(&r, false, line);
	assert_int_equal(r.rc, SV_CLI_RUN);
	assert_string_equal(r.cli.config, cfg_path);
	assert_string_equal(r.seen.file_at_loaded, "early");  /* the file's "fromfile", then --file */
	assert_string_equal(r.seen.name_at_loaded, "file");   /* -n not applied yet */
	assert_string_equal(r.c.name, "two");
	assert_int_equal(r.c.wrap, 0);			       /* SV_CFG_ZERO */
	assert_int_equal(r.c.mode, 0);			       /* the file's fast */
	assert_false(r.c.status);			       /* -q: status=false */
	assert_true(r.c.gain == 2.5);
	assert_int_equal(r.seen.ntags, 2);
	assert_int_equal(r.seen.tags[1], 4);
	assert_string_equal(r.seen.log, "name=one tag=3 tag=4 name=two log=");
	assert_string_equal(r.err, "");

	run_line(&r, false, "--print-config --ready-file /tmp/x.ready -m slow");
	assert_int_equal(r.rc, SV_CLI_RUN);
	assert_true(r.cli.print_config);
	assert_string_equal(r.cli.ready_file, "/tmp/x.ready");
	assert_null(r.cli.config);

	/* operands: refused, or handed back after the options (getopt moves them last) */
	run_line(&r, false, "a.rec -q");
	assert_int_equal(r.rc, -EINVAL);
	assert_non_null(strstr(r.err, "prog: unexpected argument 'a.rec'"));
	run_line(&r, true, "a.rec -q b.rec");
	assert_int_equal(r.rc, SV_CLI_RUN);
	assert_int_equal(r.cli.operands, 2);
}

/* Usage errors: exit 2, the option and what is wrong named. */
static const struct bad_case {
	const char *line, *err;
} bad_cases[] = {
	{ "--bogus", "prog: option '--bogus' is not known" },
	{ "-x", "prog: option '-x' is not known" },
	{ "-n", "prog: option '-n' needs an argument" },
	{ "--wrap", "prog: option '--wrap' needs an argument" },
	{ "--wrap 1", "prog: --wrap (-w): 1 is out of range 0 or 2..100" },
	{ "-w 101", "prog: --wrap (-w): 101 is out of range 0 or 2..100" },
	{ "--ring 6", "prog: --ring: 6 is not a power of two" },
	{ "--ring 2048", "prog: --ring: 2048 is out of range 4..1024" },
	{ "--gain x", "prog: --gain: 'x' is not a number" },
	{ "-m medium", "prog: --mode (-m): 'medium' is not one of: fast, slow" },
	{ "--keep abc", "prog: --keep: 'abc' has an odd length" },
	{ "-n bad", "prog: --name (-n): not this name" },
	{ "-t 0", "prog: --tag (-t): 0 is out of range 1..9" },
	{ "-t 01", "prog: --tag (-t): '01' is not an unsigned integer" },
	{ "-s nope=1", "prog: --set: nope: unknown key" },
	{ "-c /nonexistent/x.yaml", "prog: /nonexistent/x.yaml: cannot open" },
	{ "--help=x", "prog: option '--help=x' is not known" },
};

static void test_usage_errors(void **state)
{
	static struct run r;

	(void)state;
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		print_message("%s\n", bad_cases[i].line);
		run_line(&r, false, bad_cases[i].line);
		assert_int_equal(r.rc, -EINVAL);
		assert_int_equal(sv_cli_exit(r.rc), SV_EXIT_USAGE);
		if (!strstr(r.err, bad_cases[i].err))
			fail_msg("'%s': want '%s' in '%s'", bad_cases[i].line, bad_cases[i].err, r.err);
		assert_string_equal(r.out, "");
	}
	/* a file whose value breaks a row's rule: file:line:column */
	{
		char path[] = "/tmp/test_cli_bad_XXXXXX", line[64];
		int fd = mkstemp(path);
		FILE *f = fdopen(fd, "w");

		fputs("ring: 4\nwrap: 1\n", f);
		fclose(f);
		snprintf(line, sizeof(line), "-c %s", path);
		run_line(&r, false, line);
		unlink(path);
		assert_int_equal(r.rc, -EINVAL);
		assert_non_null(strstr(r.err, ":2:7: wrap: 1 is out of range 0 or 2..100"));
	}
}

static void test_help_features_version(void **state)
{
	static struct run r;

	(void)state;
	run_line(&r, false, "-q --help --bogus-after");
	assert_int_equal(r.rc, SV_CLI_DONE);
	assert_int_equal(sv_cli_exit(r.rc), SV_EXIT_OK);
	assert_non_null(strstr(r.out, "Usage: prog [OPTIONS]\n       prog --other\nDoes things.\n\nThings:\n"));
	assert_non_null(strstr(r.out, "\n  -n, --name NAME          (default none) a name\n"));
	assert_non_null(strstr(r.out, "\n  -w, --wrap N             (0 or 2..100, default 0) wraps; 0 = learned\n"));
	assert_non_null(strstr(r.out, "\n      --ring N             (4..1024, a power of two, default 8) ring size\n"));
	assert_non_null(strstr(r.out, "  -m, --mode M             (fast|slow, default slow) mode\n"));
	assert_non_null(strstr(r.out, "  -q, --quiet              no status lines\n"));
	assert_non_null(strstr(r.out, "      --file FILE          a file\n"));
	assert_non_null(strstr(r.out, "  -t, --tag T              (1..9) a tag, repeated\n"));
	assert_non_null(strstr(r.out, "\nEXAMPLES\n  prog -n x\n"));
	assert_null(strstr(r.out, ") status lines")); /* a key without an option is not an option */

	run_line(&r, false, "--features");
	assert_int_equal(r.rc, SV_CLI_DONE);
	assert_string_equal(r.out, "{\"tool\":\"prog\",\"version\":\"" SVKIT_VERSION "\",\"options\":[\"name\",\"wrap\","
				   "\"ring\",\"gain\",\"mode\",\"quiet\",\"keep\",\"file\",\"tag\",\"log\",\"set\",\"config\","
				   "\"ready-file\",\"print-config\",\"features\",\"help\",\"version\"],\"features\":[\"thing\"]}\n");
	run_line(&r, false, "-V");
	assert_int_equal(r.rc, SV_CLI_DONE);
	assert_string_equal(r.out, "prog (svkit) " SVKIT_VERSION "\n");
	/* command-line rows are not keys: a file cannot set them, the dump does not print them */
	assert_null(sv_config_find_key(tab, "quiet"));
	assert_null(sv_config_find_key(tab, ""));
}

/* A datagram socket standing in for systemd's NOTIFY_SOCKET; @abstract: '@' name. */
static int notify_socket(bool abstract, char *env, size_t n)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t len;
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	if (abstract) {
		snprintf(env, n, "@svkit-test-cli-%d", getpid());
		memcpy(sa.sun_path, env, strlen(env));
		sa.sun_path[0] = '\0';
		len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(env));
	} else {
		snprintf(env, n, "/tmp/svkit-test-cli-%d.sock", getpid());
		unlink(env);
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", env);
		len = sizeof(sa);
	}
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, len), 0);
	return fd;
}

static void recv_msg(int fd, char *buf, size_t n)
{
	ssize_t got = recv(fd, buf, n - 1, MSG_DONTWAIT);

	assert_true(got > 0);
	buf[got] = '\0';
}

static void test_ready(void **state)
{
	char env[108], msg[512], path[] = "/tmp/test_cli_ready_XXXXXX", file[64], text[256];
	struct stat st;
	FILE *f;
	int fd, pfd;

	(void)state;
	/* no NOTIFY_SOCKET, no ready file: nothing to do */
	unsetenv("NOTIFY_SOCKET");
	assert_int_equal(sv_ready_init(NULL), 0);
	assert_int_equal(sv_ready_set("x"), 0);
	assert_int_equal(sv_notify("READY=1"), 0);
	/* a relative address is not the protocol's */
	setenv("NOTIFY_SOCKET", "relative", 1);
	assert_int_equal(sv_notify("READY=1"), -EINVAL);

	for (int abstract = 0; abstract < 2; abstract++) {
		fd = notify_socket(abstract, env, sizeof(env));
		setenv("NOTIFY_SOCKET", env, 1);
		pfd = mkstemp(path);
		close(pfd);
		unlink(path);
		snprintf(file, sizeof(file), "%s", path);
		assert_int_equal(sv_ready_init(file), 0);
		assert_int_equal(stat(file, &st), -1); /* not before it is ready */
		assert_int_equal(sv_ready_set("receiving on b0"), 0);
		recv_msg(fd, msg, sizeof(msg));
		snprintf(text, sizeof(text), "READY=1\nMAINPID=%d\nSTATUS=receiving on b0\n", getpid());
		assert_string_equal(msg, text);
		f = fopen(file, "r");
		assert_non_null(f);
		memset(msg, 0, sizeof(msg));
		assert_true(fread(msg, 1, sizeof(msg) - 1, f) > 0);
		fclose(f);
		assert_string_equal(msg, text); /* the same lines in the file */
		assert_int_equal(sv_ready_status("10 frames"), 0);
		recv_msg(fd, msg, sizeof(msg));
		assert_string_equal(msg, "STATUS=10 frames");
		assert_int_equal(sv_ready_stopping("done"), 0);
		recv_msg(fd, msg, sizeof(msg));
		assert_string_equal(msg, "STOPPING=1\nSTATUS=done");
		assert_int_equal(stat(file, &st), -1); /* removed when stopping */
		assert_int_equal(sv_ready_stopping(NULL), 0); /* once */
		assert_true(recv(fd, msg, sizeof(msg), MSG_DONTWAIT) < 0);
		assert_int_equal(sv_ready_set("late"), 0); /* after the stop: no new file */
		assert_int_equal(stat(file, &st), -1);
		recv_msg(fd, msg, sizeof(msg));
		close(fd);
		if (!abstract)
			unlink(env);
	}
	/* a ready file that cannot be written: the error, and the datagram still goes */
	unsetenv("NOTIFY_SOCKET");
	assert_int_equal(sv_ready_init("/nonexistent/dir/ready"), 0);
	assert_int_equal(sv_ready_set("x"), -ENOENT);
	sv_ready_init(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_and_values),
		cmocka_unit_test(test_usage_errors),
		cmocka_unit_test(test_help_features_version),
		cmocka_unit_test(test_ready),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

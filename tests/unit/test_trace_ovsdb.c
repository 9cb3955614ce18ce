// SPDX-License-Identifier: Apache-2.0
/* svtrace's Open vSwitch database reader (bpf/svtrace_ovsdb.c): a real reply of ovsdb-server 3.1
 * (tests/data/ovsdb-select-reply.json), hand-made replies, and a live exchange with a fake server on a
 * socketpair-like unix socket. No root, no OVS needed. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "svtrace_ovsdb.h"

static char *real_reply(size_t *len)
{
	const char *src = getenv("SVKIT_SRC");
	char path[512];
	FILE *f;
	char *buf;

	snprintf(path, sizeof(path), "%s/tests/data/ovsdb-select-reply.json", src ? src : "../..");
	f = fopen(path, "rb");
	assert_non_null(f);
	buf = malloc(1 << 16);
	assert_non_null(buf);
	*len = fread(buf, 1, 1 << 16, f);
	fclose(f);
	return buf;
}

static void names(const struct svtrace_ovs_iface *ifs, unsigned n, char *out, size_t size)
{
	size_t o = 0;

	out[0] = 0;
	for (unsigned i = 0; i < n; i++)
		o += (size_t)snprintf(out + o, size - o, "%s%s:%s", i ? "," : "", ifs[i].name, ifs[i].type);
}

/* The bridge of each interface of the real reply, with its interfaces in the database's order. */
static void test_real_reply(void **state)
{
	static const struct {
		const char *iface, *bridge, *dp, *ifaces;
	} cases[] = {
		{ "up0", "br0", "netdev", "vm2p:afxdp,br0:internal,vm1p:,up0:" },
		{ "vm2p", "br0", "netdev", "vm2p:afxdp,br0:internal,vm1p:,up0:" },
		/* datapath_type "" is the kernel's (system); a bond's port has two interfaces */
		{ "eth7", "br1", "system", "br1:internal,eth8:,eth7:,other0:" },
		{ "other0", "br1", "system", "br1:internal,eth8:,eth7:,other0:" },
	};
	struct svtrace_ovs_iface ifs[8];
	struct svtrace_ovs_bridge br;
	char got[256], why[128];
	size_t len;
	char *json = real_reply(&len);

	(void)state;
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(svtrace_ovsdb_parse(json, len, cases[i].iface, &br, ifs, 8, why, sizeof(why)), 0);
		assert_string_equal(br.name, cases[i].bridge);
		assert_string_equal(br.datapath_type, cases[i].dp);
		assert_int_equal(br.nifaces, 4);
		assert_int_equal(br.nlong, 0);
		names(ifs, br.nifaces, got, sizeof(got));
		assert_string_equal(got, cases[i].ifaces);
	}
	/* not a port of any bridge */
	assert_int_equal(svtrace_ovsdb_parse(json, len, "eth9", &br, ifs, 8, why, sizeof(why)), -ESRCH);
	/* fewer slots than interfaces: the first ones kept, all counted */
	assert_int_equal(svtrace_ovsdb_parse(json, len, "up0", &br, ifs, 2, why, sizeof(why)), 0);
	assert_int_equal(br.nifaces, 4);
	names(ifs, 2, got, sizeof(got));
	assert_string_equal(got, "vm2p:afxdp,br0:internal");
	/* every prefix of a real reply is refused, none read out of bounds (ASan) */
	for (size_t cut = 0; cut < len - 1; cut += 7) {
		char *part = malloc(cut ? cut : 1);

		assert_non_null(part);
		memcpy(part, json, cut);
		assert_int_equal(svtrace_ovsdb_parse(part, cut, "up0", &br, ifs, 8, why, sizeof(why)), -EBADMSG);
		free(part);
	}
	free(json);
}

/* Hand-made replies: what is refused, and why. */
static void test_replies(void **state)
{
	static const struct {
		const char *json;
		int err;
		const char *why;	/* a part of the reason, or the interfaces for 0 */
	} cases[] = {
		{ "{\"id\":2,\"error\":{\"error\":\"unknown database\",\"details\":\"x\"}}", -EPROTO, "unknown database" },
		{ "{\"id\":1,\"result\":[{\"error\":\"permission error\"},{\"rows\":[]},{\"rows\":[]}],\"error\":null}",
		  -EPROTO, "permission error" },
		{ "{\"id\":1,\"result\":[{\"rows\":[]}],\"error\":null}", -EBADMSG, "no rows" },
		{ "[1,2,3]", -EBADMSG, "not a JSON-RPC object" },
		{ "{\"id\":1,\"result\":[{\"rows\":[]},{\"rows\":[]},{\"rows\":[]}]} trailing", 0, NULL },
		{ "{\"a\":\"\\q\"}", -EBADMSG, "not JSON" },
		{ "{\"a\":\"\x01\"}", -EBADMSG, "not JSON" },
		{ "{\"a\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}", -EBADMSG,
		  "not JSON" },
		/* a single-element set is the element itself; an escaped name; a name over 15 characters */
		{ "{\"id\":1,\"error\":null,\"result\":[{\"rows\":[{\"name\":\"b\",\"datapath_type\":\"netdev\","
		  "\"ports\":[\"set\",[[\"uuid\",\"p1\"],[\"uuid\",\"p2\"]]]}]},"
		  "{\"rows\":[{\"_uuid\":[\"uuid\",\"p1\"],\"interfaces\":[\"uuid\",\"i1\"]},"
		  "{\"_uuid\":[\"uuid\",\"p2\"],\"interfaces\":[\"set\",[[\"uuid\",\"i2\"],[\"uuid\",\"i3\"]]]}]},"
		  "{\"rows\":[{\"_uuid\":[\"uuid\",\"i1\"],\"name\":\"up\\u0030\",\"type\":\"\"},"
		  "{\"_uuid\":[\"uuid\",\"i2\"],\"name\":\"a-name-of-twenty-chars\",\"type\":\"\"},"
		  "{\"_uuid\":[\"uuid\",\"i3\"],\"name\":\"tap\\\"x\",\"type\":\"tap\"}]}]}", 0, "up0:,tap\"x:tap" },
	};
	struct svtrace_ovs_iface ifs[8];
	struct svtrace_ovs_bridge br;
	char why[128], got[256];

	(void)state;
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int err = svtrace_ovsdb_parse(cases[i].json, strlen(cases[i].json), "up0", &br, ifs, 8, why, sizeof(why));

		if (cases[i].err == 0 && !cases[i].why) {
			assert_int_equal(err, -ESRCH);	/* valid, no such interface */
			continue;
		}
		assert_int_equal(err, cases[i].err);
		if (err) {
			assert_non_null(strstr(why, cases[i].why));
			continue;
		}
		assert_int_equal(br.nifaces, 3);
		assert_int_equal(br.nlong, 1);
		names(ifs, br.nifaces - br.nlong, got, sizeof(got));
		assert_string_equal(got, cases[i].why);
	}
}

/* A server that answers the request with @reply (split in two writes) on a unix socket. */
static pid_t fake_server(const char *path, const char *reply)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int l = socket(AF_UNIX, SOCK_STREAM, 0);
	pid_t pid;

	assert_true(l >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	unlink(path);
	assert_int_equal(bind(l, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(l, 1), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		char req[4096];
		size_t half = strlen(reply) / 2;
		int c = accept(l, NULL, NULL);
		ssize_t n = c < 0 ? -1 : read(c, req, sizeof(req));

		/* the request is the one the parser expects the answer of */
		if (n != (ssize_t)strlen(svtrace_ovsdb_request()) || memcmp(req, svtrace_ovsdb_request(), (size_t)n))
			_exit(1);
		if (write(c, reply, half) != (ssize_t)half)
			_exit(1);
		usleep(20000);
		if (write(c, reply + half, strlen(reply) - half) != (ssize_t)(strlen(reply) - half))
			_exit(1);
		usleep(200000);
		_exit(0);
	}
	close(l);
	return pid;
}

static void test_socket(void **state)
{
	char path[64], db[80], why[128], *json;
	struct svtrace_ovs_iface ifs[8];
	struct svtrace_ovs_bridge br;
	size_t len;
	int st;
	pid_t pid;

	(void)state;
	json = real_reply(&len);
	json[len] = 0;
	snprintf(path, sizeof(path), "/tmp/test_ovsdb.%d", (int)getpid());
	pid = fake_server(path, json);
	snprintf(db, sizeof(db), "unix:%s", path);
	assert_int_equal(svtrace_ovsdb_bridge_of(db, "vm1p", 2000, &br, ifs, 8, why, sizeof(why)), 0);
	assert_string_equal(br.name, "br0");
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* nobody listens any more; no such socket; not a unix: address */
	assert_int_equal(svtrace_ovsdb_bridge_of(db, "vm1p", 200, &br, ifs, 8, why, sizeof(why)), -ECONNREFUSED);
	unlink(path);
	assert_int_equal(svtrace_ovsdb_bridge_of(db, "vm1p", 200, &br, ifs, 8, why, sizeof(why)), -ENOENT);
	assert_int_equal(svtrace_ovsdb_bridge_of("tcp:127.0.0.1:6640", "vm1p", 200, &br, ifs, 8, why, sizeof(why)),
			 -EINVAL);
	/* a server that never answers: the timeout */
	pid = fake_server(path, "");
	kill(pid, SIGSTOP);
	assert_int_equal(svtrace_ovsdb_bridge_of(db, "vm1p", 200, &br, ifs, 8, why, sizeof(why)), -ETIMEDOUT);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	unlink(path);
	free(json);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_reply),
		cmocka_unit_test(test_replies),
		cmocka_unit_test(test_socket),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

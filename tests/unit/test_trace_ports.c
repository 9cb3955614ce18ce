// SPDX-License-Identifier: Apache-2.0
/*
 * svtrace's ports (bpf/svtrace_ports.c): the command line's names (usage errors before anything is looked
 * up), the lookups that fail, and the watch that follows an interface re-created under its name into BPF's
 * port filter. In the test's own network namespace, on its loopback: no root.
 */
#include <errno.h>
#include <net/if.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "svtrace_ports.h"
#include "svtrace_sys.h"

static void test_parse(void **state)
{
	static const struct {
		const char *ingress, *egress;
		int rc;
		unsigned n;
		const char *last;
	} tc[] = {
		{ "up0", "vm1p,vm2p", 0, 2, "vm2p" },
		{ "up0", "vm1p", 0, 1, "vm1p" },
		{ "up0", "all", 0, 0, "up0" },			/* listed later (svtrace_ports_resolve) */
		{ "up0", "vm1p,,vm2p", 0, 2, "vm2p" },		/* strtok: empty names are no names */
		{ "0123456789abcdef", "vm1p", -EINVAL, 0, NULL },	/* 16 characters: IFNAMSIZ is 16 with the NUL */
		{ "up0", "0123456789abcdef", -EINVAL, 0, NULL },
		{ "up0", "vm1p,up0", -EINVAL, 0, NULL },	/* the ingress cannot be an egress */
		{ "up0", "vm1p,vm2p,vm1p", -EINVAL, 0, NULL },
		{ "up0", ",", -EINVAL, 0, NULL },
		{ "up0", "a,b,c,d,e,f,g,h,i,j,k,l,m,n,o", 0, 15, "o" },
		{ "up0", "a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p", -EINVAL, 0, NULL },	/* BPF's filter has 15 */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(tc) / sizeof(tc[0]); i++) {
		struct svtrace_ports ps = { 0 };
		char egress[64];

		print_message("  --ingress %s --egress %s\n", tc[i].ingress, tc[i].egress);
		snprintf(egress, sizeof(egress), "%s", tc[i].egress);
		assert_int_equal(svtrace_ports_parse(&ps, tc[i].ingress, egress), tc[i].rc);
		if (tc[i].rc)
			continue;
		assert_int_equal(ps.n, tc[i].n);
		assert_string_equal(ps.port[0].name, tc[i].ingress);
		assert_string_equal(ps.port[ps.n].name, tc[i].last);
	}
	assert_string_equal(svtrace_ports_kind(0), "ingress");
	assert_string_equal(svtrace_ports_kind(3), "egress");
}

/* What is not there is said and refused: a run-time error, not a usage error. */
static void test_resolve_errors(void **state)
{
	struct svtrace_ports ps = { 0 };
	char egress[32] = "svtnosuch0";

	(void)state;
	assert_int_equal(svtrace_ports_parse(&ps, "lo", egress), 0);
	assert_int_equal(svtrace_ports_resolve(&ps, NULL, egress, NULL), -ENODEV);
	assert_int_equal(svtrace_ports_resolve(&ps, "svtrace-unit-no-such-netns", egress, NULL), -ENOENT);
	/* the ingress missing */
	snprintf(egress, sizeof(egress), "lo");
	assert_int_equal(svtrace_ports_parse(&ps, "svtnosuch1", egress), 0);
	assert_int_equal(svtrace_ports_resolve(&ps, NULL, egress, NULL), -ENODEV);
	/* --egress all with a database named and not there */
	snprintf(egress, sizeof(egress), "all");
	assert_int_equal(svtrace_ports_parse(&ps, "lo", egress), 0);
	assert_int_equal(svtrace_ports_resolve(&ps, NULL, egress, "unix:/nonexistent/db.sock"), -ENOENT);
}

/* A port whose interface came back under another ifindex is followed: BPF's filter rewritten in place,
 * the port's new ifindex kept, counted, reported once; one that is gone is marked gone until it is back. */
static void test_watch(void **state)
{
	struct svtrace_ports ps = { .port = { { "lo", 9999, 1 }, { "svtnosuch0", 5, 1 } }, .n = 1, .all = 2 };
	volatile uint32_t bpf_ifindex[SVTRACE_CORR_MAX_PORTS] = { 9999, 5 }, bpf_netns[SVTRACE_CORR_MAX_PORTS] = { 1, 1 };
	uint32_t ino;

	(void)state;
	assert_int_equal(svtrace_netns_ino(NULL, &ino), 0);
	assert_int_equal(svtrace_ports_watch(&ps, NULL, bpf_ifindex, bpf_netns), 1u << 0);
	assert_int_equal(ps.port[0].ifindex, if_nametoindex("lo"));
	assert_int_equal(ps.port[0].netns_ino, ino);
	assert_int_equal(ps.port[0].recreated, 1);
	assert_false(ps.port[0].gone);
	assert_int_equal(bpf_ifindex[0], if_nametoindex("lo"));
	assert_int_equal(bpf_netns[0], ino);
	assert_true(ps.port[1].gone);
	assert_int_equal(bpf_ifindex[1], 5);	/* a gone port's pair stays: its frames are not followed */
	/* nothing new: nothing followed again */
	assert_int_equal(svtrace_ports_watch(&ps, NULL, bpf_ifindex, bpf_netns), 0);
	assert_int_equal(ps.port[0].recreated, 1);
	assert_true(ps.port[1].gone);
	/* back (here: renamed to an interface that exists): followed, no longer gone */
	snprintf(ps.port[1].name, sizeof(ps.port[1].name), "lo");
	assert_int_equal(svtrace_ports_watch(&ps, NULL, bpf_ifindex, bpf_netns), 1u << 1);
	assert_false(ps.port[1].gone);
	assert_int_equal(ps.port[1].recreated, 1);
	/* its namespace gone: every port is */
	assert_int_equal(svtrace_ports_watch(&ps, "svtrace-unit-no-such-netns", bpf_ifindex, bpf_netns), 0);
	assert_true(ps.port[0].gone && ps.port[1].gone);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_resolve_errors),
		cmocka_unit_test(test_watch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

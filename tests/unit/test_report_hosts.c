// SPDX-License-Identifier: Apache-2.0
/*
 * svreport over several hosts (issue 32): two hypervisors' svtrace records whose egress ports have the same name
 * ("vnet0") are two guests, each named by its host; the same name from another tool (svsub's --guest) stays the
 * one guest it joins; the "hosts" section gives each host's tools, clock (the unsynchronised one flagged) and
 * guests, and the whole cluster; an alias still renames a host's port.
 */
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

#include "sv_clock.h"
#include "sv_record.h"
#include "svreport.h"
#include "unit_tmpdir.h"

#define SEC0 1700000000u
#define RATE 4000u
#define N 200u

UNIT_TMPDIR("test_report_hosts")

static const char *path_of(const char *name)
{
	static char buf[4][128];
	static unsigned k;
	char *p = buf[k++ % 4];

	snprintf(p, 128, "%s/%s", dir, name);
	return p;
}

/* A record file of @tool on @host (its clock synchronised or not), stream MU01 at @RATE, port 0 named @port. */
static struct sv_record_writer *host_file(const char *name, const char *tool, const char *host, bool synced,
					  const char *port)
{
	struct sv_clock_sync sync = {.unsync = !synced, .state = synced ? 0 : 5, .tai_offset_s = 37,
				     .maxerror_ns = 1000};
	struct sv_record_writer_cfg cfg = {.path = path_of(name), .tool = tool, .clock = SV_CLOCK_TAI, .sync = &sync,
					   .host = host, .no_to_tai = true};
	struct sv_rec_stream s = {.stream = 0, .appid = 0x4000, .asdus = 1, .sample_rate = RATE, .conf_rev = 1,
				  .vlan = 0xFFFF, .smp_synch = 2, .svid_len = 4, .smp_wrap = RATE};
	struct sv_record_writer *w = NULL;

	assert_int_equal(sv_record_writer_open(&w, &cfg), 0);
	memcpy(s.svid, "MU01", 5);
	assert_int_equal(sv_record_define_stream(w, &s), 0);
	if (port) {
		struct sv_rec_name n = {.name_kind = SV_REC_NAME_GUEST, .id = 0};

		snprintf(n.name, sizeof(n.name), "%s", port);
		assert_int_equal(sv_record_define_name(w, &n), 0);
	}
	return w;
}

static void ev(struct sv_record_writer *w, unsigned point, unsigned k, int64_t after_ts_ns, uint16_t guest)
{
	struct sv_rec_event e = {.point = (uint8_t)point, .stream = 0, .tai_sec = SEC0, .smp_cnt = (uint16_t)k,
				 .t_ns = sv_sample_time_ns(SEC0, k, RATE) + after_ts_ns, .ts_src = SV_TS_SOFTWARE,
				 .guest = guest, .nasdu = 1};

	assert_int_equal(sv_record_write_event(w, &e), 0);
}

/* svpub on pub (synchronised), svtrace on hvA (synchronised, T1-T2b 20 us) and hvB (not, 40 us, 10 frames
 * missing at T2b), both with a port vnet0; svsub on hvA's guest with --guest hvA:vnet0 (T3 10 us after T2b):
 * the port's name as the report gives it once two hosts have one. */
static struct svr *two_hypervisors(const char *alias_from, const char *alias_to, const char *sub_guest)
{
	struct sv_record_writer *pub = host_file("pub.rec", "svpub", "pub", true, NULL),
				*a = host_file("hva.rec", "svtrace", "hvA", true, "vnet0"),
				*b = host_file("hvb.rec", "svtrace", "hvB", false, "vnet0"),
				*s = host_file("sub.rec", "svsub", "guestA", true, NULL);
	const char *files[] = {"pub.rec", "hva.rec", "hvb.rec", "sub.rec"}, *guests[] = {NULL, NULL, NULL, sub_guest};
	struct svr *r;

	for (unsigned k = 0; k < N; k++) {
		ev(pub, SV_POINT_T0, k, 5000, SV_REC_GUEST_NONE);
		ev(a, SV_POINT_T1, k, 10000, SV_REC_GUEST_NONE);
		ev(a, SV_POINT_T2A, k, 15000, 0);
		ev(a, SV_POINT_T2B, k, 30000, 0);
		ev(b, SV_POINT_T1, k, 10000, SV_REC_GUEST_NONE);
		ev(b, SV_POINT_T2A, k, 20000, 0);
		if (k < N - 10)
			ev(b, SV_POINT_T2B, k, 50000, 0);
		ev(s, SV_POINT_T3, k, 40000, SV_REC_GUEST_NONE);
	}
	assert_int_equal(sv_record_writer_close(pub), 0);
	assert_int_equal(sv_record_writer_close(a), 0);
	assert_int_equal(sv_record_writer_close(b), 0);
	assert_int_equal(sv_record_writer_close(s), 0);
	assert_int_equal(svr_create(&r, NULL), 0);
	if (alias_from)
		assert_int_equal(svr_add_alias(r, alias_from, alias_to), 0);
	for (unsigned i = 0; i < 4; i++)
		assert_int_equal(svr_add_file(r, path_of(files[i]), guests[i]), 0);
	assert_int_equal(svr_run(r), 0);
	return r;
}

static int guest_of(const struct svr *r, const char *name)
{
	for (unsigned g = 0; g < svr_nguests(r); g++)
		if (!strcmp(svr_guest_name(r, g), name))
			return (int)g;
	return -1;
}

static char *output(struct svr *r, bool json)
{
	struct svr_budgets b;
	struct svr_eval e;
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(f);
	svr_budgets_default(&b);
	svr_evaluate(r, &b, &e);
	assert_int_equal(json ? svr_write_json(r, &b, &e, NULL, f) : svr_write_text(r, &b, &e, NULL, f), 0);
	fclose(f);
	return out;
}

static void test_same_port_two_hosts(void **state)
{
	struct svr *r;
	struct svr_hop h;
	int ga, gb;
	char *text, *json;

	(void)state;
	r = two_hypervisors(NULL, NULL, "hvA:vnet0");
	ga = guest_of(r, "hvA:vnet0");
	gb = guest_of(r, "hvB:vnet0");
	/* two guests, each named by its host; svsub's (another tool) joined hvA's by that name */
	assert_int_equal(svr_nguests(r), 2);
	assert_true(ga >= 0 && gb >= 0);
	assert_int_equal(svr_hop_get(r, SV_POINT_T1, SV_POINT_T2B, ga, -1, &h), 0);
	assert_int_equal(h.count, N);
	assert_int_equal(h.lat.max, 20000);
	assert_int_equal(svr_hop_get(r, SV_POINT_T1, SV_POINT_T2B, gb, -1, &h), 0);
	assert_int_equal(h.count, N - 10);
	assert_int_equal(h.lat.max, 40000);
	assert_int_equal(h.lost, 10);
	assert_int_equal(svr_hop_get(r, SV_POINT_T2B, SV_POINT_T3, ga, -1, &h), 0);
	assert_int_equal(h.count, N);
	assert_int_equal(svr_hop_get(r, SV_POINT_T2B, SV_POINT_T3, gb, -1, &h), -ENODATA);

	text = output(r, false);
	assert_non_null(strstr(text, "Hosts (4;"));
	assert_non_null(strstr(text, "hvA: svtrace (1 file), clock synchronised"));
	assert_non_null(strstr(text, "hvB: svtrace (1 file), clock NOT SYNCHRONISED (STA_UNSYNC)"));
	assert_non_null(strstr(text, "cluster: 4 hosts, 1 with a clock not synchronised"));
	json = output(r, true);
	{
		char *u = strstr(json, "\"unsynchronised_hosts\": ["), *end = u ? strchr(u, ']') : NULL;

		assert_non_null(end);
		*end = '\0';
		assert_non_null(strstr(u, "\"hvB\""));
		assert_null(strstr(u, "\"hvA\""));
		*end = ']';
	}
	assert_non_null(strstr(json, "\"clock_problem\": \"STA_UNSYNC\""));
	assert_non_null(strstr(json, "\"guest\": \"hvB:vnet0\""));
	free(text);
	free(json);
	svr_destroy(r);
}

/* An alias HOST:NAME still names a host's port (before the host qualification). */
static void test_alias_wins(void **state)
{
	struct svr *r;

	(void)state;
	r = two_hypervisors("hvB:vnet0", "vm-b", "vnet0");
	assert_int_equal(svr_nguests(r), 2);
	assert_true(guest_of(r, "vm-b") >= 0);
	assert_true(guest_of(r, "vnet0") >= 0); /* hvA's and svsub's: no other host's vnet0 left to clash with */
	svr_destroy(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_port_two_hosts),
		cmocka_unit_test(test_alias_wins),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

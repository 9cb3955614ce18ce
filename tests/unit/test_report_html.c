// SPDX-License-Identifier: Apache-2.0
/*
 * svreport's HTML report rendered by headless Chromium: every plot (<svg>) must be laid out with a
 * non-empty size and hold drawn content, with no external resource. Skips when chromium is absent.
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
#include "unit_chromium.h"

#define SEC0 1700000000u
#define RATE 4000u

static char dir[64];

static const char *path_of(const char *name)
{
	static char buf[8][128];
	static unsigned k;
	char *p = buf[k++ % 8];

	snprintf(p, 128, "%s/%s", dir, name);
	return p;
}

static struct sv_record_writer *wopen(const char *name, const char *tool)
{
	struct sv_clock_sync sync = {.tai_offset_s = 37, .maxerror_ns = 1000};
	struct sv_record_writer_cfg cfg = {.path = path_of(name), .tool = tool, .clock = SV_CLOCK_TAI,
					   .sync = &sync, .host = "lab", .no_to_tai = true};
	struct sv_rec_stream s = {.appid = 0x4000, .asdus = 1, .sample_rate = RATE, .vlan = 0xFFFF,
				  .smp_synch = 2, .svid_len = 4, .smp_wrap = RATE};
	struct sv_record_writer *w = NULL;

	memcpy(s.svid, "MU01", 5);
	assert_int_equal(sv_record_writer_open(&w, &cfg), 0);
	assert_int_equal(sv_record_define_stream(w, &s), 0);
	return w;
}

static void ev(struct sv_record_writer *w, unsigned point, unsigned k, int64_t t, uint16_t guest)
{
	struct sv_rec_event e = {.point = (uint8_t)point, .t_ns = t, .tai_sec = SEC0 + k / RATE,
				 .smp_cnt = (uint16_t)(k % RATE), .ts_src = SV_TS_SOFTWARE, .guest = guest};

	assert_int_equal(sv_record_write_event(w, &e), 0);
}

static void test_html_renders(void **state)
{
	struct sv_record_writer *pub, *tr, *s1, *s2;
	static struct svr_cyclic ct;
	static struct svr_eval e;
	struct svr_budgets b;
	struct sv_rec_name n1 = {.name_kind = SV_REC_NAME_GUEST, .id = 1}, n2 = {.name_kind = SV_REC_NAME_GUEST, .id = 2};
	char cmd[1024], line[512], err[300];
	unsigned nsvg = 0, nsized = 0, ndrawn = 0;
	struct chromium_svgs c;
	struct svr *r;
	FILE *f, *p;

	(void)state;
	if (!chromium_present()) {
		skip();
		return;
	}
	snprintf(dir, sizeof(dir), "/tmp/test_report_html.XXXXXX");
	assert_non_null(mkdtemp(dir));
	pub = wopen("pub.rec", "svpub");
	tr = wopen("trace.rec", "svtrace");
	s1 = wopen("vm1.rec", "svsub");
	s2 = wopen("vm2.rec", "svsub");
	snprintf(n1.name, sizeof(n1.name), "vm1");
	snprintf(n2.name, sizeof(n2.name), "vm2");
	assert_int_equal(sv_record_define_name(tr, &n1), 0);
	assert_int_equal(sv_record_define_name(tr, &n2), 0);
	for (unsigned k = 0; k < 3 * RATE; k++) {
		int64_t ts = sv_sample_time_ns(SEC0 + k / RATE, k % RATE, RATE), j = (k * 7919) % 20000;

		ev(pub, SV_POINT_T0, k, ts + 8000 + j / 4, SV_REC_GUEST_NONE);
		ev(tr, SV_POINT_T1, k, ts + 20000 + j / 2, SV_REC_GUEST_NONE);
		for (uint16_t g = 1; g <= 2; g++) {
			ev(tr, SV_POINT_T2A, k, ts + 25000 + j / 2, g);
			ev(tr, SV_POINT_T2B, k, ts + 28000 + j, g);
		}
		if (k != 5000)	/* one loss to draw */
			ev(s1, SV_POINT_T3, k, ts + 40000 + j, SV_REC_GUEST_NONE);
		ev(s2, SV_POINT_T3, k, ts + 45000 + j, SV_REC_GUEST_NONE);
		ev(s1, SV_POINT_T4, k, ts + 50000 + j, SV_REC_GUEST_NONE);
		ev(s2, SV_POINT_T4, k, ts + 52000 + j, SV_REC_GUEST_NONE);
	}
	assert_int_equal(sv_record_writer_close(pub), 0);
	assert_int_equal(sv_record_writer_close(tr), 0);
	assert_int_equal(sv_record_writer_close(s1), 0);
	assert_int_equal(sv_record_writer_close(s2), 0);
	f = fopen(path_of("ct.hist"), "w");
	assert_non_null(f);
	fputs("# Histogram\n000002 000010\n000003 000100\n000004 000007\n000020 000001\n# Min Latencies: 00002\n"
	      "# Avg Latencies: 00003\n# Max Latencies: 00020\n# Histogram Overflows: 00000\n", f);
	fclose(f);
	assert_int_equal(svr_cyclic_load(&ct, path_of("ct.hist"), err, sizeof(err)), 0);

	assert_int_equal(svr_create(&r, NULL), 0);
	assert_int_equal(svr_add_file(r, path_of("pub.rec"), NULL), 0);
	assert_int_equal(svr_add_file(r, path_of("trace.rec"), NULL), 0);
	assert_int_equal(svr_add_file(r, path_of("vm1.rec"), "vm1"), 0);
	assert_int_equal(svr_add_file(r, path_of("vm2.rec"), "vm2"), 0);
	assert_int_equal(svr_run(r), 0);
	svr_budgets_default(&b);
	svr_evaluate(r, &b, &e);
	assert_int_equal(svr_nguests(r), 2);
	f = fopen(path_of("report.html"), "w");
	assert_non_null(f);
	assert_int_equal(svr_write_html(r, &b, &e, &ct, NULL, f), 0);
	/* the probe: writes each svg's laid-out size and element count into the document */
	chromium_probe(f);
	fclose(f);
	svr_destroy(r);

	/* no external resources: nothing to fetch */
	snprintf(cmd, sizeof(cmd), "grep -Eic '(src|href)=\"(https?:|//)|@import|url\\(' %s", path_of("report.html"));
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_non_null(fgets(line, sizeof(line), p));
	pclose(p);
	assert_int_equal(atoi(line), 0);

	chromium_svgs(path_of("report.html"), &c);
	nsvg = c.n;
	nsized = c.sized;
	ndrawn = c.drawn;
	/* 2 shared + 2 x 6 guest hops: histogram + over time each; 3 CDFs; pacing; loss; cyclictest */
	print_message("chromium laid out %u svg plots, %u with a size, %u drawn\n", nsvg, nsized, ndrawn);
	assert_true(nsvg >= 20);
	assert_int_equal(nsized, nsvg);
	assert_int_equal(ndrawn, nsvg);
	snprintf(cmd, sizeof(cmd), "grep -c '<svg' %s", path_of("report.html"));
	p = popen(cmd, "r");
	assert_non_null(fgets(line, sizeof(line), p));
	pclose(p);
	assert_int_equal((unsigned)atoi(line), nsvg);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_html_renders),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: Apache-2.0
/*
 * svreport's why late by cause (report/svreport_why.c) from WHY records written with sv_record_write_why:
 * hops gathered into frames (two in a row of one frame), the run's sums exact to the nanosecond, the worst
 * frames first, and the three formats' sections (the HTML's stacked bars).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sv_record.h"
#include "svreport_out.h"
#include "svreport_private.h"

#define SEC0 1700000000u

static char dir[64], path[128];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/test_report_why.XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/trace.rec", dir);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* A hop of frame @smp from @from to @to starting at @t, @a ns to cause @ca and @b to cause @cb. */
static void why_write(struct sv_record_writer *w, uint16_t smp, unsigned from, unsigned to, int64_t t, unsigned ca,
		      int64_t a, unsigned cb, int64_t b, const char *holder)
{
	struct sv_rec_why y = {.point = (uint8_t)to, .from_point = (uint8_t)from, .stream = 0, .t_from_ns = t,
			       .t_to_ns = t + a + b, .tai_sec = SEC0, .smp_cnt = smp, .guest = 1, .cpu = 1};

	y.ns[ca] += a;
	y.ns[cb] += b;
	if (holder) {
		y.holder_pid = 77;
		y.holder_policy = 1;
		y.holder_prio = 90;
		y.holder_ns = ca == SV_WHY_RUNQUEUE ? a : b;
		strncpy(y.holder_comm, holder, sizeof(y.holder_comm) - 1);
	}
	assert_int_equal(sv_record_write_why(w, &y), 0);
}

static void write_run(void)
{
	struct sv_record_writer_cfg cfg = {.path = path, .tool = "svtrace", .clock = SV_CLOCK_TAI, .no_to_tai = true};
	struct sv_rec_stream s = {.stream = 0, .appid = 0x4000, .asdus = 1, .sample_rate = 4000, .vlan = 0xFFFF,
				  .svid_len = 4, .smp_wrap = 4000};
	struct sv_rec_name g = {.name_kind = SV_REC_NAME_GUEST, .id = 1};
	struct sv_record_writer *w = NULL;
	int64_t t = (int64_t)SEC0 * 1000000000;

	assert_int_equal(sv_record_writer_open(&w, &cfg), 0);
	memcpy(s.svid, "MU01", 5);
	assert_int_equal(sv_record_define_stream(w, &s), 0);
	snprintf(g.name, sizeof(g.name), "vm1");
	assert_int_equal(sv_record_define_name(w, &g), 0);
	/* frame 1: T1-T2a carried 3 us + 1 us qdisc, T2a-T2b 4 ms steal + 100 us unexplained */
	why_write(w, 1, SV_POINT_T1, SV_POINT_T2A, t, SV_WHY_CARRIED, 3000, SV_WHY_QDISC, 1000, NULL);
	why_write(w, 1, SV_POINT_T2A, SV_POINT_T2B, t + 4000, SV_WHY_STEAL, 4000000, SV_WHY_UNEXPLAINED, 100000, NULL);
	/* frame 2: T2a-T2b 2 ms on the run queue behind stress-ng (FIFO 90) + 500 us running */
	why_write(w, 2, SV_POINT_T1, SV_POINT_T2A, t + 250000, SV_WHY_CARRIED, 2000, SV_WHY_CARRIED, 0, NULL);
	why_write(w, 2, SV_POINT_T2A, SV_POINT_T2B, t + 252000, SV_WHY_RUNQUEUE, 2000000, SV_WHY_RUNNING, 500000,
		  "stress-ng");
	/* frame 3: one hop only (no T1 seen), 1.5 ms unexplained */
	why_write(w, 3, SV_POINT_T2A, SV_POINT_T2B, t + 500000, SV_WHY_UNEXPLAINED, 1500000, SV_WHY_STEAL, 0, NULL);
	assert_int_equal(sv_record_writer_close(w), 0);
}

static char *report(struct svr *r, int fmt)
{
	static struct svr_budgets b;
	static struct svr_eval e;
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(f);
	svr_budgets_default(&b);
	svr_evaluate(r, &b, &e);
	if (fmt == 0)
		assert_int_equal(svr_write_text(r, &b, &e, NULL, f), 0);
	else if (fmt == 1)
		assert_int_equal(svr_write_json(r, &b, &e, NULL, f), 0);
	else
		assert_int_equal(svr_write_html(r, &b, &e, NULL, NULL, f), 0);
	fclose(f);
	return out;
}

static void test_sums(void **state)
{
	struct svr *r;
	struct svr_why *w;
	char *s;

	(void)state;
	write_run();
	assert_int_equal(svr_create(&r, NULL), 0);
	assert_int_equal(svr_add_file(r, path, NULL), 0);
	assert_int_equal(svr_run(r), 0);
	w = svr_why_finish(r);
	assert_int_equal(w->records, 5);
	assert_int_equal(w->orphans, 0);
	assert_int_equal(w->tally.frames, 3);
	assert_int_equal(w->tally.late_ns, 4000 + 4100000 + 2000 + 2500000 + 1500000);
	assert_int_equal(w->tally.ns[SV_WHY_STEAL], 4000000);
	assert_int_equal(w->tally.ns[SV_WHY_RUNQUEUE], 2000000);
	assert_int_equal(w->tally.ns[SV_WHY_RUNNING], 500000);
	assert_int_equal(w->tally.ns[SV_WHY_CARRIED], 5000);
	assert_int_equal(w->tally.ns[SV_WHY_QDISC], 1000);
	assert_int_equal(w->tally.ns[SV_WHY_UNEXPLAINED], 1600000);
	/* worst first: the steal frame (4.104 ms), the run queue (2.502 ms), the lone hop (1.5 ms) */
	assert_int_equal(w->nworst, 3);
	assert_int_equal(w->worst[0].smp_cnt, 1);
	assert_int_equal(w->worst[0].n, 2);
	assert_int_equal(w->worst[0].total_ns, 4104000);
	assert_int_equal(w->worst[1].smp_cnt, 2);
	assert_int_equal(w->worst[2].n, 1);

	s = report(r, 0);
	assert_non_null(strstr(s, "\nwhy late, by cause (svtrace's decomposition: 3 late frames, "));
	assert_non_null(strstr(s, "  of 3 late frames: 1 steal, 1 runqueue behind stress-ng (SCHED_FIFO 90), 1 "
				  "unexplained\n"));
	assert_non_null(strstr(s, "  MU01 smpCnt 1 vm1 T1-T2b "));
	free(s);
	s = report(r, 1);
	assert_non_null(strstr(s, "\"why_by_cause\""));
	assert_non_null(strstr(s, "\"why_late_ns\": 8106000"));
	assert_non_null(strstr(s, "\"why_named_ns\": 6506000"));
	assert_non_null(strstr(s, "\"dominant\": \"runqueue behind stress-ng (SCHED_FIFO 90)\""));
	free(s);
	s = report(r, 2);
	assert_non_null(strstr(s, "<h2>Why late, by cause</h2>"));
	/* a segment per cause of each hop: frame 1 has 4, frame 2 2 (a 0 ns cause draws nothing), frame 3 1 */
	{
		unsigned n = 0;

		for (const char *p = strstr(s, "<h2>Why late, by cause</h2>"); (p = strstr(p, "<title>")); p++)
			n++;
		assert_int_equal(n, 4 + 3 + 1);
	}
	free(s);
	svr_destroy(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sums),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

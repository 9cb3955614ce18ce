// SPDX-License-Identifier: Apache-2.0
/*
 * svtrace's hop log and in-BPF histograms (bpf/svtrace_hlog.c) on plain memory laid out as BPF's maps:
 * the log's entry, the drain (exactly what the copies' events would account), the rings' wrap, entries
 * BPF should not have written, and the growth of BPF's 32-bit histograms. No root, no BPF.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sv_stats.h"
#include "svtrace_hlog.h"
#include "trace_fixture.h"

#define NCPU 2
#define ENTRIES 64
#define NPORTS 2
#define NHIST (SVTRACE_MAX_STREAMS * NPORTS * SVTRACE_HOPS)

static struct svtrace_hent hlog[NCPU * ENTRIES];
static struct svtrace_hlog_pos pos[NCPU];
static struct svtrace_hist hist[NHIST];

/* The log's producer, as svtrace.bpf.c writes it: entry, then head. */
static void put(unsigned cpu, uint32_t d1, uint32_t d2, uint32_t port, uint32_t id)
{
	hlog[cpu * ENTRIES + (pos[cpu].head & (ENTRIES - 1))].w = svtrace_hent_pack(d1, d2, port, id);
	pos[cpu].head++;
}

static struct svtrace_hlog *hlog_open(struct tfix *f, bool with_hist)
{
	struct svtrace_hlog_cfg hc = { .nports = NPORTS, .streams = &f->streams, .corr = f->corr, .log = hlog,
				       .pos = pos, .ncpus = NCPU, .entries = ENTRIES,
				       .hist = with_hist ? hist : NULL, .nhist = NHIST };
	struct svtrace_hlog *h;

	memset(hlog, 0, sizeof(hlog));
	memset(pos, 0, sizeof(pos));
	memset(hist, 0, sizeof(hist));
	assert_int_equal(svtrace_hlog_new(&h, &hc), 0);
	return h;
}

/* The hop log's one-word entry (svtrace.h): every field at its extremes comes back whole, none spills
 * into another, and a hop at the limit does not fit (the producer sends such a copy elsewhere). */
static void test_entry(void **state)
{
	static const uint32_t d[] = { 0, 1, 999, 123456, SVTRACE_HLOG_LIMIT_NS - 1 };
	uint64_t w;

	(void)state;
	for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++)
		for (size_t j = 0; j < sizeof(d) / sizeof(d[0]); j++)
			for (uint32_t port = 1; port < SVTRACE_MAX_PORTS; port += 7)
				for (uint32_t stream = 0; stream < SVTRACE_MAX_STREAMS; stream += 85) {
					w = svtrace_hent_pack(d[i], d[j], port, stream);
					assert_int_equal(svtrace_hent_d1(w), d[i]);
					assert_int_equal(svtrace_hent_d2(w), d[j]);
					assert_int_equal(svtrace_hent_port(w), port);
					assert_int_equal(svtrace_hent_stream(w), stream);
				}
	w = svtrace_hent_pack(SVTRACE_HLOG_NO_T1, SVTRACE_HLOG_LIMIT_NS - 1, SVTRACE_MAX_PORTS - 1,
			      SVTRACE_MAX_STREAMS - 1);
	assert_int_equal(svtrace_hent_d1(w), SVTRACE_HLOG_NO_T1);
	assert_int_equal(svtrace_hent_d2(w), SVTRACE_HLOG_LIMIT_NS - 1);
	assert_int_equal(svtrace_hent_port(w), SVTRACE_MAX_PORTS - 1);
	assert_int_equal(svtrace_hent_stream(w), SVTRACE_MAX_STREAMS - 1);
	/* the limit: 67 ms, above any SV deadline and below the histograms' own */
	assert_true(SVTRACE_HLOG_LIMIT_NS > 60000000u && SVTRACE_HLOG_LIMIT_NS < SVTRACE_HIST_LIMIT_NS);
}

static void stats_equal(const struct svtrace_hop_stats *a, const struct svtrace_hop_stats *b)
{
	struct sv_stats_summary sa, sb;

	assert_int_equal(a->frames, b->frames);
	assert_int_equal(a->lat.count, b->lat.count);
	assert_int_equal(a->lat.min, b->lat.min);
	assert_int_equal(a->lat.max, b->lat.max);
	assert_int_equal(a->lat.sum_lo, b->lat.sum_lo);
	assert_int_equal(a->lat.top, b->lat.top);
	assert_memory_equal(a->lat.bucket, b->lat.bucket, sizeof(a->lat.bucket[0]) * a->lat.top);
	sv_stats_summarize(&a->lat, &sa);
	sv_stats_summarize(&b->lat, &sb);
	assert_int_equal(sa.p50, sb.p50);
	assert_int_equal(sa.p999, sb.p999);
}

/*
 * The same copies through the hop log (drained over many rounds, the rings wrapping) and as ring events
 * (svtrace_events): the statistics come out identical, per port and per stream, buckets, sum, min and
 * max included. Copies without T1 leave only T2a-T2b.
 */
static void test_drain_as_events(void **state)
{
	struct tfix lg, ev;
	struct svtrace_hlog *h;
	uint32_t x = 7, n = 0;

	(void)state;
	tfix_init(&lg, NPORTS, 0, 0, 8, NULL);
	tfix_init(&ev, NPORTS, 0, 0, 8, NULL);
	lg.svid[0] = ev.svid[0] = "MU01";
	lg.svid[3] = ev.svid[3] = "MU04";
	h = hlog_open(&lg, false);
	for (unsigned round = 0; round < 7; round++) {
		for (unsigned i = 0; i < 50; i++, n++) {
			unsigned cpu = i % NCPU, port = 1 + (i / 2) % NPORTS;
			uint32_t id = i % 3 ? 0 : 3, d1, d2;
			struct svtrace_copy c = { .type = SVTRACE_EV_TAKEN, .port = (uint8_t)port, .stream = id };

			x = x * 1103515245u + 12345u;
			d1 = i % 11 ? 1000 + (x >> 12) % 200000 : SVTRACE_HLOG_NO_T1;
			d2 = 500 + (x >> 4) % 3000000;
			put(cpu, d1, d2, port, id);
			c.t2a_ns = 1000 * MS + n * MS;
			c.t1_ns = d1 == SVTRACE_HLOG_NO_T1 ? 0 : c.t2a_ns - d1;
			c.t2b_ns = c.t2a_ns + d2;
			tfix_event(&ev, &c);
		}
		svtrace_hlog_drain(h);
		if (round % 3 == 2)
			svtrace_hlog_merge(h);
	}
	svtrace_hlog_merge(h);
	assert_int_equal(svtrace_hlog_copies(h), n);
	for (unsigned c = 0; c < NCPU; c++)
		assert_int_equal(pos[c].tail, pos[c].head);
	for (unsigned p = 1; p <= NPORTS; p++)
		for (unsigned hop = 0; hop < SVTRACE_HOP_NR; hop++) {
			stats_equal(svtrace_corr_hop(lg.corr, p, hop), svtrace_corr_hop(ev.corr, p, hop));
			for (unsigned s = 0; s < 2; s++)
				stats_equal(svtrace_corr_stream_hop(lg.corr, s, p, hop),
					    svtrace_corr_stream_hop(ev.corr, s, p, hop));
		}
	assert_int_equal(svtrace_corr_hop(lg.corr, 1, SVTRACE_HOP_T2A_T2B)->frames +
			 svtrace_corr_hop(lg.corr, 2, SVTRACE_HOP_T2A_T2B)->frames, n);
	assert_true(svtrace_corr_hop(lg.corr, 1, SVTRACE_HOP_T1_T2A)->frames +
		    svtrace_corr_hop(lg.corr, 2, SVTRACE_HOP_T1_T2A)->frames < n);
	/* merged once: a merge with nothing new adds nothing */
	svtrace_hlog_merge(h);
	stats_equal(svtrace_corr_hop(lg.corr, 1, SVTRACE_HOP_T1_T2B), svtrace_corr_hop(ev.corr, 1, SVTRACE_HOP_T1_T2B));
	svtrace_hlog_free(h);
	tfix_free(&lg);
	tfix_free(&ev);
}

/* Entries BPF should not have written are counted, never accounted to another port; a stream not in
 * BPF's map is filtered; the log of --record (none) drains nothing. */
static void test_drain_bad_entries(void **state)
{
	struct svtrace_hlog_cfg none = { .nports = NPORTS };
	struct svtrace_hlog *h;
	struct tfix f;

	(void)state;
	tfix_init(&f, NPORTS, 0, 0, 8, NULL);
	f.svid[0] = "MU01";
	h = hlog_open(&f, false);
	put(0, 1000, 2000, 0, 0);		/* port 0: the ingress is no egress */
	put(1, 1000, 2000, NPORTS + 1, 0);	/* no such port */
	put(1, 1000, 2000, 1, 5);		/* a stream BPF's map does not know */
	put(0, 1000, 2000, 1, 0);
	svtrace_hlog_drain(h);
	svtrace_hlog_merge(h);
	assert_int_equal(svtrace_hlog_copies(h), 4);
	assert_int_equal(svtrace_hlog_filtered(h), 1);
	assert_int_equal(svtrace_corr_counters(f.corr)->bad_port, 2);
	assert_int_equal(svtrace_corr_hop(f.corr, 1, SVTRACE_HOP_T1_T2B)->frames, 1);
	assert_int_equal(svtrace_corr_hop(f.corr, 1, SVTRACE_HOP_T1_T2B)->lat.min, 3000);
	assert_int_equal(svtrace_corr_hop(f.corr, 2, SVTRACE_HOP_T1_T2B)->frames, 0);
	svtrace_hlog_free(h);
	/* no log: nothing to drain */
	none.streams = &f.streams;
	none.corr = f.corr;
	assert_int_equal(svtrace_hlog_new(&h, &none), 0);
	svtrace_hlog_drain(h);
	svtrace_hlog_merge(h);
	assert_int_equal(svtrace_hlog_copies(h), 0);
	svtrace_hlog_free(h);
	/* a log whose size is not a power of two is refused */
	none.log = hlog;
	none.pos = pos;
	none.ncpus = NCPU;
	none.entries = 48;
	assert_int_equal(svtrace_hlog_new(&h, &none), -EINVAL);
	tfix_free(&f);
}

/* BPF histogram @hop of stream @id on port @port (the map's layout). */
static struct svtrace_hist *bpf_hist(uint32_t id, unsigned port, unsigned hop)
{
	return &hist[(id * NPORTS + port - 1) * SVTRACE_HOPS + hop];
}

/* Copies the log had no room for, in BPF's own histograms: their growth since the last merge, exact
 * in count, min and max where those fall in the growth's first and last buckets, modulo 2^32 (a
 * bucket that wrapped between merges). A stream BPF's map does not know goes to the port alone. */
static void test_bpf_hist(void **state)
{
	const uint32_t b10 = sv_stats_index(10000), b20 = sv_stats_index(20000);
	const struct svtrace_hop_stats *hp, *hs;
	struct svtrace_hist *g = bpf_hist(0, 2, SVTRACE_HOP_T2A_T2B);
	struct svtrace_hlog *h;
	struct tfix f;

	(void)state;
	tfix_init(&f, NPORTS, 0, 0, 8, NULL);
	f.svid[0] = "MU01";
	h = hlog_open(&f, true);
	assert_non_null(svtrace_streams_of(&f.streams, 0));
	g->bucket[b10] = 5;
	g->nmin = ~10000ull;
	g->max = 10003;
	svtrace_hlog_merge(h);
	hp = svtrace_corr_hop(f.corr, 2, SVTRACE_HOP_T2A_T2B);
	hs = svtrace_corr_stream_hop(f.corr, 0, 2, SVTRACE_HOP_T2A_T2B);
	assert_int_equal(hp->frames, 5);
	assert_int_equal(hs->frames, 5);
	assert_int_equal(hp->lat.min, 10000);
	assert_int_equal(hp->lat.max, 10003);
	/* 3 more at 20 us: the running min is in no bucket of the growth, its bucket's bound stands */
	g->bucket[b20] = 3;
	g->max = 20000;
	svtrace_hlog_merge(h);
	assert_int_equal(hp->frames, 8);
	assert_int_equal(hp->lat.max, 20000);
	assert_int_equal(hp->lat.min, 10000);
	assert_int_equal(hs->lat.count, 8);
	/* a bucket wrapped: 2^32 - 1 then 2 is a growth of 3 */
	g->bucket[b20] = UINT32_MAX;
	svtrace_hlog_merge(h);
	g->bucket[b20] = 2;
	svtrace_hlog_merge(h);
	assert_int_equal(hp->frames, 8 + ((uint64_t)UINT32_MAX - 3) + 3);
	/* stream 7, never in BPF's map: the port's statistics only */
	g = bpf_hist(7, 1, SVTRACE_HOP_T1_T2A);
	assert_int_equal(f.streams.nids, 1);
	f.streams.nids = 8;	/* BPF handed out ids up to 7 (the map walk raised it) */
	g->bucket[b10] = 2;
	g->nmin = ~10001ull;
	g->max = 10001;
	svtrace_hlog_merge(h);
	assert_int_equal(svtrace_corr_hop(f.corr, 1, SVTRACE_HOP_T1_T2A)->frames, 2);
	assert_int_equal(svtrace_corr_nstreams(f.corr), 1);
	svtrace_hlog_free(h);
	tfix_free(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_entry),
		cmocka_unit_test(test_drain_as_events),
		cmocka_unit_test(test_drain_bad_entries),
		cmocka_unit_test(test_bpf_hist),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

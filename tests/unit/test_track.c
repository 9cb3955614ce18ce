/* SPDX-License-Identifier: Apache-2.0 */
/* Stream tracker (subscriber/svsub_track.h): continuity rules, wraps, PRP, quality, latency. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "sv_clock.h"
#include "sv_codec.h"
#include "sv_dataset.h"
#include "svsub_track.h"

#define END -1
#define NS_250US 250000LL

/* A frame with one ASDU of stream (0x4000, "MU01"), built directly as a view (the tracker takes views). */
struct fb {
	struct sv_view v;
	uint8_t seqdata[64];
};

static void fb_init(struct fb *f, uint16_t smpcnt)
{
	static const uint8_t svid[] = "MU01";

	memset(&f->v, 0, offsetof(struct sv_view, asdu));
	memset(&f->v.asdu[0], 0, sizeof(f->v.asdu[0]));
	memset(f->seqdata, 0, sizeof(f->seqdata));
	f->v.appid = 0x4000;
	f->v.noASDU = 1;
	f->v.asdu[0].svID = svid;
	f->v.asdu[0].svID_len = 4;
	f->v.asdu[0].smpCnt = smpcnt;
	f->v.asdu[0].confRev = 1;
	f->v.asdu[0].smpSynch = 0;
	f->v.asdu[0].seqData = f->seqdata;
	f->v.asdu[0].seqData_len = sizeof(f->seqdata);
}

static void fb_rate(struct fb *f, uint16_t smprate)
{
	f->v.asdu[0].present |= SV_HAS_SMPRATE;
	f->v.asdu[0].smpRate = smprate;
}

/* ---- table of smpCnt sequences ----------------------------------------------------------------- */

struct seq_case {
	const char *name;
	uint16_t smprate;	/* 0: not stated */
	uint16_t nominal_hz;
	uint32_t cfg_wrap;
	int32_t seq[80];	/* smpCnt values, END-terminated; one frame each, 250 us apart */
	uint64_t lost, dup, ooo, resets;
	uint32_t wrap;
	enum svsub_wrap_source wrap_source;
};

static const struct seq_case seq_cases[] = {
	{ "in order", 0, 0, 0, { 0, 1, 2, 3, 4, 5, END }, 0, 0, 0, 0, 65536, SVSUB_WRAP_DEFAULT },
	{ "gap of 2", 0, 0, 0, { 0, 1, 2, 5, 6, END }, 2, 0, 0, 0, 65536, SVSUB_WRAP_DEFAULT },
	{ "two gaps", 0, 0, 0, { 10, 11, 20, 21, 23, END }, 9, 0, 0, 0, 65536, SVSUB_WRAP_DEFAULT },
	{ "wrap 4000 stated", 80, 50, 0, { 3997, 3998, 3999, 0, 1, 2, END }, 0, 0, 0, 0, 4000, SVSUB_WRAP_STATED },
	{ "gap across wrap 4000", 80, 50, 0, { 3998, 3999, 2, 3, END }, 2, 0, 0, 0, 4000, SVSUB_WRAP_STATED },
	{ "gap to wrap 4000", 80, 50, 0, { 3996, 0, 1, END }, 3, 0, 0, 0, 4000, SVSUB_WRAP_STATED },
	{ "wrap 4800 stated (60 Hz)", 80, 60, 0, { 4798, 4799, 0, 1, END }, 0, 0, 0, 0, 4800, SVSUB_WRAP_STATED },
	{ "gap across wrap 4800", 80, 60, 0, { 4798, 1, 2, END }, 2, 0, 0, 0, 4800, SVSUB_WRAP_STATED },
	{ "wrap 65536", 0, 0, 0, { 65534, 65535, 0, 1, END }, 0, 0, 0, 0, 65536, SVSUB_WRAP_DEFAULT },
	{ "gap across wrap 65536", 0, 0, 0, { 65534, 1, 2, END }, 2, 0, 0, 0, 65536, SVSUB_WRAP_DEFAULT },
	{ "configured wrap 1000", 0, 0, 1000, { 998, 999, 0, 3, END }, 2, 0, 0, 0, 1000, SVSUB_WRAP_CONFIGURED },
	/* the smallest wrap: the next position is ahead, not behind (W/2 = 1 made every sample late) */
	{ "configured wrap 2", 0, 0, 2, { 0, 1, 0, 1, 1, 0, 0, END }, 0, 2, 0, 0, 2, SVSUB_WRAP_CONFIGURED },
	/* a configured wrap below the first smpCnt: judged modulo W from the first sample on (the head
	 * used to stay at 280, and W - 1 - head wrapped the lost count around to 2^64 - 1) */
	{ "configured wrap 2 below the counter", 0, 0, 2, { 280, 281, 282, 283, 284, END }, 0, 0, 0, 0, 2,
	  SVSUB_WRAP_CONFIGURED },
	{ "configured wrap 5 below the counter, a gap", 0, 0, 5, { 280, 281, 283, 284, END }, 1, 0, 0, 0, 5,
	  SVSUB_WRAP_CONFIGURED },
	{ "duplicates", 0, 0, 0, { 1, 2, 3, 3, 2, 4, END }, 0, 2, 0, 0, 65536, SVSUB_WRAP_DEFAULT },
	{ "swap of two", 0, 0, 0, { 1, 2, 4, 3, 5, END }, 0, 0, 1, 0, 65536, SVSUB_WRAP_DEFAULT },
	{ "late then its duplicate", 0, 0, 0, { 1, 2, 4, 3, 3, 5, END }, 0, 1, 1, 0, 65536, SVSUB_WRAP_DEFAULT },
	{ "late by 5, one still lost", 0, 0, 0, { 1, 2, 8, 9, 3, 4, 5, 7, END }, 1, 0, 4, 0, 65536,
	  SVSUB_WRAP_DEFAULT },
	{ "late from before the first", 0, 0, 0, { 5, 6, 4, 7, END }, 0, 0, 1, 0, 65536, SVSUB_WRAP_DEFAULT },
	{ "reorder across wrap 4000", 80, 50, 0, { 3998, 0, 3999, 1, END }, 0, 0, 1, 0, 4000, SVSUB_WRAP_STATED },
	{ "duplicate across wrap", 80, 50, 0, { 3998, 3999, 0, 3999, 1, END }, 0, 1, 0, 0, 4000,
	  SVSUB_WRAP_STATED },
	/* an injected stale sample between genuine ones (QUT 9311a): a duplicate, the head does not move */
	{ "injected replays", 0, 0, 0, { 1, 2, 3, 4, 5, 6, 2, 7, 3, 8, 4, 5, 9, END }, 0, 4, 0, 0, 65536,
	  SVSUB_WRAP_DEFAULT },
	/* a publisher restart behind the head: 8 consecutive samples confirm it, provisional counts undone */
	{ "counter restart", 80, 50, 0,
	  { 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, END },
	  0, 0, 0, 1, 4000, SVSUB_WRAP_STATED },
	/* 7 consecutive backward samples are not enough */
	{ "short backward run", 80, 50, 0, { 100, 101, 102, 30, 31, 32, 33, 34, 35, 36, 103, END }, 0, 0, 7, 0,
	  4000, SVSUB_WRAP_STATED },
	/* learned wrap: no smpRate, the counter comes back to 0 after 3999 */
	{ "learned wrap 4000", 0, 0, 0,
	  { 3990, 3991, 3992, 3993, 3994, 3995, 3996, 3997, 3998, 3999, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, END }, 0, 0,
	  0, 0, 4000, SVSUB_WRAP_LEARNED },
	{ "learned wrap with loss at the wrap", 0, 0, 0,
	  { 3996, 3997, 3998, 3999, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, END }, 2, 0, 0, 0, 4000, SVSUB_WRAP_LEARNED },
	/* libiec61850 states smpRate 80 but wraps at 65535: the statement is dropped, not trusted */
	{ "stated wrap violated", 80, 50, 0, { 3998, 3999, 4000, 4001, END }, 0, 0, 0, 0, 65536,
	  SVSUB_WRAP_DEFAULT },
};

static void run_seq(const struct seq_case *tc, struct svsub_tracker *t, const struct svsub_stream_stats **out)
{
	struct fb f;
	int64_t t_ns = 1000 * SV_NSEC_PER_SEC;

	for (unsigned i = 0; tc->seq[i] != END; i++, t_ns += NS_250US) {
		fb_init(&f, (uint16_t)tc->seq[i]);
		if (tc->smprate)
			fb_rate(&f, tc->smprate);
		assert_int_equal(svsub_track_frame(t, &f.v, t_ns, NULL), 1);
	}
	assert_int_equal(svsub_track_count(t), 1);
	*out = svsub_track_stream(t, 0);
}

static void test_sequences(void **state)
{
	(void)state;
	for (unsigned k = 0; k < sizeof(seq_cases) / sizeof(seq_cases[0]); k++) {
		const struct seq_case *tc = &seq_cases[k];
		struct svsub_track_cfg cfg = { .nominal_hz = tc->nominal_hz, .wrap = tc->cfg_wrap };
		const struct svsub_stream_stats *s;
		struct svsub_tracker *t;
		unsigned n = 0;

		while (tc->seq[n] != END)
			n++;
		print_message("case: %s\n", tc->name);
		assert_int_equal(svsub_track_create(&t, &cfg), 0);
		run_seq(tc, t, &s);
		assert_int_equal(s->c.frames, n);
		assert_int_equal(s->c.samples, n);
		assert_int_equal(s->c.lost, tc->lost);
		assert_int_equal(s->c.duplicate, tc->dup);
		assert_int_equal(s->c.reordered, tc->ooo);
		assert_int_equal(s->resets, tc->resets);
		assert_int_equal(s->wrap, tc->wrap);
		assert_int_equal(s->wrap_source, tc->wrap_source);
		svsub_track_destroy(t);
	}
}

/* After a learned wrap, the next wrap is in order and a gap across it is counted. */
static void test_learned_wrap_next_laps(void **state)
{
	struct svsub_tracker *t;
	struct fb f;
	int64_t t_ns = 0;
	const struct svsub_stream_stats *s;

	(void)state;
	assert_int_equal(svsub_track_create(&t, NULL), 0);
	for (int lap = 0; lap < 3; lap++) {
		for (uint32_t c = 0; c < 4800; c++, t_ns += 208333) {
			if (lap == 2 && (c == 4799 || c == 0))
				continue; /* two lost across the third wrap... */
			fb_init(&f, (uint16_t)c);
			svsub_track_frame(t, &f.v, t_ns, NULL);
		}
	}
	fb_init(&f, 0); /* ...and the start of the fourth lap */
	svsub_track_frame(t, &f.v, t_ns, NULL);
	s = svsub_track_stream(t, 0);
	assert_int_equal(s->wrap, 4800);
	assert_int_equal(s->wrap_source, SVSUB_WRAP_LEARNED);
	/* lap 0 starts at 0: the 65536 default is replaced by 4800 on the first wrap (nothing lost); lap 2
	 * misses its 0 and its 4799: two gaps of one */
	assert_int_equal(s->c.lost, 2);
	assert_int_equal(s->c.duplicate, 0);
	assert_int_equal(s->c.reordered, 0);
	assert_int_equal(s->resets, 0);
	svsub_track_destroy(t);
}

/* A silence longer than a wrap: the receive time says how many wraps passed. */
static void test_long_outage(void **state)
{
	struct svsub_tracker *t;
	struct fb f;
	int64_t t_ns = 5 * SV_NSEC_PER_SEC;
	const struct svsub_stream_stats *s;

	(void)state;
	assert_int_equal(svsub_track_create(&t, NULL), 0);
	for (uint32_t c = 0; c < 100; c++, t_ns += NS_250US) {
		fb_init(&f, (uint16_t)c);
		fb_rate(&f, 80);
		svsub_track_frame(t, &f.v, t_ns, NULL);
	}
	/* head 99 at t_ns - 250 us; 1.5 s of silence; the next received sample is absolute index 99 + 6001 */
	t_ns += 1500 * SV_NSEC_PER_MSEC;
	fb_init(&f, (99 + 6001) % 4000);
	fb_rate(&f, 80);
	svsub_track_frame(t, &f.v, t_ns, NULL);
	s = svsub_track_stream(t, 0);
	assert_int_equal(s->c.lost, 6000);
	/* and a silence of exactly 2 wraps landing on the same smpCnt */
	t_ns += 2 * SV_NSEC_PER_SEC;
	fb_init(&f, (99 + 6001) % 4000);
	fb_rate(&f, 80);
	svsub_track_frame(t, &f.v, t_ns, NULL);
	assert_int_equal(s->c.lost, 6000 + 7999);
	assert_int_equal(s->c.duplicate, 0);
	/* a stall: 1.4 s of silence, then exactly the next sample and the held-back rest in a burst */
	t_ns += 1400 * SV_NSEC_PER_MSEC;
	for (uint32_t k = 1; k <= 5600; k++, t_ns += 1000) {
		fb_init(&f, (uint16_t)((99 + 6001 + k) % 4000));
		fb_rate(&f, 80);
		svsub_track_frame(t, &f.v, t_ns, NULL);
	}
	assert_int_equal(s->c.lost, 6000 + 7999);
	assert_int_equal(s->c.duplicate, 0);
	assert_int_equal(s->c.reordered, 0);
	svsub_track_destroy(t);
}

/* ---- outages of whole laps, receive times as a network gives them -------------------------------- */

struct outage_case {
	const char *name;
	uint16_t smprate;	/* 0: not stated (9-2LE: the wrap is learned) */
	uint8_t smpsynch;	/* 2: global (sample times known), 0: none (counted from elapsed time) */
	uint32_t missing;	/* samples not received: 4000 per second of outage */
	uint64_t lost_estimated; /* of them, counted from elapsed time rather than sample times */
};

static const struct outage_case outage_cases[] = {
	{ "0.5 s, synchronised, stated", 80, 2, 2000, 0 },
	{ "1 s, synchronised, stated", 80, 2, 4000, 0 },
	{ "2.5 s, synchronised, stated", 80, 2, 10000, 0 },
	{ "3 s, synchronised, stated", 80, 2, 12000, 0 },
	{ "10 s, synchronised, stated", 80, 2, 40000, 0 },
	{ "0.5 s, synchronised, learned", 0, 2, 2000, 0 },
	{ "1 s, synchronised, learned", 0, 2, 4000, 0 },
	{ "2.5 s, synchronised, learned", 0, 2, 10000, 0 },
	{ "3 s, synchronised, learned", 0, 2, 12000, 0 },
	{ "10 s, synchronised, learned", 0, 2, 40000, 0 },
	{ "4.9 s, synchronised, learned", 0, 2, 19638, 0 },
	/* no sample times: whole laps from the elapsed time, rounded, and said to be estimated */
	/* (an outage of exactly half a lap is ambiguous without sample times: 3 more) */
	{ "0.5 s + 3, unsynchronised", 80, 0, 2003, 0 },
	{ "2.5 s, unsynchronised", 80, 0, 10000, 8000 },
	{ "3 s + 37, unsynchronised", 80, 0, 12037, 12000 },
	{ "10 s + 1999, unsynchronised", 0, 0, 41999, 40000 },
};

/* Sample @n of a stream of 4000 samples/s (smpCnt n mod 4000), smpRate 80 stated when @smprate. */
static void feed(struct svsub_tracker *t, uint64_t n, uint8_t smpsynch, uint16_t smprate, int64_t t_rx)
{
	struct fb f;

	fb_init(&f, (uint16_t)(n % 4000));
	f.v.asdu[0].smpSynch = smpsynch;
	if (smprate)
		fb_rate(&f, smprate);
	svsub_track_frame(t, &f.v, t_rx, NULL);
}

/* Stream of 4000 samples/s from the top of a TAI second: each frame received 30..410 us after its sample
 * time (a deterministic jitter), 2 s of samples, an outage of tc->missing samples, 1 s more. */
static void test_outage_laps(void **state)
{
	(void)state;
	for (unsigned k = 0; k < sizeof(outage_cases) / sizeof(outage_cases[0]); k++) {
		const struct outage_case *tc = &outage_cases[k];
		const int64_t sec0 = 1700000000LL;
		uint64_t n = 0, received = 0, seed = 12345;
		const struct svsub_stream_stats *s;
		struct svsub_tracker *t;

		print_message("case: %s\n", tc->name);
		assert_int_equal(svsub_track_create(&t, NULL), 0);
		for (; n < 8000 + tc->missing + 4000; n++) {
			int64_t t_rx;

			if (n >= 8000 && n < 8000 + tc->missing)
				continue;
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			t_rx = (sec0 + (int64_t)(n / 4000)) * SV_NSEC_PER_SEC + (int64_t)(n % 4000) * NS_250US + 30000 +
			       (int64_t)(seed >> 33) % 380000;
			feed(t, n, tc->smpsynch, tc->smprate, t_rx);
			received++;
		}
		s = svsub_track_stream(t, 0);
		print_message("  lost %llu (want %u), out of order %llu, duplicates %llu, resets %llu\n",
			      (unsigned long long)s->c.lost, tc->missing, (unsigned long long)s->c.reordered,
			      (unsigned long long)s->c.duplicate, (unsigned long long)s->resets);
		assert_int_equal(s->c.samples, received);
		assert_int_equal(s->wrap, 4000);
		assert_int_equal(s->c.lost, tc->missing);
		assert_int_equal(s->lost_estimated, tc->lost_estimated);
		assert_int_equal(s->c.duplicate, 0);
		assert_int_equal(s->c.reordered, 0);
		assert_int_equal(s->resets, 0);
		svsub_track_destroy(t);
	}
}

/* A synchronised stream held back (a paused VM): 1.4 s without frames, then the next samples in a burst, each
 * received long after its sample time: nothing lost, the held-back frames are not fresh enough to place. And a
 * replay at a quarter of the sample rate with a pause: judged by smpCnt, no phantom laps from sample times. */
static void test_outage_stall_synchronised(void **state)
{
	const int64_t sec0 = 1700000000LL;
	const struct svsub_stream_stats *s;
	struct svsub_tracker *t;
	int64_t t_rx = 0;
	uint32_t n;

	(void)state;
	assert_int_equal(svsub_track_create(&t, NULL), 0);
	for (n = 0; n < 8000; n++) {
		t_rx = (sec0 + n / 4000) * SV_NSEC_PER_SEC + (int64_t)(n % 4000) * NS_250US + 60000;
		feed(t, n, 2, 80, t_rx);
	}
	t_rx += 1400 * SV_NSEC_PER_MSEC;
	for (; n < 8000 + 5600; n++, t_rx += 1000) {
		feed(t, n, 2, 80, t_rx);
	}
	s = svsub_track_stream(t, 0);
	assert_int_equal(s->c.lost, 0);
	assert_int_equal(s->c.duplicate + s->c.reordered + s->resets, 0);
	svsub_track_destroy(t);

	/* 1000 frames/s of a 4000 samples/s stream, a 300 ms pause, 3 samples skipped at it */
	assert_int_equal(svsub_track_create(&t, NULL), 0);
	t_rx = sec0 * SV_NSEC_PER_SEC + 60000;
	for (n = 0; n < 9000; n++, t_rx += SV_NSEC_PER_MSEC) {
		if (n == 6000) {
			t_rx += 300 * SV_NSEC_PER_MSEC;
			n += 3;
		}
		feed(t, n, 2, 80, t_rx);
	}
	s = svsub_track_stream(t, 0);
	assert_int_equal(s->c.lost, 3);
	assert_int_equal(s->c.duplicate + s->c.reordered + s->resets, 0);
	svsub_track_destroy(t);
}

/* A burst of consecutive samples dropped (a socket ring that overflowed), frames coming at the stream's rate or
 * replayed 5x faster: every one is lost, none is a counter restart, whatever the burst's length. */
struct burst_case {
	const char *name;
	uint32_t fps;		/* frames (samples) per second of receive time */
	uint8_t smpsynch;
	uint32_t dropped;
	uint32_t at;		/* the first sample dropped */
	uint64_t lost, resets;
};

static const struct burst_case burst_cases[] = {
	{ "1500 at 4000/s", 4000, 0, 1500, 20000, 1500, 0 },
	{ "2500 at 4000/s", 4000, 0, 2500, 20000, 2500, 0 },
	{ "2500 at 4000/s, synchronised", 4000, 2, 2500, 20000, 2500, 0 },
	{ "1500, replayed at 20000/s", 20000, 0, 1500, 20000, 1500, 0 },
	{ "1999, replayed at 20000/s", 20000, 0, 1999, 20000, 1999, 0 },
	{ "2500, replayed at 20000/s", 20000, 0, 2500, 20000, 2500, 0 },
	{ "3999, replayed at 20000/s", 20000, 2, 3999, 20000, 3999, 0 },
	{ "6118, replayed at 20000/s", 20000, 2, 6118, 20000, 6118, 0 },
	{ "4500, replayed at 20000/s", 20000, 0, 4500, 20000, 4500, 0 },
	/* before a lap has passed the pace is not known, the rate is taken: half a lap dropped from a replay
	 * 5x faster is then taken for a counter restart (what a publisher restarting looks like) */
	{ "2500 before a lap, replayed at 20000/s", 20000, 0, 2500, 3000, 0, 1 },
};

static void test_burst_dropped(void **state)
{
	(void)state;
	for (unsigned k = 0; k < sizeof(burst_cases) / sizeof(burst_cases[0]); k++) {
		const struct burst_case *tc = &burst_cases[k];
		const int64_t t0 = 1700000000LL * SV_NSEC_PER_SEC;
		const struct svsub_stream_stats *s;
		struct svsub_tracker *t;

		print_message("case: %s\n", tc->name);
		assert_int_equal(svsub_track_create(&t, NULL), 0);
		for (uint64_t n = 0; n < 40000u + tc->dropped; n++) {
			if (n >= tc->at && n < tc->at + tc->dropped)
				continue;
			feed(t, n, tc->smpsynch, 80, t0 + (int64_t)n * (SV_NSEC_PER_SEC / tc->fps) + 40000);
		}
		s = svsub_track_stream(t, 0);
		print_message("  lost %llu, resets %llu\n", (unsigned long long)s->c.lost,
			      (unsigned long long)s->resets);
		assert_int_equal(s->c.lost, tc->lost);
		assert_int_equal(s->resets, tc->resets);
		assert_int_equal(s->c.duplicate + s->c.reordered, 0);
		svsub_track_destroy(t);
	}
}

/* ---- PRP ---------------------------------------------------------------------------------------- */

static void test_prp_copies(void **state)
{
	/* (smpCnt, LAN) arrivals: every sample over A and B, B sometimes first, one lost on A */
	static const struct {
		uint16_t c;
		uint8_t lan;
	} arr[] = { { 1, 0xA }, { 1, 0xB }, { 2, 0xB }, { 2, 0xA }, { 3, 0xB }, { 4, 0xA }, { 4, 0xB },
		    { 4, 0xB } /* a real duplicate on B */ };
	struct svsub_tracker *t;
	struct fb f;
	struct svsub_sample_result res;
	const struct svsub_stream_stats *s;

	(void)state;
	assert_int_equal(svsub_track_create(&t, NULL), 0);
	for (unsigned i = 0; i < sizeof(arr) / sizeof(arr[0]); i++) {
		fb_init(&f, arr[i].c);
		f.v.redundancy = SV_RED_PRP;
		f.v.red_lan = arr[i].lan;
		f.v.red_seq = arr[i].c;
		svsub_track_frame(t, &f.v, (int64_t)i * 1000, &res);
		if (i == 1 || i == 3 || i == 6)
			assert_int_equal(res.verdict, SVSUB_SAMPLE_PRP_COPY);
	}
	s = svsub_track_stream(t, 0);
	assert_int_equal(s->prp_frames[0], 3);
	assert_int_equal(s->prp_frames[1], 5);
	assert_int_equal(s->prp_discarded[0], 1); /* 2 via A after B */
	assert_int_equal(s->prp_discarded[1], 2); /* 1 and 4 via B after A */
	assert_int_equal(s->c.frames, 5);	   /* 1A 2B 3B 4A 4B(dup) */
	assert_int_equal(s->c.samples, 5);
	assert_int_equal(s->c.duplicate, 1);
	assert_int_equal(s->c.lost, 0);
	assert_int_equal(s->c.reordered, 0);
	svsub_track_destroy(t);

	/* with discarding off, the copies are duplicates */
	struct svsub_track_cfg cfg = { .no_prp_discard = true };

	assert_int_equal(svsub_track_create(&t, &cfg), 0);
	for (unsigned i = 0; i < sizeof(arr) / sizeof(arr[0]); i++) {
		fb_init(&f, arr[i].c);
		f.v.redundancy = SV_RED_PRP;
		f.v.red_lan = arr[i].lan;
		svsub_track_frame(t, &f.v, (int64_t)i * 1000, NULL);
	}
	s = svsub_track_stream(t, 0);
	assert_int_equal(s->c.duplicate, 4);
	assert_int_equal(s->prp_discarded[0] + s->prp_discarded[1], 0);
	svsub_track_destroy(t);
}

/* ---- confRev, smpSynch, simulation, quality, multi-ASDU, streams -------------------------------- */

static void test_confrev_synch_sim_quality(void **state)
{
	static const uint32_t confrev[] = { 1, 1, 2, 2, 1, 1 };
	static const uint8_t synch[] = { 0, 2, 2, 2, 2, 1 };
	static const bool sim[] = { false, true, true, false, false, true };
	struct svsub_tracker *t;
	struct fb f;
	const struct svsub_stream_stats *s;

	(void)state;
	assert_int_equal(svsub_track_create(&t, NULL), 0);
	for (unsigned i = 0; i < 6; i++) {
		fb_init(&f, (uint16_t)i);
		f.v.asdu[0].confRev = confrev[i];
		f.v.asdu[0].smpSynch = synch[i];
		f.v.simulated = sim[i];
		/* channel 1 invalid (validity 1) on frame 0, channel 2 invalid (validity 2) on frame 1,
		 * channel 3 questionable on frame 2, channel 4 test, channel 8 derived always */
		if (i == 0)
			sv_put_be32(f.seqdata + 4, 0x1);
		if (i == 1)
			sv_put_be32(f.seqdata + 12, 0x2);
		if (i == 2)
			sv_put_be32(f.seqdata + 20, 0x3);
		if (i == 3)
			sv_put_be32(f.seqdata + 28, SV_Q_TEST);
		sv_put_be32(f.seqdata + 60, SV_Q_DERIVED);
		svsub_track_frame(t, &f.v, (int64_t)i * NS_250US, NULL);
	}
	s = svsub_track_stream(t, 0);
	assert_int_equal(s->confrev_changes, 2);
	assert_int_equal(s->smpsynch_changes, 2);
	assert_int_equal(s->simulated, 3);
	assert_int_equal(s->nquality, 8);
	assert_ptr_equal(s->dataset, sv_dataset_92le()); /* 64 octets, nothing declared: 9-2LE assumed */
	assert_int_equal(s->dataset_source, SVSUB_DS_ASSUMED);
	assert_int_equal(s->samples_uninterpreted, 0);
	assert_int_equal(s->quality[0][SVSUB_Q_INVALID], 1);
	assert_int_equal(s->quality[1][SVSUB_Q_INVALID], 1);
	assert_int_equal(s->quality[2][SVSUB_Q_QUESTIONABLE], 1);
	assert_int_equal(s->quality[2][SVSUB_Q_INVALID], 0);
	assert_int_equal(s->quality[3][SVSUB_Q_TEST], 1);
	assert_int_equal(s->quality[7][SVSUB_Q_DERIVED], 6);
	assert_int_equal(s->samples_not_good, 3); /* test and derived alone keep validity good */
	assert_int_equal(s->interarrival.count, 5);
	assert_int_equal(s->interarrival.min, NS_250US);
	assert_int_equal(s->interarrival.max, NS_250US);
	svsub_track_destroy(t);
}

/* 8 ASDUs of one stream per frame: one frame, 8 samples; smpCnt continues across frames. */
static void test_multi_asdu_one_stream(void **state)
{
	static const uint8_t svid[] = "MU256";
	static uint8_t data[64];
	struct sv_view *v = calloc(1, sizeof(*v));
	struct svsub_tracker *t;
	const struct svsub_stream_stats *s;

	(void)state;
	assert_non_null(v);
	assert_int_equal(svsub_track_create(&t, NULL), 0);
	v->appid = 0x4001;
	v->noASDU = 8;
	for (unsigned k = 0; k < 4; k++) {
		if (k == 2)
			continue; /* one whole frame lost: 8 samples */
		for (unsigned i = 0; i < 8; i++) {
			v->asdu[i].svID = svid;
			v->asdu[i].svID_len = 5;
			v->asdu[i].smpCnt = (uint16_t)(k * 8 + i);
			v->asdu[i].seqData = data;
			v->asdu[i].seqData_len = 64;
		}
		assert_int_equal(svsub_track_frame(t, v, (int64_t)k * 625000, NULL), 8);
	}
	s = svsub_track_stream(t, 0);
	assert_int_equal(svsub_track_count(t), 1);
	assert_int_equal(s->c.frames, 3);
	assert_int_equal(s->c.samples, 24);
	assert_int_equal(s->c.lost, 8);
	assert_int_equal(s->asdus_per_frame, 8);
	svsub_track_destroy(t);
	free(v);
}

/* QUT style: every ASDU another svID, same smpCnt; a frame counts once for each stream. And overflow. */
static void test_streams_per_asdu_and_overflow(void **state)
{
	static const uint8_t *ids[3] = { (const uint8_t *)"66kV1", (const uint8_t *)"66kV2",
					  (const uint8_t *)"XFMR1W1" };
	static uint8_t data[12];
	struct sv_view *v = calloc(1, sizeof(*v));
	struct svsub_track_cfg cfg = { .max_streams = 2 };
	struct svsub_tracker *t;

	(void)state;
	assert_non_null(v);
	assert_int_equal(svsub_track_create(&t, &cfg), 0);
	v->appid = 0x4001;
	v->noASDU = 3;
	for (unsigned k = 1; k <= 10; k++) {
		if (k == 5)
			continue;
		for (unsigned i = 0; i < 3; i++) {
			v->asdu[i].svID = ids[i];
			v->asdu[i].svID_len = (uint16_t)strlen((const char *)ids[i]);
			v->asdu[i].smpCnt = (uint16_t)k;
			v->asdu[i].seqData = data;
			v->asdu[i].seqData_len = sizeof(data);
		}
		assert_int_equal(svsub_track_frame(t, v, (int64_t)k * 50000000, NULL), 2);
	}
	assert_int_equal(svsub_track_count(t), 2);
	assert_int_equal(svsub_track_overflow(t), 9);
	for (unsigned i = 0; i < 2; i++) {
		const struct svsub_stream_stats *s = svsub_track_stream(t, i);

		assert_string_equal(s->svID, (const char *)ids[i]);
		assert_int_equal(s->c.frames, 9);
		assert_int_equal(s->c.samples, 9);
		assert_int_equal(s->c.lost, 1);
		/* 12 octets, nothing declared: not read at all */
		assert_int_equal(s->nquality, 0);
		assert_null(s->dataset);
		assert_int_equal(s->dataset_source, SVSUB_DS_UNKNOWN);
		assert_int_equal(s->samples_uninterpreted, 9);
	}
	/* the same svID under another APPID is another stream */
	svsub_track_destroy(t);
	assert_int_equal(svsub_track_create(&t, NULL), 0);
	v->noASDU = 1;
	svsub_track_frame(t, v, 0, NULL);
	v->appid = 0x4002;
	svsub_track_frame(t, v, 0, NULL);
	assert_int_equal(svsub_track_count(t), 2);
	/* errors are attributed by APPID */
	svsub_track_error(t, SV_E_SMPCNT_WIDTH, 0x4002);
	svsub_track_error(t, SV_E_ETH_TRUNCATED, -1);
	assert_int_equal(svsub_track_stream(t, 0)->c.errors, 0);
	assert_int_equal(svsub_track_stream(t, 1)->c.errors, 1);
	assert_int_equal(svsub_track_errors(t)[SV_E_SMPCNT_WIDTH], 1);
	assert_int_equal(svsub_track_errors(t)[SV_E_ETH_TRUNCATED], 1);
	svsub_track_destroy(t);
	free(v);
}

/* ---- datasets: declared, assumed (9-2LE by length), unknown ---------------------------------------- */

/* the rules every case below runs with */
static struct svsub_dataset_rule ds_rules[4];

static void ds_rules_init(void)
{
	/* 0: MUF (any APPID): libiec61850's example, FLOAT32 + Timestamp twice (24 octets) */
	ds_rules[0] = (struct svsub_dataset_rule){ .appid = -1 };
	strcpy(ds_rules[0].svID, "MUF");
	sv_dataset_init(&ds_rules[0].ds, "flt_ts");
	assert_int_equal(sv_dataset_add(&ds_rules[0].ds, "A.mag.f", SV_DA_FLOAT32, 1), 0);
	assert_int_equal(sv_dataset_add(&ds_rules[0].ds, "A.t", SV_DA_TIMESTAMP, 1), 0);
	assert_int_equal(sv_dataset_add(&ds_rules[0].ds, "B.mag.f", SV_DA_FLOAT32, 1), 0);
	assert_int_equal(sv_dataset_add(&ds_rules[0].ds, "B.t", SV_DA_TIMESTAMP, 1), 0);
	/* 1: APPID 0x4100, any svID: two INT32 + Quality pairs (16 octets) */
	ds_rules[1] = (struct svsub_dataset_rule){ .appid = 0x4100 };
	sv_dataset_init(&ds_rules[1].ds, "two");
	assert_int_equal(sv_dataset_add(&ds_rules[1].ds, "X.instMag.i", SV_DA_INT32, 0.5), 0);
	assert_int_equal(sv_dataset_add(&ds_rules[1].ds, "X.q", SV_DA_QUALITY, 1), 0);
	assert_int_equal(sv_dataset_add(&ds_rules[1].ds, "Y.instMag.i", SV_DA_INT32, 0.5), 0);
	assert_int_equal(sv_dataset_add(&ds_rules[1].ds, "Y.q", SV_DA_QUALITY, 1), 0);
	/* 2: "NOPE" on APPID 0x4000: never interpreted */
	ds_rules[2] = (struct svsub_dataset_rule){ .appid = 0x4000, .none = true };
	strcpy(ds_rules[2].svID, "NOPE");
	/* 3: "MU92" anywhere: 9-2LE declared by profile */
	ds_rules[3] = (struct svsub_dataset_rule){ .appid = -1 };
	strcpy(ds_rules[3].svID, "MU92");
	assert_int_equal(sv_dataset_profile(&ds_rules[3].ds, "9-2le"), 0);
}

struct ds_case {
	const char *name;
	uint16_t appid;
	const char *svid;
	uint16_t len;		 /* seqData octets, all 0x01 (as INT32 + q: every quality invalid) */
	int rule;		 /* the rule expected to apply, -1 none, -2 the assumed 9-2LE */
	uint8_t source;		 /* enum svsub_dataset_source */
	bool read;		 /* the sample was interpreted */
	uint64_t not_good, mismatch;
	uint32_t quality_or;	 /* res.quality */
};

static const struct ds_case ds_cases[] = {
	/* issue 27: 24 octets of FLOAT32 + Timestamp read as INT32 + q made 123 of 199 samples "not good" */
	{ "24 octets, undeclared: unknown, nothing claimed", 0x4000, "MU01", 24, -1, SVSUB_DS_UNKNOWN, false, 0, 0, 0 },
	{ "24 octets, declared FLOAT32 + Timestamp", 0x4000, "MUF", 24, 0, SVSUB_DS_DECLARED, true, 0, 0, 0 },
	{ "the declaration, another length", 0x4000, "MUF", 64, 0, SVSUB_DS_DECLARED, false, 0, 1, 0 },
	{ "64 octets, undeclared: 9-2LE assumed", 0x4000, "MU01", 64, -2, SVSUB_DS_ASSUMED, true, 1, 0,
	  0x01010101 },
	{ "16 octets, undeclared: not 9-2LE's length", 0x4000, "MU01", 16, -1, SVSUB_DS_UNKNOWN, false, 0, 0, 0 },
	{ "16 octets, declared by APPID", 0x4100, "ANY", 16, 1, SVSUB_DS_DECLARED, true, 1, 0, 0x01010101 },
	{ "declared none, 64 octets", 0x4000, "NOPE", 64, 2, SVSUB_DS_NONE, false, 0, 0, 0 },
	{ "the none rule's svID under another APPID", 0x4001, "NOPE", 64, -2, SVSUB_DS_ASSUMED, true, 1, 0,
	  0x01010101 },
	{ "9-2LE declared by profile", 0x4000, "MU92", 64, 3, SVSUB_DS_DECLARED, true, 1, 0,
	  0x01010101 },
};

static void test_datasets(void **state)
{
	(void)state;
	ds_rules_init();
	for (unsigned k = 0; k < sizeof(ds_cases) / sizeof(ds_cases[0]); k++) {
		const struct ds_case *tc = &ds_cases[k];
		struct svsub_track_cfg cfg = { .datasets = ds_rules, .ndatasets = 4 };
		struct svsub_tracker *t;
		struct svsub_sample_result res;
		const struct svsub_stream_stats *s;
		const struct sv_dataset *want = tc->rule >= 0 ? &ds_rules[tc->rule].ds : tc->rule == -2 ? sv_dataset_92le()
													   : NULL;
		uint8_t data[64];
		struct fb f;

		print_message("case: %s\n", tc->name);
		memset(data, 0x01, sizeof(data));
		assert_int_equal(svsub_track_create(&t, &cfg), 0);
		fb_init(&f, 1);
		f.v.appid = tc->appid;
		f.v.asdu[0].svID = (const uint8_t *)tc->svid;
		f.v.asdu[0].svID_len = (uint16_t)strlen(tc->svid);
		f.v.asdu[0].seqData = data;
		f.v.asdu[0].seqData_len = tc->len;
		svsub_track_frame(t, &f.v, SV_NSEC_PER_SEC, &res);
		s = svsub_track_stream(t, 0);
		assert_int_equal(s->dataset_source, tc->source);
		if (tc->source == SVSUB_DS_NONE || tc->source == SVSUB_DS_UNKNOWN)
			assert_null(s->dataset);
		else
			assert_ptr_equal(s->dataset, want);
		assert_ptr_equal(res.dataset, tc->read ? want : NULL);
		assert_int_equal(s->samples_uninterpreted, !tc->read);
		assert_int_equal(s->dataset_mismatch, tc->mismatch);
		assert_int_equal(s->samples_not_good, tc->not_good);
		assert_int_equal(res.quality, tc->quality_or);
		if (!tc->read)
			for (unsigned c = 0; c < SVSUB_TRACK_QCHANNELS; c++)
				for (unsigned q = 0; q < SVSUB_Q_KINDS; q++)
					assert_int_equal(s->quality[c][q], 0);
		svsub_track_destroy(t);
	}
}

/* ---- latency ------------------------------------------------------------------------------------- */

struct lat_case {
	const char *name;
	uint16_t smpcnt;
	int64_t rx_ns;		/* receive time */
	bool accepted;
	int64_t latency_ns;	/* when accepted */
};

#define SEC(s) ((int64_t)(s) * SV_NSEC_PER_SEC)
static const struct lat_case lat_cases[] = {
	/* 4000 Hz: sample n at n * 250 us after the top of the second */
	{ "mid-second", 2000, SEC(1000) + 500 * SV_NSEC_PER_MSEC + 300000, true, 300000 },
	{ "last sample received after the boundary", 3999, SEC(1001) + 100000, true, 350000 },
	{ "first sample right after the boundary", 0, SEC(1001) + 40000, true, 40000 },
	{ "first sample exactly at the boundary", 0, SEC(1001), true, 0 },
	{ "receiver clock 1 us behind: negative", 0, SEC(1001) - 1000, false, 0 },
	{ "600 ms: absurd", 0, SEC(1001) + 600 * SV_NSEC_PER_MSEC, false, 0 },
	{ "499 ms: accepted", 4, SEC(1001) + 1000000 + 499 * SV_NSEC_PER_MSEC, true, 499 * SV_NSEC_PER_MSEC },
};

static void test_latency(void **state)
{
	(void)state;
	for (unsigned k = 0; k < sizeof(lat_cases) / sizeof(lat_cases[0]); k++) {
		const struct lat_case *tc = &lat_cases[k];
		struct svsub_tracker *t;
		struct svsub_sample_result res;
		struct fb f;
		const struct svsub_stream_stats *s;

		print_message("case: %s\n", tc->name);
		assert_int_equal(svsub_track_create(&t, NULL), 0);
		fb_init(&f, tc->smpcnt);
		fb_rate(&f, 80);
		f.v.asdu[0].smpSynch = SV_SMPSYNCH_GLOBAL;
		svsub_track_frame(t, &f.v, tc->rx_ns, &res);
		s = svsub_track_stream(t, 0);
		assert_true(s->latency_possible);
		assert_int_equal(res.has_latency, tc->accepted);
		assert_int_equal(s->clock_synchronised, tc->accepted);
		/* one sample: an outlier is all of the samples, a negative one is evidence by itself */
		assert_int_equal(s->latency_outliers + s->latency_negative, tc->accepted ? 0 : 1);
		if (tc->accepted) {
			assert_int_equal(res.latency_ns, tc->latency_ns);
			assert_int_equal(s->latency.count, 1);
			assert_int_equal(s->latency.min, tc->latency_ns);
		} else {
			assert_int_equal(s->latency.count, 0);
		}
		svsub_track_destroy(t);
	}
}

/* No latency without smpSynch 2, nor when the host clock is known unsynchronised. */
static void test_latency_conditions(void **state)
{
	struct svsub_track_cfg cfg = { .host_unsync = true };
	struct svsub_tracker *t;
	struct svsub_sample_result res;
	struct fb f;

	(void)state;
	assert_int_equal(svsub_track_create(&t, NULL), 0);
	fb_init(&f, 10);
	fb_rate(&f, 80);
	f.v.asdu[0].smpSynch = SV_SMPSYNCH_LOCAL;
	svsub_track_frame(t, &f.v, SEC(5) + 3000000, &res);
	assert_false(res.has_latency);
	assert_false(svsub_track_stream(t, 0)->latency_possible);
	svsub_track_destroy(t);

	assert_int_equal(svsub_track_create(&t, &cfg), 0);
	f.v.asdu[0].smpSynch = SV_SMPSYNCH_GLOBAL;
	svsub_track_frame(t, &f.v, SEC(5) + 3000000, &res);
	assert_false(res.has_latency);
	assert_true(svsub_track_stream(t, 0)->latency_possible);
	assert_false(svsub_track_stream(t, 0)->clock_synchronised);
	svsub_track_destroy(t);

	/* smpSynch 2 without smpRate: latency comes once the wrap (= rate) is learned */
	assert_int_equal(svsub_track_create(&t, NULL), 0);
	int64_t rx = SEC(100) + 1200000; /* DINA-like: smpCnt 0 arrives 1.2 ms after the second */

	for (uint32_t n = 4790; n < 4800 + 20; n++) {
		fb_init(&f, (uint16_t)(n % 4800));
		f.v.asdu[0].smpSynch = SV_SMPSYNCH_GLOBAL;
		svsub_track_frame(t, &f.v, rx + ((int64_t)n - 4800) * 1000000000 / 4800, &res);
	}
	const struct svsub_stream_stats *s = svsub_track_stream(t, 0);

	assert_int_equal(s->wrap, 4800);
	assert_true(res.has_latency);
	assert_true(res.latency_ns > 1199000 && res.latency_ns < 1201000);
	/* the samples before the wrap was learned have no latency, and are counted as such: 10 before the
	 * wrap, the first 7 of the restart run (the 8th confirms it and has a rate), none after */
	assert_int_equal(s->latency_rate_unknown + s->latency.count, s->c.samples);
	assert_int_equal(s->latency_rate_unknown, 17);
	assert_int_equal(s->latency_no_sample_time, 0);
	assert_false(s->host_unsync);
	svsub_track_destroy(t);

	/* the reason is recorded when the host clock is what made the stream unsynchronised */
	assert_int_equal(svsub_track_create(&t, &cfg), 0);
	fb_init(&f, 10);
	fb_rate(&f, 80);
	f.v.asdu[0].smpSynch = SV_SMPSYNCH_GLOBAL;
	svsub_track_frame(t, &f.v, SEC(5) + 3000000, &res);
	s = svsub_track_stream(t, 0);
	assert_true(s->host_unsync);
	assert_int_equal(s->latency_outliers + s->latency_negative, 0);
	assert_int_equal(s->latency.count, 1); /* kept, not reported: the summary says why */
	svsub_track_destroy(t);
}

/*
 * The clock verdict (svsub_track.h, rules 1-3) over runs of samples: outliers are counted apart and keep
 * the rest; only evidence about the clock (a latency below -tolerance, outliers in most samples, the host
 * clock) makes the stream unsynchronised.
 */
#define MS(x) ((int64_t)(x) * SV_NSEC_PER_MSEC)
#define US(x) ((int64_t)(x) * SV_NSEC_PER_USEC)
#define LAT_END INT64_MIN

struct verdict_case {
	const char *name;
	int64_t max_latency_ns; /* 0: 500 ms */
	int64_t tolerance_ns;
	bool host_unsync;
	int64_t lat[24];	/* one sample each (smpCnt 0, 1, ... at 4000/s), LAT_END-terminated */
	uint64_t hist, hist_negative, outliers, negative;
	int64_t outlier_max;
	int first_outlier, last_outlier; /* sample indexes, -1 none */
	int64_t negative_min;
	bool synchronised, last_has_latency;
};

static const struct verdict_case verdict_cases[] = {
	{ "all in range", 0, US(20), false, { US(100), US(120), US(90), US(300), LAT_END },
	  4, 0, 0, 0, 0, -1, -1, 0, true, true },
	/* issue 27: a publisher starved for 0.7 s, then the backlog sent late */
	{ "a starved publisher: 3 outliers among 8", 0, US(20), false,
	  { US(100), US(100), US(100), MS(700), MS(650), MS(600), US(100), US(100), LAT_END },
	  5, 0, 3, 0, MS(700), 3, 5, 0, true, true },
	{ "outliers exactly half: still the publisher", 0, US(20), false,
	  { MS(600), US(100), MS(600), US(100), LAT_END }, 2, 0, 2, 0, MS(600), 0, 2, 0, true, true },
	{ "outliers in most samples: a clock off by 0.6 s", 0, US(20), false,
	  { MS(600), MS(601), MS(600), US(100), LAT_END }, 1, 0, 3, 0, MS(601), 0, 2, 0, false, true },
	{ "a custom limit of 100 ms", MS(100), US(20), false, { US(100), MS(150), US(100), LAT_END },
	  2, 0, 1, 0, MS(150), 1, 1, 0, true, true },
	{ "the limit itself is in range", MS(100), US(20), false, { MS(100), LAT_END },
	  1, 0, 0, 0, 0, -1, -1, 0, true, true },
	{ "negative within the tolerance: granularity", 0, US(20), false, { US(100), -US(20), US(50), LAT_END },
	  2, 1, 0, 0, 0, -1, -1, 0, true, true },
	{ "one negative beyond the tolerance: the clock", 0, US(20), false,
	  { US(100), US(100), -US(21), US(100), US(100), LAT_END }, 4, 0, 0, 1, 0, -1, -1, -US(21), false, false },
	{ "tolerance 0: any negative", 0, 0, false, { US(100), -1, LAT_END }, 1, 0, 0, 1, 0, -1, -1, -1, false,
	  false },
	{ "the host clock unsynchronised", 0, US(20), true, { US(100), US(100), LAT_END }, 2, 0, 0, 0, 0, -1, -1, 0,
	  false, false },
};

static void test_latency_verdict(void **state)
{
	(void)state;
	for (unsigned k = 0; k < sizeof(verdict_cases) / sizeof(verdict_cases[0]); k++) {
		const struct verdict_case *tc = &verdict_cases[k];
		struct svsub_track_cfg cfg = {
			.max_latency_ns = tc->max_latency_ns,
			.clock_tolerance_ns = tc->tolerance_ns,
			.host_unsync = tc->host_unsync,
		};
		struct svsub_tracker *t;
		struct svsub_sample_result res = { 0 };
		const struct svsub_stream_stats *s;
		int64_t rx[24] = { 0 };
		struct fb f;
		unsigned n;

		print_message("case: %s\n", tc->name);
		assert_int_equal(svsub_track_create(&t, &cfg), 0);
		for (n = 0; tc->lat[n] != LAT_END; n++) {
			fb_init(&f, (uint16_t)n);
			fb_rate(&f, 80);
			f.v.asdu[0].smpSynch = SV_SMPSYNCH_GLOBAL;
			rx[n] = SEC(2000) + (int64_t)n * NS_250US + tc->lat[n];
			svsub_track_frame(t, &f.v, rx[n], &res);
		}
		s = svsub_track_stream(t, 0);
		assert_int_equal(s->c.samples, n);
		assert_int_equal(s->latency.count, tc->hist);
		assert_int_equal(s->latency.negative, tc->hist_negative);
		assert_int_equal(s->latency_outliers, tc->outliers);
		assert_int_equal(s->latency_outlier_max, tc->outlier_max);
		assert_int_equal(s->latency_outlier_first_rx_ns, tc->first_outlier < 0 ? 0 : rx[tc->first_outlier]);
		assert_int_equal(s->latency_outlier_last_rx_ns, tc->last_outlier < 0 ? 0 : rx[tc->last_outlier]);
		assert_int_equal(s->latency_negative, tc->negative);
		assert_int_equal(s->latency_negative_min, tc->negative_min);
		/* every sample is accounted once */
		assert_int_equal(s->latency.count + s->latency.negative + s->latency_outliers + s->latency_negative, n);
		assert_int_equal(s->clock_synchronised, tc->synchronised);
		assert_int_equal(svsub_track_clock_verdict(s), tc->synchronised);
		assert_int_equal(s->host_unsync, tc->host_unsync);
		assert_int_equal(res.has_latency, tc->last_has_latency);
		if (tc->hist)
			assert_true(s->latency.max < MS(500));
		svsub_track_destroy(t);
	}
}


/* ---- randomised: drops, duplicates and swaps over many wraps, counted exactly --------------------- */

static uint64_t rng_state;

static uint32_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (uint32_t)((rng_state * 2685821657736338717ull) >> 32);
}

static void test_random_streams(void **state)
{
	enum { N = 24000, W = 4000 };
	static uint32_t kept[N], out[2 * N];

	(void)state;
	for (uint64_t seed = 1; seed <= 8; seed++) {
		struct svsub_tracker *t;
		struct fb f;
		uint64_t lost = 0, dups = 0, swaps = 0;
		unsigned nk = 0, no = 0;

		rng_state = seed * 0x9E3779B97F4A7C15ull;
		for (uint32_t i = 0; i < N; i++) {
			if (i > 0 && rnd() % 100 == 0)
				lost++; /* dropped (never the first) */
			else
				kept[nk++] = i;
		}
		for (unsigned i = 0; i < nk; i++) {
			if (i + 1 < nk && i > 0 && rnd() % 100 == 0) {
				out[no++] = kept[i + 1]; /* adjacent swap: kept[i] arrives late */
				out[no++] = kept[i];
				swaps++;
				i++;
			} else {
				out[no++] = kept[i];
			}
			if (rnd() % 100 == 0) {
				out[no] = out[no - 1]; /* immediate repeat */
				no++;
				dups++;
			}
		}
		assert_int_equal(svsub_track_create(&t, NULL), 0);
		for (unsigned i = 0; i < no; i++) {
			fb_init(&f, (uint16_t)(out[i] % W));
			fb_rate(&f, 80);
			/* receive time follows the sample index (a swap arrives 1 us apart) */
			svsub_track_frame(t, &f.v, SEC(10) + (int64_t)out[i] * NS_250US + (int64_t)i * 1000, NULL);
		}
		const struct svsub_stream_stats *s = svsub_track_stream(t, 0);

		print_message("seed %llu: lost %llu dups %llu swaps %llu\n", (unsigned long long)seed,
			      (unsigned long long)lost, (unsigned long long)dups, (unsigned long long)swaps);
		assert_int_equal(s->c.samples, no);
		assert_int_equal(s->c.lost, lost);
		assert_int_equal(s->c.duplicate, dups);
		assert_int_equal(s->c.reordered, swaps);
		assert_int_equal(s->resets, 0);
		assert_int_equal(s->wrap, W);
		svsub_track_destroy(t);
	}
}

/* Whatever the smpCnt sequence and a small configured wrap, the counters stay sane: lost never wraps below
 * zero (u64), and every sample is accounted once. */
static void test_small_wraps_no_underflow(void **state)
{
	(void)state;
	for (uint32_t w = 2; w <= 9; w++) {
		for (uint64_t seed = 1; seed <= 4; seed++) {
			struct svsub_track_cfg cfg = { .wrap = w };
			struct svsub_tracker *t;
			struct fb f;

			rng_state = seed * 0x9E3779B97F4A7C15ull + w;
			assert_int_equal(svsub_track_create(&t, &cfg), 0);
			for (unsigned i = 0; i < 4000; i++) {
				/* mostly counting up from a counter far above W, with jumps, repeats and steps back */
				uint32_t r = rnd() % 16, c = 280 + i + (r == 0 ? rnd() % 7 : 0) - (r == 1 ? rnd() % 5 : 0);

				fb_init(&f, (uint16_t)c);
				svsub_track_frame(t, &f.v, SEC(10) + (int64_t)i * NS_250US, NULL);
			}
			const struct svsub_stream_stats *s = svsub_track_stream(t, 0);

			assert_true(s->c.lost < 4000u * w);
			assert_int_equal(s->c.samples, 4000);
			assert_true(s->c.duplicate + s->c.reordered <= s->c.samples);
			svsub_track_destroy(t);
		}
	}
}

/* ---- the stream table: memory only for the streams that come (issue 27: 300000 slots failed) --------- */

static long rss_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kib = -1;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

static void feed_streams(struct svsub_tracker *t, unsigned from, unsigned to)
{
	static struct fb f;
	char id[16];

	for (unsigned k = from; k < to; k++) {
		fb_init(&f, 1);
		snprintf(id, sizeof(id), "S%u", k);
		f.v.asdu[0].svID = (const uint8_t *)id;
		f.v.asdu[0].svID_len = (uint16_t)strlen(id);
		svsub_track_frame(t, &f.v, SV_NSEC_PER_SEC, NULL);
	}
}

static void test_big_table(void **state)
{
	struct svsub_track_cfg cfg = { .max_streams = 1u << 20, .prefault = true };
	struct svsub_track_mem m;
	struct svsub_tracker *t;
	long before = rss_kib(), after;
	FILE *oc = fopen("/proc/sys/vm/overcommit_memory", "r");
	int mode = 0;

	(void)state;
	if (oc) {
		if (fscanf(oc, "%d", &mode) != 1)
			mode = 0;
		fclose(oc);
	}
	if (mode == 2) {
		print_message("vm.overcommit_memory is 2: the kernel charges the whole reservation; not tested\n");
		skip();
	}
	/* the documented maximum, live: the first slots written, the rest address space */
	assert_int_equal(svsub_track_create(&t, &cfg), 0);
	after = rss_kib();
	svsub_track_memory(t, &m);
	assert_int_equal(m.max_streams, 1u << 20);
	assert_true(m.reserved_bytes >= (size_t)(1u << 20) * m.slot_bytes);
	assert_true(m.populated >= SVSUB_TRACK_PREFAULT_STREAMS);
	assert_int_equal(m.populate_err, 0);
	print_message("table of %u slots of %zu octets: %.1f GiB reserved, RSS +%ld KiB\n", m.max_streams,
		      m.slot_bytes, (double)m.reserved_bytes / (1 << 30), after - before);
	/* the 256 slots written (~21 MiB), the hash index (8 MiB), not 85 GiB */
	assert_true(after - before < 64 * 1024);
	/* streams beyond the slots written at start: the helper maps ahead of them */
	feed_streams(t, 0, 300);
	for (int i = 0; i < 500; i++) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		svsub_track_memory(t, &m);
		if (m.populated >= 300 + SVSUB_TRACK_POPULATE_AHEAD)
			break;
		nanosleep(&ts, NULL);
	}
	assert_int_equal(m.populated, 300 + SVSUB_TRACK_POPULATE_AHEAD);
	uint64_t unpop = m.unpopulated; /* streams 256..299 may have come before the helper mapped their slots */

	assert_true(unpop <= 300 - SVSUB_TRACK_PREFAULT_STREAMS);
	feed_streams(t, 300, 300 + SVSUB_TRACK_POPULATE_AHEAD);
	svsub_track_memory(t, &m);
	assert_int_equal(m.unpopulated, unpop); /* all in mapped slots */
	assert_int_equal(svsub_track_count(t), 300 + SVSUB_TRACK_POPULATE_AHEAD);
	for (unsigned k = 0; k < svsub_track_count(t); k++)
		assert_int_equal(svsub_track_stream(t, k)->c.samples, 1);
	svsub_track_destroy(t);

	/* offline: nothing mapped ahead, no helper */
	cfg.prefault = false;
	assert_int_equal(svsub_track_create(&t, &cfg), 0);
	svsub_track_memory(t, &m);
	assert_int_equal(m.populated, 0);
	svsub_track_destroy(t);

#if !defined(__SANITIZE_ADDRESS__)
	/* where the address space is limited, the reservation fails with -ENOMEM, and a small table fits */
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		struct rlimit lim = { 2ul << 30, 2ul << 30 };

		if (setrlimit(RLIMIT_AS, &lim))
			_exit(3);
		if (svsub_track_create(&t, &cfg) != -ENOMEM)
			_exit(1);
		cfg.max_streams = 256;
		if (svsub_track_create(&t, &cfg))
			_exit(2);
		svsub_track_destroy(t);
		_exit(0);
	}
	int status;

	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
#endif
}

static void test_bad_config(void **state)
{
	struct svsub_tracker *t;
	struct svsub_track_cfg cfg = { .wrap = 70000 };

	(void)state;
	assert_int_equal(svsub_track_create(&t, &cfg), -EINVAL);
	cfg.wrap = 1; /* every smpCnt 0: svsub refuses it too (svapp_config.c) */
	assert_int_equal(svsub_track_create(&t, &cfg), -EINVAL);
	cfg.wrap = 0;
	cfg.ahead_ns = SV_NSEC_PER_SEC;
	assert_int_equal(svsub_track_create(&t, &cfg), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sequences),
		cmocka_unit_test(test_learned_wrap_next_laps),
		cmocka_unit_test(test_long_outage),
		cmocka_unit_test(test_outage_laps),
		cmocka_unit_test(test_outage_stall_synchronised),
		cmocka_unit_test(test_burst_dropped),
		cmocka_unit_test(test_prp_copies),
		cmocka_unit_test(test_confrev_synch_sim_quality),
		cmocka_unit_test(test_multi_asdu_one_stream),
		cmocka_unit_test(test_streams_per_asdu_and_overflow),
		cmocka_unit_test(test_latency),
		cmocka_unit_test(test_latency_conditions),
		cmocka_unit_test(test_datasets),
		cmocka_unit_test(test_latency_verdict),
		cmocka_unit_test(test_random_streams),
		cmocka_unit_test(test_small_wraps_no_underflow),
		cmocka_unit_test(test_big_table),
		cmocka_unit_test(test_bad_config),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

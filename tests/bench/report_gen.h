/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Synthetic record sets for svreport (bench_recgen, test_report_memory): the files a lab run writes,
 * without the lab. NSTREAMS streams of RATE samples/s, one frame per sample; svpub's T0, svtrace's T1,
 * and T3 + T4 of each guest's svsub, six events per frame with two guests. Latencies are fixed offsets
 * plus deterministic pseudo-random jitter (xorshift), so histograms have spread and runs repeat.
 * Header-only: a static function each includer compiles.
 */
#ifndef SV_REPORT_GEN_H
#define SV_REPORT_GEN_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sv_clock.h"
#include "sv_record.h"

#define RG_SEC0 1700000000u
#define RG_GUESTS 2

struct rg_cfg {
	const char *dir;		/* pub.rec, trace.rec, g1.rec, g2.rec are written here */
	uint64_t frames;		/* frames per stream... in total: frames = seconds * rate * streams */
	unsigned streams;		/* 1..8 */
	uint32_t rate;			/* samples per second per stream */
};

static inline uint64_t rg_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static inline int rg_open(struct sv_record_writer **w, const char *dir, const char *name, const char *tool,
			  const struct rg_cfg *c)
{
	struct sv_clock_sync sync = {.unsync = 0, .tai_unset = 0, .state = 0, .tai_offset_s = 37,
				     .maxerror_ns = 1000};
	char path[512];
	struct sv_record_writer_cfg cfg = {
		.path = path, .tool = tool, .clock = SV_CLOCK_TAI, .sync = &sync, .host = "rghost",
		.no_to_tai = true, .block_bytes = SV_REC_BLOCK_LIMIT,
	};
	int err;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	err = sv_record_writer_open(w, &cfg);
	if (err)
		return err;
	for (unsigned s = 0; s < c->streams && !err; s++) {
		struct sv_rec_stream st = {.stream = s, .appid = (uint16_t)(0x4000 + s), .asdus = 1,
					   .sample_rate = c->rate, .conf_rev = 1, .vlan = 0xFFFF, .smp_synch = 2,
					   .svid_len = 6, .smp_wrap = c->rate};

		snprintf(st.svid, sizeof(st.svid), "RGMU%02u", s + 1);
		err = sv_record_define_stream(*w, &st);
	}
	return err;
}

/* Writes the set. Returns 0 and the number of events written in *events, or -errno. */
static inline int rg_generate(const struct rg_cfg *c, uint64_t *events)
{
	struct sv_record_writer *w[2 + RG_GUESTS] = {NULL};
	static const char *const names[] = {"pub.rec", "trace.rec", "g1.rec", "g2.rec"};
	static const char *const tools[] = {"svpub", "svtrace", "svsub", "svsub"};
	uint64_t seed = 0x9e3779b97f4a7c15ULL, n = 0;
	int err = 0;

	for (unsigned i = 0; i < 2 + RG_GUESTS && !err; i++)
		err = rg_open(&w[i], c->dir, names[i], tools[i], c);
	for (uint64_t f = 0; f < c->frames && !err; f++) {
		uint64_t k = f / c->streams;	/* sample number: every stream sends sample k together */
		uint32_t sec = (uint32_t)(RG_SEC0 + k / c->rate);
		uint16_t smp = (uint16_t)(k % c->rate);
		int64_t ts = sv_sample_time_ns(sec, smp, c->rate);
		int64_t t0 = ts + 5000 + (int64_t)(rg_rand(&seed) % 20000);
		int64_t t1 = t0 + 8000 + (int64_t)(rg_rand(&seed) % 4000);
		struct sv_rec_event ev = {.stream = (uint32_t)(f % c->streams), .tai_sec = sec, .smp_cnt = smp,
					  .ts_src = SV_TS_SOFTWARE, .guest = SV_REC_GUEST_NONE, .nasdu = 1,
					  .t2_ns = ts, .t2_kind = SV_T2_SAMPLE};

		ev.point = SV_POINT_T0;
		ev.t_ns = t0;
		err = sv_record_write_event(w[0], &ev);
		ev.point = SV_POINT_T1;
		ev.t_ns = t1;
		err = err ? err : sv_record_write_event(w[1], &ev);
		n += 2;
		for (unsigned g = 0; g < RG_GUESTS && !err; g++) {
			int64_t t3 = t1 + 15000 + (int64_t)(rg_rand(&seed) % (g ? 60000 : 6000));
			/* a rare long tail: one frame in 4096 waits 200..400 us for the application */
			int64_t t4 = t3 + 2000 + (int64_t)(rg_rand(&seed) % 8000) +
				     ((rg_rand(&seed) & 4095) ? 0 : 200000 + (int64_t)(rg_rand(&seed) % 200000));

			ev.point = SV_POINT_T3;
			ev.t_ns = t3;
			err = sv_record_write_event(w[2 + g], &ev);
			ev.point = SV_POINT_T4;
			ev.t_ns = t4;
			ev.ts_src = SV_TS_USER;
			err = err ? err : sv_record_write_event(w[2 + g], &ev);
			ev.ts_src = SV_TS_SOFTWARE;
			n += 2;
		}
	}
	for (unsigned i = 0; i < 2 + RG_GUESTS; i++)
		if (w[i]) {
			int e = sv_record_writer_close(w[i]);

			if (!err)
				err = e;
		}
	*events = n;
	return err;
}

#endif /* SV_REPORT_GEN_H */

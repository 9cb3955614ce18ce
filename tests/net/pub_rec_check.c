// SPDX-License-Identifier: Apache-2.0
/*
 * Checks an svpub record file for the live test: every stream has @frames frame events, each with a
 * transmit timestamp of source @src, per stream in increasing order, not before the frame's deadline
 * (the instant of its last sample) and not after its hand-over to the kernel returned (xdp_meta: AF_XDP
 * copy mode stamps when the sent skb is freed, which may be after the kick returned: there, not more than
 * 100 ms after it).
 * Usage: pub_rec_check FILE STREAMS FRAMES SOURCE
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sv_clock.h"
#include "sv_record.h"

#define MAXS 64

int main(int argc, char **argv)
{
	struct sv_record_reader *r;
	struct sv_rec rec;
	uint64_t n[MAXS] = { 0 }, bad_src = 0, disorder = 0, early = 0, after_handoff = 0, flagged = 0;
	int64_t last[MAXS] = { 0 };
	unsigned streams, frames;
	enum sv_ts_source want;
	int ret, fail = 0;
	char buf[256];

	if (argc != 5 || sv_ts_source_parse(argv[4], &want)) {
		fprintf(stderr, "usage: pub_rec_check FILE STREAMS FRAMES SOURCE\n");
		return 2;
	}
	streams = (unsigned)strtoul(argv[2], NULL, 10);
	frames = (unsigned)strtoul(argv[3], NULL, 10);
	if (sv_record_reader_open(&r, argv[1])) {
		fprintf(stderr, "FAIL: cannot open %s\n", argv[1]);
		return 1;
	}
	while ((ret = sv_record_reader_next(r, &rec)) == 1) {
		const struct sv_rec_event *e = &rec.u.event;
		const struct sv_rec_stream *s;
		int64_t deadline;

		if (rec.kind != SV_REC_EVENT)
			continue;
		if (e->stream >= MAXS || e->point != SV_POINT_T0)
			continue;
		if (e->flags & (SV_REC_F_SKIPPED | SV_REC_F_DROPPED)) {
			flagged++;
			continue;
		}
		s = sv_record_reader_stream(r, e->stream);
		n[e->stream]++;
		if (e->ts_src != want) {
			bad_src++;
			continue;
		}
		if (e->t_ns < last[e->stream])
			disorder++;
		last[e->stream] = e->t_ns;
		/* tai_sec is TAI; the file's clock is TAI too (svpub default) */
		deadline = sv_sample_time_ns(e->tai_sec, e->smp_cnt + s->asdus - 1u, s->sample_rate);
		if (e->t_ns < deadline)
			early++;
		if (e->t2_kind == SV_T2_HANDOFF && e->t_ns > e->t2_ns + (want == SV_TS_XDP_META ? 100000000 : 0))
			after_handoff++;
	}
	if (ret < 0) {
		sv_record_reader_strerror(r, buf, sizeof(buf));
		fprintf(stderr, "FAIL: reading records: %s\n", buf);
		fail = 1;
	}
	for (unsigned i = 0; i < streams; i++) {
		if (n[i] != frames) {
			fprintf(stderr, "FAIL: stream %u: %llu frame records, %u expected\n", i, (unsigned long long)n[i],
				frames);
			fail = 1;
		}
	}
	if (bad_src || disorder || early || after_handoff || flagged) {
		fprintf(stderr,
			"FAIL: %llu without a %s stamp, %llu out of order, %llu before their deadline, %llu after the "
			"hand-over, %llu skipped/dropped\n",
			(unsigned long long)bad_src, argv[4], (unsigned long long)disorder, (unsigned long long)early,
			(unsigned long long)after_handoff, (unsigned long long)flagged);
		fail = 1;
	}
	sv_record_reader_close(r);
	if (!fail)
		printf("records: %u streams x %u frames, every TX stamp %s, ordered, between deadline and hand-over\n",
		       streams, frames, argv[4]);
	return fail;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The svtrace unit tests' stand-in for BPF: a "streams" map (BPF id -> APPID + svID), and svtrace's
 * modules wired as its main() wires them (svtrace_corr, svtrace_streams, svtrace_events), without a
 * skeleton. Include after <cmocka.h>.
 */
#ifndef TRACE_FIXTURE_H
#define TRACE_FIXTURE_H

#include <errno.h>
#include <string.h>

#include "svtrace.h"
#include "svtrace_corr.h"
#include "svtrace_events.h"
#include "svtrace_rec.h"
#include "svtrace_streams.h"

#define US 1000LL
#define MS 1000000LL

struct tfix {
	struct svtrace_corr *corr;
	struct svtrace_streams streams;
	struct svtrace_events ev;
	/* BPF's "streams" map: id -> svID (NULL: no such id), APPID 0x4000 + id; wire_len[id] > 0: the
	 * length on the wire of an svID BPF cut at SVTRACE_SVID_MAX octets */
	const char *svid[SVTRACE_MAX_STREAMS];
	uint16_t wire_len[SVTRACE_MAX_STREAMS];
	unsigned key_lookups;
	struct svtrace_rec *rec;	/* tfix_record() */
};

static inline int tfix_key(void *ctx, uint32_t id, struct svtrace_stream_key *k)
{
	struct tfix *f = ctx;
	size_t n;

	f->key_lookups++;
	if (id >= SVTRACE_MAX_STREAMS || !f->svid[id])
		return -ENOENT;
	n = strlen(f->svid[id]);
	memset(k, 0, sizeof(*k));
	k->appid = (uint16_t)(0x4000 + id);
	k->svid_len = f->wire_len[id] ? f->wire_len[id] : (uint16_t)n;
	memcpy(k->svid, f->svid[id], n > SVTRACE_SVID_MAX ? SVTRACE_SVID_MAX : n);
	return 0;
}

/* svtrace's main() does the same: the late frames go to the record opened after the statistics. */
static inline void tfix_on_late(void *ctx, const struct svtrace_late *l)
{
	svtrace_rec_late(((struct tfix *)ctx)->rec, l);
}

/* @nports egress ports, late threshold @late_ns (0 off), a late list of @late_max, @max_streams
 * statistics, --svid @svid (NULL: all); no record yet. */
static inline void tfix_init(struct tfix *f, unsigned nports, int64_t late_ns, unsigned late_max,
			     unsigned max_streams, const char *svid)
{
	struct svtrace_corr_cfg cc = { .nports = nports, .late_ns = late_ns, .late_max = late_max,
				       .max_streams = max_streams, .on_late = tfix_on_late, .ctx = f };

	memset(f, 0, sizeof(*f));
	assert_int_equal(svtrace_corr_new(&f->corr, &cc), 0);
	svtrace_streams_init(&f->streams, f->corr, NULL, svid, tfix_key, f);
	f->ev = (struct svtrace_events){ .streams = &f->streams, .corr = f->corr, .nports = nports };
}

/* From here the modules write into @rec (as svtrace --record). */
static inline void tfix_record(struct tfix *f, struct svtrace_rec *rec)
{
	f->rec = f->streams.rec = f->ev.rec = rec;
}

static inline void tfix_free(struct tfix *f)
{
	svtrace_corr_free(f->corr);
}

/* One ring event as BPF writes it: a copy, or (flags & SVTRACE_F_LATE) a late copy with its names. */
static inline void tfix_event(struct tfix *f, const struct svtrace_copy *c)
{
	struct svtrace_late_ev l = { .c = *c };

	if (c->flags & SVTRACE_F_LATE)
		svtrace_events_handle(&f->ev, &l, sizeof(l));
	else
		svtrace_events_handle(&f->ev, (void *)c, sizeof(*c));
}

#endif /* TRACE_FIXTURE_H */

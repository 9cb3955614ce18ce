// SPDX-License-Identifier: Apache-2.0
/* svtrace's streams: see svtrace_streams.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "svtrace_corr.h"
#include "svtrace_rec.h"
#include "svtrace_streams.h"

void svtrace_streams_init(struct svtrace_streams *ss, struct svtrace_corr *corr, struct svtrace_rec *rec,
			  const char *svid, svtrace_stream_key_fn *key_of, void *key_ctx)
{
	memset(ss, 0, sizeof(*ss));
	for (unsigned i = 0; i < SVTRACE_MAX_STREAMS; i++) {
		ss->s[i].corr = SVTRACE_STREAM_UNRESOLVED;
		sv_rate_init(&ss->s[i].rl, 0);
	}
	ss->svid = svid;
	ss->corr = corr;
	ss->rec = rec;
	ss->key_of = key_of;
	ss->key_ctx = key_ctx;
}

/* Id @id is the stream @k: its svtrace_corr index, unless --svid filters it out. */
static struct svtrace_stream *stream_resolve(struct svtrace_streams *ss, uint32_t id,
					     const struct svtrace_stream_key *k)
{
	struct svtrace_stream *s = &ss->s[id];
	/* k->svid_len is the length on the wire; BPF kept at most SVTRACE_SVID_MAX octets */
	size_t kept = k->svid_len > SVTRACE_SVID_MAX ? SVTRACE_SVID_MAX : k->svid_len;
	int idx;

	if (!kept)
		return NULL;
	if (ss->svid && (k->svid_len != strlen(ss->svid) || memcmp(k->svid, ss->svid, kept))) {
		s->corr = SVTRACE_STREAM_FILTERED;
		return NULL;
	}
	idx = svtrace_corr_stream_add(ss->corr, k->appid, k->svid, kept);
	if (idx < 0) {
		s->corr = SVTRACE_STREAM_FILTERED;
		return NULL;
	}
	s->corr = idx;
	if (k->svid_len > SVTRACE_SVID_MAX && idx < SVTRACE_MAX_STREAMS && !ss->svid_wire_len[idx]) {
		ss->svid_wire_len[idx] = k->svid_len;
		fprintf(stderr, "svtrace: warning: stream APPID 0x%04x svID '%.*s...' has %u octets, svtrace keeps "
			"the first %d: its records carry them and will not join with svpub's or svsub's "
			"(svID_truncated in --json)\n", k->appid, (int)kept, (const char *)k->svid, k->svid_len,
			SVTRACE_SVID_MAX);
	}
	svtrace_rec_stream(ss->rec, (unsigned)s->corr, s->vlan_tci, sv_rate_samples(&s->rl));
	if (id + 1 > ss->nids)
		ss->nids = id + 1;
	return s;
}

struct svtrace_stream *svtrace_streams_first(struct svtrace_streams *ss, uint32_t id)
{
	struct svtrace_stream_key k;

	if (ss->s[id].corr == SVTRACE_STREAM_FILTERED)
		return NULL;	/* filtered out (--svid) or over the limit */
	if (ss->key_of(ss->key_ctx, id, &k)) {
		ss->unknown++;
		return NULL;
	}
	return stream_resolve(ss, id, &k);
}

struct svtrace_stream *svtrace_streams_key(struct svtrace_streams *ss, uint32_t id,
					   const struct svtrace_stream_key *key)
{
	if (id >= SVTRACE_MAX_STREAMS)
		return NULL;
	if (id + 1 > ss->nids)
		ss->nids = id + 1;
	if (ss->s[id].corr >= 0)
		return &ss->s[id];
	if (ss->s[id].corr == SVTRACE_STREAM_FILTERED)
		return NULL;
	return stream_resolve(ss, id, key);
}

uint32_t svtrace_streams_rate(const struct svtrace_stream *s)
{
	return sv_rate_guess(&s->rl);
}

void svtrace_streams_learn(struct svtrace_streams *ss, struct svtrace_stream *s, uint16_t smp)
{
	if (sv_rate_observe(&s->rl, smp) & SV_RATE_EV_CHANGED)
		svtrace_rec_stream(ss->rec, (unsigned)s->corr, s->vlan_tci, sv_rate_samples(&s->rl));
}

// SPDX-License-Identifier: Apache-2.0
/* svtrace correlation: see svtrace_corr.h for the contract. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "svtrace_corr.h"

struct corr_stream {
	uint16_t appid;
	uint16_t svid_len;
	uint8_t svid[SVTRACE_CORR_SVID_MAX];
	uint64_t frames;		/* seen at T1 */
	struct svtrace_hop_stats *hops;	/* [nports][SVTRACE_HOP_NR], NULL if allocation failed */
};

struct port_reasons {
	unsigned n;
	struct svtrace_reason_count r[SVTRACE_CORR_MAX_REASONS];
};

struct svtrace_corr {
	struct svtrace_corr_cfg cfg;
	unsigned nstreams;
	struct corr_stream *streams;
	/* stream lookup: open addressing on (appid, svid) hash -> index + 1 */
	uint32_t smask;
	uint32_t *sidx;
	struct svtrace_hop_stats *hops;		/* [nports + 1][HOP_NR], port 0 unused */
	struct svtrace_hop_stats *hops_iv;
	struct port_reasons *reasons;		/* [nports + 1] */
	struct svtrace_late *late;
	unsigned nlate;
	bool late_sorted;	/* late[] sorted for output (worst first), not a heap: rebuilt on the next add */
	struct svtrace_corr_counters cnt;
};

static const char *const hop_from[SVTRACE_HOP_NR] = { "T1", "T2a", "T1" };
static const char *const hop_to[SVTRACE_HOP_NR] = { "T2a", "T2b", "T2b" };

const char *svtrace_hop_from(enum svtrace_hop h)
{
	return (unsigned)h < SVTRACE_HOP_NR ? hop_from[h] : "?";
}

const char *svtrace_hop_to(enum svtrace_hop h)
{
	return (unsigned)h < SVTRACE_HOP_NR ? hop_to[h] : "?";
}

static uint32_t pow2_at_least(uint32_t v)
{
	uint32_t p = 16;

	while (p < v && p < (1u << 30))
		p <<= 1;
	return p;
}

static void hops_init(struct svtrace_hop_stats *h, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		memset(&h[i], 0, sizeof(h[i]) - sizeof(h[i].lat));
		sv_stats_init(&h[i].lat);
	}
}

int svtrace_corr_new(struct svtrace_corr **out, const struct svtrace_corr_cfg *cfg)
{
	struct svtrace_corr *c;
	size_t nh;

	if (!cfg || !cfg->nports || cfg->nports >= SVTRACE_CORR_MAX_PORTS || !cfg->max_streams ||
	    cfg->max_streams > 65536 || cfg->late_ns < 0)
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->cfg = *cfg;
	c->streams = calloc(cfg->max_streams, sizeof(*c->streams));
	c->smask = pow2_at_least(cfg->max_streams * 2) - 1;
	c->sidx = calloc((size_t)c->smask + 1, sizeof(*c->sidx));
	nh = (size_t)(cfg->nports + 1) * SVTRACE_HOP_NR;
	c->hops = malloc(nh * sizeof(*c->hops));
	c->hops_iv = malloc(nh * sizeof(*c->hops_iv));
	c->reasons = calloc(cfg->nports + 1, sizeof(*c->reasons));
	c->late = cfg->late_max ? calloc(cfg->late_max, sizeof(*c->late)) : NULL;
	if (!c->streams || !c->sidx || !c->hops || !c->hops_iv || !c->reasons ||
	    (cfg->late_max && !c->late)) {
		svtrace_corr_free(c);
		return -ENOMEM;
	}
	hops_init(c->hops, nh);
	hops_init(c->hops_iv, nh);
	*out = c;
	return 0;
}

void svtrace_corr_free(struct svtrace_corr *c)
{
	if (!c)
		return;
	for (unsigned i = 0; i < c->nstreams; i++)
		free(c->streams[i].hops);
	free(c->streams);
	free(c->sidx);
	free(c->hops);
	free(c->hops_iv);
	free(c->reasons);
	free(c->late);
	free(c);
}

static uint32_t fnv1a(uint16_t appid, const uint8_t *s, size_t n)
{
	uint32_t h = 2166136261u ^ appid;

	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 16777619u;
	return h;
}

static int stream_find(const struct svtrace_corr *c, uint16_t appid, const uint8_t *svid, size_t svid_len)
{
	uint32_t i = fnv1a(appid, svid, svid_len) & c->smask;

	for (;; i = (i + 1) & c->smask) {
		uint32_t v = c->sidx[i];
		const struct corr_stream *s;

		if (!v)
			return -ENOENT;
		s = &c->streams[v - 1];
		if (s->appid == appid && s->svid_len == svid_len && !memcmp(s->svid, svid, svid_len))
			return (int)(v - 1);
	}
}

/* Full-string identity: two svIDs that share a hash are still two streams. */
int svtrace_corr_stream_add(struct svtrace_corr *c, uint16_t appid, const uint8_t *svid, size_t svid_len)
{
	uint32_t i;
	struct corr_stream *s;
	int idx;

	if (svid_len > SVTRACE_CORR_SVID_MAX)
		svid_len = SVTRACE_CORR_SVID_MAX;
	idx = stream_find(c, appid, svid, svid_len);
	if (idx >= 0)
		return idx;
	if (c->nstreams >= c->cfg.max_streams) {
		c->cnt.streams_overflow++;
		return -ENOSPC;
	}
	s = &c->streams[c->nstreams];
	s->appid = appid;
	s->svid_len = (uint16_t)svid_len;
	memcpy(s->svid, svid, svid_len);
	/* Once per new stream, never per frame. */
	s->hops = malloc((size_t)(c->cfg.nports + 1) * SVTRACE_HOP_NR * sizeof(*s->hops));
	if (s->hops)
		hops_init(s->hops, (size_t)(c->cfg.nports + 1) * SVTRACE_HOP_NR);
	for (i = fnv1a(appid, svid, svid_len) & c->smask; c->sidx[i]; i = (i + 1) & c->smask)
		;
	c->sidx[i] = ++c->nstreams;
	return (int)(c->nstreams - 1);
}

/* What a copy did on a hop: its latency, or one of the counts. */
enum hop_what { HOP_LATENCY, HOP_MISSING, HOP_DROPPED, HOP_UNWANTED, HOP_IN_FLIGHT };

static void hop_add(struct svtrace_corr *c, struct corr_stream *s, unsigned port, enum svtrace_hop hop,
		    enum hop_what what, int64_t lat)
{
	struct svtrace_hop_stats *t[3] = {
		&c->hops[port * SVTRACE_HOP_NR + hop],
		c->cfg.no_interval ? NULL : &c->hops_iv[port * SVTRACE_HOP_NR + hop],
		s && s->hops ? &s->hops[port * SVTRACE_HOP_NR + hop] : NULL,
	};

	for (int i = 0; i < 3; i++) {
		if (!t[i])
			continue;
		switch (what) {
		case HOP_LATENCY:
			t[i]->frames++;
			sv_stats_add(&t[i]->lat, lat);
			break;
		case HOP_MISSING:
			t[i]->missing++;
			break;
		case HOP_DROPPED:
			t[i]->dropped++;
			break;
		case HOP_IN_FLIGHT:
			t[i]->in_flight++;
			break;
		case HOP_UNWANTED:
			t[i]->unwanted++;
			break;
		}
	}
}

static void reason_add(struct svtrace_corr *c, unsigned port, uint32_t reason)
{
	struct port_reasons *pr = &c->reasons[port];

	for (unsigned i = 0; i < pr->n; i++) {
		if (pr->r[i].reason == reason) {
			pr->r[i].count++;
			return;
		}
	}
	if (pr->n < SVTRACE_CORR_MAX_REASONS) {
		pr->r[pr->n].reason = reason;
		pr->r[pr->n].count = 1;
		pr->n++;
	}
}

/* late[] is a min-heap on hop_ns (the mildest kept frame at the root): keeping the worst late_max
 * frames costs O(log n) per late frame, not a scan of all of them (a stalled guest makes thousands). */
static void late_sift_down(struct svtrace_late *h, unsigned n, unsigned i)
{
	for (;;) {
		unsigned m = i, l = 2 * i + 1, r = l + 1;
		struct svtrace_late tmp;

		if (l < n && h[l].hop_ns < h[m].hop_ns)
			m = l;
		if (r < n && h[r].hop_ns < h[m].hop_ns)
			m = r;
		if (m == i)
			return;
		tmp = h[i];
		h[i] = h[m];
		h[m] = tmp;
		i = m;
	}
}

int64_t svtrace_wait_in_hop(int64_t hop_from_ns, int64_t hop_to_ns, int64_t wait_end_ns, int64_t wait_ns,
			    int64_t *from_ns)
{
	int64_t lo, hi;

	*from_ns = 0;
	if (wait_ns <= 0 || hop_to_ns <= hop_from_ns)
		return 0;
	if (!wait_end_ns)
		wait_end_ns = hop_to_ns;
	if (wait_end_ns < INT64_MIN + wait_ns)
		return 0;
	lo = wait_end_ns - wait_ns > hop_from_ns ? wait_end_ns - wait_ns : hop_from_ns;
	hi = wait_end_ns < hop_to_ns ? wait_end_ns : hop_to_ns;
	if (hi <= lo)
		return 0;
	*from_ns = lo;
	return hi - lo;
}

const char *svtrace_thread_role(const char *comm)
{
	static const struct {
		const char *prefix, *role;
	} roles[] = {
		/* Open vSwitch's thread names (lib/ovs-thread.c names them NAME + a counter; pmd-cCORE/idN) */
		{ "ovs-vswitchd", "ovs main thread" }, { "pmd", "ovs pmd thread" }, { "handler", "ovs handler (upcall)" },
		{ "revalidator", "ovs revalidator" }, { "ksoftirqd/", "ksoftirqd" }, { "napi/", "napi thread" },
		{ "vhost-", "vhost worker" }, { "qemu", "qemu" }, { "CPU ", "qemu vcpu" },
	};

	for (unsigned i = 0; comm && i < sizeof(roles) / sizeof(roles[0]); i++)
		if (!strncmp(comm, roles[i].prefix, strlen(roles[i].prefix)))
			return roles[i].role;
	return "thread";
}

/* A copy taken (@o->t2b_ns) @hop_ns after the start of @hop, over the threshold: the late list. */
static void late_add(struct svtrace_corr *c, const struct svtrace_copy_obs *o, enum svtrace_hop hop,
		     int64_t hop_ns)
{
	struct svtrace_late l = {
		.stream = o->stream, .smpcnt = o->smpcnt, .port = o->port, .hop = hop, .hop_ns = hop_ns,
		.t_mono_ns = o->t2b_ns, .feeder_tid = o->feeder_tid, .feeder_wait_ns = o->wait_ns,
		.wait_end_known = o->wait_end_ns != 0,
		.holder_pid = o->holder_pid, .holder_policy = o->holder_policy, .holder_prio = o->holder_prio,
	};
	struct svtrace_late *h = c->late;
	unsigned i;

	/* Only the part of the feeder's wait within the hop explains it (a wait that ended before the
	 * frame's T1 delayed something else); no part in it, no holder to name. */
	l.wait_ns = svtrace_wait_in_hop(o->t2b_ns - hop_ns, o->t2b_ns, o->wait_end_ns, o->wait_ns,
					&l.wait_from_ns);
	if (o->feeder_comm)
		strncpy(l.feeder_comm, o->feeder_comm, sizeof(l.feeder_comm) - 1);
	if (o->holder_comm && l.wait_ns)
		strncpy(l.holder_comm, o->holder_comm, sizeof(l.holder_comm) - 1);
	if (!l.wait_ns) {
		l.holder_pid = 0;
		l.holder_policy = l.holder_prio = 0;
	}
	/* The carrier's wait explains the hop it carried the frame over, T1-T2a, only by its part there. */
	if (o->carrier.tid && hop == SVTRACE_HOP_T1_T2B && o->t2a_ns) {
		const struct svtrace_carrier *k = &o->carrier;

		l.carrier_tid = k->tid;
		if (k->comm)
			strncpy(l.carrier_comm, k->comm, sizeof(l.carrier_comm) - 1);
		l.carrier_whole_wait_ns = k->wait_ns;
		l.carrier_wait_ns = svtrace_wait_in_hop(o->t2b_ns - hop_ns, o->t2a_ns, k->wait_end_ns, k->wait_ns,
							&l.carrier_wait_from_ns);
		if (l.carrier_wait_ns) {
			l.carrier_holder_pid = k->holder_pid;
			l.carrier_holder_policy = k->holder_policy;
			l.carrier_holder_prio = k->holder_prio;
			if (k->holder_comm && k->holder_pid)
				strncpy(l.carrier_holder_comm, k->holder_comm, sizeof(l.carrier_holder_comm) - 1);
		}
	}
	c->cnt.late_total++;
	if (c->cfg.on_late)
		c->cfg.on_late(c->cfg.ctx, &l);
	if (!c->cfg.late_max)
		return;
	if (c->late_sorted) {
		for (i = c->nlate / 2; i-- > 0;)
			late_sift_down(h, c->nlate, i);
		c->late_sorted = false;
	}
	if (c->nlate < c->cfg.late_max) {
		/* sift up */
		for (i = c->nlate++; i > 0 && h[(i - 1) / 2].hop_ns > l.hop_ns; i = (i - 1) / 2)
			h[i] = h[(i - 1) / 2];
		h[i] = l;
		return;
	}
	/* Full: keep the worst ones (replace the mildest). */
	if (l.hop_ns > h[0].hop_ns) {
		h[0] = l;
		late_sift_down(h, c->nlate, 0);
	}
}

const struct svtrace_hop_stats *svtrace_corr_hop(const struct svtrace_corr *c, unsigned port,
						 enum svtrace_hop hop)
{
	if (port < 1 || port > c->cfg.nports || (unsigned)hop >= SVTRACE_HOP_NR)
		return NULL;
	return &c->hops[port * SVTRACE_HOP_NR + hop];
}

const struct svtrace_hop_stats *svtrace_corr_hop_interval(const struct svtrace_corr *c, unsigned port,
							  enum svtrace_hop hop)
{
	if (port < 1 || port > c->cfg.nports || (unsigned)hop >= SVTRACE_HOP_NR)
		return NULL;
	return &c->hops_iv[port * SVTRACE_HOP_NR + hop];
}

void svtrace_corr_interval_reset(struct svtrace_corr *c)
{
	hops_init(c->hops_iv, (size_t)(c->cfg.nports + 1) * SVTRACE_HOP_NR);
}

unsigned svtrace_corr_nstreams(const struct svtrace_corr *c)
{
	return c->nstreams;
}

int svtrace_corr_stream(const struct svtrace_corr *c, unsigned idx, uint16_t *appid, const uint8_t **svid,
			size_t *svid_len, uint64_t *ingress_frames)
{
	if (idx >= c->nstreams)
		return -ENOENT;
	if (appid)
		*appid = c->streams[idx].appid;
	if (svid)
		*svid = c->streams[idx].svid;
	if (svid_len)
		*svid_len = c->streams[idx].svid_len;
	if (ingress_frames)
		*ingress_frames = c->streams[idx].frames;
	return 0;
}

const struct svtrace_hop_stats *svtrace_corr_stream_hop(const struct svtrace_corr *c, unsigned idx,
							unsigned port, enum svtrace_hop hop)
{
	if (idx >= c->nstreams || !c->streams[idx].hops || port < 1 || port > c->cfg.nports ||
	    (unsigned)hop >= SVTRACE_HOP_NR)
		return NULL;
	return &c->streams[idx].hops[port * SVTRACE_HOP_NR + hop];
}

const struct svtrace_reason_count *svtrace_corr_reasons(const struct svtrace_corr *c, unsigned port,
							unsigned *n)
{
	if (port < 1 || port > c->cfg.nports) {
		*n = 0;
		return NULL;
	}
	*n = c->reasons[port].n;
	return c->reasons[port].r;
}

static int late_cmp(const void *a, const void *b)
{
	const struct svtrace_late *x = a, *y = b;

	return (x->hop_ns < y->hop_ns) - (x->hop_ns > y->hop_ns);
}

void svtrace_corr_late_sort(struct svtrace_corr *c)
{
	if (c->nlate > 1)
		qsort(c->late, c->nlate, sizeof(*c->late), late_cmp);
	c->late_sorted = true;
}

int svtrace_corr_late_why(struct svtrace_corr *c, unsigned stream, unsigned port, uint16_t smpcnt, int64_t t_mono_ns,
			  const struct sv_rec_why *h, unsigned n)
{
	/* a scan: the list is short (late_max) and decompositions come only for late frames */
	for (unsigned i = c->nlate; i-- > 0;) {
		struct svtrace_late *l = &c->late[i];

		if (l->stream != stream || l->port != port || l->smpcnt != smpcnt || l->t_mono_ns != t_mono_ns)
			continue;
		if (n > 2)
			return -EINVAL;
		l->nwhy = n;
		memcpy(l->why, h, n * sizeof(*h));
		return 0;
	}
	return -ENOENT;
}

const struct svtrace_late *svtrace_corr_late(const struct svtrace_corr *c, unsigned *n)
{
	*n = c->nlate;
	return c->late;
}

const struct svtrace_corr_counters *svtrace_corr_counters(const struct svtrace_corr *c)
{
	return &c->cnt;
}

void svtrace_corr_stream_set_frames(struct svtrace_corr *c, unsigned idx, uint64_t frames)
{
	if (idx < c->nstreams)
		c->streams[idx].frames = frames;
}

int svtrace_corr_copy(struct svtrace_corr *c, const struct svtrace_copy_obs *o)
{
	struct corr_stream *s;
	bool in = o->t1_ns != 0;
	unsigned p = o->port;

	c->cnt.observations++;
	if (p < 1 || p > c->cfg.nports || o->stream >= c->nstreams) {
		c->cnt.bad_port++;
		return -EINVAL;
	}
	s = &c->streams[o->stream];
	switch (o->outcome) {
	case SVTRACE_COPY_TAKEN:
	case SVTRACE_COPY_UNWANTED:
		if (in)
			hop_add(c, s, p, SVTRACE_HOP_T1_T2A, HOP_LATENCY, o->t2a_ns - o->t1_ns);
		hop_add(c, s, p, SVTRACE_HOP_T2A_T2B, HOP_LATENCY, o->t2b_ns - o->t2a_ns);
		if (in)
			hop_add(c, s, p, SVTRACE_HOP_T1_T2B, HOP_LATENCY, o->t2b_ns - o->t1_ns);
		if (o->outcome == SVTRACE_COPY_UNWANTED) {
			hop_add(c, s, p, SVTRACE_HOP_T2A_T2B, HOP_UNWANTED, 0);
			if (in)
				hop_add(c, s, p, SVTRACE_HOP_T1_T2B, HOP_UNWANTED, 0);
		}
		if (!c->cfg.late_ns)
			break;
		if (in && o->t2b_ns - o->t1_ns > c->cfg.late_ns)
			late_add(c, o, SVTRACE_HOP_T1_T2B, o->t2b_ns - o->t1_ns);
		else if (!in && o->t2b_ns - o->t2a_ns > c->cfg.late_ns)
			late_add(c, o, SVTRACE_HOP_T2A_T2B, o->t2b_ns - o->t2a_ns);
		break;
	case SVTRACE_COPY_DROPPED:
		if (in)
			hop_add(c, s, p, SVTRACE_HOP_T1_T2A, HOP_LATENCY, o->t2a_ns - o->t1_ns);
		hop_add(c, s, p, SVTRACE_HOP_T2A_T2B, HOP_DROPPED, 0);
		if (in)
			hop_add(c, s, p, SVTRACE_HOP_T1_T2B, HOP_DROPPED, 0);
		reason_add(c, p, o->reason);
		break;
	case SVTRACE_COPY_PORT_DROP:
		if (in) {
			hop_add(c, s, p, SVTRACE_HOP_T1_T2A, HOP_DROPPED, 0);
			hop_add(c, s, p, SVTRACE_HOP_T1_T2B, HOP_DROPPED, 0);
		} else {
			c->cnt.orphans++;
		}
		reason_add(c, p, o->reason);
		break;
	case SVTRACE_COPY_MISSING_T2A:
		hop_add(c, s, p, SVTRACE_HOP_T1_T2A, HOP_MISSING, 0);
		hop_add(c, s, p, SVTRACE_HOP_T1_T2B, HOP_MISSING, 0);
		break;
	case SVTRACE_COPY_MISSING_T2B:
	case SVTRACE_COPY_IN_FLIGHT_T2B: {
		enum hop_what what = o->outcome == SVTRACE_COPY_MISSING_T2B ? HOP_MISSING : HOP_IN_FLIGHT;

		if (in)
			hop_add(c, s, p, SVTRACE_HOP_T1_T2A, HOP_LATENCY, o->t2a_ns - o->t1_ns);
		hop_add(c, s, p, SVTRACE_HOP_T2A_T2B, what, 0);
		if (in)
			hop_add(c, s, p, SVTRACE_HOP_T1_T2B, what, 0);
		break;
	}
	default:
		c->cnt.bad_port++;
		return -EINVAL;
	}
	return 0;
}

int svtrace_corr_hop_merge(struct svtrace_corr *c, int stream, unsigned port, enum svtrace_hop hop,
			   const struct sv_stats *lat)
{
	struct svtrace_hop_stats *h[2];
	size_t k = (size_t)port * SVTRACE_HOP_NR + (unsigned)hop;
	unsigned n = 0;

	if (port < 1 || port > c->cfg.nports || (unsigned)hop >= SVTRACE_HOP_NR ||
	    (stream >= 0 && (unsigned)stream >= c->nstreams)) {
		c->cnt.bad_port++;
		return -EINVAL;
	}
	if (stream < 0) {
		h[n++] = &c->hops[k];
		if (!c->cfg.no_interval)
			h[n++] = &c->hops_iv[k];
	} else if (c->streams[stream].hops) {
		h[n++] = &c->streams[stream].hops[k];
	}
	for (unsigned i = 0; i < n; i++)
		if (h[i]->lat.count + lat->count < h[i]->lat.count)
			return -EOVERFLOW;
	for (unsigned i = 0; i < n; i++) {
		sv_stats_merge(&h[i]->lat, lat);
		h[i]->frames += lat->count;
	}
	return 0;
}

// SPDX-License-Identifier: Apache-2.0
/* svtrace's events: see svtrace_events.h. */
#include <string.h>

#include "svtrace_events.h"
#include "svtrace_rec.h"
#include "svtrace_streams.h"
#include "svtrace_sys.h"
#include "svtrace_why.h"

_Static_assert(sizeof(struct svtrace_why_hop) == SVTRACE_WHY_HOP_SIZE, "svtrace_why_hop ABI");
_Static_assert(sizeof(struct svtrace_why_ev) == SVTRACE_WHY_EV_SIZE, "svtrace_why_ev ABI");
_Static_assert(SVTRACE_WHY_SLOTS == SV_REC_WHY_SLOTS && SVTRACE_WHY_UNEXPLAINED == SV_WHY_UNEXPLAINED &&
	       SVTRACE_WHY_RUNQUEUE == SV_WHY_RUNQUEUE && SVTRACE_WHY_PT_T2B == SV_POINT_T2B, "why: one numbering");
_Static_assert(SVTRACE_WHY_F_PARTIAL == SV_REC_WHY_F_PARTIAL && SVTRACE_WHY_F_STEAL_RQ == SV_REC_WHY_F_STEAL_RQ &&
	       SVTRACE_WHY_F_QDISC == SV_REC_WHY_F_QDISC && SVTRACE_WHY_F_RX == SV_REC_WHY_F_RX &&
	       SVTRACE_WHY_F_CARRIER_CPUS == SV_REC_WHY_F_CPUS, "why: one set of flags");

/* NOT_SPECIFIED or UNHANDLED_PROTO in the guest's namespace: the copy reached the guest and nobody
 * there wanted it (no socket for 0x88BA, an XDP_PASS nobody reads) - not a loss on the host's path. */
static bool drop_is_unwanted(const struct svtrace_copy *e)
{
	const char *name = svtrace_drop_reason_name(e->reason);

	if (!name)
		return false;
	if (!strcmp(name, "UNHANDLED_PROTO"))
		return true;
	return !strcmp(name, "NOT_SPECIFIED") && (e->flags & SVTRACE_F_OTHER_NS);
}

void svtrace_events_copy(struct svtrace_events *ev, const struct svtrace_copy *e, enum svtrace_copy_outcome oc,
			 const char *feeder_comm, const char *holder_comm, uint64_t wait_end_ns,
			 const struct svtrace_carrier *carrier)
{
	struct svtrace_copy_obs o;
	struct svtrace_stream *s = svtrace_streams_of(ev->streams, e->stream);
	uint64_t late_before = svtrace_corr_counters(ev->corr)->late_total;

	if (!s) {
		ev->filtered++;
		return;
	}
	/* The wrap is learned from copies in arrival order; a missing copy is reported when its slot is
	 * reused (a thousand frames later): its old smpCnt would look like a wrap. */
	if (oc != SVTRACE_COPY_MISSING_T2A && oc != SVTRACE_COPY_MISSING_T2B)
		svtrace_streams_learn(ev->streams, s, e->smpcnt);
	if (!s->vlan_tci && e->vlan_tci)
		s->vlan_tci = e->vlan_tci;
	o = (struct svtrace_copy_obs){
		.outcome = oc, .stream = (unsigned)s->corr, .port = e->port, .smpcnt = e->smpcnt,
		.t1_ns = (int64_t)e->t1_ns, .t2a_ns = (int64_t)e->t2a_ns, .t2b_ns = (int64_t)e->t2b_ns,
		.reason = e->reason, .feeder_tid = e->feeder_tid, .feeder_comm = feeder_comm,
		.wait_ns = e->wait_ns, .holder_pid = e->holder_pid, .holder_comm = holder_comm,
		.holder_policy = e->holder_policy, .holder_prio = e->holder_prio,
		.wait_end_ns = (int64_t)wait_end_ns,
	};
	if (carrier)
		o.carrier = *carrier;
	if (oc == SVTRACE_COPY_MISSING_T2A) {
		/* one event, a mask of ports */
		for (unsigned p = 1; p <= ev->nports; p++) {
			if (!(e->reason & (1u << p)))
				continue;
			o.port = p;
			svtrace_corr_copy(ev->corr, &o);
		}
	} else {
		svtrace_corr_copy(ev->corr, &o);
	}
	/* a late frame here: its decomposition follows (svtrace_events_why) */
	if (svtrace_corr_counters(ev->corr)->late_total != late_before) {
		struct svtrace_events_late *r = &ev->recent[ev->nrecent++ % SVTRACE_EVENTS_RECENT];

		*r = (struct svtrace_events_late){ .bpf_stream = e->stream, .port = e->port, .smpcnt = e->smpcnt,
						   .t2b_ns = e->t2b_ns };
	}
	if (ev->rec)
		svtrace_rec_copy(ev->rec, (unsigned)s->corr, svtrace_streams_rate(s), e, oc);
}

/* BPF's hop @b as a WHY record's content (times on CLOCK_MONOTONIC, stream and frame left to the caller);
 * @late_ns: the threshold a hop alone may pass. Returns false when its causes do not add up to it. */
static bool why_hop(struct sv_rec_why *h, const struct svtrace_why_hop *b, int64_t late_ns)
{
	int64_t sum = 0;

	*h = (struct sv_rec_why){
		.point = b->to_point, .from_point = b->from_point, .t_from_ns = (int64_t)b->t_from,
		.t_to_ns = (int64_t)b->t_to, .cpu = b->cpu, .flags = b->flags & (SV_REC_WHY_F_ALL & ~SV_REC_WHY_F_HOP_LATE),
		.carrier_tid = b->carrier_tid, .holder_pid = b->holder_pid, .holder_policy = b->holder_policy,
		.holder_prio = b->holder_prio, .faults = b->faults > UINT16_MAX ? UINT16_MAX : (uint16_t)b->faults,
		.holder_ns = (int64_t)b->holder_ns,
	};
	memcpy(h->carrier_comm, b->carrier_comm, sizeof(h->carrier_comm));
	memcpy(h->holder_comm, b->holder_comm, sizeof(h->holder_comm));
	h->carrier_comm[15] = h->holder_comm[15] = 0;
	for (unsigned c = 0; c < SV_REC_WHY_SLOTS; c++) {
		h->ns[c] = (int64_t)b->ns[c];
		sum += h->ns[c];
	}
	if (late_ns && h->t_to_ns - h->t_from_ns > late_ns)
		h->flags |= SV_REC_WHY_F_HOP_LATE;
	return h->t_to_ns >= h->t_from_ns && sum == h->t_to_ns - h->t_from_ns;
}

void svtrace_events_why(struct svtrace_events *ev, const struct svtrace_why_ev *w)
{
	const struct svtrace_events_late *r = NULL;
	struct svtrace_stream *s;
	struct sv_rec_why h[2];
	unsigned n = 0;

	ev->why_events++;
	if (w->flags & SVTRACE_WHY_F_NESTED) {
		ev->why_nested++;
		return;
	}
	for (unsigned i = 0; i < SVTRACE_EVENTS_RECENT && i < ev->nrecent; i++) {
		const struct svtrace_events_late *c = &ev->recent[(ev->nrecent - 1 - i) % SVTRACE_EVENTS_RECENT];

		if (c->bpf_stream == w->stream && c->port == w->port && c->smpcnt == w->smpcnt && c->t2b_ns == w->t2b_ns) {
			r = c;
			break;
		}
	}
	s = r ? svtrace_streams_of(ev->streams, w->stream) : NULL;
	if (!s || w->nhops < 1 || w->nhops > 2) {
		ev->why_unmatched++;
		return;
	}
	for (unsigned k = 2 - w->nhops; k < 2; k++) {
		if (!why_hop(&h[n], &w->hop[k], ev->late_ns)) {
			ev->why_bad++;
			return;
		}
		h[n].stream = (uint32_t)s->corr;
		h[n].smp_cnt = w->smpcnt;
		h[n].guest = w->port;
		n++;
	}
	svtrace_corr_late_why(ev->corr, (unsigned)s->corr, w->port, w->smpcnt, (int64_t)w->t2b_ns, h, n);
	sv_why_tally_add(&ev->why, h, n);
	if (ev->rec)
		svtrace_rec_why(ev->rec, svtrace_streams_rate(s), w->t1_ns ? w->t1_ns : w->t2a_ns, h, n);
}

int svtrace_events_handle(void *ctx, void *data, size_t size)
{
	struct svtrace_events *ev = ctx;
	const struct svtrace_copy *e = data;
	const struct svtrace_late_ev *l = data;
	char fc[17] = "", hc[17] = "", cc[17] = "", chc[17] = "";
	struct svtrace_carrier carrier = { 0 };
	enum svtrace_copy_outcome oc;
	uint64_t wait_end = 0;

	if (size < sizeof(*e))
		return 0;
	ev->events++;
	if (e->type == SVTRACE_EV_WHY) {
		if (size >= sizeof(struct svtrace_why_ev))
			svtrace_events_why(ev, data);
		return 0;
	}
	switch (e->type) {
	case SVTRACE_EV_TAKEN:
		oc = SVTRACE_COPY_TAKEN;
		break;
	case SVTRACE_EV_DROP:
		oc = drop_is_unwanted(e) ? SVTRACE_COPY_UNWANTED : SVTRACE_COPY_DROPPED;
		break;
	case SVTRACE_EV_PORT_DROP:
		if (e->port == 0)
			return 0;	/* BPF counts the ingress's (SVTRACE_CNT_INGRESS_DROP) */
		oc = SVTRACE_COPY_PORT_DROP;
		break;
	case SVTRACE_EV_MISSING:
		oc = SVTRACE_COPY_MISSING_T2A;
		break;
	case SVTRACE_EV_UPCALL:
		ev->upcalls++;
		return 0;
	default:
		return 0;
	}
	if ((e->flags & SVTRACE_F_LATE) && size >= sizeof(*l)) {
		memcpy(fc, l->feeder_comm, 16);
		memcpy(hc, l->holder_comm, 16);
		wait_end = l->wait_end_ns;
		if (e->flags & SVTRACE_F_CARRIED) {
			memcpy(cc, l->carrier_comm, 16);
			memcpy(chc, l->carrier_holder_comm, 16);
			carrier = (struct svtrace_carrier){
				.tid = e->tid2a, .comm = cc, .wait_ns = l->carrier_wait_ns,
				.wait_end_ns = (int64_t)l->carrier_wait_end_ns, .holder_pid = l->carrier_holder_pid,
				.holder_comm = chc, .holder_policy = l->carrier_holder_policy,
				.holder_prio = l->carrier_holder_prio,
			};
		}
	}
	svtrace_events_copy(ev, e, oc, fc, hc, wait_end, &carrier);
	return 0;
}

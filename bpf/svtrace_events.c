// SPDX-License-Identifier: Apache-2.0
/* svtrace's events: see svtrace_events.h. */
#include <string.h>

#include "svtrace_events.h"
#include "svtrace_rec.h"
#include "svtrace_streams.h"
#include "svtrace_sys.h"

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
	if (ev->rec)
		svtrace_rec_copy(ev->rec, (unsigned)s->corr, svtrace_streams_rate(s), e, oc);
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

// SPDX-License-Identifier: Apache-2.0
/* svtrace's table scans: see svtrace_scan.h. */
#include <string.h>

#include "svtrace_events.h"
#include "svtrace_scan.h"
#include "svtrace_streams.h"

/*
 * Only the slots whose bit in "incomplete" is set (a frame still waiting for a port): a frame that reached
 * every port needs nothing, and reading all of a stream's slots every pass pulled ~4000 lines a second
 * from the CPU that writes them (which then had to take them back).
 */
void svtrace_scan_inflight(struct svtrace_scan *sc, struct svtrace_events *ev, int64_t now, bool all)
{
	if (!sc->inflight || !sc->incomplete)
		return;
	for (uint32_t id = 0; id < ev->streams->nids; id++) {
		uint32_t expect = sc->all_ports;

		/* --expect seen: the ports this stream has reached (BPF's "stream_ports") */
		if (sc->ports_of && sc->ports_of(sc->ports_ctx, id, &expect))
			expect = 0;
		expect &= sc->all_ports;
		for (uint32_t wi = 0; wi < SVTRACE_INFLIGHT_SLOTS / 64; wi++) {
			uint32_t base = id * SVTRACE_INFLIGHT_SLOTS + wi * 64;
			uint64_t bits = __atomic_load_n(&sc->incomplete[base / 64], __ATOMIC_RELAXED);

			for (; bits; bits &= bits - 1) {
				uint32_t i = base + (uint32_t)__builtin_ctzll(bits);	/* slot, and bit in "incomplete" */
				volatile struct svtrace_inflight *v = &sc->inflight[i];
				struct svtrace_copy e = { 0 };
				uint64_t t1 = v->t1_ns;
				uint32_t miss;

				if (!t1 || (!all && now - (int64_t)t1 <= sc->timeout_ns))
					continue;
				miss = expect & ~(v->seen | v->predrop);
				e.flags = v->seen ? 0 : SVTRACE_F_T1_FIRST;
				e.smpcnt = v->smpcnt;
				e.tid1 = v->tid1;
				e.cpu1 = v->cpu1;
				v->t1_ns = 0;	/* free the slot (BPF may race: at worst one frame loses its T1) */
				__atomic_fetch_and(&sc->incomplete[i / 64], ~(1ull << (i & 63)), __ATOMIC_RELAXED);
				if (!miss)
					continue;
				e.type = SVTRACE_EV_MISSING;
				e.stream = id;
				e.reason = miss;
				e.t1_ns = t1;
				svtrace_events_copy(ev, &e, SVTRACE_COPY_MISSING_T2A, NULL, NULL, 0, NULL);
			}
		}
	}
}

/* A copy seen at T2a and not taken: missing at T2b, or (at the stop, younger than the timeout) in flight. */
static void track_missing(struct svtrace_events *ev, const struct svtrace_track *tp, enum svtrace_copy_outcome oc)
{
	struct svtrace_copy e = { 0 };

	e.type = SVTRACE_EV_TAKEN;
	e.port = (uint8_t)tp->port;
	e.flags = tp->flags | SVTRACE_F_NOT_FREED;
	e.stream = tp->stream;
	e.smpcnt = tp->smpcnt;
	e.vlan_tci = tp->vlan_tci;
	e.t1_ns = tp->t1_ns;
	e.t2a_ns = tp->t2a_ns;
	e.tid1 = tp->tid1;
	e.tid2a = tp->tid2a;
	e.cpu1 = tp->cpu1;
	e.cpu2a = tp->cpu2a;
	svtrace_events_copy(ev, &e, oc, NULL, NULL, 0, NULL);
}

/* An untaken copy passed T2a longer than the timeout ago at @now. */
static bool copy_expired(const struct svtrace_scan *sc, const struct svtrace_track *tp, int64_t now)
{
	return now - (int64_t)tp->t2a_ns > sc->timeout_ns;
}

bool svtrace_scan_due(const struct svtrace_scan *sc, const struct svtrace_track *tp, int64_t now, bool all)
{
	return all || copy_expired(sc, tp, now);
}

/* An untaken copy at @now: missing once expired, else (only the stop's scan sees those) still in flight. */
void svtrace_scan_resolve(const struct svtrace_scan *sc, struct svtrace_events *ev, const struct svtrace_track *tp,
			  int64_t now)
{
	track_missing(ev, tp, copy_expired(sc, tp, now) ? SVTRACE_COPY_MISSING_T2B : SVTRACE_COPY_IN_FLIGHT_T2B);
}

void svtrace_scan_track(struct svtrace_scan *sc, struct svtrace_events *ev, int64_t now, bool all)
{
	struct svtrace_track tp;
	uint32_t from = 0, to = sc->track_n;

	/* A quarter of the table per pass (a full sweep every 2 s): reading all of it every 500 ms costs
	 * more than the events (~2 MiB of cache lines BPF is writing). The final pass takes all. */
	if (!all && sc->track_n >= 4) {
		from = sc->cursor;
		to = from + sc->track_n / 4;
		sc->cursor = to >= sc->track_n ? 0 : to;
	}
	/* The direct-mapped array, through mmap: a live copy (svtrace.h: its release word is not its
	 * claim word) is released by a compare-and-exchange of the release word, so a free racing with
	 * the scan wins (a new claim of the slot changes the slot, caught by the copy's check). */
	for (uint32_t i = from; sc->track && i < to; i++) {
		volatile struct svtrace_track *v = &sc->track[i];
		uint64_t skb = v->skb, rel, cw;
		uint16_t st = v->state;

		if (!skb)	/* never claimed: its release word not read */
			continue;
		rel = sc->track_rel[i];
		cw = svtrace_claim_word(skb, st);
		if (rel == cw)
			continue;
		memcpy(&tp, (const void *)v, sizeof(tp));
		if (tp.skb != skb || tp.state != st || !svtrace_scan_due(sc, &tp, now, all))
			continue;
		if (!__sync_bool_compare_and_swap(&sc->track_rel[i], rel, cw))
			continue;
		svtrace_scan_resolve(sc, ev, &tp, now);
	}
}

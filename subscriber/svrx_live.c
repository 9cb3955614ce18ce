// SPDX-License-Identifier: Apache-2.0
/* svsub's live loop over svrx (see svrx_live.h). */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sv_clock.h"
#include "sv_json.h"
#include "sv_log.h"
#include "sv_metrics.h"
#include "sv_ready.h"
#include "svrx_live.h"
#include "sv_record.h"

/* svrx's timestamp sources as the record format names them (svsub_rec) */
static const uint8_t ts_src_map[4] = {
	[SVRX_TS_HARDWARE] = SV_TS_HARDWARE,
	[SVRX_TS_XDP_META] = SV_TS_XDP_META,
	[SVRX_TS_KERNEL_SW] = SV_TS_SOFTWARE,
	[SVRX_TS_USER] = SV_TS_USER,
};

/* Frames taken per svrx_poll(): svrx's maximum (SVRX_BATCH_MAX), as the bare loop of the receive benchmark
 * takes. Under load a large batch means fewer poll() calls and fill-ring refills per frame; at light load
 * batches are a frame or two whatever the maximum. */
#define LIVE_BATCH 256

/* How often the links' state is read (svrx_link_check: three ioctls per interface), and how long a handle
 * whose receive call failed with a transient error (its link went down) rests before it is polled again. */
#define LIVE_LINK_CHECK_NS (100 * 1000 * 1000LL)

static int live_run(struct svrx_live *l, struct svsub_proc *p, volatile sig_atomic_t *stop);

struct svrx_live {
	struct svrx *rx[2];
	unsigned n;
	int64_t rest_until[2];	  /* do not poll before (after a transient receive error) */
	int64_t next_link_check;
	int64_t duration_ns;
	bool status;
	struct sv_stats rx_to_app; /* ns, frame rx stamp -> pipeline done, TAI-stamped frames */
	uint64_t index;
	/* metrics: the back-ends' counters as of the last copy (once a second and at the end), which the
	 * metrics thread reads (svrx_stats_get makes system calls: only this thread calls it) */
	struct svrx_stats mst[2];
	struct sv_metrics_health *health;
	int64_t next_metrics;
};

void svrx_live_opts_init(struct svrx_live_opts *o)
{
	memset(o, 0, sizeof(*o));
	svrx_config_init(&o->cfg);
	o->status = true;
}

static const char *lan_name(const struct svrx_live *l, unsigned i)
{
	return l->n < 2 ? "" : i ? " (PRP LAN B)" : " (PRP LAN A)";
}

/*
 * Reads handle @i's link and says on stderr, once per transition, what changed (not per frame: this runs a
 * few times a second). Returns 0, or -ENODEV (said) when the interface is gone: the run cannot go on.
 * The link's history is svrx's (svrx_link_down_since), which only this function's checks update.
 */
static int live_link(struct svrx_live *l, unsigned i, int64_t now)
{
	const char *ifname = svrx_ifname(l->rx[i]);
	/* read before the check: 0 when the previous check saw the link up (a "down" prev is then a
	 * down-and-up between the two checks) */
	int64_t down_since = svrx_link_down_since(l->rx[i]);
	int prev, st = svrx_link_check(l->rx[i], now, &prev);

	if (st == -ENODEV) {
		fprintf(stderr, "svsub: %s%s: interface gone (deleted or moved to another namespace): stopping\n",
			ifname, lan_name(l, i));
		return st;
	}
	if (st < 0) {
		fprintf(stderr, "svsub: %s%s: cannot read the link state: %s: stopping\n", ifname, lan_name(l, i),
			strerror(-st));
		return st;
	}
	if (st == prev)
		return 0;
	if (st == SVRX_LINK_UP) {
		if (down_since)
			fprintf(stderr, "svsub: %s%s: link up again after %.3f s down: receiving\n", ifname,
				lan_name(l, i), (double)(now - down_since) / 1e9);
		else
			fprintf(stderr, "svsub: %s%s: link went down and came back up (the socket said: %s)\n",
				ifname, lan_name(l, i), strerror(ENETDOWN));
	} else if (prev == SVRX_LINK_UP) {
		fprintf(stderr, "svsub: %s%s is down (%s), waiting%s\n", ifname, lan_name(l, i),
			svrx_link_name(st), l->n > 1 ? " for it; the other LAN goes on" : "");
	}
	return 0;
}

int svrx_live_open(struct svrx_live **out, const struct svrx_live_opts *o, bool quiet)
{
	struct svrx_live *l;
	struct svrx_config cfg = o->cfg;
	char desc[512];
	int err;

	*out = NULL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	sv_stats_init(&l->rx_to_app);
	l->duration_ns = o->duration_s > 0 ? (int64_t)(o->duration_s * 1e9) : 0;
	l->status = o->status && !quiet;
	for (unsigned i = 0; i < (o->ifname_b ? 2u : 1u); i++) {
		if (i == 1)
			cfg.ifname = o->ifname_b;
		err = svrx_open(&l->rx[i], &cfg);
		if (err)
			goto out_close;
		l->n++;
		svrx_describe(l->rx[i], desc, sizeof(desc));
		if (!quiet)
			fprintf(stderr, "svsub: receiving%s: %s\n", o->ifname_b ? (i ? " (PRP LAN B)" : " (PRP LAN A)") : "",
				desc);
	}
	/* A link down at start is waited for, as one that goes down later: say so now. */
	for (unsigned i = 0; i < l->n; i++) {
		err = live_link(l, i, sv_clock_gettime_ns(CLOCK_MONOTONIC));
		if (err)
			goto out_close;
	}
	*out = l;
	return 0;
out_close:
	svrx_live_close(l);
	return err;
}

/* A receive error that a link going down (or away) explains: the handle rests and the link is checked. */
static bool live_transient(int err)
{
	return err == -ENETDOWN || err == -ENXIO || err == -ENODEV || err == -ENETRESET;
}

static void live_metrics_copy(struct svrx_live *l);

int svrx_live_run(struct svrx_live *l, struct svsub_proc *p, volatile sig_atomic_t *stop)
{
	int err = live_run(l, p, stop);

	live_metrics_copy(l); /* the final values */
	return err;
}

static int live_run(struct svrx_live *l, struct svsub_proc *p, volatile sig_atomic_t *stop)
{
	struct svrx_frame frames[LIVE_BATCH];
	int64_t start = sv_clock_gettime_ns(CLOCK_MONOTONIC), next_status = start + SV_NSEC_PER_SEC;
	int64_t end = l->duration_ns ? start + l->duration_ns : INT64_MAX;

	l->next_link_check = start + LIVE_LINK_CHECK_NS;
	while (!*stop) {
		int64_t now = sv_clock_gettime_ns(CLOCK_MONOTONIC);
		struct svrx *active[2];
		unsigned na = 0;
		int got = 0;

		if (now >= end)
			break;
		svsub_proc_tick(p, now); /* the record's time bounds: compares, a syscall only when one is due */
		if (l->health && now >= l->next_metrics) {
			live_metrics_copy(l);
			l->next_metrics = now + SV_NSEC_PER_SEC;
		}
		if (now >= l->next_link_check) {
			for (unsigned i = 0; i < l->n; i++) {
				int err = live_link(l, i, now);

				if (err)
					return err;
			}
			l->next_link_check = now + LIVE_LINK_CHECK_NS;
		}
		if (l->status && now >= next_status) {
			struct svsub_proc_counts c;
			struct svrx_stats st;
			uint64_t drops = 0;
			char line[160];

			for (unsigned i = 0; i < l->n; i++)
				if (!svrx_stats_get(l->rx[i], &st))
					drops += st.kernel_drops;
			svsub_proc_counts(p, &c);
			snprintf(line, sizeof(line), "%" PRIu64 " frames, %" PRIu64 " SV, %" PRIu64 " malformed, %" PRIu64
				 " kernel drops", c.frames, c.sv, c.malformed, drops);
			fprintf(stderr, "svsub: %s\n", line);
			sv_ready_status(line); /* systemctl status: the same line */
			next_status += SV_NSEC_PER_SEC;
		}
		for (unsigned i = 0; i < l->n; i++)
			if (now >= l->rest_until[i])
				active[na++] = l->rx[i];
		if (!na) {
			/* every handle rests after an error: sleep until the next link check */
			struct timespec ts = { 0, LIVE_LINK_CHECK_NS / 2 };

			nanosleep(&ts, NULL);
			continue;
		}
		for (unsigned i = 0; i < l->n; i++) {
			if (now < l->rest_until[i])
				continue;
			/* One handle: wait inside svrx_poll. Two: poll each without waiting, then svrx_wait. */
			int n = svrx_poll(l->rx[i], frames, LIVE_BATCH, na == 1 ? 100 : 0);

			if (n == -EINTR)
				break;
			if (n < 0) {
				/* Counted in poll_errors. The link went down (AF_PACKET: ENETDOWN), or away: which
				 * one the link says; another error while the link is up means the socket is
				 * unusable. */
				int err = live_link(l, i, now);

				if (err)
					return err;
				/* not explained by the link */
				if (!live_transient(n) && !svrx_link_down_since(l->rx[i])) {
					fprintf(stderr, "svsub: %s%s: receive failed: %s: stopping\n",
						svrx_ifname(l->rx[i]), lan_name(l, i), strerror(-n));
					return n;
				}
				l->rest_until[i] = now + LIVE_LINK_CHECK_NS;
				l->next_link_check = now; /* and see it come back soon */
				continue;
			}
			got += n;
			/* The frame bytes were written by the kernel on receive and are usually out of L1 by
			 * the time the batch gets here: fetch the next frame's first two lines (Ethernet + SV
			 * header, svID, smpCnt) while this one is decoded and tracked. */
			if (n > 0) {
				__builtin_prefetch(frames[0].data);
				__builtin_prefetch(frames[0].data + 64);
			}
			for (int k = 0; k < n; k++) {
				const struct svrx_frame *x = &frames[k];
				const uint8_t *next = frames[k + 1 < n ? k + 1 : k].data;
				struct svsub_frame f = {
					.data = x->data,
					.len = x->len,
					.index = ++l->index,
					.rx_ns = x->rx_ns,
					.ts_src = ts_src_map[x->ts_source & 3],
					.vlan_oob = x->vlan_state == SVRX_VLAN_PRESENT ? SVSUB_VLAN_OOB_PRESENT
						    : x->vlan_state == SVRX_VLAN_NONE  ? SVSUB_VLAN_OOB_NONE
										       : SVSUB_VLAN_OOB_UNKNOWN,
					.vlan_pcp = x->vlan_pcp,
					.vlan_dei = x->vlan_dei,
					.vlan_id = x->vlan_id,
				};

				__builtin_prefetch(next);
				__builtin_prefetch(next + 64);
				if (svsub_proc_frame(p, &f) == -EIO)
					return -EIO;
			}
			/* Receive path = stamp -> decode, tracking and application done with the frame, read
			 * once per batch when the whole batch is done: for each frame that is when the pipeline
			 * was done with it or later (by the time its successors in the batch took; at light
			 * load a batch is a frame or two), so the figure is an upper bound, never flattering.
			 * A clock read per frame cost half as much as tracking the frame. */
			if (n > 0) {
				int64_t done_tai = sv_clock_gettime_ns(CLOCK_TAI);

				for (int k = 0; k < n; k++)
					if (frames[k].ts_clock == SV_CLOCK_TAI)
						sv_stats_add(&l->rx_to_app, done_tai - frames[k].rx_ns);
			}
			svrx_release(l->rx[i]);
		}
		if (na > 1 && !got) {
			int r = svrx_wait(active, na, 100);

			if (r < 0 && r != -EINTR) {
				fprintf(stderr, "svsub: waiting for frames: %s: stopping\n", strerror(-r));
				return r;
			}
		}
	}
	return 0;
}

int svrx_live_json(struct svrx_live *l, struct sv_json *j)
{
	sv_json_key(j, "rx");
	sv_json_array_begin(j);
	for (unsigned i = 0; i < l->n; i++)
		svrx_json(j, l->rx[i]);
	sv_json_array_end(j);
	sv_json_key(j, "rx_to_app_ns");
	if (l->rx_to_app.count)
		sv_stats_json(j, &l->rx_to_app);
	else
		sv_json_null(j);
	return sv_json_error(j);
}

const struct sv_stats *svrx_live_rx_to_app(const struct svrx_live *l)
{
	return l ? &l->rx_to_app : NULL;
}

void svrx_live_print(struct svrx_live *l, FILE *f)
{
	for (unsigned i = 0; i < l->n; i++) {
		struct svrx_stats st;
		struct svrx_info in;

		svrx_info_get(l->rx[i], &in);
		if (svrx_stats_get(l->rx[i], &st))
			continue;
		/* each back-end's own counters (docs/errors.md): the ring full / fill ring empty of AF_XDP mean
		 * nothing for an AF_PACKET ring, whose only loss is a full ring (its kernel drops) */
		fprintf(f, "svsub: %s on %s%s (ifindex %d): %" PRIu64 " frames received, %" PRIu64 " kernel drops",
			in.backend, svrx_ifname(l->rx[i]), lan_name(l, i), in.ifindex, st.frames, st.kernel_drops);
		if (!strcmp(in.backend, "af_xdp"))
			fprintf(f, ", %" PRIu64 " ring full, %" PRIu64 " fill ring empty", st.ring_full, st.fill_empty);
		else
			fputs(" (ring full)", f);
		if (st.link_down)
			fprintf(f, ", link down %" PRIu64 " time%s for %.3f s", st.link_down,
				st.link_down == 1 ? "" : "s", (double)st.link_down_ns / 1e9);
		if (st.poll_errors)
			fprintf(f, ", %" PRIu64 " failed receive calls", st.poll_errors);
		fputc('\n', f);
	}
	if (l->rx_to_app.count) {
		int64_t p50 = 0, p99 = 0, e;

		sv_stats_percentile(&l->rx_to_app, 50.0, &p50, &e);
		sv_stats_percentile(&l->rx_to_app, 99.0, &p99, &e);
		fprintf(f, "svsub: receive path (rx stamp -> application done): p50 %" PRId64 " ns, p99 %" PRId64
			" ns, max %" PRId64 " ns\n", p50, p99, l->rx_to_app.max);
	}
}

void svrx_live_close(struct svrx_live *l)
{
	if (!l)
		return;
	for (unsigned i = 0; i < l->n; i++)
		svrx_close(l->rx[i]);
	free(l);
}

/* ---- Metrics (svsub --metrics; docs/metrics.md "svsub") -------------------------------------------------- */

static void live_metrics_copy(struct svrx_live *l)
{
	uint64_t overflows = 0;

	if (!l->health)
		return;
	for (unsigned i = 0; i < l->n; i++) {
		struct svrx_stats st;
		const uint64_t *src = (const uint64_t *)&st;
		uint64_t *dst = (uint64_t *)&l->mst[i];

		if (svrx_stats_get(l->rx[i], &st))
			continue;
		for (size_t k = 0; k < sizeof(st) / sizeof(uint64_t); k++)
			sv_metrics_store_u64(&dst[k], src[k]);
		overflows += st.kernel_drops + st.ring_full + st.fill_empty;
	}
	sv_metrics_store_u64(&l->health->ring_overflows, overflows);
}

int svrx_live_metrics(struct svrx_live *l, struct sv_metrics *m, struct sv_metrics_family *hop,
		      struct sv_metrics_health *h)
{
	static const char *const port_l[] = { "port" }, *const drop_l[] = { "port", "reason" };
	static const struct {
		const char *reason;
		size_t off;
	} drops[] = {
		{ "kernel_drops", offsetof(struct svrx_stats, kernel_drops) },
		{ "ring_full", offsetof(struct svrx_stats, ring_full) },
		{ "fill_empty", offsetof(struct svrx_stats, fill_empty) },
		{ "invalid_descs", offsetof(struct svrx_stats, invalid_descs) },
		{ "xdp.truncated", offsetof(struct svrx_stats, xdp_truncated) },
		{ "xdp.no_socket", offsetof(struct svrx_stats, xdp_no_socket) },
	};
	struct sv_metrics_family *ff, *fd, *fl, *fs;
	int err;

	_Static_assert(sizeof(struct svrx_stats) % sizeof(uint64_t) == 0, "svrx_stats: 64-bit fields only");
	ff = sv_metrics_family(m, "svkit_sub_rx_frames", SV_METRIC_COUNTER, NULL, "Frames the receive back-end "
			       "delivered", 1, port_l);
	fd = sv_metrics_family(m, "svkit_sub_rx_dropped_frames", SV_METRIC_COUNTER, NULL, "Frames the receive path "
			       "dropped, by reason", 2, drop_l);
	fl = sv_metrics_family(m, "svkit_sub_rx_link_down_events", SV_METRIC_COUNTER, NULL, "Times the link was "
			       "found down", 1, port_l);
	fs = sv_metrics_family(m, "svkit_sub_rx_link_down_seconds", SV_METRIC_COUNTER, "seconds", "Time the link "
			       "spent down", 1, port_l);
	if (!ff || !fd || !fl || !fs)
		return -errno;
	for (unsigned i = 0; i < l->n; i++) {
		const char *port[] = { svrx_ifname(l->rx[i]) };
		const char *hv[] = { "T3-T4", port[0] };

		err = sv_metrics_add_u64(ff, port, &l->mst[i].frames);
		for (size_t k = 0; !err && k < sizeof(drops) / sizeof(drops[0]); k++) {
			const char *dv[] = { port[0], drops[k].reason };

			err = sv_metrics_add_u64(fd, dv, (const uint64_t *)((const char *)&l->mst[i] + drops[k].off));
		}
		if (!err)
			err = sv_metrics_add_u64(fl, port, &l->mst[i].link_down);
		if (!err)
			err = sv_metrics_add_ns(fs, port, &l->mst[i].link_down_ns);
		/* the receive path's latency: one histogram for the handles (frames of both LANs) */
		if (!err && i == 0)
			err = sv_metrics_add_hist(hop, hv, &l->rx_to_app);
		if (err)
			return err;
	}
	l->health = h;
	return 0;
}

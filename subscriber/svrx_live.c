// SPDX-License-Identifier: Apache-2.0
/* svsub's live loop over svrx (see svrx_live.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sv_clock.h"
#include "sv_json.h"
#include "sv_log.h"
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

struct svrx_live {
	struct svrx *rx[2];
	unsigned n;
	int64_t duration_ns;
	bool status;
	struct sv_stats rx_to_app; /* ns, frame rx stamp -> pipeline done, TAI-stamped frames */
	uint64_t index;
};

void svrx_live_opts_init(struct svrx_live_opts *o)
{
	memset(o, 0, sizeof(*o));
	svrx_config_init(&o->cfg);
	o->status = true;
}

static int parse_ulong(const char *s, unsigned long max, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 0);
	return (errno || end == s || *end || *out > max || *s == '-') ? -EINVAL : 0;
}

static int parse_mac(const char *s, uint8_t mac[6])
{
	unsigned v[6];
	char tail;

	if (sscanf(s, "%2x%*1[:-]%2x%*1[:-]%2x%*1[:-]%2x%*1[:-]%2x%*1[:-]%2x%c", &v[0], &v[1], &v[2], &v[3], &v[4],
		   &v[5], &tail) != 6)
		return -EINVAL;
	for (int i = 0; i < 6; i++)
		mac[i] = (uint8_t)v[i];
	return 0;
}

int svrx_live_parse_opt(struct svrx_live_opts *o, int c, const char *arg)
{
	unsigned long u;

	switch (c) {
	case SVRX_OPT_INTERFACE_B:
		o->ifname_b = arg;
		return 0;
	case SVRX_OPT_XDP_MODE:
		if (svrx_xdp_mode_parse(arg, &o->cfg.xdp_mode))
			goto bad;
		return 0;
	case SVRX_OPT_ZEROCOPY:
		if (!strcmp(arg, "auto"))
			o->cfg.zerocopy = SVRX_AUTO;
		else if (!strcmp(arg, "on"))
			o->cfg.zerocopy = SVRX_ON;
		else if (!strcmp(arg, "off"))
			o->cfg.zerocopy = SVRX_OFF;
		else
			goto bad;
		return 0;
	case SVRX_OPT_QUEUE:
		if (parse_ulong(arg, SVRX_MAX_QUEUES * 4 - 1, &u))
			goto bad;
		o->cfg.queue = (int)u;
		return 0;
	case SVRX_OPT_BUSY_POLL:
		if (parse_ulong(arg, 1000000, &u))
			goto bad;
		o->cfg.busy_poll_us = (unsigned)u;
		return 0;
	case SVRX_OPT_NO_WAKEUP:
		o->cfg.need_wakeup = false;
		return 0;
	case SVRX_OPT_APPID:
		if (parse_ulong(arg, 0xffff, &u) || o->cfg.n_appids >= SVRX_MAX_APPIDS)
			goto bad;
		o->cfg.appids[o->cfg.n_appids++] = (uint16_t)u;
		return 0;
	case SVRX_OPT_GROUP:
		if (o->cfg.n_groups >= SVRX_MAX_GROUPS || parse_mac(arg, o->cfg.groups[o->cfg.n_groups]))
			goto bad;
		o->cfg.n_groups++;
		return 0;
	case SVRX_OPT_PROMISC:
		o->cfg.promiscuous = true;
		return 0;
	case SVRX_OPT_UMEM_FRAMES:
		if (parse_ulong(arg, 1u << 20, &u) || u < 256)
			goto bad;
		o->cfg.frames = (uint32_t)u;
		return 0;
	default:
		return -ENOENT;
	}
bad:
	fprintf(stderr, "svsub: invalid value '%s' for a receive option (see --help)\n", arg);
	return -EINVAL;
}

void svrx_live_usage(FILE *f)
{
	fputs("Live receive:\n"
	      "      --interface-b IF     PRP (IEC 62439-3): also receive LAN B on IF; duplicates are discarded\n"
	      "                           by their redundancy trailer and counted per LAN\n"
	      "      --xdp-mode MODE      af_xdp: auto (native, else skb), native or skb\n"
	      "      --zerocopy WHEN      af_xdp: auto (zero-copy if the driver can, else copy), on, off\n"
	      "      --queue N            af_xdp: bind rx queue N only (default: every rx queue)\n"
	      "      --umem-frames N      af_xdp: UMEM frames per socket (default: fit RLIMIT_MEMLOCK)\n"
	      "      --no-need-wakeup     af_xdp: do not use XDP_USE_NEED_WAKEUP\n"
	      "      --busy-poll US       busy polling (af_xdp: SO_BUSY_POLL + SO_PREFER_BUSY_POLL; af_packet:\n"
	      "                           spin on the ring); costs a core\n"
	      "      --appid N            receive only APPID N (repeatable; in the kernel)\n"
	      "      --group MAC          join this multicast group (repeatable; default: the whole SV range\n"
	      "                           01-0C-CD-04-00-00..01-FF through all-multicast)\n"
	      "      --promiscuous        also put IF in promiscuous mode\n",
	      f);
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
	*out = l;
	return 0;
out_close:
	svrx_live_close(l);
	return err;
}

static inline int64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * SV_NSEC_PER_SEC + ts.tv_nsec;
}

int svrx_live_run(struct svrx_live *l, struct svsub_proc *p, volatile sig_atomic_t *stop)
{
	struct svrx_frame frames[LIVE_BATCH];
	int64_t start = now_ns(CLOCK_MONOTONIC), next_status = start + SV_NSEC_PER_SEC;
	int64_t end = l->duration_ns ? start + l->duration_ns : INT64_MAX;

	while (!*stop) {
		int64_t now = now_ns(CLOCK_MONOTONIC);
		int got = 0;

		if (now >= end)
			break;
		if (l->status && now >= next_status) {
			struct svsub_proc_counts c;
			struct svrx_stats st;
			uint64_t drops = 0;

			for (unsigned i = 0; i < l->n; i++)
				if (!svrx_stats_get(l->rx[i], &st))
					drops += st.kernel_drops;
			svsub_proc_counts(p, &c);
			fprintf(stderr, "svsub: %" PRIu64 " frames, %" PRIu64 " SV, %" PRIu64 " malformed, %" PRIu64
				" kernel drops\n", c.frames, c.sv, c.malformed, drops);
			next_status += SV_NSEC_PER_SEC;
		}
		for (unsigned i = 0; i < l->n; i++) {
			/* One handle: wait inside svrx_poll. Two: poll each without waiting, then svrx_wait. */
			int n = svrx_poll(l->rx[i], frames, LIVE_BATCH, l->n == 1 ? 100 : 0);

			if (n == -EINTR)
				break;
			if (n < 0)
				return n;
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
				int64_t done_tai = now_ns(CLOCK_TAI);

				for (int k = 0; k < n; k++)
					if (frames[k].ts_clock == SV_CLOCK_TAI)
						sv_stats_add(&l->rx_to_app, done_tai - frames[k].rx_ns);
			}
			svrx_release(l->rx[i]);
		}
		if (l->n > 1 && !got) {
			int r = svrx_wait(l->rx, l->n, 100);

			if (r < 0 && r != -EINTR)
				return r;
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
		fprintf(f, "svsub: %s ifindex %d: %" PRIu64 " frames received, %" PRIu64 " kernel drops, %" PRIu64
			" ring full, %" PRIu64 " fill ring empty\n", in.backend, in.ifindex, st.frames, st.kernel_drops,
			st.ring_full, st.fill_empty);
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

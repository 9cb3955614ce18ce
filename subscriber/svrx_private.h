/* SPDX-License-Identifier: Apache-2.0 */
/* Shared between svrx's back-ends (svrx_common.c, svrx_afxdp.c, svrx_afpacket.c). Not an API. */
#ifndef SVRX_PRIVATE_H
#define SVRX_PRIVATE_H

#include <linux/filter.h>

#include <net/if.h>
#include <poll.h>

#include "svrx.h"

/* Frames handed out by one svrx_poll() at most (the caller's @max is clamped to it). */
#define SVRX_BATCH_MAX 256

struct svrx_ops {
	const char *name;
	int (*open)(struct svrx *rx);
	int (*poll)(struct svrx *rx, struct svrx_frame *frames, unsigned max, int timeout_ms);
	void (*release)(struct svrx *rx);
	/* Fills up to @max pollfds for svrx_wait (after any need_wakeup kick); returns how many, or -1 when
	 * the handle busy-polls and must not be slept on. */
	int (*pollfds)(struct svrx *rx, struct pollfd *pfd, unsigned max);
	int (*stats)(struct svrx *rx, struct svrx_stats *st); /* adds kernel counters to @st */
	void (*close)(struct svrx *rx);
};

struct svrx {
	struct svrx_config cfg;
	char ifname[IF_NAMESIZE];
	int ifindex;
	int mc_fd;		/* AF_PACKET socket that holds the multicast memberships (AF_XDP) */
	int ctl_fd;		/* for the interface ioctls of svrx_link_check */
	int link;		/* enum svrx_link at the last svrx_link_check */
	bool enetdown;		/* the socket said ENETDOWN since the last svrx_link_check */
	int64_t link_down_since; /* CLOCK_MONOTONIC ns, while link != SVRX_LINK_UP */
	const struct svrx_ops *ops;
	struct svrx_stats st;	/* user-space counters */
	struct svrx_info info;
	void *priv;		/* back-end state */
};

extern const struct svrx_ops svrx_afxdp_ops;
extern const struct svrx_ops svrx_afpacket_ops;

/* Joins cfg's groups (or ALLMULTI for the SV range, PROMISC on request) on socket @fd. 0 or -errno. */
int svrx_join_multicast(struct svrx *rx, int fd);
/* Logs a socket/bpf failure with the capability that is likely missing. Returns @err. */
int svrx_log_perm(int err, const char *what, const char *caps);
/* The AF_PACKET back-end's socket filter (classic BPF) into @f (@cap instructions): SV frames by sv_wire.h's
 * tag rule, with @na APPIDs (0: any) in its allow-list. The number of instructions, -ENOSPC (@cap too small)
 * or -E2BIG (an allow-list past a conditional jump's reach: keep @na <= 200). */
int svrx_afp_filter(const uint16_t *appids, unsigned na, struct sock_filter *f, unsigned cap);
/* Sets the per-frame VLAN fields from a TCI. */
static inline void svrx_frame_set_tci(struct svrx_frame *f, uint16_t tci)
{
	f->vlan_state = SVRX_VLAN_PRESENT;
	f->vlan_pcp = (uint8_t)(tci >> 13);
	f->vlan_dei = (uint8_t)((tci >> 12) & 1);
	f->vlan_id = tci & 0x0fff;
}

#endif /* SVRX_PRIVATE_H */

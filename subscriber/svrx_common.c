// SPDX-License-Identifier: Apache-2.0
/* svrx: back-end independent parts - config, open/close dispatch, multicast membership, statistics. */
#include <errno.h>
#include <linux/ethtool.h>
#include <linux/if_packet.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sv_clock.h"
#include "sv_json.h"
#include "sv_log.h"
#include "svrx_private.h"

void svrx_config_init(struct svrx_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->backend = SVRX_BACKEND_AF_XDP;
	cfg->xdp_mode = SVRX_XDP_AUTO;
	cfg->zerocopy = SVRX_AUTO;
	cfg->need_wakeup = true;
	cfg->queue = -1;
}

int svrx_backend_parse(const char *s, enum svrx_backend *out)
{
	if (!strcasecmp(s, "af_xdp") || !strcasecmp(s, "xdp"))
		*out = SVRX_BACKEND_AF_XDP;
	else if (!strcasecmp(s, "af_packet") || !strcasecmp(s, "packet"))
		*out = SVRX_BACKEND_AF_PACKET;
	else
		return -EINVAL;
	return 0;
}

int svrx_xdp_mode_parse(const char *s, enum svrx_xdp_mode *out)
{
	if (!strcasecmp(s, "auto"))
		*out = SVRX_XDP_AUTO;
	else if (!strcasecmp(s, "native") || !strcasecmp(s, "drv"))
		*out = SVRX_XDP_NATIVE;
	else if (!strcasecmp(s, "skb") || !strcasecmp(s, "generic"))
		*out = SVRX_XDP_SKB;
	else
		return -EINVAL;
	return 0;
}

const char *svrx_ts_source_name(enum svrx_ts_source s)
{
	switch (s) {
	case SVRX_TS_HARDWARE:
		return "hardware";
	case SVRX_TS_XDP_META:
		return "xdp_meta";
	case SVRX_TS_KERNEL_SW:
		return "kernel_sw";
	case SVRX_TS_USER:
		return "user";
	}
	return "unknown";
}

const char *svrx_vlan_state_name(enum svrx_vlan_state s)
{
	switch (s) {
	case SVRX_VLAN_UNKNOWN:
		return "unknown";
	case SVRX_VLAN_NONE:
		return "none";
	case SVRX_VLAN_PRESENT:
		return "present";
	}
	return "unknown";
}

int svrx_log_perm(int err, const char *what, const char *caps)
{
	if (err == -EPERM || err == -EACCES)
		sv_err("%s: %s (needs %s; run as root or grant them with setcap)", what, strerror(-err), caps);
	else
		sv_err("%s: %s", what, strerror(-err));
	return err;
}

int svrx_join_multicast(struct svrx *rx, int fd)
{
	struct packet_mreq mr;
	unsigned i;

	memset(&mr, 0, sizeof(mr));
	mr.mr_ifindex = rx->ifindex;
	if (rx->cfg.promiscuous) {
		mr.mr_type = PACKET_MR_PROMISC;
		if (setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof(mr)))
			return svrx_log_perm(-errno, "promiscuous mode (PACKET_MR_PROMISC)", "CAP_NET_RAW");
		rx->info.multicast = "promiscuous";
	}
	if (rx->cfg.n_groups) {
		for (i = 0; i < rx->cfg.n_groups; i++) {
			mr.mr_type = PACKET_MR_MULTICAST;
			mr.mr_alen = 6;
			memcpy(mr.mr_address, rx->cfg.groups[i], 6);
			if (setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof(mr)))
				return svrx_log_perm(-errno, "joining an SV multicast group (PACKET_MR_MULTICAST)",
						     "CAP_NET_RAW");
		}
		if (!rx->cfg.promiscuous)
			rx->info.multicast = "groups";
	} else {
		/* The whole SV range 01-0C-CD-04-00-00..01-FF (IEC 61850-9-2 Annex C) is 512 addresses: more
		 * than any NIC's exact filter, so ask for all-multicast directly. */
		mr.mr_type = PACKET_MR_ALLMULTI;
		if (setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof(mr)))
			return svrx_log_perm(-errno, "all-multicast for the SV range (PACKET_MR_ALLMULTI)",
					     "CAP_NET_RAW");
		if (!rx->cfg.promiscuous)
			rx->info.multicast = "allmulti";
	}
	return 0;
}

int svrx_open(struct svrx **out, const struct svrx_config *cfg)
{
	struct svrx *rx;
	int err;

	*out = NULL;
	if (!cfg->ifname || !*cfg->ifname) {
		sv_err("svrx: no interface given");
		return -EINVAL;
	}
	if (strlen(cfg->ifname) >= IF_NAMESIZE) {
		sv_err("interface name '%s' is longer than %d characters", cfg->ifname, IF_NAMESIZE - 1);
		return -ENODEV;
	}
	if (cfg->n_appids > SVRX_MAX_APPIDS || cfg->n_groups > SVRX_MAX_GROUPS) {
		sv_err("svrx: too many APPIDs (max %d) or groups (max %d)", SVRX_MAX_APPIDS, SVRX_MAX_GROUPS);
		return -EINVAL;
	}
	rx = calloc(1, sizeof(*rx));
	if (!rx)
		return -ENOMEM;
	rx->cfg = *cfg;
	snprintf(rx->ifname, sizeof(rx->ifname), "%s", cfg->ifname);
	rx->cfg.ifname = rx->ifname;
	rx->mc_fd = -1;
	rx->link = SVRX_LINK_UP;
	rx->ctl_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (rx->ctl_fd < 0) {
		err = -errno;
		sv_err("svrx: socket for interface ioctls: %s", strerror(errno));
		goto out_free;
	}
	rx->ifindex = (int)if_nametoindex(rx->ifname);
	if (!rx->ifindex) {
		err = -errno;
		sv_err("interface '%s' not found (%s); list them with 'ip link'", rx->ifname,
		       strerror(errno));
		err = -ENODEV;
		goto out_free;
	}
	rx->info.ifindex = rx->ifindex;
	rx->info.need_wakeup = false;
	rx->info.xdp_mode = "-";
	rx->info.vlan_oob = "unknown";
	rx->info.multicast = "none";
	rx->ops = cfg->backend == SVRX_BACKEND_AF_PACKET ? &svrx_afpacket_ops : &svrx_afxdp_ops;
	rx->info.backend = rx->ops->name;
	err = rx->ops->open(rx);
	if (err)
		goto out_free;
	*out = rx;
	return 0;

out_free:
	if (rx->ctl_fd >= 0)
		close(rx->ctl_fd);
	free(rx);
	return err;
}

int svrx_poll(struct svrx *rx, struct svrx_frame *frames, unsigned max, int timeout_ms)
{
	int n;

	if (max > SVRX_BATCH_MAX)
		max = SVRX_BATCH_MAX;
	n = rx->ops->poll(rx, frames, max, timeout_ms);
	if (n > 0) {
		rx->st.frames += (unsigned)n;
		for (int i = 0; i < n; i++) {
			rx->st.bytes += frames[i].len;
			rx->st.ts_by_source[frames[i].ts_source & 3]++;
			rx->st.vlan_by_state[frames[i].vlan_state % 3]++;
		}
	} else if (n < 0 && n != -EINTR) {
		rx->st.poll_errors++;
		if (n == -ENETDOWN)
			rx->enetdown = true;
	}
	return n;
}

const char *svrx_link_name(int state)
{
	switch (state) {
	case SVRX_LINK_UP:
		return "up";
	case SVRX_LINK_ADMIN_DOWN:
		return "administratively down";
	case SVRX_LINK_NO_CARRIER:
		return "no carrier";
	}
	return "gone";
}

int svrx_link_check(struct svrx *rx, int64_t now_mono_ns, int *prev)
{
	struct ifreq ifr;
	int st, flags;

	*prev = rx->link;
	/* By index: the name may have changed; an index that no longer names a device is a device gone. */
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_ifindex = rx->ifindex;
	if (ioctl(rx->ctl_fd, SIOCGIFNAME, &ifr) || ioctl(rx->ctl_fd, SIOCGIFFLAGS, &ifr))
		return errno == ENODEV || errno == ENXIO ? -ENODEV : -errno;
	flags = ifr.ifr_flags; /* ifr_flags and ifr_data share a union */
	if (!(flags & IFF_UP)) {
		st = SVRX_LINK_ADMIN_DOWN;
	} else {
		/* The carrier itself (netif_carrier_ok) through ETHTOOL_GLINK: IFF_RUNNING follows the operstate,
		 * which the kernel's linkwatch updates up to a second later; it is the fallback for drivers
		 * without get_link. */
		struct ethtool_value ev = { .cmd = ETHTOOL_GLINK };

		ifr.ifr_data = (char *)&ev;
		if (!ioctl(rx->ctl_fd, SIOCETHTOOL, &ifr))
			st = ev.data ? SVRX_LINK_UP : SVRX_LINK_NO_CARRIER;
		else
			st = (flags & IFF_RUNNING) ? SVRX_LINK_UP : SVRX_LINK_NO_CARRIER;
	}
	if (st == SVRX_LINK_UP && rx->link == SVRX_LINK_UP && rx->enetdown) {
		rx->st.link_down++; /* down and up again between two checks */
		*prev = SVRX_LINK_ADMIN_DOWN;
	} else if (st != SVRX_LINK_UP && rx->link == SVRX_LINK_UP) {
		rx->st.link_down++;
		rx->link_down_since = now_mono_ns;
	} else if (st == SVRX_LINK_UP && rx->link != SVRX_LINK_UP) {
		rx->st.link_down_ns += now_mono_ns - rx->link_down_since;
	}
	rx->enetdown = false;
	rx->link = st;
	return st;
}

int64_t svrx_link_down_since(const struct svrx *rx)
{
	return rx->link != SVRX_LINK_UP ? rx->link_down_since : 0;
}

const char *svrx_ifname(const struct svrx *rx)
{
	return rx->ifname;
}

void svrx_release(struct svrx *rx)
{
	rx->ops->release(rx);
}

int svrx_stats_get(struct svrx *rx, struct svrx_stats *st)
{
	*st = rx->st;
	if (rx->link != SVRX_LINK_UP)
		st->link_down_ns += sv_clock_gettime_ns(CLOCK_MONOTONIC) - rx->link_down_since;
	return rx->ops->stats(rx, st);
}

void svrx_info_get(const struct svrx *rx, struct svrx_info *info)
{
	*info = rx->info;
}

int svrx_describe(const struct svrx *rx, char *buf, size_t size)
{
	const struct svrx_info *i = &rx->info;

	if (rx->cfg.backend == SVRX_BACKEND_AF_PACKET)
		return snprintf(buf, size,
				"af_packet on %s (ifindex %d): %s ring, kernel filter 0x88BA (untagged/802.1Q/802.1ad)%s, "
				"timestamps %s, out-of-band VLAN from %s, multicast %s%s",
				rx->ifname, rx->ifindex, i->bind_mode, rx->cfg.n_appids ? " + APPID allow-list" : "",
				i->ts_source, i->vlan_oob, i->multicast,
				i->busy_poll_us ? ", busy polling (user space)" : "");
	return snprintf(buf, size,
			"af_xdp on %s (ifindex %d): XDP %s mode, %s, %s, %u queue%s, %u UMEM frames/socket, "
			"timestamps %s, out-of-band VLAN from %s, multicast %s, busy poll %s%s",
			rx->ifname, rx->ifindex, i->xdp_mode, i->bind_mode,
			i->need_wakeup ? "need_wakeup" : "no need_wakeup", i->queues, i->queues == 1 ? "" : "s",
			i->umem_frames, i->ts_source, i->vlan_oob, i->multicast, i->busy_poll_us ? "on" : "off",
			rx->cfg.n_appids ? ", APPID allow-list in the kernel" : "");
}

void svrx_close(struct svrx *rx)
{
	if (!rx)
		return;
	rx->ops->close(rx);
	if (rx->mc_fd >= 0)
		close(rx->mc_fd);
	if (rx->ctl_fd >= 0)
		close(rx->ctl_fd);
	free(rx);
}

int svrx_wait(struct svrx *const *rx, unsigned n, int timeout_ms)
{
	struct pollfd pfd[2 * SVRX_MAX_QUEUES];
	unsigned k = 0;

	for (unsigned i = 0; i < n; i++) {
		int m = rx[i]->ops->pollfds(rx[i], pfd + k, (unsigned)(sizeof(pfd) / sizeof(pfd[0])) - k);

		if (m < 0)
			return 1;
		k += (unsigned)m;
	}
	int r = poll(pfd, k, timeout_ms);

	return r < 0 ? -errno : r;
}

int svrx_json(struct sv_json *j, struct svrx *rx)
{
	const struct svrx_info *i = &rx->info;
	struct svrx_stats st;
	char desc[512];

	svrx_stats_get(rx, &st);
	svrx_describe(rx, desc, sizeof(desc));
	sv_json_object_begin(j);
	sv_json_kv_str(j, "interface", rx->ifname);
	sv_json_kv_str(j, "backend", i->backend);
	sv_json_kv_str(j, "xdp_mode", i->xdp_mode);
	sv_json_kv_str(j, "bind_mode", i->bind_mode);
	sv_json_kv_str(j, "ts_source", i->ts_source);
	sv_json_kv_str(j, "vlan_oob", i->vlan_oob);
	sv_json_kv_str(j, "multicast", i->multicast);
	sv_json_kv_bool(j, "need_wakeup", i->need_wakeup);
	sv_json_kv_uint(j, "busy_poll_us", i->busy_poll_us);
	sv_json_kv_uint(j, "queues", i->queues);
	sv_json_kv_str(j, "description", desc);
	sv_json_kv_uint(j, "frames", st.frames);
	sv_json_kv_uint(j, "bytes", st.bytes);
	sv_json_kv_uint(j, "kernel_drops", st.kernel_drops);
	sv_json_kv_uint(j, "ring_full", st.ring_full);
	sv_json_kv_uint(j, "fill_empty", st.fill_empty);
	sv_json_kv_uint(j, "invalid_descs", st.invalid_descs);
	if (rx->cfg.backend == SVRX_BACKEND_AF_PACKET) {
		sv_json_kv_uint(j, "filter_accepted", st.filter_accepted);
	} else {
		sv_json_key(j, "xdp");
		sv_json_object_begin(j);
		sv_json_kv_uint(j, "redirected", st.xdp_redirected);
		sv_json_kv_uint(j, "passed_not_sv", st.xdp_pass_not_sv);
		sv_json_kv_uint(j, "truncated", st.xdp_truncated);
		sv_json_kv_uint(j, "not_allowed", st.xdp_not_allowed);
		sv_json_kv_uint(j, "no_socket", st.xdp_no_socket);
		sv_json_kv_uint(j, "meta_failed", st.xdp_meta_failed);
		sv_json_kv_uint(j, "vlan_hint", st.xdp_vlan_hint);
		sv_json_object_end(j);
	}
	sv_json_key(j, "ts_sources");
	sv_json_object_begin(j);
	for (int s = SVRX_TS_HARDWARE; s <= SVRX_TS_USER; s++)
		sv_json_kv_uint(j, svrx_ts_source_name((enum svrx_ts_source)s), st.ts_by_source[s]);
	sv_json_object_end(j);
	sv_json_key(j, "vlan_oob_frames");
	sv_json_object_begin(j);
	for (int s = SVRX_VLAN_UNKNOWN; s <= SVRX_VLAN_PRESENT; s++)
		sv_json_kv_uint(j, svrx_vlan_state_name((enum svrx_vlan_state)s), st.vlan_by_state[s]);
	sv_json_object_end(j);
	sv_json_kv_uint(j, "wakeups", st.wakeups);
	sv_json_kv_uint(j, "poll_errors", st.poll_errors);
	sv_json_kv_uint(j, "link_down", st.link_down);
	sv_json_kv_int(j, "link_down_ns", st.link_down_ns);
	sv_json_object_end(j);
	return sv_json_error(j);
}

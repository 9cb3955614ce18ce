// SPDX-License-Identifier: Apache-2.0
#include "svpub_tx.h"

#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <unistd.h>

#include "sv_clock.h"
#include "sv_log.h"

void svpub_log_errno(const char *what, int err, const char *cap)
{
	if ((err == -EPERM || err == -EACCES) && cap)
		sv_err("%s: %s: svpub needs %s (run as root, or grant the capability to the binary)", what,
		       strerror(-err), cap);
	else
		sv_err("%s: %s", what, strerror(-err));
}

int svpub_tx_if_up(int fd, const char *ifname)
{
	struct ifreq ifr;

	if (fd < 0)
		return -EBADF;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd, SIOCGIFFLAGS, &ifr))
		return -errno;
	return !!(ifr.ifr_flags & IFF_UP);
}

int svpub_tx_if_carrier(const char *ifname)
{
	/* IFLA_CARRIER from rtnetlink: SIOCGIFFLAGS has no IFF_LOWER_UP (16-bit flags), and its IFF_RUNNING
	 * follows the carrier only after linkwatch's delay (up to a second). */
	struct {
		struct nlmsghdr nh;
		struct ifinfomsg ifi;
		char attrs[RTA_SPACE(IFNAMSIZ)];
	} req;
	union {
		char buf[8192];
		struct nlmsghdr align;
	} resp;
	struct rtattr *a;
	struct nlmsghdr *nh = &resp.align;
	int fd, len, ret = -ENOENT;
	size_t nl = strlen(ifname) + 1;

	if (nl > IFNAMSIZ)
		return -EINVAL;
	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(req.ifi)) + RTA_LENGTH(nl);
	req.nh.nlmsg_type = RTM_GETLINK;
	req.nh.nlmsg_flags = NLM_F_REQUEST;
	req.ifi.ifi_family = AF_UNSPEC;
	a = (struct rtattr *)(void *)req.attrs;
	a->rta_type = IFLA_IFNAME;
	a->rta_len = RTA_LENGTH(nl);
	memcpy(RTA_DATA(a), ifname, nl);
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	if (send(fd, &req, req.nh.nlmsg_len, 0) < 0 || (len = (int)recv(fd, &resp, sizeof(resp), 0)) < 0) {
		ret = -errno;
		goto out_close;
	}
	if (!NLMSG_OK(nh, (unsigned)len) || nh->nlmsg_type != RTM_NEWLINK)
		goto out_close;
	len = (int)nh->nlmsg_len - NLMSG_LENGTH(sizeof(struct ifinfomsg));
	for (a = IFLA_RTA((struct ifinfomsg *)NLMSG_DATA(nh)); RTA_OK(a, len); a = RTA_NEXT(a, len))
		if (a->rta_type == IFLA_CARRIER && RTA_PAYLOAD(a) >= 1)
			ret = *(uint8_t *)RTA_DATA(a) ? 1 : 0;
out_close:
	close(fd);
	return ret;
}

int svpub_tx_check_frame_len(const struct svpub_tx *tx, const char *ifname, const char *what, unsigned len,
			     bool tagged)
{
	unsigned max = tx->mtu + 14 + (tagged ? 4 : 0);

	if (!tx->mtu || len <= max)
		return 0;
	sv_err("stream %s: its frames are %u octets, over what the MTU of %s (%u) lets through: %u with the Ethernet "
	       "header%s; raise the MTU (ip link set dev %s mtu %u, and the far end's) or send fewer ASDUs per frame",
	       what, len, ifname, tx->mtu, max, tagged ? " and the 802.1Q tag" : "", ifname, len - 14 - (tagged ? 4 : 0));
	return -EMSGSIZE;
}

/* ---- transmit errors ---- */

#define ERRLOG_PERIOD_NS SV_NSEC_PER_SEC

const char *svpub_errno_name(int err)
{
	const char *n = strerrorname_np(err);

	return n ? n : "?";
}

void svpub_tx_errlog_format(const struct svpub_tx_errlog *l, char *buf, size_t n)
{
	size_t at = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < SVPUB_TX_ERRNOS && l->by[i].err && at < n; i++)
		at += (size_t)snprintf(buf + at, n - at, "%s%s %" PRIu64, i ? ", " : "", svpub_errno_name(l->by[i].err),
				       l->by[i].count);
	if (l->other && at < n)
		snprintf(buf + at, n - at, ", other errnos %" PRIu64, l->other);
}

/* Why the kernel refuses frames with @err, in the words of the send path (AF_PACKET, AF_XDP). */
static const char *errno_hint(int err, const char *ifname)
{
	if (err == ENOBUFS) {
		int c = svpub_tx_if_carrier(ifname);

		return c == 0 ? "no carrier: the link or its far end is down"
		       : c == 1 ? "dropped on transmit: a full queue or TX ring, the carrier on"
				: "dropped on transmit: a full queue or TX ring, or no carrier";
	}
	if (err == EMSGSIZE)
		return "the frame is over the interface's MTU";
	return NULL;
}

void svpub_tx_errlog_report(struct svpub_tx_errlog *l, const char *ifname, int64_t now_ns, bool final)
{
	char by[128];

	if (l->total != l->seen) {
		l->seen = l->total;
		l->last_ns = now_ns;
		if (!l->episode) {
			const char *hint = errno_hint(l->last_err, ifname);

			l->episode = true;
			l->episode_at = l->reported;
			l->episode_ns = now_ns;
			l->reported = l->total;
			l->next_ns = now_ns + ERRLOG_PERIOD_NS;
			sv_warn("transmit errors on %s: the kernel refuses frames: %s (%s%s%s): each one is counted as a tx "
				"error and not sent again; at most one message a second while this lasts",
				ifname, strerror(l->last_err), svpub_errno_name(l->last_err), hint ? "; " : "",
				hint ? hint : "");
			if (!final)
				return;
		}
	}
	if (!l->episode)
		return;
	/* "stopped" once a second passed without errors (one message an episode); the count every second */
	if (final || now_ns - l->last_ns >= ERRLOG_PERIOD_NS) {
		svpub_tx_errlog_format(l, by, sizeof(by));
		if (final)
			sv_info("transmit errors on %s: %" PRIu64 " frames refused over %.3f s, the last %.3f s before the "
				"end of the run (this run: %s)", ifname, l->total - l->episode_at,
				(l->last_ns - l->episode_ns) / 1e9, (now_ns - l->last_ns) / 1e9, by);
		else
			sv_info("transmit errors on %s stopped: %" PRIu64 " frames refused over %.3f s (this run: %s)",
				ifname, l->total - l->episode_at, (l->last_ns - l->episode_ns) / 1e9, by);
		l->reported = l->total;
		l->episode = false;
	} else if (now_ns >= l->next_ns && l->total > l->reported) {
		sv_warn("transmit errors on %s: %" PRIu64 " more frames refused in the last %.1f s (latest: %s, %s), "
			"%" PRIu64 " since they began",
			ifname, l->total - l->reported, (now_ns - (l->next_ns - ERRLOG_PERIOD_NS)) / 1e9,
			svpub_errno_name(l->last_err), strerror(l->last_err), l->total - l->episode_at);
		l->reported = l->total;
		l->next_ns = now_ns + ERRLOG_PERIOD_NS;
	}
}

bool svpub_tx_check_down(struct svpub_tx *tx, int fd, const char *ifname)
{
	if (svpub_tx_if_up(fd, ifname) == 0) {
		sv_warn("interface %s is down: frames are counted as outage until it is up", ifname);
		tx->link_down = true;
	}
	return tx->link_down;
}

int svpub_tx_open(struct svpub_tx **tx, const struct svpub_config *c, enum sv_clock_id clock)
{
	switch (c->backend) {
	case SVPUB_BACKEND_AF_PACKET:
		return svpub_tx_packet_open(tx, c, clock);
	case SVPUB_BACKEND_AF_XDP:
		return svpub_tx_xdp_open(tx, c, clock);
	case SVPUB_BACKEND_PCAP:
		return svpub_tx_pcap_open(tx, c, clock);
	}
	return -EINVAL;
}

int svpub_tx_close(struct svpub_tx *tx)
{
	return tx ? tx->ops->close(tx) : 0;
}

// SPDX-License-Identifier: Apache-2.0
#include "svpub_tx.h"

#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

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

// SPDX-License-Identifier: Apache-2.0
#include "svpub_tx.h"

#include <errno.h>
#include <string.h>

#include "sv_log.h"

void svpub_log_errno(const char *what, int err, const char *cap)
{
	if ((err == -EPERM || err == -EACCES) && cap)
		sv_err("%s: %s: svpub needs %s (run as root, or grant the capability to the binary)", what,
		       strerror(-err), cap);
	else
		sv_err("%s: %s", what, strerror(-err));
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

// SPDX-License-Identifier: Apache-2.0
/* pcap back-end: frames go to a capture file stamped with their scheduled time (the "transmit
 * timestamp" of a file is the plan, SV_TS_SCHEDULED). A write that fails (a full disk) ends the run:
 * tx->fatal is set, the rest would not be written either; sv_pcap logs the error with the file's name
 * when the file is closed, once. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sv_log.h"
#include "sv_pcap.h"
#include "svpub_tx.h"

struct tx_pcap {
	struct svpub_tx base;
	struct sv_pcap_writer *w;
	const char *path;
};

static int pcap_add_queue(struct svpub_tx *tx, uint32_t so_priority)
{
	(void)tx;
	(void)so_priority;
	return 0;
}

static int pcap_send(struct svpub_tx *tx, unsigned queue, struct svpub_txf *f, unsigned n)
{
	struct tx_pcap *p = (struct tx_pcap *)tx;
	int sent = 0;

	(void)queue;
	for (unsigned i = 0; i < n; i++) {
		if (tx->fatal) {
			f[i].err = tx->fatal;
			tx->tx_errors++;
			continue;
		}
		f[i].err = sv_pcap_write(p->w, f[i].data, f[i].len, f[i].len, f[i].t_sched_ns);
		if (f[i].err) {
			tx->tx_errors++;
			tx->fatal = f[i].err;
		} else {
			sent++;
		}
	}
	return sent;
}

static int pcap_close(struct svpub_tx *tx)
{
	struct tx_pcap *p = (struct tx_pcap *)tx;
	int err = sv_pcap_close_write(p->w); /* logs "FILE: write failed: ..." */

	free(p);
	return err;
}

static const struct svpub_tx_ops pcap_ops = {
	.name = "pcap",
	.add_queue = pcap_add_queue,
	.send = pcap_send,
	.close = pcap_close,
};

int svpub_tx_pcap_open(struct svpub_tx **tx, const struct svpub_config *c, enum sv_clock_id clock)
{
	struct tx_pcap *p = calloc(1, sizeof(*p));
	static const uint8_t mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
	int err;

	if (!p)
		return -ENOMEM;
	/* sv_pcap names the file and the system's reason (its -errno may be a bare -EIO): no second message */
	err = sv_pcap_open_write(&p->w, c->output, sv_pcap_format_for_path(c->output), 0, "svpub");
	if (err) {
		free(p);
		return err;
	}
	p->path = c->output;
	p->base.ops = &pcap_ops;
	p->base.clock = clock;
	p->base.ts_source = SV_TS_SCHEDULED;
	snprintf(p->base.ts_detail, sizeof(p->base.ts_detail), "scheduled (pcap file: the planned time)");
	memcpy(p->base.if_mac, mac, 6);
	*tx = &p->base;
	return 0;
}

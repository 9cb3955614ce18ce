/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Transmit back-ends: AF_PACKET (sendmmsg, PACKET_QDISC_BYPASS, SO_TIMESTAMPING, SO_PRIORITY per queue,
 * optional SO_TXTIME), AF_XDP (libxdp xsk API, copy or zero-copy, XDP TX metadata timestamps where the
 * kernel and driver have them) and a pcap file (timestamps = the scheduled time).
 *
 * A "queue" is one socket with one SO_PRIORITY: frames of every stream with that priority that are due
 * together leave in one call (one sendmmsg, one ring kick). Every frame carries a cookie (the caller's
 * record slot); its transmit timestamp comes back later through svpub_tx_poll() with that cookie.
 * Timestamps are on the clock given at open (software stamps are CLOCK_REALTIME in the kernel and are
 * converted with an offset measured at open).
 */
#ifndef SVPUB_TX_H
#define SVPUB_TX_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "sv_clock.h"
#include "sv_record.h"
#include "svpub_config.h"

struct svpub_tx;

struct svpub_txf {
	const uint8_t *data;
	uint32_t len;
	int err;	   /* out: 0 sent, else -errno (-ENETDOWN, -ENXIO: interface down/gone) */
	uint64_t cookie;   /* returned with the timestamp */
	int64_t t_sched_ns; /* deadline on the configured clock (pcap timestamp, SO_TXTIME launch time) */
};

/* fn(ctx, cookie, t_tx_ns, source): one transmit timestamp on the configured clock. */
typedef void (*svpub_tx_ts_fn)(void *ctx, uint64_t cookie, int64_t t_tx_ns, enum sv_ts_source src);

struct svpub_tx_ops {
	const char *name;
	int (*add_queue)(struct svpub_tx *tx, uint32_t so_priority); /* returns queue index or -errno */
	int (*send)(struct svpub_tx *tx, unsigned queue, struct svpub_txf *f, unsigned n);
	int (*poll)(struct svpub_tx *tx, svpub_tx_ts_fn fn, void *ctx);
	int (*close)(struct svpub_tx *tx); /* 0, or -errno when what was sent is not all in place (files) */
};

struct svpub_tx {
	const struct svpub_tx_ops *ops;
	enum sv_clock_id clock;
	clockid_t cid;
	enum sv_ts_source ts_source;  /* what svpub_tx_poll() delivers; SV_TS_NONE: nothing */
	char ts_detail[160];	      /* why this source (for people: "software: SIOCSHWTSTAMP: ...") */
	bool launch_time;	      /* SO_TXTIME active */
	uint8_t if_mac[6];	      /* the interface's address (02:00:00:00:00:01 for files) */
	int ifindex;
	bool link_down;		      /* the interface was down at open (warned there) */
	int fatal;		      /* -errno: nothing more can be sent (a file that cannot be written); logged */
	uint64_t outage;	      /* frames refused with ENETDOWN/ENXIO/ENODEV */
	uint64_t tx_errors;	      /* other send failures */
	uint64_t ts_received;
	uint64_t ts_unmatched;	      /* stamps whose key matched no pending frame */
};

/* Is @err (a positive errno from a send or a kick) an outage: the interface down (ENETDOWN) or gone (ENXIO
 * once the socket lost its device, ENODEV)? Outages are counted apart from other send failures. */
static inline bool svpub_errno_is_outage(int err)
{
	return err == ENETDOWN || err == ENXIO || err == ENODEV;
}

/* Opens the back-end chosen by @c (c->backend), on clock @clock. Logs the reason of any failure, naming
 * the capability for EPERM. Returns 0 and *tx, or -errno. */
int svpub_tx_open(struct svpub_tx **tx, const struct svpub_config *c, enum sv_clock_id clock);

static inline int svpub_tx_add_queue(struct svpub_tx *tx, uint32_t so_priority)
{
	return tx->ops->add_queue(tx, so_priority);
}

/* Sends @n frames on @queue in one call where the back-end can. Returns the number sent (each frame's
 * err says which failed: -ENETDOWN/-ENXIO/-ENODEV the interface is down or gone, i.e. an outage). No
 * allocation; no logging but the one message that sets tx->fatal. */
static inline int svpub_tx_send(struct svpub_tx *tx, unsigned queue, struct svpub_txf *f, unsigned n)
{
	return tx->ops->send(tx, queue, f, n);
}

/* Delivers the timestamps available now, without blocking. Returns how many, or -errno. */
static inline int svpub_tx_poll(struct svpub_tx *tx, svpub_tx_ts_fn fn, void *ctx)
{
	return tx->ops->poll ? tx->ops->poll(tx, fn, ctx) : 0;
}

/* Closes and frees. Returns 0, or -errno when frames reported sent are not all in place (a file whose
 * last writes failed; logged, naming the file). */
int svpub_tx_close(struct svpub_tx *tx);

/* Back-end constructors (svpub_tx_open picks one). */
int svpub_tx_packet_open(struct svpub_tx **tx, const struct svpub_config *c, enum sv_clock_id clock);
int svpub_tx_xdp_open(struct svpub_tx **tx, const struct svpub_config *c, enum sv_clock_id clock);
int svpub_tx_pcap_open(struct svpub_tx **tx, const struct svpub_config *c, enum sv_clock_id clock);

/* Is @ifname up (IFF_UP, asked through @fd, any socket, SIOCGIFFLAGS)? 1 up, 0 down, -errno unknown. */
int svpub_tx_if_up(int fd, const char *ifname);

/* At open: asks @fd (any socket, SIOCGIFFLAGS) whether @ifname is up. When it is down, warns once and sets
 * tx->link_down. Returns tx->link_down; false also when @fd < 0 or the ioctl fails (nothing is known). */
bool svpub_tx_check_down(struct svpub_tx *tx, int fd, const char *ifname);

/* "CAP_NET_RAW" etc. message helper: logs "what: strerror (needs CAP)" when err is -EPERM/-EACCES. */
void svpub_log_errno(const char *what, int err, const char *cap);

#endif /* SVPUB_TX_H */

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
	char ts_detail[256];	      /* why this source (for people: "software: SIOCSHWTSTAMP: ...") */
	bool launch_time;	      /* SO_TXTIME active */
	uint8_t if_mac[6];	      /* the interface's address (02:00:00:00:00:01 for files) */
	int ifindex;
	bool link_down;		      /* the interface was down at open (warned there) */
	int fatal;		      /* -errno: nothing more can be sent (a file that cannot be written); logged */
	uint64_t outage;	      /* frames refused with ENETDOWN/ENXIO/ENODEV */
	uint64_t tx_errors;	      /* other send failures */
	uint64_t ts_received;
	uint64_t ts_unmatched;	      /* stamps whose key matched no pending frame (or a refused one) */
	uint64_t ts_resync;	      /* counted keys found behind the kernel's and moved up (AF_PACKET) */
	uint32_t mtu;		      /* the interface's MTU; 0 unknown or none (files) */
};

/* Transmit errors as people see them (the errors of svpub_errno_is_outage() are counted apart). The send
 * path counts (svpub_tx_errlog_add: no logging, no clock); svpub_tx_errlog_report(), called between
 * batches, says when they start, at most once a second while they go on, and when they stop. */
#define SVPUB_TX_ERRNOS 4
struct svpub_tx_errlog {
	uint64_t total;
	struct {
		int err; /* positive errno; 0: unused slot */
		uint64_t count;
	} by[SVPUB_TX_ERRNOS]; /* the first distinct errnos of the run */
	uint64_t other;	       /* errors of any further errno */
	int last_err;
	/* what the messages said so far */
	uint64_t seen;	      /* total at the previous report call */
	uint64_t reported;    /* total at the previous message */
	uint64_t episode_at;  /* total when the current episode began */
	int64_t episode_ns;   /* when it began */
	int64_t last_ns;      /* the report call that saw the latest new error */
	int64_t next_ns;      /* no message before this */
	bool episode;	      /* errors seen, "stopped" not said yet */
};

/* One refused frame (@err a positive errno). Per-frame path: counts only. */
static inline void svpub_tx_errlog_add(struct svpub_tx_errlog *l, int err)
{
	unsigned i;

	l->total++;
	l->last_err = err;
	for (i = 0; i < SVPUB_TX_ERRNOS && l->by[i].err && l->by[i].err != err; i++)
		;
	if (i == SVPUB_TX_ERRNOS) {
		l->other++;
		return;
	}
	l->by[i].err = err;
	l->by[i].count++;
}

/* Logs at most one message about the errors on @ifname: at once when they start, then one a second at most
 * while they go on (how many, which errno), and one when a second passed without any ("stopped": how many
 * over how long). @now_ns: any clock that does not jump, as long as every call uses the same one. @final: the
 * run ends; what was not said yet is said now. */
void svpub_tx_errlog_report(struct svpub_tx_errlog *l, const char *ifname, int64_t now_ns, bool final);

/* "ENOBUFS" for ENOBUFS; "?" for a number without a name. */
const char *svpub_errno_name(int err);

/* "ENOBUFS 4024, EMSGSIZE 3" (every errno with its count) into @buf; "" when there was none. */
void svpub_tx_errlog_format(const struct svpub_tx_errlog *l, char *buf, size_t n);

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

/* Is the carrier of @ifname on (the link is up at both ends; rtnetlink's IFLA_CARRIER)? 1 yes, 0 no,
 * -errno unknown. Opens a netlink socket: not for the per-frame path. */
int svpub_tx_if_carrier(const char *ifname);

/* Does a frame of @len octets (Ethernet header included, no FCS; @tagged: it carries an 802.1Q tag) fit the
 * MTU of @ifname (the kernel takes MTU + 14 octets, 4 more for a tagged frame)? 0, or -EMSGSIZE with a
 * message naming @what (the stream). Without a known MTU (files, tx->mtu 0): 0. */
int svpub_tx_check_frame_len(const struct svpub_tx *tx, const char *ifname, const char *what, unsigned len,
			     bool tagged);

/* At open: asks @fd (any socket, SIOCGIFFLAGS) whether @ifname is up. When it is down, warns once and sets
 * tx->link_down. Returns tx->link_down; false also when @fd < 0 or the ioctl fails (nothing is known). */
bool svpub_tx_check_down(struct svpub_tx *tx, int fd, const char *ifname);

/* "CAP_NET_RAW" etc. message helper: logs "what: strerror (needs CAP)" when err is -EPERM/-EACCES. */
void svpub_log_errno(const char *what, int err, const char *cap);

#endif /* SVPUB_TX_H */

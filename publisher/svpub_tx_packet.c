// SPDX-License-Identifier: Apache-2.0
/*
 * AF_PACKET back-end: one SOCK_RAW socket per SO_PRIORITY, frames of one deadline in one sendmmsg().
 * PACKET_QDISC_BYPASS hands frames straight to the driver (no qdisc: lower latency, but also no tc
 * classes and no ETF, so it is switched off for SO_TXTIME). Transmit timestamps through SO_TIMESTAMPING
 * with OPT_ID and OPT_TSONLY, read from the error queue with MSG_DONTWAIT between batches so the pacing loop
 * never waits for them.
 *
 * A stamp names its frame by a 32-bit key. From Linux 6.13 the key is svpub's, set per frame in an
 * SCM_TS_OPT_ID control message (af_packet.ts_key: cmsg); it holds whatever the kernel does with the frame.
 * Before, the socket counts the frames it numbered (counted): packet_snd() numbers a frame
 * (skb_setup_tx_timestamp) after the checks that fail with ENXIO, ENETDOWN, EINVAL, EMSGSIZE, EFAULT and
 * the buffer allocation, and before the transmit, whose drops come back as ENOBUFS (no carrier with
 * PACKET_QDISC_BYPASS, a full queue). So a frame refused with ENOBUFS used a key and the others did not;
 * a stamp whose key is ahead of the count (a numbered frame refused with another errno) moves the count up
 * (tx->ts_resync). Frames refused after their key was taken once left every later stamp unmatched: the
 * count never caught up (issue 27: every frame after a carrier loss stamped "user").
 */
#include <errno.h>
#include <time.h>
#include <linux/errqueue.h>
#include <linux/if_packet.h>
#include <linux/net_tstamp.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sv_log.h"
#include "svpub_tx.h"

#ifndef SO_TXTIME
#define SO_TXTIME 61
#define SCM_TXTIME SO_TXTIME
#endif
#ifndef SCM_TS_OPT_ID
#define SCM_TS_OPT_ID 81 /* Linux 6.13, asm-generic (x86, arm64); another number on sparc and parisc */
#endif

#define MAX_QUEUES 16
#define MAX_BATCH 1024
#define KEY_RING 65536u /* > frames in flight between a send and its stamp */
#define POLL_BATCH 64
#define CTRL_LEN 256
#define PROBE_AGAIN_NS 100000000 /* keys not known (interface down at start): asked again at most this often */
#define NO_COOKIE UINT64_MAX /* the key of a refused frame: a stamp for it is not one of a sent frame */

enum { KEYS_CMSG, KEYS_COUNTED, KEYS_UNKNOWN }; /* KEYS_UNKNOWN: counted until the kernel can be asked */

struct pq {
	int fd;
	uint32_t prio;
	uint32_t next_key;  /* the key of the next frame (counted: the kernel's count, as far as svpub knows) */
	bool silent;	    /* counted: a sendmmsg stopped before a frame without saying why; its retry tells */
	uint64_t *cookie;   /* KEY_RING, by key */
	struct mmsghdr msg[MAX_BATCH];
	struct iovec iov[MAX_BATCH];
	union {
		char buf[CMSG_SPACE(sizeof(uint64_t)) + CMSG_SPACE(sizeof(uint32_t))];
		struct cmsghdr align;
	} ctl[MAX_BATCH];
	unsigned txtime_at, key_at; /* offsets of the SCM_TXTIME and SCM_TS_OPT_ID headers in ctl[i].buf */
};

struct tx_packet {
	struct svpub_tx base;
	const struct svpub_config *cfg;
	char ifname[IFNAMSIZ];
	unsigned nq;
	bool timestamps;
	bool hw;
	int keys;	      /* KEYS_* */
	int ts_key_cfg;	      /* enum svpub_ts_key */
	char *probe;	      /* the frame that asks about SCM_TS_OPT_ID (over the MTU), until the keys are known */
	size_t probe_len;
	int64_t probe_next_ns; /* KEYS_UNKNOWN: asked again from then on (monotonic) */
	char ts_base[sizeof(((struct svpub_tx *)0)->ts_detail)]; /* ts_detail without the keys */
	int64_t realtime_to_clock_ns;
	struct pq q[MAX_QUEUES];
	/* error-queue reading */
	struct mmsghdr emsg[POLL_BATCH];
	struct iovec eiov[POLL_BATCH];
	char ebuf[POLL_BATCH][64];
	char ectl[POLL_BATCH][CTRL_LEN];
};

/* Is an etf qdisc installed on @ifindex? rtnetlink RTM_GETQDISC dump. 1 yes, 0 no, -errno. */
static int etf_present(int ifindex)
{
	struct {
		struct nlmsghdr nh;
		struct tcmsg tc;
	} req = {
		.nh = { .nlmsg_len = sizeof(req), .nlmsg_type = RTM_GETQDISC,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP, .nlmsg_seq = 1 },
		.tc = { .tcm_family = AF_UNSPEC },
	};
	static char buf[32768];
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	int found = 0;

	if (fd < 0)
		return -errno;
	if (send(fd, &req, sizeof(req), 0) < 0) {
		close(fd);
		return -errno;
	}
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);

		if (n <= 0)
			break;
		for (struct nlmsghdr *nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, (unsigned)n); nh = NLMSG_NEXT(nh, n)) {
			struct tcmsg *tc;
			int len;

			if (nh->nlmsg_type == NLMSG_DONE || nh->nlmsg_type == NLMSG_ERROR)
				goto out;
			tc = NLMSG_DATA(nh);
			if (tc->tcm_ifindex != ifindex)
				continue;
			len = (int)nh->nlmsg_len - NLMSG_LENGTH(sizeof(*tc));
			for (struct rtattr *a = (struct rtattr *)((char *)tc + NLMSG_ALIGN(sizeof(*tc))); RTA_OK(a, len);
			     a = RTA_NEXT(a, len))
				if (a->rta_type == TCA_KIND && !strcmp(RTA_DATA(a), "etf"))
					found = 1;
		}
	}
out:
	close(fd);
	return found;
}

static int hw_timestamps_enable(int fd, const char *ifname, char *why, size_t n)
{
	struct hwtstamp_config hw = { .tx_type = HWTSTAMP_TX_ON, .rx_filter = HWTSTAMP_FILTER_NONE };
	struct hwtstamp_config cur = { 0 };
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	/* The NIC's receive filter is shared with whoever else stamps on it (ptp4l on the same port): keep it.
	 * A driver without SIOCGHWTSTAMP (older ones) leaves it at "none", as before. */
	ifr.ifr_data = (void *)&cur;
	if (ioctl(fd, SIOCGHWTSTAMP, &ifr) == 0) {
		hw.rx_filter = cur.rx_filter;
		if (cur.tx_type == HWTSTAMP_TX_ON)
			return 0;
	}
	ifr.ifr_data = (void *)&hw;
	if (ioctl(fd, SIOCSHWTSTAMP, &ifr) < 0) {
		snprintf(why, n, "SIOCSHWTSTAMP on %s: %s%s", ifname, strerror(errno),
			 errno == EPERM ? " (needs CAP_NET_ADMIN)" : "");
		return -errno;
	}
	return 0;
}

/* Does the kernel take SCM_TS_OPT_ID on AF_PACKET sockets (Linux 6.13+)? Asked with a frame longer than the
 * interface takes: packet_snd() reads the control messages first (an unknown one is EINVAL), then refuses the
 * length (EMSGSIZE) before it builds anything: nothing is sent, no key is used. @fd has SO_TIMESTAMPING with
 * OPT_ID (without it the kernel refuses the message too). 1 yes, 0 no, -errno not known (-ENETDOWN, -ENXIO:
 * the interface is down or gone, which packet_snd() checks first). */
static int probe_ts_opt_id(int fd, char *frame, size_t len)
{
	union {
		char buf[CMSG_SPACE(sizeof(uint32_t))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = frame, .iov_len = len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
			    .msg_controllen = sizeof(ctl.buf) };
	struct cmsghdr *cm;
	uint32_t key = 0;

	memset(&ctl, 0, sizeof(ctl));
	cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_TS_OPT_ID;
	cm->cmsg_len = CMSG_LEN(sizeof(key));
	memcpy(CMSG_DATA(cm), &key, sizeof(key));
	if (sendmsg(fd, &m, MSG_DONTWAIT) >= 0 || errno == EMSGSIZE)
		return 1;
	return errno == EINVAL ? 0 : -errno;
}

static void keys_set(struct tx_packet *p, int keys, const char *how)
{
	p->keys = keys;
	snprintf(p->base.ts_detail, sizeof(p->base.ts_detail), "%.160s; keys %s", p->ts_base, how);
	if (keys != KEYS_UNKNOWN) {
		free(p->probe);
		p->probe = NULL;
	}
}

/* Settles how stamps name their frames, asking the kernel through @fd (a queue's socket, timestamps on).
 * Returns 0, or -EOPNOTSUPP when af_packet.ts_key: cmsg and the kernel refuses SCM_TS_OPT_ID (logged). */
static int keys_decide(struct tx_packet *p, int fd)
{
	int r;

	if (p->ts_key_cfg == SVPUB_TS_KEY_COUNTED) {
		keys_set(p, KEYS_COUNTED, "counted (af_packet.ts_key: counted)");
		return 0;
	}
	if (!p->probe) {
		p->probe_len = (size_t)(p->base.mtu ? p->base.mtu : 65535) + 256; /* over MTU + link header + tag */
		p->probe = calloc(1, p->probe_len);
		if (!p->probe)
			return -ENOMEM;
	}
	r = probe_ts_opt_id(fd, p->probe, p->probe_len);
	if (r == 1) {
		keys_set(p, KEYS_CMSG, "per frame (SCM_TS_OPT_ID)");
	} else if (r == 0 && p->ts_key_cfg == SVPUB_TS_KEY_CMSG) {
		sv_err("af_packet.ts_key: cmsg: this kernel refuses SCM_TS_OPT_ID on AF_PACKET sockets (Linux 6.13 and "
		       "later take it); use auto or counted");
		return -EOPNOTSUPP;
	} else if (r == 0) {
		keys_set(p, KEYS_COUNTED, "counted (no SCM_TS_OPT_ID: Linux before 6.13)");
	} else if (p->ts_key_cfg == SVPUB_TS_KEY_CMSG) {
		keys_set(p, KEYS_CMSG, "per frame (SCM_TS_OPT_ID, af_packet.ts_key: cmsg)");
	} else {
		/* Down or gone: frames are refused before they are numbered, so counting is right until the kernel
		 * can be asked (from the send path, every PROBE_AGAIN_NS while it cannot). */
		keys_set(p, KEYS_UNKNOWN, "not known yet (SCM_TS_OPT_ID is asked about when the interface is up)");
		p->probe_next_ns = sv_clock_gettime_ns(CLOCK_MONOTONIC) + PROBE_AGAIN_NS;
	}
	return 0;
}

/* Control messages of every frame of @q: SCM_TXTIME (launch time) and SCM_TS_OPT_ID (key), as in use. */
static void layout(const struct tx_packet *p, struct pq *q)
{
	unsigned len = 0;

	q->txtime_at = q->key_at = 0;
	if (p->base.launch_time) {
		q->txtime_at = len;
		len += CMSG_SPACE(sizeof(uint64_t));
	}
	if (p->keys == KEYS_CMSG) {
		q->key_at = len;
		len += CMSG_SPACE(sizeof(uint32_t));
	}
	for (unsigned i = 0; i < MAX_BATCH; i++) {
		struct msghdr *m = &q->msg[i].msg_hdr;
		struct cmsghdr *cm;

		memset(q->ctl[i].buf, 0, sizeof(q->ctl[i].buf));
		m->msg_control = len ? q->ctl[i].buf : NULL;
		m->msg_controllen = len;
		if (p->base.launch_time) {
			cm = (struct cmsghdr *)(void *)(q->ctl[i].buf + q->txtime_at);
			cm->cmsg_level = SOL_SOCKET;
			cm->cmsg_type = SCM_TXTIME;
			cm->cmsg_len = CMSG_LEN(sizeof(uint64_t));
		}
		if (p->keys == KEYS_CMSG) {
			cm = (struct cmsghdr *)(void *)(q->ctl[i].buf + q->key_at);
			cm->cmsg_level = SOL_SOCKET;
			cm->cmsg_type = SCM_TS_OPT_ID;
			cm->cmsg_len = CMSG_LEN(sizeof(uint32_t));
		}
	}
}

static int packet_add_queue(struct svpub_tx *tx, uint32_t so_priority)
{
	struct tx_packet *p = (struct tx_packet *)tx;
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_ifindex = tx->ifindex };
	struct pq *q;
	int one = 1, err;

	for (unsigned i = 0; i < p->nq; i++)
		if (p->q[i].prio == so_priority)
			return (int)i;
	if (p->nq >= MAX_QUEUES) {
		sv_err("more than %d distinct so_priority values", MAX_QUEUES);
		return -E2BIG;
	}
	q = &p->q[p->nq];
	memset(q, 0, sizeof(*q));
	q->prio = so_priority;
	/* Protocol 0: this socket only sends; nothing is queued for reception. */
	q->fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (q->fd < 0) {
		err = -errno;
		svpub_log_errno("socket(AF_PACKET)", err, "CAP_NET_RAW");
		return err;
	}
	if (bind(q->fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
		err = -errno;
		sv_err("bind AF_PACKET to %s: %s", p->ifname, strerror(errno));
		goto out_close;
	}
	if (p->cfg->af_packet.qdisc_bypass && !tx->launch_time &&
	    setsockopt(q->fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one)) < 0)
		sv_warn("PACKET_QDISC_BYPASS: %s (frames go through the qdisc)", strerror(errno));
	if (so_priority && setsockopt(q->fd, SOL_SOCKET, SO_PRIORITY, &so_priority, sizeof(so_priority)) < 0) {
		err = -errno;
		svpub_log_errno("SO_PRIORITY above 6", err, "CAP_NET_ADMIN");
		goto out_close;
	}
	if (p->cfg->af_packet.sndbuf) {
		int sb = (int)p->cfg->af_packet.sndbuf;

		if (setsockopt(q->fd, SOL_SOCKET, SO_SNDBUFFORCE, &sb, sizeof(sb)) < 0)
			setsockopt(q->fd, SOL_SOCKET, SO_SNDBUF, &sb, sizeof(sb));
	}
	if (tx->launch_time) {
		struct sock_txtime st = { .clockid = tx->cid, .flags = SOF_TXTIME_REPORT_ERRORS };

		if (setsockopt(q->fd, SOL_SOCKET, SO_TXTIME, &st, sizeof(st)) < 0) {
			sv_warn("SO_TXTIME: %s: launch time off", strerror(errno));
			tx->launch_time = false;
		}
	}
	if (p->timestamps) {
		unsigned flags = SOF_TIMESTAMPING_TX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE | SOF_TIMESTAMPING_OPT_ID |
				 SOF_TIMESTAMPING_OPT_TSONLY;

		if (p->hw)
			flags |= SOF_TIMESTAMPING_TX_HARDWARE | SOF_TIMESTAMPING_RAW_HARDWARE;
		if (setsockopt(q->fd, SOL_SOCKET, SO_TIMESTAMPING, &flags, sizeof(flags)) < 0) {
			int e = errno;

			sv_warn("SO_TIMESTAMPING: %s: no transmit timestamps", strerror(e));
			p->timestamps = false;
			p->keys = KEYS_COUNTED; /* no keys at all: no SCM_TS_OPT_ID either */
			tx->ts_source = SV_TS_NONE;
			snprintf(tx->ts_detail, sizeof(tx->ts_detail), "none (SO_TIMESTAMPING: %s)", strerror(e));
		}
	}
	q->cookie = malloc(KEY_RING * sizeof(*q->cookie));
	if (!q->cookie) {
		err = -ENOMEM;
		goto out_close;
	}
	for (unsigned i = 0; i < KEY_RING; i++)
		q->cookie[i] = NO_COOKIE;
	for (unsigned i = 0; i < MAX_BATCH; i++) {
		q->msg[i].msg_hdr.msg_iov = &q->iov[i];
		q->msg[i].msg_hdr.msg_iovlen = 1;
	}
	if (p->timestamps && p->keys == KEYS_UNKNOWN) {
		err = keys_decide(p, q->fd);
		if (err)
			goto out_free;
	}
	/* A queue may have switched launch time off for all: every queue's messages are laid out again. */
	for (unsigned i = 0; i <= p->nq; i++)
		layout(p, &p->q[i]);
	return (int)p->nq++;
out_free:
	free(q->cookie);
out_close:
	close(q->fd);
	return err;
}

/* The data of the control message whose header is @at octets into @m's control buffer (see layout()). */
static void *ctl_data(struct msghdr *m, unsigned at)
{
	return CMSG_DATA((struct cmsghdr *)(void *)((char *)m->msg_control + at));
}

/* Counted keys: the next key goes to @cookie (NO_COOKIE: a frame the kernel numbered and refused). */
static void key_use(struct pq *q, uint64_t cookie)
{
	q->cookie[q->next_key % KEY_RING] = cookie;
	q->next_key++;
}

/* Counted keys: a frame was refused with @err. Numbered, i.e. dropped at transmit, only with ENOBUFS (see the
 * top of the file). A frame sendmmsg stopped at without saying why (q->silent) was then tried twice: the
 * unseen failure is taken to be this one. */
static void key_refused(struct pq *q, int err)
{
	unsigned used = err == ENOBUFS ? 1 : 0;

	if (q->silent) {
		used *= 2;
		q->silent = false;
	}
	while (used--)
		key_use(q, NO_COOKIE);
}

static int packet_send(struct svpub_tx *tx, unsigned queue, struct svpub_txf *f, unsigned n)
{
	struct tx_packet *p = (struct tx_packet *)tx;
	struct pq *q = &p->q[queue];
	unsigned done = 0;
	uint32_t base;
	int sent = 0;
	bool cmsg;

	if (n > MAX_BATCH)
		n = MAX_BATCH;
	if (p->keys == KEYS_UNKNOWN && sv_clock_gettime_ns(CLOCK_MONOTONIC) >= p->probe_next_ns &&
	    !keys_decide(p, q->fd) && p->keys != KEYS_UNKNOWN) {
		sv_info("TX timestamps on %s: keys %s", p->ifname, p->keys == KEYS_CMSG ? "per frame (SCM_TS_OPT_ID)"
											  : "counted");
		for (unsigned i = 0; i < p->nq; i++)
			layout(p, &p->q[i]);
	}
	cmsg = p->keys == KEYS_CMSG;
	base = q->next_key;
	for (unsigned i = 0; i < n; i++) {
		struct msghdr *m = &q->msg[i].msg_hdr;

		q->iov[i].iov_base = (void *)f[i].data;
		q->iov[i].iov_len = f[i].len;
		f[i].err = 0;
		if (tx->launch_time) {
			uint64_t t = (uint64_t)f[i].t_sched_ns;

			memcpy(ctl_data(m, q->txtime_at), &t, sizeof(t));
		}
		if (cmsg) {
			uint32_t key = base + i;

			memcpy(ctl_data(m, q->key_at), &key, sizeof(key));
			q->cookie[key % KEY_RING] = f[i].cookie;
		}
	}
	while (done < n) {
		int r = sendmmsg(q->fd, q->msg + done, n - done, 0);

		if (r < 0) {
			int e = errno;

			if (e == EINTR)
				continue;
			/* Frame `done` was refused: count it and go on with the rest. */
			f[done].err = -e;
			if (svpub_errno_is_outage(e))
				tx->outage++;
			else
				tx->tx_errors++;
			if (cmsg)
				q->cookie[(base + done) % KEY_RING] = NO_COOKIE;
			else
				key_refused(q, e);
			done++;
			continue;
		}
		for (int i = 0; i < r; i++, done++) {
			if (cmsg)
				continue;
			if (q->silent) { /* its unseen failure was a drop at transmit (a numbered frame) */
				key_use(q, NO_COOKIE);
				q->silent = false;
			}
			key_use(q, f[done].cookie);
		}
		sent += r;
		/* sendmmsg does not say why it stopped before frame `done`: the next call tries it again and tells. */
		if (done < n && !cmsg)
			q->silent = true;
	}
	if (cmsg)
		q->next_key = base + n;
	return sent;
}

static int packet_poll(struct svpub_tx *tx, svpub_tx_ts_fn fn, void *ctx)
{
	struct tx_packet *p = (struct tx_packet *)tx;
	int total = 0;

	if (!p->timestamps)
		return 0;
	for (unsigned qi = 0; qi < p->nq; qi++) {
		struct pq *q = &p->q[qi];

		for (;;) {
			int r;

			for (unsigned i = 0; i < POLL_BATCH; i++) {
				p->eiov[i].iov_base = p->ebuf[i];
				p->eiov[i].iov_len = sizeof(p->ebuf[i]);
				memset(&p->emsg[i].msg_hdr, 0, sizeof(p->emsg[i].msg_hdr));
				p->emsg[i].msg_hdr.msg_iov = &p->eiov[i];
				p->emsg[i].msg_hdr.msg_iovlen = 1;
				p->emsg[i].msg_hdr.msg_control = p->ectl[i];
				p->emsg[i].msg_hdr.msg_controllen = CTRL_LEN;
			}
			r = recvmmsg(q->fd, p->emsg, POLL_BATCH, MSG_ERRQUEUE | MSG_DONTWAIT, NULL);
			if (r < 0) {
				if (errno == EINTR)
					continue;
				break; /* EAGAIN: nothing more */
			}
			for (int i = 0; i < r; i++) {
				struct msghdr *m = &p->emsg[i].msg_hdr;
				struct scm_timestamping *tss = NULL;
				struct sock_extended_err *ee = NULL;
				uint64_t cookie;
				uint32_t key;

				for (struct cmsghdr *cm = CMSG_FIRSTHDR(m); cm; cm = CMSG_NXTHDR(m, cm)) {
					if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_TIMESTAMPING)
						tss = (struct scm_timestamping *)CMSG_DATA(cm);
					else if (cm->cmsg_level == SOL_PACKET && cm->cmsg_type == PACKET_TX_TIMESTAMP)
						ee = (struct sock_extended_err *)CMSG_DATA(cm);
				}
				if (!tss || !ee || ee->ee_origin != SO_EE_ORIGIN_TIMESTAMPING)
					continue;
				key = ee->ee_data;
				/* The key must be one of the last KEY_RING frames sent. */
				if (q->next_key - key - 1 >= KEY_RING) {
					/* Counted keys behind the kernel's (a frame numbered and refused with an
					 * errno other than ENOBUFS): the count moves up to it. */
					if (p->keys != KEYS_CMSG && key - q->next_key < KEY_RING) {
						while (q->next_key != key + 1)
							key_use(q, NO_COOKIE);
						tx->ts_resync++;
					}
					tx->ts_unmatched++;
					continue;
				}
				cookie = q->cookie[key % KEY_RING];
				if (cookie == NO_COOKIE) { /* a frame the kernel stamped and then refused */
					tx->ts_unmatched++;
					continue;
				}
				if (tss->ts[2].tv_sec || tss->ts[2].tv_nsec)
					fn(ctx, cookie, sv_timespec_to_ns(&tss->ts[2]), SV_TS_HARDWARE);
				else
					fn(ctx, cookie, sv_timespec_to_ns(&tss->ts[0]) + p->realtime_to_clock_ns,
					   SV_TS_SOFTWARE);
				tx->ts_received++;
				total++;
			}
			if (r < POLL_BATCH)
				break;
		}
	}
	return total;
}

static int packet_close(struct svpub_tx *tx)
{
	struct tx_packet *p = (struct tx_packet *)tx;

	for (unsigned i = 0; i < p->nq; i++) {
		close(p->q[i].fd);
		free(p->q[i].cookie);
	}
	free(p->probe);
	free(p);
	return 0;
}

static const struct svpub_tx_ops packet_ops = {
	.name = "af_packet",
	.add_queue = packet_add_queue,
	.send = packet_send,
	.poll = packet_poll,
	.close = packet_close,
};

int svpub_tx_packet_open(struct svpub_tx **txp, const struct svpub_config *c, enum sv_clock_id clock)
{
	struct tx_packet *p = calloc(1, sizeof(*p));
	struct svpub_tx *tx;
	struct ifreq ifr;
	int fd, err;

	if (!p)
		return -ENOMEM;
	tx = &p->base;
	tx->ops = &packet_ops;
	tx->clock = clock;
	sv_clock_posix_id(clock, &tx->cid);
	p->cfg = c;
	snprintf(p->ifname, sizeof(p->ifname), "%s", c->interface);
	tx->ifindex = (int)if_nametoindex(c->interface);
	if (!tx->ifindex) {
		err = -ENODEV;
		sv_err("interface %s: %s", c->interface, strerror(errno));
		goto out_free;
	}
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = -errno;
		svpub_log_errno("socket(AF_PACKET)", err, "CAP_NET_RAW");
		goto out_free;
	}
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", c->interface);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) == 0)
		memcpy(tx->if_mac, ifr.ifr_hwaddr.sa_data, 6);
	if (ioctl(fd, SIOCGIFMTU, &ifr) == 0 && ifr.ifr_mtu > 0)
		tx->mtu = (uint32_t)ifr.ifr_mtu;
	svpub_tx_check_down(tx, fd, c->interface);

	p->timestamps = c->af_packet.timestamps;
	if (p->timestamps) {
		char why[128] = "hw_timestamps: false";
		struct sv_clock_xlate x;

		if (c->af_packet.hw_timestamps && !hw_timestamps_enable(fd, c->interface, why, sizeof(why))) {
			p->hw = true;
			tx->ts_source = SV_TS_HARDWARE;
			snprintf(tx->ts_detail, sizeof(tx->ts_detail), "hardware (SIOCSHWTSTAMP on %s)", c->interface);
		} else {
			tx->ts_source = SV_TS_SOFTWARE;
			snprintf(tx->ts_detail, sizeof(tx->ts_detail), "software (no hardware stamps: %s)", why);
		}
		/* Software stamps are CLOCK_REALTIME; the deadlines are on the configured clock. */
		if (!sv_clock_xlate_measure(&x, CLOCK_REALTIME, tx->cid, 16))
			p->realtime_to_clock_ns = x.offset_ns;
	} else {
		tx->ts_source = SV_TS_NONE;
		snprintf(tx->ts_detail, sizeof(tx->ts_detail), "none (af_packet.timestamps: false)");
	}
	close(fd);
	/* Keys are settled with the first queue's socket (packet_add_queue), whose timestamps are on. */
	p->ts_key_cfg = c->af_packet.ts_key;
	p->keys = p->timestamps ? KEYS_UNKNOWN : KEYS_COUNTED;
	snprintf(p->ts_base, sizeof(p->ts_base), "%s", tx->ts_detail);

	if (c->af_packet.txtime) {
		int etf = etf_present(tx->ifindex);

		if (etf == 1) {
			tx->launch_time = true;
			if (c->af_packet.qdisc_bypass)
				sv_info("txtime: PACKET_QDISC_BYPASS off so that frames reach the etf qdisc");
		} else {
			sv_warn("txtime: no etf qdisc on %s (%s): launch time off, frames leave when handed over. "
				"Needs e.g. 'tc qdisc replace dev %s parent root etf clockid CLOCK_TAI delta 200000' "
				"(kernel CONFIG_NET_SCH_ETF; hardware offload needs a NIC with launch time)",
				c->interface, etf < 0 ? strerror(-etf) : "not installed", c->interface);
		}
	}
	*txp = tx;
	return 0;
out_free:
	free(p);
	return err;
}

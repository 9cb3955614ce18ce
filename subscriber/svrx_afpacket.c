// SPDX-License-Identifier: Apache-2.0
/*
 * AF_PACKET back-end: a TPACKET_V2 ring (see docs/decisions.md for why not V3 or recvmmsg) behind a classic
 * BPF filter that keeps only SV frames, so the kernel copies nothing else into the ring.
 *
 * ETH_P_ALL, not ETH_P_8021Q/0x88BA: the ETH_P_ALL taps run after the kernel moved an in-band 802.1Q tag out
 * of band (skb_vlan_untag) but before a tag with a VID nobody listens to is cleared, so every tag - whether
 * a NIC offload, a bridge or the wire put it there - reaches us as tp_vlan_tci + TP_STATUS_VLAN_VALID.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/net_tstamp.h>
#include <arpa/inet.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "sv_log.h"
#include "sv_wire.h"
#include "svrx_private.h"

#define AFP_FRAME_SIZE 2048u
#define AFP_BLOCK_SIZE (1u << 16)
#define AFP_RING_DEFAULT (4u << 20)

struct afp {
	int fd;
	uint8_t *ring;
	size_t ring_len;
	uint32_t frame_nr;
	uint32_t cur;	   /* next slot to look at */
	uint32_t held;	   /* slots handed out by the last poll, starting at held_start */
	uint32_t held_start;
	uint64_t tp_packets;
	uint64_t tp_drops;
	int64_t tai_off_ns;  /* CLOCK_TAI - CLOCK_REALTIME (whole seconds, the kernel's TAI offset) */
};

/*
 * cBPF: sv_wire.h's rule in classic BPF (the one form of it the kernel runs for a socket: it cannot share
 * sv_parse.h's walk): the SV EtherType at offset 12, behind an outer 802.1Q/802.1ad tag (16) and an inner
 * 802.1Q one (20), each possibly followed by an HSR tag (18, 22, 26). Tags that the driver or skb_vlan_untag
 * moved out of band are not in the bytes the filter sees, so "untagged" covers them. With an allow-list, the
 * APPID (2 octets after the EtherType) must be one of the list, in a whole SV header (as sv_xdp wants). A load past the frame's end drops it, as
 * sv_parse_l2 calls such a frame short; a frame cut inside the SV header is accepted without an allow-list
 * (the decoder names it: header_truncated). tests/net/wire_verdicts.c runs it beside the walk.
 */
enum afp_label { L_TAG1, L_TAG2, L_HSR12, L_HSR16, L_HSR20, L_SV12, L_SV16, L_SV20, L_SV18, L_SV22, L_SV26,
		 L_CHECK, L_DROP, L_ACCEPT, L__COUNT, L_NONE = L__COUNT };

struct afp_asm {
	struct sock_filter *f;
	unsigned n, cap;
	uint8_t jt[SVRX_MAX_APPIDS + 48], jf[SVRX_MAX_APPIDS + 48];	/* label of each jump, L_NONE */
	unsigned at[L__COUNT];						/* where each label is */
};

static void afp_emit(struct afp_asm *a, uint16_t code, uint32_t k, unsigned jt, unsigned jf)
{
	if (a->n < a->cap && a->n < sizeof(a->jt)) {
		a->f[a->n] = (struct sock_filter){ code, 0, 0, k };
		a->jt[a->n] = (uint8_t)jt;
		a->jf[a->n] = (uint8_t)jf;
	}
	a->n++;
}

static void afp_label(struct afp_asm *a, enum afp_label l)
{
	a->at[l] = a->n;
}

/* The EtherType at @off: SV (to @sv), and, when @tag, an inner 802.1Q tag (to @tag), and, when @hsr, an HSR
 * tag (to @hsr); anything else drops. */
static void afp_ethertype(struct afp_asm *a, uint32_t off, unsigned sv, unsigned tag, bool outer, unsigned hsr)
{
	afp_emit(a, BPF_LD | BPF_H | BPF_ABS, off, L_NONE, L_NONE);
	afp_emit(a, BPF_JMP | BPF_JEQ | BPF_K, SV_ETH_P_SV, sv, L_NONE);
	if (tag != L_NONE) {
		afp_emit(a, BPF_JMP | BPF_JEQ | BPF_K, SV_ETH_P_8021Q, tag, L_NONE);
		if (outer)
			afp_emit(a, BPF_JMP | BPF_JEQ | BPF_K, SV_ETH_P_8021AD, tag, L_NONE);
	}
	if (hsr != L_NONE)
		afp_emit(a, BPF_JMP | BPF_JEQ | BPF_K, SV_ETH_P_HSR, hsr, L_DROP);
	else
		afp_emit(a, BPF_JMP | BPF_JA, 0, L_DROP, L_NONE);
}

int svrx_afp_filter(const uint16_t *appids, unsigned na, struct sock_filter *f, unsigned cap)
{
	static const struct { unsigned label; uint32_t et; } sv[] = {
		{ L_SV12, 12 }, { L_SV16, 16 }, { L_SV20, 20 }, { L_SV18, 18 }, { L_SV22, 22 }, { L_SV26, 26 },
	};
	struct afp_asm a = { .f = f, .cap = cap };
	const uint32_t t = SV_VLAN_TAG_LEN, h = SV_HSR_TAG_LEN;

	afp_ethertype(&a, 12, L_SV12, L_TAG1, true, L_HSR12);
	afp_label(&a, L_TAG1);
	afp_ethertype(&a, 12 + t, L_SV16, L_TAG2, false, L_HSR16);
	afp_label(&a, L_TAG2);
	afp_ethertype(&a, 12 + 2 * t, L_SV20, L_NONE, false, L_HSR20);
	afp_label(&a, L_HSR12);
	afp_ethertype(&a, 12 + h, L_SV18, L_NONE, false, L_NONE);
	afp_label(&a, L_HSR16);
	afp_ethertype(&a, 12 + t + h, L_SV22, L_NONE, false, L_NONE);
	afp_label(&a, L_HSR20);
	afp_ethertype(&a, 12 + 2 * t + h, L_SV26, L_NONE, false, L_NONE);
	/* X = the APPID's offset, the SV EtherType's + 2 */
	for (unsigned i = 0; i < sizeof(sv) / sizeof(sv[0]); i++) {
		afp_label(&a, sv[i].label);
		afp_emit(&a, BPF_LDX | BPF_W | BPF_IMM, sv[i].et + 2, L_NONE, L_NONE);
		afp_emit(&a, BPF_JMP | BPF_JA, 0, L_CHECK, L_NONE);
	}
	afp_label(&a, L_CHECK);
	if (na) {
		/* a whole SV header first, as sv_xdp wants with an allow-list (a load past the end drops) */
		afp_emit(&a, BPF_LD | BPF_B | BPF_IND, SV_HEADER_LEN - 1, L_NONE, L_NONE);
		afp_emit(&a, BPF_LD | BPF_H | BPF_IND, 0, L_NONE, L_NONE);	/* A = APPID, at X */
		for (unsigned i = 0; i < na; i++)
			afp_emit(&a, BPF_JMP | BPF_JEQ | BPF_K, appids[i], L_ACCEPT, L_NONE);
	}
	afp_emit(&a, BPF_JMP | BPF_JA, 0, na ? L_DROP : L_ACCEPT, L_NONE);
	afp_label(&a, L_DROP);
	afp_emit(&a, BPF_RET | BPF_K, 0, L_NONE, L_NONE);
	afp_label(&a, L_ACCEPT);
	afp_emit(&a, BPF_RET | BPF_K, 0x40000, L_NONE, L_NONE);
	if (a.n > cap || a.n > sizeof(a.jt))
		return -ENOSPC;
	/* Labels into offsets: forward only; a conditional jump's reach is 255 (a JA's, 32 bits). */
	for (unsigned i = 0; i < a.n; i++) {
		bool ja = f[i].code == (BPF_JMP | BPF_JA);

		for (unsigned k = 0; k < 2; k++) {
			unsigned l = k ? a.jf[i] : a.jt[i];
			unsigned d;

			if (l == L_NONE)
				continue;
			if (a.at[l] <= i)
				return -EINVAL;
			d = a.at[l] - i - 1;
			if (ja)
				f[i].k = d;
			else if (d > 255)
				return -E2BIG;
			else if (k)
				f[i].jf = (uint8_t)d;
			else
				f[i].jt = (uint8_t)d;
		}
	}
	return (int)a.n;
}

static int afp_open(struct svrx *rx)
{
	struct sock_filter insns[SVRX_MAX_APPIDS + 48];
	struct sock_fprog prog;
	struct tpacket_req req;
	struct sockaddr_ll sll;
	struct afp *p;
	int one = 1, ver = TPACKET_V2, ts, n, err;

	if (rx->cfg.n_appids > 200) {
		sv_err("af_packet: at most 200 APPIDs in the socket filter (cBPF jump range)");
		return -EINVAL;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	rx->priv = p;
	/* Protocol 0: receive nothing until the filter and the ring are in place, then bind ETH_P_ALL. */
	p->fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (p->fd < 0) {
		err = svrx_log_perm(-errno, "af_packet: socket(AF_PACKET)", "CAP_NET_RAW");
		goto out_free;
	}
	n = svrx_afp_filter(rx->cfg.appids, rx->cfg.n_appids, insns, sizeof(insns) / sizeof(insns[0]));
	if (n < 0) {
		err = n;
		goto out_close;
	}
	prog.len = (unsigned short)n;
	prog.filter = insns;
	if (setsockopt(p->fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog))) {
		err = -errno;
		sv_err("af_packet: attaching the SV socket filter: %s", strerror(errno));
		goto out_close;
	}
	/* Frames this host sends (svpub on the same interface) are not received frames. */
	if (setsockopt(p->fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one)))
		sv_warn("af_packet: PACKET_IGNORE_OUTGOING: %s (own transmissions will be seen)", strerror(errno));
	/* Stamp in netif_receive_skb (as early as software can) rather than when the tap runs. */
	ts = SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE;
	if (setsockopt(p->fd, SOL_SOCKET, SO_TIMESTAMPING, &ts, sizeof(ts)))
		sv_warn("af_packet: SO_TIMESTAMPING: %s (timestamps taken later, at the tap)", strerror(errno));
	if (setsockopt(p->fd, SOL_PACKET, PACKET_VERSION, &ver, sizeof(ver))) {
		err = -errno;
		sv_err("af_packet: TPACKET_V2: %s", strerror(errno));
		goto out_close;
	}
	memset(&req, 0, sizeof(req));
	req.tp_block_size = AFP_BLOCK_SIZE;
	req.tp_frame_size = AFP_FRAME_SIZE;
	req.tp_block_nr = (rx->cfg.ring_bytes ? rx->cfg.ring_bytes : AFP_RING_DEFAULT) / AFP_BLOCK_SIZE;
	if (!req.tp_block_nr)
		req.tp_block_nr = 1;
	req.tp_frame_nr = req.tp_block_nr * (AFP_BLOCK_SIZE / AFP_FRAME_SIZE);
	if (setsockopt(p->fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req))) {
		err = -errno;
		sv_err("af_packet: PACKET_RX_RING (%u frames): %s", req.tp_frame_nr, strerror(errno));
		goto out_close;
	}
	p->frame_nr = req.tp_frame_nr;
	p->ring_len = (size_t)req.tp_block_nr * req.tp_block_size;
	p->ring = mmap(NULL, p->ring_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, p->fd, 0);
	if (p->ring == MAP_FAILED) {
		err = -errno;
		p->ring = NULL;
		sv_err("af_packet: mmap of the ring: %s", strerror(errno));
		goto out_close;
	}
	err = svrx_join_multicast(rx, p->fd);
	if (err)
		goto out_unmap;
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = rx->ifindex;
	if (bind(p->fd, (struct sockaddr *)&sll, sizeof(sll))) {
		err = svrx_log_perm(-errno, "af_packet: bind", "CAP_NET_RAW");
		goto out_unmap;
	}
	{
		/* Ring stamps are on CLOCK_REALTIME; smpSynch=2 sample times are on TAI. The kernel's offset is
		 * whole seconds (0 when never set: then TAI == REALTIME, which the caller's sync check reports). */
		struct timespec r, t;

		clock_gettime(CLOCK_REALTIME, &r);
		clock_gettime(CLOCK_TAI, &t);
		p->tai_off_ns = (((int64_t)t.tv_sec - r.tv_sec) * 1000000000LL + (t.tv_nsec - r.tv_nsec) +
				 500000000LL) / 1000000000LL * 1000000000LL;
	}
	rx->info.bind_mode = "tpacket_v2";
	rx->info.ts_source = "kernel_sw";
	rx->info.vlan_oob = "auxdata";
	rx->info.busy_poll_us = rx->cfg.busy_poll_us;
	rx->info.queues = 1;
	return 0;

out_unmap:
	munmap(p->ring, p->ring_len);
out_close:
	close(p->fd);
out_free:
	free(p);
	rx->priv = NULL;
	return err;
}

static inline struct tpacket2_hdr *afp_slot(struct afp *p, uint32_t i)
{
	return (struct tpacket2_hdr *)(p->ring + (size_t)i * AFP_FRAME_SIZE);
}

static void afp_release(struct svrx *rx)
{
	struct afp *p = rx->priv;
	uint32_t i, s = p->held_start;

	for (i = 0; i < p->held; i++) {
		__atomic_store_n(&afp_slot(p, s)->tp_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
		if (++s == p->frame_nr)
			s = 0;
	}
	p->held = 0;
}

static int afp_poll(struct svrx *rx, struct svrx_frame *frames, unsigned max, int timeout_ms)
{
	struct afp *p = rx->priv;
	struct pollfd pfd = { .fd = p->fd, .events = POLLIN };
	struct timespec start;
	unsigned n = 0;

	afp_release(rx);
	if (rx->cfg.busy_poll_us && timeout_ms != 0)
		clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		struct tpacket2_hdr *h = afp_slot(p, p->cur);
		uint32_t status = __atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE);

		if (status & TP_STATUS_USER)
			break;
		if (rx->cfg.busy_poll_us && timeout_ms != 0) {
			struct timespec now;

			/* Spin on the ring (no busy-poll support in AF_PACKET); sleep in poll() only after the
			 * caller's timeout expired the first time round. */
			clock_gettime(CLOCK_MONOTONIC, &now);
			if (timeout_ms < 0 || (now.tv_sec - start.tv_sec) * 1000 +
						      (now.tv_nsec - start.tv_nsec) / 1000000 < timeout_ms)
				continue;
			return 0;
		}
		int r = poll(&pfd, 1, timeout_ms);

		if (r < 0)
			return -errno;
		if (r == 0)
			return 0;
		if (pfd.revents & POLLERR) {
			int soerr = 0;
			socklen_t sl = sizeof(soerr);

			getsockopt(p->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
			return soerr ? -soerr : -EIO;
		}
		status = __atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE);
		if (!(status & TP_STATUS_USER))
			return 0; /* woken for another reason; the caller polls again */
		break;
	}
	p->held_start = p->cur;
	while (n < max) {
		struct tpacket2_hdr *h = afp_slot(p, p->cur);
		uint32_t status = __atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE);
		struct svrx_frame *f = &frames[n];

		if (!(status & TP_STATUS_USER))
			break;
		f->data = (const uint8_t *)h + h->tp_mac;
		f->len = h->tp_snaplen;
		f->queue = 0;
		f->rx_ns = (int64_t)h->tp_sec * 1000000000LL + h->tp_nsec;
		if (status & TP_STATUS_TS_RAW_HARDWARE) {
			f->ts_clock = SV_CLOCK_PHC;
			f->ts_source = SVRX_TS_HARDWARE;
		} else {
			f->rx_ns += p->tai_off_ns;
			f->ts_clock = SV_CLOCK_TAI;
			f->ts_source = SVRX_TS_KERNEL_SW;
		}
		if (status & TP_STATUS_VLAN_VALID) {
			svrx_frame_set_tci(f, h->tp_vlan_tci);
		} else {
			f->vlan_state = SVRX_VLAN_NONE;
			f->vlan_pcp = 0;
			f->vlan_dei = 0;
			f->vlan_id = 0;
		}
		n++;
		if (++p->cur == p->frame_nr)
			p->cur = 0;
	}
	p->held = n;
	return (int)n;
}

static int afp_pollfds(struct svrx *rx, struct pollfd *pfd, unsigned max)
{
	struct afp *p = rx->priv;

	if (rx->cfg.busy_poll_us)
		return -1;
	if (!max)
		return 0;
	pfd->fd = p->fd;
	pfd->events = POLLIN;
	pfd->revents = 0;
	return 1;
}

static int afp_stats(struct svrx *rx, struct svrx_stats *st)
{
	struct afp *p = rx->priv;
	struct tpacket_stats ts;
	socklen_t len = sizeof(ts);

	/* PACKET_STATISTICS resets on read: accumulate. */
	if (getsockopt(p->fd, SOL_PACKET, PACKET_STATISTICS, &ts, &len))
		return -errno;
	p->tp_packets += ts.tp_packets;
	p->tp_drops += ts.tp_drops;
	st->filter_accepted = p->tp_packets;
	st->kernel_drops = p->tp_drops;
	st->ring_full = p->tp_drops;
	return 0;
}

static void afp_close(struct svrx *rx)
{
	struct afp *p = rx->priv;

	if (!p)
		return;
	munmap(p->ring, p->ring_len);
	close(p->fd);
	free(p);
	rx->priv = NULL;
}

const struct svrx_ops svrx_afpacket_ops = {
	.name = "af_packet",
	.open = afp_open,
	.poll = afp_poll,
	.release = afp_release,
	.pollfds = afp_pollfds,
	.stats = afp_stats,
	.close = afp_close,
};

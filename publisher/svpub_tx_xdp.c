// SPDX-License-Identifier: Apache-2.0
/*
 * AF_XDP back-end through libxdp's xsk API. TX needs no XDP program, so the socket is created with
 * XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD (no dispatcher, no bpffs). Frames are copied into UMEM chunks,
 * put on the TX ring and kicked with one sendto() per batch; completions return the chunks.
 *
 * TX timestamps: Linux 6.8 added XDP TX metadata (a struct in the chunk's headroom, requested per
 * descriptor with XDP_TX_METADATA, the stamp written back at completion). Debian 12's headers and
 * libxdp 1.3 predate it, so the definitions are carried here and the kernel is probed at run time by
 * registering a UMEM with XDP_UMEM_TX_METADATA_LEN on a probe socket.
 */
#include <errno.h>
#include <net/if.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <xdp/xsk.h>

#include "sv_log.h"
#include "svpub_tx.h"

/* ---- Linux 6.8+ UAPI (include/uapi/linux/if_xdp.h), absent from Debian 12's headers ---- */
#ifndef XDP_UMEM_TX_METADATA_LEN
#define XDP_UMEM_TX_METADATA_LEN (1 << 2)
#endif
#ifndef XDP_TX_METADATA
#define XDP_TX_METADATA (1 << 1) /* xdp_desc.options */
#endif
#ifndef XDP_TXMD_FLAGS_TIMESTAMP
#define XDP_TXMD_FLAGS_TIMESTAMP (1 << 0)
#define XDP_TXMD_FLAGS_CHECKSUM (1 << 1)
#endif
struct svpub_xdp_umem_reg {
	uint64_t addr;
	uint64_t len;
	uint32_t chunk_size;
	uint32_t headroom;
	uint32_t flags;
	uint32_t tx_metadata_len;
};
struct svpub_xsk_tx_metadata {
	uint64_t flags;
	union {
		struct {
			uint16_t csum_start;
			uint16_t csum_offset;
			uint64_t launch_time; /* 6.15 */
		} request;
		struct {
			uint64_t tx_timestamp;
		} completion;
	};
};
_Static_assert(sizeof(struct svpub_xdp_umem_reg) == 32, "xdp_umem_reg with tx_metadata_len");
_Static_assert(sizeof(struct svpub_xsk_tx_metadata) == 24, "xsk_tx_metadata");

#define FRAME_SIZE XSK_UMEM__DEFAULT_FRAME_SIZE /* 4096 in libxdp 1.3 */

struct tx_xdp {
	struct svpub_tx base;
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	struct xsk_ring_prod fill;
	struct xsk_ring_cons comp;
	struct xsk_ring_prod txr;
	void *area;
	size_t area_len;
	uint32_t nframes;
	uint64_t *free_addr;
	uint32_t nfree;
	uint64_t kicks_failed;
};

/* 1: the kernel accepts a UMEM with TX metadata; 0: it does not; -errno: could not tell. */
static int probe_tx_metadata(void)
{
	struct svpub_xdp_umem_reg mr = { 0 };
	size_t len = 16 * 4096;
	void *area;
	int fd, ret;

	fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	area = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED) {
		close(fd);
		return -errno;
	}
	mr.addr = (uint64_t)(uintptr_t)area;
	mr.len = len;
	mr.chunk_size = 4096;
	mr.flags = XDP_UMEM_TX_METADATA_LEN;
	mr.tx_metadata_len = sizeof(struct svpub_xsk_tx_metadata);
	ret = setsockopt(fd, SOL_XDP, XDP_UMEM_REG, &mr, sizeof(mr)) == 0 ? 1 : (errno == EINVAL ? 0 : -errno);
	munmap(area, len);
	close(fd);
	return ret;
}

static int xdp_add_queue(struct svpub_tx *tx, uint32_t so_priority)
{
	(void)tx;
	if (so_priority)
		sv_warn("af_xdp: so_priority %u ignored (AF_XDP frames bypass the qdisc and its classes)", so_priority);
	return 0;
}

static void reclaim(struct tx_xdp *x)
{
	uint32_t idx;
	unsigned n = xsk_ring_cons__peek(&x->comp, x->nframes, &idx);

	for (unsigned i = 0; i < n; i++)
		x->free_addr[x->nfree++] = *xsk_ring_cons__comp_addr(&x->comp, idx + i);
	if (n)
		xsk_ring_cons__release(&x->comp, n);
}

static void kick(struct tx_xdp *x)
{
	if (sendto(xsk_socket__fd(x->xsk), NULL, 0, MSG_DONTWAIT, NULL, 0) < 0 && errno != EAGAIN &&
	    errno != EBUSY && errno != ENOBUFS)
		x->kicks_failed++;
}

static int xdp_send(struct svpub_tx *tx, unsigned queue, struct svpub_txf *f, unsigned n)
{
	struct tx_xdp *x = (struct tx_xdp *)tx;
	uint32_t idx;
	unsigned got;

	(void)queue;
	reclaim(x);
	if (x->nfree < n) {
		kick(x);
		reclaim(x);
	}
	got = n < x->nfree ? n : x->nfree;
	got = xsk_ring_prod__reserve(&x->txr, got, &idx);
	for (unsigned i = 0; i < got; i++) {
		struct xdp_desc *d = xsk_ring_prod__tx_desc(&x->txr, idx + i);
		uint64_t addr = x->free_addr[--x->nfree];

		memcpy(xsk_umem__get_data(x->area, addr), f[i].data, f[i].len);
		d->addr = addr;
		d->len = f[i].len;
		d->options = 0;
		f[i].err = 0;
	}
	xsk_ring_prod__submit(&x->txr, got);
	for (unsigned i = got; i < n; i++) {
		f[i].err = -ENOBUFS;
		tx->tx_errors++;
	}
	/* Copy mode transmits in the kick; always kick so the batch leaves now. */
	kick(x);
	return (int)got;
}

static void xdp_close(struct svpub_tx *tx)
{
	struct tx_xdp *x = (struct tx_xdp *)tx;

	if (x->xsk)
		xsk_socket__delete(x->xsk);
	if (x->umem)
		xsk_umem__delete(x->umem);
	if (x->area)
		munmap(x->area, x->area_len);
	free(x->free_addr);
	free(x);
}

static const struct svpub_tx_ops xdp_ops = {
	.name = "af_xdp",
	.add_queue = xdp_add_queue,
	.send = xdp_send,
	.close = xdp_close,
};

int svpub_tx_xdp_open(struct svpub_tx **txp, const struct svpub_config *c, enum sv_clock_id clock)
{
	struct tx_xdp *x = calloc(1, sizeof(*x));
	struct xsk_umem_config ucfg = { 0 };
	struct xsk_socket_config scfg = { 0 };
	uint32_t nframes = 1;
	int err, meta;

	if (!x)
		return -ENOMEM;
	x->base.ops = &xdp_ops;
	x->base.clock = clock;
	sv_clock_posix_id(clock, &x->base.cid);
	x->base.ifindex = (int)if_nametoindex(c->interface);
	if (!x->base.ifindex) {
		err = -ENODEV;
		sv_err("interface %s: %s", c->interface, strerror(errno));
		goto out;
	}
	while (nframes < c->af_xdp.frames)
		nframes <<= 1;
	x->nframes = nframes;
	x->area_len = (size_t)nframes * FRAME_SIZE;
	x->area = mmap(NULL, x->area_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (x->area == MAP_FAILED) {
		x->area = NULL;
		err = -errno;
		goto out;
	}
	x->free_addr = calloc(nframes, sizeof(*x->free_addr));
	if (!x->free_addr) {
		err = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < nframes; i++)
		x->free_addr[x->nfree++] = (uint64_t)i * FRAME_SIZE;
	ucfg.fill_size = XSK_RING_PROD__DEFAULT_NUM_DESCS;
	ucfg.comp_size = nframes;
	ucfg.frame_size = FRAME_SIZE;
	ucfg.frame_headroom = 0;
	err = xsk_umem__create(&x->umem, x->area, x->area_len, &x->fill, &x->comp, &ucfg);
	if (err) {
		if (err == -EPERM || err == -ENOMEM)
			sv_err("af_xdp: UMEM of %zu KiB: %s (needs CAP_IPC_LOCK or RLIMIT_MEMLOCK above it; "
			       "CAP_NET_RAW for the socket)", x->area_len / 1024, strerror(-err));
		else
			sv_err("af_xdp: xsk_umem__create: %s", strerror(-err));
		goto out;
	}
	scfg.rx_size = 0;
	scfg.tx_size = nframes < 4096 ? nframes : 4096;
	scfg.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD;
	scfg.xdp_flags = c->af_xdp.mode == SVPUB_XDP_SKB ? XDP_FLAGS_SKB_MODE
			 : c->af_xdp.mode == SVPUB_XDP_NATIVE ? XDP_FLAGS_DRV_MODE : 0;
	scfg.bind_flags = (uint16_t)(c->af_xdp.zerocopy ? XDP_ZEROCOPY : XDP_COPY);
	err = xsk_socket__create(&x->xsk, c->interface, c->af_xdp.queue, x->umem, NULL, &x->txr, &scfg);
	if (err) {
		if (err == -EPERM)
			svpub_log_errno("af_xdp: socket", err, "CAP_NET_RAW");
		else
			sv_err("af_xdp: xsk_socket__create on %s queue %u (%s): %s%s", c->interface, c->af_xdp.queue,
			       c->af_xdp.zerocopy ? "zero-copy" : "copy", strerror(-err),
			       c->af_xdp.zerocopy ? " (the driver may lack zero-copy: try zerocopy: false)" : "");
		goto out;
	}
	meta = probe_tx_metadata();
	x->base.ts_source = SV_TS_NONE;
	if (meta == 1)
		snprintf(x->base.ts_detail, sizeof(x->base.ts_detail),
			 "none (the kernel has XDP TX metadata, but libxdp 1.3 cannot register a UMEM with "
			 "tx_metadata_len, and copy mode stamps only with NIC hardware stamping)");
	else
		snprintf(x->base.ts_detail, sizeof(x->base.ts_detail),
			 "none (kernel without XDP TX metadata: Linux 6.8+ needed%s%s)", meta < 0 ? ", probe: " : "",
			 meta < 0 ? strerror(-meta) : "");
	if (c->af_xdp.tx_metadata == SVPUB_ON)
		sv_warn("af_xdp: tx_metadata on: %s", x->base.ts_detail);
	/* libxdp does not expose the interface address; AF_PACKET's ioctl would need another socket. */
	{
		int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		struct ifreq ifr;

		memset(&ifr, 0, sizeof(ifr));
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", c->interface);
		if (fd >= 0 && ioctl(fd, SIOCGIFHWADDR, &ifr) == 0)
			memcpy(x->base.if_mac, ifr.ifr_hwaddr.sa_data, 6);
		if (fd >= 0)
			close(fd);
	}
	*txp = &x->base;
	return 0;
out:
	xdp_close(&x->base);
	return err;
}

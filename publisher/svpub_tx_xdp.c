// SPDX-License-Identifier: Apache-2.0
/*
 * AF_XDP back-end through libxdp's xsk API. TX needs no XDP program, so the socket is created with
 * XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD (no dispatcher, no bpffs). Frames are copied into UMEM chunks,
 * put on the TX ring and kicked with one sendto() per batch; completions return the chunks.
 *
 * TX timestamps: Linux 6.8 added XDP TX metadata (a struct in the chunk's headroom, requested per
 * descriptor with XDP_TX_METADATA, the stamp written back at completion; in copy mode the kernel writes
 * a software stamp, CLOCK_TAI, when the skb is freed after transmission). Debian 12's headers and
 * libxdp 1.3 predate it: the definitions are carried here, the kernel is probed at run time by
 * registering a UMEM with XDP_UMEM_TX_METADATA_LEN on a probe socket, and because libxdp 1.3 always
 * registers the UMEM itself (without tx_metadata_len; a second XDP_UMEM_REG on the fd is refused), the
 * stamping socket is set up here without libxdp (UMEM, rings, mmap, bind: the documented AF_XDP UAPI),
 * using only libxdp's inline ring accessors. Any failure there falls back to the libxdp socket, with
 * "none" and the reason as the timestamp source.
 *
 * Interface down (as the AF_PACKET back-end: counted as outage, never sent late). The kernel refuses the
 * kick with ENETDOWN (ENXIO once the interface is gone) before it reads the TX ring, and would send what
 * the ring holds when the link is back: seconds-old frames. So the batch the failed kick was for is taken
 * off the ring again (its descriptors were published after the kernel's last look at the ring: in copy
 * mode only our own syscalls read it), its frames are reported -ENETDOWN, and nothing is queued while the
 * interface stays down; one SIOCGIFFLAGS every 100 ms at most tells when it is up again. In zero-copy mode the
 * driver may read the ring on its own, so nothing is taken back there: frames queued in the instant the
 * link went down may still leave when it is back.
 */
#include <errno.h>
#include <net/if.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <xdp/xsk.h>

#include "sv_clock.h"
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
#define TXMD_LEN ((uint32_t)sizeof(struct svpub_xsk_tx_metadata)) /* 24: a multiple of 8, < 256 */
#define FILL_SIZE 64u /* TX only: the fill ring must exist, nothing is ever put on it */

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
	int fd;
	/* interface state */
	int ctl_fd;	     /* AF_INET datagram socket for SIOCGIFFLAGS */
	char ifname[IFNAMSIZ];
	bool zerocopy;
	bool down;	     /* nothing is queued: every frame is an outage */
	int down_err;	     /* -ENETDOWN, or -ENXIO once the socket lost its device */
	int64_t down_check_ns; /* CLOCK_MONOTONIC of the last SIOCGIFFLAGS while down */
	/* own socket (TX metadata stamps), else NULL: libxdp's */
	bool raw;
	void *tx_map, *comp_map;
	size_t tx_map_len, comp_map_len;
	uint32_t data_off;	  /* the frame's offset in its chunk: TXMD_LEN with stamps, else 0 */
	uint64_t *cookie;	  /* per chunk: the frame's cookie, for its stamp */
	int64_t tai_to_clock_ns;  /* copy-mode stamps are CLOCK_TAI */
	svpub_tx_ts_fn ts_fn;	  /* the engine's callback, remembered from the last poll */
	void *ts_ctx;
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

/* Takes the completed chunks back; with stamps, hands each chunk's stamp to the engine (the completion
 * comes after the kernel wrote it). Returns the number of stamps delivered. */
static int reclaim(struct tx_xdp *x)
{
	uint32_t idx;
	unsigned n = xsk_ring_cons__peek(&x->comp, x->nframes, &idx);
	int stamps = 0;

	for (unsigned i = 0; i < n; i++) {
		uint64_t addr = *xsk_ring_cons__comp_addr(&x->comp, idx + i);
		uint64_t chunk = addr & ~(uint64_t)(FRAME_SIZE - 1);

		if (x->data_off) {
			struct svpub_xsk_tx_metadata *m = xsk_umem__get_data(x->area, addr - TXMD_LEN);
			uint64_t ts = m->completion.tx_timestamp;

			if (ts && x->ts_fn) {
				x->ts_fn(x->ts_ctx, x->cookie[chunk / FRAME_SIZE], (int64_t)ts + x->tai_to_clock_ns,
					 SV_TS_XDP_META);
				x->base.ts_received++;
				stamps++;
			}
		}
		x->free_addr[x->nfree++] = chunk;
	}
	if (n)
		xsk_ring_cons__release(&x->comp, n);
	return stamps;
}

/* Copy mode transmits inside the kick, at most 32 descriptors per call (the kernel's TX_BATCH_SIZE), and
 * answers EAGAIN while more remain; EBUSY when the completion ring is full. Kick until the ring is empty so
 * that every frame of a deadline leaves now (64 streams due together are 64 descriptors), not at the
 * next deadline. Bounded: a busy device must not hold the scheduler. Returns 0, or -ENETDOWN/-ENXIO/-ENODEV
 * (interface down or gone; *@untouched: refused by the first call). */
static int kick(struct tx_xdp *x, bool *untouched)
{
	unsigned i;

	for (i = 0; i < 256; i++) {
		if (sendto(x->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) >= 0)
			return 0;
		if (errno == EBUSY)
			reclaim(x);
		else if (errno != EAGAIN && errno != EINTR)
			break;
		if (*x->txr.consumer == x->txr.cached_prod)
			return 0; /* the kernel took every descriptor */
	}
	if (svpub_errno_is_outage(errno)) {
		if (untouched)
			*untouched = i == 0; /* refused at once: the kernel did not read the ring in this kick */
		return -errno;
	}
	if (errno != EAGAIN && errno != EBUSY && errno != ENOBUFS)
		x->kicks_failed++;
	return 0;
}

#define LINK_CHECK_NS 100000000	/* while down, the link is asked about at most every 100 ms */

/* Is the interface up again? ENXIO (the socket lost its device: deleted) is for good. Asked at most every
 * LINK_CHECK_NS: a send call comes every frame period (an ioctl each would cost ~1 us per period for nothing). */
static bool link_back(struct tx_xdp *x)
{
	int64_t now;

	if (x->down_err == -ENXIO || x->ctl_fd < 0)
		return false;
	now = sv_clock_gettime_ns(CLOCK_MONOTONIC);
	if (now - x->down_check_ns < LINK_CHECK_NS)
		return false;
	x->down_check_ns = now;
	if (svpub_tx_if_up(x->ctl_fd, x->ifname) != 1)
		return false;
	x->down = false;
	return true;
}

static void set_down(struct tx_xdp *x, int err)
{
	x->down = true;
	x->down_check_ns = sv_clock_gettime_ns(CLOCK_MONOTONIC);
	x->down_err = err == -ENXIO || err == -ENODEV ? -ENXIO : -ENETDOWN;
}

static void outage(struct svpub_tx *tx, struct svpub_txf *f, unsigned from, unsigned n, int err)
{
	for (unsigned i = from; i < n; i++) {
		f[i].err = err;
		tx->outage++;
	}
}

/* Between batches: frames still on the TX ring (a kick cut short) are kicked out, completed chunks taken
 * back and their stamps delivered. */
static int xdp_poll(struct svpub_tx *tx, svpub_tx_ts_fn fn, void *ctx)
{
	struct tx_xdp *x = (struct tx_xdp *)tx;

	x->ts_fn = fn;
	x->ts_ctx = ctx;
	if (!x->down && *x->txr.consumer != x->txr.cached_prod)
		kick(x, NULL);
	return reclaim(x);
}

static int xdp_send(struct svpub_tx *tx, unsigned queue, struct svpub_txf *f, unsigned n)
{
	struct tx_xdp *x = (struct tx_xdp *)tx;
	uint32_t idx;
	unsigned got;
	bool untouched = false;
	int err;

	(void)queue;
	if (x->down && !link_back(x)) {
		outage(tx, f, 0, n, x->down_err);
		return 0;
	}
	reclaim(x);
	if (x->nfree < n) {
		err = kick(x, NULL);
		if (err) {
			set_down(x, err);
			outage(tx, f, 0, n, x->down_err);
			return 0;
		}
		reclaim(x);
	}
	got = n < x->nfree ? n : x->nfree;
	got = xsk_ring_prod__reserve(&x->txr, got, &idx);
	for (unsigned i = 0; i < got; i++) {
		struct xdp_desc *d = xsk_ring_prod__tx_desc(&x->txr, idx + i);
		uint64_t chunk = x->free_addr[--x->nfree], addr = chunk + x->data_off;

		memcpy(xsk_umem__get_data(x->area, addr), f[i].data, f[i].len);
		d->addr = addr;
		d->len = f[i].len;
		d->options = 0;
		if (x->data_off) {
			struct svpub_xsk_tx_metadata *m = xsk_umem__get_data(x->area, chunk);

			m->flags = XDP_TXMD_FLAGS_TIMESTAMP;
			m->completion.tx_timestamp = 0; /* also clears request: no checksum, no launch time */
			m->request.launch_time = 0;
			x->cookie[chunk / FRAME_SIZE] = f[i].cookie;
			d->options = XDP_TX_METADATA;
		}
		f[i].err = 0;
	}
	xsk_ring_prod__submit(&x->txr, got);
	for (unsigned i = got; i < n; i++) {
		f[i].err = -ENOBUFS;
		tx->tx_errors++;
	}
	/* Copy mode transmits in the kick; always kick so the batch leaves now. */
	err = kick(x, &untouched);
	if (err) {
		set_down(x, err);
		if (!x->zerocopy && untouched) {
			/* The kernel refused before reading the ring: take this batch back, chunks included, so
			 * that it never leaves late (see the top of the file). */
			x->txr.cached_prod -= got;
			__atomic_store_n(x->txr.producer, x->txr.cached_prod, __ATOMIC_RELEASE);
			for (unsigned i = 0; i < got; i++) {
				struct xdp_desc *d = xsk_ring_prod__tx_desc(&x->txr, idx + i);

				x->free_addr[x->nfree++] = d->addr - x->data_off;
			}
			outage(tx, f, 0, got, x->down_err);
			return 0;
		}
	}
	return (int)got;
}

static int xdp_close(struct svpub_tx *tx)
{
	struct tx_xdp *x = (struct tx_xdp *)tx;

	if (x->xsk)
		xsk_socket__delete(x->xsk);
	if (x->umem)
		xsk_umem__delete(x->umem);
	if (x->tx_map)
		munmap(x->tx_map, x->tx_map_len);
	if (x->comp_map)
		munmap(x->comp_map, x->comp_map_len);
	if (x->raw && x->fd >= 0)
		close(x->fd);
	if (x->area)
		munmap(x->area, x->area_len);
	if (x->ctl_fd >= 0)
		close(x->ctl_fd);
	free(x->free_addr);
	free(x->cookie);
	free(x);
	return 0;
}

static const struct svpub_tx_ops xdp_ops = {
	.name = "af_xdp",
	.add_queue = xdp_add_queue,
	.send = xdp_send,
	.poll = xdp_poll,
	.close = xdp_close,
};

/* A queue released by a previous AF_XDP socket (another process that just exited) stays bound until the
 * kernel's deferred release ran: bind() says EBUSY for a few ms. Waits 50 ms per try, up to 5 s; false when
 * it is time to give up (the release is a work item: on a loaded machine it can take seconds). */
static bool busy_wait(int attempt, const char *ifname)
{
	struct timespec ts = { 0, 50000000 };

	if (attempt >= 100)
		return false;
	if (attempt == 0)
		sv_info("af_xdp: %s queue busy (a previous AF_XDP socket is being released): retrying for up to 5 s",
			ifname);
	nanosleep(&ts, NULL);
	return true;
}

/*
 * Says why the UMEM could not be registered. xsk_umem__create() opens the AF_XDP socket too: -EPERM is
 * that socket (CAP_NET_RAW); -ENOBUFS is the kernel's UMEM accounting: without CAP_IPC_LOCK the pages are
 * charged to the user's locked memory (every AF_XDP UMEM of this user together) against RLIMIT_MEMLOCK.
 */
static void umem_log_error(const struct tx_xdp *x, int err)
{
	struct rlimit rl;
	char lim[48] = "unknown";

	if (err == -EPERM || err == -EACCES) {
		svpub_log_errno("af_xdp: socket(AF_XDP)", err, "CAP_NET_RAW");
		return;
	}
	if (err != -ENOBUFS && err != -ENOMEM) {
		sv_err("af_xdp: registering the UMEM of %zu KiB: %s", x->area_len / 1024, strerror(-err));
		return;
	}
	if (!getrlimit(RLIMIT_MEMLOCK, &rl))
		snprintf(lim, sizeof(lim), rl.rlim_cur == RLIM_INFINITY ? "unlimited" : "%llu KiB",
			 (unsigned long long)rl.rlim_cur / 1024);
	sv_err("af_xdp: registering the UMEM of %zu KiB: %s: over RLIMIT_MEMLOCK (%s, shared by every AF_XDP "
	       "UMEM of this user): raise it (LimitMEMLOCK=infinity in svpub.service, ulimit -l), grant "
	       "CAP_IPC_LOCK, or lower af_xdp.frames", x->area_len / 1024, strerror(-err), lim);
}

/* The stamping socket without libxdp: UMEM with tx_metadata_len, fill/completion/TX rings, mmap, bind
 * (Documentation/networking/af_xdp.rst). TX only: no RX ring, no XDP program. 0 or -errno (and @why). */
static int raw_open(struct tx_xdp *x, const struct svpub_config *c, uint32_t tx_size, char *why, size_t nwhy)
{
	struct svpub_xdp_umem_reg mr = { 0 };
	struct xdp_mmap_offsets off;
	struct sockaddr_xdp sxdp = { 0 };
	socklen_t optlen = sizeof(off);
	uint32_t fill = FILL_SIZE, comp = x->nframes;
	const char *step;
	void *m;

	x->fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (x->fd < 0) {
		step = "socket(AF_XDP)";
		goto fail;
	}
	x->raw = true;
	mr.addr = (uint64_t)(uintptr_t)x->area;
	mr.len = x->area_len;
	mr.chunk_size = FRAME_SIZE;
	mr.flags = XDP_UMEM_TX_METADATA_LEN;
	mr.tx_metadata_len = TXMD_LEN;
	step = "XDP_UMEM_REG with tx_metadata_len";
	if (setsockopt(x->fd, SOL_XDP, XDP_UMEM_REG, &mr, sizeof(mr)))
		goto fail;
	step = "XDP_UMEM_FILL_RING";
	if (setsockopt(x->fd, SOL_XDP, XDP_UMEM_FILL_RING, &fill, sizeof(fill)))
		goto fail;
	step = "XDP_UMEM_COMPLETION_RING";
	if (setsockopt(x->fd, SOL_XDP, XDP_UMEM_COMPLETION_RING, &comp, sizeof(comp)))
		goto fail;
	step = "XDP_TX_RING";
	if (setsockopt(x->fd, SOL_XDP, XDP_TX_RING, &tx_size, sizeof(tx_size)))
		goto fail;
	step = "XDP_MMAP_OFFSETS";
	if (getsockopt(x->fd, SOL_XDP, XDP_MMAP_OFFSETS, &off, &optlen))
		goto fail;

	step = "mmap of the completion ring";
	x->comp_map_len = off.cr.desc + (size_t)comp * sizeof(uint64_t);
	m = mmap(NULL, x->comp_map_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, x->fd,
		 XDP_UMEM_PGOFF_COMPLETION_RING);
	if (m == MAP_FAILED)
		goto fail;
	x->comp_map = m;
	x->comp.mask = comp - 1;
	x->comp.size = comp;
	x->comp.producer = (uint32_t *)((char *)m + off.cr.producer);
	x->comp.consumer = (uint32_t *)((char *)m + off.cr.consumer);
	x->comp.flags = (uint32_t *)((char *)m + off.cr.flags);
	x->comp.ring = (char *)m + off.cr.desc;
	x->comp.cached_prod = *x->comp.producer;
	x->comp.cached_cons = *x->comp.consumer;

	step = "mmap of the TX ring";
	x->tx_map_len = off.tx.desc + (size_t)tx_size * sizeof(struct xdp_desc);
	m = mmap(NULL, x->tx_map_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, x->fd, XDP_PGOFF_TX_RING);
	if (m == MAP_FAILED)
		goto fail;
	x->tx_map = m;
	x->txr.mask = tx_size - 1;
	x->txr.size = tx_size;
	x->txr.producer = (uint32_t *)((char *)m + off.tx.producer);
	x->txr.consumer = (uint32_t *)((char *)m + off.tx.consumer);
	x->txr.flags = (uint32_t *)((char *)m + off.tx.flags);
	x->txr.ring = (char *)m + off.tx.desc;
	x->txr.cached_prod = *x->txr.producer;
	x->txr.cached_cons = *x->txr.consumer + tx_size; /* a producer sees the free slots */

	sxdp.sxdp_family = AF_XDP;
	sxdp.sxdp_ifindex = (uint32_t)x->base.ifindex;
	sxdp.sxdp_queue_id = c->af_xdp.queue;
	sxdp.sxdp_flags = c->af_xdp.zerocopy ? XDP_ZEROCOPY : XDP_COPY;
	step = "bind";
	for (int i = 0; bind(x->fd, (struct sockaddr *)&sxdp, sizeof(sxdp)); i++)
		if (errno != EBUSY || !busy_wait(i, c->interface))
			goto fail;
	return 0;
fail:
	snprintf(why, nwhy, "%s: %s", step, strerror(errno));
	return -errno;
}

/* Undoes raw_open() (a failed one too) so that the libxdp path can start on the same area. */
static void raw_close(struct tx_xdp *x)
{
	if (x->tx_map)
		munmap(x->tx_map, x->tx_map_len);
	if (x->comp_map)
		munmap(x->comp_map, x->comp_map_len);
	if (x->fd >= 0)
		close(x->fd);
	x->tx_map = x->comp_map = NULL;
	x->fd = -1;
	x->raw = false;
	memset(&x->txr, 0, sizeof(x->txr));
	memset(&x->comp, 0, sizeof(x->comp));
}

int svpub_tx_xdp_open(struct svpub_tx **txp, const struct svpub_config *c, enum sv_clock_id clock)
{
	struct tx_xdp *x = calloc(1, sizeof(*x));
	struct xsk_umem_config ucfg = { 0 };
	struct xsk_socket_config scfg = { 0 };
	uint32_t nframes = 1, tx_size;
	int err, meta;

	if (!x)
		return -ENOMEM;
	x->fd = -1;
	x->ctl_fd = -1;
	x->zerocopy = c->af_xdp.zerocopy;
	snprintf(x->ifname, sizeof(x->ifname), "%s", c->interface);
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
	tx_size = nframes < 4096 ? nframes : 4096;
	x->base.ts_source = SV_TS_NONE;
	meta = c->af_xdp.tx_metadata == SVPUB_OFF ? 0 : probe_tx_metadata();
	if (c->af_xdp.tx_metadata == SVPUB_OFF) {
		snprintf(x->base.ts_detail, sizeof(x->base.ts_detail), "none (af_xdp.tx_metadata: off)");
	} else if (meta != 1) {
		snprintf(x->base.ts_detail, sizeof(x->base.ts_detail),
			 "none (kernel without XDP TX metadata: Linux 6.8+ needed%s%s)", meta < 0 ? ", probe: " : "",
			 meta < 0 ? strerror(-meta) : "");
	} else {
		char why[96];

		x->cookie = calloc(nframes, sizeof(*x->cookie));
		if (!x->cookie) {
			err = -ENOMEM;
			goto out;
		}
		if (!raw_open(x, c, tx_size, why, sizeof(why))) {
			struct sv_clock_xlate xl;

			x->data_off = TXMD_LEN;
			if (x->base.cid != CLOCK_TAI && !sv_clock_xlate_measure(&xl, CLOCK_TAI, x->base.cid, 16))
				x->tai_to_clock_ns = xl.offset_ns;
			x->base.ts_source = SV_TS_XDP_META;
			snprintf(x->base.ts_detail, sizeof(x->base.ts_detail), "%s",
				 c->af_xdp.zerocopy ? "xdp_meta (XDP TX metadata, zero-copy: the driver's stamp where it "
						      "has one, else none arrive)"
						    : "xdp_meta (XDP TX metadata in copy mode: the kernel's software stamp, "
						      "CLOCK_TAI, when the sent skb is freed)");
			goto have_socket;
		}
		raw_close(x);
		free(x->cookie);
		x->cookie = NULL;
		snprintf(x->base.ts_detail, sizeof(x->base.ts_detail), "none (XDP TX metadata socket: %s)", why);
	}
	ucfg.fill_size = XSK_RING_PROD__DEFAULT_NUM_DESCS;
	ucfg.comp_size = nframes;
	ucfg.frame_size = FRAME_SIZE;
	ucfg.frame_headroom = 0;
	err = xsk_umem__create(&x->umem, x->area, x->area_len, &x->fill, &x->comp, &ucfg);
	if (err) {
		umem_log_error(x, err);
		goto out;
	}
	scfg.rx_size = 0;
	scfg.tx_size = tx_size;
	scfg.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD;
	scfg.xdp_flags = c->af_xdp.mode == SVPUB_XDP_SKB ? XDP_FLAGS_SKB_MODE
			 : c->af_xdp.mode == SVPUB_XDP_NATIVE ? XDP_FLAGS_DRV_MODE : 0;
	scfg.bind_flags = (uint16_t)(c->af_xdp.zerocopy ? XDP_ZEROCOPY : XDP_COPY);
	for (int i = 0;; i++) {
		err = xsk_socket__create(&x->xsk, c->interface, c->af_xdp.queue, x->umem, NULL, &x->txr, &scfg);
		if (err != -EBUSY || !busy_wait(i, c->interface))
			break;
	}
	if (err) {
		if (err == -EPERM)
			svpub_log_errno("af_xdp: socket", err, "CAP_NET_RAW");
		else
			sv_err("af_xdp: xsk_socket__create on %s queue %u (%s): %s%s", c->interface, c->af_xdp.queue,
			       c->af_xdp.zerocopy ? "zero-copy" : "copy", strerror(-err),
			       c->af_xdp.zerocopy ? " (the driver may lack zero-copy: try zerocopy: false)" : "");
		goto out;
	}
	x->fd = xsk_socket__fd(x->xsk);
have_socket:
	if (c->af_xdp.tx_metadata == SVPUB_ON && x->base.ts_source == SV_TS_NONE)
		sv_warn("af_xdp: tx_metadata on: %s", x->base.ts_detail);
	/* libxdp does not expose the interface address; the same socket tells the interface's state later. */
	{
		struct ifreq ifr;

		x->ctl_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		memset(&ifr, 0, sizeof(ifr));
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", c->interface);
		if (x->ctl_fd >= 0 && ioctl(x->ctl_fd, SIOCGIFHWADDR, &ifr) == 0)
			memcpy(x->base.if_mac, ifr.ifr_hwaddr.sa_data, 6);
		if (svpub_tx_check_down(&x->base, x->ctl_fd, c->interface)) {
			x->down = true;
			x->down_err = -ENETDOWN;
		}
	}
	*txp = &x->base;
	return 0;
out:
	xdp_close(&x->base);
	return err;
}

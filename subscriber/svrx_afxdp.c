// SPDX-License-Identifier: Apache-2.0
/*
 * AF_XDP back-end. bpf/sv_xdp.bpf.c is loaded with its libbpf skeleton and attached directly to the
 * interface through a bpf_link (no libxdp dispatcher: it needs bpffs and freplace, not available
 * everywhere). One AF_XDP socket per rx queue is created with libxdp's xsk API, told not to load libxdp's
 * own program (XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD) and put in our XSKMAP (xsk_socket__update_xskmap).
 *
 * Order of attempts: native mode with the device-bound "hints" program (out-of-band VLAN and HW stamp
 * from the driver), native mode with the plain program, then SKB (generic) mode. Bind: XDP_ZEROCOPY, then
 * XDP_COPY (SKB mode always copies).
 */
#include <dirent.h>
#include <errno.h>
#include <linux/capability.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include <xdp/xsk.h>

#include "sv_log.h"
#include "sv_xdp.h"
#include "sv_xdp.skel.h"
#include "svrx_private.h"

_Static_assert(sizeof(struct sv_xdp_meta) == 24, "struct sv_xdp_meta drifted from bpf/sv_xdp.h");
_Static_assert(sizeof(struct sv_xdp_meta) % 4 == 0 && sizeof(struct sv_xdp_meta) <= 32,
	       "XDP metadata must be a multiple of 4 octets and at most 32");

#ifndef BPF_F_XDP_DEV_BOUND_ONLY
#define BPF_F_XDP_DEV_BOUND_ONLY (1U << 6)
#endif
#ifndef SO_PREFER_BUSY_POLL
#define SO_PREFER_BUSY_POLL 69
#endif
#ifndef SO_BUSY_POLL_BUDGET
#define SO_BUSY_POLL_BUDGET 70
#endif

#define AFX_FRAME_SIZE 2048u		/* smallest UMEM chunk the kernel accepts; SV frames are < 1.6 kB */
#define AFX_FRAMES_MAX 4096u
#define AFX_FRAMES_MIN 256u
#define AFX_UMEM_BUDGET (4u << 20)	/* half of the 8 MiB RLIMIT_MEMLOCK of the target systems */

struct afx_queue {
	struct xsk_ring_cons rxr;
	struct xsk_ring_prod fq;
	struct xsk_ring_cons cq;
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	void *buf;
	size_t buf_len;
	uint32_t queue;
	uint32_t held;
	uint64_t held_addr[SVRX_BATCH_MAX];
};

struct afx {
	struct sv_xdp_bpf *skel;
	int link_fd;		/* bpf_link of the attachment, or -1 */
	bool nl_attached;	/* attached through netlink (kernel without XDP links) */
	uint32_t attach_flags;
	int prog_fd;
	bool hints;
	bool clock_tai;		/* metadata stamps on CLOCK_TAI; else BOOTTIME converted with boot_to_tai */
	int64_t boot_to_tai_ns;
	uint32_t frames;
	unsigned nq;
	unsigned rr;		/* queue to look at first (fairness across queues) */
	int ncpus;
	struct pollfd pfd[SVRX_MAX_QUEUES];
	struct afx_queue q[SVRX_MAX_QUEUES];
};

/*
 * What libbpf said about the last failed attempt: its first warning ("map 'sv_xdp_xsks': failed to
 * create: Operation not permitted") and the verifier's reason (the log line before "processed N
 * insns"). The load runs once, at start, on one thread: plain statics are enough. The error message
 * quotes them, so a refusal is never just "Permission denied".
 */
static char afx_libbpf_warn[160];
static char afx_verifier_why[200];

static void afx_keep_verifier_why(const char *log)
{
	const char *end = strstr(log, "\nprocessed "), *start;

	if (!end)
		return;
	for (start = end; start > log && start[-1] != '\n'; start--)
		;
	snprintf(afx_verifier_why, sizeof(afx_verifier_why), "%.*s", (int)(end - start), start);
}

/* Keeps the first sentence of libbpf's warning @line: it goes on with guesses ("Make sure your kernel
 * supports BPF") that mislead when a capability is missing. */
static void afx_keep_warning(const char *line)
{
	const char *w = strncmp(line, "libbpf: ", 8) ? line : line + 8, *dot = strstr(w, ". ");
	size_t n = dot ? (size_t)(dot - w) : strlen(w);

	if (n >= sizeof(afx_libbpf_warn))
		n = sizeof(afx_libbpf_warn) - 1;
	memcpy(afx_libbpf_warn, w, n);
	afx_libbpf_warn[n] = '\0';
}

static int afx_libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char buf[512];
	size_t n;

	if (strstr(fmt, "BEGIN PROG LOAD LOG")) {
		char *all = NULL;
		va_list ap2;

		va_copy(ap2, ap);
		if (vasprintf(&all, fmt, ap2) >= 0) {
			afx_keep_verifier_why(all);
			free(all);
		}
		va_end(ap2);
	}
	vsnprintf(buf, sizeof(buf), fmt, ap);
	n = strlen(buf);
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	/* The first warning of an attempt is its cause; later ones only say that the load failed. */
	if (level == LIBBPF_WARN && !afx_libbpf_warn[0] && !strstr(fmt, "PROG LOAD LOG"))
		afx_keep_warning(buf);
	/* Probing modes makes the verifier and attach fail on purpose: keep libbpf at debug level. */
	sv_dbg("libbpf: %s", buf);
	return 0;
}

static int afx_libxdp_print(enum libxdp_print_level level, const char *fmt, va_list ap)
{
	return afx_libbpf_print((enum libbpf_print_level)level, fmt, ap);
}

static bool have_cap(int cap)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return false;
	return d[cap / 32].effective & (1u << (cap % 32));
}

/*
 * Says why loading or attaching the XDP program failed with @err. The kernel's rules (6.x): the program
 * type XDP and the XSKMAP need CAP_NET_ADMIN, every BPF map and program needs CAP_BPF (CAP_SYS_ADMIN
 * also counts), attaching needs the loaded program (netlink attach: CAP_NET_ADMIN). Without CAP_PERFMON
 * the verifier also applies its Spectre v1 rules (no packet-pointer arithmetic with a register): the
 * program is written within them, so CAP_PERFMON is not needed; a refusal by the verifier is quoted.
 */
static void afx_explain_attach(const struct svrx *rx, int err)
{
	const bool bpf = have_cap(CAP_BPF) || have_cap(CAP_SYS_ADMIN), admin = have_cap(CAP_NET_ADMIN);
	char lacks[96] = "", said[200] = "";

	if (afx_libbpf_warn[0])
		snprintf(said, sizeof(said), " (libbpf said: %s)", afx_libbpf_warn);
	if (err == -EACCES && afx_verifier_why[0]) {
		sv_err("af_xdp: the kernel's verifier refused the XDP program for %s: \"%s\"%s", rx->ifname,
		       afx_verifier_why,
		       have_cap(CAP_PERFMON) || have_cap(CAP_SYS_ADMIN) ? "" :
		       " (a rule this kernel applies without CAP_PERFMON: granting CAP_PERFMON works around it; "
		       "please report it, svsub's program is meant to load with CAP_BPF and CAP_NET_ADMIN alone)");
		return;
	}
	if (!bpf || !admin)
		snprintf(lacks, sizeof(lacks), "; this process lacks %s%s%s", bpf ? "" : "CAP_BPF",
			 !bpf && !admin ? " and " : "", admin ? "" : "CAP_NET_ADMIN");
	else
		snprintf(lacks, sizeof(lacks), "; this process has both: kernel.unprivileged_bpf_disabled, "
			 "lockdown or an LSM refused it");
	sv_err("af_xdp: loading/attaching the XDP program on %s: %s%s: the AF_XDP back-end needs CAP_BPF "
	       "(BPF maps and programs) and CAP_NET_ADMIN (an XDP program, its XSKMAP, the attachment)%s",
	       rx->ifname, strerror(-err), said, lacks);
}

/* Rx queues of @ifname from sysfs (/sys/class/net/IF/queues/rx-N). */
static unsigned count_rx_queues(const char *ifname)
{
	char path[128];
	struct dirent *de;
	unsigned n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/sys/class/net/%s/queues", ifname);
	d = opendir(path);
	if (!d)
		return 1;
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, "rx-", 3))
			n++;
	closedir(d);
	return n ? n : 1;
}

static uint32_t pow2_floor(uint32_t x)
{
	uint32_t p = 1;

	while (p * 2 <= x && p < (1u << 30))
		p *= 2;
	return p;
}

/* UMEM frames per socket. The UMEM is pinned and charged to RLIMIT_MEMLOCK unless we hold CAP_IPC_LOCK. */
static uint32_t afx_size_umem(const struct svrx_config *cfg, unsigned nq, bool *limited)
{
	struct rlimit rl = { 0, 0 };
	uint64_t budget;

	*limited = false;
	if (cfg->frames)
		return pow2_floor(cfg->frames < AFX_FRAMES_MIN ? AFX_FRAMES_MIN : cfg->frames);
	if (have_cap(CAP_IPC_LOCK) || (!getrlimit(RLIMIT_MEMLOCK, &rl) && rl.rlim_cur == RLIM_INFINITY))
		return AFX_FRAMES_MAX;
	budget = rl.rlim_cur / 2 < AFX_UMEM_BUDGET ? rl.rlim_cur / 2 : AFX_UMEM_BUDGET;
	*limited = true;
	budget /= (uint64_t)nq * AFX_FRAME_SIZE;
	if (budget > AFX_FRAMES_MAX)
		budget = AFX_FRAMES_MAX;
	return pow2_floor(budget < AFX_FRAMES_MIN ? AFX_FRAMES_MIN : (uint32_t)budget);
}

static void afx_detach(struct svrx *rx, struct afx *x)
{
	if (x->link_fd >= 0) {
		close(x->link_fd); /* releasing the link detaches the program */
		x->link_fd = -1;
	}
	if (x->nl_attached) {
		LIBBPF_OPTS(bpf_xdp_attach_opts, o, .old_prog_fd = x->prog_fd);
		int err = bpf_xdp_detach(rx->ifindex, x->attach_flags | XDP_FLAGS_REPLACE, &o);

		if (err)
			sv_err("af_xdp: detaching the XDP program from %s: %s (remove it with "
			       "'ip link set dev %s xdp off')", rx->ifname, strerror(-err), rx->ifname);
		x->nl_attached = false;
	}
}

/* One load + attach attempt. Returns 0 with x->skel loaded and attached, or -errno (nothing left over). */
static int afx_try_attach(struct svrx *rx, struct afx *x, bool hints, uint32_t mode_flag)
{
	struct bpf_program *prog;
	struct sv_xdp_bpf *skel;
	unsigned i;
	int err, fd;

	afx_libbpf_warn[0] = '\0';
	skel = sv_xdp_bpf__open();
	if (!skel)
		return -errno ? -errno : -ENOMEM;
	skel->rodata->cfg_allowlist = rx->cfg.n_appids ? 1 : 0;
	skel->rodata->cfg_meta = 1;
	skel->rodata->cfg_clock_tai = x->clock_tai ? 1 : 0;
	if (hints) {
		prog = skel->progs.sv_xdp_redirect_hints;
		bpf_program__set_autoload(skel->progs.sv_xdp_redirect, false);
		bpf_program__set_ifindex(prog, (__u32)rx->ifindex);
		bpf_program__set_flags(prog, bpf_program__flags(prog) | BPF_F_XDP_DEV_BOUND_ONLY);
	} else {
		prog = skel->progs.sv_xdp_redirect;
		bpf_program__set_autoload(skel->progs.sv_xdp_redirect_hints, false);
	}
	err = sv_xdp_bpf__load(skel);
	if (err)
		goto out_destroy;
	for (i = 0; i < rx->cfg.n_appids; i++) {
		__u32 key = rx->cfg.appids[i], one = 1;

		if (bpf_map_update_elem(bpf_map__fd(skel->maps.sv_xdp_appids), &key, &one, BPF_ANY)) {
			err = -errno;
			goto out_destroy;
		}
	}
	x->prog_fd = bpf_program__fd(prog);
	{
		LIBBPF_OPTS(bpf_link_create_opts, lo, .flags = mode_flag);

		fd = bpf_link_create(x->prog_fd, rx->ifindex, BPF_XDP, &lo);
	}
	if (fd < 0 && fd != -EBUSY && fd != -EEXIST && fd != -EPERM && fd != -EOPNOTSUPP) {
		/* Kernels before 5.9 have no XDP links: netlink attach; svrx_close() detaches. */
		int e2 = bpf_xdp_attach(rx->ifindex, x->prog_fd, mode_flag | XDP_FLAGS_UPDATE_IF_NOEXIST, NULL);

		if (!e2) {
			x->nl_attached = true;
			fd = -1;
		} else if (e2 == -EBUSY || e2 == -EEXIST) {
			fd = e2;
		}
	}
	if (fd < 0 && !x->nl_attached) {
		err = fd;
		goto out_destroy;
	}
	x->link_fd = fd;
	x->attach_flags = mode_flag;
	x->hints = hints;
	x->skel = skel;
	return 0;

out_destroy:
	sv_xdp_bpf__destroy(skel);
	return err;
}

static int afx_attach(struct svrx *rx, struct afx *x)
{
	const bool native = rx->cfg.xdp_mode != SVRX_XDP_SKB, skb = rx->cfg.xdp_mode != SVRX_XDP_NATIVE;
	int err = -EOPNOTSUPP, e;

	afx_verifier_why[0] = '\0';
	if (native) {
		e = afx_try_attach(rx, x, true, XDP_FLAGS_DRV_MODE);
		if (!e)
			goto ok;
		sv_dbg("af_xdp: native mode with XDP hints: %s", strerror(-e));
		err = e;
		if (e == -EBUSY || e == -EEXIST || e == -EPERM)
			goto fail;
		e = afx_try_attach(rx, x, false, XDP_FLAGS_DRV_MODE);
		if (!e)
			goto ok;
		sv_dbg("af_xdp: native mode: %s", strerror(-e));
		err = e;
		if (e == -EBUSY || e == -EEXIST || e == -EPERM)
			goto fail;
	}
	if (skb) {
		e = afx_try_attach(rx, x, false, XDP_FLAGS_SKB_MODE);
		if (!e)
			goto ok;
		sv_dbg("af_xdp: SKB mode: %s", strerror(-e));
		err = e;
	}
fail:
	if (err == -EPERM || err == -EACCES)
		afx_explain_attach(rx, err);
	else if (err == -EBUSY || err == -EEXIST)
		sv_err("af_xdp: another XDP program is attached to %s; svsub does not replace it (see "
		       "'ip link show dev %s'; or use --backend af_packet)", rx->ifname, rx->ifname);
	else
		sv_err("af_xdp: XDP attach refused on %s in %s mode: %s (try --xdp-mode skb or --backend "
		       "af_packet)", rx->ifname, native && skb ? "native and SKB" : native ? "native" : "SKB",
		       strerror(-err));
	return err;
ok:
	rx->info.xdp_mode = x->attach_flags == XDP_FLAGS_DRV_MODE ? "native" : "skb";
	rx->info.vlan_oob = x->hints ? "xdp_hints" : "unknown";
	return 0;
}

static void afx_queue_destroy(struct afx_queue *q)
{
	if (q->xsk)
		xsk_socket__delete(q->xsk);
	if (q->umem)
		xsk_umem__delete(q->umem);
	if (q->buf)
		munmap(q->buf, q->buf_len);
	q->xsk = NULL;
	q->umem = NULL;
	q->buf = NULL;
}

static int afx_queue_create(struct svrx *rx, struct afx *x, struct afx_queue *q, uint32_t bind_flags)
{
	struct xsk_umem_config ucfg = {
		.fill_size = x->frames,
		.comp_size = 64,
		.frame_size = AFX_FRAME_SIZE,
		.frame_headroom = 0,
		.flags = 0,
	};
	struct xsk_socket_config scfg;
	uint32_t idx, i;
	int err;

	q->buf_len = (size_t)x->frames * AFX_FRAME_SIZE;
	q->buf = mmap(NULL, q->buf_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (q->buf == MAP_FAILED) {
		q->buf = NULL;
		return -ENOMEM;
	}
	err = xsk_umem__create(&q->umem, q->buf, q->buf_len, &q->fq, &q->cq, &ucfg);
	if (err) {
		q->umem = NULL;
		goto out;
	}
	memset(&scfg, 0, sizeof(scfg));
	scfg.rx_size = x->frames;
	scfg.tx_size = 0;
	scfg.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD;
	scfg.xdp_flags = x->attach_flags;
	scfg.bind_flags = (uint16_t)bind_flags;
	err = xsk_socket__create(&q->xsk, rx->ifname, q->queue, q->umem, &q->rxr, NULL, &scfg);
	if (err) {
		q->xsk = NULL;
		goto out;
	}
	if (xsk_ring_prod__reserve(&q->fq, x->frames, &idx) != x->frames) {
		err = -ENOSPC;
		goto out;
	}
	for (i = 0; i < x->frames; i++)
		*xsk_ring_prod__fill_addr(&q->fq, idx + i) = (uint64_t)i * AFX_FRAME_SIZE;
	xsk_ring_prod__submit(&q->fq, x->frames);
	return 0;
out:
	afx_queue_destroy(q);
	return err;
}

static int afx_open_sockets(struct svrx *rx, struct afx *x)
{
	const uint32_t wake = rx->cfg.need_wakeup ? XDP_USE_NEED_WAKEUP : 0;
	const bool skb_mode = x->attach_flags == XDP_FLAGS_SKB_MODE;
	unsigned i;
	int err = 0;

	for (i = 0; i < x->nq; i++) {
		struct afx_queue *q = &x->q[i];

		q->queue = rx->cfg.queue >= 0 ? (uint32_t)rx->cfg.queue : i;
		err = -EOPNOTSUPP;
		if (!skb_mode && rx->cfg.zerocopy != SVRX_OFF) {
			err = afx_queue_create(rx, x, q, XDP_ZEROCOPY | wake);
			if (!err)
				rx->info.bind_mode = "zerocopy";
			else
				sv_dbg("af_xdp: queue %u zero-copy: %s", q->queue, strerror(-err));
		}
		if (err && rx->cfg.zerocopy == SVRX_ON) {
			sv_err("af_xdp: zero-copy refused on %s queue %u: %s (the driver needs native XDP and "
			       "AF_XDP zero-copy support; use --zerocopy auto)", rx->ifname, q->queue,
			       strerror(-err));
			return err;
		}
		if (err) {
			err = afx_queue_create(rx, x, q, XDP_COPY | wake);
			if (!err)
				rx->info.bind_mode = "copy";
		}
		if (err) {
			if (err == -EPERM || err == -EACCES)
				return svrx_log_perm(err, "af_xdp: creating the AF_XDP socket", "CAP_NET_RAW");
			if (err == -ENOMEM || err == -ENOBUFS || err == -EAGAIN)
				sv_err("af_xdp: UMEM of %u x %u octets on queue %u: %s (over RLIMIT_MEMLOCK? raise it "
				       "(LimitMEMLOCK= in svsub@.service, ulimit -l), use a smaller --umem-frames or "
				       "grant CAP_IPC_LOCK)", x->frames,
				       AFX_FRAME_SIZE, q->queue, strerror(-err));
			else
				sv_err("af_xdp: binding an AF_XDP socket to %s queue %u: %s", rx->ifname,
				       q->queue, strerror(-err));
			return err;
		}
		err = xsk_socket__update_xskmap(q->xsk, bpf_map__fd(x->skel->maps.sv_xdp_xsks));
		if (err) {
			sv_err("af_xdp: adding the socket of queue %u to the XSKMAP: %s", q->queue, strerror(-err));
			return err;
		}
		x->pfd[i].fd = xsk_socket__fd(q->xsk);
		x->pfd[i].events = POLLIN;
		if (rx->cfg.busy_poll_us) {
			int fd = x->pfd[i].fd, one = 1, us = (int)rx->cfg.busy_poll_us;
			int budget = (int)rx->cfg.busy_poll_budget;

			if (setsockopt(fd, SOL_SOCKET, SO_PREFER_BUSY_POLL, &one, sizeof(one)) ||
			    setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL, &us, sizeof(us)) ||
			    (budget && setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL_BUDGET, &budget, sizeof(budget)))) {
				sv_warn("af_xdp: busy polling refused on queue %u: %s (needs CAP_NET_ADMIN above "
					"net.core.busy_read); continuing without", q->queue, strerror(errno));
				rx->info.busy_poll_us = 0;
			} else {
				rx->info.busy_poll_us = rx->cfg.busy_poll_us;
			}
		}
	}
	return 0;
}

static int afx_open(struct svrx *rx)
{
	struct afx *x;
	bool limited;
	int err;

	libbpf_set_print(afx_libbpf_print);
	libxdp_set_print(afx_libxdp_print);
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	rx->priv = x;
	x->link_fd = -1;
	x->prog_fd = -1;
	x->ncpus = libbpf_num_possible_cpus();
	if (x->ncpus <= 0)
		x->ncpus = 1;
	if (rx->cfg.queue >= 0) {
		x->nq = 1;
	} else {
		x->nq = count_rx_queues(rx->ifname);
		if (x->nq > SVRX_MAX_QUEUES) {
			sv_warn("af_xdp: %s has %u rx queues; binding the first %d (steer SV to them with ethtool "
				"-N or use --queue)", rx->ifname, x->nq, SVRX_MAX_QUEUES);
			x->nq = SVRX_MAX_QUEUES;
		}
	}
	if (rx->cfg.queue >= SV_XDP_MAX_QUEUES) {
		sv_err("af_xdp: queue %d over the XSKMAP size %d", rx->cfg.queue, SV_XDP_MAX_QUEUES);
		err = -EINVAL;
		goto out_free;
	}
	x->frames = afx_size_umem(&rx->cfg, x->nq, &limited);
	x->clock_tai = libbpf_probe_bpf_helper(BPF_PROG_TYPE_XDP, BPF_FUNC_ktime_get_tai_ns, NULL) > 0;
	if (!x->clock_tai) {
		struct timespec b, t;

		/* Metadata stamps on CLOCK_BOOTTIME: converted once to TAI here. */
		clock_gettime(CLOCK_BOOTTIME, &b);
		clock_gettime(CLOCK_TAI, &t);
		x->boot_to_tai_ns = ((int64_t)t.tv_sec - b.tv_sec) * 1000000000LL + (t.tv_nsec - b.tv_nsec);
	}

	/* Membership first: the XDP program sees only what the NIC's filter lets in. Protocol 0: this socket
	 * receives nothing, it only holds the memberships (dropped by the kernel when it closes). */
	rx->mc_fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (rx->mc_fd < 0) {
		err = svrx_log_perm(-errno, "af_xdp: socket(AF_PACKET) for the multicast membership", "CAP_NET_RAW");
		goto out_free;
	}
	err = svrx_join_multicast(rx, rx->mc_fd);
	if (err)
		goto out_free;
	err = afx_attach(rx, x);
	if (err)
		goto out_free;
	err = afx_open_sockets(rx, x);
	if (err)
		goto out_sockets;
	rx->info.need_wakeup = rx->cfg.need_wakeup;
	rx->info.queues = x->nq;
	rx->info.umem_frames = x->frames;
	rx->info.ts_source = "xdp_meta";
	if (limited)
		sv_dbg("af_xdp: UMEM sized to RLIMIT_MEMLOCK: %u frames x %u octets per socket", x->frames,
		       AFX_FRAME_SIZE);
	return 0;

out_sockets:
	for (unsigned i = 0; i < x->nq; i++)
		afx_queue_destroy(&x->q[i]);
	afx_detach(rx, x);
	sv_xdp_bpf__destroy(x->skel);
out_free:
	if (rx->mc_fd >= 0)
		close(rx->mc_fd);
	rx->mc_fd = -1;
	free(x);
	rx->priv = NULL;
	return err;
}

static void afx_release(struct svrx *rx)
{
	struct afx *x = rx->priv;

	for (unsigned i = 0; i < x->nq; i++) {
		struct afx_queue *q = &x->q[i];
		uint32_t idx, j;

		if (!q->held)
			continue;
		/* We return exactly what we took, and the fill ring holds every frame: this cannot fail. */
		if (xsk_ring_prod__reserve(&q->fq, q->held, &idx) == q->held) {
			for (j = 0; j < q->held; j++)
				*xsk_ring_prod__fill_addr(&q->fq, idx + j) = q->held_addr[j];
			xsk_ring_prod__submit(&q->fq, q->held);
		}
		xsk_ring_cons__release(&q->rxr, q->held);
		q->held = 0;
	}
}

static unsigned afx_collect(struct afx *x, struct svrx_frame *frames, unsigned max)
{
	int64_t user_tai_ns = -1;
	unsigned n = 0;

	for (unsigned k = 0; k < x->nq && n < max; k++) {
		struct afx_queue *q = &x->q[(x->rr + k) % x->nq];
		uint32_t idx, got, j;

		got = xsk_ring_cons__peek(&q->rxr, max - n, &idx);
		for (j = 0; j < got; j++) {
			const struct xdp_desc *d = xsk_ring_cons__rx_desc(&q->rxr, idx + j);
			uint64_t addr = xsk_umem__add_offset_to_addr(d->addr);
			uint8_t *data = xsk_umem__get_data(q->buf, addr);
			struct svrx_frame *f = &frames[n++];
			struct sv_xdp_meta *m = (struct sv_xdp_meta *)(data - sizeof(*m));

			q->held_addr[j] = xsk_umem__extract_addr(d->addr);
			f->data = data;
			f->len = d->len;
			f->queue = (uint16_t)q->queue;
			f->vlan_state = SVRX_VLAN_UNKNOWN;
			f->vlan_pcp = 0;
			f->vlan_dei = 0;
			f->vlan_id = 0;
			if (addr % AFX_FRAME_SIZE >= sizeof(*m) &&
			    (m->magic & SV_XDP_META_MAGIC_MASK) == SV_XDP_META_MAGIC) {
				uint32_t fl = m->magic & ~SV_XDP_META_MAGIC_MASK;

				if (fl & SV_XDP_META_TS_HW) {
					f->rx_ns = (int64_t)m->hw_ns;
					f->ts_clock = SV_CLOCK_PHC;
					f->ts_source = SVRX_TS_HARDWARE;
				} else {
					f->rx_ns = (int64_t)m->rx_ns +
						   ((fl & SV_XDP_META_CLOCK_TAI) ? 0 : x->boot_to_tai_ns);
					f->ts_clock = SV_CLOCK_TAI;
					f->ts_source = SVRX_TS_XDP_META;
				}
				if (fl & SV_XDP_META_VLAN_PRESENT)
					svrx_frame_set_tci(f, (uint16_t)m->vlan_tci);
				else if (fl & SV_XDP_META_VLAN_NONE)
					f->vlan_state = SVRX_VLAN_NONE;
				/* The headroom is ours (not frame bytes): clear the magic so a later frame in
				 * this chunk without metadata is not given a stale stamp. */
				m->magic = 0;
			} else {
				if (user_tai_ns < 0) {
					struct timespec ts;

					clock_gettime(CLOCK_TAI, &ts);
					user_tai_ns = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
				}
				f->rx_ns = user_tai_ns;
				f->ts_clock = SV_CLOCK_TAI;
				f->ts_source = SVRX_TS_USER;
			}
		}
		q->held = got;
	}
	x->rr = x->nq > 1 ? (x->rr + 1) % x->nq : 0;
	return n;
}

static void afx_kick(struct svrx *rx, struct afx *x, bool always)
{
	for (unsigned i = 0; i < x->nq; i++) {
		if (always || (rx->cfg.need_wakeup && xsk_ring_prod__needs_wakeup(&x->q[i].fq))) {
			recvfrom(x->pfd[i].fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
			rx->st.wakeups++;
		}
	}
}

static int afx_poll(struct svrx *rx, struct svrx_frame *frames, unsigned max, int timeout_ms)
{
	struct afx *x = rx->priv;
	struct timespec start, now;
	unsigned n;
	int r;

	afx_release(rx);
	n = afx_collect(x, frames, max);
	if (n || timeout_ms == 0)
		return (int)n;
	if (rx->info.busy_poll_us) {
		/* Busy polling: recvfrom() drives the driver's NAPI from this thread, no sleeping. */
		clock_gettime(CLOCK_MONOTONIC, &start);
		for (;;) {
			afx_kick(rx, x, true);
			n = afx_collect(x, frames, max);
			if (n)
				return (int)n;
			clock_gettime(CLOCK_MONOTONIC, &now);
			if (timeout_ms > 0 && (now.tv_sec - start.tv_sec) * 1000 +
						      (now.tv_nsec - start.tv_nsec) / 1000000 >= timeout_ms)
				return 0;
		}
	}
	afx_kick(rx, x, false);
	r = poll(x->pfd, x->nq, timeout_ms);
	if (r < 0)
		return -errno;
	if (r == 0)
		return 0;
	for (unsigned i = 0; i < x->nq; i++)
		if (x->pfd[i].revents & (POLLERR | POLLNVAL))
			return -EIO;
	return (int)afx_collect(x, frames, max);
}

static int afx_pollfds(struct svrx *rx, struct pollfd *pfd, unsigned max)
{
	struct afx *x = rx->priv;
	unsigned i;

	if (rx->info.busy_poll_us)
		return -1;
	afx_kick(rx, x, false);
	for (i = 0; i < x->nq && i < max; i++)
		pfd[i] = x->pfd[i];
	return (int)i;
}

static int afx_stats(struct svrx *rx, struct svrx_stats *st)
{
	struct afx *x = rx->priv;
	__u64 vals[512];
	int err = 0;

	for (unsigned i = 0; i < x->nq; i++) {
		struct xdp_statistics xs;
		socklen_t len = sizeof(xs);

		if (getsockopt(x->pfd[i].fd, SOL_XDP, XDP_STATISTICS, &xs, &len)) {
			err = -errno;
			continue;
		}
		st->kernel_drops += xs.rx_dropped;
		st->invalid_descs += xs.rx_invalid_descs;
		st->ring_full += xs.rx_ring_full;
		st->fill_empty += xs.rx_fill_ring_empty_descs;
	}
	if (x->ncpus > (int)(sizeof(vals) / sizeof(vals[0])))
		return err;
	for (__u32 k = 0; k < SV_XDP_CNT__MAX; k++) {
		uint64_t sum = 0;

		if (bpf_map_lookup_elem(bpf_map__fd(x->skel->maps.sv_xdp_counters), &k, vals)) {
			err = -errno;
			continue;
		}
		for (int c = 0; c < x->ncpus; c++)
			sum += vals[c];
		switch (k) {
		case SV_XDP_CNT_REDIRECTED:
			st->xdp_redirected = sum;
			break;
		case SV_XDP_CNT_PASS_NOT_SV:
			st->xdp_pass_not_sv = sum;
			break;
		case SV_XDP_CNT_TRUNCATED:
			st->xdp_truncated = sum;
			break;
		case SV_XDP_CNT_NOT_ALLOWED:
			st->xdp_not_allowed = sum;
			break;
		case SV_XDP_CNT_NO_SOCKET:
			st->xdp_no_socket = sum;
			break;
		case SV_XDP_CNT_META_FAILED:
			st->xdp_meta_failed = sum;
			break;
		case SV_XDP_CNT_VLAN_HINT:
			st->xdp_vlan_hint = sum;
			break;
		default:
			break;
		}
	}
	return err;
}

static void afx_close(struct svrx *rx)
{
	struct afx *x = rx->priv;

	if (!x)
		return;
	/* Program off first, so nothing is redirected to sockets that are going away. */
	afx_detach(rx, x);
	for (unsigned i = 0; i < x->nq; i++)
		afx_queue_destroy(&x->q[i]);
	sv_xdp_bpf__destroy(x->skel);
	free(x);
	rx->priv = NULL;
}

const struct svrx_ops svrx_afxdp_ops = {
	.name = "af_xdp",
	.open = afx_open,
	.poll = afx_poll,
	.release = afx_release,
	.pollfds = afx_pollfds,
	.stats = afx_stats,
	.close = afx_close,
};

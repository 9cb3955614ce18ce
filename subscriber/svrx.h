/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svrx: svsub's live receive back-ends. One handle receives the SV frames of one interface through
 *   - AF_XDP (default): bpf/sv_xdp.bpf.c attached directly (native, else SKB mode) redirects 0x88BA frames
 *     to one AF_XDP socket per rx queue (libxdp xsk API, zero-copy where the driver allows, else copy);
 *   - AF_PACKET: a TPACKET_V2 ring behind a classic BPF filter that accepts 0x88BA untagged/tagged.
 * Both join the SV multicast groups (or the whole SV range) so NIC / virtio-net filters deliver them.
 *
 * Per-packet path: no allocation, no logging, no system call per frame. Errors at open are logged once
 * through sv_log() with what to do about them (missing interface, missing capability, attach refused).
 * Not thread-safe: one thread polls a handle.
 */
#ifndef SVRX_H
#define SVRX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sv_clock.h"

struct svrx;

enum svrx_backend {
	SVRX_BACKEND_AF_XDP = 0,
	SVRX_BACKEND_AF_PACKET,
};

enum svrx_xdp_mode {
	SVRX_XDP_AUTO = 0, /* native (driver) mode, else SKB (generic) mode */
	SVRX_XDP_NATIVE,
	SVRX_XDP_SKB,
};

enum svrx_tristate {
	SVRX_AUTO = 0,
	SVRX_ON,
	SVRX_OFF,
};

/* Where a frame's receive time comes from (best first). */
enum svrx_ts_source {
	SVRX_TS_HARDWARE = 0, /* NIC stamp (not available on the machines tested so far) */
	SVRX_TS_XDP_META,     /* taken by the XDP program, carried in XDP metadata */
	SVRX_TS_KERNEL_SW,    /* kernel software receive stamp (SO_TIMESTAMPING RX_SOFTWARE) */
	SVRX_TS_USER,	      /* clock_gettime() in user space when the batch was picked up */
};

/* The out-of-band 802.1Q tag (the one a bridge or NIC offload took out of the frame bytes). A tag that is
 * still in the bytes is the decoder's business (sv_view.vlan). */
enum svrx_vlan_state {
	SVRX_VLAN_UNKNOWN = 0, /* the kernel cannot tell on this path (e.g. XDP SKB mode without hints) */
	SVRX_VLAN_NONE,	       /* the kernel says: no out-of-band tag */
	SVRX_VLAN_PRESENT,     /* pcp / dei / vid valid */
};

#define SVRX_MAX_GROUPS 64
#define SVRX_MAX_APPIDS 256
#define SVRX_MAX_QUEUES 16

struct svrx_config {
	const char *ifname;
	enum svrx_backend backend;
	/* AF_XDP */
	enum svrx_xdp_mode xdp_mode;
	enum svrx_tristate zerocopy; /* AUTO: XDP_ZEROCOPY, else XDP_COPY */
	bool need_wakeup;	     /* XDP_USE_NEED_WAKEUP (recommended: true) */
	int queue;		     /* rx queue to bind, or -1: every rx queue of the interface */
	uint32_t frames;	     /* UMEM frames per socket; 0: sized to fit RLIMIT_MEMLOCK */
	/* both back-ends */
	unsigned busy_poll_us;	     /* 0: off; else SO_BUSY_POLL + SO_PREFER_BUSY_POLL, poll() not slept in */
	unsigned busy_poll_budget;   /* SO_BUSY_POLL_BUDGET, 0: kernel default */
	uint32_t ring_bytes;	     /* AF_PACKET ring size, 0: 4 MiB */
	/* APPID allow-list (empty: every APPID). AF_XDP: in the kernel; AF_PACKET: in the socket filter. */
	uint16_t appids[SVRX_MAX_APPIDS];
	unsigned n_appids;
	/* Multicast: @groups (destination MACs) joined one by one; none given: the whole SV range
	 * 01-0C-CD-04-00-00..01-FF through PACKET_MR_ALLMULTI (512 filter entries would overflow most NICs'
	 * exact filters into all-multicast anyway). */
	uint8_t groups[SVRX_MAX_GROUPS][6];
	unsigned n_groups;
	bool promiscuous;	     /* PACKET_MR_PROMISC: only on request */
};

/* Defaults: AF_XDP, auto mode, zero-copy auto, need_wakeup, all queues, no busy poll, whole SV range. */
void svrx_config_init(struct svrx_config *cfg);

/* One received frame. Valid until svrx_release() or the next svrx_poll() on the same handle. */
struct svrx_frame {
	const uint8_t *data; /* whole Ethernet frame, no FCS; read-only (it may be the UMEM) */
	uint32_t len;
	uint16_t queue;	     /* rx queue (AF_XDP), 0 for AF_PACKET */
	uint8_t ts_source;   /* enum svrx_ts_source */
	uint8_t ts_clock;    /* enum sv_clock_id of rx_ns: TAI (software stamps, converted), PHC (hardware) */
	int64_t rx_ns;	     /* receive time on ts_clock */
	uint8_t vlan_state;  /* enum svrx_vlan_state */
	uint8_t vlan_pcp;
	uint8_t vlan_dei;
	uint16_t vlan_id;
};

/*
 * Opens @cfg->ifname. Returns 0 and *@out, or a negative errno after logging why:
 * -ENODEV (no such interface), -EPERM (missing CAP_NET_ADMIN / CAP_BPF / CAP_NET_RAW: named in the message),
 * -EOPNOTSUPP / -EBUSY (XDP attach refused in every allowed mode, or another program is attached),
 * -ENOMEM (UMEM over RLIMIT_MEMLOCK; CAP_IPC_LOCK lifts the limit).
 * The XDP program is attached through a bpf_link: the kernel detaches it when the process exits, even on a
 * crash or SIGKILL; svrx_close() detaches it at once.
 */
int svrx_open(struct svrx **out, const struct svrx_config *cfg);

/*
 * Waits up to @timeout_ms (0: do not wait, -1: forever) for frames and fills up to @max of @frames.
 * Returns the number filled (0 on timeout), -EINTR when a signal interrupted the wait, or another
 * negative errno on a socket error. Frames from the previous poll are released first.
 */
int svrx_poll(struct svrx *rx, struct svrx_frame *frames, unsigned max, int timeout_ms);

/*
 * Waits until one of @n handles has frames (then svrx_poll(..., 0) each), for receivers of several
 * interfaces in one thread (PRP LAN A + LAN B). Returns > 0 when something is ready, 0 on timeout,
 * -EINTR on a signal. Handles in busy-poll mode are not slept on (returns 1 at once).
 */
int svrx_wait(struct svrx *const *rx, unsigned n, int timeout_ms);

/* Hands the frames of the last svrx_poll() back to the kernel (refills the fill ring / ring slots). */
void svrx_release(struct svrx *rx);

struct svrx_stats {
	uint64_t frames;	   /* delivered by svrx_poll */
	uint64_t bytes;
	uint64_t kernel_drops;	   /* AF_XDP rx_dropped; AF_PACKET tp_drops (ring full) */
	uint64_t ring_full;	   /* AF_XDP rx_ring_full */
	uint64_t fill_empty;	   /* AF_XDP rx_fill_ring_empty_descs */
	uint64_t invalid_descs;	   /* AF_XDP rx_invalid_descs */
	uint64_t filter_accepted;  /* AF_PACKET tp_packets (passed the socket filter) */
	/* XDP program verdicts (sum over CPUs; see bpf/sv_xdp.h) */
	uint64_t xdp_redirected;
	uint64_t xdp_pass_not_sv;
	uint64_t xdp_truncated;
	uint64_t xdp_not_allowed;
	uint64_t xdp_no_socket;
	uint64_t xdp_meta_failed;
	uint64_t xdp_vlan_hint;
	/* per-frame attributes */
	uint64_t ts_by_source[4];  /* index enum svrx_ts_source */
	uint64_t vlan_by_state[3]; /* index enum svrx_vlan_state */
	uint64_t wakeups;	   /* sendto/recvfrom kicks because of need_wakeup */
	uint64_t poll_errors;	   /* failed poll/receive calls, EINTR aside (AF_PACKET: ENETDOWN at link down) */
	uint64_t link_down;	   /* times the link was found down (svrx_link_check), the start included */
	int64_t link_down_ns;	   /* time it spent down (up to now while it still is), CLOCK_MONOTONIC */
};

/* State of the interface's link, as svrx_link_check() saw it. */
enum svrx_link {
	SVRX_LINK_UP = 0,
	SVRX_LINK_ADMIN_DOWN,  /* not IFF_UP ("ip link set IF down") */
	SVRX_LINK_NO_CARRIER,  /* IFF_UP without carrier (ETHTOOL_GLINK, else IFF_RUNNING): peer down, cable out */
};

/*
 * Reads the link's state now (SIOCGIFNAME, SIOCGIFFLAGS, ETHTOOL_GLINK: three ioctls; the control path's
 * job, a few times a second, never per frame) and accounts it: a change from up to down counts in link_down and starts
 * the clock of link_down_ns. A down-and-up too short to be seen here, which the socket reported as ENETDOWN
 * (AF_PACKET) since the last call, counts as one outage of no measurable length. Both back-ends keep their
 * socket across an outage and receive again when the link is back.
 * Returns the state (enum svrx_link) and, in *@prev, the state of the previous call (SVRX_LINK_UP at open;
 * SVRX_LINK_ADMIN_DOWN after such a short outage); -ENODEV when the interface is gone (deleted, or moved to
 * another network namespace): nothing more will be received on this handle.
 */
int svrx_link_check(struct svrx *rx, int64_t now_mono_ns, int *prev);
/* "up", "administratively down", "no carrier" */
const char *svrx_link_name(int state);
/* While the last svrx_link_check() found the link down: the @now_mono_ns (CLOCK_MONOTONIC) of the check that
 * first found it down. 0 while it is up: at open, and after a down-and-up between two checks. */
int64_t svrx_link_down_since(const struct svrx *rx);

/* The interface name the handle was opened on (the handle's copy: valid until svrx_close()). */
const char *svrx_ifname(const struct svrx *rx);

/* Reads the counters (kernel ones are fetched now). Returns 0 or -errno. */
int svrx_stats_get(struct svrx *rx, struct svrx_stats *st);

/* What is in use, for the start-up line and --json. Strings are static. */
struct svrx_info {
	const char *backend;	    /* "af_xdp" | "af_packet" */
	const char *xdp_mode;	    /* "native" | "skb" | "-" */
	const char *bind_mode;	    /* "zerocopy" | "copy" | "tpacket_v2" */
	const char *ts_source;	    /* expected: "xdp_meta" | "kernel_sw" | "user" | "hardware" */
	const char *vlan_oob;	    /* "xdp_hints" | "auxdata" | "unknown" */
	const char *multicast;	    /* "groups" | "allmulti" | "promiscuous" */
	bool need_wakeup;
	unsigned busy_poll_us;
	unsigned queues;	    /* sockets (AF_XDP) */
	uint32_t umem_frames;	    /* per socket */
	int ifindex;
};
void svrx_info_get(const struct svrx *rx, struct svrx_info *info);
/* One line, no newline: "af_xdp on eth0 (ifindex 3): native mode, copy, need_wakeup, 1 queue, ...". */
int svrx_describe(const struct svrx *rx, char *buf, size_t size);

/* Writes one JSON object: the modes in use (svrx_info) and the counters (svrx_stats). Returns sv_json's
 * sticky error. */
struct sv_json;
int svrx_json(struct sv_json *j, struct svrx *rx);

/* Detaches the XDP program, closes the sockets, frees the UMEM. NULL is a no-op. */
void svrx_close(struct svrx *rx);

/* "af_xdp" / "af_packet" / "native"|"skb"|"auto" / "hardware"|"xdp_meta"|"kernel_sw"|"user" */
int svrx_backend_parse(const char *s, enum svrx_backend *out);
int svrx_xdp_mode_parse(const char *s, enum svrx_xdp_mode *out);
const char *svrx_ts_source_name(enum svrx_ts_source s);
const char *svrx_vlan_state_name(enum svrx_vlan_state s);

#endif /* SVRX_H */

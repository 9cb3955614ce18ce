/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * ABI shared by bpf/sv_xdp.bpf.c and svsub's AF_XDP back-end (subscriber/svrx_afxdp.c).
 * __u32/__u64 only, no pointers, no bit-fields; user space checks the sizes with _Static_assert.
 */
#ifndef SV_XDP_H
#define SV_XDP_H

/* Per-reason verdict counters: index of the per-CPU array `sv_xdp_counters`. Never renumber. */
enum sv_xdp_counter {
	SV_XDP_CNT_REDIRECTED = 0,	/* SV frame redirected to the AF_XDP socket of its rx queue */
	SV_XDP_CNT_PASS_NOT_SV = 1,	/* not EtherType 0x88BA (after up to two VLAN tags): XDP_PASS */
	SV_XDP_CNT_TRUNCATED = 2,	/* frame ends inside the Ethernet header, a tag or the SV header */
	SV_XDP_CNT_NOT_ALLOWED = 3,	/* SV, but its APPID is not in the non-empty allow-list: XDP_PASS */
	SV_XDP_CNT_NO_SOCKET = 4,	/* SV, but no socket is bound on this rx queue: XDP_PASS */
	SV_XDP_CNT_META_FAILED = 5,	/* bpf_xdp_adjust_meta refused (driver without metadata room) */
	SV_XDP_CNT_VLAN_HINT = 6,	/* out-of-band VLAN tag recovered with bpf_xdp_metadata_rx_vlan_tag */
	SV_XDP_CNT_HW_TS = 7,		/* hardware receive stamp recovered with bpf_xdp_metadata_rx_timestamp */
	SV_XDP_CNT__MAX = 8,
};

/*
 * Written by the program in front of the packet (bpf_xdp_adjust_meta), read by user space at
 * (packet - sizeof(struct sv_xdp_meta)). `magic` is the last word, adjacent to the packet, so user space
 * can tell "metadata present" from headroom garbage; the low byte of `magic` carries SV_XDP_META_* flags.
 */
struct sv_xdp_meta {
	__u64 hw_ns;	/* NIC receive stamp from bpf_xdp_metadata_rx_timestamp() when ..._TS_HW */
	__u64 rx_ns;	/* receive time, on the clock named by the SV_XDP_META_CLOCK_* flag */
	__u32 vlan_tci; /* out-of-band 802.1Q TCI (PCP 3 bits, DEI 1, VID 12) when ..._VLAN_PRESENT */
	__u32 magic;	/* SV_XDP_META_MAGIC | flags */
};

#define SV_XDP_META_MAGIC 0x53565800u	   /* "SVX\0" */
#define SV_XDP_META_MAGIC_MASK 0xffffff00u
#define SV_XDP_META_CLOCK_TAI 0x01u	   /* rx_ns from bpf_ktime_get_tai_ns() (CLOCK_TAI) */
#define SV_XDP_META_CLOCK_BOOT 0x02u	   /* rx_ns from bpf_ktime_get_boot_ns() (CLOCK_BOOTTIME) */
#define SV_XDP_META_VLAN_PRESENT 0x04u	   /* the driver reported an out-of-band tag: vlan_tci valid */
#define SV_XDP_META_VLAN_NONE 0x08u	   /* the driver said: no out-of-band tag (-ENODATA) */
#define SV_XDP_META_TS_HW 0x10u	   /* hw_ns valid (the driver had a hardware stamp) */
/* neither VLAN flag: unknown (no hints kfunc in this attach mode / driver) */

/* Size of the allow-list hash map (APPIDs; empty map = every APPID). */
#define SV_XDP_MAX_APPIDS 1024
/* Size of the XSKMAP: rx queues that can have a socket. */
#define SV_XDP_MAX_QUEUES 64

#endif /* SV_XDP_H */

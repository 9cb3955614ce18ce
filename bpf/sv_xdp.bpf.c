// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * svsub's XDP program: IEC 61850-9-2 Sampled Values frames (EtherType 0x88BA, untagged or behind one or two
 * 802.1Q / 802.1ad tags) go to the AF_XDP socket bound on the frame's rx queue; everything else is
 * XDP_PASS, so the interface keeps working for every other protocol.
 *
 * Per frame, in front of the packet (bpf_xdp_adjust_meta), where the driver leaves metadata room:
 * struct sv_xdp_meta with the receive time (bpf_ktime_get_tai_ns(), CLOCK_TAI, the timescale smpSynch=2
 * streams count against; CLOCK_BOOTTIME on kernels without it, flagged) and, in the "hints" variant
 * (device-bound, native mode only), the out-of-band VLAN tag from bpf_xdp_metadata_rx_vlan_tag() and the
 * NIC's hardware stamp from bpf_xdp_metadata_rx_timestamp() when the driver has one.
 *
 * Every access is checked against data_end; each verdict is counted per reason in a per-CPU array.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "sv_xdp.h"

#define ETH_P_8021Q 0x8100
#define ETH_P_8021AD 0x88A8
#define ETH_P_SV 0x88BA
#define SV_ENODATA 61

/* Knobs set by user space before load (rodata: the verifier prunes what is off). */
const volatile __u32 cfg_allowlist = 0;	 /* 1: only APPIDs present in sv_xdp_appids are redirected */
const volatile __u32 cfg_meta = 1;	 /* 1: write struct sv_xdp_meta */
const volatile __u32 cfg_clock_tai = 1;	 /* 1: bpf_ktime_get_tai_ns (5.19+/6.1), 0: bpf_ktime_get_boot_ns */

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, SV_XDP_MAX_QUEUES);
	__type(key, __u32);
	__type(value, __u32);
} sv_xdp_xsks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SV_XDP_MAX_APPIDS);
	__type(key, __u32);	/* APPID in host order */
	__type(value, __u32);	/* unused (1) */
} sv_xdp_appids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SV_XDP_CNT__MAX);
	__type(key, __u32);
	__type(value, __u64);
} sv_xdp_counters SEC(".maps");

extern int bpf_xdp_metadata_rx_vlan_tag(const struct xdp_md *ctx, __be16 *vlan_proto,
					__u16 *vlan_tci) __ksym __weak;
extern int bpf_xdp_metadata_rx_timestamp(const struct xdp_md *ctx, __u64 *timestamp) __ksym __weak;

static __always_inline void count(__u32 reason)
{
	__u64 *v = bpf_map_lookup_elem(&sv_xdp_counters, &reason);

	if (v)
		*v += 1;
}

/* Returns the XDP verdict for one frame. @hints: the program is device-bound and may call the VLAN kfunc. */
static __always_inline int sv_xdp_handle(struct xdp_md *ctx, const int hints)
{
	__u64 now_ns = cfg_clock_tai ? bpf_ktime_get_tai_ns() : bpf_ktime_get_boot_ns();
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	__u32 q = ctx->rx_queue_index, appid, truncated = 0;
	void *cur;
	__u16 proto;

	if ((void *)(eth + 1) > data_end) {
		count(SV_XDP_CNT_TRUNCATED);
		return XDP_PASS;
	}
	proto = bpf_ntohs(eth->h_proto);
	/*
	 * Up to two tags: 802.1ad outer (S-tag) + 802.1Q inner, or 802.1Q alone (IEEE 802.1Q §9.5).
	 * A cursor advanced by constants, never data + a variable offset: without CAP_PERFMON the verifier
	 * (Spectre v1 sanitation) refuses packet-pointer arithmetic with a register operand ("pointer
	 * arithmetic with it prohibited for !root"), and svsub must load with CAP_BPF + CAP_NET_ADMIN alone.
	 */
	cur = (void *)(eth + 1);
#pragma unroll
	for (int i = 0; i < 2; i++) {
		if (proto != ETH_P_8021Q && proto != ETH_P_8021AD)
			break;
		if (cur + 4 > data_end) {
			count(SV_XDP_CNT_TRUNCATED);
			return XDP_PASS;
		}
		proto = bpf_ntohs(*(__be16 *)(cur + 2));
		cur += 4;
	}
	if (proto != ETH_P_SV) {
		count(SV_XDP_CNT_PASS_NOT_SV);
		return XDP_PASS;
	}
	/*
	 * SV header: APPID, Length, Reserved1, Reserved2 (IEC 61850-9-2 §8.5.2). A frame that carries the SV
	 * EtherType but not a whole header still goes to user space when no allow-list is set, so the
	 * decoder there counts it by name (header_truncated) instead of it vanishing in the stack.
	 */
	if (cur + 8 > data_end) {
		count(SV_XDP_CNT_TRUNCATED);
		if (cfg_allowlist)
			return XDP_PASS;
		truncated = 1;
	} else if (cfg_allowlist) {
		appid = bpf_ntohs(*(__be16 *)cur);
		if (!bpf_map_lookup_elem(&sv_xdp_appids, &appid)) {
			count(SV_XDP_CNT_NOT_ALLOWED);
			return XDP_PASS;
		}
	}
	if (!bpf_map_lookup_elem(&sv_xdp_xsks, &q)) {
		count(SV_XDP_CNT_NO_SOCKET);
		return XDP_PASS;
	}

	if (cfg_meta) {
		struct sv_xdp_meta *meta;
		__u32 flags = cfg_clock_tai ? SV_XDP_META_CLOCK_TAI : SV_XDP_META_CLOCK_BOOT;
		__u32 tci = 0;
		__u64 hw_ns = 0;

		if (hints) {
			__be16 vproto = 0;
			__u16 vtci = 0;
			int r;

			if (bpf_xdp_metadata_rx_timestamp(ctx, &hw_ns) == 0 && hw_ns) {
				flags |= SV_XDP_META_TS_HW;
				count(SV_XDP_CNT_HW_TS);
			}
			r = bpf_xdp_metadata_rx_vlan_tag(ctx, &vproto, &vtci);

			if (r == 0) {
				flags |= SV_XDP_META_VLAN_PRESENT;
				tci = vtci;
				count(SV_XDP_CNT_VLAN_HINT);
			} else if (r == -SV_ENODATA) {
				flags |= SV_XDP_META_VLAN_NONE;
			}
		}
		if (bpf_xdp_adjust_meta(ctx, -(int)sizeof(*meta)) == 0) {
			meta = (void *)(long)ctx->data_meta;
			if ((void *)(meta + 1) <= (void *)(long)ctx->data) {
				meta->hw_ns = hw_ns;
				meta->rx_ns = now_ns;
				meta->vlan_tci = tci;
				meta->magic = SV_XDP_META_MAGIC | flags;
			}
		} else {
			count(SV_XDP_CNT_META_FAILED);
		}
	}
	if (!truncated)
		count(SV_XDP_CNT_REDIRECTED);
	return bpf_redirect_map(&sv_xdp_xsks, q, XDP_PASS);
}

SEC("xdp")
int sv_xdp_redirect(struct xdp_md *ctx)
{
	return sv_xdp_handle(ctx, 0);
}

/* Device-bound variant (BPF_F_XDP_DEV_BOUND_ONLY, native mode): asks the driver for the VLAN tag that a
 * bridge or NIC offload moved out of the frame bytes. Loaded only when the kernel and driver accept it. */
SEC("xdp")
int sv_xdp_redirect_hints(struct xdp_md *ctx)
{
	return sv_xdp_handle(ctx, 1);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";

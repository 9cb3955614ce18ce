// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * svsub's XDP program: IEC 61850-9-2 Sampled Values frames (EtherType 0x88BA, untagged, behind one or two
 * VLAN tags, with an HSR tag: sv_wire.h's rule, walked by sv_parse.h's sv_parse_l2 as the codec and svtrace
 * do) go to the AF_XDP socket bound on the frame's rx queue; everything else is XDP_PASS, so the interface
 * keeps working for every other protocol.
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
#include "sv_parse.h"
#include "sv_xdp.h"

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

/* The link-layer window sv_parse_l2 walks, copied out of the packet: the walk's variable offsets are bounded
 * loads of a map value (into the packet they would need a data_end check each, into the stack CAP_PERFMON). */
struct sv_xdp_window {
	__u8 w[SV_PARSE_L2_WINDOW];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sv_xdp_window);
} sv_xdp_scratch SEC(".maps");

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
	__u32 q = ctx->rx_queue_index, zero = 0, n = 0, truncated = 0;
	struct sv_xdp_window *win = bpf_map_lookup_elem(&sv_xdp_scratch, &zero);
	struct sv_parse l2 = {};

	if (!win)
		return XDP_PASS;
	/* The octets from the first EtherType on: four words of a whole SV frame, or what a shorter one has. */
	if (data + SV_ETH_ADDRS_LEN + SV_PARSE_L2_WINDOW <= data_end) {
#pragma unroll
		for (int i = 0; i < SV_PARSE_L2_WINDOW / 8; i++)
			((__u64 *)win->w)[i] = ((const __u64 *)(data + SV_ETH_ADDRS_LEN))[i];
		n = SV_PARSE_L2_WINDOW;
	} else {
#pragma unroll
		for (int i = 0; i < SV_PARSE_L2_WINDOW; i++) {
			if (data + SV_ETH_ADDRS_LEN + i + 1 > data_end)
				break;
			win->w[i] = *(const __u8 *)(data + SV_ETH_ADDRS_LEN + i);
			n = i + 1;
		}
	}
	switch (sv_parse_l2(win->w, n, &l2)) {
	case SV_PARSE_L2_SHORT:
		count(SV_XDP_CNT_TRUNCATED);
		return XDP_PASS;
	case SV_PARSE_NOT_SV:
		count(SV_XDP_CNT_PASS_NOT_SV);
		return XDP_PASS;
	case SV_PARSE_HDR_SHORT:
		/* A frame that carries the SV EtherType but not a whole SV header still goes to user space when no
		 * allow-list is set, so the decoder there counts it by name (header_truncated) instead of it
		 * vanishing in the stack. */
		count(SV_XDP_CNT_TRUNCATED);
		if (cfg_allowlist)
			return XDP_PASS;
		truncated = 1;
		break;
	default:
		if (cfg_allowlist) {
			__u32 appid = l2.appid;

			if (!bpf_map_lookup_elem(&sv_xdp_appids, &appid)) {
				count(SV_XDP_CNT_NOT_ALLOWED);
				return XDP_PASS;
			}
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

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Test program (tests/net/svtrace_vlan_offload.sh): the publisher's VLAN device, where the lab's kernel has neither
 * 8021q nor act_vlan. On p0's egress (clsact, direct action) it gives the SV frames of APPID 0x4109 an 802.1Q tag
 * VID 9 and those of APPID 0x410a an 802.1ad tag VID 300, out of band (bpf_skb_vlan_push: skb->vlan_tci, as a
 * VLAN device on an offloading NIC does), so that they reach T1 with the tag outside their octets. The APPID is
 * read with bpf/sv_parse.h. Everything passes.
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "sv_parse.h"

#define PUSH_8021Q_APPID 0x4109
#define PUSH_8021AD_APPID 0x410a

SEC("tc")
int sv_vlan_push(struct __sk_buff *skb)
{
	/* on the stack: a variable offset there needs CAP_PERFMON, which tc's loader (root) has */
	__u8 w[SV_PARSE_L2_WINDOW] = {};
	struct sv_parse p = {};
	__u64 n;

	if (skb->len <= SV_ETH_ADDRS_LEN)
		return TC_ACT_OK;
	n = skb->len - SV_ETH_ADDRS_LEN;
	if (n > SV_PARSE_L2_WINDOW)
		n = SV_PARSE_L2_WINDOW;
	/* Keep the verifier's view of the size bounded whatever clang folds. */
	asm volatile("%0 &= 0x3f" : "+r"(n));
	if (n < 1 || n > SV_PARSE_L2_WINDOW || bpf_skb_load_bytes(skb, SV_ETH_ADDRS_LEN, w, n))
		return TC_ACT_OK;
	if (sv_parse_l2(w, (__u32)n, &p) != SV_PARSE_HDR)
		return TC_ACT_OK;
	if (p.appid == PUSH_8021Q_APPID)
		bpf_skb_vlan_push(skb, bpf_htons(SV_ETH_P_8021Q), 4 << 13 | 9);
	else if (p.appid == PUSH_8021AD_APPID)
		bpf_skb_vlan_push(skb, bpf_htons(SV_ETH_P_8021AD), 300);
	return TC_ACT_OK;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vm/lab's SV classifier for its htb bottleneck (--noise net): SV frames into class 1:10, everything else to the
 * qdisc's default class. The kernels the lab runs on may lack cls_basic/em_meta, so the match is this cls_bpf
 * program, loaded by tc(8) from its object (`bpf obj lab_prio.bpf.o sec classifier`): no maps, no bpffs, no
 * skeleton. The uapi context (linux/bpf.h), not vmlinux.h: __sk_buff's offsets are the kernel's ABI, nothing to
 * relocate.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define LAB_PRIO_SV_CLASS 0x10010	/* htb class 1:10 */
#define LAB_PRIO_SV_SKB_PRIORITY 6	/* svpub's SO_PRIORITY in the lab */
#define LAB_PRIO_SV_MIN_PCP 4		/* 802.1Q PCP of SV: 4 and above (UCA 9-2LE defaults to 4) */

/*
 * cls_bpf (not direct-action): the return value is the class id, 0 = no match (htb's default class).
 * skb->priority set by the publisher's SO_PRIORITY does not survive the move into another namespace, so the
 * priority is also read where it travels on the wire: the 802.1Q PCP (out of band after the bridge).
 */
SEC("classifier")
int sv_prio(struct __sk_buff *skb)
{
	if (skb->priority == LAB_PRIO_SV_SKB_PRIORITY)
		return LAB_PRIO_SV_CLASS;
	if (skb->vlan_present && (skb->vlan_tci >> 13) >= LAB_PRIO_SV_MIN_PCP)
		return LAB_PRIO_SV_CLASS;
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";

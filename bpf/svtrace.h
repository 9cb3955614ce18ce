/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * svtrace's one ABI header, shared by bpf/svtrace.bpf.c and the user-space loader.
 * Only __u8/__u32/__u64 (and arrays of them): no pointers, no bit-fields, no enums in structs, so the
 * layout is the same for clang -target bpf and for gcc x86_64/aarch64. User space _Static_asserts the
 * sizes below (libbpf-tools' runqlat.h pattern; pwru shows what drift costs).
 *
 * Points (DESIGN.md words): T1 ingress on the host, T2a egress toward one guest, T2b taken by the guest's
 * feeder (lab veth: the skb consumed in the receiving namespace; tap: last free in the vhost/QEMU thread),
 * or dropped with the kernel's skb_drop_reason.
 */
#ifndef SVTRACE_H
#define SVTRACE_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define SVTRACE_SVID_MAX 64		/* svID bytes copied into events (longer: truncated, flagged) */
#define SVTRACE_COMM_LEN 16		/* TASK_COMM_LEN */
#define SVTRACE_MAX_PORTS 16		/* ingress + egress interfaces in the filter map */
#define SVTRACE_PARSE_WINDOW 256	/* bytes of the SV PDU read in BPF to find svID/smpCnt */

/* svtrace_port.role */
#define SVTRACE_ROLE_INGRESS 1u
#define SVTRACE_ROLE_EGRESS 2u

/* svtrace_event.type / svtrace_take_event.type */
#define SVTRACE_EV_INGRESS 1u		/* T1: net:netif_receive_skb on an ingress port */
#define SVTRACE_EV_EGRESS 2u		/* T2a: net:net_dev_start_xmit on an egress port */
#define SVTRACE_EV_TAKEN 3u		/* T2b: skb:consume_skb of an skb seen at T2a */
#define SVTRACE_EV_DROP 4u		/* skb:kfree_skb of an skb seen at T2a (reason in .reason) */
#define SVTRACE_EV_PORT_DROP 5u		/* skb:kfree_skb of an untracked SV skb on a filtered port */
#define SVTRACE_EV_UPCALL 6u		/* openvswitch:ovs_dp_upcall of an SV frame (optional) */

/* svtrace_event.flags */
#define SVTRACE_F_VLAN_INBAND 0x1u	/* 802.1Q tag read from the frame bytes */
#define SVTRACE_F_VLAN_OOB 0x2u		/* 802.1Q tag read from skb->vlan_tci (offloaded) */
#define SVTRACE_F_SVID_TRUNC 0x4u	/* svID longer than SVTRACE_SVID_MAX */
#define SVTRACE_F_RX_SEEN 0x8u		/* take event: feeder is the thread that received it in the guest ns */

/* Per-CPU counters (array map "counters", index below): never silent. */
#define SVTRACE_CNT_LOST 0		/* ring buffer reservation failed: event lost */
#define SVTRACE_CNT_PARSE_ERR 1		/* 0x88BA frame whose savPdu could not be walked */
#define SVTRACE_CNT_TRACK_FULL 2	/* skb tracking map update failed */
#define SVTRACE_CNT_SV_SEEN 3		/* SV frames parsed on filtered ports */
#define SVTRACE_CNT_FILTERED 4		/* SV frames rejected by the APPID filter */
#define SVTRACE_CNT_STALE 5		/* tracked skb freed after the staleness bound: ignored */
#define SVTRACE_CNT_OVS_ACTION 6	/* openvswitch:ovs_do_execute_action hits (optional probe) */
#define SVTRACE_CNT_TUN_XMIT 7		/* kprobe tun_net_xmit hits (optional probe) */
#define SVTRACE_CNT_NR 8

/* Key of the interface filter map: ifindex values repeat across namespaces, the pair does not. */
struct svtrace_port_key {
	__u32 netns_ino;	/* inode of the device's network namespace (/proc/PID/ns/net) */
	__u32 ifindex;
};

struct svtrace_port {
	__u32 role;		/* SVTRACE_ROLE_* */
	__u32 index;		/* user space's port number (0 = ingress, 1.. = egress list order) */
};

/* Frame key common to every event (must stay the first members of both event structs). */
#define SVTRACE_EVENT_HEAD						\
	__u32 type;		/* SVTRACE_EV_* */				\
	__u32 flags;		/* SVTRACE_F_* */				\
	__u64 ts_mono_ns;	/* bpf_ktime_get_ns(): CLOCK_MONOTONIC */	\
	__u64 skb;		/* skb address: identity between T2a and T2b, never dereferenced */ \
	__u32 ifindex;		/* device at the point (0 when the skb had none) */ \
	__u32 netns_ino;	/* its namespace inode (0 when unknown) */	\
	__u32 port;		/* svtrace_port.index of the port (egress port for T2b/drop) */ \
	__u32 cpu;							\
	__u32 tid;		/* current thread at the point */		\
	__u32 pid;		/* its process (tgid) */			\
	__u32 appid;							\
	__u32 smpcnt;		/* first ASDU's smpCnt */			\
	__u32 vlan_tci;		/* 802.1Q TCI (flags say from where), else 0 */ \
	__u32 svid_len;		/* bytes valid in svid (<= SVTRACE_SVID_MAX) */	\
	__u32 reason;		/* drop: enum skb_drop_reason value (name from BTF in user space) */ \
	__u32 pad0;							\
	__u8 comm[SVTRACE_COMM_LEN];					\
	__u8 svid[SVTRACE_SVID_MAX];	/* first ASDU's svID, not NUL-terminated */

/* T1, T2a, port drops, upcalls. */
struct svtrace_event {
	SVTRACE_EVENT_HEAD
};

/* T2b taken / dropped: who fed the frame to the guest and how long it waited for a CPU. */
struct svtrace_take_event {
	SVTRACE_EVENT_HEAD
	__u32 feeder_tid;	/* the thread that moved it into the guest (napi kthread, vhost worker) */
	__u32 feeder_pid;
	__u64 wait_ns;		/* feeder's last sched_wakeup -> sched_switch-in delay (0 if unknown) */
	__u32 holder_pid;	/* what ran on the feeder's CPU longest while it waited */
	__u32 holder_policy;	/* task->policy: 0 OTHER, 1 FIFO, 2 RR, 3 BATCH, 5 IDLE, 6 DEADLINE */
	__u32 holder_prio;	/* task->rt_priority for FIFO/RR, else 120 + nice (task->static_prio) */
	__u32 holder_kprio;	/* task->prio (kernel's effective priority) */
	__u8 feeder_comm[SVTRACE_COMM_LEN];
	__u8 holder_comm[SVTRACE_COMM_LEN];
};

#define SVTRACE_EVENT_SIZE 152
#define SVTRACE_TAKE_EVENT_SIZE 216

/* rodata knobs set by the loader before load. */
struct svtrace_cfg {
	__u32 appid_filter;	/* 0 = all, else only this APPID */
	__u32 pad;
	__u64 stale_ns;		/* tracked skbs older than this at free are ignored (slab reuse) */
};

#endif /* SVTRACE_H */

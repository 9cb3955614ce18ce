/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * svtrace's one ABI header, shared by bpf/svtrace.bpf.c and the user-space loader.
 * Only __u8/__u16/__u32/__u64 (and arrays of them): no pointers, no bit-fields, no enums in structs, so
 * the layout is the same for clang -target bpf and for gcc x86_64/aarch64. User space _Static_asserts the
 * sizes below (libbpf-tools' runqlat.h pattern; pwru shows what drift costs).
 *
 * Points (DESIGN.md words): T1 ingress on the host, T2a egress toward one guest, T2b taken by the guest's
 * feeder (lab veth: the skb consumed in the receiving namespace; tap: last free in the vhost/QEMU thread),
 * or dropped with the kernel's skb_drop_reason.
 *
 * Data path: the frames are correlated IN BPF. T1 stores (stream, smpCnt) -> T1 in the map "inflight";
 * T2a looks it up and stores skb -> (key, T1, T2a) in "tracked"; T2b (the free) emits ONE fixed
 * svtrace_copy event per frame and egress copy with all three points. Streams get a small id in BPF
 * (map "streams", keyed by APPID + the whole svID: no collisions) announced once by a stream event.
 */
#ifndef SVTRACE_H
#define SVTRACE_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define SVTRACE_SVID_MAX 64		/* svID bytes kept (longer: truncated, flagged) */
#define SVTRACE_COMM_LEN 16		/* TASK_COMM_LEN */
#define SVTRACE_MAX_PORTS 16		/* ingress + egress interfaces in the filter (rodata) */
#define SVTRACE_MAX_STREAMS 256		/* stream ids handed out in BPF */
#define SVTRACE_PARSE_WINDOW 256	/* bytes of the SV PDU read in BPF to find svID/smpCnt */
#define SVTRACE_INFLIGHT_SLOTS 1024	/* T1 slots per stream (by smpCnt): frames in flight at once */
#define SVTRACE_T1_MAX_AGE_NS 500000000ull /* a T1 older than this at T2a is another second's frame */

/* svtrace_copy.type */
#define SVTRACE_EV_TAKEN 3u		/* T2b: skb:consume_skb of an skb seen at T2a */
#define SVTRACE_EV_DROP 4u		/* skb:kfree_skb of an skb seen at T2a (reason in .reason) */
#define SVTRACE_EV_PORT_DROP 5u		/* skb:kfree_skb of an SV skb on a port before T2a (t2b = drop time) */
#define SVTRACE_EV_UPCALL 6u		/* openvswitch:ovs_dp_upcall of an SV frame (optional) */
#define SVTRACE_EV_MISSING 7u		/* T1 seen, no T2a on the ports in .reason (mask, bit p = port p) */

/* svtrace_copy.flags */
#define SVTRACE_F_VLAN_INBAND 0x1u	/* 802.1Q tag read from the frame bytes */
#define SVTRACE_F_VLAN_OOB 0x2u		/* 802.1Q tag read from skb->vlan_tci (offloaded) */
#define SVTRACE_F_SVID_TRUNC 0x4u	/* svID longer than SVTRACE_SVID_MAX */
#define SVTRACE_F_RX_SEEN 0x8u		/* feeder is the thread that received it in the guest ns */
#define SVTRACE_F_T1_FIRST 0x10u	/* first copy of this frame to pass T2a: it carries the T1 record */
#define SVTRACE_F_OTHER_NS 0x20u	/* freed in another namespace than the egress port's (the guest's) */
#define SVTRACE_F_NOT_FREED 0x40u	/* (user space) tracked skb never freed: missing at T2b */
#define SVTRACE_F_LATE 0x80u		/* TAKEN/DROP over the threshold: a svtrace_late_ev with names */

/* Per-CPU counters (array map "counters", index below): never silent. */
#define SVTRACE_CNT_LOST 0		/* ring buffer reservation failed: event lost */
#define SVTRACE_CNT_PARSE_ERR 1		/* 0x88BA frame whose savPdu could not be walked */
#define SVTRACE_CNT_TRACK_FULL 2	/* skb / frame tracking map update failed */
#define SVTRACE_CNT_SV_SEEN 3		/* SV frames parsed on filtered ports */
#define SVTRACE_CNT_FILTERED 4		/* SV frames rejected by the APPID filter */
#define SVTRACE_CNT_STALE 5		/* tracked skb freed after the staleness bound: ignored */
#define SVTRACE_CNT_OVS_ACTION 6	/* openvswitch:ovs_do_execute_action hits (optional probe) */
#define SVTRACE_CNT_TUN_XMIT 7		/* kprobe tun_net_xmit hits (optional probe) */
#define SVTRACE_CNT_STREAMS_FULL 8	/* frames of streams beyond SVTRACE_MAX_STREAMS: not traced */
#define SVTRACE_CNT_EVENTS 9		/* events written to the ring */
#define SVTRACE_CNT_NR 10

/* Stream identity (map "streams" key): APPID and the whole svID, zero-padded. */
struct svtrace_stream_key {
	__u16 appid;
	__u16 svid_len;
	__u8 svid[SVTRACE_SVID_MAX];
};

struct svtrace_stream_val {
	__u32 id;		/* < SVTRACE_MAX_STREAMS */
	__u32 pad;
	__u64 frames;		/* seen at T1 */
};

/* Frame key: unique within a second (smpCnt restarts every second). */
struct svtrace_frame_key {
	__u32 stream;
	__u32 smpcnt;
};

/* Map "inflight" value, slot [stream * SVTRACE_INFLIGHT_SLOTS + smpCnt % SLOTS]; free when t1_ns == 0. */
struct svtrace_inflight {
	__u64 t1_ns;
	__u32 tid1;
	__u16 cpu1;
	__u16 smpcnt;
	__u32 seen;		/* ports (bit p) that passed T2a */
	__u32 predrop;		/* ports (bit p) where it was dropped before T2a */
};

/*
 * One event per frame and egress copy (and MISSING/PORT_DROP/UPCALL). Times are bpf_ktime_get_ns()
 * (CLOCK_MONOTONIC), 0 = point not seen. 80 octets.
 */
struct svtrace_copy {
	__u8 type;		/* SVTRACE_EV_* */
	__u8 port;		/* egress port index (1..), 0 for MISSING/UPCALL */
	__u16 flags;		/* SVTRACE_F_* */
	__u32 stream;		/* BPF stream id */
	__u16 smpcnt;		/* first ASDU's smpCnt */
	__u16 vlan_tci;		/* 802.1Q TCI (flags say from where), else 0 */
	__u32 reason;		/* DROP/PORT_DROP: enum skb_drop_reason; MISSING: port mask */
	__u64 t1_ns;
	__u64 t2a_ns;
	__u64 t2b_ns;
	__u32 tid1, tid2a, tid2b;	/* thread at each point */
	__u16 cpu1, cpu2a;
	__u16 cpu2b;
	__u8 holder_policy;	/* task->policy: 0 OTHER, 1 FIFO, 2 RR, 3 BATCH, 5 IDLE, 6 DEADLINE */
	__u8 holder_prio;	/* rt_priority for FIFO/RR, else nice + 20 */
	__u32 feeder_tid;	/* the thread that moved it into the guest (napi kthread, vhost worker) */
	__u32 wait_ns;		/* feeder's last sched_wakeup -> run delay (saturated), 0 unknown */
	__u32 holder_pid;	/* what ran on the feeder's CPU longest while it waited, 0 none */
	__u32 ifindex2b;	/* device at the free (0 when the skb had none) */
	__u32 netns2b;		/* its namespace inode */
};

/* A copy over the late threshold: the same, plus the names (only late frames pay for them). */
struct svtrace_late_ev {
	struct svtrace_copy c;	/* c.type = TAKEN or DROP */
	__u8 feeder_comm[SVTRACE_COMM_LEN];
	__u8 holder_comm[SVTRACE_COMM_LEN];
};

#define SVTRACE_COPY_SIZE 80
#define SVTRACE_LATE_SIZE 112

#endif /* SVTRACE_H */

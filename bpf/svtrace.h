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
 * T2a looks it up and stores skb -> (key, T1, T2a) in "track" (a direct-mapped array: slot = hash of the
 * skb address, claimed by compare-and-exchange in "track_claim"; a slot held by another live skb falls
 * back to the hash "tracked", counted); T2b (the free) then either adds the copy's three hop latencies to the
 * histograms in BPF (map "hist" per stream, port and hop; a port's is the sum of its streams': the default
 * summary and --live modes), or emits ONE fixed svtrace_copy event per frame and egress copy with all
 * three points (--record: records are per frame; and always for drops, late frames with their names,
 * latencies outside the histograms' range, missing frames, OVS upcalls). Streams get a small id in BPF
 * (map "streams", keyed by APPID + the whole svID: no collisions), read by user space when first seen.
 */
#ifndef SVTRACE_H
#define SVTRACE_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define SVTRACE_SVID_MAX 64		/* svID octets kept in BPF (longer: truncated, reported) */
#define SVTRACE_COMM_LEN 16		/* TASK_COMM_LEN */
#define SVTRACE_MAX_PORTS 16		/* ingress + egress interfaces in the filter (rodata) */
#define SVTRACE_MAX_STREAMS 256		/* stream ids handed out in BPF */
#define SVTRACE_INFLIGHT_SLOTS 1024	/* T1 slots per stream (by smpCnt): frames in flight at once */
#define SVTRACE_T1_MAX_AGE_NS 500000000ull /* a T1 older than this at T2a is another second's frame */

/* svtrace_copy.type */
#define SVTRACE_EV_TAKEN 3u		/* T2b: skb:consume_skb of an skb seen at T2a */
#define SVTRACE_EV_DROP 4u		/* skb:kfree_skb of an skb seen at T2a (reason in .reason) */
#define SVTRACE_EV_PORT_DROP 5u		/* skb:kfree_skb of an SV skb on a port before T2a (t2b = drop time) */
#define SVTRACE_EV_UPCALL 6u		/* openvswitch:ovs_dp_upcall of an SV frame (optional) */
#define SVTRACE_EV_MISSING 7u		/* T1 seen, no T2a on the ports in .reason (mask, bit p = port p) */

/* svtrace_copy.flags */
#define SVTRACE_F_VLAN_INBAND 0x1u	/* VLAN tag read from the frame bytes (the inner one of two) */
#define SVTRACE_F_VLAN_OOB 0x2u		/* VLAN tag read from skb->vlan_tci (the bytes had none: offloaded) */
#define SVTRACE_F_SVID_TRUNC 0x4u	/* svID longer than SVTRACE_SVID_MAX */
#define SVTRACE_F_RX_SEEN 0x8u		/* feeder is the thread that received it in the guest ns */
#define SVTRACE_F_T1_FIRST 0x10u	/* first copy of this frame to pass T2a: it carries the T1 record */
#define SVTRACE_F_OTHER_NS 0x20u	/* freed in another namespace than the egress port's (the guest's) */
#define SVTRACE_F_NOT_FREED 0x40u	/* (user space) tracked skb never freed: missing at T2b */
#define SVTRACE_F_LATE 0x80u		/* TAKEN/DROP over the threshold: a svtrace_late_ev with names */
/* T2a ran in a thread's own context (not an interrupt's), another than T1's: that thread carried the
 * frame between the two (a user-space switch's thread: Open vSwitch's netdev datapath, a pmd thread, an
 * upcall handler); its last wait comes with a late frame (svtrace_late_ev.carrier_*) */
#define SVTRACE_F_CARRIED 0x100u

/* Per-CPU counters (array map "counters", index below): never silent. */
#define SVTRACE_CNT_LOST 0		/* ring buffer reservation failed: event lost */
#define SVTRACE_CNT_PARSE_ERR 1		/* 0x88BA frame whose savPdu could not be walked */
#define SVTRACE_CNT_TRACK_FULL 2	/* skb / frame tracking map update failed */
#define SVTRACE_CNT_WALKS 3		/* savPdu walks: the frame's shape was not in the per-CPU cache */
#define SVTRACE_CNT_FILTERED 4		/* SV frames rejected by the APPID filter */
#define SVTRACE_CNT_STALE 5		/* tracked skb freed after the staleness bound: ignored */
#define SVTRACE_CNT_OVS_ACTION 6	/* openvswitch:ovs_do_execute_action hits (optional probe) */
#define SVTRACE_CNT_TUN_XMIT 7		/* kprobe tun_net_xmit hits (optional probe) */
#define SVTRACE_CNT_STREAMS_FULL 8	/* frames of streams beyond SVTRACE_MAX_STREAMS: not traced */
#define SVTRACE_CNT_EVENTS 9		/* events written to the ring */
#define SVTRACE_CNT_TRACK_COLL 10	/* T2a slot in "track" held by another live skb: hash "tracked" used */
#define SVTRACE_CNT_AGGREGATED 11	/* copies accounted in the BPF histograms (no event, log full) */
#define SVTRACE_CNT_INGRESS_DROP 12	/* SV frames dropped on the ingress port (before T1's hops) */
/* SV frames the ingress port's own stack freed as UNHANDLED_PROTO: no loss when a user-space switch
 * (Open vSwitch's netdev datapath) took its copy through a packet socket; counted, not dropped */
#define SVTRACE_CNT_INGRESS_UNHANDLED 13
#define SVTRACE_CNT_WHY_SKIPPED 14	/* late copies not decomposed: over the why budget (why_gap_ns) */
#define SVTRACE_CNT_NR 15

/*
 * The hop log (summary / --live modes): a copy taken in time leaves its two hop latencies in a per-CPU
 * single-producer ring ("hlog", --log-entries per CPU, default SVTRACE_HLOG_ENTRIES), plain stores
 * into sequential lines, mmap()ed by user space, which adds them to its histograms exactly (sum, min
 * and max included). Three atomic adds into three histograms' scattered cache lines per copy cost more than
 * twice as much in BPF. The producer is the free's program on that CPU (a program never runs nested
 * on one CPU); "hlog_pos" [cpu]: head (the producer's line, with its cached limit) and tail (user
 * space's line). A full ring (user space held off for longer than the ring lasts) is not a loss: the
 * copy then goes into the in-BPF histograms below (SVTRACE_CNT_AGGREGATED).
 */
#define SVTRACE_HLOG_ENTRIES 16384	/* per CPU, a power of two: 128 KiB, ~70 ms of 14400 x 16 copies */

/*
 * An entry is one word (8 octets: 8 copies a line, half the lines crossing to user space of two 32-bit
 * hops and a stream id): d1 = T1 -> T2a in ns (bits 0-25; SVTRACE_HLOG_NO_T1 when the copy had no T1),
 * d2 = T2a -> T2b (bits 26-51; T1 -> T2b = d1 + d2), the egress port 1.. (bits 52-55) and the BPF stream
 * id (bits 56-63). A hop of SVTRACE_HLOG_LIMIT_NS (67 ms) or more does not fit: that copy goes into the
 * in-BPF histograms (such a copy is late, an event, unless late detection is off).
 */
#define SVTRACE_HLOG_D_BITS 26
#define SVTRACE_HLOG_LIMIT_NS ((1u << SVTRACE_HLOG_D_BITS) - 1)	/* hops below it fit */
#define SVTRACE_HLOG_NO_T1 SVTRACE_HLOG_LIMIT_NS			/* d1 when the copy had no T1 */

struct svtrace_hent {
	__u64 w;
};

_Static_assert(SVTRACE_MAX_PORTS <= 16 && SVTRACE_MAX_STREAMS <= 256, "hop log entry fields");

static inline __u64 svtrace_hent_pack(__u32 d1, __u32 d2, __u32 port, __u32 stream)
{
	return (__u64)d1 | (__u64)d2 << SVTRACE_HLOG_D_BITS | (__u64)(port & 15) << 52 | (__u64)(stream & 255) << 56;
}

static inline __u32 svtrace_hent_d1(__u64 w)
{
	return (__u32)(w & SVTRACE_HLOG_LIMIT_NS);
}

static inline __u32 svtrace_hent_d2(__u64 w)
{
	return (__u32)(w >> SVTRACE_HLOG_D_BITS) & SVTRACE_HLOG_LIMIT_NS;
}

static inline __u32 svtrace_hent_port(__u64 w)
{
	return (__u32)(w >> 52) & 15;
}

static inline __u32 svtrace_hent_stream(__u64 w)
{
	return (__u32)(w >> 56);
}

struct svtrace_hlog_pos {
	__u64 head;		/* next entry the producer writes (written by BPF only) */
	__u64 lim;		/* producer's cached tail + entries per CPU */
	__u64 cpu_hot[6];	/* the BPF programs' own per-CPU words (svtrace.bpf.c: struct sv_cpu_hot), in
				 * the line they touch anyway; user space never reads them */
	__u64 tail;		/* next entry user space reads (written by user space only) */
	__u64 pad1[7];
};

/*
 * In-BPF histograms (summary / --live modes): map "hist", one per (stream, egress port, hop), with the
 * bucket index of sv_stats (common/sv_stats.h: log-linear, 64 sub-buckets per power of two), so user
 * space merges them exactly; a port's histogram is the sum of its streams' (user space). Shared by
 * all CPUs (memory does not grow with the CPU count: 256 streams x 3 hops x 5.5 KiB per egress port):
 * one atomic add per value, min and max exact (max of ~min), no sum (the mean comes from the buckets).
 * Buckets are 32-bit: user space takes the growth (modulo 2^32) at least every
 * SVTRACE_HIST_MERGE_S seconds, far below the 2^32 / 14400 s (3.4 days) a bucket takes to wrap.
 * Values must be below SVTRACE_HIST_LIMIT_NS (134 ms, far beyond any SV deadline): a copy with a
 * larger (or negative) hop goes to the ring as an event and is accounted exactly in user space.
 */
#define SVTRACE_HIST_LIMIT_NS (1ull << 27)
#define SVTRACE_HIST_SUB_BITS 6		/* = SV_STATS_SUB_BITS */
#define SVTRACE_HIST_BUCKETS 1408	/* index of SVTRACE_HIST_LIMIT_NS - 1, + 1 */
#define SVTRACE_HIST_MERGE_S 10
#define SVTRACE_HOPS 3			/* T1-T2a, T2a-T2b, T1-T2b (svtrace_corr.h enum svtrace_hop) */

struct svtrace_hist {
	__u64 max;
	__u64 nmin;		/* ~min (0: empty), so that both are a max */
	__u32 bucket[SVTRACE_HIST_BUCKETS];
};

/* svtrace_stream_val.flags */
#define SVTRACE_SF_FILTERED 0x1u	/* excluded by the svID filter: not traced */

/* Stream identity (map "streams" key): APPID and the whole svID, zero-padded. */
struct svtrace_stream_key {
	__u16 appid;
	__u16 svid_len;		/* on the wire (up to 129 octets): above SVTRACE_SVID_MAX, svid[] holds
				 * only the first SVTRACE_SVID_MAX octets (user space reports it) */
	__u8 svid[SVTRACE_SVID_MAX];
};

struct svtrace_stream_val {
	__u32 id;		/* < SVTRACE_MAX_STREAMS */
	__u32 flags;		/* SVTRACE_SF_* */
	__u64 frames;		/* unused: T1 counts are in the per-CPU array "stream_frames" */
};

/* Frame key: unique within a second (smpCnt restarts every second). */
struct svtrace_frame_key {
	__u32 stream;
	__u32 smpcnt;
};

/* Map "inflight" value, slot [stream * SVTRACE_INFLIGHT_SLOTS + smpCnt % SLOTS]; free when t1_ns == 0.
 * Map "incomplete" (mmap()ed, a u64 per 64 slots, same order): the slot's bit is set while it holds a frame
 * that has not reached every port, so T1 reads a slot only when it must report its previous frame. */
struct svtrace_inflight {
	__u64 t1_ns;
	__u32 tid1;
	__u16 cpu1;
	__u16 smpcnt;
	__u32 seen;		/* ports (bit p) that passed T2a */
	__u32 predrop;		/* ports (bit p) where it was dropped before T2a */
};

/*
 * Map "track" value (and "tracked", the fallback hash keyed by skb): what the free needs, the frame's
 * points so far, plus the guest-side receiver if any. A slot is owned through its word in the map
 * "track_claim", which only T2a touches: the owner's address in bits 0-56 (kernel addresses have bits
 * 57-63 set) and an epoch in bits 57-63 that every claim advances, taken by compare-and-exchange (a
 * line that stays with the forwarding CPU). T2a then fills the slot with plain stores: skb = the
 * owner's address, state = its claim's epoch. The free (on the consumer's CPU) reads the slot and
 * releases it by writing that claim word (svtrace_claim_word) to the slot's word in "track_rel",
 * touching neither the slot nor the claim: only the free's CPUs write "track_rel", so the slot's line
 * crosses CPUs once per copy (T2a -> free, read) and goes back only as the next claim's invalidation,
 * not as a transfer of a line the free modified. A slot is released when its "track_rel" word equals
 * its claim word. A slot held by another address may be claimed only when it holds that owner's copy
 * (same address and epoch as its claim word) and the copy was released, or is stale. User space's
 * timeout scan releases through mmap with a compare-and-exchange of the release word. 64 octets, one
 * cache line. The guest-side receiver's name lives in its feeder slot, its holder's in the holders'
 * names by pid (they matter only for late frames).
 */
struct svtrace_track {
	__u64 skb;
	__u64 t1_ns, t2a_ns;
	__u32 stream;
	__u16 smpcnt, port;	/* port: egress port index (its namespace is the filter's) */
	__u32 tid1, tid2a;
	__u16 cpu1, cpu2a;
	__u16 vlan_tci, flags;
	__u32 rx_tid;		/* guest-side receiver (0 none); the rx_* below valid only then */
	__u32 rx_wait_ns, rx_holder_pid;
	__u8 rx_holder_policy, rx_holder_prio;
	__u16 state;		/* its claim's epoch */
};

#define SVTRACE_CLAIM_TAG_MASK ((1ull << 57) - 1)	/* the owner's address bits in a claim word */
#define SVTRACE_CLAIM_EPOCH_SHIFT 57

/* The claim word of address @skb at claim epoch @epoch (7 bits: a slot's state). */
static inline __u64 svtrace_claim_word(__u64 skb, __u32 epoch)
{
	return (skb & SVTRACE_CLAIM_TAG_MASK) | ((__u64)(epoch & 127) << SVTRACE_CLAIM_EPOCH_SHIFT);
}

#define SVTRACE_TRACK_SIZE 64

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

/* A copy over the late threshold: the same, plus the names and when the feeder's wait ended (only late
 * frames pay for them). */
struct svtrace_late_ev {
	struct svtrace_copy c;	/* c.type = TAKEN or DROP */
	__u8 feeder_comm[SVTRACE_COMM_LEN];
	__u8 holder_comm[SVTRACE_COMM_LEN];
	__u64 wait_end_ns;	/* the feeder's wait (c.wait_ns) ended here (bpf_ktime_get_ns), 0 unknown */
	/* c.flags & SVTRACE_F_CARRIED: the carrier (thread c.tid2a) and its last wait, read at the free
	 * (the carrier's wait since T2a, if any, lies outside the hop T1-T2a: user space clips it) */
	__u8 carrier_comm[SVTRACE_COMM_LEN];	/* "" when the carrier is no longer a known feeder */
	__u8 carrier_holder_comm[SVTRACE_COMM_LEN];
	__u64 carrier_wait_end_ns;	/* 0 unknown */
	__u32 carrier_wait_ns;
	__u32 carrier_holder_pid;
	__u8 carrier_holder_policy, carrier_holder_prio;
	__u8 pad[6];
};

#define SVTRACE_COPY_SIZE 80
#define SVTRACE_LATE_SIZE 176

#endif /* SVTRACE_H */

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * svtrace: follows every IEC 61850-9-2 SV frame (EtherType 0x88BA) through the host on tracepoints only:
 *   T1  net:netif_receive_skb   on an ingress port (filter map keyed by netns inode + ifindex)
 *   T2a net:net_dev_start_xmit  on an egress port
 *   T2b skb:consume_skb         of an skb seen at T2a (taken), skb:kfree_skb (dropped, with the reason)
 *   sched:sched_wakeup / sched:sched_switch of the threads that fed frames to a guest: wake-up -> run
 *   delay and the task that held the CPU meanwhile (the "why late").
 * The frame is correlated here, not in user space: T1 -> map "inflight" (stream, smpCnt), T2a -> map
 * "tracked" (skb address), and the free emits ONE 80-octet event per frame and egress copy carrying T1,
 * T2a and T2b (svtrace.h). Names (comm) travel only with late frames. Nothing wakes user space per event.
 * Every hook exists twice, tp_btf/ and raw_tp/: the loader enables one set at run time (STYLE.md 13).
 * Non-SV traffic costs one filter lookup and one 4-byte read; nothing is allocated, nothing is printed.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "svtrace.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define ETH_P_SV 0x88BA
#define ETH_P_8021Q 0x8100
#define ETH_P_8021AD 0x88A8
#define WIN SVTRACE_PARSE_WINDOW
#define WMASK (SVTRACE_PARSE_WINDOW - 1)
#define MAC_UNSET 0xffff

const volatile __u32 appid_filter = 0;
const volatile __u64 stale_ns = 2000000000ull;
const volatile __u64 late_ns = 0;		/* T1->T2b (or T2a->T2b) above this: late event with names */
const volatile __u32 all_ports = 0;		/* bit p set for every egress port p */
const volatile __u32 nr_cpus = 1;
/* The filter: port 0 = ingress, 1..nr_ports-1 = egress (netns inode + ifindex: ifindex values repeat
 * across namespaces). Read-only data, compared inline: no map lookup on any packet. */
const volatile __u32 nr_ports = 0;
const volatile __u32 port_ifindex[SVTRACE_MAX_PORTS] = {};
const volatile __u32 port_netns[SVTRACE_MAX_PORTS] = {};

/* Direct BTF loads in tp_btf programs (plain loads, no helper call); CO-RE probe reads in raw_tp. */
#define RD(b, src, fld) ((b) ? (src)->fld : BPF_CORE_READ(src, fld))

/* Threads that may be feeders (tid & FEEDER_HINT_MASK): sched_switch skips the hash lookup for all
 * others. Plain .bss array: no helper call. */
#define FEEDER_HINT_MASK 4095
__u8 feeder_hint[FEEDER_HINT_MASK + 1];

__u32 next_stream = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SVTRACE_CNT_NR);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

/* APPID + whole svID -> small stream id (collision-free: the hash map compares the whole key). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SVTRACE_MAX_STREAMS);
	__type(key, struct svtrace_stream_key);
	__type(value, struct svtrace_stream_val);
} streams SEC(".maps");

/* Ids handed out (the claim is the insert). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SVTRACE_MAX_STREAMS);
	__type(key, __u32);
	__type(value, __u32);
} stream_ids SEC(".maps");

/* (stream, smpCnt) -> T1 and the ports reached, from T1 until every port passed T2a: an ARRAY of
 * SVTRACE_INFLIGHT_SLOTS slots per stream indexed by smpCnt (lookups inlined by the verifier: no
 * hashing, no allocation, no lock). The slot keeps the smpCnt it holds. An incomplete frame is reported
 * missing when its slot is reused SVTRACE_INFLIGHT_SLOTS samples later (far beyond any SV deadline),
 * or by user space (mmap, no syscall per slot) after the timeout and at the end. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, SVTRACE_MAX_STREAMS * SVTRACE_INFLIGHT_SLOTS);
	__type(key, __u32);
	__type(value, struct svtrace_inflight);
} inflight SEC(".maps");

static __always_inline struct svtrace_inflight *slot_of(__u32 stream, __u32 smpcnt)
{
	__u32 i = (stream % SVTRACE_MAX_STREAMS) * SVTRACE_INFLIGHT_SLOTS + (smpcnt & (SVTRACE_INFLIGHT_SLOTS - 1));

	return bpf_map_lookup_elem(&inflight, &i);
}

/* The slot holds this frame's T1 (same smpCnt, recent enough to be the same second's frame). */
static __always_inline bool slot_match(const struct svtrace_inflight *v, __u32 smpcnt, __u64 now)
{
	return v->t1_ns && v->smpcnt == (__u16)smpcnt && now - v->t1_ns < SVTRACE_T1_MAX_AGE_NS;
}

/* What the free needs: the frame's points so far, plus the guest-side receiver if any. */
struct sv_track {
	__u64 t1_ns, t2a_ns;
	__u32 stream;
	__u16 smpcnt, port;
	__u32 tid1, tid2a;
	__u16 cpu1, cpu2a;
	__u16 vlan_tci, flags;
	__u32 port_netns;	/* the egress port's namespace */
	__u32 rx_tid;		/* guest-side receiver (0 none); the rx_* below valid only then */
	__u32 rx_wait_ns, rx_holder_pid;
	__u8 rx_holder_policy, rx_holder_prio, pad[2];
	__u8 rx_comm[SVTRACE_COMM_LEN];
	__u8 rx_holder_comm[SVTRACE_COMM_LEN];
};

/* skb address -> frame, set at T2a, removed at the free. A plain preallocated hash (cheaper than LRU):
 * an skb freed by a path without a tracepoint is removed by user space after the timeout (and counted
 * missing at T2b); a reused address is caught by the staleness bound. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768);
	__type(key, __u64);
	__type(value, struct sv_track);
} tracked SEC(".maps");

/* Threads that fed SV frames to a guest, found by what consumed the frames (not by name). */
struct sv_feeder {
	__u64 wakeup_ns;	/* pending sched_wakeup, 0 when running */
	__u64 wait_ns;		/* last completed wakeup -> run delay */
	__u32 holder_pid;
	__u8 holder_policy, holder_prio, pad[2];
	__u8 holder_comm[SVTRACE_COMM_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct sv_feeder);
} feeders SEC(".maps");

/* Per-CPU run bookkeeping; a plain array indexed by CPU because sched_wakeup runs on the waker's CPU
 * and writes the target CPU's slot. Races only blur which holder is named, never memory safety. */
struct sv_cpu_state {
	__u64 cur_start_ns;	/* when the current task got this CPU */
	__u64 pending_ns;	/* a feeder woke for this CPU at this time (0 = none) */
	__u64 max_seg_ns;	/* longest run segment since then */
	__u32 pending_tid;
	__u32 holder_pid;
	__u8 holder_policy, holder_prio, pad[6];
	__u8 holder_comm[SVTRACE_COMM_LEN];
};

#define CPU_MASK 255
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);	/* lookups are inlined by the verifier: no helper call */
	__uint(max_entries, CPU_MASK + 1);
	__type(key, __u32);
	__type(value, struct sv_cpu_state);
} cpus SEC(".maps");


/* The parse result: stream key (svID zero-padded: it is a hash key), smpCnt, tag. */
struct sv_frame {
	struct svtrace_stream_key key;
	__u32 smpcnt;
	__u16 vlan_tci, flags;
	__u32 smp_off;		/* offset of smpCnt's value octets from the MAC header */
};

/* The last T1 on this CPU. The bridge (or tap) forwards in the same softirq, so T2a of that frame
 * follows on this CPU microseconds later, on the same data buffer (skb->head, shared by clones): its
 * key is then taken from here after checking the smpCnt octets in place, without parsing again. */
struct sv_t1_cache {
	__u64 head;
	__u64 smp_addr;		/* kernel address of smpCnt's value octets */
	__u64 t1_ns;
	__u32 stream;
	__u16 smpcnt, vlan_tci;
	__u16 flags, pad[3];
};

#define T1_CACHE_NS 1000000ull	/* a cached T1 older than 1 ms is not used */

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sv_t1_cache);
} t1_cache SEC(".maps");

struct sv_scratch {
	__u8 win[WIN];
	struct sv_frame f;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sv_scratch);
} scratch_map SEC(".maps");

static __always_inline void count(__u32 idx)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &idx);

	if (c)
		*c += 1;
}

/* Never a wake-up per event: user space drains the ring every few ms (a wake-up per event would cost
 * more than the tracing itself); a ring that fills up counts lost events. */
#define RB_FLAGS BPF_RB_NO_WAKEUP

static __always_inline struct sv_scratch *scratch_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&scratch_map, &zero);
}

static __always_inline void dev_id(const bool btf, const struct net_device *dev, __u32 *ifindex, __u32 *netns)
{
	*ifindex = 0;
	*netns = 0;
	if (!dev)
		return;
	*ifindex = RD(btf, dev, ifindex);
	*netns = btf ? dev->nd_net.net->ns.inum : BPF_CORE_READ(dev, nd_net.net, ns.inum);
}

/* EtherTypes an SV frame's skb can carry (eth_type_trans: 0x88BA, or the tag when not offloaded). */
static __always_inline bool proto_maybe_sv(const bool btf, const struct sk_buff *skb)
{
	__u16 p = RD(btf, skb, protocol);

	return p == bpf_htons(ETH_P_SV) || p == bpf_htons(ETH_P_8021Q) || p == bpf_htons(ETH_P_8021AD);
}

/* BER definite length (X.690 8.1.3): short form, or long form with 1..3 length octets. */
static __always_inline int ber_len(const __u8 *w, __u32 *pos, __u32 n, __u32 *len)
{
	__u32 i = *pos;
	__u8 b;

	if (i >= n)
		return -1;
	b = w[i & WMASK];
	if (b < 0x80) {
		*len = b;
		*pos = i + 1;
		return 0;
	}
	if (b == 0x81 && i + 1 < n) {
		*len = w[(i + 1) & WMASK];
		*pos = i + 2;
		return 0;
	}
	if (b == 0x82 && i + 2 < n) {
		*len = ((__u32)w[(i + 1) & WMASK] << 8) | w[(i + 2) & WMASK];
		*pos = i + 3;
		return 0;
	}
	if (b == 0x83 && i + 3 < n) {
		*len = ((__u32)w[(i + 1) & WMASK] << 16) | ((__u32)w[(i + 2) & WMASK] << 8) |
		       w[(i + 3) & WMASK];
		*pos = i + 4;
		return 0;
	}
	return -1;
}

/*
 * Reads the frame at kernel address @l2 (MAC header, @avail linear bytes) into @f. Returns 1 for an SV
 * frame, 0 for anything else (the early return), -1 for an SV frame whose savPdu cannot be walked within
 * the window (counted). IEC 61850-9-2 §8.2 / Annex A: APPID, Length, Reserved1/2, then savPdu
 * [APPLICATION 0] { noASDU [0], security [1] OPTIONAL, seqASDU [2] { ASDU { svID [0], datSet [1]
 * OPTIONAL, smpCnt [2] (2 octets) ... } } }.
 */
static __always_inline int sv_parse(const bool btf, const __u8 *l2, __u32 avail, const struct sk_buff *skb,
				    struct sv_frame *f, __u8 *w)
{
	__u8 h[4];
	__u32 off = 14, pos, len, svid_len;
	__u64 n, cp;
	__u16 et;

	if (avail < 18 || bpf_probe_read_kernel(h, sizeof(h), l2 + 12))
		return 0;
	et = ((__u16)h[0] << 8) | h[1];
	f->flags = 0;
	f->vlan_tci = 0;
	if (et == ETH_P_8021Q || et == ETH_P_8021AD) {
		f->vlan_tci = ((__u16)h[2] << 8) | h[3];
		f->flags |= SVTRACE_F_VLAN_INBAND;
		if (bpf_probe_read_kernel(h, 2, l2 + 16))
			return 0;
		et = ((__u16)h[0] << 8) | h[1];
		off = 18;
	}
	if (et != ETH_P_SV)
		return 0;
	/* Out-of-band tag (after a bridge, or a NIC with rx-vlan offload): skb->vlan_all != 0. */
	if (!(f->flags & SVTRACE_F_VLAN_INBAND) && RD(btf, skb, vlan_all)) {
		f->vlan_tci = RD(btf, skb, vlan_tci);
		f->flags |= SVTRACE_F_VLAN_OOB;
	}
	n = (__u64)avail - off;
	if (n > WIN)
		n = WIN;
	if (n < 8)
		goto bad;
	/* Keep the verifier's view of the size bounded whatever clang folds. */
	cp = n;
	asm volatile("%0 &= 0x1ff" : "+r"(cp));
	if (cp > WIN || bpf_probe_read_kernel(w, cp, l2 + off))
		goto bad;
	f->key.appid = ((__u16)w[0] << 8) | w[1];
	if (appid_filter && f->key.appid != appid_filter) {
		count(SVTRACE_CNT_FILTERED);
		return 0;
	}
	pos = 8;
	if (pos >= n || w[pos & WMASK] != 0x60)
		goto bad;
	pos++;
	if (ber_len(w, &pos, n, &len))
		goto bad;
	if (pos >= n || w[pos & WMASK] != 0x80)		/* noASDU */
		goto bad;
	pos++;
	if (ber_len(w, &pos, n, &len))
		goto bad;
	pos += len;
	if (pos < n && (w[pos & WMASK] == 0x81 || w[pos & WMASK] == 0xA1)) { /* security (62351-6) */
		pos++;
		if (ber_len(w, &pos, n, &len))
			goto bad;
		pos += len;
	}
	if (pos >= n || w[pos & WMASK] != 0xA2)		/* seqASDU */
		goto bad;
	pos++;
	if (ber_len(w, &pos, n, &len))
		goto bad;
	if (pos >= n || w[pos & WMASK] != 0x30)		/* first ASDU */
		goto bad;
	pos++;
	if (ber_len(w, &pos, n, &len))
		goto bad;
	if (pos >= n || w[pos & WMASK] != 0x80)		/* svID */
		goto bad;
	pos++;
	if (ber_len(w, &pos, n, &svid_len))
		goto bad;
	len = svid_len;
	if (len > SVTRACE_SVID_MAX) {
		len = SVTRACE_SVID_MAX;
		f->flags |= SVTRACE_F_SVID_TRUNC;
	}
	if (pos > WIN)
		goto bad;
	f->key.svid_len = len;
	/* The whole svID is the stream key (zero-padded): streams are told apart by the full string. */
	__builtin_memset(f->key.svid, 0, SVTRACE_SVID_MAX);
	cp = len;
	asm volatile("%0 &= 0x7f" : "+r"(cp));
	if (cp > SVTRACE_SVID_MAX || bpf_probe_read_kernel(f->key.svid, cp, l2 + off + pos))
		goto bad;
	pos += svid_len;
	if (pos < n && w[pos & WMASK] == 0x81) {	/* datSet */
		pos++;
		if (ber_len(w, &pos, n, &len))
			goto bad;
		pos += len;
	}
	if (pos + 3 >= n || w[pos & WMASK] != 0x82 || w[(pos + 1) & WMASK] != 2)	/* smpCnt */
		goto bad;
	f->smpcnt = ((__u32)w[(pos + 2) & WMASK] << 8) | w[(pos + 3) & WMASK];
	f->smp_off = off + pos + 2;
	return 1;
bad:
	count(SVTRACE_CNT_PARSE_ERR);
	return -1;
}

/* Port index of (netns, ifindex) among ports [from, nr_ports), or -1. */
static __always_inline int port_find(__u32 netns, __u32 ifindex, __u32 from)
{
	for (__u32 i = 0; i < SVTRACE_MAX_PORTS; i++) {
		if (i >= nr_ports)
			break;
		if (i >= from && port_ifindex[i] == ifindex && port_netns[i] == netns)
			return (int)i;
	}
	return -1;
}

/*
 * The frame's stream id. A new (APPID, svID) gets the next id; user space reads the names from the
 * "streams" map the first time it meets an id. Frames of streams beyond SVTRACE_MAX_STREAMS are counted
 * and not traced. @t1: count the frame as seen at T1.
 */
static __always_inline int stream_id(struct sv_frame *f, bool t1, __u32 *id)
{
	struct svtrace_stream_val *v = bpf_map_lookup_elem(&streams, &f->key);
	struct svtrace_stream_val nv = {};

	if (!v) {
		/* Claim the next free id: the "stream_ids" insert (BPF_NOEXIST, under the map's bucket lock)
		 * is the atomic step - atomic fetch-and-add needs -mcpu=v3, which the build does not use. */
		nv.id = next_stream;
		for (int i = 0; i < 8; i++) {
			if (nv.id >= SVTRACE_MAX_STREAMS)
				break;
			if (!bpf_map_update_elem(&stream_ids, &nv.id, &nv.id, BPF_NOEXIST))
				break;
			nv.id++;
		}
		if (nv.id >= SVTRACE_MAX_STREAMS) {
			count(SVTRACE_CNT_STREAMS_FULL);
			return -1;
		}
		next_stream = nv.id + 1;
		/* Two CPUs may race on a new stream: the loser's id is never used. */
		bpf_map_update_elem(&streams, &f->key, &nv, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&streams, &f->key);
		if (!v) {
			count(SVTRACE_CNT_STREAMS_FULL);
			return -1;
		}
	}
	if (t1)
		__sync_fetch_and_add(&v->frames, 1);
	*id = v->id;
	return 0;
}

static __always_inline void task_prio(const bool btf, const struct task_struct *p, __u32 *pid, __u8 *policy, __u8 *prio,
				      __u8 *comm)
{
	__u32 pol = RD(btf, p, policy);
	__u32 kp;

	*pid = RD(btf, p, pid);
	*policy = (__u8)pol;
	if (pol == 1 || pol == 2) {
		*prio = (__u8)RD(btf, p, rt_priority);
	} else {
		/* nice + 20 from the kernel priority 100..139 */
		kp = RD(btf, p, prio);
		*prio = kp >= 100 ? (__u8)(kp - 100) : 0;
	}
	bpf_probe_read_kernel_str(comm, SVTRACE_COMM_LEN, &p->comm);
}

/* Makes the current thread a feeder (its wake-ups are then tracked) and returns its state. */
static __always_inline struct sv_feeder *feeder_self(__u32 tid)
{
	struct sv_feeder *f = bpf_map_lookup_elem(&feeders, &tid);
	struct sv_feeder zero = {};

	if (f)
		return f;
	bpf_map_update_elem(&feeders, &tid, &zero, BPF_NOEXIST);
	feeder_hint[tid & FEEDER_HINT_MASK] = 1;
	return NULL;
}

static __always_inline void emit_missing(const struct svtrace_frame_key *k, const struct svtrace_inflight *v,
					 __u32 miss)
{
	struct svtrace_copy *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		count(SVTRACE_CNT_LOST);
		return;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->type = SVTRACE_EV_MISSING;
	e->flags = v->seen ? 0 : SVTRACE_F_T1_FIRST;
	e->stream = k->stream;
	e->smpcnt = (__u16)k->smpcnt;
	e->reason = miss;
	e->t1_ns = v->t1_ns;
	e->tid1 = v->tid1;
	e->cpu1 = v->cpu1;
	bpf_ringbuf_submit(e, RB_FLAGS);
}

static __always_inline int on_receive(const bool btf, struct sk_buff *skb)
{
	struct sv_t1_cache *c;
	unsigned char *head;
	__u32 zero = 0;
	struct net_device *dev;
	struct svtrace_frame_key k;
	struct svtrace_inflight *v;
	struct sv_scratch *s;
	struct sv_track *t;
	__u32 ifindex, netns, miss;
	__u64 key = (__u64)skb, pt, now;
	__u16 mac;

	/* The early return for everything that is not SV: one load, three compares. */
	if (!proto_maybe_sv(btf, skb))
		return 0;
	dev = RD(btf, skb, dev);
	dev_id(btf, dev, &ifindex, &netns);
	if (ifindex != port_ifindex[0] || netns != port_netns[0]) {
		/* A frame seen at T2a arriving in the guest's namespace: remember who received it there
		 * (veth peer's NAPI: the sender's softirq, or a napi/... kthread when threaded). The
		 * host's own namespace (the bridge's local copy) is not a guest: no lookup. */
		if (netns == port_netns[0])
			return 0;
		t = bpf_map_lookup_elem(&tracked, &key);
		if (t && !t->rx_tid && netns != t->port_netns) {
			struct sv_feeder *f;

			pt = bpf_get_current_pid_tgid();
			f = feeder_self((__u32)pt);
			bpf_get_current_comm(t->rx_comm, sizeof(t->rx_comm));
			if (f) {
				t->rx_wait_ns = f->wait_ns > 0xffffffffull ? 0xffffffffu : (__u32)f->wait_ns;
				t->rx_holder_pid = f->holder_pid;
				t->rx_holder_policy = f->holder_policy;
				t->rx_holder_prio = f->holder_prio;
				__builtin_memcpy(t->rx_holder_comm, f->holder_comm, SVTRACE_COMM_LEN);
			} else {
				t->rx_wait_ns = 0;
				t->rx_holder_pid = 0;
			}
			t->rx_tid = (__u32)pt;
		}
		return 0;
	}
	s = scratch_get();
	if (!s)
		return 0;
	mac = RD(btf, skb, mac_header);
	if (mac == MAC_UNSET)
		return 0;
	head = RD(btf, skb, head);
	if (sv_parse(btf, head + mac, RD(btf, skb, tail) - mac, skb, &s->f, s->win) <= 0)
		return 0;
	if (stream_id(&s->f, true, &k.stream))
		return 0;
	k.smpcnt = s->f.smpcnt;
	now = bpf_ktime_get_ns();
	pt = bpf_get_current_pid_tgid();
	v = slot_of(k.stream, k.smpcnt);
	if (!v)
		return 0;
	if (v->t1_ns) {
		/* The slot's previous frame never reached every port. */
		miss = all_ports & ~(v->seen | v->predrop);
		if (miss) {
			struct svtrace_frame_key old = { .stream = k.stream, .smpcnt = v->smpcnt };

			emit_missing(&old, v, miss);
		}
	}
	v->t1_ns = now;
	v->tid1 = (__u32)pt;
	v->cpu1 = (__u16)bpf_get_smp_processor_id();
	v->smpcnt = (__u16)k.smpcnt;
	v->seen = 0;
	v->predrop = 0;
	c = bpf_map_lookup_elem(&t1_cache, &zero);
	if (c) {
		c->head = (__u64)head;
		c->smp_addr = (__u64)(head + mac + s->f.smp_off);
		c->t1_ns = now;
		c->stream = k.stream;
		c->smpcnt = (__u16)k.smpcnt;
		c->vlan_tci = s->f.vlan_tci;
		c->flags = s->f.flags;
	}
	return 0;
}

static __always_inline int on_xmit(const bool btf, struct sk_buff *skb, struct net_device *dev)
{
	int p;
	struct svtrace_frame_key k;
	struct svtrace_inflight *v;
	struct sv_scratch *s;
	struct sv_track tr;
	struct sv_t1_cache *c;
	__u32 ifindex, netns, bit, zero = 0;
	__u64 key = (__u64)skb;
	unsigned char *head, *data;
	__u8 b[2];

	dev_id(btf, dev, &ifindex, &netns);
	p = port_find(netns, ifindex, 1);
	if (p < 1)
		return 0;
	__builtin_memset(&tr, 0, sizeof(tr));
	tr.t2a_ns = bpf_ktime_get_ns();
	head = RD(btf, skb, head);
	c = bpf_map_lookup_elem(&t1_cache, &zero);
	if (c && c->head == (__u64)head && tr.t2a_ns - c->t1_ns < T1_CACHE_NS &&
	    !bpf_probe_read_kernel(b, sizeof(b), (const void *)c->smp_addr) &&
	    (((__u16)b[0] << 8) | b[1]) == c->smpcnt) {
		/* The frame of the last T1 on this CPU (same buffer, same smpCnt in place). */
		k.stream = c->stream;
		k.smpcnt = c->smpcnt;
		tr.vlan_tci = c->vlan_tci;
		tr.flags = c->flags;
	} else {
		s = scratch_get();
		if (!s)
			return 0;
		data = RD(btf, skb, data);
		if (sv_parse(btf, data, RD(btf, skb, tail) - (__u32)(data - head), skb, &s->f, s->win) <= 0)
			return 0;
		if (stream_id(&s->f, false, &k.stream))
			return 0;
		k.smpcnt = s->f.smpcnt;
		tr.vlan_tci = s->f.vlan_tci;
		tr.flags = s->f.flags;
	}
	tr.stream = k.stream;
	tr.smpcnt = (__u16)k.smpcnt;
	tr.port = (__u16)p;
	tr.tid2a = (__u32)bpf_get_current_pid_tgid();
	tr.cpu2a = (__u16)bpf_get_smp_processor_id();
	tr.port_netns = netns;
	v = slot_of(k.stream, k.smpcnt);
	if (v && slot_match(v, k.smpcnt, tr.t2a_ns)) {
		bit = 1u << (p & 31);
		tr.t1_ns = v->t1_ns;
		tr.tid1 = v->tid1;
		tr.cpu1 = v->cpu1;
		if (!(v->seen | v->predrop))
			tr.flags |= SVTRACE_F_T1_FIRST;
		v->seen |= bit;
		/* Every port reached: the slot is free. */
		if (((v->seen | v->predrop) & all_ports) == all_ports)
			v->t1_ns = 0;
	}
	if (bpf_map_update_elem(&tracked, &key, &tr, BPF_ANY))
		count(SVTRACE_CNT_TRACK_FULL);
	return 0;
}

static __always_inline void copy_fill(const bool btf, struct svtrace_copy *e, const struct sv_track *t, __u32 type,
				      __u32 reason, __u64 now, struct sk_buff *skb, struct sv_feeder **fp)
{
	__u64 pt = bpf_get_current_pid_tgid();
	struct sv_feeder *f = NULL;
	__u32 ifindex, netns;

	e->type = (__u8)type;
	e->port = (__u8)t->port;
	e->flags = t->flags;
	e->stream = t->stream;
	e->smpcnt = t->smpcnt;
	e->vlan_tci = t->vlan_tci;
	e->reason = reason;
	e->t1_ns = t->t1_ns;
	e->t2a_ns = t->t2a_ns;
	e->t2b_ns = now;
	e->tid1 = t->tid1;
	e->tid2a = t->tid2a;
	e->tid2b = (__u32)pt;
	e->cpu1 = t->cpu1;
	e->cpu2a = t->cpu2a;
	e->cpu2b = (__u16)bpf_get_smp_processor_id();
	dev_id(btf, RD(btf, skb, dev), &ifindex, &netns);
	e->ifindex2b = ifindex;
	e->netns2b = netns;
	if (netns && netns != t->port_netns)
		e->flags |= SVTRACE_F_OTHER_NS;
	if (t->rx_tid) {
		e->flags |= SVTRACE_F_RX_SEEN;
		e->feeder_tid = t->rx_tid;
		e->wait_ns = t->rx_wait_ns;
		e->holder_pid = t->rx_holder_pid;
		e->holder_policy = t->rx_holder_policy;
		e->holder_prio = t->rx_holder_prio;
	} else {
		f = feeder_self((__u32)pt);
		e->feeder_tid = (__u32)pt;
		if (f) {
			e->wait_ns = f->wait_ns > 0xffffffffull ? 0xffffffffu : (__u32)f->wait_ns;
			e->holder_pid = f->holder_pid;
			e->holder_policy = f->holder_policy;
			e->holder_prio = f->holder_prio;
		} else {
			e->wait_ns = 0;
			e->holder_pid = 0;
			e->holder_policy = 0;
			e->holder_prio = 0;
		}
	}
	*fp = f;
}

static __always_inline int port_drop(const bool btf, struct sk_buff *skb, __u32 reason)
{
	int p;
	struct svtrace_frame_key k;
	struct svtrace_inflight *v;
	struct svtrace_copy *e;
	struct sv_scratch *s;
	__u32 ifindex, netns, bit;
	unsigned char *head;
	__u16 mac;

	/* An SV frame dropped on a filtered port before T2a (tc egress, qdisc full): a loss at the hop
	 * that ends there. Consumes are not looked at: only drops can be losses. */
	dev_id(btf, RD(btf, skb, dev), &ifindex, &netns);
	p = port_find(netns, ifindex, 0);
	if (p < 0)
		return 0;
	mac = RD(btf, skb, mac_header);
	s = scratch_get();
	if (!s || mac == MAC_UNSET)
		return 0;
	head = RD(btf, skb, head);
	if (sv_parse(btf, head + mac, RD(btf, skb, tail) - mac, skb, &s->f, s->win) <= 0)
		return 0;
	if (stream_id(&s->f, false, &k.stream))
		return 0;
	k.smpcnt = s->f.smpcnt;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(SVTRACE_CNT_LOST);
		return 0;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->type = SVTRACE_EV_PORT_DROP;
	e->port = (__u8)p;
	e->flags = s->f.flags;
	e->stream = k.stream;
	e->smpcnt = (__u16)k.smpcnt;
	e->vlan_tci = s->f.vlan_tci;
	e->reason = reason;
	e->t2b_ns = bpf_ktime_get_ns();
	e->tid2b = (__u32)bpf_get_current_pid_tgid();
	e->cpu2b = (__u16)bpf_get_smp_processor_id();
	e->ifindex2b = ifindex;
	e->netns2b = netns;
	v = p ? slot_of(k.stream, k.smpcnt) : NULL;
	if (v && slot_match(v, k.smpcnt, e->t2b_ns)) {
		bit = 1u << (p & 31);
		e->t1_ns = v->t1_ns;
		e->tid1 = v->tid1;
		e->cpu1 = v->cpu1;
		if (!(v->seen | v->predrop))
			e->flags |= SVTRACE_F_T1_FIRST;
		v->predrop |= bit;
		if (((v->seen | v->predrop) & all_ports) == all_ports)
			v->t1_ns = 0;
	}
	bpf_ringbuf_submit(e, RB_FLAGS);
	return 0;
}

static __always_inline int on_free(const bool btf, struct sk_buff *skb, __u32 type, __u32 reason)
{
	struct sv_feeder *f;
	struct sv_track *t;
	__u64 key = (__u64)skb, now, lat;

	/* Every skb of the machine is freed here: non-SV ones leave after one load. */
	if (!proto_maybe_sv(btf, skb))
		return 0;
	t = bpf_map_lookup_elem(&tracked, &key);
	if (!t)
		return type == SVTRACE_EV_DROP ? port_drop(btf, skb, reason) : 0;
	now = bpf_ktime_get_ns();
	if (now - t->t2a_ns > stale_ns) {
		/* The address was reused by another skb after an untraced free. */
		count(SVTRACE_CNT_STALE);
		bpf_map_delete_elem(&tracked, &key);
		return 0;
	}
	lat = now - (t->t1_ns ? t->t1_ns : t->t2a_ns);
	if (late_ns && lat > late_ns) {
		/* Late: the names go with it (the holder may be gone by the time user space looks). */
		struct svtrace_late_ev *l = bpf_ringbuf_reserve(&events, sizeof(*l), 0);

		if (!l) {
			count(SVTRACE_CNT_LOST);
		} else {
			copy_fill(btf, &l->c, t, type, reason, now, skb, &f);
			if (t->rx_tid) {
				__builtin_memcpy(l->feeder_comm, t->rx_comm, SVTRACE_COMM_LEN);
				__builtin_memcpy(l->holder_comm, t->rx_holder_comm, SVTRACE_COMM_LEN);
			} else {
				bpf_get_current_comm(l->feeder_comm, SVTRACE_COMM_LEN);
				if (f)
					__builtin_memcpy(l->holder_comm, f->holder_comm, SVTRACE_COMM_LEN);
				else
					__builtin_memset(l->holder_comm, 0, SVTRACE_COMM_LEN);
			}
			if (!l->c.holder_pid)
				__builtin_memset(l->holder_comm, 0, SVTRACE_COMM_LEN);
			l->c.flags |= SVTRACE_F_LATE;
					bpf_ringbuf_submit(l, RB_FLAGS);
		}
	} else {
		struct svtrace_copy *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

		if (!e) {
			count(SVTRACE_CNT_LOST);
		} else {
			copy_fill(btf, e, t, type, reason, now, skb, &f);
					bpf_ringbuf_submit(e, RB_FLAGS);
		}
	}
	bpf_map_delete_elem(&tracked, &key);
	return 0;
}

static __always_inline int on_wakeup(const bool btf, struct task_struct *p)
{
	__u32 tid = RD(btf, p, pid), cpu;
	struct sv_feeder *f;
	struct sv_cpu_state *c;
	__u64 now;

	if (!feeder_hint[tid & FEEDER_HINT_MASK])
		return 0;
	f = bpf_map_lookup_elem(&feeders, &tid);
	if (!f)
		return 0;
	now = bpf_ktime_get_ns();
	f->wakeup_ns = now;
	cpu = RD(btf, p, wake_cpu) & CPU_MASK;
	c = bpf_map_lookup_elem(&cpus, &cpu);
	if (!c)
		return 0;
	c->pending_ns = now;
	c->pending_tid = tid;
	c->max_seg_ns = 0;
	c->holder_pid = 0;
	return 0;
}

static __always_inline int on_switch(const bool btf, struct task_struct *prev, struct task_struct *next)
{
	__u32 cpu = bpf_get_smp_processor_id() & CPU_MASK, ntid;
	struct sv_cpu_state *c = bpf_map_lookup_elem(&cpus, &cpu);
	struct sv_feeder *f;
	__u64 now, start, seg;

	if (!c)
		return 0;
	ntid = RD(btf, next, pid);
	/* Nothing to do unless a feeder waits for this CPU or is switched in. */
	if (!c->pending_ns && !feeder_hint[ntid & FEEDER_HINT_MASK]) {
		c->cur_start_ns = 0;
		return 0;
	}
	now = bpf_ktime_get_ns();
	if (c->pending_ns) {
		start = c->cur_start_ns > c->pending_ns ? c->cur_start_ns : c->pending_ns;
		seg = now - start;
		if (seg >= c->max_seg_ns) {
			c->max_seg_ns = seg;
			task_prio(btf, prev, &c->holder_pid, &c->holder_policy, &c->holder_prio, c->holder_comm);
		}
	}
	c->cur_start_ns = now;
	if (!feeder_hint[ntid & FEEDER_HINT_MASK])
		return 0;
	f = bpf_map_lookup_elem(&feeders, &ntid);
	if (!f || !f->wakeup_ns)
		return 0;
	f->wait_ns = now - f->wakeup_ns;
	f->wakeup_ns = 0;
	if (c->pending_tid == ntid && c->pending_ns) {
		f->holder_pid = c->holder_pid;
		f->holder_policy = c->holder_policy;
		f->holder_prio = c->holder_prio;
		__builtin_memcpy(f->holder_comm, c->holder_comm, SVTRACE_COMM_LEN);
		c->pending_ns = 0;
	} else {
		/* Woken for another CPU and migrated: name the task it preempted here. */
		task_prio(btf, prev, &f->holder_pid, &f->holder_policy, &f->holder_prio, f->holder_comm);
	}
	return 0;
}

/* ---- tp_btf variants (BTF-typed arguments) ---- */
SEC("tp_btf/netif_receive_skb")
int BPF_PROG(btf_netif_receive_skb, struct sk_buff *skb)
{
	return on_receive(true, skb);
}

SEC("tp_btf/net_dev_start_xmit")
int BPF_PROG(btf_net_dev_start_xmit, struct sk_buff *skb, struct net_device *dev)
{
	return on_xmit(true, skb, dev);
}

SEC("tp_btf/consume_skb")
int BPF_PROG(btf_consume_skb, struct sk_buff *skb)
{
	return on_free(true, skb, SVTRACE_EV_TAKEN, 0);
}

SEC("tp_btf/kfree_skb")
int BPF_PROG(btf_kfree_skb, struct sk_buff *skb, void *location, enum skb_drop_reason reason)
{
	return on_free(true, skb, SVTRACE_EV_DROP, (__u32)reason);
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(btf_sched_wakeup, struct task_struct *p)
{
	return on_wakeup(true, p);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(btf_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(true, prev, next);
}

/* ---- raw_tp variants (kernels without BTF for tp_btf) ---- */
SEC("raw_tp/netif_receive_skb")
int BPF_PROG(raw_netif_receive_skb, struct sk_buff *skb)
{
	return on_receive(false, skb);
}

SEC("raw_tp/net_dev_start_xmit")
int BPF_PROG(raw_net_dev_start_xmit, struct sk_buff *skb, struct net_device *dev)
{
	return on_xmit(false, skb, dev);
}

SEC("raw_tp/consume_skb")
int BPF_PROG(raw_consume_skb, struct sk_buff *skb)
{
	return on_free(false, skb, SVTRACE_EV_TAKEN, 0);
}

SEC("raw_tp/kfree_skb")
int BPF_PROG(raw_kfree_skb, struct sk_buff *skb, void *location, __u64 reason)
{
	return on_free(false, skb, SVTRACE_EV_DROP, (__u32)reason);
}

SEC("raw_tp/sched_wakeup")
int BPF_PROG(raw_sched_wakeup, struct task_struct *p)
{
	return on_wakeup(false, p);
}

SEC("raw_tp/sched_switch")
int BPF_PROG(raw_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(false, prev, next);
}

/* ---- optional probes (feature-probed by the loader, autoload off unless present) ---- */

/* An upcall means the datapath had no flow for the frame: user space (ovs-vswitchd) decides, a
 * latency alarm for SV. */
SEC("raw_tp/ovs_dp_upcall")
int BPF_PROG(ovs_dp_upcall, void *dp, struct sk_buff *skb)
{
	struct sv_scratch *s = scratch_get();
	struct svtrace_copy *e;
	unsigned char *head;
	__u32 id;
	__u16 mac;
	const bool btf = false;

	if (!s)
		return 0;
	mac = RD(btf, skb, mac_header);
	if (mac == MAC_UNSET)
		return 0;
	head = RD(btf, skb, head);
	if (sv_parse(btf, head + mac, RD(btf, skb, tail) - mac, skb, &s->f, s->win) <= 0)
		return 0;
	if (stream_id(&s->f, false, &id))
		return 0;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(SVTRACE_CNT_LOST);
		return 0;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->type = SVTRACE_EV_UPCALL;
	e->flags = s->f.flags;
	e->stream = id;
	e->smpcnt = (__u16)s->f.smpcnt;
	e->vlan_tci = s->f.vlan_tci;
	e->t2b_ns = bpf_ktime_get_ns();
	e->tid2b = (__u32)bpf_get_current_pid_tgid();
	e->cpu2b = (__u16)bpf_get_smp_processor_id();
	dev_id(btf, RD(btf, skb, dev), &e->ifindex2b, &e->netns2b);
	bpf_ringbuf_submit(e, RB_FLAGS);
	return 0;
}

SEC("raw_tp/ovs_do_execute_action")
int BPF_PROG(ovs_do_execute_action)
{
	count(SVTRACE_CNT_OVS_ACTION);
	return 0;
}

/* tap egress (tun_net_xmit) and vhost-net's handle_rx: the vhost worker becomes a known feeder as soon
 * as it runs, before it consumes its first SV frame. */
SEC("kprobe/tun_net_xmit")
int BPF_KPROBE(kp_tun_net_xmit)
{
	count(SVTRACE_CNT_TUN_XMIT);
	return 0;
}

SEC("kprobe/handle_rx")
int BPF_KPROBE(kp_vhost_handle_rx)
{
	feeder_self((__u32)bpf_get_current_pid_tgid());
	return 0;
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * svtrace: follows every IEC 61850-9-2 SV frame (EtherType 0x88BA) through the host on tracepoints only:
 *   T1  net:netif_receive_skb   on an ingress port (filter: netns inode + ifindex per port)
 *   T2a net:net_dev_start_xmit  on an egress port
 *   T2b skb:consume_skb         of an skb seen at T2a (taken), skb:kfree_skb (dropped, with the reason)
 *   sched:sched_wakeup / sched:sched_switch of the threads that fed frames to a guest: wake-up -> run
 *   delay and the task that held the CPU meanwhile (the "why late").
 * The frame is correlated here, not in user space: T1 -> map "inflight" (stream, smpCnt), T2a -> map
 * "track" (skb address, direct-mapped), and the free leaves the copy's two hop latencies in this CPU's
 * hop log (default; the in-BPF histograms when it is full) or emits ONE 80-octet event per frame and
 * egress copy carrying T1, T2a and T2b (--record, drops, late frames: svtrace.h). Names (comm) travel
 * only with late frames. Nothing wakes user space per event. Built with -mcpu=v3 (atomic
 * compare-and-exchange). Frame octets are read in place where the kernel allows it (DIRECT_MEM).
 * Every hook exists twice, tp_btf/ and raw_tp/: the loader enables one set at run time (STYLE.md 13).
 * Non-SV traffic costs one filter lookup and one 4-byte read; nothing is allocated, nothing is printed.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "sv_parse.h"
#include "svtrace.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define WIN SV_PARSE_WINDOW
#define WMASK SV_PARSE_WMASK
#define MAC_UNSET 0xffff

const volatile __u32 appid_filter = 0;
const volatile __u64 stale_ns = 2000000000ull;
const volatile __u64 late_ns = 0;		/* T1->T2b (or T2a->T2b) above this: late event with names */
/* wait_from_rq: a feeder's wait at least this long gets its end stamped (sv_feeder.run_ns, a clock read
 * on rare switches only), so that a late frame's wait can be placed against its hop; 0 never */
const volatile __u64 wait_stamp_ns = 0;
const volatile __u32 all_ports = 0;		/* bit p set for every egress port p */
/* --expect seen: a frame is expected only at the ports its stream has reached (map "stream_ports"),
 * not at every port (a switch with per-stream flows, not a flooding bridge) */
const volatile __u32 learn_ports = 0;
/* enum skb_drop_reason's UNHANDLED_PROTO on this kernel (from its BTF; ~0 unknown) */
const volatile __u32 reason_unhandled = ~0u;
const volatile __u32 nr_cpus = 1;
/* 1: a feeder's wait comes from the scheduler's own run-queue stamps (task sched_info, rq clock; no
 * sched_wakeup program); 0: from sched_wakeup (kernels without them in BTF, or --sched-wakeup). */
const volatile __u32 wait_from_rq = 0;
const volatile __u32 per_frame = 0;		/* 1: every copy as an event (--record), no histograms */
const volatile __u32 hlog_mask = 0;		/* hop log entries per CPU - 1 (0: no log; svtrace.h) */
const volatile __u64 track_mask = 0;		/* "track" entries - 1 (a power of two) */
const volatile __u32 svid_filter_len = 0;	/* --svid: only this svID (zero-padded) */
const volatile __u8 svid_filter[SVTRACE_SVID_MAX] = {};
/* The filter: port 0 = ingress, 1..nr_ports-1 = egress (netns inode + ifindex: ifindex values repeat
 * across namespaces), compared inline: no map lookup on any packet. The pairs are global data of their
 * own (a map of one read-mostly line): user space rewrites a port's pair when its interface is
 * re-created under the same name (a guest's tap at a VM restart), so the run follows it. */
const volatile __u32 nr_ports = 0;
volatile __u32 port_ifindex[SVTRACE_MAX_PORTS] SEC(".data.ports") = {};
volatile __u32 port_netns[SVTRACE_MAX_PORTS] SEC(".data.ports") = {};

/* Direct BTF loads in tp_btf programs (plain loads, no helper call); CO-RE probe reads in raw_tp. */
#define RD(b, src, fld) ((b) ? (src)->fld : BPF_CORE_READ(src, fld))

/*
 * Frame octets read in place (plain loads that the JIT guards against faults, no helper call and no
 * copy) where the verifier allows it: tp_btf programs on kernels that type a BTF pointer to octets
 * (skb->head) as read-only untrusted memory (Linux 6.17: enum bpf_features has
 * BPF_FEAT_RDONLY_CAST_TO_VOID). Resolved when the object is loaded (CO-RE): on older kernels the
 * verifier never sees the direct loads, and the frame is copied with bpf_probe_read_kernel().
 */
enum bpf_features___svk { BPF_FEAT_RDONLY_CAST_TO_VOID___svk = 0 };
#define DIRECT_MEM(b) \
	((b) && bpf_core_enum_value_exists(enum bpf_features___svk, BPF_FEAT_RDONLY_CAST_TO_VOID___svk))

/* A task's name (16 octets, NUL-terminated by the kernel): two plain loads in tp_btf, a probe read in
 * raw_tp. @dst is 8-octet aligned. */
static __always_inline void task_comm(const bool btf, const struct task_struct *p, __u8 *dst)
{
	if (btf) {
		const __u64 *src = (const __u64 *)p->comm;

		((__u64 *)dst)[0] = src[0];
		((__u64 *)dst)[1] = src[1];
	} else {
		bpf_probe_read_kernel_str(dst, SVTRACE_COMM_LEN, &p->comm);
	}
}

/* Feeder slots: a direct-mapped array indexed by tid & FEEDER_MASK (the tid is the slot's tag).
 * others. Plain .bss array: no helper call. */
#define FEEDER_MASK 4095

__u32 next_stream = 0;
/* Set by user space when it stops (before it detaches T1, then T2a): a copy at T2a without a T1 is then
 * a frame that came in after the end, not followed (svtrace_setup.c svtrace_setup_stop). Read only on that rare path. */
__u32 stopping = 0;

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

/* Frame (@stream, @smpcnt)'s slot in "inflight" (and bit in "incomplete"). */
static __always_inline __u32 slot_idx(__u32 stream, __u32 smpcnt)
{
	return (stream % SVTRACE_MAX_STREAMS) * SVTRACE_INFLIGHT_SLOTS + (smpcnt & (SVTRACE_INFLIGHT_SLOTS - 1));
}

static __always_inline struct svtrace_inflight *slot_of(__u32 stream, __u32 smpcnt)
{
	__u32 i = slot_idx(stream, smpcnt);

	return bpf_map_lookup_elem(&inflight, &i);
}

/* Bit i of word [stream * SVTRACE_INFLIGHT_SLOTS / 64 + i / 64]: inflight slot i of the stream holds a
 * frame that has not reached every port (svtrace.h). Set at T1 before the slot is written, cleared by
 * whoever completes the frame (or frees the slot: user space after the timeout). T1 reads only this
 * (two hot lines per stream), and the slot only when its bit is set: it writes the slot without
 * reading it, so the slot's line (last touched 1024 frames ago) is fetched behind the program, not
 * waited for. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, SVTRACE_MAX_STREAMS * SVTRACE_INFLIGHT_SLOTS / 64);
	__type(key, __u32);
	__type(value, __u64);
} incomplete SEC(".maps");

static __always_inline __u64 *incomplete_of(__u32 stream, __u32 smpcnt)
{
	__u32 i = slot_idx(stream, smpcnt) / 64;

	return bpf_map_lookup_elem(&incomplete, &i);
}

static __always_inline __u64 incomplete_bit(__u32 smpcnt)
{
	return 1ull << (smpcnt & 63);
}

/* Frame (@stream, @smpcnt) reached every port: its slot is free. */
static __always_inline void slot_complete(struct svtrace_inflight *v, __u32 stream, __u32 smpcnt)
{
	__u64 *w = incomplete_of(stream, smpcnt);

	/* --expect seen: a port reached for the first time after the frame completed still finds its T1 */
	if (!learn_ports)
		v->t1_ns = 0;
	if (w)
		__sync_fetch_and_and(w, ~incomplete_bit(smpcnt));
}

/* The slot holds this frame's T1 (same smpCnt, recent enough to be the same second's frame). */
static __always_inline bool slot_match(const struct svtrace_inflight *v, __u32 smpcnt, __u64 now)
{
	return v->t1_ns && v->smpcnt == (__u16)smpcnt && now - v->t1_ns < SVTRACE_T1_MAX_AGE_NS;
}

#define sv_track svtrace_track

/* skb address -> frame, set at T2a, released at the free: a direct-mapped array (slot = hash of the
 * address), owned through the slot's word in "track_claim" (svtrace.h: address and epoch, claimed by
 * compare-and-exchange so two CPUs never share a slot; only T2a touches it). Lookups are inlined array
 * accesses: no hashing of a key, no bucket lock, no allocation. An skb freed by a path without a
 * tracepoint is released by user space after the timeout (mmap, counted missing at T2b); a reused
 * address is caught by the staleness bound. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 32768);		/* set by the loader (--table, a power of two) */
	__type(key, __u32);
	__type(value, struct sv_track);
} track SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 32768);		/* = track's */
	__type(key, __u32);
	__type(value, __u64);
} track_claim SEC(".maps");

/* Each slot's release word (svtrace.h): the claim word of the copy its free released. Written by the
 * frees only (and user space's timeout scan), so its lines stay with the consumers' CPUs. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 32768);		/* = track's */
	__type(key, __u32);
	__type(value, __u64);
} track_rel SEC(".maps");

static __always_inline __u32 claim_epoch(__u64 c)
{
	return (__u32)(c >> SVTRACE_CLAIM_EPOCH_SHIFT);
}

/* The claim word of the copy slot @t holds. */
static __always_inline __u64 track_word(const struct sv_track *t)
{
	return svtrace_claim_word(t->skb, t->state);
}

/* Slot @t, whose claim word reads @c and release word @rel, may be claimed for @skb at @now
 * (svtrace.h): never claimed, last claimed by this very address (its copy was freed: the address is
 * live again), or holding another address's copy that was released or is stale. Held, or its owner's
 * stores not visible yet: no. */
static __always_inline bool claim_free(__u64 c, const struct sv_track *t, const __u64 *rel, __u64 skb, __u64 now)
{
	if (!c || (c & SVTRACE_CLAIM_TAG_MASK) == (skb & SVTRACE_CLAIM_TAG_MASK))
		return true;
	return track_word(t) == c && (*rel == c || now - t->t2a_ns > stale_ns);
}

/* The fallback when a copy's slot is held by another live skb (counted): a plain preallocated hash.
 * tracked_live > 0 while it may hold entries, so the free looks here only then. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct sv_track);
} tracked SEC(".maps");

__u64 tracked_live = 0;

/* Latency histograms (svtrace.h): "hist" [(stream * egress ports + port - 1) * 3 + hop]; its size is
 * set by the loader from the number of ports. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct svtrace_hist);
} hist SEC(".maps");

/* The last T1 on this CPU. The bridge (or tap) forwards in the same softirq, so T2a of that frame
 * follows on this CPU microseconds later, on the same data buffer (skb->head, shared by clones): its
 * key is then taken from here after checking the smpCnt octets in place, without parsing again. */
struct sv_t1_cache {
	__u64 head;
	__u64 smp_addr;		/* kernel address of smpCnt's value octets */
	__u64 t1_ns;
	__u32 stream;
	__u16 smpcnt, vlan_tci;
	__u16 flags, pad;
	__u32 tid;		/* the thread at T1: only its own T2a may use the cache (below) */
};

#define T1_CACHE_NS 1000000ull	/* a cached T1 older than 1 ms is not used */

/* This CPU's hot words, kept in the producer's line of its hop-log position ("hlog_pos" [cpu], whose
 * head T2b writes anyway): the skb key word and the T1 cache. Each program finds all its per-CPU
 * state in that one line, which stays in this CPU's cache between frames. */
struct sv_cpu_hot {
	__u64 key;		/* skb_key()'s word */
	struct sv_t1_cache t1;
};
_Static_assert(sizeof(struct sv_cpu_hot) <= sizeof(((struct svtrace_hlog_pos *)0)->cpu_hot),
	       "sv_cpu_hot must fit in the hop-log position's spare words");

/* The hop log (svtrace.h): entries, and each CPU's head and tail (one entry per possible CPU, also
 * without a log: the hot words live there). Sizes set by the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct svtrace_hent);
} hlog SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct svtrace_hlog_pos);
} hlog_pos SEC(".maps");

/* This CPU's hop-log position and hot words (an inlined array access). */
static __always_inline struct svtrace_hlog_pos *cpu_pos(void)
{
	__u32 cpu = bpf_get_smp_processor_id();

	return bpf_map_lookup_elem(&hlog_pos, &cpu);
}

#define HOT(hp) ((struct sv_cpu_hot *)(hp)->cpu_hot)

/* @v written to this CPU's key word and read back: a plain number the verifier knows nothing of (a
 * typed pointer becomes a scalar: a privileged program may store pointers as numbers; a constant
 * becomes unknown). */
static __always_inline __u64 launder(struct svtrace_hlog_pos *hp, __u64 v)
{
	volatile __u64 *w = &HOT(hp)->key;

	*w = v;
	return *w;
}

/* The skb's address as a number (hashed, stored as a tag): a tp_btf argument is a typed pointer the
 * verifier allows no arithmetic on. */
static __always_inline __u64 skb_key(struct svtrace_hlog_pos *hp, const struct sk_buff *skb)
{
	return launder(hp, (__u64)skb);
}

static __always_inline __u32 track_idx(__u64 skb)
{
	/* The address in 256-octet steps (an sk_buff takes 256 with its cache-line alignment): the skbs
	 * of one slab page, allocated one after the other, take neighbouring slots, so their claim words
	 * share lines and their slots' lines are prefetched together, and live skbs collide only when
	 * their addresses are a whole table (8 MiB by default) apart. (A multiplicative hash scatters
	 * them: a cache miss per claim and per slot.) */
	return (__u32)(skb >> 8) & (__u32)track_mask;
}

/* The slot T2a filled for @skb, or the fallback's entry, or NULL: the address compared, the release word
 * not read (the guest-side receive, in T2a's softirq: the copy cannot have been freed yet, and a slot
 * released already only gets receive fields no one reads; the next claim writes the whole slot). */
static __always_inline struct sv_track *track_recent(__u64 skb)
{
	__u32 i = track_idx(skb);
	struct sv_track *t = bpf_map_lookup_elem(&track, &i);

	if (t && t->skb == skb)
		return t;
	if (!tracked_live)
		return NULL;
	return bpf_map_lookup_elem(&tracked, &skb);
}

/* The frame copy tracked for @skb and not released yet, or NULL. The slot first (its address
 * compared), its release word only then: an untracked free reads one line. */
static __always_inline struct sv_track *track_find(__u64 skb)
{
	struct sv_track *t = track_recent(skb);
	__u32 i = track_idx(skb);
	__u64 *rel;

	if (!t || t->skb != skb)	/* none, or the fallback's entry (its tag field is 0) */
		return t;
	rel = bpf_map_lookup_elem(&track_rel, &i);
	if (rel && *rel != track_word(t))
		return t;
	return tracked_live ? bpf_map_lookup_elem(&tracked, &skb) : NULL;
}

/* Releases @t (found by track_find for @skb): the slot's release word (its line and claim untouched:
 * svtrace.h), or the fallback's entry (whose tag field is 0: the hash is keyed by the address). */
static __always_inline void track_release(struct sv_track *t, __u64 skb)
{
	__u32 i;
	__u64 *rel;

	if (t->skb == skb) {
		i = track_idx(skb);
		rel = bpf_map_lookup_elem(&track_rel, &i);
		if (rel)
			*rel = track_word(t);
		return;
	}
	if (!bpf_map_delete_elem(&tracked, &skb))
		__sync_fetch_and_add(&tracked_live, -1);
}

/* Threads that fed SV frames to a guest, found by what consumed the frames (not by name). A
 * direct-mapped table (slot tid & FEEDER_MASK, tagged with the tid): the sched hooks, which run on every
 * context switch of the machine, ask "is this a feeder" of the compact tag array (16 KiB, 16 tags a
 * cache line) and touch the slot's state only for a feeder. Two feeders whose tids share a slot: the
 * newer takes it (the older loses its wake-up tracking). */
struct sv_feeder {
	__u64 wakeup_ns;	/* pending sched_wakeup, 0 when running */
	__u64 wait_ns;		/* last completed wakeup -> run delay */
	__u32 holder_pid;
	__u8 holder_policy, holder_prio, pad[2];
	__u8 comm[SVTRACE_COMM_LEN];		/* the feeder's own name (read when it became one) */
	__u8 holder_comm[SVTRACE_COMM_LEN];
	__u64 run_ns;		/* when the last stamped wait ended (bpf_ktime_get_ns), 0 never: with
				 * sched_wakeup every wait; with wait_from_rq those >= wait_stamp_ns */
};

/* No holder named in @x (a feeder slot or a CPU's state): no pid, and no policy left from the last one. */
#define HOLDER_NONE(x) ((x)->holder_pid = 0, (x)->holder_policy = 0, (x)->holder_prio = 0)

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FEEDER_MASK + 1);
	__type(key, __u32);
	__type(value, __u32);
} feeder_tags SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FEEDER_MASK + 1);
	__type(key, __u32);
	__type(value, struct sv_feeder);
} feeders SEC(".maps");

/* The feeder state of thread @tid, or NULL when it is not a known feeder. */
static __always_inline struct sv_feeder *feeder_of(__u32 tid)
{
	__u32 i = tid & FEEDER_MASK;
	__u32 *tag = bpf_map_lookup_elem(&feeder_tags, &i);

	if (!tag || !tid || *tag != tid)
		return NULL;
	return bpf_map_lookup_elem(&feeders, &i);
}

/* Holders' names by pid (direct-mapped, tagged with the pid), kept whenever a holder is named in a
 * feeder's slot: a late frame received by one feeder (a napi thread) and freed later by another reads
 * its holder's name here (the receiver's slot has often moved on to a later run by then). */
struct sv_name {
	__u32 pid, pad;
	__u8 comm[SVTRACE_COMM_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FEEDER_MASK + 1);
	__type(key, __u32);
	__type(value, struct sv_name);
} holder_names SEC(".maps");

static __always_inline void holder_keep(const struct sv_feeder *f)
{
	__u32 i = f->holder_pid & FEEDER_MASK;
	struct sv_name *n = bpf_map_lookup_elem(&holder_names, &i);

	if (!n || !f->holder_pid)
		return;
	__builtin_memcpy(n->comm, f->holder_comm, SVTRACE_COMM_LEN);
	n->pid = f->holder_pid;
}

/* Per-CPU run bookkeeping of the sched_wakeup way (!wait_from_rq); a plain array indexed by CPU because
 * sched_wakeup runs on the waker's CPU and writes the target CPU's slot. Races only blur which holder is named, never memory safety. */
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

/*
 * wait_from_rq: each CPU's last run segments, written only by that CPU's sched_switch (no line crosses
 * CPUs, no clock read: the run queue's clock, just updated by the scheduler and reached through the
 * incoming task's sched_entity (its cfs_rq's rq: every task has one, whatever its class), and the
 * outgoing task's own sched_info.last_arrival). When a feeder is switched in, its wait is the rq clock minus its
 * sched_info.last_queued (set by the kernel when it was woken, or preempted, onto a run queue) and the
 * holder is the segment of this CPU that overlapped that wait the longest (idle excluded).
 */
#define SEG_N 16
struct sv_seg {
	__u64 start, end;	/* rq clock */
	__u64 task;		/* the task_struct's address (its names are read only for a holder) */
	__u32 pid, pad;
};

struct sv_segs {
	__u64 head;		/* next entry */
	__u64 pad[7];
	struct sv_seg e[SEG_N];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CPU_MASK + 1);
	__type(key, __u32);
	__type(value, struct sv_segs);
} segs SEC(".maps");


/* The parse result: stream key (svID zero-padded: it is a hash key), smpCnt, tag. */
struct sv_frame {
	struct svtrace_stream_key key;
	__u32 smpcnt;
	__u16 vlan_tci, flags;
	__u32 smp_pos;		/* where smpCnt's value starts in the parse window (from the EtherType) */
};

struct sv_scratch {
	__u8 win[WIN + 8];	/* a word of slack: sv_walk() reads the svID a word at a time */
	struct sv_frame f;
	struct sv_parse p;
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

/* EtherTypes an SV frame's skb can carry (eth_type_trans: 0x88BA, or what sv_wire.h allows in front of it: a
 * VLAN tag when not offloaded, an HSR tag). */
static __always_inline bool proto_maybe_sv(const bool btf, const struct sk_buff *skb)
{
	__u16 p = RD(btf, skb, protocol);

	return p == bpf_htons(SV_ETH_P_SV) || p == bpf_htons(SV_ETH_P_8021Q) || p == bpf_htons(SV_ETH_P_8021AD) ||
	       p == bpf_htons(SV_ETH_P_HSR);
}

/* Octets of the window from the EtherType on, for @avail linear octets from the MAC header; 0 if too short. */
static __always_inline __u32 win_len(__u32 avail)
{
	if (avail < 18)
		return 0;
	return avail - SV_ETH_ADDRS_LEN > WIN ? WIN : avail - SV_ETH_ADDRS_LEN;
}

/* Reads up to WIN octets of the frame at kernel address @l2 (MAC header, @avail linear octets) from its
 * EtherType on into @w: the one probe read of a frame. Returns the octets read, 0 if none. */
static __always_inline __u32 sv_read(const __u8 *l2, __u32 avail, __u8 *w)
{
	__u64 cp = win_len(avail);

	/* Keep the verifier's view of the size bounded whatever clang folds. */
	asm volatile("%0 &= 0x1ff" : "+r"(cp));
	if (cp < 6 || cp > WIN || bpf_probe_read_kernel(w, cp, l2 + SV_ETH_ADDRS_LEN))
		return 0;
	return (__u32)cp;
}

/* Where the shape cache takes its index from (the APPID's low octet when the frame has at most one VLAN tag;
 * sv_parse.h walks the real thing): only a hash, the cached prefix is then compared whole. */
static __always_inline __u32 pdu_base(const __u8 *w)
{
	__u16 et = ((__u16)w[0] << 8) | w[1];

	return et == SV_ETH_P_8021Q || et == SV_ETH_P_8021AD ? 2 + SV_VLAN_TAG_LEN : 2;
}

/* The low @k octets (1..7) of a word loaded from memory. */
static __always_inline __u64 low_octets(__u64 x, __u32 k)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return x & ((1ull << ((k & 7) * 8)) - 1);
#else
	return x & ~((1ull << ((8 - (k & 7)) * 8)) - 1);
#endif
}

/* The out-of-band tag (after a bridge, or a NIC with rx-vlan offload: skb->vlan_all != 0) when the frame's
 * bytes have none: a QinQ frame whose outer tag was taken off keeps its inner tag in the bytes, and that one
 * is the frame's VLAN wherever it is seen (the codec's too). */
static __always_inline void vlan_oob(const bool btf, const struct sk_buff *skb, struct sv_frame *f)
{
	if (!(f->flags & SVTRACE_F_VLAN_INBAND) && RD(btf, skb, vlan_all)) {
		f->vlan_tci = RD(btf, skb, vlan_tci);
		f->flags |= SVTRACE_F_VLAN_OOB;
	}
}

/*
 * Walks the window @w (@n octets from the EtherType) into @f with sv_parse.h. Returns 1 for an SV frame, 0 for
 * anything else (not SV, or filtered by APPID), -1 for an SV frame whose savPdu cannot be walked to the first
 * ASDU's smpCnt within the window (counted). The key: APPID and the first svID; f->smp_pos: where smpCnt's
 * value starts in @w. The VLAN: the inner tag in the bytes (see vlan_oob).
 */
static __always_inline int sv_walk(const __u8 *w, __u32 n, struct sv_frame *f, struct sv_parse *p)
{
	__u32 verdict = sv_parse_frame(w, n, p), len;

	if (verdict < SV_PARSE_HDR_SHORT)
		return 0;
	if (verdict >= SV_PARSE_HDR && appid_filter && p->appid != appid_filter) {
		count(SVTRACE_CNT_FILTERED);
		return 0;
	}
	if (verdict != SV_PARSE_SV) {
		count(SVTRACE_CNT_PARSE_ERR);
		return -1;
	}
	f->flags = p->ntags ? SVTRACE_F_VLAN_INBAND : 0;
	f->vlan_tci = p->tci;
	f->key.appid = p->appid;
	len = p->svid_len;
	if (len > SVTRACE_SVID_MAX) {
		len = SVTRACE_SVID_MAX;
		f->flags |= SVTRACE_F_SVID_TRUNC;
	}
	/* The length on the wire: a truncated svID says so to user space (and two svIDs that differ in
	 * length past the kept octets stay apart). */
	f->key.svid_len = (__u16)p->svid_len;
	/* The whole svID is the stream key (zero-padded): streams are told apart by the full string.
	 * Copied a word at a time (the window has a word of slack past WIN), the octets past it cleared. */
	for (__u32 j = 0; j < SVTRACE_SVID_MAX / 8; j++) {
		__u64 *k = (__u64 *)f->key.svid + j;

		*k = *(const __u64 *)&w[(p->svid_pos + j * 8) & WMASK];
		if (j * 8 >= len)
			*k = 0;
		else if (len - j * 8 < 8)
			*k = low_octets(*k, len - j * 8);
	}
	f->smpcnt = p->smpcnt;
	f->smp_pos = p->smp_pos;
	return 1;
}

/* Port index of (netns, ifindex) among ports [from, nr_ports), or -1. The index found comes back
 * laundered: compared against each port it would be a different constant on each path, and the code
 * after the lookup verified once per port (the kfree program passed the verifier's 1M-instruction
 * limit at 11 egress ports). */
static __always_inline int port_find(struct svtrace_hlog_pos *hp, __u32 netns, __u32 ifindex, __u32 from)
{
	for (__u32 i = 0; i < SVTRACE_MAX_PORTS; i++) {
		if (i >= nr_ports)
			break;
		if (i >= from && port_ifindex[i] == ifindex && port_netns[i] == netns)
			return (int)(launder(hp, i) & (SVTRACE_MAX_PORTS - 1));
	}
	return -1;
}

/* The per-CPU T1 frame count of each stream id (summed by user space). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SVTRACE_MAX_STREAMS);
	__type(key, __u32);
	__type(value, __u64);
} stream_frames SEC(".maps");

/* --expect seen: the egress ports (bit p) each stream id has reached at T2a, or was dropped on before it;
 * read by user space's timeout scan. A port learned stays: a stream that stops reaching it (a flow
 * deleted) is missing there from then on. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SVTRACE_MAX_STREAMS);
	__type(key, __u32);
	__type(value, __u32);
} stream_ports SEC(".maps");

/* The egress ports a frame of stream @id must reach to be complete. */
static __always_inline __u32 expected_ports(__u32 id)
{
	__u32 *m;

	if (!learn_ports)
		return all_ports;
	id %= SVTRACE_MAX_STREAMS;
	m = bpf_map_lookup_elem(&stream_ports, &id);
	return m ? *m & all_ports : 0;
}

/* Stream @id reached port bit @bit (--expect seen; one read of a line that stays shared once learned). */
static __always_inline void port_learn(__u32 id, __u32 bit)
{
	__u32 *m;

	if (!learn_ports)
		return;
	id %= SVTRACE_MAX_STREAMS;
	m = bpf_map_lookup_elem(&stream_ports, &id);
	if (m && !(*m & bit))
		__sync_fetch_and_or(m, bit);
}

/* --svid: the key's svID (zero-padded) is the filter's, compared as 8 words. Once per new stream. */
static __always_inline bool svid_match(const struct sv_frame *f)
{
	const __u64 *a = (const __u64 *)f->key.svid;
	const volatile __u64 *b = (const volatile __u64 *)svid_filter;

	if (f->key.svid_len != svid_filter_len)
		return false;
	for (int i = 0; i < SVTRACE_SVID_MAX / 8; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

/*
 * The stream id of the walked frame @f (the "streams" hash, keyed by APPID and the whole svID). A new
 * (APPID, svID) gets the next id; user space reads the names from the "streams" map the first time it
 * meets an id. Frames of streams beyond SVTRACE_MAX_STREAMS are counted and not traced. *@filtered:
 * excluded by --svid.
 */
static __always_inline int stream_id(struct sv_frame *f, __u32 *id, __u32 *filtered)
{
	struct svtrace_stream_val *v, nv = {};

	v = bpf_map_lookup_elem(&streams, &f->key);
	if (!v) {
		/* Claim the next free id: the "stream_ids" insert (BPF_NOEXIST, under the map's bucket lock)
		 * is the atomic step. */
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
		if (svid_filter_len && !svid_match(f))
			nv.flags = SVTRACE_SF_FILTERED;
		/* Two CPUs may race on a new stream: the loser's id is never used. */
		bpf_map_update_elem(&streams, &f->key, &nv, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&streams, &f->key);
		if (!v) {
			count(SVTRACE_CNT_STREAMS_FULL);
			return -1;
		}
	}
	*filtered = v->flags & SVTRACE_SF_FILTERED;
	*id = v->id;
	return 0;
}

/*
 * Per-CPU shape cache, by APPID: the window's octets from the EtherType up to smpCnt's value of the
 * last frame of that APPID (tag, APPID, Length, Reserved, every TLV header, the whole svID) and its
 * stream id. A frame whose octets up to there are the same is the same stream, with smpCnt at the same
 * place (the walk depends on nothing else): a few word compares instead of the BER walk and the hash
 * of a 68-octet key. Up to SHAPE_WORDS * 8 octets; longer headers always take the walk.
 */
#define SCACHE_MASK 15
#define SHAPE_WORDS 16
struct sv_shape {
	__u32 len;		/* 0: empty */
	__u32 id;
	__u16 flags;		/* SVTRACE_F_VLAN_INBAND, SVTRACE_F_SVID_TRUNC */
	__u16 vlan_tci;		/* in-band tag */
	__u32 filtered;
	__u64 pre[SHAPE_WORDS];	/* octets [0, len) of the window, zero beyond (after the header: a
				 * usual shape's first words share its line) */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SCACHE_MASK + 1);
	__type(key, __u32);
	__type(value, struct sv_shape);
} scache SEC(".maps");

/* Word @i of the window's first @len octets, zero beyond them: a shape as stored and as compared. */
static __always_inline __u64 prefix_word(const __u8 *w, __u32 i, __u32 len)
{
	__u64 x;

	if (i * 8 >= len)
		return 0;
	x = *(const __u64 *)(w + i * 8);
	return len - i * 8 < 8 ? low_octets(x, len - i * 8) : x;
}

/*
 * The frame at kernel address @l2 (@avail linear octets): stream id and smpCnt into s->f (key only on a
 * cache miss). Returns 1 for a traced SV frame, 0 otherwise (not SV, filtered, unparseable: counted).
 * @t1: count the frame as seen at T1. @direct: the shape compared in place (DIRECT_MEM), else on a copy.
 */
static __always_inline int sv_frame_id(const bool btf, const bool direct, const __u8 *l2, __u32 avail,
				       const struct sk_buff *skb, struct sv_scratch *s, bool t1, __u32 *id)
{
	struct sv_frame *f = &s->f;
	__u8 *w = s->win;
	const __u8 *src;	/* the octets from the EtherType on: in place, or the copy in @w */
	struct sv_shape *e;
	__u32 n, b, ci, len, filtered;
	__u64 *fr;

	if (direct) {
		n = win_len(avail);
		if (!n)
			return 0;
		src = l2 + SV_ETH_ADDRS_LEN;
	} else {
		n = sv_read(l2, avail, w);
		if (!n)
			return 0;
		src = w;
	}
	b = pdu_base(src);
	ci = src[(b + 1) & WMASK] & SCACHE_MASK;	/* APPID's low octet (APPIDs of a site differ there) */
	e = bpf_map_lookup_elem(&scache, &ci);
	if (!e)
		return 0;
	len = e->len;
	if (len && len <= SHAPE_WORDS * 8 && len + 2 <= n) {
		for (__u32 i = 0; i < SHAPE_WORDS && i * 8 < len; i++)
			if (prefix_word(src, i, len) != e->pre[i])
				goto walk;
		if (e->filtered) {
			count(SVTRACE_CNT_FILTERED);
			return 0;
		}
		f->smpcnt = ((__u32)src[len & WMASK] << 8) | src[(len + 1) & WMASK];
		f->smp_pos = len;
		f->flags = e->flags;
		f->vlan_tci = e->vlan_tci;
		vlan_oob(btf, skb, f);
		*id = e->id;
		goto found;
	}
walk:
	count(SVTRACE_CNT_WALKS);
	if (direct) {
		n = sv_read(l2, avail, w);
		if (!n)
			return 0;
	}
	if (sv_walk(w, n, f, &s->p) <= 0)
		return 0;
	vlan_oob(btf, skb, f);
	if (stream_id(f, id, &filtered))
		return 0;
	len = f->smp_pos;
	if (len <= SHAPE_WORDS * 8) {
		for (__u32 i = 0; i < SHAPE_WORDS; i++)
			e->pre[i] = prefix_word(w, i, len);
		e->len = len;
		e->id = *id;
		e->flags = f->flags & (SVTRACE_F_VLAN_INBAND | SVTRACE_F_SVID_TRUNC);
		e->vlan_tci = f->flags & SVTRACE_F_VLAN_INBAND ? f->vlan_tci : 0;
		e->filtered = filtered;
	}
	if (filtered) {
		count(SVTRACE_CNT_FILTERED);
		return 0;
	}
found:
	if (t1) {
		fr = bpf_map_lookup_elem(&stream_frames, id);
		if (fr)
			*fr += 1;
	}
	return 1;
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
	task_comm(btf, p, comm);
}

/* A feeder's wait as the 32-bit fields carry it (saturated: a wait of 4.3 s or more reads 4294967295). */
static __always_inline __u32 wait32(const struct sv_feeder *f)
{
	return f->wait_ns > 0xffffffffull ? 0xffffffffu : (__u32)f->wait_ns;
}

/* Makes the current thread a feeder (its wake-ups are then tracked) and returns its state; NULL the
 * first time (nothing tracked yet). */
static __always_inline struct sv_feeder *feeder_self(__u32 tid)
{
	__u32 i = tid & FEEDER_MASK;
	__u32 *tag = bpf_map_lookup_elem(&feeder_tags, &i);
	struct sv_feeder *f;

	if (!tag || !tid)
		return NULL;
	f = bpf_map_lookup_elem(&feeders, &i);
	if (!f)
		return NULL;
	if (*tag == tid)
		return f;
	f->wakeup_ns = 0;
	f->wait_ns = 0;
	f->run_ns = 0;
	HOLDER_NONE(f);
	bpf_get_current_comm(f->comm, sizeof(f->comm));
	*tag = tid;
	return NULL;
}

/*
 * Whether the program runs for an interrupt (hard, NMI, or serving a softirq; bottom halves merely
 * disabled, as in dev_queue_xmit, do not count): the current task was then only interrupted, it does
 * not carry the frame. The count is a per-CPU variable (x86's __preempt_count), which kernels without
 * KALLSYMS_ALL do not let a program name; it lies at a fixed distance from this CPU's run queue (both in
 * the per-CPU area, their offsets in the kernel's BTF): user space sets preempt_from_rq to that
 * distance (0: unknown, every context then counts as the task's own). Elsewhere (arm64) the count is in
 * the task's thread_info. On PREEMPT_RT softirqs run in threads, which do carry the frames they forward.
 */
#define SV_SOFTIRQ_OFFSET 0x100
#define SV_IRQ_MASKS (0xf00000 | 0xf0000)	/* NMI_MASK | HARDIRQ_MASK */
const volatile __s64 preempt_from_rq = 0;

struct thread_info___pc {
	__u64 preempt_count;
} __attribute__((preserve_access_index));
struct task_struct___pc {
	struct thread_info___pc thread_info;
} __attribute__((preserve_access_index));

static __always_inline bool in_interrupt_ctx(void)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct task_struct___pc *tp = (void *)task;
	__u32 pc = 0;

	if (bpf_core_field_exists(tp->thread_info.preempt_count)) {
		pc = (__u32)BPF_CORE_READ(tp, thread_info.preempt_count);
	} else if (preempt_from_rq) {
		/* current runs here: its sched_entity's cfs_rq is this CPU's, and so is its rq */
		char *rq = (char *)BPF_CORE_READ(task, se.cfs_rq, rq);

		if (!rq || bpf_probe_read_kernel(&pc, sizeof(pc), rq + preempt_from_rq))
			return false;
	}
	return pc & (SV_IRQ_MASKS | SV_SOFTIRQ_OFFSET);
}

/* why late, cause by cause: per-CPU timelines and the decomposition of a late copy (behind why_on) */
#include "svtrace_why.bpf.h"

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
	struct svtrace_hlog_pos *hp;
	struct sv_t1_cache *c;
	unsigned char *head;
	struct net_device *dev;
	struct svtrace_frame_key k;
	struct svtrace_inflight *v;
	struct sv_scratch *s;
	struct sv_track *t;
	__u32 ifindex, netns, miss, tid;
	__u64 key, now, bit, *w;
	__u16 mac;

	/* The early return for everything that is not SV: one load, three compares. */
	if (!proto_maybe_sv(btf, skb))
		return 0;
	dev = RD(btf, skb, dev);
	dev_id(btf, dev, &ifindex, &netns);
	if (ifindex != port_ifindex[0] || netns != port_netns[0]) {
		/* A frame seen at T2a arriving in the guest's namespace: remember who received it there
		 * when that is another thread than the one that forwarded it (a napi/... kthread with
		 * threaded NAPI, another CPU's backlog). Delivered by the forwarding context itself (veth
		 * peer's NAPI in the sender's softirq), no thread fed the guest in between: the feeder is
		 * the thread that takes the frame. The host's own namespace (the bridge's local copy) is
		 * not a guest: no lookup. */
		if (netns == port_netns[0])
			return 0;
		hp = cpu_pos();
		if (!hp)
			return 0;
		key = skb_key(hp, skb);
		t = track_recent(key);
		if (t)
			why_rx(key);
		if (t && !t->rx_tid && netns != port_netns[t->port & (SVTRACE_MAX_PORTS - 1)]) {
			struct sv_feeder *f;

			tid = (__u32)bpf_get_current_pid_tgid();
			if (tid == t->tid2a)
				return 0;
			f = feeder_self(tid);
			if (f) {
				t->rx_wait_ns = wait32(f);
				t->rx_holder_pid = f->holder_pid;
				t->rx_holder_policy = f->holder_policy;
				t->rx_holder_prio = f->holder_prio;
			} else {
				t->rx_wait_ns = 0;
				t->rx_holder_pid = 0;
			}
			t->rx_tid = tid;
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
	if (!sv_frame_id(btf, DIRECT_MEM(btf), head + mac, RD(btf, skb, tail) - mac, skb, s, true, &k.stream))
		return 0;
	k.smpcnt = s->f.smpcnt;
	now = bpf_ktime_get_ns();
	v = slot_of(k.stream, k.smpcnt);
	w = incomplete_of(k.stream, k.smpcnt);
	if (!v || !w)
		return 0;
	bit = incomplete_bit(k.smpcnt);
	if (*w & bit) {
		/* The slot's previous frame never reached every port. */
		miss = v->t1_ns ? expected_ports(k.stream) & ~(v->seen | v->predrop) : 0;
		if (miss) {
			struct svtrace_frame_key old = { .stream = k.stream, .smpcnt = v->smpcnt };

			emit_missing(&old, v, miss);
		}
	} else {
		__sync_fetch_and_or(w, bit);
	}
	v->t1_ns = now;
	v->tid1 = (__u32)bpf_get_current_pid_tgid();
	v->cpu1 = (__u16)bpf_get_smp_processor_id();
	v->smpcnt = (__u16)k.smpcnt;
	v->seen = 0;
	v->predrop = 0;
	hp = cpu_pos();
	if (hp) {
		c = &HOT(hp)->t1;
		c->head = (__u64)head;
		c->smp_addr = (__u64)(head + mac + SV_ETH_ADDRS_LEN + s->f.smp_pos);	/* the window starts at the EtherType */
		c->t1_ns = now;
		c->stream = k.stream;
		c->smpcnt = (__u16)k.smpcnt;
		c->vlan_tci = s->f.vlan_tci;
		c->flags = s->f.flags;
		c->tid = v->tid1;
	}
	return 0;
}

/* The smpCnt octets now at the address T1 cached (in @head, the same buffer), or -1 if unreadable. */
static __always_inline int cached_smpcnt(const bool btf, const unsigned char *head,
					 const struct sv_t1_cache *c)
{
	__u8 b[2];

	if (DIRECT_MEM(btf)) {
		const __u8 *sp = head + (c->smp_addr - c->head);

		return ((int)sp[0] << 8) | sp[1];
	}
	if (bpf_probe_read_kernel(b, sizeof(b), (const void *)c->smp_addr))
		return -1;
	return ((int)b[0] << 8) | b[1];
}

static __always_inline int on_xmit(const bool btf, struct sk_buff *skb, struct net_device *dev)
{
	int p;
	struct svtrace_frame_key k;
	struct svtrace_inflight *v;
	struct sv_scratch *s;
	struct sv_track tr, *t;
	struct svtrace_hlog_pos *hp;
	struct sv_t1_cache *c;
	__u32 ifindex, netns, bit, idx;
	__u64 key, old, nc, *cl, *rel;
	unsigned char *head, *data;

	/* Non-SV traffic toward the guests leaves here (before any clock read or cache check: a recycled
	 * buffer of the last T1 can carry another frame). */
	if (!proto_maybe_sv(btf, skb))
		return 0;
	dev_id(btf, dev, &ifindex, &netns);
	hp = cpu_pos();
	if (!hp)
		return 0;
	p = port_find(hp, netns, ifindex, 1);
	if (p < 1)
		return 0;
	key = skb_key(hp, skb);
	__builtin_memset(&tr, 0, sizeof(tr));
	tr.t2a_ns = bpf_ktime_get_ns();
	head = RD(btf, skb, head);
	c = &HOT(hp)->t1;
	/* Only in the thread that did that T1 (a kernel switch forwards in the receiving context): another
	 * thread's transmit (a user-space switch's, Open vSwitch's netdev datapath) is of a new buffer, maybe
	 * the very one of that T1 freed and reused for another stream's frame of the same smpCnt. */
	if (c->head == (__u64)head && tr.t2a_ns - c->t1_ns < T1_CACHE_NS &&
	    c->tid == (__u32)bpf_get_current_pid_tgid() && cached_smpcnt(btf, head, c) == c->smpcnt) {
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
		if (!sv_frame_id(btf, DIRECT_MEM(btf), data, RD(btf, skb, tail) - (__u32)(data - head), skb, s,
				 false, &k.stream))
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
	bit = 1u << (p & 31);
	port_learn(k.stream, bit);
	v = slot_of(k.stream, k.smpcnt);
	if (v && slot_match(v, k.smpcnt, tr.t2a_ns)) {
		__u32 exp = expected_ports(k.stream);

		tr.t1_ns = v->t1_ns;
		tr.tid1 = v->tid1;
		tr.cpu1 = v->cpu1;
		if (!(v->seen | v->predrop))
			tr.flags |= SVTRACE_F_T1_FIRST;
		/* Another thread than T1's transmits it, in its own context: the frame crossed user space
		 * (Open vSwitch's netdev datapath, an upcall): that thread is its carrier, and its waits are
		 * followed from now on (a feeder's bookkeeping) so that a late frame can say what held it. */
		if (tr.tid2a != tr.tid1 && !in_interrupt_ctx()) {
			tr.flags |= SVTRACE_F_CARRIED;
			feeder_self(tr.tid2a);
		}
		v->seen |= bit;
		/* Every port reached: the slot is free. */
		if (((v->seen | v->predrop) & exp) == exp)
			slot_complete(v, k.stream, k.smpcnt);
	} else if (stopping) {
		/* No T1 (rare): user space is stopping and T1 is detached already, so this is a frame
		 * that came in after the end: not followed. */
		return 0;
	}
	/* Claim the slot (claim_free). The claim word's line stays on the forwarding CPUs; the slot is
	 * then written without reading it (plain stores drain while the program goes on). Another live
	 * skb's slot: the fallback hash, counted. */
	idx = track_idx(key);
	cl = bpf_map_lookup_elem(&track_claim, &idx);
	t = bpf_map_lookup_elem(&track, &idx);
	rel = bpf_map_lookup_elem(&track_rel, &idx);
	if (!cl || !t || !rel)
		return 0;
	old = *(volatile __u64 *)cl;
	nc = svtrace_claim_word(key, claim_epoch(old) + 1);
	if (claim_free(old, t, rel, key, tr.t2a_ns) && __sync_val_compare_and_swap(cl, old, nc) == old) {
		tr.skb = key;
		tr.state = (__u16)claim_epoch(nc);
		*t = tr;
		return 0;
	}
	count(SVTRACE_CNT_TRACK_COLL);
	tr.skb = 0;
	if (bpf_map_update_elem(&tracked, &key, &tr, BPF_NOEXIST)) {
		if (bpf_map_update_elem(&tracked, &key, &tr, BPF_EXIST))
			count(SVTRACE_CNT_TRACK_FULL);
		return 0;
	}
	__sync_fetch_and_add(&tracked_live, 1);
	return 0;
}

static __always_inline void copy_fill(const bool btf, struct svtrace_copy *e, const struct sv_track *t, __u32 type,
				      __u32 reason, __u64 now, struct sk_buff *skb, struct sv_feeder **fp)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
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
	e->tid2b = tid;
	e->cpu1 = t->cpu1;
	e->cpu2a = t->cpu2a;
	e->cpu2b = (__u16)bpf_get_smp_processor_id();
	dev_id(btf, RD(btf, skb, dev), &ifindex, &netns);
	e->ifindex2b = ifindex;
	e->netns2b = netns;
	if (netns && netns != port_netns[t->port & (SVTRACE_MAX_PORTS - 1)])
		e->flags |= SVTRACE_F_OTHER_NS;
	if (t->rx_tid) {
		e->flags |= SVTRACE_F_RX_SEEN;
		e->feeder_tid = t->rx_tid;
		e->wait_ns = t->rx_wait_ns;
		e->holder_pid = t->rx_holder_pid;
		e->holder_policy = t->rx_holder_policy;
		e->holder_prio = t->rx_holder_prio;
	} else {
		f = feeder_self(tid);
		e->feeder_tid = tid;
		if (f) {
			e->wait_ns = wait32(f);
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

/* Position of the highest set bit of @v (0 < v < 2^32): a branchy binary search (no clz in BPF). */
static __always_inline __u32 msb32(__u64 v)
{
	__u32 e = 0;

	if (v >= 1ull << 16) {
		v >>= 16;
		e += 16;
	}
	if (v >= 1ull << 8) {
		v >>= 8;
		e += 8;
	}
	if (v >= 1ull << 4) {
		v >>= 4;
		e += 4;
	}
	if (v >= 1ull << 2) {
		v >>= 2;
		e += 2;
	}
	if (v >= 1ull << 1)
		e += 1;
	return e;
}

/* Atomic max of *p and v (a few tries: a lost race only delays a new max to the next value). */
static __always_inline void atomic_max(__u64 *p, __u64 v)
{
	__u64 old = *p, seen;

	for (int i = 0; i < 4 && v > old; i++) {
		seen = __sync_val_compare_and_swap(p, old, v);
		if (seen == old)
			break;
		old = seen;
	}
}

/* sv_stats_index() with @sub sub-bucket bits, for 0 <= v < SVTRACE_HIST_LIMIT_NS. */
static __always_inline __u32 hist_index(__u64 v, __u32 e, __u32 sub)
{
	if (v < (2ull << sub))
		return (__u32)v;
	return ((e - sub) << sub) + (__u32)(v >> (e - sub));
}

/* One value into the (stream, port, hop) histogram: one atomic add to its bucket, min and max exact. */
static __always_inline void hist_add(__u32 port, __u32 hop, __u32 stream, __u64 v)
{
	__u32 k = ((stream % SVTRACE_MAX_STREAMS) * (nr_ports - 1) + port - 1) * SVTRACE_HOPS + hop, i;
	struct svtrace_hist *h = bpf_map_lookup_elem(&hist, &k);

	if (!h)
		return;
	i = hist_index(v, v >= 128 ? msb32(v) : 0, SVTRACE_HIST_SUB_BITS);
	if (i < SVTRACE_HIST_BUCKETS)
		__sync_fetch_and_add(&h->bucket[i], 1);
	atomic_max(&h->max, v);
	atomic_max(&h->nmin, ~v);
}

/* One taken copy into this CPU's hop log; false when the log is full (or off). */
static __always_inline bool hlog_add(struct svtrace_hlog_pos *hp, __u32 port, __u32 stream, __u64 d1, __u64 d2,
				     bool has_t1)
{
	__u32 cpu = bpf_get_smp_processor_id(), i;
	struct svtrace_hent *e;
	__u64 h;

	h = hp->head;
	if (h >= hp->lim) {
		hp->lim = *(volatile __u64 *)&hp->tail + hlog_mask + 1;
		if (h >= hp->lim)
			return false;
	}
	i = cpu * (hlog_mask + 1) + (__u32)(h & hlog_mask);
	e = bpf_map_lookup_elem(&hlog, &i);
	if (!e)
		return false;
	e->w = svtrace_hent_pack(has_t1 ? (__u32)d1 : SVTRACE_HLOG_NO_T1, (__u32)d2, port, stream);
	/* Publish: the entry's stores before the head's. x86 keeps stores in order (a compiler barrier is
	 * enough); elsewhere an exchange, which BPF orders fully. */
#if defined(__TARGET_ARCH_x86)
	asm volatile("" ::: "memory");
	*(volatile __u64 *)&hp->head = h + 1;
#else
	__sync_lock_test_and_set(&hp->head, h + 1);
#endif
	/* Every half log of entries, wake user space (which otherwise drains every 200 ms): an 8-octet
	 * record, shorter than any event, of which only the wake-up counts. */
	if (!((h + 1) & (hlog_mask >> 1)))
		bpf_ringbuf_output(&events, &h, sizeof(h), BPF_RB_FORCE_WAKEUP);
	return true;
}

/*
 * A copy taken in time: its hops into the hop log (or, when full, the histograms), no event. False when
 * a hop is outside the histograms' range (or negative: T1 and T2a on CPUs whose clocks disagree): the
 * caller emits the event, accounted exactly in user space.
 */
static __always_inline bool hists_add(struct svtrace_hlog_pos *hp, const struct sv_track *t, __u64 now)
{
	__u64 d2 = now - t->t2a_ns, d1 = t->t2a_ns - t->t1_ns, d12 = now - t->t1_ns;
	__u32 p = t->port, s = t->stream;

	if (p < 1 || p >= SVTRACE_MAX_PORTS || d2 >= SVTRACE_HIST_LIMIT_NS)
		return false;
	if (t->t1_ns && (d1 >= SVTRACE_HIST_LIMIT_NS || d12 >= SVTRACE_HIST_LIMIT_NS))
		return false;
	if (hlog_mask && d2 < SVTRACE_HLOG_LIMIT_NS && (!t->t1_ns || d1 < SVTRACE_HLOG_LIMIT_NS) &&
	    hlog_add(hp, p, s, d1, d2, t->t1_ns != 0))
		return true;
	if (t->t1_ns) {
		hist_add(p, 0, s, d1);
		hist_add(p, 2, s, d12);
	}
	hist_add(p, 1, s, d2);
	count(SVTRACE_CNT_AGGREGATED);
	return true;
}

static __always_inline int port_drop(const bool btf, struct svtrace_hlog_pos *hp, struct sk_buff *skb, __u32 reason)
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
	p = port_find(hp, netns, ifindex, 0);
	if (p < 0)
		return 0;
	mac = RD(btf, skb, mac_header);
	s = scratch_get();
	if (!s || mac == MAC_UNSET)
		return 0;
	head = RD(btf, skb, head);
	if (!sv_frame_id(btf, false, head + mac, RD(btf, skb, tail) - mac, skb, s, false, &k.stream))
		return 0;
	k.smpcnt = s->f.smpcnt;
	if (!p) {
		/* On the ingress, before T1's hops: counted, not an event (a user-space switch's ingress sees
		 * one UNHANDLED_PROTO per frame: the host stack's own copy, besides the switch's). */
		count(reason == reason_unhandled ? SVTRACE_CNT_INGRESS_UNHANDLED : SVTRACE_CNT_INGRESS_DROP);
		return 0;
	}
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
	bit = 1u << (p & 31);
	port_learn(k.stream, bit);
	v = slot_of(k.stream, k.smpcnt);
	if (v && slot_match(v, k.smpcnt, e->t2b_ns)) {
		__u32 exp = expected_ports(k.stream);

		e->t1_ns = v->t1_ns;
		e->tid1 = v->tid1;
		e->cpu1 = v->cpu1;
		if (!(v->seen | v->predrop))
			e->flags |= SVTRACE_F_T1_FIRST;
		v->predrop |= bit;
		if (((v->seen | v->predrop) & exp) == exp)
			slot_complete(v, k.stream, k.smpcnt);
	}
	bpf_ringbuf_submit(e, RB_FLAGS);
	return 0;
}

/* (late path) When the wait of feeder @f that lasted @wait ns ended, or 0 when that was not stamped. */
static __always_inline __u64 wait_end(const struct sv_feeder *f, __u64 wait)
{
	if (!f || !wait || (wait_from_rq && (!wait_stamp_ns || wait < wait_stamp_ns)))
		return 0;
	return f->run_ns;
}

/* (late path) The carrier of a copy that crossed a thread between T1 and T2a: its name and last wait. */
static __always_inline void carrier_fill(struct svtrace_late_ev *l, const struct sv_track *t)
{
	struct sv_feeder *f = t->flags & SVTRACE_F_CARRIED ? feeder_of(t->tid2a) : NULL;

	if (!f) {
		__builtin_memset(l->carrier_comm, 0, SVTRACE_COMM_LEN);
		__builtin_memset(l->carrier_holder_comm, 0, SVTRACE_COMM_LEN);
		l->carrier_wait_ns = 0;
		l->carrier_wait_end_ns = 0;
		l->carrier_holder_pid = 0;
		l->carrier_holder_policy = 0;
		l->carrier_holder_prio = 0;
		__builtin_memset(l->pad, 0, sizeof(l->pad));
		return;
	}
	__builtin_memset(l->pad, 0, sizeof(l->pad));
	__builtin_memcpy(l->carrier_comm, f->comm, SVTRACE_COMM_LEN);
	l->carrier_wait_ns = wait32(f);
	l->carrier_wait_end_ns = wait_end(f, f->wait_ns);
	l->carrier_holder_pid = f->holder_pid;
	l->carrier_holder_policy = f->holder_policy;
	l->carrier_holder_prio = f->holder_prio;
	if (f->holder_pid)
		__builtin_memcpy(l->carrier_holder_comm, f->holder_comm, SVTRACE_COMM_LEN);
	else
		__builtin_memset(l->carrier_holder_comm, 0, SVTRACE_COMM_LEN);
}

static __always_inline int on_free(const bool btf, struct sk_buff *skb, __u32 type, __u32 reason)
{
	struct svtrace_hlog_pos *hp;
	struct sv_feeder *f;
	struct sv_track *t;
	__u64 key, now, lat;

	/* Every skb of the machine is freed here: non-SV ones leave after one load. */
	if (!proto_maybe_sv(btf, skb))
		return 0;
	hp = cpu_pos();
	if (!hp)
		return 0;
	key = skb_key(hp, skb);
	/* The slot before the clock: the slot's line comes from the T2a CPU and the skb's (read above)
	 * from wherever it was last written; the clock read waits for every earlier load, so both misses
	 * are in flight together instead of one after the other. */
	t = track_find(key);
	if (!t)
		return type == SVTRACE_EV_DROP ? port_drop(btf, hp, skb, reason) : 0;
	now = bpf_ktime_get_ns();
	if (now - t->t2a_ns > stale_ns) {
		/* The address was reused by another skb after an untraced free. */
		count(SVTRACE_CNT_STALE);
		track_release(t, key);
		return 0;
	}
	lat = now - (t->t1_ns ? t->t1_ns : t->t2a_ns);
	if (!per_frame && type == SVTRACE_EV_TAKEN && !(late_ns && lat > late_ns) && hists_add(hp, t, now)) {
		/* The thread that took it is a feeder from now on (its wake-ups are followed): a vhost
		 * worker is found this way, by the frames it consumes. */
		if (!t->rx_tid)
			feeder_self((__u32)bpf_get_current_pid_tgid());
		track_release(t, key);
		return 0;
	}
	if (late_ns && lat > late_ns) {
		/* Late: the names go with it (the holder may be gone by the time user space looks). */
		struct svtrace_late_ev *l = bpf_ringbuf_reserve(&events, sizeof(*l), 0);

		if (!l) {
			count(SVTRACE_CNT_LOST);
		} else {
			copy_fill(btf, &l->c, t, type, reason, now, skb, &f);
			if (t->rx_tid) {
				/* The receiver's name from its feeder slot; the holder seen at the receive by its
				 * pid (the slot may have moved on to a later run since). */
				f = feeder_of(t->rx_tid);
				l->wait_end_ns = 0;
				if (f) {
					__u32 ni = t->rx_holder_pid & FEEDER_MASK;
					struct sv_name *nm = bpf_map_lookup_elem(&holder_names, &ni);
					__u64 fw = wait32(f);

					/* the slot's stamp is this wait's only while the slot shows it */
					if (fw == t->rx_wait_ns)
						l->wait_end_ns = wait_end(f, t->rx_wait_ns);
					__builtin_memcpy(l->feeder_comm, f->comm, SVTRACE_COMM_LEN);
					if (nm && nm->pid == t->rx_holder_pid)
						__builtin_memcpy(l->holder_comm, nm->comm, SVTRACE_COMM_LEN);
					else
						__builtin_memset(l->holder_comm, 0, SVTRACE_COMM_LEN);
				} else {
					__builtin_memset(l->feeder_comm, 0, SVTRACE_COMM_LEN);
					__builtin_memset(l->holder_comm, 0, SVTRACE_COMM_LEN);
				}
			} else {
				l->wait_end_ns = f ? wait_end(f, f->wait_ns) : 0;
				bpf_get_current_comm(l->feeder_comm, SVTRACE_COMM_LEN);
				if (f)
					__builtin_memcpy(l->holder_comm, f->holder_comm, SVTRACE_COMM_LEN);
				else
					__builtin_memset(l->holder_comm, 0, SVTRACE_COMM_LEN);
			}
			if (!l->c.holder_pid)
				__builtin_memset(l->holder_comm, 0, SVTRACE_COMM_LEN);
			carrier_fill(l, t);
			l->c.flags |= SVTRACE_F_LATE;
					bpf_ringbuf_submit(l, RB_FLAGS);
		}
		why_late(btf, t, key, now);
	} else {
		struct svtrace_copy *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

		if (!e) {
			count(SVTRACE_CNT_LOST);
		} else {
			copy_fill(btf, e, t, type, reason, now, skb, &f);
					bpf_ringbuf_submit(e, RB_FLAGS);
		}
	}
	track_release(t, key);
	return 0;
}

static __always_inline int on_wakeup(const bool btf, struct task_struct *p)
{
	__u32 tid = RD(btf, p, pid), cpu;
	struct sv_feeder *f;
	struct sv_cpu_state *c;
	__u64 now;

	f = feeder_of(tid);
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
	HOLDER_NONE(c);
	return 0;
}

/* wait_from_rq (see "segs"): this CPU's run segment of @prev into its ring; for a feeder switched in,
 * its wait and the segment that held its CPU the longest meanwhile. */
static __always_inline int on_switch_rq(const bool btf, struct task_struct *prev, struct task_struct *next)
{
	__u32 cpu = bpf_get_smp_processor_id() & CPU_MASK, best_i = 0, i;
	struct sv_segs *r = bpf_map_lookup_elem(&segs, &cpu);
	__u64 now, h, q, from, ov, best = 0;
	struct sv_seg *e;
	struct sv_feeder *f;

	if (!r)
		return 0;
	now = btf ? next->se.cfs_rq->rq->clock : BPF_CORE_READ(next, se.cfs_rq, rq, clock);
	if (!now)
		return 0;
	h = r->head;
	e = &r->e[h & (SEG_N - 1)];
	e->start = RD(btf, prev, sched_info.last_arrival);
	e->end = now;
	e->task = (__u64)prev;
	e->pid = RD(btf, prev, pid);
	r->head = h + 1;
	f = feeder_of(RD(btf, next, pid));
	if (!f)
		return 0;
	q = RD(btf, next, sched_info.last_queued);
	f->wait_ns = q && now > q ? now - q : 0;
	HOLDER_NONE(f);
	if (!f->wait_ns)
		return 0;
	/* A long wait (rare: it may make a frame late) is placed in time, on the frames' clock. */
	if (wait_stamp_ns && f->wait_ns >= wait_stamp_ns)
		f->run_ns = bpf_ktime_get_ns();
	for (i = 0; i < SEG_N; i++) {
		e = &r->e[(h - i) & (SEG_N - 1)];
		if (e->end <= q)
			break;
		if (!e->pid)
			continue;
		from = e->start > q ? e->start : q;
		ov = e->end - from;
		if (ov > best) {
			best = ov;
			best_i = i;
		}
	}
	if (!best)
		return 0;
	if (!best_i) {
		task_prio(btf, prev, &f->holder_pid, &f->holder_policy, &f->holder_prio, f->holder_comm);
	} else {
		/* An earlier segment: its task may have exited since (probe reads; its pid must match). */
		e = &r->e[(h - best_i) & (SEG_N - 1)];
		task_prio(false, (struct task_struct *)e->task, &f->holder_pid, &f->holder_policy,
			  &f->holder_prio, f->holder_comm);
		if (f->holder_pid != e->pid)
			HOLDER_NONE(f);
	}
	holder_keep(f);
	return 0;
}

static __always_inline int on_switch(const bool btf, struct task_struct *prev, struct task_struct *next)
{
	__u32 cpu = bpf_get_smp_processor_id() & CPU_MASK, ntid;
	struct sv_cpu_state *c;
	struct sv_feeder *f;
	__u64 now, start, seg;

	if (wait_from_rq)
		return on_switch_rq(btf, prev, next);
	c = bpf_map_lookup_elem(&cpus, &cpu);
	if (!c)
		return 0;
	ntid = RD(btf, next, pid);
	/* Nothing to do unless a feeder waits for this CPU or is switched in. */
	f = feeder_of(ntid);
	if (!c->pending_ns && !f) {
		if (c->cur_start_ns)
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
	if (!f || !f->wakeup_ns)
		return 0;
	f->wait_ns = now - f->wakeup_ns;
	f->wakeup_ns = 0;
	f->run_ns = now;
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
	holder_keep(f);
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
	why_switch(true, preempt, prev, next);
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
	why_switch(false, preempt, prev, next);
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
	if (!sv_frame_id(btf, false, head + mac, RD(btf, skb, tail) - mac, skb, s, false, &id))
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

/* T2a where net:net_dev_start_xmit does not fire: __dev_direct_xmit hands the skb to the driver without
 * xmit_one(), for AF_XDP's copy-mode transmit (Open vSwitch's afxdp ports, served by pmd threads) and
 * packet sockets with PACKET_QDISC_BYPASS. Never both for one skb: that path has no tracepoint. fentry (a
 * BPF trampoline, no kprobe needed), optional like the kprobes. */
SEC("fentry/__dev_direct_xmit")
int BPF_PROG(fe_dev_direct_xmit, struct sk_buff *skb)
{
	return on_xmit(true, skb, skb->dev);
}

SEC("kprobe/handle_rx")
int BPF_KPROBE(kp_vhost_handle_rx)
{
	feeder_self((__u32)bpf_get_current_pid_tgid());
	return 0;
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * svtrace: follows every IEC 61850-9-2 SV frame (EtherType 0x88BA) through the host on tracepoints only:
 *   T1  net:netif_receive_skb   on an ingress port (filter map keyed by netns inode + ifindex)
 *   T2a net:net_dev_start_xmit  on an egress port (the skb address is remembered: skb -> frame key)
 *   T2b skb:consume_skb         of a remembered skb (taken), skb:kfree_skb (dropped, with the reason)
 *   sched:sched_wakeup / sched:sched_switch of the threads that fed frames to a guest: wake-up -> run
 *   delay and the task that held the CPU meanwhile (the "why late").
 * Every hook exists twice, tp_btf/ and raw_tp/: the loader enables one set at run time (STYLE.md 13).
 * Non-SV traffic costs one filter lookup and one 4-byte read; nothing is allocated, nothing is printed.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
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
const volatile __u32 nr_cpus = 1;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SVTRACE_MAX_PORTS);
	__type(key, struct svtrace_port_key);
	__type(value, struct svtrace_port);
} ports SEC(".maps");

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

/* What the loader needs at T2b: the frame key as seen at T2a, plus the guest-side receiver if any. */
struct sv_track {
	struct svtrace_event ev;	/* the T2a event */
	__u32 rx_tid, rx_pid;
	__u64 rx_wait_ns;
	__u32 rx_holder_pid, rx_holder_policy, rx_holder_prio, rx_holder_kprio;
	__u8 rx_comm[SVTRACE_COMM_LEN];
	__u8 rx_holder_comm[SVTRACE_COMM_LEN];
};

/* skb address -> frame, set at T2a, removed at the free. LRU: an skb freed by a path without a
 * tracepoint must not pin an entry for ever; a reused address is caught by the staleness bound. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 32768);
	__type(key, __u64);
	__type(value, struct sv_track);
} tracked SEC(".maps");

/* Threads that fed SV frames to a guest, found by what consumed the frames (not by name). */
struct sv_feeder {
	__u64 wakeup_ns;	/* pending sched_wakeup, 0 when running */
	__u64 wait_ns;		/* last completed wakeup -> run delay */
	__u32 holder_pid, holder_policy, holder_prio, holder_kprio;
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
	__u32 holder_pid, holder_policy, holder_prio, holder_kprio;
	__u32 pad;
	__u8 holder_comm[SVTRACE_COMM_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct sv_cpu_state);
} cpus SEC(".maps");

struct sv_scratch {
	__u8 win[WIN];
	struct svtrace_take_event tev;
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

/* Ring buffer: wake user space only when a quarter full; it also polls every few ms. One wake-up per
 * event would cost more than the tracing itself at 100k events/s. */
static __always_inline void emit(void *ev, __u64 size)
{
	__u64 flags = BPF_RB_NO_WAKEUP;

	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) > bpf_ringbuf_query(&events, BPF_RB_RING_SIZE) / 4)
		flags = BPF_RB_FORCE_WAKEUP;
	if (bpf_ringbuf_output(&events, ev, size, flags))
		count(SVTRACE_CNT_LOST);
}

static __always_inline struct sv_scratch *scratch_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&scratch_map, &zero);
}

static __always_inline void dev_id(const struct net_device *dev, __u32 *ifindex, __u32 *netns)
{
	*ifindex = 0;
	*netns = 0;
	if (!dev)
		return;
	*ifindex = BPF_CORE_READ(dev, ifindex);
	*netns = BPF_CORE_READ(dev, nd_net.net, ns.inum);
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
 * Reads the frame at kernel address @l2 (MAC header, @avail linear bytes) and fills the frame key of
 * @ev. Returns 1 for an SV frame, 0 for anything else (the early return), -1 for an SV frame whose
 * savPdu cannot be walked within the window (counted). IEC 61850-9-2 §8.2 / Annex A: APPID, Length,
 * Reserved1/2, then savPdu [APPLICATION 0] { noASDU [0], security [1] OPTIONAL, seqASDU [2] { ASDU
 * { svID [0], datSet [1] OPTIONAL, smpCnt [2] (2 octets) ... } } }.
 */
static __always_inline int sv_parse(const __u8 *l2, __u32 avail, const struct sk_buff *skb,
				    struct svtrace_event *ev, __u8 *w)
{
	__u8 h[4];
	__u32 off = 14, pos, len, svid_len;
	__u64 n, cp;
	__u16 et;

	if (avail < 18 || bpf_probe_read_kernel(h, sizeof(h), l2 + 12))
		return 0;
	et = ((__u16)h[0] << 8) | h[1];
	ev->flags = 0;
	ev->vlan_tci = 0;
	if (et == ETH_P_8021Q || et == ETH_P_8021AD) {
		ev->vlan_tci = ((__u32)h[2] << 8) | h[3];
		ev->flags |= SVTRACE_F_VLAN_INBAND;
		if (bpf_probe_read_kernel(h, 2, l2 + 16))
			return 0;
		et = ((__u16)h[0] << 8) | h[1];
		off = 18;
	}
	if (et != ETH_P_SV)
		return 0;
	/* Out-of-band tag (after a bridge, or a NIC with rx-vlan offload): skb->vlan_all != 0. */
	if (!(ev->flags & SVTRACE_F_VLAN_INBAND) && BPF_CORE_READ(skb, vlan_all)) {
		ev->vlan_tci = BPF_CORE_READ(skb, vlan_tci);
		ev->flags |= SVTRACE_F_VLAN_OOB;
	}
	count(SVTRACE_CNT_SV_SEEN);
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
	ev->appid = ((__u32)w[0] << 8) | w[1];
	if (appid_filter && ev->appid != appid_filter) {
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
		ev->flags |= SVTRACE_F_SVID_TRUNC;
	}
	if (pos > WIN)
		goto bad;
	ev->svid_len = len;
	/* Copied whole (up to 64 bytes): streams are told apart by the full string in user space. */
	cp = len;
	asm volatile("%0 &= 0x7f" : "+r"(cp));
	if (cp > SVTRACE_SVID_MAX || bpf_probe_read_kernel(ev->svid, cp, l2 + off + pos))
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
	ev->smpcnt = ((__u32)w[(pos + 2) & WMASK] << 8) | w[(pos + 3) & WMASK];
	return 1;
bad:
	count(SVTRACE_CNT_PARSE_ERR);
	return -1;
}

static __always_inline void ev_fill_task(struct svtrace_event *ev, __u64 now)
{
	__u64 pt = bpf_get_current_pid_tgid();

	ev->ts_mono_ns = now;
	ev->cpu = bpf_get_smp_processor_id();
	ev->tid = (__u32)pt;
	ev->pid = pt >> 32;
	bpf_get_current_comm(ev->comm, sizeof(ev->comm));
}

static __always_inline const struct svtrace_port *port_of(__u32 netns, __u32 ifindex)
{
	struct svtrace_port_key k = { .netns_ino = netns, .ifindex = ifindex };

	return bpf_map_lookup_elem(&ports, &k);
}

/* Makes the current thread a feeder (its wake-ups are then tracked) and returns its state. */
static __always_inline struct sv_feeder *feeder_self(__u32 tid)
{
	struct sv_feeder *f = bpf_map_lookup_elem(&feeders, &tid);
	struct sv_feeder zero = {};

	if (f)
		return f;
	bpf_map_update_elem(&feeders, &tid, &zero, BPF_NOEXIST);
	return NULL;
}

static __always_inline int on_receive(struct sk_buff *skb)
{
	const struct svtrace_port *p;
	struct net_device *dev = BPF_CORE_READ(skb, dev);
	struct sv_scratch *s;
	struct sv_track *t;
	__u32 ifindex, netns;
	__u64 key = (__u64)skb;
	__u16 mac;
	int r;

	dev_id(dev, &ifindex, &netns);
	p = port_of(netns, ifindex);
	if (!p || !(p->role & SVTRACE_ROLE_INGRESS)) {
		/* A frame seen at T2a arriving in the guest's namespace: remember who received it there
		 * (veth peer's NAPI: the sender's softirq, or a napi/... kthread when threaded). */
		t = bpf_map_lookup_elem(&tracked, &key);
		if (t && !t->rx_tid && netns != t->ev.netns_ino) {
			__u64 pt = bpf_get_current_pid_tgid();
			struct sv_feeder *f = feeder_self((__u32)pt);

			t->rx_tid = (__u32)pt;
			t->rx_pid = pt >> 32;
			bpf_get_current_comm(t->rx_comm, sizeof(t->rx_comm));
			if (f) {
				t->rx_wait_ns = f->wait_ns;
				t->rx_holder_pid = f->holder_pid;
				t->rx_holder_policy = f->holder_policy;
				t->rx_holder_prio = f->holder_prio;
				t->rx_holder_kprio = f->holder_kprio;
				__builtin_memcpy(t->rx_holder_comm, f->holder_comm, SVTRACE_COMM_LEN);
			}
		}
		return 0;
	}
	s = scratch_get();
	if (!s)
		return 0;
	mac = BPF_CORE_READ(skb, mac_header);
	if (mac == MAC_UNSET)
		return 0;
	r = sv_parse(BPF_CORE_READ(skb, head) + mac, BPF_CORE_READ(skb, tail) - mac, skb,
		     (struct svtrace_event *)&s->tev, s->win);
	if (r <= 0)
		return 0;
	s->tev.type = SVTRACE_EV_INGRESS;
	s->tev.skb = key;
	s->tev.ifindex = ifindex;
	s->tev.netns_ino = netns;
	s->tev.port = p->index;
	s->tev.reason = 0;
	ev_fill_task((struct svtrace_event *)&s->tev, bpf_ktime_get_ns());
	emit(&s->tev, sizeof(struct svtrace_event));
	return 0;
}

static __always_inline int on_xmit(struct sk_buff *skb, struct net_device *dev)
{
	const struct svtrace_port *p;
	struct sv_scratch *s;
	__u32 ifindex, netns;
	__u64 key = (__u64)skb;
	unsigned char *head, *data;
	int r;

	dev_id(dev, &ifindex, &netns);
	p = port_of(netns, ifindex);
	if (!p || !(p->role & SVTRACE_ROLE_EGRESS))
		return 0;
	s = scratch_get();
	if (!s)
		return 0;
	head = BPF_CORE_READ(skb, head);
	data = BPF_CORE_READ(skb, data);
	r = sv_parse(data, BPF_CORE_READ(skb, tail) - (__u32)(data - head), skb,
		     (struct svtrace_event *)&s->tev, s->win);
	if (r <= 0)
		return 0;
	s->tev.type = SVTRACE_EV_EGRESS;
	s->tev.skb = key;
	s->tev.ifindex = ifindex;
	s->tev.netns_ino = netns;
	s->tev.port = p->index;
	s->tev.reason = 0;
	ev_fill_task((struct svtrace_event *)&s->tev, bpf_ktime_get_ns());
	/* Remember it before emitting: the free may run on another CPU right after. */
	s->tev.feeder_tid = 0;	/* becomes track.rx_tid: no guest-side receiver yet */
	if (bpf_map_update_elem(&tracked, &key, &s->tev, BPF_ANY))
		count(SVTRACE_CNT_TRACK_FULL);
	emit(&s->tev, sizeof(struct svtrace_event));
	return 0;
}

/* on_xmit stores scratch.tev (a take event) as the struct sv_track value: same size, rx_tid aliasing
 * feeder_tid (cleared there); the other rx_* fields are only read when rx_tid is set. */
_Static_assert(sizeof(struct sv_track) == sizeof(struct svtrace_take_event), "track is a take event");
_Static_assert(__builtin_offsetof(struct sv_track, rx_tid) == __builtin_offsetof(struct svtrace_take_event,
									      feeder_tid), "rx_tid alias");

static __always_inline int on_free(struct sk_buff *skb, __u32 type, __u32 reason)
{
	struct svtrace_take_event *e;
	struct sv_scratch *s;
	struct sv_track *t;
	struct sv_feeder *f;
	__u64 key = (__u64)skb, now;
	__u32 ifindex, netns;

	t = bpf_map_lookup_elem(&tracked, &key);
	if (!t) {
		const struct svtrace_port *p;
		unsigned char *head;
		__u16 mac;

		/* An SV frame dropped on a filtered port before T2a (tc egress, qdisc full): a loss at
		 * the hop that ends there. Consumes are not looked at: only drops can be losses. */
		if (type != SVTRACE_EV_DROP)
			return 0;
		dev_id(BPF_CORE_READ(skb, dev), &ifindex, &netns);
		p = port_of(netns, ifindex);
		if (!p)
			return 0;
		mac = BPF_CORE_READ(skb, mac_header);
		s = scratch_get();
		if (!s || mac == MAC_UNSET)
			return 0;
		head = BPF_CORE_READ(skb, head);
		if (sv_parse(head + mac, BPF_CORE_READ(skb, tail) - mac, skb, (struct svtrace_event *)&s->tev,
			     s->win) <= 0)
			return 0;
		s->tev.type = SVTRACE_EV_PORT_DROP;
		s->tev.skb = key;
		s->tev.ifindex = ifindex;
		s->tev.netns_ino = netns;
		s->tev.port = p->index;
		s->tev.reason = reason;
		ev_fill_task((struct svtrace_event *)&s->tev, bpf_ktime_get_ns());
		emit(&s->tev, sizeof(struct svtrace_event));
		return 0;
	}
	now = bpf_ktime_get_ns();
	if (now - t->ev.ts_mono_ns > stale_ns) {
		/* The address was reused by another skb after an untraced free. */
		count(SVTRACE_CNT_STALE);
		bpf_map_delete_elem(&tracked, &key);
		return 0;
	}
	s = scratch_get();
	if (!s)
		return 0;
	e = &s->tev;
	__builtin_memcpy(e, &t->ev, sizeof(struct svtrace_event));
	e->type = type;
	e->reason = reason;
	dev_id(BPF_CORE_READ(skb, dev), &ifindex, &netns);
	e->ifindex = ifindex;
	e->netns_ino = netns;
	ev_fill_task((struct svtrace_event *)e, now);
	if (t->rx_tid) {
		e->flags |= SVTRACE_F_RX_SEEN;
		e->feeder_tid = t->rx_tid;
		e->feeder_pid = t->rx_pid;
		e->wait_ns = t->rx_wait_ns;
		e->holder_pid = t->rx_holder_pid;
		e->holder_policy = t->rx_holder_policy;
		e->holder_prio = t->rx_holder_prio;
		e->holder_kprio = t->rx_holder_kprio;
		__builtin_memcpy(e->feeder_comm, t->rx_comm, SVTRACE_COMM_LEN);
		__builtin_memcpy(e->holder_comm, t->rx_holder_comm, SVTRACE_COMM_LEN);
	} else {
		f = feeder_self(e->tid);
		e->feeder_tid = e->tid;
		e->feeder_pid = e->pid;
		__builtin_memcpy(e->feeder_comm, e->comm, SVTRACE_COMM_LEN);
		if (f) {
			e->wait_ns = f->wait_ns;
			e->holder_pid = f->holder_pid;
			e->holder_policy = f->holder_policy;
			e->holder_prio = f->holder_prio;
			e->holder_kprio = f->holder_kprio;
			__builtin_memcpy(e->holder_comm, f->holder_comm, SVTRACE_COMM_LEN);
		} else {
			e->wait_ns = 0;
			e->holder_pid = 0;
			e->holder_policy = 0;
			e->holder_prio = 0;
			e->holder_kprio = 0;
			__builtin_memset(e->holder_comm, 0, SVTRACE_COMM_LEN);
		}
	}
	bpf_map_delete_elem(&tracked, &key);
	emit(e, sizeof(*e));
	return 0;
}

static __always_inline void task_prio(const struct task_struct *p, __u32 *pid, __u32 *policy,
				      __u32 *prio, __u32 *kprio, __u8 *comm)
{
	*pid = BPF_CORE_READ(p, pid);
	*policy = BPF_CORE_READ(p, policy);
	*prio = BPF_CORE_READ(p, rt_priority);
	*kprio = BPF_CORE_READ(p, prio);
	bpf_probe_read_kernel_str(comm, SVTRACE_COMM_LEN, &p->comm);
}

static __always_inline int on_wakeup(struct task_struct *p)
{
	__u32 tid = BPF_CORE_READ(p, pid), cpu;
	struct sv_feeder *f = bpf_map_lookup_elem(&feeders, &tid);
	struct sv_cpu_state *c;
	__u64 now;

	if (!f)
		return 0;
	now = bpf_ktime_get_ns();
	f->wakeup_ns = now;
	cpu = BPF_CORE_READ(p, wake_cpu);
	c = bpf_map_lookup_elem(&cpus, &cpu);
	if (!c)
		return 0;
	c->pending_ns = now;
	c->pending_tid = tid;
	c->max_seg_ns = 0;
	c->holder_pid = 0;
	return 0;
}

static __always_inline int on_switch(struct task_struct *prev, struct task_struct *next)
{
	__u32 cpu = bpf_get_smp_processor_id(), ntid;
	struct sv_cpu_state *c = bpf_map_lookup_elem(&cpus, &cpu);
	struct sv_feeder *f;
	__u64 now, start, seg;

	if (!c)
		return 0;
	now = bpf_ktime_get_ns();
	if (c->pending_ns) {
		start = c->cur_start_ns > c->pending_ns ? c->cur_start_ns : c->pending_ns;
		seg = now - start;
		if (seg >= c->max_seg_ns) {
			c->max_seg_ns = seg;
			task_prio(prev, &c->holder_pid, &c->holder_policy, &c->holder_prio, &c->holder_kprio,
				  c->holder_comm);
		}
	}
	c->cur_start_ns = now;
	ntid = BPF_CORE_READ(next, pid);
	f = bpf_map_lookup_elem(&feeders, &ntid);
	if (!f || !f->wakeup_ns)
		return 0;
	f->wait_ns = now - f->wakeup_ns;
	f->wakeup_ns = 0;
	if (c->pending_tid == ntid && c->pending_ns) {
		f->holder_pid = c->holder_pid;
		f->holder_policy = c->holder_policy;
		f->holder_prio = c->holder_prio;
		f->holder_kprio = c->holder_kprio;
		__builtin_memcpy(f->holder_comm, c->holder_comm, SVTRACE_COMM_LEN);
		c->pending_ns = 0;
	} else {
		/* Woken for another CPU and migrated: name the task it preempted here. */
		task_prio(prev, &f->holder_pid, &f->holder_policy, &f->holder_prio, &f->holder_kprio,
			  f->holder_comm);
	}
	return 0;
}

/* ---- tp_btf variants (BTF-typed arguments) ---- */
SEC("tp_btf/netif_receive_skb")
int BPF_PROG(btf_netif_receive_skb, struct sk_buff *skb)
{
	return on_receive(skb);
}

SEC("tp_btf/net_dev_start_xmit")
int BPF_PROG(btf_net_dev_start_xmit, struct sk_buff *skb, struct net_device *dev)
{
	return on_xmit(skb, dev);
}

SEC("tp_btf/consume_skb")
int BPF_PROG(btf_consume_skb, struct sk_buff *skb)
{
	return on_free(skb, SVTRACE_EV_TAKEN, 0);
}

SEC("tp_btf/kfree_skb")
int BPF_PROG(btf_kfree_skb, struct sk_buff *skb, void *location, enum skb_drop_reason reason)
{
	return on_free(skb, SVTRACE_EV_DROP, (__u32)reason);
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(btf_sched_wakeup, struct task_struct *p)
{
	return on_wakeup(p);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(btf_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(prev, next);
}

/* ---- raw_tp variants (kernels without BTF for tp_btf) ---- */
SEC("raw_tp/netif_receive_skb")
int BPF_PROG(raw_netif_receive_skb, struct sk_buff *skb)
{
	return on_receive(skb);
}

SEC("raw_tp/net_dev_start_xmit")
int BPF_PROG(raw_net_dev_start_xmit, struct sk_buff *skb, struct net_device *dev)
{
	return on_xmit(skb, dev);
}

SEC("raw_tp/consume_skb")
int BPF_PROG(raw_consume_skb, struct sk_buff *skb)
{
	return on_free(skb, SVTRACE_EV_TAKEN, 0);
}

SEC("raw_tp/kfree_skb")
int BPF_PROG(raw_kfree_skb, struct sk_buff *skb, void *location, __u64 reason)
{
	return on_free(skb, SVTRACE_EV_DROP, (__u32)reason);
}

SEC("raw_tp/sched_wakeup")
int BPF_PROG(raw_sched_wakeup, struct task_struct *p)
{
	return on_wakeup(p);
}

SEC("raw_tp/sched_switch")
int BPF_PROG(raw_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(prev, next);
}

/* ---- optional probes (feature-probed by the loader, autoload off unless present) ---- */

/* An upcall means the datapath had no flow for the frame: user space (ovs-vswitchd) decides, a
 * latency alarm for SV. */
SEC("raw_tp/ovs_dp_upcall")
int BPF_PROG(ovs_dp_upcall, void *dp, struct sk_buff *skb)
{
	struct sv_scratch *s = scratch_get();
	unsigned char *head;
	__u16 mac;

	if (!s)
		return 0;
	mac = BPF_CORE_READ(skb, mac_header);
	if (mac == MAC_UNSET)
		return 0;
	head = BPF_CORE_READ(skb, head);
	if (sv_parse(head + mac, BPF_CORE_READ(skb, tail) - mac, skb, (struct svtrace_event *)&s->tev,
		     s->win) <= 0)
		return 0;
	s->tev.type = SVTRACE_EV_UPCALL;
	s->tev.skb = (__u64)skb;
	s->tev.port = 0;
	s->tev.reason = 0;
	dev_id(BPF_CORE_READ(skb, dev), &s->tev.ifindex, &s->tev.netns_ino);
	ev_fill_task((struct svtrace_event *)&s->tev, bpf_ktime_get_ns());
	emit(&s->tev, sizeof(struct svtrace_event));
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

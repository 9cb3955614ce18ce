/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * svtrace's "why late" decomposition, BPF side (ABI and rules: svtrace_why.h). Included by svtrace.bpf.c
 * after the feeder, segment and skb-table helpers it uses, before the programs that call it.
 *
 * Hooks of its own, all with autoload off ("?" sections: only a loader that turns late detection on
 * loads them) and in both flavours (tp_btf, raw_tp: the loader picks one set as for svtrace's own):
 *   hard IRQs   irq_handler_entry/exit (device), local_timer_entry/exit, reschedule_entry/exit,
 *               call_function(_single)_entry/exit, irq_work_entry/exit (x86: timer interrupts and IPIs do
 *               not pass irq_handler_*)
 *   softirqs    softirq_entry/exit (by number; ksoftirqd learned at its first softirq)
 *   queues      net_dev_queue (an SV copy enqueued on an egress port's qdisc: only where a port has
 *               one, the loader's choice; the backlog after T2a needs no hook: T2a's transmit puts the
 *               copy there, the guest-side receive (why_rx) takes it out)
 *   faults      page_fault_user/kernel of followed threads (a mark: the tracepoint has no exit)
 * and three calls from svtrace's own programs, each behind the rodata knob why_on (0: the verifier drops
 * them, svtrace pays nothing): why_switch() from sched_switch (the task level of the timeline, the
 * waits and sleeps of followed threads), why_rx() from the guest-side receive of a tracked copy (the
 * backlog's end), why_late() from the free of a late copy (the decomposition, one event).
 *
 * Each hook run reads the clock once (bpf_ktime_get_ns) and the steal clock once (the hypervisor's
 * per-CPU steal_time through its distance from the run queue, else the run queue's booking), writes one
 * 16-octet entry into its CPU's ring (the slot reserved by an atomic add: a hard IRQ's program can run
 * inside a softirq's on the same CPU) and touches only its CPU's line of "why_cpu".
 */
#ifndef SVTRACE_WHY_BPF_H
#define SVTRACE_WHY_BPF_H

#include "svtrace_why.h"

/* 1: the decomposition is on (the calls from svtrace's programs run; its hooks are loaded). */
const volatile __u32 why_on = 0;
/* entries per CPU of "why_tl" - 1 (a power of two - 1; the map holds nr_cpus times that + 1) */
const volatile __u32 why_tl_mask = SVTRACE_WHY_TL_DEFAULT - 1;
/* entries of "why_skb" - 1 (a power of two - 1) */
const volatile __u32 why_skb_mask = SVTRACE_WHY_SKB_ENTRIES - 1;
/* The decompositions' budget per CPU: one every why_gap_ns on average, why_burst at once (0: no limit). A
 * walk costs up to tens of microseconds in the freeing thread's context (a whole timeline when the frame is
 * older than it): a guest that falls behind makes every frame late, and unbounded walks would slow its
 * receive further. Late frames over the budget are sent without decomposition (SVTRACE_CNT_WHY_SKIPPED). */
const volatile __u64 why_gap_ns = 0;
const volatile __u32 why_burst = 0;
/* The hypervisor's steal clock (x86 KVM: the per-CPU struct kvm_steal_time, whose first word is the
 * steal in ns) at this distance from the per-CPU run queue (both in the per-CPU area: their offsets in the
 * kernel's BTF, as for preempt_from_rq); 0: read the run queue's own booking, prev_steal_time_rq, which
 * advances only when the run queue's clock is updated (a switch, a tick) and may book a steal well after
 * it ended (docs/decisions.md; svtrace_why.h SVTRACE_WHY_F_STEAL_RQ). */
const volatile __s64 why_steal_from_rq = 0;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);			/* nr_cpus * (why_tl_mask + 1), set by the loader */
	__type(key, __u32);
	__type(value, struct svtrace_why_ent);
} why_tl SEC(".maps");

/* mmapable: its values start on a page, so each CPU's 64 octets are one cache line of their own (a plain
 * array's values start 16 octets into a line: neighbouring CPUs would write one line at every transition) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, CPU_MASK + 1);
	__type(key, __u32);
	__type(value, struct svtrace_why_cpu);
} why_cpu SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);			/* why_skb_mask + 1, set by the loader */
	__type(key, __u32);
	__type(value, struct svtrace_why_skb);
} why_skb SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SVTRACE_WHY_THR_MASK + 1);
	__type(key, __u32);
	__type(value, struct svtrace_why_thr);
} why_thr SEC(".maps");

static __always_inline struct svtrace_why_cpu *why_cpu_self(__u32 *cpu)
{
	*cpu = bpf_get_smp_processor_id() & CPU_MASK;
	return bpf_map_lookup_elem(&why_cpu, cpu);
}

/* This CPU's steal clock (ns), 0 unknown. The run queue's address is cached in @c (a number: the
 * current task's se.cfs_rq->rq, which every task has, whatever its class). */
static __always_inline __u64 why_steal_now(struct svtrace_why_cpu *c)
{
	__u64 rq = c->rq, s = 0;

	if (!rq) {
		struct task_struct *task = (struct task_struct *)bpf_get_current_task();

		rq = (__u64)BPF_CORE_READ(task, se.cfs_rq, rq);
		if (!rq)
			return 0;
		c->rq = rq;
	}
	if (why_steal_from_rq) {
		if (bpf_probe_read_kernel(&s, sizeof(s), (const void *)(rq + why_steal_from_rq)))
			return 0;
		return s;
	}
	if (bpf_core_field_exists(((struct rq *)0)->prev_steal_time_rq))
		return BPF_CORE_READ((struct rq *)rq, prev_steal_time_rq);
	return 0;
}

/* Appends (@t, @what, @x) to CPU @cpu's ring (its own: @c is its line). */
static __always_inline void why_put(struct svtrace_why_cpu *c, __u32 cpu, __u64 t, __u32 what, __u32 x)
{
	__u64 h = __sync_fetch_and_add(&c->head, 1);
	__u32 i = cpu * (why_tl_mask + 1) + ((__u32)h & why_tl_mask);
	struct svtrace_why_ent *e = bpf_map_lookup_elem(&why_tl, &i);

	if (!e)
		return;
	e->t = t;
	e->what = what;
	e->x = x;
}

/* The CPU enters @what at @now: the entry carries the steal booked since the last transition. The steal
 * clock is taken by compare-and-exchange only when it moved (rare), so that a hook nested in another
 * books each nanosecond once. */
static __always_inline void why_trans(struct svtrace_why_cpu *c, __u32 cpu, __u64 now, __u32 what)
{
	__u64 s = why_steal_now(c), old = c->steal, d = 0;

	if (s > old && __sync_val_compare_and_swap(&c->steal, old, s) == old && old) {
		d = s - old;
		__sync_fetch_and_add(&c->booked, d);
	}
	why_put(c, cpu, now, what, d > 0xffffffffull ? 0xffffffffu : (__u32)d);
}

/* The level under a hard IRQ: the softirq it interrupted, else the task. */
static __always_inline __u32 why_below_irq(const struct svtrace_why_cpu *c)
{
	return c->sirq ? c->sirq : c->task;
}

/*
 * The distance from the run queue's clock (sched_clock, the scheduler's stamps) to the timeline's
 * (bpf_ktime_get_ns), from a sample @now - @rqc taken where the run queue's clock may have been updated
 * just before: a sample is never below the distance (the clock reads its last update), and is the
 * distance when fresh. The lowest is kept, allowed to rise by 2 ppm of the time since it was set: the two
 * clocks drift ~0.5 ppm apart here, and a stale sample (a local timer interrupt without the tick, a switch
 * after a preempting wake-up) reads up to milliseconds too high.
 */
static __always_inline void why_rq_off(struct svtrace_why_cpu *c, __u64 now, __u64 rqc)
{
	__s64 sample = (__s64)(now - rqc), allowed;

	if (!rqc)
		return;
	allowed = c->rq_off + (__s64)((now - c->rq_off_t) >> 19);
	c->rq_off = !c->rq_off_t || sample < allowed ? sample : allowed;
	c->rq_off_t = now;
}

/* A thread whose waits and sleeps the timeline follows: a feeder or carrier (svtrace's feeder table: one
 * more look at the tag line svtrace's switch reads anyway), this CPU's ksoftirqd. */
static __always_inline bool why_followed(const struct svtrace_why_cpu *c, __u32 pid)
{
	__u32 i = pid & FEEDER_MASK;
	__u32 *tag;

	if (!pid)
		return false;
	if (pid == c->ksoftirqd)
		return true;
	tag = bpf_map_lookup_elem(&feeder_tags, &i);
	return tag && *tag == pid;
}

/*
 * sched_switch: the task level, and for a followed thread its sleep (from its switch-out, blocked, to its
 * wake-up) and its run-queue wait (wake-up or preemption to now), as records, when it is switched in. The
 * wait's start is the scheduler's own stamp (sched_info.last_queued, on the run queue's clock, just
 * updated by __schedule: its distance to now is the wait).
 */
static __always_inline void why_switch(const bool btf, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct svtrace_why_cpu *c;
	struct svtrace_why_thr *w;
	__u32 cpu, ppid, npid, j;
	__u64 now, q, rqc, wake;

	if (!why_on)
		return;
	c = why_cpu_self(&cpu);
	if (!c)
		return;
	now = bpf_ktime_get_ns();
	ppid = RD(btf, prev, pid);
	npid = RD(btf, next, pid);
	if (!preempt && RD(btf, prev, __state) && why_followed(c, ppid)) {
		j = ppid & SVTRACE_WHY_THR_MASK;
		w = bpf_map_lookup_elem(&why_thr, &j);
		if (w) {
			w->tid = ppid;
			w->sleep_ns = now;
		}
	}
	/* The run queue's clock is sched_clock at its last update, which a switch that follows a preempting
	 * wake-up skips (wakeup_preempt's rq_clock_skip_update: the clock then still reads the wake-up's
	 * time, however long a softirq kept the CPU since): now minus it is at least the clocks' distance,
	 * and exactly it when fresh (why_rq_off keeps the lowest). */
	rqc = btf ? next->se.cfs_rq->rq->clock : BPF_CORE_READ(next, se.cfs_rq, rq, clock);
	why_rq_off(c, now, rqc);
	if (why_followed(c, npid)) {
		/* its wake-up (or preemption), on this clock */
		q = RD(btf, next, sched_info.last_queued);
		wake = q ? q + c->rq_off : now;
		if (wake > now)
			wake = now;
		j = npid & SVTRACE_WHY_THR_MASK;
		w = bpf_map_lookup_elem(&why_thr, &j);
		if (w && w->tid == npid && w->sleep_ns) {
			if (w->sleep_ns < wake)
				why_put(c, cpu, wake, SVTRACE_WHY_WHAT(SVTRACE_WHY_T_SLEEP, 0, npid),
					wake - w->sleep_ns > 0xffffffffull ? 0xffffffffu : (__u32)(wake - w->sleep_ns));
			w->sleep_ns = 0;
		}
		if (wake < now)
			why_put(c, cpu, now, SVTRACE_WHY_WHAT(SVTRACE_WHY_T_WAIT, 0, npid),
				now - wake > 0xffffffffull ? 0xffffffffu : (__u32)(now - wake));
	}
	c->task = SVTRACE_WHY_WHAT(SVTRACE_WHY_T_TASK, 0, npid);
	why_trans(c, cpu, now, c->task);
}

/* This CPU's state for a hard IRQ or softirq hook, its task level known (where no switch was seen yet since
 * the start: the task that runs now). */
static __always_inline struct svtrace_why_cpu *why_here(__u32 *cpu)
{
	struct svtrace_why_cpu *c = why_cpu_self(cpu);

	if (c && !c->task)
		c->task = SVTRACE_WHY_WHAT(SVTRACE_WHY_T_TASK, 0, (__u32)bpf_get_current_pid_tgid());
	return c;
}

static __always_inline int why_irq_entry(__u32 kind, __u32 irq)
{
	struct svtrace_why_cpu *c;
	__u32 cpu;

	c = why_here(&cpu);
	if (!c)
		return 0;
	c->hirq = SVTRACE_WHY_WHAT(SVTRACE_WHY_T_HARDIRQ, kind, irq);
	why_trans(c, cpu, bpf_ktime_get_ns(), c->hirq);
	return 0;
}

/* @calib: the local timer's exit, where the tick (when this interrupt ran it) has just updated the run
 * queue's clock: a sample of the clocks' distance for a CPU that does not switch */
static __always_inline int why_irq_exit(const bool btf, bool calib)
{
	struct svtrace_why_cpu *c;
	__u64 now, rqc;
	__u32 cpu;

	c = why_here(&cpu);
	if (!c)
		return 0;
	c->hirq = 0;
	now = bpf_ktime_get_ns();
	if (calib) {
		struct task_struct *task = btf ? bpf_get_current_task_btf() : (struct task_struct *)bpf_get_current_task();

		rqc = btf ? task->se.cfs_rq->rq->clock : BPF_CORE_READ(task, se.cfs_rq, rq, clock);
		why_rq_off(c, now, rqc);
	}
	why_trans(c, cpu, now, why_below_irq(c));
	return 0;
}

/* "ksoftirq" as the first 8 octets of a task's name */
#define WHY_KSOFTIRQD_COMM 0x71726974666f736bull

static __always_inline int why_softirq_entry(const bool btf, __u32 vec)
{
	struct svtrace_why_cpu *c;
	__u32 cpu;

	c = why_here(&cpu);
	if (!c)
		return 0;
	if (!c->ksoftirqd) {
		/* softirqs run in ksoftirqd (deferred) or on top of whatever ran: ksoftirqd is the one whose
		 * name says so (a per-CPU kthread), learned here so that its waits are followed */
		__u64 name = 0;

		if (btf)
			name = *(const __u64 *)bpf_get_current_task_btf()->comm;
		else
			bpf_probe_read_kernel(&name, sizeof(name), &((struct task_struct *)bpf_get_current_task())->comm);
		if (name == WHY_KSOFTIRQD_COMM)
			c->ksoftirqd = (__u32)bpf_get_current_pid_tgid();
	}
	c->sirq = SVTRACE_WHY_WHAT(SVTRACE_WHY_T_SOFTIRQ, vec & 15, 0);
	why_trans(c, cpu, bpf_ktime_get_ns(), c->hirq ? c->hirq : c->sirq);
	return 0;
}

static __always_inline int why_softirq_exit(void)
{
	struct svtrace_why_cpu *c;
	__u32 cpu;

	c = why_here(&cpu);
	if (!c)
		return 0;
	c->sirq = 0;
	why_trans(c, cpu, bpf_ktime_get_ns(), c->hirq ? c->hirq : c->task);
	return 0;
}

/* A page fault of a followed thread: a mark (the tracepoint has no exit, so no duration). */
static __always_inline int why_fault(__u32 kind)
{
	struct svtrace_why_cpu *c;
	__u32 cpu, tid = (__u32)bpf_get_current_pid_tgid();

	c = why_cpu_self(&cpu);
	if (!c || !why_followed(c, tid))
		return 0;
	why_put(c, cpu, bpf_ktime_get_ns(), SVTRACE_WHY_WHAT(SVTRACE_WHY_T_FAULT, kind, tid), 0);
	return 0;
}

/* The queue stamps of the copy at @key: its entry, (re)claimed for it. */
static __always_inline struct svtrace_why_skb *why_skb_of(__u64 key, bool claim)
{
	__u32 i = (__u32)(key >> 8) & why_skb_mask;
	struct svtrace_why_skb *s = bpf_map_lookup_elem(&why_skb, &i);

	if (!s)
		return NULL;
	if (s->skb != key) {
		if (!claim)
			return NULL;
		s->skb = key;
		s->t_qdisc = 0;
		s->t_rx = 0;
	}
	return s;
}

/* net_dev_queue: an SV copy entering an egress port's qdisc (T2a is its net_dev_start_xmit). */
static __always_inline int why_qdisc(const bool btf, struct sk_buff *skb)
{
	struct svtrace_hlog_pos *hp;
	struct svtrace_why_skb *s;
	__u32 ifindex, netns;

	if (!proto_maybe_sv(btf, skb))
		return 0;
	dev_id(btf, RD(btf, skb, dev), &ifindex, &netns);
	hp = cpu_pos();
	if (!hp || port_find(hp, netns, ifindex, 1) < 1)
		return 0;
	s = why_skb_of(skb_key(hp, skb), true);
	if (!s)
		return 0;
	s->t_qdisc = bpf_ktime_get_ns();
	s->t_rx = 0;
	s->cpu_qdisc = (__u16)bpf_get_smp_processor_id();
	return 0;
}

/* (from svtrace's receive, a tracked copy in a guest's namespace) the copy left its backlog or NAPI */
static __always_inline void why_rx(__u64 key)
{
	struct svtrace_why_skb *s;

	if (!why_on)
		return;
	s = why_skb_of(key, true);
	if (!s)
		return;
	s->t_rx = bpf_ktime_get_ns();
	s->cpu_rx = (__u16)bpf_get_smp_processor_id();
}

/* ---- the decomposition ---------------------------------------------------------------------------- */

#define WHY_HOLDERS 4
#define WHY_PHASES 4	/* a power of two: phases are indexed through a mask */

/* The walk's state (per CPU: a late path never runs inside another's, NESTED otherwise) */
struct why_walk {
	/* the phase */
	__u64 t0, t1;
	__u32 base;		/* its CPU's first entry in why_tl */
	__u32 mode, tid, ksirq;
	__u64 head;		/* the CPU's entries written when the walk began */
	/* the walk */
	__u64 seg_end;		/* the newer neighbour's start: this segment ends there */
	__u64 seg_steal;	/* steal booked at seg_end (in the segment before it) */
	__u64 w0, w1;		/* the tid's last run-queue wait seen so far (newest first), 0 none */
	__u64 s0, s1;		/* its sleep before it */
	__u64 k0, k1;		/* ksoftirqd's wait */
	__u64 pend[SVTRACE_WHY_SOFTIRQ_NR];	/* P_OWN: softirq time since the last task-level segment */
	__u32 reached, faults;
	/* the hop */
	__u64 ns[SVTRACE_WHY_SLOTS];
	__u32 hpid[WHY_HOLDERS];
	__u32 hcpu[WHY_HOLDERS];	/* the CPU the holder held (its run segments name it) */
	__u64 hns[WHY_HOLDERS];
	__u32 cpu;			/* the phase's CPU */
	__u32 holder_cpu;		/* the hop's holder's (why_hop) */
	__u32 busy, pad;
	__u64 credit, credit_t;		/* the decompositions' budget on this CPU (why_budget), ns */
	struct svtrace_why_phase ph[WHY_PHASES];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct why_walk);
} why_scratch SEC(".maps");

static __always_inline __u64 why_min(__u64 a, __u64 b)
{
	return a < b ? a : b;
}

static __always_inline __u64 why_max(__u64 a, __u64 b)
{
	return a > b ? a : b;
}

/* The length of [a, b) inside [c, d) */
static __always_inline __u64 why_ov(__u64 a, __u64 b, __u64 c, __u64 d)
{
	__u64 lo = why_max(a, c), hi = why_min(b, d);

	return hi > lo ? hi - lo : 0;
}

static __always_inline void why_holder(struct why_walk *w, __u32 pid, __u64 ns)
{
	__u32 k = 0;

	if (!ns || !pid)
		return;
	for (__u32 i = 0; i < WHY_HOLDERS; i++) {
		if (w->hpid[i] == pid) {
			w->hns[i] += ns;
			return;
		}
		if (w->hns[i] < w->hns[k])
			k = i;
	}
	/* a new one takes the slot of the least (four holders in one hop are rare) */
	if (w->hns[k] < ns) {
		w->hpid[k] = pid;
		w->hcpu[k] = w->cpu;
		w->hns[k] = ns;
	}
}

/* The part of [a1, b1) in a wait [lo, hi), less the steal (from st0 on), at most @rest. */
static __always_inline __u64 why_waited(__u64 a1, __u64 b1, __u64 st0, __u64 rest, __u64 lo, __u64 hi)
{
	__u64 wt = why_ov(a1, b1, lo, hi);

	if (wt)
		wt -= why_min(wt, why_ov(why_max(a1, st0), b1, lo, hi));
	return why_min(wt, rest);
}

/* One segment [a, b) of the timeline in state @what, @steal of it booked at b (placed at its end: the
 * first hook after the vCPU ran again), into the causes by the rules of svtrace_why.h. */
static __always_inline void why_segment(struct why_walk *w, __u64 a, __u64 b, __u32 what, __u64 steal)
{
	__u64 a1 = why_max(a, w->t0), b1 = why_min(b, w->t1), len, blk = 0, stl, st0, rest, wt, v;
	__u32 type = SVTRACE_WHY_TYPE(what), kind = SVTRACE_WHY_KIND(what), id = SVTRACE_WHY_ID(what);

	if (b1 <= a1)
		return;
	len = b1 - a1;
	st0 = b > a + steal ? b - steal : a;	/* the steal: [st0, b) */
	if (w->mode == SVTRACE_WHY_P_CARRIER)
		blk = why_ov(a1, b1, w->s0, w->s1);
	stl = why_ov(a1, b1, st0, b);
	if (blk)
		stl -= why_ov(why_max(a1, st0), b1, w->s0, w->s1);
	w->ns[SVTRACE_WHY_BLOCKED] += blk;
	w->ns[SVTRACE_WHY_STEAL] += stl;
	rest = len > blk + stl ? len - blk - stl : 0;
	if (!rest)
		return;
	if (type == SVTRACE_WHY_T_HARDIRQ) {
		w->ns[SVTRACE_WHY_IRQ_TIMER + (kind < 3 ? kind : 2)] += rest;
		return;
	}
	if (type == SVTRACE_WHY_T_SOFTIRQ) {
		v = kind < SVTRACE_WHY_SOFTIRQ_NR ? kind : SVTRACE_WHY_SOFTIRQ_NR - 1;
		if (w->mode == SVTRACE_WHY_P_OWN)
			w->pend[v] += rest;
		else
			w->ns[SVTRACE_WHY_SOFTIRQ + v] += rest;
		return;
	}
	/* the task level */
	switch (w->mode) {
	case SVTRACE_WHY_P_OWN:
		/* the thread that forwards it in its own context (threaded NAPI, PREEMPT_RT's softirq threads) */
		if (id == w->tid) {
			w->ns[SVTRACE_WHY_CARRIED] += rest;
			return;
		}
		/* the softirq run that forwarded the frame ended before the phase did: what followed it is not
		 * its own (newer than this gap), and the gap itself has no known place */
		for (__u32 i = 0; i < SVTRACE_WHY_SOFTIRQ_NR; i++) {
			w->ns[SVTRACE_WHY_SOFTIRQ + i] += w->pend[i];
			w->pend[i] = 0;
		}
		w->ns[SVTRACE_WHY_UNEXPLAINED] += rest;
		return;
	case SVTRACE_WHY_P_QDISC:
		w->ns[SVTRACE_WHY_QDISC] += rest;
		return;
	case SVTRACE_WHY_P_BACKLOG:
		/* ksoftirqd between two softirq handlers: its own loop, still the deferral */
		if (id && id == w->ksirq) {
			w->ns[SVTRACE_WHY_KSOFTIRQD] += rest;
			return;
		}
		wt = why_waited(a1, b1, st0, rest, w->k0, w->k1);
		w->ns[SVTRACE_WHY_KSOFTIRQD] += wt;
		why_holder(w, id, wt);
		w->ns[SVTRACE_WHY_BACKLOG] += rest - wt;
		return;
	default:
		if (id == w->tid) {
			w->ns[SVTRACE_WHY_RUNNING] += rest;
			return;
		}
		wt = why_waited(a1, b1, st0, rest, w->w0, w->w1);
		w->ns[SVTRACE_WHY_RUNQUEUE] += wt;
		why_holder(w, id, wt);
		/* the carrier neither ran here nor waited here: another CPU, or not seen */
		w->ns[SVTRACE_WHY_UNEXPLAINED] += rest - wt;
	}
}

struct why_ctx {
	struct why_walk *w;
};

/* One entry of the walk, newest first (bpf_loop callback). 1 ends the walk. Another CPU's ring is read while
 * that CPU may write it: an entry whose slot is taken but not yet written holds an older time and ends the
 * walk early (the rest of the phase is then unexplained, flag partial): a window of nanoseconds. */
static long why_step(__u64 i, void *vctx)
{
	struct why_walk *w = ((struct why_ctx *)vctx)->w;
	struct svtrace_why_ent *e;
	__u32 idx, what, type, id;
	__u64 t;

	if (i >= w->head)
		return 1;	/* the CPU wrote no older entry */
	idx = w->base + ((__u32)(w->head - 1 - i) & why_tl_mask);
	e = bpf_map_lookup_elem(&why_tl, &idx);
	if (!e)
		return 1;
	t = e->t;
	what = e->what;
	type = SVTRACE_WHY_TYPE(what);
	id = SVTRACE_WHY_ID(what);
	if (type >= SVTRACE_WHY_T_WAIT) {
		/* a followed thread's record: the intervals the next (older) segments are judged by */
		if (id == w->tid && type == SVTRACE_WHY_T_WAIT) {
			w->w0 = t > e->x ? t - e->x : 0;
			w->w1 = t;
		} else if (id == w->tid && type == SVTRACE_WHY_T_SLEEP) {
			w->s0 = t > e->x ? t - e->x : 0;
			w->s1 = t;
		} else if (id == w->tid && type == SVTRACE_WHY_T_FAULT) {
			if (t >= w->t0 && t <= w->t1)
				w->faults++;
		} else if (id == w->ksirq && type == SVTRACE_WHY_T_WAIT) {
			w->k0 = t > e->x ? t - e->x : 0;
			w->k1 = t;
		}
		return 0;
	}
	why_segment(w, t, w->seg_end, what, w->seg_steal);
	if (t < w->seg_end)
		w->seg_end = t;	/* (a hook nested in another may have written an older time later) */
	w->seg_steal = e->x;
	if (t <= w->t0) {
		w->reached = 1;
		return 1;
	}
	return 0;
}

/*
 * Phase @p of the hop in @w: walks CPU p->cpu's timeline from its newest entry back to p->t0 (the open
 * segment ends at @now; its steal is read now when that CPU is this one). Returns SVTRACE_WHY_F_PARTIAL
 * when the timeline did not reach back (the part before its oldest entry is unexplained).
 */
static __always_inline __u32 why_phase(struct why_walk *w, const struct svtrace_why_phase *p, __u64 now)
{
	struct svtrace_why_cpu *c;
	struct why_ctx ctx = { .w = w };
	__u32 cpu = p->cpu & CPU_MASK, self = bpf_get_smp_processor_id();
	__u64 s;

	if (p->t1 <= p->t0)
		return 0;
	c = bpf_map_lookup_elem(&why_cpu, &cpu);
	if (!c || cpu >= nr_cpus) {
		w->ns[SVTRACE_WHY_UNEXPLAINED] += p->t1 - p->t0;
		return SVTRACE_WHY_F_PARTIAL;
	}
	/* a phase that ended before the timeline's oldest entry: nothing to read, no walk of the whole ring
	 * (the frames of a guest that fell far behind) */
	if (c->head > why_tl_mask) {
		__u32 oi = cpu * (why_tl_mask + 1) + ((__u32)c->head & why_tl_mask);
		struct svtrace_why_ent *old = bpf_map_lookup_elem(&why_tl, &oi);

		if (old && old->t > p->t1) {
			w->ns[SVTRACE_WHY_UNEXPLAINED] += p->t1 - p->t0;
			return SVTRACE_WHY_F_PARTIAL;
		}
	}
	w->t0 = p->t0;
	w->t1 = p->t1;
	w->cpu = cpu;
	w->mode = p->mode;
	w->tid = p->tid;
	w->ksirq = c->ksoftirqd;
	w->base = cpu * (why_tl_mask + 1);
	w->head = c->head;
	w->seg_end = now;
	w->seg_steal = 0;
	if (cpu == self) {
		s = why_steal_now(c);
		w->seg_steal = s > c->steal && c->steal ? s - c->steal : 0;
	}
	w->w0 = w->w1 = w->s0 = w->s1 = w->k0 = w->k1 = 0;
	for (__u32 i = 0; i < SVTRACE_WHY_SOFTIRQ_NR; i++)
		w->pend[i] = 0;
	w->reached = 0;
	bpf_loop(why_tl_mask + 1, why_step, &ctx, 0);
	/* the own softirq run reaches back to the phase's start: carried */
	for (__u32 i = 0; i < SVTRACE_WHY_SOFTIRQ_NR; i++) {
		w->ns[SVTRACE_WHY_CARRIED] += w->pend[i];
		w->pend[i] = 0;
	}
	if (!w->reached) {
		if (w->seg_end > p->t0)
			w->ns[SVTRACE_WHY_UNEXPLAINED] += why_min(w->seg_end, p->t1) - p->t0;
		return SVTRACE_WHY_F_PARTIAL;
	}
	return 0;
}

/* Fills @h from the phases w->ph[0 .. n): the causes, the holder (named through this CPU's run segments,
 * the feeder slots or the holders' names: a pid only when none has it), the carrier. */
static __always_inline void why_hop(struct why_walk *w, struct svtrace_why_hop *h, __u32 n, __u64 now)
{
	__u64 sum = 0, best = 0;
	__u32 flags = 0, k = 0;

	for (__u32 i = 0; i < SVTRACE_WHY_SLOTS; i++)
		w->ns[i] = 0;
	for (__u32 i = 0; i < WHY_HOLDERS; i++) {
		w->hpid[i] = 0;
		w->hns[i] = 0;
	}
	w->faults = 0;
	for (__u32 i = 0; i < WHY_PHASES; i++) {
		if (i >= n)
			break;
		flags |= why_phase(w, &w->ph[i], now);
		if (i && w->ph[i].cpu != w->ph[i - 1].cpu)
			flags |= SVTRACE_WHY_F_CARRIER_CPUS;
	}
	for (__u32 i = 0; i < SVTRACE_WHY_SLOTS; i++) {
		h->ns[i] = w->ns[i];
		sum += w->ns[i];
	}
	/* the phases tile the hop; what they did not cover (none should be) stays unexplained */
	if (h->t_to - h->t_from > sum)
		h->ns[SVTRACE_WHY_UNEXPLAINED] += h->t_to - h->t_from - sum;
	for (__u32 i = 0; i < WHY_HOLDERS; i++) {
		if (w->hns[i] > best) {
			best = w->hns[i];
			k = i;
		}
	}
	h->holder_ns = best;
	h->holder_pid = best ? w->hpid[k & (WHY_HOLDERS - 1)] : 0;
	w->holder_cpu = w->hcpu[k & (WHY_HOLDERS - 1)];
	h->faults = w->faults;
	if (!why_steal_from_rq)
		flags |= SVTRACE_WHY_F_STEAL_RQ;
	h->flags |= (__u16)flags;
	h->cpu = n ? (__u16)w->ph[(n - 1) & (WHY_PHASES - 1)].cpu : 0;
	h->carrier_tid = 0;
	for (__u32 i = 0; i < WHY_PHASES; i++)
		if (i < n && w->ph[i].mode == SVTRACE_WHY_P_CARRIER)
			h->carrier_tid = w->ph[i].tid;
}

/* The holder's policy, priority and name, from the newest run segments of the CPU it held, @cpu (the task
 * may have exited since: probe reads, its pid compared), else its name kept for feeders' holders, its
 * policy unknown (SVTRACE_WHY_POLICY_UNKNOWN). */
static __always_inline void why_name_holder(struct svtrace_why_hop *h, __u32 cpu)
{
	__u32 pid = h->holder_pid, got = 0;
	struct sv_segs *r;
	struct sv_name *nm;
	__u32 ni = pid & FEEDER_MASK;

	__builtin_memset(h->holder_comm, 0, sizeof(h->holder_comm));
	h->holder_policy = 0;
	h->holder_prio = 0;
	if (!pid)
		return;
	cpu &= CPU_MASK;
	r = bpf_map_lookup_elem(&segs, &cpu);
	if (r) {
		for (__u32 i = 0; i < SEG_N; i++) {
			struct sv_seg *e = &r->e[i];

			if (e->pid == pid && e->task) {
				__u32 p2;

				task_prio(false, (struct task_struct *)e->task, &p2, &h->holder_policy, &h->holder_prio,
					  h->holder_comm);
				if (p2 == pid) {
					got = 1;
					break;
				}
			}
		}
	}
	if (got)
		return;
	h->holder_policy = SVTRACE_WHY_POLICY_UNKNOWN;
	h->holder_prio = 0;
	__builtin_memset(h->holder_comm, 0, sizeof(h->holder_comm));
	nm = bpf_map_lookup_elem(&holder_names, &ni);
	if (nm && nm->pid == pid)
		__builtin_memcpy(h->holder_comm, nm->comm, SVTRACE_COMM_LEN);
}

/* A thread's name from its feeder slot ("" when it has none). */
static __always_inline void why_comm_of(__u32 tid, __u8 *dst)
{
	struct sv_feeder *f = feeder_of(tid);

	if (f)
		__builtin_memcpy(dst, f->comm, SVTRACE_COMM_LEN);
	else
		__builtin_memset(dst, 0, SVTRACE_COMM_LEN);
}

/* Sets phase @i of @w. */
static __always_inline void why_ph(struct why_walk *w, __u32 i, __u64 t0, __u64 t1, __u32 cpu, __u32 mode, __u32 tid)
{
	struct svtrace_why_phase *p = &w->ph[i & (WHY_PHASES - 1)];

	p->t0 = t0;
	p->t1 = t1 > t0 ? t1 : t0;
	p->cpu = cpu;
	p->mode = mode;
	p->tid = tid;
}

/* Stamp @t of a queue, when it lies within [lo, hi]; else 0. */
static __always_inline __u64 why_in(__u64 t, __u64 lo, __u64 hi)
{
	return t && t >= lo && t <= hi ? t : 0;
}

/*
 * (svtrace's free of a late copy @t, skb @key, freed @now by the current thread on this CPU) its hops
 * decomposed, as one event after the late event. Phases:
 *   T1-T2a   a carrier thread (SVTRACE_F_CARRIED: [T1, T2a] with it, on T2a's CPU); else the softirq of
 *            T1 ([T1, qdisc stamp or T2a] on T1's CPU; on another CPU than T2a's the frame crossed a
 *            queue: backlog on T2a's), then the qdisc ([stamp, T2a]);
 *   T2a-T2b  the queue to the guest side's receive (the backlog or a NAPI drained by softirq; threaded
 *            NAPI: the receiving kthread) up to the receive stamp, then the consumer (this thread) up to
 *            now; without a receive stamp the receiver (or the consumer) carries the whole hop.
 */
static __always_inline void why_late(const bool btf, const struct sv_track *t, __u64 key, __u64 now)
{
	__u32 zero = 0, n, self = bpf_get_smp_processor_id(), tid = (__u32)bpf_get_current_pid_tgid();
	__u32 cpu1 = t->cpu1, cpu2a = t->cpu2a, rxcpu;
	__u64 q = 0, r = 0;
	struct svtrace_why_skb *s;
	struct svtrace_why_ev *e;
	struct why_walk *w;

	if (!why_on)
		return;
	w = bpf_map_lookup_elem(&why_scratch, &zero);
	if (!w)
		return;
	if (why_gap_ns) {
		__u64 full = why_gap_ns * why_burst;

		w->credit += now - w->credit_t;
		if (w->credit > full || !w->credit_t)
			w->credit = full;
		w->credit_t = now;
		if (w->credit < why_gap_ns) {
			count(SVTRACE_CNT_WHY_SKIPPED);
			return;
		}
		w->credit -= why_gap_ns;
	}
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(SVTRACE_CNT_LOST);
		return;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->type = SVTRACE_EV_WHY;
	e->port = (__u8)t->port;
	e->smpcnt = t->smpcnt;
	e->stream = t->stream;
	e->t1_ns = t->t1_ns;
	e->t2a_ns = t->t2a_ns;
	e->t2b_ns = now;
	if (w->busy) {
		e->flags = SVTRACE_WHY_F_NESTED;
		bpf_ringbuf_submit(e, RB_FLAGS);
		return;
	}
	w->busy = 1;
	s = why_skb_of(key, false);
	if (s) {
		q = why_in(s->t_qdisc, t->t1_ns, t->t2a_ns);
		r = why_in(s->t_rx, t->t2a_ns, now);
	}
	rxcpu = s && r ? s->cpu_rx : self;
	if (t->t1_ns) {
		struct svtrace_why_hop *h = &e->hop[0];

		h->t_from = t->t1_ns;
		h->t_to = t->t2a_ns;
		h->from_point = SVTRACE_WHY_PT_T1;
		h->to_point = SVTRACE_WHY_PT_T2A;
		if (t->flags & SVTRACE_F_CARRIED) {
			why_ph(w, 0, t->t1_ns, t->t2a_ns, cpu2a, SVTRACE_WHY_P_CARRIER, t->tid2a);
			n = 1;
		} else if (cpu1 == cpu2a) {
			why_ph(w, 0, t->t1_ns, q ? q : t->t2a_ns, cpu1, SVTRACE_WHY_P_OWN, t->tid1);
			why_ph(w, 1, q, t->t2a_ns, s ? s->cpu_qdisc : cpu2a, SVTRACE_WHY_P_QDISC, 0);
			n = q ? 2 : 1;
		} else {
			why_ph(w, 0, t->t1_ns, q ? q : t->t2a_ns, cpu2a, SVTRACE_WHY_P_BACKLOG, 0);
			why_ph(w, 1, q, t->t2a_ns, s ? s->cpu_qdisc : cpu2a, SVTRACE_WHY_P_QDISC, 0);
			n = q ? 2 : 1;
		}
		h->flags = q ? SVTRACE_WHY_F_QDISC : 0;
		why_hop(w, h, n, now);
		if (h->carrier_tid)
			why_comm_of(h->carrier_tid, h->carrier_comm);
		why_name_holder(h, w->holder_cpu);
		e->nhops = 2;
	} else {
		e->nhops = 1;
	}
	{
		struct svtrace_why_hop *h = &e->hop[1];
		__u32 carrier = t->rx_tid ? t->rx_tid : tid;

		h->t_from = t->t2a_ns;
		h->t_to = now;
		h->from_point = SVTRACE_WHY_PT_T2A;
		h->to_point = SVTRACE_WHY_PT_T2B;
		h->flags = r ? SVTRACE_WHY_F_RX : 0;
		if (r) {
			/* T2a's transmit hands it to the guest side's receive (veth: the backlog, or its NAPI;
			 * threaded NAPI: a kthread); from that receive on, the consumer has it */
			if (t->rx_tid)
				why_ph(w, 0, t->t2a_ns, r, rxcpu, SVTRACE_WHY_P_CARRIER, t->rx_tid);
			else
				why_ph(w, 0, t->t2a_ns, r, rxcpu, SVTRACE_WHY_P_BACKLOG, 0);	/* drained where received (RPS) */
			why_ph(w, 1, r, now, self, SVTRACE_WHY_P_CARRIER, tid);
			n = 2;
		} else {
			why_ph(w, 0, t->t2a_ns, now, t->rx_tid ? rxcpu : self, SVTRACE_WHY_P_CARRIER, carrier);
			n = 1;
		}
		why_hop(w, h, n, now);
		if (h->carrier_tid == tid)
			bpf_get_current_comm(h->carrier_comm, sizeof(h->carrier_comm));
		else if (h->carrier_tid)
			why_comm_of(h->carrier_tid, h->carrier_comm);
		why_name_holder(h, w->holder_cpu);
	}
	w->busy = 0;
	bpf_ringbuf_submit(e, RB_FLAGS);
}

/* ---- hooks (autoload off: the loader turns them on with late detection) --------------------------- */

/* A hook in both flavours, why_btf_@name on tp_btf/@tp and why_raw_@name on raw_tp/@tp (the loader enables
 * one set); @call sees the flavour as btf. */
#define WHY_HOOK(name, tp, arg, call)                                               \
	SEC("?tp_btf/" tp)                                                          \
	int BPF_PROG(why_btf_##name, arg)                                           \
	{                                                                           \
		const bool btf = true;                                              \
		(void)btf;                                                          \
		return call;                                                        \
	}                                                                           \
	SEC("?raw_tp/" tp)                                                          \
	int BPF_PROG(why_raw_##name, arg)                                           \
	{                                                                           \
		const bool btf = false;                                             \
		(void)btf;                                                          \
		return call;                                                        \
	}

#define WHY_K_TIMER (SVTRACE_WHY_IRQ_TIMER - SVTRACE_WHY_IRQ_TIMER)
#define WHY_K_IPI (SVTRACE_WHY_IRQ_IPI - SVTRACE_WHY_IRQ_TIMER)
#define WHY_K_DEVICE (SVTRACE_WHY_IRQ_DEVICE - SVTRACE_WHY_IRQ_TIMER)

/* x86's vectors: the local timer's exit also measures the clocks' distance (why_irq_exit) */
#define WHY_IRQ_PAIR(name, kind)                                                              \
	WHY_HOOK(name##_entry, #name "_entry", int vector, why_irq_entry(kind, (__u32)vector)) \
	WHY_HOOK(name##_exit, #name "_exit", int vector, why_irq_exit(btf, kind == WHY_K_TIMER))

WHY_IRQ_PAIR(local_timer, WHY_K_TIMER)
WHY_IRQ_PAIR(reschedule, WHY_K_IPI)
WHY_IRQ_PAIR(call_function, WHY_K_IPI)
WHY_IRQ_PAIR(call_function_single, WHY_K_IPI)
WHY_IRQ_PAIR(irq_work, WHY_K_IPI)
WHY_HOOK(irq_handler_entry, "irq_handler_entry", int irq, why_irq_entry(WHY_K_DEVICE, (__u32)irq))
WHY_HOOK(irq_handler_exit, "irq_handler_exit", int irq, why_irq_exit(btf, false))
WHY_HOOK(softirq_entry, "softirq_entry", unsigned int vec, why_softirq_entry(btf, vec))
WHY_HOOK(softirq_exit, "softirq_exit", unsigned int vec, why_softirq_exit())
WHY_HOOK(net_dev_queue, "net_dev_queue", struct sk_buff *skb, why_qdisc(btf, skb))
WHY_HOOK(page_fault_user, "page_fault_user", unsigned long address, why_fault(0))
WHY_HOOK(page_fault_kernel, "page_fault_kernel", unsigned long address, why_fault(1))

#endif /* SVTRACE_WHY_BPF_H */

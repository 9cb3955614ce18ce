/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * svtrace's "why late" decomposition: the ABI between bpf/svtrace_why.bpf.h (included by svtrace.bpf.c)
 * and user space (svtrace, tests/net/svtrace_why.c). Same rules as svtrace.h: __u8..__u64 only, no
 * pointers, no bit-fields, sizes _Static_asserted.
 *
 * Every CPU keeps a timeline in BPF: a ring of 16-octet entries ("why_tl", SVTRACE_WHY_TL_DEFAULT per
 * CPU), written by that CPU only, each a transition (the CPU's state from then on: a task, a softirq of
 * a kind, a hard IRQ of a kind) with the steal the hypervisor booked in the segment it ends, or a record
 * of a followed thread (a feeder, ksoftirqd: its run-queue wait, its sleep, a page fault). For a late
 * copy, the free's program walks the timelines of the CPUs that carried each hop, newest first, and
 * splits the hop into causes that add up to it (struct svtrace_why_hop), sent as one event
 * (struct svtrace_why_ev) beside the late event. Frame-level stamps of the copy's queues (qdisc:
 * net_dev_queue -> net_dev_start_xmit; backlog: T2a's transmit -> the guest-side netif_receive_skb) come from a
 * small table keyed by the skb's address ("why_skb").
 *
 * The decomposition (docs/decisions.md "svtrace: why late, cause by cause"). A hop is cut into phases by
 * where the frame was (svtrace_why.bpf.h why_late):
 *   T1-T2a   in its own softirq (forwarded in the softirq run of T1, or in the thread that forwards in its
 *            own context), then in the egress port's qdisc (net_dev_queue's stamp -> T2a); a frame that
 *            crossed a user-space switch (SVTRACE_F_CARRIED) is with that carrier thread;
 *   T2a-T2b  queued to the guest side's receive (a backlog or NAPI drained by softirq; threaded NAPI: its
 *            kthread carries it) up to the guest-side receive stamp, then with the consumer (the thread
 *            that frees it at T2b).
 * Each instant of a phase goes to exactly one cause, first match wins:
 *   1. blocked      (carrier phases) the carrier slept: what its CPU did meanwhile is not what the frame
 *                   waited for;
 *   2. steal        the vCPU did not run (the hypervisor's steal clock; it is wall time inside every other
 *                   measure: the run queue's clock, a task's runtime, an IRQ's duration);
 *   3. hard IRQ     by kind: the local timer, IPIs (reschedule, call function, irq_work), device IRQs;
 *   4. softirq      by kind, other than the frame's own (the softirq run that forwarded it T1 -> T2a is
 *                   "carried"); a backlog drained behind other packets is softirq NET_RX;
 *   5. queueing     qdisc, backlog, or ksoftirqd deferral (the backlog waited while ksoftirqd waited on
 *                   the run queue, or ran between handlers: its holder is named);
 *   6. run queue    the carrier was runnable and another task ran (the holder: the task that ran longest);
 *   7. running      the carrier ran (other frames, its own work);
 *   8. carried      the frame's own softirq (or forwarding thread);
 *   9. unexplained  everything else, honestly: the carrier not on the CPU whose timeline is read (it ran or
 *                   waited elsewhere), a timeline that does not reach back to the phase's start, a lost
 *                   queue stamp.
 * On this kernel (no IRQ_TIME_ACCOUNTING) a task's runtime includes its CPU's IRQ time and the run
 * queue's clock includes steal: the timeline takes neither from the scheduler, it sees each level's entry
 * and exit on one clock (bpf_ktime_get_ns) and books steal inside the segment it interrupted (at its end:
 * the steal clock moves when the vCPU runs again), so nothing is counted twice. Only a followed thread's
 * wake-up comes from the scheduler (sched_info.last_queued, on the run queue's clock), placed on the
 * timeline's clock by the clocks' distance measured at switches and at the local timer (why_rq_off).
 */
#ifndef SVTRACE_WHY_H
#define SVTRACE_WHY_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Causes: index into svtrace_why_hop.ns[] (and sv_rec_why.ns[], the same order: common/sv_record.h). */
#define SVTRACE_WHY_STEAL 0
#define SVTRACE_WHY_IRQ_TIMER 1		/* local_timer_entry/exit */
#define SVTRACE_WHY_IRQ_IPI 2		/* reschedule, call_function(_single), irq_work entry/exit */
#define SVTRACE_WHY_IRQ_DEVICE 3	/* irq_handler_entry/exit */
#define SVTRACE_WHY_SOFTIRQ 4		/* + the softirq's number (0 HI .. 9 RCU): 4..13 */
#define SVTRACE_WHY_SOFTIRQ_NR 10
#define SVTRACE_WHY_KSOFTIRQD 14	/* backlog waited while ksoftirqd waited on the run queue */
#define SVTRACE_WHY_QDISC 15
#define SVTRACE_WHY_BACKLOG 16
#define SVTRACE_WHY_RUNQUEUE 17
#define SVTRACE_WHY_BLOCKED 18
#define SVTRACE_WHY_RUNNING 19
#define SVTRACE_WHY_CARRIED 20		/* the frame's own softirq */
#define SVTRACE_WHY_UNEXPLAINED 21
#define SVTRACE_WHY_NR 22
#define SVTRACE_WHY_SLOTS 24		/* ns[] entries (the last ones are 0: room for new causes) */

#define SVTRACE_WHY_POLICY_UNKNOWN 0xff

/* svtrace_why_hop.flags */
#define SVTRACE_WHY_F_PARTIAL 0x1u	/* a timeline did not reach back to a phase's start: that part unexplained */
#define SVTRACE_WHY_F_STEAL_RQ 0x2u	/* steal read from the run queue's booking (rq->prev_steal_time_rq):
					 * it lags the hypervisor's clock by up to a tick, so it may be placed late */
#define SVTRACE_WHY_F_QDISC 0x4u	/* the copy's qdisc stamp was found */
#define SVTRACE_WHY_F_RX 0x8u		/* its guest-side receive stamp was found (the carrier from then on: the consumer) */
#define SVTRACE_WHY_F_CARRIER_CPUS 0x10u /* phases on more than one CPU */
#define SVTRACE_WHY_F_NESTED 0x40u	/* the late path ran inside another (a drop inside a take): not decomposed */

/* Points (sv_record.h enum sv_point's numbers). */
#define SVTRACE_WHY_PT_T1 2
#define SVTRACE_WHY_PT_T2A 3
#define SVTRACE_WHY_PT_T2B 4

/* One hop of a late copy, split by cause: ns[0..SVTRACE_WHY_NR) add up to t_to - t_from. 272 octets. */
struct svtrace_why_hop {
	__u64 t_from, t_to;		/* bpf_ktime_get_ns (CLOCK_MONOTONIC) */
	__u64 ns[SVTRACE_WHY_SLOTS];
	__u64 holder_ns;		/* the holder's part of RUNQUEUE + KSOFTIRQD */
	__u32 carrier_tid;		/* the thread of the hop's last carrier phase (0: none, forwarded in softirq) */
	__u32 holder_pid;		/* the task that ran longest while the carrier (or ksoftirqd) waited, 0 none */
	__u16 cpu;			/* the CPU of the hop's last phase (its carrier's at the hop's end) */
	__u16 flags;			/* SVTRACE_WHY_F_* */
	__u8 holder_policy, holder_prio;	/* as svtrace_copy's; policy SVTRACE_WHY_POLICY_UNKNOWN: its
						 * run segments were gone (its name from the holders' names) */
	__u8 from_point, to_point;	/* SVTRACE_WHY_PT_* */
	__u32 faults;			/* page faults the carrier took in the hop (marks only: no duration) */
	__u32 pad;
	__u8 carrier_comm[16];
	__u8 holder_comm[16];
};

/* svtrace_copy.type of the event (after the late event of the same copy, on the same CPU) */
#define SVTRACE_EV_WHY 8u

/* The decomposition of a late copy: hop[0] T1-T2a (when T1 was seen), hop[1] T2a-T2b. 584 octets. */
struct svtrace_why_ev {
	__u8 type;			/* SVTRACE_EV_WHY (svtrace_copy's first octet) */
	__u8 port;			/* egress port index */
	__u16 smpcnt;
	__u32 stream;			/* BPF stream id */
	__u64 t1_ns, t2a_ns, t2b_ns;	/* as the late event's */
	__u32 nhops;			/* hops filled: hop[2 - nhops .. 1] */
	__u32 flags;			/* SVTRACE_WHY_F_NESTED */
	struct svtrace_why_hop hop[2];
};

/*
 * The timeline: "why_tl" holds SVTRACE_WHY_TL entries per CPU (a power of two, the loader's choice;
 * rodata why_tl_mask = entries - 1), CPU c's at [c * entries, (c + 1) * entries); "why_cpu"[c].head counts
 * the entries CPU c wrote (the next one goes to head & mask). At ~20-40k transitions a second and CPU
 * (a busy lab), 4096 entries reach back 100-200 ms: far more than a late hop.
 */
#define SVTRACE_WHY_TL_DEFAULT 4096

/* svtrace_why_ent.what: type (bits 28-31), kind (24-27), id (0-23: a pid, an IRQ number) */
#define SVTRACE_WHY_TYPE(w) ((w) >> 28)
#define SVTRACE_WHY_KIND(w) (((w) >> 24) & 15)
#define SVTRACE_WHY_ID(w) ((w) & 0xffffff)
#define SVTRACE_WHY_WHAT(type, kind, id) (((__u32)(type) << 28) | ((__u32)(kind) << 24) | ((__u32)(id) & 0xffffff))
/* transitions: the CPU runs this from t on; x = steal booked in the segment this one ends (ns) */
#define SVTRACE_WHY_T_TASK 0		/* id: the task's pid (0: idle) */
#define SVTRACE_WHY_T_SOFTIRQ 1		/* kind: the softirq's number */
#define SVTRACE_WHY_T_HARDIRQ 2		/* kind: SVTRACE_WHY_IRQ_* - SVTRACE_WHY_IRQ_TIMER; id: IRQ number (device) */
/* records of a followed thread (id: its pid): the interval [t - x, t] */
#define SVTRACE_WHY_T_WAIT 8		/* runnable on this CPU's run queue (written when it got the CPU) */
#define SVTRACE_WHY_T_SLEEP 9		/* blocked (from its switch-out to its wake-up) */
#define SVTRACE_WHY_T_FAULT 10		/* a page fault at t (x = 0; kind 0 user, 1 kernel) */

struct svtrace_why_ent {
	__u64 t;
	__u32 what;
	__u32 x;
};

/* "why_cpu"[cpu]: each CPU's state, written by that CPU (one line). */
struct svtrace_why_cpu {
	__u64 head;			/* entries written */
	__u64 steal;			/* the steal clock at the last transition (ns) */
	__u64 booked;			/* steal booked in the timeline since the start (ns): the cross-check */
	__u64 rq;			/* this CPU's run queue's address (the steal clock is read through it) */
	__u32 task, sirq, hirq;		/* the current level's entry word (SVTRACE_WHY_WHAT), 0 = none */
	__u32 ksoftirqd;		/* this CPU's ksoftirqd (learned at its first softirq), 0 unknown */
	__s64 rq_off;			/* bpf_ktime_get_ns() - the run queue's clock (sched_clock) */
	__u64 rq_off_t;			/* when rq_off was last set (0 never) */
};

/* "why_skb"[(skb >> 8) & mask]: the queue stamps of an SV copy (0: not seen). */
struct svtrace_why_skb {
	__u64 skb;
	__u64 t_qdisc;			/* net_dev_queue on an egress port */
	__u64 t_rx;			/* netif_receive_skb in a guest's namespace (the end of the queue after T2a) */
	__u16 cpu_qdisc, cpu_rx;
	__u32 pad;
};
#define SVTRACE_WHY_SKB_ENTRIES 8192

/*
 * One phase of a hop, as the decomposition takes it (the late path builds them; tests pass their own
 * through the test wrapper's query program): [t0, t1] on CPU cpu's timeline.
 */
#define SVTRACE_WHY_P_OWN 1		/* in the softirq that forwards it: its run is "carried" */
#define SVTRACE_WHY_P_QDISC 2
#define SVTRACE_WHY_P_BACKLOG 3
#define SVTRACE_WHY_P_CARRIER 4		/* with thread tid */
struct svtrace_why_phase {
	__u64 t0, t1;
	__u32 cpu, mode, tid, pad;
};

/* Where a followed thread's sleep start is kept (map "why_thr", slot tid & SVTRACE_WHY_THR_MASK, tagged
 * with the tid). Followed: svtrace's feeders (its feeder table, which user space may also fill) and
 * each CPU's ksoftirqd. */
#define SVTRACE_WHY_THR_MASK 1023
struct svtrace_why_thr {
	__u32 tid, pad;
	__u64 sleep_ns;			/* when it went to sleep (0: running or runnable) */
};

#define SVTRACE_WHY_HOP_SIZE 272
#define SVTRACE_WHY_EV_SIZE 584

#endif /* SVTRACE_WHY_H */

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Test wrapper (tests/net/svtrace_why.c): svtrace's whole BPF object (its programs, maps and the why-late
 * timelines of bpf/svtrace_why.bpf.h) plus two test-only programs, so that the decomposition can be run
 * on frames the test sends without svtrace's user space:
 *   why_test_rx     netif_receive_skb of the test's frames (EtherType 0x88BA, a magic and a sequence
 *                   number after the Ethernet header) outside the host's namespace: the guest-side
 *                   receive stamp svtrace's receive leaves for a tracked copy (why_rx), and the frame's
 *                   skb and stamps kept by sequence number for the test;
 *   why_test_burn   tc ingress of the flood's receiving veth: 20 us of CPU per frame in the receive softirq,
 *                   then dropped (the flood's softirq load, whatever the machine's speed);
 *   why_test_switch why_switch() alone on sched_switch (the cost of the timelines' part of svtrace's switch);
 *   why_test_late   run by BPF_PROG_TEST_RUN on the receiver's CPU right after the receiver got a late
 *                   frame: the late path of svtrace's free (why_late) on a copy whose T2a is the send,
 *                   its event in svtrace's ring buffer "events".
 */
#include "svtrace.bpf.c"
#include "svtrace_why_test.h"

struct why_test_seq {
	__u64 key;		/* the skb's address (svtrace's key) */
	__u64 t_rx;
	__u32 seq, cpu_rx;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, WHY_TEST_SEQS);
	__type(key, __u32);
	__type(value, struct why_test_seq);
} why_test_seqs SEC(".maps");

struct why_test_in why_test_in = {};

SEC("?tp_btf/netif_receive_skb")
int BPF_PROG(why_test_rx, struct sk_buff *skb)
{
	struct svtrace_hlog_pos *hp;
	struct why_test_seq *q;
	__u32 ifindex, netns, hdr[2] = {}, i;
	__u64 key;

	if (!proto_maybe_sv(true, skb))
		return 0;
	dev_id(true, skb->dev, &ifindex, &netns);
	if (!netns || netns == port_netns[0])
		return 0;
	if (bpf_probe_read_kernel(hdr, sizeof(hdr), skb->data) || hdr[0] != WHY_TEST_MAGIC)
		return 0;
	hp = cpu_pos();
	if (!hp)
		return 0;
	key = skb_key(hp, skb);
	why_rx(key);
	i = hdr[1] % WHY_TEST_SEQS;
	q = bpf_map_lookup_elem(&why_test_seqs, &i);
	if (!q)
		return 0;
	q->key = key;
	q->seq = hdr[1];
	q->cpu_rx = bpf_get_smp_processor_id();
	q->t_rx = bpf_ktime_get_ns();
	return 0;
}

SEC("?raw_tp/why_test_late")
int BPF_PROG(why_test_late)
{
	__u32 i = why_test_in.seq % WHY_TEST_SEQS;
	struct why_test_seq *q = bpf_map_lookup_elem(&why_test_seqs, &i);
	struct sv_track tr = {};
	struct svtrace_why_skb *s;

	if (!q || q->seq != why_test_in.seq)
		return 0;
	/* svtrace runs its late path in the copy's free, while the skb is still this frame's; the test asks
	 * after recv(), when the skb may already carry a later frame (the slab hands the same address out
	 * again) whose receive stamp replaced this one's: this frame's own stamps, put back */
	s = why_skb_of(q->key, true);
	if (s) {
		s->t_qdisc = 0;
		s->t_rx = q->t_rx;
		s->cpu_rx = q->cpu_rx;
	}
	tr.t2a_ns = why_test_in.t2a_ns;
	tr.tid2a = why_test_in.tid2a;
	tr.cpu2a = (__u16)why_test_in.cpu2a;
	tr.stream = why_test_in.stream;
	tr.smpcnt = (__u16)why_test_in.seq;
	tr.port = 1;
	why_late(true, &tr, q->key, bpf_ktime_get_ns());
	return 1;
}

#define WHY_TEST_TC_ACT_SHOT 2

static long why_test_spin(__u64 i, void *ctx)
{
	return bpf_ktime_get_ns() >= *(__u64 *)ctx;
}

SEC("?tc")
int why_test_burn(struct __sk_buff *skb)
{
	__u64 end = bpf_ktime_get_ns() + WHY_TEST_BURN_NS;

	bpf_loop(1 << 20, why_test_spin, &end, 0);
	return WHY_TEST_TC_ACT_SHOT;
}

/* The timelines' part of svtrace's sched_switch program alone (svtrace_why --hold: its cost per run). */
SEC("?tp_btf/sched_switch")
int BPF_PROG(why_test_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	why_switch(true, preempt, prev, next);
	return 0;
}

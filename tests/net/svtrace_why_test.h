/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What tests/net/svtrace_why.c and its BPF test wrapper (svtrace_why_test.bpf.c) share. */
#ifndef SVTRACE_WHY_TEST_H
#define SVTRACE_WHY_TEST_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define WHY_TEST_MAGIC 0x59485753u	/* the test frame's first word after the Ethernet header */
#define WHY_TEST_SEQS 4096
#define WHY_TEST_BURN_NS 20000		/* CPU a flood frame costs in the receive softirq (why_test_burn) */

/* why_test_late's input: the late copy as svtrace's T2a would have tracked it (T2a = the send) */
struct why_test_in {
	__u64 t2a_ns;
	__u32 seq, tid2a;
	__u32 cpu2a, stream;
};

#endif /* SVTRACE_WHY_TEST_H */

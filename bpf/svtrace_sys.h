/* SPDX-License-Identifier: Apache-2.0 */
/* svtrace's system helpers: namespaces, interfaces, privileges, kernel feature probes, drop reasons. */
#ifndef SVTRACE_SYS_H
#define SVTRACE_SYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Inode of a network namespace: @name NULL = ours, else /var/run/netns/NAME (ip-netns). 0 or -errno. */
int svtrace_netns_ino(const char *name, uint32_t *ino);

/* ifindex of @ifname inside netns @name (NULL = ours): enters it briefly with setns(2) and comes back.
 * Returns 0, -ENODEV (no such interface there), -ENOENT (no such netns) or -errno. */
int svtrace_ifindex(const char *netns, const char *ifname, uint32_t *ifindex);

/* Every interface of netns @name (for --egress all) but loopback, @except (the ingress) and masters
 * (bridge, bond, team, Open vSwitch: they forward to the guests' ports, they are not one): the first
 * @max into names[] (each IFNAMSIZ). The masters left out are listed in @skipped ("br0 (bridge), ...",
 * "" if none; may be NULL). Returns how many there are (more than @max when names[] was too short), or
 * -errno. */
int svtrace_list_ifaces(const char *netns, const char *except, char (*names)[16], unsigned max, char *skipped,
			size_t skipped_size);

/* 0 when the process may load tracing BPF (CAP_BPF + CAP_PERFMON, or CAP_SYS_ADMIN); else -EPERM and
 * @missing names what is missing ("CAP_BPF and CAP_PERFMON"). */
int svtrace_check_caps(char *missing, unsigned size);

/* Kernel has BTF for tp_btf (/sys/kernel/btf/vmlinux). */
bool svtrace_have_vmlinux_btf(void);
/* The kernel's BTF has the task's sched_info stamps (last_queued, last_arrival) and the run queue's
 * clock reachable from the task (sched_entity.cfs_rq->rq, CONFIG_FAIR_GROUP_SCHED): a feeder's wait
 * can be read from the scheduler, without sched_wakeup. */
bool svtrace_have_sched_info(void);
/* The distance in octets from the per-CPU run queue (runqueues) to the per-CPU preempt count
 * (__preempt_count), both variables of the per-CPU area, from the running kernel's BTF; 0 when it has
 * no such pair (arm64 keeps the count in the task). */
int64_t svtrace_preempt_from_rq(void);
/* The distance in octets from per-CPU variable @from to per-CPU variable @to (offsets in the running
 * kernel's BTF, section .data..percpu); 0 when either is missing. svtrace_why's steal clock:
 * svtrace_percpu_distance("runqueues", "steal_time") (KVM guests). */
int64_t svtrace_percpu_distance(const char *from, const char *to);
/* The root qdisc's kind of interface @ifindex in network namespace @netns (NULL: ours) into @qdisc ("noqueue":
 * no queue, a transmit goes straight to the driver). Returns 0, or -errno (-ENOENT: no such link or no
 * qdisc named). */
int svtrace_qdisc(const char *netns, uint32_t ifindex, char *qdisc, size_t size);
/* Tracepoint @sys:@name exists (tracefs events dir, or a btf_trace_@name type in vmlinux/module BTF). */
bool svtrace_have_tracepoint(const char *sys, const char *name, const char *module);
/* Whether this kernel lets an fentry program attach to function @func: loads an empty one (BPF
 * trampolines may be compiled out or refused). 0, or -errno (-ENOENT: no such function in its BTF). */
int svtrace_fentry_probe(const char *func);
/* Kernel symbol in /proc/kallsyms (a kprobe target). */
bool svtrace_have_ksym(const char *sym);

/* enum skb_drop_reason names from the running kernel's BTF ("TC_INGRESS", without the prefix).
 * Loads once; returns NULL for unknown values or without BTF. */
const char *svtrace_drop_reason_name(uint32_t value);
/* Reverse lookup (tests, classification): value of @name, or -ENOENT. */
int64_t svtrace_drop_reason_value(const char *name);
void svtrace_drop_reasons_free(void);

#endif /* SVTRACE_SYS_H */

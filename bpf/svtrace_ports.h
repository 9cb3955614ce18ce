/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svtrace's ports: the ingress interface (port 0) and the egress interfaces toward the guests (1..n), by
 * name, ifindex and network namespace inode, as BPF's port filter compares them (svtrace.bpf.c). From the
 * command line (--ingress, --egress IF,IF... or all: the kernel's list, or an Open vSwitch bridge's ports
 * from its database), and followed while tracing when an interface is re-created. Messages go to stderr
 * in svtrace's words (the program's, not a library's: each says what and where).
 */
#ifndef SVTRACE_PORTS_H
#define SVTRACE_PORTS_H

#include <stdbool.h>
#include <stdint.h>

#include "svtrace_corr.h"

#define SVTRACE_PORTS_MAX_EGRESS (SVTRACE_CORR_MAX_PORTS - 1)

struct svtrace_port {
	char name[16];
	uint32_t ifindex;
	uint32_t netns_ino;
	bool gone;		/* not in its namespace now (deleted, renamed; seen by svtrace_ports_watch) */
	uint32_t recreated;	/* times it came back under a new ifindex or namespace, followed */
};

struct svtrace_ports {
	struct svtrace_port port[SVTRACE_CORR_MAX_PORTS];	/* [0] ingress, [1..n] egress */
	unsigned n;						/* egress count */
	uint32_t all;						/* bit p for egress port p */
	char ovs_bridge[64], ovs_datapath[16];	/* --egress all from an Open vSwitch database, else "" */
};

/* Port @i's side, for messages: "ingress" (port 0) or "egress". */
const char *svtrace_ports_kind(unsigned i);

/*
 * The command line's interface names (usage errors, before anything is looked up): @ingress into port 0,
 * the egress list @egress (cut in place by strtok_r; "all": none yet) into ports 1.. Returns 0 or
 * -EINVAL (too long a name, the ingress again, a name twice, more than SVTRACE_PORTS_MAX_EGRESS, none),
 * said on stderr.
 */
int svtrace_ports_parse(struct svtrace_ports *ps, const char *ingress, char *egress);

/*
 * The interfaces' ifindex and namespace inode in network namespace @netns (NULL: ours), and for
 * @egress "all" the list itself: an Open vSwitch bridge's ports from the database @ovsdb ("unix:PATH";
 * NULL: Open vSwitch's default socket, when it exists), else every interface of the namespace but the
 * ingress, lo and masters. Sets ps->all. Returns 0, -EINVAL (usage: one interface under two names, too
 * many for "all") or another -errno (run time: a namespace or interface that is not there, a database
 * named and not readable, entering @netns refused), said on stderr.
 */
int svtrace_ports_resolve(struct svtrace_ports *ps, const char *netns, const char *egress, const char *ovsdb);

/*
 * Is each port still the interface BPF compares against? One re-created under the same name (a guest's
 * tap at a VM restart, or its namespace replaced) is followed: its new ifindex and namespace inode are
 * written to BPF's filter (@bpf_ifindex, @bpf_netns: global data, rewritten in place; netns first, so a
 * frame that sees half the change matches no port) and said on stderr. One gone (deleted, renamed
 * away, its namespace gone) is said once; its frames count as missing at that port until it comes
 * back. Returns the ports followed to a new ifindex (bit i for port i): the caller names them in its
 * records.
 */
uint32_t svtrace_ports_watch(struct svtrace_ports *ps, const char *netns, volatile uint32_t *bpf_ifindex,
			     volatile uint32_t *bpf_netns);

#endif /* SVTRACE_PORTS_H */

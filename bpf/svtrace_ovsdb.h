/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svtrace's Open vSwitch database client, for --egress all: on an OVS bridge of the userspace (netdev)
 * datapath the ports have no kernel master device (the bridge's own port is a tap, as a guest's is), so
 * the kernel cannot say which interfaces are the bridge's ports and which is its internal port. The
 * database can: one "transact" of three selects (Bridge, Port, Interface) over OVSDB's JSON-RPC
 * (RFC 7047), the same socket ovs-vsctl uses.
 */
#ifndef SVTRACE_OVSDB_H
#define SVTRACE_OVSDB_H

#include <stddef.h>

#define SVTRACE_OVSDB_REPLY_MAX (4u << 20)	/* largest reply read (a few thousand ports) */

struct svtrace_ovs_iface {
	char name[16];		/* IFNAMSIZ; a longer name in the database is skipped, counted in nlong */
	char type[24];		/* "" (a system port), "internal", "afxdp", "tap", "patch", "dpdkvhostuser"... */
};

struct svtrace_ovs_bridge {
	char name[64];
	char datapath_type[16];	/* "netdev", "system" (the database's "" is said as "system") */
	unsigned nifaces;	/* interfaces of the bridge: all of them, even past the caller's max */
	unsigned nlong;		/* of those, names longer than 15 characters (not kept) */
};

/* The request svtrace_ovsdb_parse() reads the reply of (NUL-terminated JSON-RPC text). */
const char *svtrace_ovsdb_request(void);

/*
 * Parses the reply (@json, @len octets, not NUL-terminated) to svtrace_ovsdb_request(): the bridge whose
 * ports include interface @iface, and that bridge's interfaces (the first @max into @ifaces, in the
 * database's order). Pure and bounded (fuzzed: tests/fuzz/fuzz_ovsdb.c). Returns 0, -ESRCH (@iface is
 * not an interface of any bridge), -EPROTO (the database answered with an error) or -EBADMSG (not such
 * a reply); @why (may be NULL) says what, for -EPROTO and -EBADMSG.
 */
int svtrace_ovsdb_parse(const char *json, size_t len, const char *iface, struct svtrace_ovs_bridge *br,
			struct svtrace_ovs_iface *ifaces, unsigned max, char *why, size_t why_size);

/*
 * Asks the database at @db ("unix:PATH", as ovs-vsctl's --db) and parses its answer as above. Waits at
 * most @timeout_ms for it. Returns what svtrace_ovsdb_parse() returns, or -errno for the socket
 * (-ENOENT: no such socket; -ECONNREFUSED: nobody listens; -ETIMEDOUT; -EINVAL: not "unix:PATH").
 */
int svtrace_ovsdb_bridge_of(const char *db, const char *iface, int timeout_ms, struct svtrace_ovs_bridge *br,
			    struct svtrace_ovs_iface *ifaces, unsigned max, char *why, size_t why_size);

#endif /* SVTRACE_OVSDB_H */

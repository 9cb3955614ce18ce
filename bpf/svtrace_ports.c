// SPDX-License-Identifier: Apache-2.0
/* svtrace's ports: see svtrace_ports.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "svtrace_ovsdb.h"
#include "svtrace_ports.h"
#include "svtrace_sys.h"

const char *svtrace_ports_kind(unsigned i)
{
	return i ? "egress" : "ingress";
}

int svtrace_ports_parse(struct svtrace_ports *ps, const char *ingress, char *egress)
{
	char names[SVTRACE_PORTS_MAX_EGRESS][16];
	char *save = NULL, *tok;
	int n = 0;

	if (strlen(ingress) >= 16) {
		fprintf(stderr, "svtrace: --ingress: interface name too long: '%s' (at most 15 characters)\n",
			ingress);
		return -EINVAL;
	}
	if (strcmp(egress, "all")) {
		for (tok = strtok_r(egress, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			if (n >= SVTRACE_PORTS_MAX_EGRESS) {
				fprintf(stderr, "svtrace: --egress: at most %d egress interfaces\n",
					SVTRACE_PORTS_MAX_EGRESS);
				return -EINVAL;
			}
			if (strlen(tok) >= 16) {
				fprintf(stderr, "svtrace: --egress: interface name too long: '%s' (at most 15 "
					"characters)\n", tok);
				return -EINVAL;
			}
			if (!strcmp(tok, ingress)) {
				fprintf(stderr, "svtrace: --egress: '%s' is the ingress interface (--ingress): it cannot "
					"also be an egress\n", tok);
				return -EINVAL;
			}
			for (int j = 0; j < n; j++) {
				if (!strcmp(names[j], tok)) {
					fprintf(stderr, "svtrace: --egress: interface '%s' given twice\n", tok);
					return -EINVAL;
				}
			}
			snprintf(names[n++], 16, "%s", tok);
		}
		if (!n) {
			fprintf(stderr, "svtrace: --egress: no interface named (IF[,IF...] or all; see --help)\n");
			return -EINVAL;
		}
	}
	snprintf(ps->port[0].name, 16, "%s", ingress);
	for (int i = 0; i < n; i++)
		memcpy(ps->port[i + 1].name, names[i], 16);
	ps->n = (unsigned)n;
	return 0;
}

/* Entering --netns NAME failed for lack of privilege (setns(2) wants CAP_SYS_ADMIN, which svtrace.service
 * does not grant by default): say so, instead of an interface "not found". True when it said it. */
static bool netns_denied(const char *netns, int err)
{
	if (!netns || (err != -EPERM && err != -EACCES))
		return false;
	fprintf(stderr, "svtrace: entering network namespace '%s': %s: setns(2) needs CAP_SYS_ADMIN (for "
		"svtrace.service: CapabilityBoundingSet=CAP_SYS_ADMIN in a drop-in)\n", netns, strerror(-err));
	return true;
}

/* The database --egress all asks: --ovsdb, else Open vSwitch's own default (ovs-vsctl's: $OVS_RUNDIR/db.sock,
 * else /var/run/openvswitch/db.sock) when that socket exists; NULL when there is none. */
static const char *ovsdb_socket(const char *ovsdb, char *buf, size_t size)
{
	const char *dir = getenv("OVS_RUNDIR");

	if (ovsdb)
		return ovsdb;
	snprintf(buf, size, "unix:%s/db.sock", dir && *dir ? dir : "/var/run/openvswitch");
	return access(buf + 5, F_OK) ? NULL : buf;
}

/* Port types that carry frames to a guest through a kernel interface svtrace can trace. */
static bool ovs_port_traceable(const char *type)
{
	static const char *const ok[] = { "", "system", "tap", "afxdp", "afxdp-nonpmd" };

	for (unsigned i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (!strcmp(type, ok[i]))
			return true;
	return false;
}

/*
 * --egress all on an Open vSwitch bridge: the ports of the bridge that holds the ingress, asked of its
 * database (in the netdev datapath they have no kernel master, and its internal port is a tap like a
 * guest's), but the ingress, the internal port, ports of kinds without a kernel interface here
 * (patch, tunnels, dpdk) and names not in the namespace. Returns how many (into names[]), -ESRCH when
 * there is no database or the ingress is not an Open vSwitch port (the kernel's list is used), or
 * -errno when --ovsdb was given and could not be read (said).
 */
static int ovs_egress(struct svtrace_ports *ps, const char *netns, const char *ovsdb, char (*names)[16],
		      char *skipped, size_t skipped_size)
{
	const char *ingress = ps->port[0].name;
	struct svtrace_ovs_iface ifs[64];
	struct svtrace_ovs_bridge br;
	char sock[128], why[160];
	const char *db = ovsdb_socket(ovsdb, sock, sizeof(sock));
	size_t sl = 0;
	uint32_t idx;
	int err, n = 0;

	if (!db)
		return -ESRCH;
	err = svtrace_ovsdb_bridge_of(db, ingress, 3000, &br, ifs, 64, why, sizeof(why));
	if (err == -ESRCH) {
		if (ovsdb)
			fprintf(stderr, "svtrace: --egress all: '%s' is not a port of an Open vSwitch bridge in %s: "
				"interfaces listed from the kernel\n", ingress, db);
		return -ESRCH;
	}
	if (err) {
		bool said = err == -EPROTO || err == -EBADMSG;	/* the reply's own reason is in why */

		fprintf(stderr, "svtrace: --egress all: Open vSwitch database %s: %s%s\n", db,
			said ? why : strerror(-err), ovsdb ? "" : " (interfaces listed from the kernel)");
		return ovsdb ? (said ? -EIO : err) : -ESRCH;
	}
	skipped[0] = 0;
	for (unsigned i = 0; i < br.nifaces - br.nlong && i < 64; i++) {
		const char *why_out = NULL;

		if (!strcmp(ifs[i].name, ingress))
			continue;
		if (!strcmp(ifs[i].type, "internal"))
			why_out = "internal";
		else if (!ovs_port_traceable(ifs[i].type))
			why_out = ifs[i].type;
		else if ((err = svtrace_ifindex(netns, ifs[i].name, &idx)) == -EPERM || err == -EACCES)
			return err;	/* entering --netns is refused: said by the caller */
		else if (err)
			why_out = "not in this namespace";
		if (why_out) {
			int k = snprintf(skipped + sl, skipped_size - sl, "%s%s (%s)", sl ? ", " : "", ifs[i].name, why_out);

			if (k > 0 && (size_t)k < skipped_size - sl)
				sl += (size_t)k;
			continue;
		}
		if (n < SVTRACE_PORTS_MAX_EGRESS)
			memcpy(names[n], ifs[i].name, 16);
		n++;
	}
	if (br.nlong || br.nifaces > 64)
		fprintf(stderr, "svtrace: --egress all: bridge %s has %u interfaces, %u with names over 15 characters: only "
			"%u looked at\n", br.name, br.nifaces, br.nlong, br.nifaces - br.nlong < 64 ? br.nifaces - br.nlong : 64);
	snprintf(ps->ovs_bridge, sizeof(ps->ovs_bridge), "%s", br.name);
	snprintf(ps->ovs_datapath, sizeof(ps->ovs_datapath), "%s", br.datapath_type);
	fprintf(stderr, "svtrace: --egress all: Open vSwitch bridge %s (%s datapath; database %s)\n", br.name,
		br.datapath_type, db);
	return n;
}

int svtrace_ports_resolve(struct svtrace_ports *ps, const char *netns, const char *egress, const char *ovsdb)
{
	char names[SVTRACE_PORTS_MAX_EGRESS][16], skipped[512];
	const char *ingress = ps->port[0].name;
	uint32_t ino;
	int n = 0, err;

	err = svtrace_netns_ino(netns, &ino);
	if (err) {
		fprintf(stderr, "svtrace: network namespace '%s': %s\n", netns ? netns : "(own)",
			err == -ENOENT ? "no such namespace (see 'ip netns list')" : strerror(-err));
		return err == -EINVAL ? -ENOENT : err;
	}
	if (!strcmp(egress, "all")) {
		n = ovs_egress(ps, netns, ovsdb, names, skipped, sizeof(skipped));
		if (n != -ESRCH && n < 0)
			return netns_denied(netns, n) ? n : n == -EINVAL ? -EIO : n;
		if (n == -ESRCH)
			n = svtrace_list_ifaces(netns, ingress, names, SVTRACE_PORTS_MAX_EGRESS, skipped,
						sizeof(skipped));
		if (n < 0) {
			if (netns_denied(netns, n))
				return n;
			fprintf(stderr, "svtrace: --egress all: cannot list the interfaces: %s\n", strerror(-n));
			return n == -EINVAL ? -EIO : n;
		}
		/* what was left out: lo and masters (the kernel's list), or the bridge's other ports (OVS) */
		const char *others = ps->ovs_bridge[0] ? "of the bridge's ports" : "interfaces";
		const char *but = ps->ovs_bridge[0] ? "the ingress and its internal port" : "the ingress, lo and masters";

		if (n > SVTRACE_PORTS_MAX_EGRESS) {
			fprintf(stderr, "svtrace: --egress all: %d %s besides %s, at most %d can be traced: name them "
				"with --egress IF,IF,...\n", n, others, but, SVTRACE_PORTS_MAX_EGRESS);
			return -EINVAL;
		}
		if (!n) {
			fprintf(stderr, "svtrace: --egress all: no interface besides %s%s%s\n", but,
				skipped[0] ? ": left out " : "", skipped);
			return -ENODEV;
		}
		fprintf(stderr, "svtrace: --egress all: ");
		for (int i = 0; i < n; i++)
			fprintf(stderr, "%s%s", i ? "," : "", names[i]);
		fprintf(stderr, " (left out: the ingress %s%s%s%s)\n", ingress, ps->ovs_bridge[0] ? "" : ", lo",
			skipped[0] ? ", " : "", skipped);
		for (int i = 0; i < n; i++)
			memcpy(ps->port[i + 1].name, names[i], 16);
		ps->n = (unsigned)n;
	}
	for (unsigned i = 0; i <= ps->n; i++) {
		struct svtrace_port *p = &ps->port[i];

		err = svtrace_ifindex(netns, p->name, &p->ifindex);
		if (netns_denied(netns, err))
			return err;
		if (err) {
			fprintf(stderr, "svtrace: %s interface '%s' not found in %s%s%s\n", svtrace_ports_kind(i),
				p->name, netns ? "network namespace '" : "this network namespace", netns ? netns : "",
				netns ? "'" : "");
			return -ENODEV;
		}
		p->netns_ino = ino;
		for (unsigned j = 0; j < i; j++) {
			if (ps->port[j].ifindex == p->ifindex) {
				/* two names of one interface (an altname) */
				fprintf(stderr, "svtrace: %s interface '%s' is the %s interface '%s' (ifindex %u) again\n",
					svtrace_ports_kind(i), p->name, svtrace_ports_kind(j), ps->port[j].name,
					ps->port[j].ifindex);
				return -EINVAL;
			}
		}
	}
	ps->all = 0;
	for (unsigned p = 1; p <= ps->n; p++)
		ps->all |= 1u << p;
	return 0;
}

/* Never silent: a port gone or back is said once, when it happens. */
uint32_t svtrace_ports_watch(struct svtrace_ports *ps, const char *netns, volatile uint32_t *bpf_ifindex,
			     volatile uint32_t *bpf_netns)
{
	uint32_t ino = 0, idx = 0, followed = 0;
	int err = svtrace_netns_ino(netns, &ino);

	for (unsigned i = 0; i <= ps->n; i++) {
		struct svtrace_port *p = &ps->port[i];
		const char *kind = svtrace_ports_kind(i);

		if (err || svtrace_ifindex(netns, p->name, &idx)) {
			if (!p->gone)
				fprintf(stderr, "svtrace: %s interface '%s' (ifindex %u) %s: its frames are not followed "
					"until it comes back\n", kind, p->name, p->ifindex,
					err ? "is gone with its network namespace" : "is gone (deleted or renamed)");
			p->gone = true;
			continue;
		}
		if (!p->gone && idx == p->ifindex && ino == p->netns_ino)
			continue;
		fprintf(stderr, "svtrace: %s interface '%s' re-created (ifindex %u -> %u%s): followed\n", kind,
			p->name, p->ifindex, idx, ino != p->netns_ino ? ", in a new network namespace" : "");
		bpf_netns[i] = ino;
		bpf_ifindex[i] = idx;
		p->ifindex = idx;
		p->netns_ino = ino;
		p->gone = false;
		p->recreated++;
		followed |= 1u << i;
	}
	return followed;
}

// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/capability.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "svtrace_sys.h"

static int netns_open(const char *name)
{
	char path[512];

	if (!name)
		return open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (strchr(name, '/'))
		snprintf(path, sizeof(path), "%s", name);
	else
		snprintf(path, sizeof(path), "/var/run/netns/%s", name);
	return open(path, O_RDONLY | O_CLOEXEC);
}

int svtrace_netns_ino(const char *name, uint32_t *ino)
{
	struct stat st;
	int fd = netns_open(name), err = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st))
		err = -errno;
	else
		*ino = (uint32_t)st.st_ino;
	close(fd);
	return err;
}

/* Runs @fn inside netns @name (NULL: here) and comes back. */
static int in_netns(const char *name, int (*fn)(void *), void *arg)
{
	int self, target, err, err2;

	if (!name)
		return fn(arg);
	self = netns_open(NULL);
	if (self < 0)
		return -errno;
	target = netns_open(name);
	if (target < 0) {
		err = -errno;
		close(self);
		return err == -ENOENT ? -ENOENT : err;
	}
	if (setns(target, CLONE_NEWNET)) {
		err = -errno;
		goto out;
	}
	err = fn(arg);
	if (setns(self, CLONE_NEWNET)) {
		/* Staying in the wrong namespace would silently trace the wrong thing. */
		err2 = -errno;
		fprintf(stderr, "svtrace: cannot return to the original network namespace: %s\n",
			strerror(-err2));
		abort();
	}
out:
	close(target);
	close(self);
	return err;
}

struct ifx_arg {
	const char *name;
	uint32_t idx;
};

static int ifx_fn(void *p)
{
	struct ifx_arg *a = p;

	a->idx = if_nametoindex(a->name);
	return a->idx ? 0 : -ENODEV;
}

struct qdisc_arg {
	uint32_t ifindex;
	char qdisc[32];
};

/* The link's IFLA_QDISC from RTM_GETLINK (in the namespace in_netns entered). */
static int qdisc_fn(void *p)
{
	struct qdisc_arg *a = p;
	struct {
		struct nlmsghdr h;
		struct ifinfomsg i;
	} req = { .h = { .nlmsg_len = sizeof(req), .nlmsg_type = RTM_GETLINK, .nlmsg_flags = NLM_F_REQUEST },
		  .i = { .ifi_family = AF_UNSPEC, .ifi_index = (int)a->ifindex } };
	char buf[16384];
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	ssize_t n;
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE), err = -ENOENT;

	if (fd < 0)
		return -errno;
	if (send(fd, &req, sizeof(req), 0) < 0 || (n = recv(fd, buf, sizeof(buf), 0)) < 0) {
		err = -errno;
		goto out;
	}
	if (!NLMSG_OK(h, (size_t)n) || h->nlmsg_type != RTM_NEWLINK)
		goto out;
	{
		struct ifinfomsg *ifi = NLMSG_DATA(h);
		int len = (int)IFLA_PAYLOAD(h);

		for (struct rtattr *at = IFLA_RTA(ifi); RTA_OK(at, len); at = RTA_NEXT(at, len)) {
			if (at->rta_type != IFLA_QDISC)
				continue;
			snprintf(a->qdisc, sizeof(a->qdisc), "%.*s", (int)RTA_PAYLOAD(at), (const char *)RTA_DATA(at));
			err = 0;
			break;
		}
	}
out:
	close(fd);
	return err;
}

int svtrace_qdisc(const char *netns, uint32_t ifindex, char *qdisc, size_t size)
{
	struct qdisc_arg a = { .ifindex = ifindex };
	int err = in_netns(netns, qdisc_fn, &a);

	if (!err)
		snprintf(qdisc, size, "%s", a.qdisc);
	return err;
}

int svtrace_ifindex(const char *netns, const char *ifname, uint32_t *ifindex)
{
	struct ifx_arg a = { .name = ifname };
	int err = in_netns(netns, ifx_fn, &a);

	if (!err)
		*ifindex = a.idx;
	return err;
}

struct list_arg {
	const char *except;
	char (*names)[16];
	unsigned max, n;
	char *skipped;
	size_t skipped_size, skipped_len;
};

/* The driver of interface @name ("bridge", "bonding", "veth"...) through @fd (a socket of the namespace
 * we are in), "" when it does not say. A master (bridge, bond, team, Open vSwitch) forwards to the
 * guests' ports; it is not one. */
static const char *master_kind(int fd, const char *name)
{
	static const char *const masters[] = { "bridge", "bonding", "team", "openvswitch" };
	struct ethtool_drvinfo di = { .cmd = ETHTOOL_GDRVINFO };
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (fd >= 0 && !ioctl(fd, SIOCGIFFLAGS, &ifr) && (ifr.ifr_flags & IFF_MASTER))
		return "bonding";
	ifr.ifr_data = (void *)&di;
	if (fd < 0 || ioctl(fd, SIOCETHTOOL, &ifr))
		return NULL;
	for (unsigned i = 0; i < sizeof(masters) / sizeof(masters[0]); i++)
		if (!strcmp(di.driver, masters[i]))
			return masters[i];
	return NULL;
}

static int list_fn(void *p)
{
	struct list_arg *a = p;
	struct if_nameindex *ni = if_nameindex(), *it;
	int fd;

	if (!ni)
		return -errno;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);	/* created here: this namespace's */
	for (it = ni; it->if_index; it++) {
		const char *kind;

		if (!strcmp(it->if_name, "lo") || (a->except && !strcmp(it->if_name, a->except)))
			continue;
		kind = master_kind(fd, it->if_name);
		if (kind) {
			if (a->skipped && a->skipped_len < a->skipped_size) {
				int k = snprintf(a->skipped + a->skipped_len, a->skipped_size - a->skipped_len, "%s%s (%s)",
						 a->skipped_len ? ", " : "", it->if_name, kind);

				if (k > 0)
					a->skipped_len += (size_t)k;
			}
			continue;
		}
		if (a->n < a->max)
			snprintf(a->names[a->n], 16, "%s", it->if_name);
		a->n++;		/* counted past max: the caller says how many there are */
	}
	if (fd >= 0)
		close(fd);
	if_freenameindex(ni);
	return 0;
}

int svtrace_list_ifaces(const char *netns, const char *except, char (*names)[16], unsigned max, char *skipped,
			size_t skipped_size)
{
	struct list_arg a = { .except = except, .names = names, .max = max, .skipped = skipped,
			      .skipped_size = skipped_size };
	int err;

	if (skipped && skipped_size)
		skipped[0] = 0;
	err = in_netns(netns, list_fn, &a);
	return err ? err : (int)a.n;
}

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

int svtrace_check_caps(char *missing, unsigned size)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = { 0 };
	uint64_t eff;
	bool bpf, perfmon, admin;

	if (syscall(SYS_capget, &h, d))
		return 0;	/* cannot tell: let the load say it */
	eff = ((uint64_t)d[1].effective << 32) | d[0].effective;
	admin = eff & (1ull << CAP_SYS_ADMIN);
	bpf = admin || (eff & (1ull << CAP_BPF));
	perfmon = admin || (eff & (1ull << CAP_PERFMON));
	if (bpf && perfmon)
		return 0;
	snprintf(missing, size, "%s%s%s", bpf ? "" : "CAP_BPF", !bpf && !perfmon ? " and " : "",
		 perfmon ? "" : "CAP_PERFMON");
	return -EPERM;
}

bool svtrace_have_vmlinux_btf(void)
{
	return access("/sys/kernel/btf/vmlinux", R_OK) == 0;
}

/* Whether struct @name in @vm has a member @member. */
static bool btf_has_member(const struct btf *vm, const char *name, const char *member)
{
	int id = btf__find_by_name_kind(vm, name, BTF_KIND_STRUCT);
	const struct btf_type *t = id > 0 ? btf__type_by_id(vm, id) : NULL;
	const struct btf_member *m = t ? btf_members(t) : NULL;

	for (unsigned i = 0; m && i < btf_vlen(t); i++, m++) {
		const char *n = btf__name_by_offset(vm, m->name_off);

		if (n && !strcmp(n, member))
			return true;
	}
	return false;
}

bool svtrace_have_sched_info(void)
{
	struct btf *vm = btf__load_vmlinux_btf();
	bool ok;

	if (!vm)
		return false;
	ok = btf_has_member(vm, "sched_info", "last_queued") && btf_has_member(vm, "sched_info", "last_arrival") &&
	     btf_has_member(vm, "sched_entity", "cfs_rq") && btf_has_member(vm, "cfs_rq", "rq") &&
	     btf_has_member(vm, "rq", "clock");
	btf__free(vm);
	return ok;
}

int64_t svtrace_percpu_distance(const char *from, const char *to)
{
	struct btf *vm = btf__load_vmlinux_btf();
	int64_t a = -1, b = -1;
	int id;

	if (!vm)
		return 0;
	id = btf__find_by_name_kind(vm, ".data..percpu", BTF_KIND_DATASEC);
	if (id > 0) {
		const struct btf_type *t = btf__type_by_id(vm, id);
		const struct btf_var_secinfo *v = btf_var_secinfos(t);

		for (unsigned i = 0; i < btf_vlen(t); i++, v++) {
			const char *n = btf__name_by_offset(vm, btf__type_by_id(vm, v->type)->name_off);

			if (n && !strcmp(n, from))
				a = v->offset;
			else if (n && !strcmp(n, to))
				b = v->offset;
		}
	}
	btf__free(vm);
	return a >= 0 && b >= 0 ? b - a : 0;
}

int64_t svtrace_preempt_from_rq(void)
{
	return svtrace_percpu_distance("runqueues", "__preempt_count");
}

bool svtrace_have_tracepoint(const char *sys, const char *name, const char *module)
{
	static const char *const roots[] = { "/sys/kernel/tracing/events", "/sys/kernel/debug/tracing/events" };
	char path[512], tname[256];
	struct btf *vm, *mod;
	bool found = false;

	for (unsigned i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s/%s", roots[i], sys, name);
		if (!access(path, F_OK))
			return true;
	}
	/* tracefs not mounted: the tracepoint's btf_trace_ typedef is in the vmlinux or module BTF. */
	snprintf(tname, sizeof(tname), "btf_trace_%s", name);
	vm = btf__load_vmlinux_btf();
	if (!vm)
		return false;
	if (btf__find_by_name(vm, tname) > 0) {
		found = true;
	} else if (module) {
		snprintf(path, sizeof(path), "/sys/kernel/btf/%s", module);
		mod = btf__parse_split(path, vm);
		if (mod) {
			found = btf__find_by_name(mod, tname) > 0;
			btf__free(mod);
		}
	}
	btf__free(vm);
	return found;
}

int svtrace_fentry_probe(const char *func)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	struct btf *vm = btf__load_vmlinux_btf();
	int id, fd;

	if (!vm)
		return -ENOENT;
	id = btf__find_by_name_kind(vm, func, BTF_KIND_FUNC);
	btf__free(vm);
	if (id <= 0)
		return -ENOENT;
	LIBBPF_OPTS(bpf_prog_load_opts, o, .expected_attach_type = BPF_TRACE_FENTRY, .attach_btf_id = (__u32)id);
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "sv_probe", "GPL", insns, 2, &o);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

bool svtrace_have_ksym(const char *sym)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], name[256];
	unsigned long long addr;
	char type;
	bool found = false;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) == 3 && !strcmp(name, sym)) {
			found = true;
			break;
		}
	}
	fclose(f);
	return found;
}

static struct {
	bool loaded;
	uint32_t n;
	struct {
		uint32_t value;
		char name[48];
	} *e;
} reasons;

static void reasons_load(void)
{
	const struct btf_type *t;
	const struct btf_enum *en;
	struct btf *btf;
	int id;

	reasons.loaded = true;
	btf = btf__load_vmlinux_btf();
	if (!btf)
		return;
	id = btf__find_by_name_kind(btf, "skb_drop_reason", BTF_KIND_ENUM);
	if (id <= 0)
		goto out;
	t = btf__type_by_id(btf, id);
	en = btf_enum(t);
	reasons.e = calloc(btf_vlen(t), sizeof(*reasons.e));
	if (!reasons.e)
		goto out;
	for (uint32_t i = 0; i < btf_vlen(t); i++) {
		const char *name = btf__name_by_offset(btf, en[i].name_off);

		if (!name)
			continue;
		if (!strncmp(name, "SKB_DROP_REASON_", 16))
			name += 16;
		reasons.e[reasons.n].value = (uint32_t)en[i].val;
		snprintf(reasons.e[reasons.n].name, sizeof(reasons.e[0].name), "%s", name);
		reasons.n++;
	}
out:
	btf__free(btf);
}

const char *svtrace_drop_reason_name(uint32_t value)
{
	if (!reasons.loaded)
		reasons_load();
	for (uint32_t i = 0; i < reasons.n; i++)
		if (reasons.e[i].value == value)
			return reasons.e[i].name;
	return NULL;
}

int64_t svtrace_drop_reason_value(const char *name)
{
	if (!reasons.loaded)
		reasons_load();
	for (uint32_t i = 0; i < reasons.n; i++)
		if (!strcmp(reasons.e[i].name, name))
			return reasons.e[i].value;
	return -ENOENT;
}

void svtrace_drop_reasons_free(void)
{
	free(reasons.e);
	reasons.e = NULL;
	reasons.n = 0;
	reasons.loaded = false;
}

// SPDX-License-Identifier: Apache-2.0
/* svtrace's BPF side in user space: see svtrace_setup.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "sv_clock.h"
#include "svtrace.skel.h"
#include "svtrace_corr.h"
#include "svtrace_events.h"
#include "svtrace_hlog.h"
#include "svtrace_ports.h"
#include "svtrace_scan.h"
#include "svtrace_setup.h"
#include "svtrace_streams.h"
#include "svtrace_sys.h"
#include "svtrace_why.h"

_Static_assert(sizeof(struct svtrace_copy) == SVTRACE_COPY_SIZE, "svtrace_copy ABI");
_Static_assert(sizeof(struct svtrace_late_ev) == SVTRACE_LATE_SIZE, "svtrace_late_ev ABI");
_Static_assert(sizeof(struct svtrace_stream_key) == 68 && sizeof(struct svtrace_stream_val) == 16, "stream ABI");
_Static_assert(sizeof(struct svtrace_frame_key) == 8 && sizeof(struct svtrace_inflight) == 24, "frame ABI");
_Static_assert(sizeof(struct svtrace_track) == SVTRACE_TRACK_SIZE, "track ABI");

/* At the stop, T1 is detached first; frames it saw get this long to reach T2a before T2a is detached,
 * and then as long again (at least) to be taken (svtrace_setup_stop). Copies still untaken after that and
 * younger than --timeout-ms are in flight at the stop, not missing. */
#define STOP_GRACE_NS (20 * SV_NSEC_PER_MSEC)
#define STOP_DRAIN_NS (100 * SV_NSEC_PER_MSEC)

enum { MAP_INFLIGHT, MAP_TRACK, MAP_TRACK_REL, MAP_INCOMPLETE, MAP_HIST, MAP_HLOG, MAP_HLOG_POS, MAP_NR };

struct mapping {
	void *p;
	size_t bytes;
};

struct svtrace_setup {
	struct svtrace_setup_cfg cfg;
	struct svtrace_bpf *skel;
	struct ring_buffer *rb;
	struct bpf_link *links[64];
	const char *link_prog[64];	/* each link's program name (the stop detaches by stage) */
	unsigned nlinks;
	struct svtrace_probes probes;
	uint32_t track_n;		/* slots of "track" */
	struct mapping map[MAP_NR];	/* the tables read in place */
};

static bool libbpf_verbose, libbpf_quiet;

/* libbpf's messages: debug with -v; warnings, except while optional probes are tried (their failure is
 * expected on many kernels and is reported once, in svtrace's own words). */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (!libbpf_verbose && (level == LIBBPF_DEBUG || libbpf_quiet))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

void svtrace_setup_log(bool verbose)
{
	libbpf_set_print(libbpf_print);
	libbpf_verbose = verbose;
}

static void *map_mmap(struct bpf_map *m, struct mapping *out)
{
	long pg = sysconf(_SC_PAGESIZE);
	size_t n = (size_t)bpf_map__value_size(m) * bpf_map__max_entries(m);
	void *p;

	n = (n + (size_t)pg - 1) / (size_t)pg * (size_t)pg;
	p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(m), 0);
	if (p == MAP_FAILED)
		return NULL;
	out->p = p;
	out->bytes = n;
	return p;
}

/* The frame table (a warning when it cannot be mapped: its scan is skipped), the skb table (timeout
 * scan) and the hop log and histograms, read in place. */
int svtrace_setup_map(struct svtrace_setup *s, struct svtrace_scan *sc, struct svtrace_hlog_cfg *hc)
{
	struct svtrace_bpf *sk = s->skel;
	struct mapping *m = s->map;

	sc->inflight = map_mmap(sk->maps.inflight, &m[MAP_INFLIGHT]);
	if (!sc->inflight)
		fprintf(stderr, "svtrace: warning: cannot map the frame table (%s): frames that never reach "
			"T2a are only counted when their slot is reused\n", strerror(errno));
	sc->track = map_mmap(sk->maps.track, &m[MAP_TRACK]);
	sc->track_rel = map_mmap(sk->maps.track_rel, &m[MAP_TRACK_REL]);
	sc->incomplete = map_mmap(sk->maps.incomplete, &m[MAP_INCOMPLETE]);
	if (!sc->track || !sc->track_rel || !sc->incomplete)
		return -errno;
	sc->track_n = s->track_n;
	if (s->cfg.per_frame)
		return 0;
	hc->hist = map_mmap(sk->maps.hist, &m[MAP_HIST]);
	if (!hc->hist)
		return -errno;
	hc->nhist = bpf_map__max_entries(sk->maps.hist);
	hc->log = map_mmap(sk->maps.hlog, &m[MAP_HLOG]);
	hc->pos = map_mmap(sk->maps.hlog_pos, &m[MAP_HLOG_POS]);
	if (!hc->log || !hc->pos)
		return -errno;
	hc->ncpus = bpf_map__max_entries(sk->maps.hlog_pos);
	hc->entries = s->cfg.log_entries;
	return 0;
}

/* The tracepoint system of a why hook's tracepoint @tp (svtrace_why.bpf.h). */
static const char *why_tp_system(const char *tp)
{
	if (!strncmp(tp, "irq_handler_", 12) || !strncmp(tp, "softirq_", 8))
		return "irq";
	if (!strcmp(tp, "net_dev_queue"))
		return "net";
	if (!strncmp(tp, "page_fault_", 11))
		return "exceptions";
	return "irq_vectors";	/* x86's local_timer, reschedule, call_function(_single), irq_work */
}

/* A why hook's tracepoint: its section's name after the flavour ("?tp_btf/softirq_entry"). */
static const char *why_tp(const struct bpf_program *p)
{
	const char *sec = bpf_program__section_name(p), *slash = strchr(sec, '/');

	return slash ? slash + 1 : sec;
}

static bool is_why(const char *name)
{
	return !strncmp(name, "why_btf_", 8) || !strncmp(name, "why_raw_", 8);
}

/* A why hook left out: its tracepoint named once in the probes' list (entry and exit share a name). */
static void why_missing(struct svtrace_probes *pr, const char *tp)
{
	size_t n = strlen(pr->why_missing);
	char name[64];

	snprintf(name, sizeof(name), "%s", tp);
	if (strlen(name) > 6 && !strcmp(name + strlen(name) - 6, "_entry"))
		name[strlen(name) - 6] = 0;
	else if (strlen(name) > 5 && !strcmp(name + strlen(name) - 5, "_exit"))
		name[strlen(name) - 5] = 0;
	if (strstr(pr->why_missing, name))
		return;
	snprintf(pr->why_missing + n, sizeof(pr->why_missing) - n, "%s%s", n ? "," : "", name);
}

/* SVTRACE_WHY_HIDE=TP[,TP...]: tracepoints taken as absent (tests: the path of a kernel without them). */
static bool why_hidden(const char *tp)
{
	const char *h = getenv("SVTRACE_WHY_HIDE"), *p;
	size_t n = strlen(tp);

	for (p = h; p && (p = strstr(p, tp)); p += n)
		if ((p == h || p[-1] == ',') && (p[n] == ',' || !p[n]))
			return true;
	return false;
}

/* Whether an egress port has a queue (a qdisc other than noqueue: a tap's, a NIC's), checked at the start;
 * unknown counts as one. */
static bool ports_queue(const struct svtrace_setup_cfg *c)
{
	char q[32];

	for (unsigned i = 1; i <= c->ports->n; i++)
		if (svtrace_qdisc(c->netns, c->ports->port[i].ifindex, q, sizeof(q)) || strcmp(q, "noqueue"))
			return true;
	return false;
}

/* The why hooks of the flavour svtrace's own use, each where its tracepoint exists (the others said). */
static void choose_why(struct svtrace_setup *s, bool btf)
{
	struct svtrace_probes *pr = &s->probes;
	struct bpf_program *p;

	pr->why = s->cfg.why && s->cfg.threshold_ns;
	if (!pr->why)
		snprintf(pr->why_off, sizeof(pr->why_off), "%s",
			 s->cfg.why ? "late detection off (--threshold-us 0)" : "--why off");
	pr->why_missing[0] = 0;
	/* net_dev_queue stamps the qdisc's entry: only where a port has a queue (it runs at every transmit of
	 * the machine; without a queue the stamp is T2a's own instant) */
	pr->why_qdisc = pr->why && ports_queue(&s->cfg);
	bpf_object__for_each_program(p, s->skel->obj) {
		const char *name = bpf_program__name(p);
		bool on;

		if (!is_why(name))
			continue;
		/* the page faults' only with --why-faults: they run on every fault of the machine for a mark */
		on = pr->why && !strncmp(name, btf ? "why_btf_" : "why_raw_", 8) &&
		     (s->cfg.why_faults || strncmp(why_tp(p), "page_fault_", 11)) &&
		     (pr->why_qdisc || strcmp(why_tp(p), "net_dev_queue"));
		if (on && (!svtrace_have_tracepoint(why_tp_system(why_tp(p)), why_tp(p), NULL) || why_hidden(why_tp(p)))) {
			why_missing(pr, why_tp(p));
			on = false;
		}
		bpf_program__set_autoload(p, on);
	}
}

static void choose_programs(struct svtrace_setup *s)
{
	struct svtrace_bpf *sk = s->skel;
	struct svtrace_probes *pr = &s->probes;
	bool btf = !s->cfg.raw_tp && svtrace_have_vmlinux_btf();
	struct bpf_program *btf_progs[] = { sk->progs.btf_netif_receive_skb, sk->progs.btf_net_dev_start_xmit,
					    sk->progs.btf_consume_skb, sk->progs.btf_kfree_skb,
					    sk->progs.btf_sched_wakeup, sk->progs.btf_sched_switch };
	struct bpf_program *raw_progs[] = { sk->progs.raw_netif_receive_skb, sk->progs.raw_net_dev_start_xmit,
					    sk->progs.raw_consume_skb, sk->progs.raw_kfree_skb,
					    sk->progs.raw_sched_wakeup, sk->progs.raw_sched_switch };

	for (unsigned i = 0; i < sizeof(btf_progs) / sizeof(btf_progs[0]); i++) {
		bpf_program__set_autoload(btf_progs[i], btf);
		bpf_program__set_autoload(raw_progs[i], !btf);
	}
	/* The scheduler's own stamps (task sched_info, the run queue's clock) make sched_wakeup
	 * unnecessary: one hook fewer on every wake-up of the machine, and no CPU writing another's line. */
	pr->wait_from_rq = !s->cfg.sched_wakeup && svtrace_have_sched_info();
	if (pr->wait_from_rq) {
		bpf_program__set_autoload(sk->progs.btf_sched_wakeup, false);
		bpf_program__set_autoload(sk->progs.raw_sched_wakeup, false);
	}
	pr->attach_mode = btf ? "tp_btf" : "raw_tp";
	choose_why(s, btf);
	/* whether T2a runs for an interrupt, not for the thread it interrupted (a carrier is a thread) */
	pr->preempt_from_rq = svtrace_preempt_from_rq();
	/* Optional: present only with the module loaded / the symbol in the kernel. */
	pr->ovs = svtrace_have_tracepoint("openvswitch", "ovs_dp_upcall", "openvswitch");
	if (!pr->ovs)
		snprintf(pr->ovs_why, sizeof(pr->ovs_why), "openvswitch tracepoints absent");
	bpf_program__set_autoload(sk->progs.ovs_dp_upcall, pr->ovs);
	bpf_program__set_autoload(sk->progs.ovs_do_execute_action,
				  pr->ovs && svtrace_have_tracepoint("openvswitch", "ovs_do_execute_action",
								     "openvswitch"));
	pr->tun = svtrace_have_ksym("tun_net_xmit");
	if (!pr->tun)
		snprintf(pr->tun_why, sizeof(pr->tun_why), "tun_net_xmit not in kallsyms (tun not loaded)");
	bpf_program__set_autoload(sk->progs.kp_tun_net_xmit, pr->tun);
	/* T2a of AF_XDP copy-mode transmits (Open vSwitch afxdp ports) and PACKET_QDISC_BYPASS sockets */
	{
		int err = svtrace_fentry_probe("__dev_direct_xmit");

		pr->direct = !err;
		if (err)
			snprintf(pr->direct_why, sizeof(pr->direct_why), "fentry %s: %s",
				 err == -ENOENT ? "target not in the kernel's BTF" : "refused by this kernel",
				 strerror(-err));
	}
	bpf_program__set_autoload(sk->progs.fe_dev_direct_xmit, pr->direct);
	pr->vhost = svtrace_have_ksym("handle_rx");
	if (!pr->vhost)
		snprintf(pr->vhost_why, sizeof(pr->vhost_why), "handle_rx not in kallsyms (vhost_net not loaded)");
	bpf_program__set_autoload(sk->progs.kp_vhost_handle_rx, pr->vhost);
}

/* Open, choose, knobs, load; a second time without the optional programs when the kernel refused. */
static int load(struct svtrace_setup *s)
{
	const struct svtrace_setup_cfg *c = &s->cfg;
	const struct svtrace_ports *ps = c->ports;
	unsigned ncpu = (unsigned)libbpf_num_possible_cpus();	/* per-CPU hop logs and positions */
	struct svtrace_probes *pr = &s->probes;
	struct svtrace_bpf *sk;
	int err;

	for (int attempt = 0; attempt < 2; attempt++) {
		sk = svtrace_bpf__open();
		if (!sk)
			return -errno;
		s->skel = sk;
		choose_programs(s);
		if (attempt) {
			/* First load failed with optional programs: they are what this kernel refuses. */
			pr->ovs = pr->tun = pr->vhost = pr->direct = false;
			snprintf(pr->direct_why, sizeof(pr->direct_why), "load failed");
			bpf_program__set_autoload(sk->progs.fe_dev_direct_xmit, false);
			snprintf(pr->ovs_why, sizeof(pr->ovs_why), "load failed");
			snprintf(pr->tun_why, sizeof(pr->tun_why), "load failed");
			snprintf(pr->vhost_why, sizeof(pr->vhost_why), "load failed");
			bpf_program__set_autoload(sk->progs.ovs_dp_upcall, false);
			bpf_program__set_autoload(sk->progs.ovs_do_execute_action, false);
			bpf_program__set_autoload(sk->progs.kp_tun_net_xmit, false);
			bpf_program__set_autoload(sk->progs.kp_vhost_handle_rx, false);
			if (pr->why) {
				struct bpf_program *p;

				pr->why = false;
				snprintf(pr->why_off, sizeof(pr->why_off), "its programs did not load (-v says why)");
				bpf_object__for_each_program(p, sk->obj)
					if (is_why(bpf_program__name(p)))
						bpf_program__set_autoload(p, false);
			}
		}
		sk->rodata->appid_filter = c->appid;
		sk->rodata->stale_ns = (uint64_t)c->timeout_ns;
		sk->rodata->late_ns = (uint64_t)c->threshold_ns;
		/* waits long enough to matter for a late frame get their end stamped (rare switches) */
		sk->rodata->wait_stamp_ns = c->threshold_ns ? (uint64_t)c->threshold_ns / 8 + 1 : 0;
		/* The interface filter, compared inline in BPF (port 0 = ingress). */
		sk->rodata->nr_ports = ps->n + 1;
		for (unsigned i = 0; i <= ps->n; i++) {
			sk->data_ports->port_ifindex[i] = ps->port[i].ifindex;
			sk->data_ports->port_netns[i] = ps->port[i].netns_ino;
		}
		sk->rodata->all_ports = ps->all;
		sk->rodata->learn_ports = c->expect_seen;
		sk->rodata->preempt_from_rq = pr->preempt_from_rq;
		{
			int64_t r = svtrace_drop_reason_value("UNHANDLED_PROTO");

			sk->rodata->reason_unhandled = r >= 0 ? (uint32_t)r : ~0u;
		}
		/* Direct-mapped skb table: a power of two; the fallback hash an eighth of it. */
		s->track_n = 1024;
		while (s->track_n < c->table)
			s->track_n <<= 1;
		bpf_map__set_max_entries(sk->maps.track, s->track_n);
		bpf_map__set_max_entries(sk->maps.track_claim, s->track_n);
		bpf_map__set_max_entries(sk->maps.track_rel, s->track_n);
		sk->rodata->track_mask = s->track_n - 1;
		bpf_map__set_max_entries(sk->maps.tracked, s->track_n / 8);
		/* Histograms per (stream, egress port, hop); --record: every copy is an event (records are
		 * per frame), the histograms stay unused (one entry). */
		sk->rodata->per_frame = c->per_frame ? 1 : 0;
		if (!c->per_frame) {
			bpf_map__set_max_entries(sk->maps.hist, SVTRACE_MAX_STREAMS * ps->n * SVTRACE_HOPS);
			/* the hop log: one ring per possible CPU */
			bpf_map__set_max_entries(sk->maps.hlog, ncpu * c->log_entries);
			sk->rodata->hlog_mask = c->log_entries - 1;
		}
		/* one position per possible CPU, with or without a log: the programs' per-CPU hot words live
		 * there (svtrace.bpf.c, struct sv_cpu_hot) */
		bpf_map__set_max_entries(sk->maps.hlog_pos, ncpu);
		if (c->svid) {
			size_t kept = strlen(c->svid) > SVTRACE_SVID_MAX ? SVTRACE_SVID_MAX : strlen(c->svid);

			/* the length on the wire and the octets BPF keeps (svtrace_streams checks the same) */
			sk->rodata->svid_filter_len = (uint32_t)strlen(c->svid);
			memcpy((void *)sk->rodata->svid_filter, c->svid, kept);
		}
		sk->rodata->nr_cpus = ncpu;
		sk->rodata->wait_from_rq = pr->wait_from_rq;
		/* why late: the timelines (SVTRACE_WHY_TL_DEFAULT entries per CPU: 100-200 ms of a busy CPU, far more
		 * than a late hop) and the queue stamps; one entry each when off (the calls are dropped) */
		sk->rodata->why_on = pr->why;
		if (pr->why) {
			int64_t d = svtrace_percpu_distance("runqueues", "steal_time");

			sk->rodata->why_tl_mask = SVTRACE_WHY_TL_DEFAULT - 1;
			sk->rodata->why_skb_mask = SVTRACE_WHY_SKB_ENTRIES - 1;
			sk->rodata->why_steal_from_rq = d;
			pr->why_steal = d ? "steal_time" : "rq";
			bpf_map__set_max_entries(sk->maps.why_tl, ncpu * SVTRACE_WHY_TL_DEFAULT);
			bpf_map__set_max_entries(sk->maps.why_skb, SVTRACE_WHY_SKB_ENTRIES);
			if (c->why_rate) {
				sk->rodata->why_gap_ns = SV_NSEC_PER_SEC / c->why_rate;
				sk->rodata->why_burst = c->why_rate / 4 > 16 ? c->why_rate / 4 : 16;
			}
		}
		bpf_map__set_max_entries(sk->maps.events, c->ringbuf_bytes);
		/* A refusal caused by an optional program is retried without them: stay quiet the first time. */
		libbpf_quiet = !attempt && (pr->ovs || pr->tun || pr->vhost || pr->direct || pr->why);
		err = svtrace_bpf__load(sk);
		libbpf_quiet = false;
		if (!err)
			return 0;
		svtrace_bpf__destroy(sk);
		s->skel = NULL;
		if (!pr->ovs && !pr->tun && !pr->vhost && !pr->direct && !pr->why)
			return err;
	}
	return err;
}

int svtrace_setup_load(struct svtrace_setup **out, const struct svtrace_setup_cfg *cfg)
{
	struct svtrace_setup *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return -ENOMEM;
	s->cfg = *cfg;
	err = load(s);
	if (err) {
		free(s);
		return err;
	}
	*out = s;
	return 0;
}

int svtrace_setup_attach(struct svtrace_setup *s)
{
	struct svtrace_probes *pr = &s->probes;
	struct bpf_object *obj = s->skel->obj;
	struct bpf_program *prog;
	struct bpf_link *link;

	bpf_object__for_each_program(prog, obj) {
		const char *name = bpf_program__name(prog);
		bool optional = !strncmp(name, "ovs_", 4) || !strncmp(name, "kp_", 3) || !strncmp(name, "fe_", 3) ||
				is_why(name);

		if (!bpf_program__autoload(prog))
			continue;
		libbpf_quiet = optional;
		link = bpf_program__attach(prog);
		libbpf_quiet = false;
		if (!link) {
			int err = -errno;

			if (!optional) {
				fprintf(stderr, "svtrace: cannot attach %s: %s\n", name, strerror(-err));
				return err;
			}
			/* kprobes/fentry refused (lockdown, no kprobe support): say so, go on without. */
			if (is_why(name)) {
				why_missing(pr, why_tp(prog));
			} else if (!strcmp(name, "fe_dev_direct_xmit")) {
				pr->direct = false;
				snprintf(pr->direct_why, sizeof(pr->direct_why), "attach failed: %s",
					 strerror(-err));
			} else if (!strcmp(name, "kp_tun_net_xmit")) {
				pr->tun = false;
				snprintf(pr->tun_why, sizeof(pr->tun_why), "attach failed: %s", strerror(-err));
			} else if (!strcmp(name, "kp_vhost_handle_rx")) {
				pr->vhost = false;
				snprintf(pr->vhost_why, sizeof(pr->vhost_why), "attach failed: %s",
					 strerror(-err));
			} else {
				pr->ovs = false;
				snprintf(pr->ovs_why, sizeof(pr->ovs_why), "attach failed: %s", strerror(-err));
			}
			continue;
		}
		if (s->nlinks < sizeof(s->links) / sizeof(s->links[0])) {
			const char *sec = bpf_program__section_name(prog);

			s->link_prog[s->nlinks] = name;
			s->links[s->nlinks++] = link;
			/* tp_btf/NAME or raw_tp/NAME (kprobes are not tracepoints; the why hooks are listed apart) */
			if (!is_why(name) && (!strncmp(sec, "tp_btf/", 7) || !strncmp(sec, "raw_tp/", 7)))
				pr->tracepoints[pr->ntracepoints++] = strchr(sec, '/') + 1;
		} else {
			bpf_link__destroy(link);
		}
	}
	return 0;
}

static void detach_all(struct svtrace_setup *s)
{
	while (s->nlinks)
		bpf_link__destroy(s->links[--s->nlinks]);
}

/* Detaches the programs whose name ends with @suffix ("netif_receive_skb": T1). */
static void detach_named(struct svtrace_setup *s, const char *suffix)
{
	size_t ls = strlen(suffix);

	for (unsigned i = 0; i < s->nlinks;) {
		const char *name = s->link_prog[i];
		size_t ln = name ? strlen(name) : 0;

		if (ln >= ls && !strcmp(name + ln - ls, suffix)) {
			bpf_link__destroy(s->links[i]);
			s->nlinks--;
			s->links[i] = s->links[s->nlinks];
			s->link_prog[i] = s->link_prog[s->nlinks];
			continue;
		}
		i++;
	}
}

/* Drains the ring and the hop logs for @ns. */
static void drain_for(struct svtrace_setup *s, struct svtrace_hlog *h, int64_t ns)
{
	int64_t end = sv_clock_now_ns(SV_CLOCK_MONOTONIC) + ns;

	do {
		ring_buffer__poll(s->rb, 5);
		svtrace_hlog_drain(h);
	} while (sv_clock_now_ns(SV_CLOCK_MONOTONIC) < end);
}

/*
 * T1's frames get STOP_GRACE_NS to reach T2a (the bridge forwards them within microseconds), the copies
 * STOP_DRAIN_NS to be taken. What is still open after that is resolved by the caller: frames without T2a
 * on a port are missing there; copies not taken are missing when older than --timeout-ms, else in flight
 * at the stop (counted apart).
 */
void svtrace_setup_stop(struct svtrace_setup *s, struct svtrace_hlog *h)
{
	s->skel->bss->stopping = 1;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	detach_named(s, "netif_receive_skb");
	drain_for(s, h, STOP_GRACE_NS);
	detach_named(s, "net_dev_start_xmit");
	detach_named(s, "dev_direct_xmit");	/* the other T2a (kprobe) */
	drain_for(s, h, STOP_DRAIN_NS);
	detach_all(s);
	ring_buffer__consume(s->rb);
	svtrace_hlog_drain(h);
}

void svtrace_setup_free(struct svtrace_setup *s)
{
	if (!s)
		return;
	ring_buffer__free(s->rb);
	detach_all(s);
	for (unsigned i = 0; i < MAP_NR; i++)
		if (s->map[i].p)
			munmap(s->map[i].p, s->map[i].bytes);
	svtrace_bpf__destroy(s->skel);
	free(s);
}

const struct svtrace_probes *svtrace_setup_probes(const struct svtrace_setup *s)
{
	return &s->probes;
}

void svtrace_setup_print_probes(const struct svtrace_setup *s, FILE *f)
{
	const struct svtrace_probes *p = &s->probes;

	fprintf(f, "svtrace: probes: base %s (net, skb, sched tracepoints): on; feeders' waits from %s\n",
		p->attach_mode, p->wait_from_rq ? "sched_info and the run-queue clock (sched_wakeup not needed)" :
		"sched_wakeup");
	fprintf(f, "svtrace: tracepoints:");
	for (unsigned i = 0; i < p->ntracepoints; i++)
		fprintf(f, " %s", p->tracepoints[i]);
	fputc('\n', f);
	fprintf(f, "svtrace: probe openvswitch: %s%s%s\n", p->ovs ? "on" : "off (", p->ovs ? "" : p->ovs_why,
		p->ovs ? "" : ")");
	fprintf(f, "svtrace: probe kprobe tun_net_xmit: %s%s%s\n", p->tun ? "on" : "off (", p->tun ? "" : p->tun_why,
		p->tun ? "" : ")");
	fprintf(f, "svtrace: probe fentry __dev_direct_xmit (T2a of AF_XDP copy-mode transmits): %s%s%s\n",
		p->direct ? "on" : "off (", p->direct ? "" : p->direct_why, p->direct ? "" : ")");
	fprintf(f, "svtrace: probe kprobe vhost handle_rx: %s%s%s\n", p->vhost ? "on" : "off (",
		p->vhost ? "" : p->vhost_why, p->vhost ? "" : ")");
	if (p->why)
		fprintf(f, "svtrace: why late: on (steal from %s; qdisc stamps %s)%s%s%s\n",
			!strcmp(p->why_steal, "rq") ? "the run queue's booking: placed up to a tick late" :
			"the hypervisor's steal clock", p->why_qdisc ? "on" : "off: no egress port has a queue",
			p->why_missing[0] ? "; without the hooks " : "", p->why_missing,
			p->why_missing[0] ? " (tracepoint absent or refused: their time stays unexplained)" : "");
	else
		fprintf(f, "svtrace: why late: off (%s)\n", p->why_off);
}

uint64_t svtrace_setup_why_steal(struct svtrace_setup *s)
{
	unsigned ncpu = bpf_map__max_entries(s->skel->maps.why_cpu);
	struct svtrace_why_cpu c;
	uint64_t sum = 0;

	if (!s->probes.why)
		return 0;
	for (uint32_t i = 0; i < ncpu; i++)
		if (!bpf_map__lookup_elem(s->skel->maps.why_cpu, &i, sizeof(i), &c, sizeof(c), 0))
			sum += c.booked;
	return sum;
}

int svtrace_setup_ring(struct svtrace_setup *s, int (*fn)(void *ctx, void *data, size_t size), void *ctx)
{
	s->rb = ring_buffer__new(bpf_map__fd(s->skel->maps.events), fn, ctx, NULL);
	return s->rb ? 0 : -errno;
}

int svtrace_setup_poll(struct svtrace_setup *s, int timeout_ms)
{
	int err = ring_buffer__poll(s->rb, timeout_ms);

	if (err < 0 && err != -EINTR)
		return err;
	ring_buffer__consume(s->rb);
	return 0;
}

/* A per-CPU array's value @idx summed over the CPUs; 0 when it cannot be read. */
static uint64_t percpu_sum(struct bpf_map *m, uint32_t idx)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t vals[1024], sum = 0;

	if (ncpu <= 0 || ncpu > 1024 ||
	    bpf_map__lookup_elem(m, &idx, sizeof(idx), vals, sizeof(uint64_t) * ncpu, 0))
		return 0;
	for (int i = 0; i < ncpu; i++)
		sum += vals[i];
	return sum;
}

void svtrace_setup_counters(struct svtrace_setup *s, uint64_t cnt[SVTRACE_CNT_NR])
{
	for (uint32_t i = 0; i < SVTRACE_CNT_NR; i++)
		cnt[i] = percpu_sum(s->skel->maps.counters, i);
}

/* Finds BPF stream @id in the "streams" map (once per stream: svtrace_streams keeps what it found). */
int svtrace_setup_stream_key(void *ctx, uint32_t id, struct svtrace_stream_key *key)
{
	struct svtrace_setup *s = ctx;
	struct svtrace_stream_key k, next, *prev = NULL;
	struct svtrace_stream_val v;
	int fd = bpf_map__fd(s->skel->maps.streams);

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(fd, &k, &v) || v.id != id)
			continue;
		*key = k;
		return 0;
	}
	return -ENOENT;
}

int svtrace_setup_stream_ports(void *ctx, uint32_t id, uint32_t *ports)
{
	struct svtrace_setup *s = ctx;

	return bpf_map__lookup_elem(s->skel->maps.stream_ports, &id, sizeof(id), ports, sizeof(*ports), 0);
}

/* Stream frame counts at T1 (kept in BPF); also names streams seen only at T1. */
void svtrace_setup_streams_sync(struct svtrace_setup *s, struct svtrace_streams *ss, struct svtrace_corr *corr)
{
	struct svtrace_stream_key k, next, *prev = NULL;
	struct svtrace_stream_val v;
	int fd = bpf_map__fd(s->skel->maps.streams);
	struct svtrace_stream *st;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(fd, &k, &v) || v.id >= SVTRACE_MAX_STREAMS)
			continue;
		st = svtrace_streams_key(ss, v.id, &k);
		if (st)
			svtrace_corr_stream_set_frames(corr, (unsigned)st->corr,
						       percpu_sum(s->skel->maps.stream_frames, v.id));
	}
}

/* Keys are gathered first, then resolved and deleted (BPF may race with an entry: at worst one frame
 * loses its T1). The hash is normally empty. */
#define SCAN_BATCH 4096

void svtrace_setup_scan_hash(struct svtrace_setup *s, struct svtrace_scan *sc, struct svtrace_events *ev,
			     int64_t now, bool all)
{
	static uint64_t keys[SCAN_BATCH];
	uint64_t *prev = NULL;
	struct svtrace_track tp;
	int fd = bpf_map__fd(s->skel->maps.tracked);
	unsigned n = 0;

	while (n < SCAN_BATCH && !bpf_map_get_next_key(fd, prev, &keys[n])) {
		prev = &keys[n];
		n++;
	}
	for (unsigned i = 0; i < n; i++) {
		if (bpf_map_lookup_elem(fd, &keys[i], &tp))
			continue;
		if (!svtrace_scan_due(sc, &tp, now, all))
			continue;
		if (bpf_map_delete_elem(fd, &keys[i]))
			continue;
		__sync_fetch_and_sub(&s->skel->bss->tracked_live, 1);
		svtrace_scan_resolve(sc, ev, &tp, now);
	}
}

volatile uint32_t *svtrace_setup_port_ifindex(struct svtrace_setup *s)
{
	return s->skel->data_ports->port_ifindex;
}

volatile uint32_t *svtrace_setup_port_netns(struct svtrace_setup *s)
{
	return s->skel->data_ports->port_netns;
}

// SPDX-License-Identifier: Apache-2.0
/*
 * svtrace's why-late decomposition on real frames, each cause injected (tests/net/svtrace_why.sh builds
 * the namespaces and calls it). Loads svtrace's BPF object through its test wrapper
 * (svtrace_why_test.bpf.c) with late detection's timelines on, reads the maps directly: no svtrace user
 * space.
 *
 *   svtrace_why NS_A NS_B CPU_RX CPU_TX
 *
 * A sender on CPU_TX (ns NS_A, a0) sends a frame every 250 us (EtherType 0x88BA, its send time inside)
 * to a receiver thread on CPU_RX (ns NS_B, b0, RPS to CPU_RX: the receive softirq runs there too). A
 * frame the receiver gets more than LATE_NS after its send is decomposed at once, on the receiver's CPU,
 * by svtrace's late path (why_late: T2a = the send, the sender's softirq, the backlog, the receiver).
 * While it runs:
 *   hog     three 50 ms bursts of a SCHED_FIFO 50 thread "whyhog" on CPU_RX: the late frames' time goes
 *           to the run queue (or ksoftirqd's deferral) with whyhog named as the holder;
 *   flood   2 s of unrelated frames (EtherType 0x88B5) sent from CPU_TX on f0, received on f1 with RPS
 *           to CPU_RX: the late frames' time goes to softirq (NET_RX), not to the hog, not unexplained;
 *   steal   the VM's own: per CPU, the steal the timelines booked (the union of their steal intervals)
 *           against /proc/stat's steal over the same run (skipped when a CPU had too little);
 *   faults  every 1000th frame the receiver touches 16 new pages before its decomposition: 16 faults of the
 *           carrier counted in that frame's hop (page_fault_user marks).
 * Every decomposition must add up to its hop. Prints PASS/FAIL/SKIP lines and a table per period.
 * WHY_RAW=1: the raw_tp flavour of the hooks attached; WHY_STEAL_RQ=1: steal from the run queue's booking.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "sv_clock.h"
#include "svtrace_sys.h"
#include "svtrace_why.h"
#include "svtrace_why_test.h"
#include "svtrace_why_test.skel.h"

#define MAGIC WHY_TEST_MAGIC
#define ETH_P_SV 0x88BA
#define ETH_P_FLOOD 0x88B5	/* IEEE local experimental: nobody listens */
#define PERIOD_NS 250000LL
#define LATE_NS 400000LL	/* a frame this late is decomposed */
#define HOG_NS 50000000LL
#define HOGS 3
#define FLOOD_NS 2000000000LL
#define FLOOD_GAP_NS 1500000LL
#define QUERY_GAP_NS 2000000LL
#define MAX_LATE 20000
#define FAULT_EVERY 1000	/* every FAULT_EVERY-th frame, the receiver takes FAULT_PAGES faults in its hop */
#define FAULT_PAGES 16
#define FAULT_FRAMES 8
#define MAX_CPUS 256
#define STEAL_MIN_NS 50000000LL	/* /proc/stat steal needed on a CPU to compare it (5 ticks of USER_HZ) */
#define STEAL_TOL_NS 20000000LL	/* /proc/stat's 10 ms resolution + a tick of booking lag + the timeline's own */

static const char *ns_a, *ns_b;
static int cpu_rx, cpu_tx;
static atomic_bool stop, flood_on;
static atomic_uint tid_tx;
static struct svtrace_why_test_bpf *skel;
static struct ring_buffer *rb;
static int failures;
#define MAX_LINKS 64
static struct bpf_link *links[MAX_LINKS];
static struct bpf_program *link_prog[MAX_LINKS];
static unsigned nlinks;
static bool hold_faults;
static int hold_switch = -1;	/* --switch on|off: svtrace's own sched_switch program alone, why_on 1 or 0 */

static struct svtrace_why_ev late[MAX_LATE];
static unsigned nlate;
static uint64_t frames_rx, frames_late, queries_empty;
static uint32_t faulted[FAULT_FRAMES];
static unsigned nfaulted;
#define MAX_RX 65536
static int64_t rx_send[MAX_RX], rx_hop[MAX_RX];

/* The frames' clock: CLOCK_MONOTONIC, which bpf_ktime_get_ns() reads too. */
static int64_t now_ns(void)
{
	return sv_clock_gettime_ns(CLOCK_MONOTONIC);
}

static void sleep_ns(int64_t ns)
{
	struct timespec ts = { .tv_sec = ns / 1000000000LL, .tv_nsec = ns % 1000000000LL };

	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
}

static int pin(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	return pthread_setaffinity_np(pthread_self(), sizeof(s), &s);
}

static int enter_ns(const char *name)
{
	char path[256];
	int fd, err;

	snprintf(path, sizeof(path), "/var/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = setns(fd, CLONE_NEWNET) ? -errno : 0;
	close(fd);
	return err;
}

/* An AF_PACKET socket on @ifname of this thread's namespace, for @proto (0: send only). */
static int packet_socket(const char *ifname, uint16_t proto, struct sockaddr_ll *sll)
{
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(proto ? proto : ETH_P_SV));

	if (fd < 0)
		return -errno;
	memset(sll, 0, sizeof(*sll));
	sll->sll_family = AF_PACKET;
	sll->sll_protocol = htons(proto ? proto : ETH_P_SV);
	sll->sll_ifindex = (int)if_nametoindex(ifname);
	sll->sll_halen = ETH_ALEN;
	memset(sll->sll_addr, 0xff, ETH_ALEN);
	if (!sll->sll_ifindex || (proto && bind(fd, (struct sockaddr *)sll, sizeof(*sll)))) {
		close(fd);
		return -ENODEV;
	}
	return fd;
}

struct frame {
	uint8_t dst[6], src[6];
	uint16_t type;
	uint32_t magic, seq;
	int64_t t_send;
	uint8_t pad[32];
} __attribute__((packed));

static void frame_init(struct frame *f, uint16_t type)
{
	memset(f, 0, sizeof(*f));
	memset(f->dst, 0xff, 6);
	f->src[0] = 0x02;
	f->src[5] = 0x01;
	f->type = htons(type);
	f->magic = MAGIC;
}

static void *sender(void *arg)
{
	struct sched_param sp = { .sched_priority = 1 };
	struct sockaddr_ll sll;
	struct frame f;
	int64_t next;
	int fd;

	(void)arg;
	atomic_store(&tid_tx, (unsigned)syscall(SYS_gettid));
	if (pin(cpu_tx) || enter_ns(ns_a) || (fd = packet_socket("a0", 0, &sll)) < 0) {
		fprintf(stderr, "sender: cannot set up on CPU %d in %s (a0)\n", cpu_tx, ns_a);
		atomic_store(&stop, true);
		return NULL;
	}
	/* SCHED_FIFO 1: the flood beside it on CPU_TX does not delay the sends (it sleeps between them) */
	pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	frame_init(&f, ETH_P_SV);
	next = now_ns();
	for (uint32_t seq = 1; !atomic_load(&stop); seq++) {
		struct timespec ts;

		next += PERIOD_NS;
		ts.tv_sec = next / 1000000000LL;
		ts.tv_nsec = next % 1000000000LL;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		f.seq = seq;
		f.t_send = now_ns();
		sendto(fd, &f, sizeof(f), 0, (struct sockaddr *)&sll, sizeof(sll));
	}
	close(fd);
	return NULL;
}

static void *flooder(void *arg)
{
	struct sockaddr_ll sll;
	struct mmsghdr m[64];
	struct iovec iov;
	struct frame f;
	int fd;

	(void)arg;
	if (pin(cpu_tx) || enter_ns(ns_a) || (fd = packet_socket("f0", 0, &sll)) < 0) {
		fprintf(stderr, "flood: cannot set up on CPU %d in %s (f0)\n", cpu_tx, ns_a);
		return NULL;
	}
	frame_init(&f, ETH_P_FLOOD);
	iov.iov_base = &f;
	iov.iov_len = sizeof(f);
	memset(m, 0, sizeof(m));
	for (unsigned i = 0; i < 64; i++) {
		m[i].msg_hdr.msg_iov = &iov;
		m[i].msg_hdr.msg_iovlen = 1;
		m[i].msg_hdr.msg_name = &sll;
		m[i].msg_hdr.msg_namelen = sizeof(sll);
	}
	/* bursts of 64 frames every 1.5 ms: ~1.3 ms of softirq on CPU_RX a burst (why_test_burn), below the
	 * 2 ms after which the kernel defers the rest to ksoftirqd */
	while (atomic_load(&flood_on)) {
		sendmmsg(fd, m, 64, 0);
		sleep_ns(FLOOD_GAP_NS);
	}
	close(fd);
	return NULL;
}

static int on_event(void *ctx, void *data, size_t size)
{
	const struct svtrace_why_ev *e = data;

	(void)ctx;
	if (size < sizeof(*e) || e->type != SVTRACE_EV_WHY)
		return 0;
	if (nlate < MAX_LATE)
		late[nlate++] = *e;
	return 0;
}

/* Thread @tid made a feeder (its tag in svtrace's direct-mapped feeder table, slot tid & (slots - 1)), as
 * svtrace's free makes a guest's consumer one: the timelines follow its waits and sleeps. */
static void follow(unsigned tid)
{
	unsigned key = tid & (bpf_map__max_entries(skel->maps.feeder_tags) - 1);

	bpf_map__update_elem(skel->maps.feeder_tags, &key, sizeof(key), &tid, sizeof(tid), 0);
}

/* The flood's cost in CPU_RX's receive softirq: why_test_burn on f1's tc ingress (this thread's namespace). */
static int burn_attach(void)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .attach_point = BPF_TC_INGRESS);
	LIBBPF_OPTS(bpf_tc_opts, opts, .prog_fd = bpf_program__fd(skel->progs.why_test_burn));
	int err;

	hook.ifindex = (int)if_nametoindex("f1");
	if (!hook.ifindex)
		return -ENODEV;
	err = bpf_tc_hook_create(&hook);
	if (err && err != -EEXIST)
		return err;
	return bpf_tc_attach(&hook, &opts);
}

static void *receiver(void *arg)
{
	struct timeval tv = { .tv_usec = 100000 };
	struct sockaddr_ll sll;
	unsigned tid = (unsigned)syscall(SYS_gettid);
	int prog = bpf_program__fd(skel->progs.why_test_late), fd;
	int64_t last_query = 0;
	struct frame f;

	(void)arg;
	if (pin(cpu_rx) || enter_ns(ns_b) || (fd = packet_socket("b0", ETH_P_SV, &sll)) < 0) {
		fprintf(stderr, "receiver: cannot set up on CPU %d in %s (b0)\n", cpu_rx, ns_b);
		atomic_store(&stop, true);
		return NULL;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (burn_attach()) {
		fprintf(stderr, "receiver: cannot attach the flood's tc program on f1\n");
		atomic_store(&stop, true);
		close(fd);
		return NULL;
	}
	/* SCHED_FIFO 10, as a subscriber runs in a deployment: the machine's other tasks do not delay it, the
	 * injected causes do (a SCHED_FIFO 50 hog, softirqs, steal) */
	{
		struct sched_param sp = { .sched_priority = 10 };

		pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	}
	/* followed by the timelines (its waits and sleeps): a feeder, as svtrace makes a guest's consumer one */
	follow(tid);
	prctl(PR_SET_NAME, "whyrecv");
	while (!atomic_load(&stop)) {
		ssize_t n = recv(fd, &f, sizeof(f), 0);
		int64_t t = now_ns();

		if (n < (ssize_t)sizeof(f) || f.magic != MAGIC)
			continue;
		if (frames_rx < MAX_RX) {
			rx_send[frames_rx] = f.t_send;
			rx_hop[frames_rx] = t - f.t_send;
		}
		frames_rx++;
		if (f.seq % FAULT_EVERY == 0 && nfaulted < FAULT_FRAMES) {
			/* FAULT_PAGES page faults of the carrier inside this frame's hop (which ends at the query) */
			char *m = mmap(NULL, FAULT_PAGES * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (m != MAP_FAILED) {
				/* one fault per page: no large folio (mTHP) filling several pages at once */
				madvise(m, FAULT_PAGES * 4096, MADV_NOHUGEPAGE);
				for (int i = 0; i < FAULT_PAGES; i++)
					m[i * 4096] = 1;
				munmap(m, FAULT_PAGES * 4096);
				faulted[nfaulted++] = f.seq;
			}
		} else if (t - f.t_send <= LATE_NS) {
			continue;
		} else {
			frames_late++;
			/* one decomposition every QUERY_GAP_NS at most: the receiver's own query (a system call and
			 * a walk) would otherwise make the next frames late (svtrace's late path runs in a free) */
			if (t - last_query < QUERY_GAP_NS)
				continue;
			last_query = t;
		}
		/* svtrace's late path, run now on this CPU as the free of a late copy runs it */
		skel->bss->why_test_in.t2a_ns = (uint64_t)f.t_send;
		skel->bss->why_test_in.seq = f.seq;
		skel->bss->why_test_in.tid2a = atomic_load(&tid_tx);
		skel->bss->why_test_in.cpu2a = (uint32_t)cpu_tx;
		{
			LIBBPF_OPTS(bpf_test_run_opts, o, .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = (uint32_t)cpu_rx);

			if (bpf_prog_test_run_opts(prog, &o) || o.retval != 1)
				queries_empty++;
		}
		ring_buffer__consume(rb);
	}
	close(fd);
	return NULL;
}

static void *hog(void *arg)
{
	int64_t end = now_ns() + HOG_NS;
	volatile uint64_t x = 0;

	(void)arg;
	prctl(PR_SET_NAME, "whyhog");
	while (now_ns() < end)
		x++;
	return NULL;
}

/* A SCHED_FIFO 50 thread on CPU_RX for HOG_NS; its window into @w. */
static int run_hog(int64_t *w)
{
	struct sched_param sp = { .sched_priority = 50 };
	pthread_attr_t a;
	pthread_t t;
	cpu_set_t s;
	int err;

	CPU_ZERO(&s);
	CPU_SET(cpu_rx, &s);
	pthread_attr_init(&a);
	pthread_attr_setinheritsched(&a, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&a, SCHED_FIFO);
	pthread_attr_setschedparam(&a, &sp);
	pthread_attr_setaffinity_np(&a, sizeof(s), &s);
	w[0] = now_ns();
	err = pthread_create(&t, &a, hog, NULL);
	pthread_attr_destroy(&a);
	if (err)
		return -err;
	pthread_join(t, NULL);
	w[1] = now_ns();
	return 0;
}

/* /proc/stat's steal per CPU, ns */
static int proc_steal(int64_t *st, int n)
{
	char line[512];
	long hz = sysconf(_SC_CLK_TCK);
	FILE *f = fopen("/proc/stat", "r");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v[8];
		int c;

		if (strncmp(line, "cpu", 3) || line[3] < '0' || line[3] > '9')
			continue;
		if (sscanf(line + 3, "%d %llu %llu %llu %llu %llu %llu %llu %llu", &c, &v[0], &v[1], &v[2], &v[3],
			   &v[4], &v[5], &v[6], &v[7]) == 9 && c >= 0 && c < n)
			st[c] = (int64_t)(v[7] * (1000000000ULL / (unsigned long long)hz));
	}
	fclose(f);
	return 0;
}

static int why_cpus(struct svtrace_why_cpu *c, int n)
{
	for (int i = 0; i < n; i++) {
		unsigned k = (unsigned)i;

		if (bpf_map__lookup_elem(skel->maps.why_cpu, &k, sizeof(k), &c[i], sizeof(c[i]), 0))
			return -errno;
	}
	return 0;
}

static const char *const cause_name[SVTRACE_WHY_NR] = {
	"steal", "irq_timer", "irq_ipi", "irq_device", "softirq_HI", "softirq_TIMER", "softirq_NET_TX",
	"softirq_NET_RX", "softirq_BLOCK", "softirq_IRQ_POLL", "softirq_TASKLET", "softirq_SCHED",
	"softirq_HRTIMER", "softirq_RCU", "ksoftirqd", "qdisc", "backlog", "runqueue", "blocked", "running",
	"carried", "unexplained",
};

enum { P_BASE, P_HOG, P_FLOOD, P_NR };
static const char *const period_name[P_NR] = { "baseline", "hog", "flood" };

struct sums {
	unsigned frames;
	uint64_t hop, ns[SVTRACE_WHY_NR], hog_named, hog_named_ns, softirq, unexplained, best_hog;
	const struct svtrace_why_hop *best;
};

static void check(bool ok, const char *what)
{
	printf("%s: svtrace_why: %s\n", ok ? "PASS" : "FAIL", what);
	if (!ok)
		failures++;
}

/*
 * Opens and loads the test wrapper with the timelines on. @hold: only the why hooks and the timelines' part
 * of sched_switch are loaded and attached (the cost run); else svtrace's programs of both flavours are
 * loaded too (the verifier passes them with why_on), and the tp_btf timelines, svtrace's own sched_switch
 * and the test's programs attached. Returns 0, 1 (failure, said) or 77 (skip, said).
 */
static int setup(bool hold)
{
	struct bpf_program *p;
	int ncpu = libbpf_num_possible_cpus(), err;
	/* WHY_RAW=1: the raw_tp flavour attached (kernels whose tp_btf attach fails) */
	const char *flavour = getenv("WHY_RAW") ? "why_raw_" : "why_btf_";
	const char *sched = getenv("WHY_RAW") ? "raw_sched_switch" : "btf_sched_switch";

	skel = svtrace_why_test_bpf__open();
	if (!skel) {
		printf("FAIL: svtrace_why: cannot open the BPF object: %s\n", strerror(errno));
		return 1;
	}
	bpf_object__for_each_program(p, skel->obj) {
		const char *n = bpf_program__name(p);
		bool on;

		if (hold && hold_switch >= 0)
			on = !strcmp(n, "btf_sched_switch");
		else if (hold)
			on = !strncmp(n, "why_btf_", 8) && (hold_faults || strncmp(n, "why_btf_page", 12));
		else
			/* no kprobe, fentry or Open vSwitch program (optional in svtrace, absent here) */
			on = strncmp(n, "kp_", 3) && strncmp(n, "fe_", 3) && strncmp(n, "ovs_", 4) &&
			     strcmp(n, "why_test_switch");
		bpf_program__set_autoload(p, on);
	}
	bpf_program__set_autoload(skel->progs.why_test_switch, hold && hold_switch < 0);
	bpf_program__set_autoload(skel->progs.why_test_burn, !hold);
	skel->rodata->why_on = hold_switch != 0;
	skel->rodata->nr_cpus = (uint32_t)ncpu;
	skel->rodata->wait_from_rq = 1;
	skel->rodata->why_tl_mask = SVTRACE_WHY_TL_DEFAULT - 1;
	skel->rodata->why_skb_mask = SVTRACE_WHY_SKB_ENTRIES - 1;
	skel->rodata->why_steal_from_rq = getenv("WHY_STEAL_RQ") ? 0 : svtrace_percpu_distance("runqueues", "steal_time");
	{
		uint32_t ino;

		/* the host's namespace: frames in the others are a guest's (why_test_rx) */
		if (svtrace_netns_ino(NULL, &ino) == 0)
			skel->data_ports->port_netns[0] = ino;
	}
	bpf_map__set_max_entries(skel->maps.why_tl, (uint32_t)ncpu * SVTRACE_WHY_TL_DEFAULT);
	bpf_map__set_max_entries(skel->maps.why_skb, SVTRACE_WHY_SKB_ENTRIES);
	bpf_map__set_max_entries(skel->maps.hlog_pos, (uint32_t)ncpu);
	err = svtrace_why_test_bpf__load(skel);
	if (err) {
		printf("FAIL: svtrace_why: svtrace's BPF object with the why timelines does not load: %s\n",
		       strerror(-err));
		return 1;
	}
	if (!hold)
		printf("PASS: svtrace_why: svtrace's programs (tp_btf and raw_tp) load with why_on (steal clock: %s)\n",
		       skel->rodata->why_steal_from_rq ? "the hypervisor's steal_time" : "the run queue's booking");
	bpf_object__for_each_program(p, skel->obj) {
		const char *n = bpf_program__name(p);

		if (!bpf_program__autoload(p) || (strncmp(n, flavour, 8) && strcmp(n, sched) && strncmp(n, "why_test_", 9)) ||
		    !strcmp(n, "why_test_late") || !strcmp(n, "why_test_burn"))
			continue;
		if (nlinks >= MAX_LINKS || !(links[nlinks] = bpf_program__attach(p))) {
			printf("FAIL: svtrace_why: cannot attach %s: %s\n", n, strerror(errno));
			return 1;
		}
		link_prog[nlinks++] = p;
	}
	return 0;
}

/*
 * --hold [--faults] [--switch on|off] [PID...]: the why hooks and the timelines' part of sched_switch
 * attached (page faults too with --faults; with --switch, svtrace's own sched_switch program alone, the
 * timelines on or off: the marginal cost of their part in it), the threads PID followed (a lab's
 * receivers, as svtrace follows feeders), until
 * SIGINT/SIGTERM; "svtrace_why: ready" on stderr once attached. Then, on stdout, a line per program:
 * "NAME run_cnt N run_time_ns T" (kernel.bpf_stats must be on for the run time), and the timelines'
 * entries per CPU. The cost run of tests/bench/why_cost.sh.
 */
static int hold_main(int argc, char **argv)
{
	int ncpu = libbpf_num_possible_cpus(), err, sig;
	sigset_t set;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--faults"))
			hold_faults = true;
		if (!strcmp(argv[i], "--switch") && i + 1 < argc)
			hold_switch = !strcmp(argv[i + 1], "on");
	}
	err = setup(true);
	if (err)
		return err;
	for (int i = 0; i < argc; i++) {
		unsigned tid = (unsigned)strtoul(argv[i], NULL, 10);

		if (tid && strcmp(argv[i - (i > 0)], "--switch"))
			follow(tid);
	}
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	fprintf(stderr, "svtrace_why: ready\n");
	sigwait(&set, &sig);
	for (unsigned i = 0; i < nlinks; i++) {
		struct bpf_prog_info info;
		uint32_t len = sizeof(info);

		memset(&info, 0, sizeof(info));
		if (bpf_obj_get_info_by_fd(bpf_program__fd(link_prog[i]), &info, &len))
			continue;
		printf("%s run_cnt %llu run_time_ns %llu\n", bpf_program__name(link_prog[i]),
		       (unsigned long long)info.run_cnt, (unsigned long long)info.run_time_ns);
	}
	for (int c = 0; c < ncpu; c++) {
		struct svtrace_why_cpu wc;
		unsigned k = (unsigned)c;

		if (!bpf_map__lookup_elem(skel->maps.why_cpu, &k, sizeof(k), &wc, sizeof(wc), 0))
			printf("cpu%d entries %llu booked_steal_ns %llu\n", c, (unsigned long long)wc.head,
			       (unsigned long long)wc.booked);
	}
	for (unsigned i = 0; i < nlinks; i++)
		bpf_link__destroy(links[i]);
	svtrace_why_test_bpf__destroy(skel);
	return 0;
}

int main(int argc, char **argv)
{
	int ncpu = libbpf_num_possible_cpus(), err;
	int64_t hogw[HOGS][2], flw[2], st0[MAX_CPUS] = { 0 }, st1[MAX_CPUS] = { 0 }, t_begin, t_end;
	struct svtrace_why_cpu *c0, *c1;
	struct sums sum[P_NR];
	pthread_t th_rx, th_tx, th_fl;
	unsigned bad_sum = 0;
	char msg[256];

	if (argc >= 2 && !strcmp(argv[1], "--hold"))
		return hold_main(argc - 2, argv + 2);
	if (argc != 5) {
		fprintf(stderr, "usage: %s NS_A NS_B CPU_RX CPU_TX\n       %s --hold [--faults] [--switch on|off] [PID...]\n", argv[0], argv[0]);
		return 2;
	}
	ns_a = argv[1];
	ns_b = argv[2];
	cpu_rx = atoi(argv[3]);
	cpu_tx = atoi(argv[4]);
	if (ncpu < 2 || ncpu > MAX_CPUS || cpu_rx >= ncpu || cpu_tx >= ncpu || cpu_rx == cpu_tx) {
		printf("SKIP: svtrace_why: needs two CPUs (%d possible)\n", ncpu);
		return 77;
	}
	if (!svtrace_have_vmlinux_btf() || !svtrace_have_sched_info()) {
		printf("SKIP: svtrace_why: no kernel BTF with the scheduler's stamps\n");
		return 77;
	}
	err = setup(false);
	if (err)
		return err;
	rb = ring_buffer__new(bpf_map__fd(skel->maps.events), on_event, NULL, NULL);
	c0 = calloc((size_t)ncpu, sizeof(*c0));
	c1 = calloc((size_t)ncpu, sizeof(*c1));
	if (!rb || !c0 || !c1) {
		printf("FAIL: svtrace_why: out of memory\n");
		return 1;
	}
	sleep_ns(200000000);	/* every CPU's timeline has its first transitions */
	t_begin = now_ns();
	if (proc_steal(st0, ncpu) || why_cpus(c0, ncpu)) {
		printf("FAIL: svtrace_why: cannot read /proc/stat or why_cpu\n");
		return 1;
	}
	pthread_create(&th_rx, NULL, receiver, NULL);
	pthread_create(&th_tx, NULL, sender, NULL);
	sleep_ns(1000000000);	/* baseline */
	for (int i = 0; i < HOGS && !atomic_load(&stop); i++) {
		if (run_hog(hogw[i])) {
			printf("SKIP: svtrace_why: cannot start a SCHED_FIFO thread\n");
			return 77;
		}
		sleep_ns(300000000);
	}
	atomic_store(&flood_on, true);
	flw[0] = now_ns();
	pthread_create(&th_fl, NULL, flooder, NULL);
	sleep_ns(FLOOD_NS);
	atomic_store(&flood_on, false);
	pthread_join(th_fl, NULL);
	flw[1] = now_ns();
	sleep_ns(500000000);
	atomic_store(&stop, true);
	pthread_join(th_tx, NULL);
	pthread_join(th_rx, NULL);
	if (proc_steal(st1, ncpu) || why_cpus(c1, ncpu)) {
		printf("FAIL: svtrace_why: cannot read /proc/stat or why_cpu\n");
		return 1;
	}
	t_end = now_ns();
	printf("frames received %" PRIu64 ", late (> %lld us) %" PRIu64 ", decomposed %u, queries without "
	       "stamps %" PRIu64 "\n", frames_rx, LATE_NS / 1000, frames_late, nlate, queries_empty);
	for (int i = 0; i < ncpu; i++)
		printf("cpu%d: %.0f timeline entries/s\n", i,
		       (double)(c1[i].head - c0[i].head) * 1e9 / (double)(t_end - t_begin));
	if (frames_rx < 1000) {
		printf("FAIL: svtrace_why: only %" PRIu64 " frames received\n", frames_rx);
		return 1;
	}

	{
		uint64_t n[P_NR] = { 0 }, nl[P_NR] = { 0 };
		int64_t t0 = rx_send[0];

		for (uint64_t i = 0; i < frames_rx && i < MAX_RX; i++) {
			int per = P_BASE;

			for (int k = 0; k < HOGS; k++)
				if (rx_send[i] + rx_hop[i] > hogw[k][0] && rx_send[i] < hogw[k][1] + 5000000)
					per = P_HOG;
			if (rx_send[i] + rx_hop[i] > flw[0] && rx_send[i] < flw[1])
				per = P_FLOOD;
			n[per]++;
			nl[per] += rx_hop[i] > LATE_NS;
		}
		printf("received by period: baseline %" PRIu64 " (%" PRIu64 " late), hog %" PRIu64 " (%" PRIu64
		       " late), flood %" PRIu64 " (%" PRIu64 " late); sent over %.1f s\n", n[0], nl[0], n[1], nl[1], n[2],
		       nl[2], (double)(rx_send[frames_rx < MAX_RX ? frames_rx - 1 : MAX_RX - 1] - t0) / 1e9);
	}
	/* every decomposition adds up to its hop; periods by the window the frame was in */
	memset(sum, 0, sizeof(sum));
	for (unsigned i = 0; i < nlate; i++) {
		const struct svtrace_why_hop *h = &late[i].hop[1];
		uint64_t tot = 0, hop = h->t_to - h->t_from;
		int per = P_BASE;

		for (int k = 0; k < SVTRACE_WHY_SLOTS; k++)
			tot += h->ns[k];
		if (tot != hop || late[i].flags) {
			if (bad_sum++ < 3)
				printf("  frame %u: causes add up to %" PRIu64 " ns of a %" PRIu64 " ns hop (flags %#x)\n",
				       late[i].smpcnt, tot, hop, late[i].flags);
		}
		for (int k = 0; k < HOGS; k++)
			if ((int64_t)h->t_to > hogw[k][0] && (int64_t)h->t_from < hogw[k][1] + 5000000)
				per = P_HOG;
		if ((int64_t)h->t_to > flw[0] && (int64_t)h->t_from < flw[1])
			per = P_FLOOD;
		sum[per].frames++;
		sum[per].hop += hop;
		for (int k = 0; k < SVTRACE_WHY_NR; k++)
			sum[per].ns[k] += h->ns[k];
		if (!strncmp((const char *)h->holder_comm, "whyhog", 6) && h->holder_policy == 1 && h->holder_prio == 50) {
			sum[per].hog_named++;
			sum[per].hog_named_ns += h->holder_ns;
			if (h->holder_ns > sum[per].best_hog) {
				sum[per].best_hog = h->holder_ns;
				sum[per].best = h;
			}
		}
	}
	for (int per = 0; per < P_NR; per++) {
		struct sums *s = &sum[per];

		for (int k = SVTRACE_WHY_SOFTIRQ; k < SVTRACE_WHY_SOFTIRQ + SVTRACE_WHY_SOFTIRQ_NR; k++)
			s->softirq += s->ns[k];
		printf("%s: %u late frames, %.1f ms of late hops:", period_name[per], s->frames, (double)s->hop / 1e6);
		for (int k = 0; k < SVTRACE_WHY_NR; k++)
			if (s->ns[k] * 200 >= s->hop && s->hop)
				printf(" %s %.1f%%", cause_name[k], 100.0 * (double)s->ns[k] / (double)s->hop);
		printf("; holder whyhog in %" PRIu64 " (%.1f ms)\n", s->hog_named, (double)s->hog_named_ns / 1e6);
	}
	snprintf(msg, sizeof(msg), "all %u decompositions add up to their hop (%u do not)", nlate, bad_sum);
	check(nlate > 0 && !bad_sum, msg);

	/* hog: the run queue (or ksoftirqd's deferral), the hog named, little unexplained */
	{
		struct sums *s = &sum[P_HOG];
		uint64_t rq = s->ns[SVTRACE_WHY_RUNQUEUE] + s->ns[SVTRACE_WHY_KSOFTIRQD];

		if (s->best)
			printf("  worst hog frame: hop %.2f ms, run queue %.2f ms behind %s (SCHED_FIFO %u, %.2f ms)\n",
			       (double)(s->best->t_to - s->best->t_from) / 1e6,
			       (double)s->best->ns[SVTRACE_WHY_RUNQUEUE] / 1e6, s->best->holder_comm,
			       s->best->holder_prio, (double)s->best->holder_ns / 1e6);
		snprintf(msg, sizeof(msg), "hog: %u late frames, run queue + ksoftirqd %.0f%% of their time, whyhog "
			 "(SCHED_FIFO 50) named in %" PRIu64 ", unexplained %.1f%%", s->frames,
			 s->hop ? 100.0 * (double)rq / (double)s->hop : 0, s->hog_named,
			 s->hop ? 100.0 * (double)s->ns[SVTRACE_WHY_UNEXPLAINED] / (double)s->hop : 0);
		check(s->frames && s->hog_named && rq * 10 >= s->hop * 6 && s->ns[SVTRACE_WHY_UNEXPLAINED] * 10 <= s->hop,
		      msg);
	}
	/* flood: softirq, not the hog, not unexplained */
	{
		struct sums *s = &sum[P_FLOOD];
		uint64_t most = 0;

		/* softirq and its deferral to ksoftirqd: the softirq's work, or the wait for it */
		s->softirq += s->ns[SVTRACE_WHY_KSOFTIRQD];
		for (int k = 0; k < SVTRACE_WHY_NR; k++)
			if (k != SVTRACE_WHY_KSOFTIRQD && (k < SVTRACE_WHY_SOFTIRQ || k >= SVTRACE_WHY_SOFTIRQ + SVTRACE_WHY_SOFTIRQ_NR))
				most = s->ns[k] > most ? s->ns[k] : most;
		snprintf(msg, sizeof(msg), "flood: %u late frames, softirq (with ksoftirqd's deferral) %.0f%% of their time (NET_RX %.0f%%), "
			 "unexplained %.1f%%, whyhog named in %" PRIu64, s->frames,
			 s->hop ? 100.0 * (double)s->softirq / (double)s->hop : 0,
			 s->hop ? 100.0 * (double)s->ns[SVTRACE_WHY_SOFTIRQ + 3] / (double)s->hop : 0,
			 s->hop ? 100.0 * (double)s->ns[SVTRACE_WHY_UNEXPLAINED] / (double)s->hop : 0, s->hog_named);
		check(s->frames && s->softirq >= most && s->softirq * 2 >= s->hop && !s->hog_named &&
			      s->ns[SVTRACE_WHY_UNEXPLAINED] * 10 <= s->hop,
		      msg);
	}
	/* page faults: marks of the carrier's faults inside the hop (the tracepoint has no exit) */
	{
		unsigned got = 0, low = 0;

		for (unsigned k = 0; k < nfaulted; k++)
			for (unsigned i = 0; i < nlate; i++)
				if (late[i].smpcnt == (uint16_t)faulted[k]) {
					got++;
					low += late[i].hop[1].faults < FAULT_PAGES;
				}
		snprintf(msg, sizeof(msg), "faults: %u frames with %d page faults of the receiver in their hop, %u decomposed, "
			 "%u counted fewer", nfaulted, FAULT_PAGES, got, low);
		check(nfaulted && got == nfaulted && !low, msg);
	}
	/* steal: what the timelines booked against /proc/stat, per CPU, over the same time */
	for (int i = 0; i < ncpu; i++) {
		int64_t proc = st1[i] - st0[i], booked = (int64_t)(c1[i].booked - c0[i].booked);

		snprintf(msg, sizeof(msg), "steal cpu%d: timelines booked %.1f ms, /proc/stat %.0f ms over %.1f s", i,
			 (double)booked / 1e6, (double)proc / 1e6, (double)(t_end - t_begin) / 1e9);
		if (proc < STEAL_MIN_NS) {
			printf("SKIP: svtrace_why: %s (too little steal to compare)\n", msg);
			continue;
		}
		check(booked <= proc + STEAL_TOL_NS + proc / 50 && booked + STEAL_TOL_NS + proc / 50 >= proc, msg);
	}
	{
		uint64_t st = 0, hop = 0;

		for (int per = 0; per < P_NR; per++) {
			st += sum[per].ns[SVTRACE_WHY_STEAL];
			hop += sum[per].hop;
		}
		printf("late frames' steal: %.2f ms of %.1f ms\n", (double)st / 1e6, (double)hop / 1e6);
	}
	ring_buffer__free(rb);
	svtrace_why_test_bpf__destroy(skel);
	return failures ? 1 : 0;
}

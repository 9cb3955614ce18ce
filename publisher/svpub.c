// SPDX-License-Identifier: Apache-2.0
/*
 * svpub: a paced, timestamped IEC 61850-9-2 Sampled Values publisher. See svpub_engine.h for the
 * schedule and svpub_config.c for every configuration key and option (svpub --help-config, --help).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "sv_cli.h"
#include "sv_config.h"
#include "sv_log.h"
#include "sv_metrics_http.h"
#include "sv_ready.h"
#include "sv_record.h"
#include "sv_scl.h"
#include "svpub_config.h"
#include "svpub_engine.h"
#include "svpub_metrics.h"

static volatile sig_atomic_t stop;

/* What the rows of svpub_config_table cannot say. */
static const char about[] =
	"Publishes IEC 61850-9-2 Sampled Values streams paced to the clock, and records when every frame left.\n"
	"Without a configuration: one UCA 9-2LE 50 Hz stream (4000 frames/s).";
static const char epilog[] =
	"Needs CAP_NET_RAW (sockets); CAP_NET_ADMIN for hardware TX timestamps (SIOCSHWTSTAMP). priority and\n"
	"mlockall need RLIMIT_RTPRIO and RLIMIT_MEMLOCK high enough (or CAP_SYS_NICE, CAP_IPC_LOCK).\n"
	"Exit status: 0 done, 1 a run-time failure or an output not written in full (records: the summary\n"
	"says how many and why; publishing went on), 2 usage error.\n"
	"\n"
	"EXAMPLES\n"
	"  svpub -w /tmp/one.pcap -d 1                      1 s of 9-2LE 50 Hz into a file (4000 frames)\n"
	"  svpub -i eth1 -d 10 --json                       10 s on eth1, JSON summary\n"
	"  svpub -c configs/pub-seapath-8x4000.yaml -i eth1 -s priority=80 -s cpu=1 -s mlockall=true\n"
	"  svpub -i eth1 -s streams[0].signal.events[0].type=fault -s streams[0].signal.events[0].at=2 \\\n"
	"        -s streams[0].signal.events[0].current_factor=20 -s streams[0].signal.events[0].phases=a\n"
	"  svpub -c configs/pub-61869-9-f4800.yaml --print-config\n"
	"  svpub --scl vmu.scd --svcb MU01/MSVCB01 -i eth1      the SCL file's stream, as the file says\n";

static int setup_process(const struct svpub_config *c)
{
	/* SCHED_OTHER threads get 50 us of timer slack by default: every deadline would be that late. */
	if (prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0))
		sv_warn("PR_SET_TIMERSLACK: %s", strerror(errno));
	if (c->mlockall && mlockall(MCL_CURRENT | MCL_FUTURE)) {
		int e = errno;

		sv_err("mlockall: %s: svpub's memory is over RLIMIT_MEMLOCK: raise it (LimitMEMLOCK=infinity in "
		       "svpub.service, ulimit -l) or grant CAP_IPC_LOCK, for mlockall: true", strerror(e));
		return -e;
	}
	if (c->cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(c->cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			sv_err("pinning to CPU %d: %s", c->cpu, strerror(errno));
			return -errno;
		}
	}
	if (c->priority) {
		struct sched_param sp = { .sched_priority = (int)c->priority };
		int cur = sched_getscheduler(0);

		/* Keep SCHED_RESET_ON_FORK where systemd set it (CPUSchedulingResetOnFork=yes): clearing it
		 * needs CAP_SYS_NICE, while the policy and priority need only RLIMIT_RTPRIO (LimitRTPRIO=). */
		if (sched_setscheduler(0, SCHED_FIFO | (cur > 0 ? cur & SCHED_RESET_ON_FORK : 0), &sp)) {
			int e = errno;
			struct rlimit rl = { 0, 0 };

			if (e == EPERM && !getrlimit(RLIMIT_RTPRIO, &rl))
				sv_err("SCHED_FIFO priority %u: %s: above RLIMIT_RTPRIO (%llu): raise it (LimitRTPRIO= "
				       "in svpub.service, ulimit -r) or grant CAP_SYS_NICE", c->priority, strerror(e),
				       (unsigned long long)rl.rlim_cur);
			else
				sv_err("SCHED_FIFO priority %u: %s", c->priority, strerror(e));
			return -e;
		}
		/* As cyclictest does: hold a PM QoS request of 0 us so idle CPUs do not sleep in deep C-states
		 * between deadlines; the request lasts while the file stays open (closed at exit). */
		int fd = open("/dev/cpu_dma_latency", O_WRONLY | O_CLOEXEC);
		int32_t zero = 0;

		if (fd < 0 || write(fd, &zero, sizeof(zero)) != (ssize_t)sizeof(zero))
			sv_info("/dev/cpu_dma_latency: %s: deep idle states stay allowed", strerror(errno));
	}
	return 0;
}

/* --metrics: the registry and server (svpub_metrics.c: the families). */
static struct sv_metrics_run metrics;

/* The families, then the server. 0 or -errno (said). */
static int metrics_start(const struct svpub_config *c, struct svpub *pub)
{
	char host[SV_METRICS_HOST_SIZE];
	int err = sv_metrics_run_init(&metrics, "svpub", sv_metrics_host(c->host, host, sizeof(host)));

	if (!err)
		err = svpub_metrics_register(metrics.m, &metrics.health, pub);
	if (err) {
		sv_err("--metrics: cannot set up: %s", strerror(-err));
		return err;
	}
	err = sv_metrics_run_serve(&metrics, c->metrics);
	if (!err)
		sv_info("metrics on http://%s/metrics", metrics.address);
	return err;
}

/* The totals are final: one last scrape (--metrics-linger), then the server stops (before the engine goes). */
static void metrics_end(const struct svpub_config *c)
{
	stop = 0; /* a second ^C ends the linger */
	sv_metrics_run_end(&metrics, c->metrics_linger, &stop);
	sv_metrics_run_free(&metrics);
}

/* What the options of svpub_config_table that are not only keys leave for main(). */
struct pub_cli {
	struct svpub_config *cfg;
	const char *interface, *write; /* -i, -w as given */
	bool afxdp, json;
	enum sv_log_level level;
};

/* The rows with an id (svpub_config.h): called by sv_cli after the key the row names was set. */
static int pub_option(void *ctx, const struct sv_cfg_key *row, const char *arg, struct sv_cfg_error *err)
{
	struct pub_cli *pc = ctx;
	struct svpub_config *cfg = pc->cfg;
	char list[SVPUB_PATH_LEN];

	switch (row->opt.id) {
	case SVPUB_OPT_INTERFACE:
		pc->interface = arg;
		if (cfg->backend == SVPUB_BACKEND_PCAP)
			cfg->backend = SVPUB_BACKEND_AF_PACKET;
		break;
	case SVPUB_OPT_WRITE:
		pc->write = arg;
		cfg->backend = SVPUB_BACKEND_PCAP;
		break;
	case SVPUB_OPT_AF_XDP:
		pc->afxdp = true;
		break;
	case SVPUB_OPT_SVCB: /* adds to the list (the file's, earlier --svcb) */
		snprintf(list, sizeof(list), "%.100s%s%.100s", cfg->scl.svcb, cfg->scl.svcb[0] ? "," : "", arg);
		return sv_config_set_value(svpub_config_table, cfg, "scl.svcb", list, err);
	case SVPUB_OPT_JSON:
		pc->json = true;
		break;
	case SVPUB_OPT_VERBOSE:
		pc->level = SV_LOG_DEBUG;
		break;
	}
	return 0;
}

/* scl.file: the streams come from the SCL file; the configuration file's keys apply over them (its
 * streams[N] over stream N), then the command line (sv_cli's last pass). 0, or -EINVAL said. */
static int pub_loaded(void *ctx, void *obj, const char *config_path, FILE *f)
{
	static struct svpub_config scl_cfg;
	struct svpub_config *cfg = obj;
	struct sv_cfg_error cerr;
	struct sv_scl_error serr;
	struct sv_scl *scl;
	char msg[1024];
	int err;

	(void)ctx;
	if (!cfg->scl.file[0])
		return 0;
	err = sv_scl_load(&scl, cfg->scl.file, &serr);
	if (err) {
		fprintf(f, "svpub: --scl: %s\n", serr.text);
		return -EINVAL;
	}
	scl_cfg = *cfg;
	err = svpub_config_from_scl(&scl_cfg, scl, msg, sizeof(msg));
	sv_scl_free(scl);
	if (err) {
		fprintf(f, "svpub: --scl: %s\n", msg);
		return -EINVAL;
	}
	if (config_path && sv_config_load_file_over(svpub_config_table, &scl_cfg, config_path, &cerr)) {
		fprintf(f, "svpub: %s\n", cerr.text);
		return -EINVAL;
	}
	*cfg = scl_cfg;
	return 0;
}

int main(int argc, char **argv)
{
	static struct svpub_config cfg; /* ~0.5 MiB with 256 streams: not on the stack */
	struct pub_cli pc = { .cfg = &cfg, .level = SV_LOG_INFO };
	const struct sv_cli_prog prog = {
		.name = "svpub", .usage = "svpub [OPTIONS]", .about = about, .epilog = epilog,
		.tab = svpub_config_table, .option = pub_option, .loaded = pub_loaded, .ctx = &pc,
	};
	struct sv_cfg_error cerr;
	struct sv_cli cli;
	struct svpub *pub;
	char status[SVPUB_PATH_LEN + 64];
	int err, rc = SV_EXIT_OK;

	sv_log_set(sv_log_stderr, "svpub", pc.level);
	if (svpub_config_init(&cfg)) {
		fprintf(stderr, "svpub: internal error: bad configuration defaults\n");
		return SV_EXIT_RUNTIME;
	}
	err = sv_cli_parse(&prog, argc, argv, &cfg, &cli, stdout, stderr);
	if (err)
		return sv_cli_exit(err);
	sv_log_set(sv_log_stderr, "svpub", pc.level);
	/* A run writes a file or publishes on an interface: never both, whatever the order of the options. */
	if (pc.write && (pc.interface || pc.afxdp)) {
		fprintf(stderr, "svpub: --write %s contradicts %s%s%s: a run writes a file or publishes on an interface\n",
			pc.write, pc.interface ? "--interface " : "--af-xdp", pc.interface ? pc.interface : "",
			pc.interface && pc.afxdp ? " and --af-xdp" : "");
		return SV_EXIT_USAGE;
	}
	if (pc.afxdp)
		cfg.backend = SVPUB_BACKEND_AF_XDP;
	if (svpub_config_resolve_file(&cfg, cli.config, &cerr)) {
		fprintf(stderr, "svpub: %s\n", cerr.text);
		return SV_EXIT_USAGE;
	}
	if (cli.print_config)
		return sv_config_print(svpub_config_table, &cfg, stdout) ? SV_EXIT_RUNTIME : SV_EXIT_OK;
	if (svpub_config_check_output(&cfg, &cerr)) {
		fprintf(stderr, "svpub: %s\n", cerr.text);
		return SV_EXIT_USAGE;
	}
	if (sv_ready_init(cli.ready_file)) {
		fprintf(stderr, "svpub: --ready-file: %s\n", strerror(ENAMETOOLONG));
		return SV_EXIT_USAGE;
	}

	sv_ready_signals(&stop); /* clock_nanosleep returns EINTR and the loop sees stop */
	signal(SIGPIPE, SIG_IGN);

	if (setup_process(&cfg))
		return SV_EXIT_RUNTIME;
	err = svpub_create(&pub, &cfg);
	if (err)
		return SV_EXIT_RUNTIME;
	if (cfg.metrics[0] && metrics_start(&cfg, pub)) {
		metrics_end(&cfg);
		svpub_destroy(pub);
		return SV_EXIT_RUNTIME;
	}
	/* ready: the socket (or file) is open and every stream's first deadline armed */
	snprintf(status, sizeof(status), "publishing %u stream%s on %s", cfg.nstreams, cfg.nstreams == 1 ? "" : "s",
		 cfg.backend == SVPUB_BACKEND_PCAP ? cfg.output : cfg.interface);
	err = sv_ready_set(status);
	if (err)
		sv_warn("--ready-file %s / NOTIFY_SOCKET: %s", cli.ready_file ? cli.ready_file : "-", strerror(-err));
	err = svpub_run(pub, &stop);
	if (err)
		rc = SV_EXIT_RUNTIME;
	sv_ready_stopping(NULL);
	svpub_print_summary(pub, stderr);
	if (pc.json && svpub_print_json(pub, stdout))
		rc = SV_EXIT_RUNTIME;
	if (pc.json)
		fflush(stdout); /* the summary out before a linger */
	metrics_end(&cfg);
	if (svpub_destroy(pub))
		rc = SV_EXIT_RUNTIME; /* said: the capture file, or records not all written (the summary's record line) */
	return rc;
}

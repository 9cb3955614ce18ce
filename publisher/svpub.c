// SPDX-License-Identifier: Apache-2.0
/*
 * svpub: a paced, timestamped IEC 61850-9-2 Sampled Values publisher. See svpub_engine.h for the
 * schedule and svpub_config.c for every configuration key (svpub --help-config).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "sv_config.h"
#include "sv_log.h"
#include "sv_record.h"
#include "sv_scl.h"
#include "svpub_config.h"
#include "svpub_engine.h"

#ifndef SVKIT_VERSION
#define SVKIT_VERSION "0"
#endif

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: svpub [OPTIONS]\n"
		"Publishes IEC 61850-9-2 Sampled Values streams paced to the clock, and records when every frame left.\n"
		"Without a configuration: one UCA 9-2LE 50 Hz stream (4000 frames/s).\n"
		"\n"
		"  -c, --config FILE        YAML configuration (keys: --help-config)\n"
		"  -i, --interface IF       publish on IF (AF_PACKET unless the config says af_xdp)\n"
		"  -w, --write FILE.pcap    write a capture instead (timestamps = scheduled times; not paced;\n"
		"                           needs --duration or streams[].count; not with -i or -x)\n"
		"  -x, --af-xdp             use the AF_XDP back-end on the interface\n"
		"  -d, --duration S         seconds to publish (0 = until SIGINT/SIGTERM)\n"
		"  -u, --unpaced            send as fast as possible (throughput tests)\n"
		"  -r, --record FILE        per-frame records (svkit record format, svreport reads it), in parts of\n"
		"                           record_size_mib (" SV_REC_SIZE_MIB_DEFAULT ") MiB, the newest record_keep (" SV_REC_KEEP_DEFAULT ") kept besides FILE;\n"
		"                           a partial block is written every record_flush_ms (" SV_REC_FLUSH_MS_DEFAULT "), fdatasync\n"
		"                           every record_sync_ms (" SV_REC_SYNC_MS_DEFAULT ": never); under record_min_free_mib (" SV_REC_MIN_FREE_MIB_DEFAULT ")\n"
		"                           MiB free the oldest parts go, then blocks. A full disk never stops\n"
		"                           publishing: blocks that cannot be written are counted (summary, --json,\n"
		"                           the file's UNWRITTEN and END records) and later ones tried. -s KEY=V\n"
		"  -s, --set KEY=VALUE      override any key, e.g. streams[0].svid=MU01, streams[*].vlan_id=-1\n"
		"      --scl FILE           publish the streams an SCL file (SCD, CID, ...) defines for a merging unit:\n"
		"                           svID, APPID, MAC, VLAN, confRev, datSet, SmvOpts, smpRate/smpMod, nofASDU,\n"
		"                           the dataset and its sVC scale factors; the file's keys and -s override them\n"
		"      --ied NAME           that merging unit (default: the file's one IED with SV control blocks)\n"
		"      --svcb LD/NAME       only this control block (repeat, or LD/A,LD/B)\n"
		"  -j, --json               final summary as one JSON object on stdout\n"
		"  -q, --quiet              no status line per second\n"
		"  -v, --verbose            more messages\n"
		"      --print-config       print the effective configuration (YAML) and exit\n"
		"      --help-config        list every configuration key and exit\n"
		"  -h, --help               this text\n"
		"  -V, --version            version\n"
		"\n"
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
		"  svpub --scl vmu.scd --svcb MU01/MSVCB01 -i eth1      the SCL file's stream, as the file says\n");
}

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

enum { OPT_PRINT_CONFIG = 256, OPT_HELP_CONFIG, OPT_SCL, OPT_IED, OPT_SVCB };

/* --scl / --ied / --svcb as configuration keys (scl.file, scl.ied, scl.svcb; --svcb adds to the list). */
static int scl_option(struct svpub_config *cfg, int opt, const char *arg, struct sv_cfg_error *cerr)
{
	char assign[SVPUB_PATH_LEN + 32];

	if (opt == OPT_SVCB && cfg->scl.svcb[0])
		snprintf(assign, sizeof(assign), "scl.svcb=%.100s,%.100s", cfg->scl.svcb, arg);
	else
		snprintf(assign, sizeof(assign), "scl.%s=%s", opt == OPT_SCL ? "file" : opt == OPT_IED ? "ied" : "svcb",
			 arg);
	return sv_config_set(svpub_config_table, cfg, assign, cerr);
}

/* scl.file: the streams come from the SCL file; the configuration file's keys apply over them (its
 * streams[N] over stream N), then the command line (the caller's second pass). 0, or exit status 2 said. */
static int load_scl(struct svpub_config *cfg, const char *config_path)
{
	static struct svpub_config scl_cfg;
	struct sv_cfg_error cerr;
	struct sv_scl_error serr;
	struct sv_scl *scl;
	char msg[1024];
	int err;

	err = sv_scl_load(&scl, cfg->scl.file, &serr);
	if (err) {
		fprintf(stderr, "svpub: --scl: %s\n", serr.text);
		return 2;
	}
	scl_cfg = *cfg;
	err = svpub_config_from_scl(&scl_cfg, scl, msg, sizeof(msg));
	sv_scl_free(scl);
	if (err) {
		fprintf(stderr, "svpub: --scl: %s\n", msg);
		return 2;
	}
	if (config_path && sv_config_load_file_over(svpub_config_table, &scl_cfg, config_path, &cerr)) {
		fprintf(stderr, "svpub: %s\n", cerr.text);
		return 2;
	}
	*cfg = scl_cfg;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },   { "interface", required_argument, NULL, 'i' },
		{ "write", required_argument, NULL, 'w' },    { "af-xdp", no_argument, NULL, 'x' },
		{ "duration", required_argument, NULL, 'd' }, { "unpaced", no_argument, NULL, 'u' },
		{ "record", required_argument, NULL, 'r' },   { "set", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },	      { "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },	      { "print-config", no_argument, NULL, OPT_PRINT_CONFIG },
		{ "help-config", no_argument, NULL, OPT_HELP_CONFIG },
		{ "scl", required_argument, NULL, OPT_SCL },	      { "ied", required_argument, NULL, OPT_IED },
		{ "svcb", required_argument, NULL, OPT_SVCB },
		{ "help", no_argument, NULL, 'h' },	      { "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	static struct svpub_config cfg; /* ~0.5 MiB with 256 streams: not on the stack */
	const char *config_path = NULL, *opt_interface = NULL, *opt_write = NULL;
	bool json = false, print_config = false, afxdp = false;
	enum sv_log_level level = SV_LOG_INFO;
	struct sv_cfg_error cerr;
	struct sigaction sa;
	struct svpub *pub;
	int opt, err, rc = 0;

	/* Pass 1: the config file comes first, whatever the order on the command line. */
	while ((opt = getopt_long(argc, argv, "c:i:w:xd:ur:s:jqvhV", opts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			config_path = optarg;
			break;
		case 'v':
			level = SV_LOG_DEBUG;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("svpub %s\n", SVKIT_VERSION);
			return 0;
		case OPT_HELP_CONFIG:
			printf("svpub configuration keys (YAML; the same paths work with --set KEY=VALUE):\n");
			sv_config_help(svpub_config_table, stdout);
			return 0;
		case '?':
			usage(stderr);
			return 2;
		default:
			break;
		}
	}
	sv_log_set(sv_log_stderr, "svpub", level);
	if (svpub_config_init(&cfg)) {
		fprintf(stderr, "svpub: internal error: bad configuration defaults\n");
		return 1;
	}
	if (config_path) {
		err = sv_config_load_file(svpub_config_table, &cfg, config_path, &cerr);
		if (err) {
			fprintf(stderr, "svpub: %s\n", cerr.text);
			return 2;
		}
	}
	/* Pass 2a: --scl and its options: the streams come from the SCL file, the configuration file over them. */
	optind = 1;
	while ((opt = getopt_long(argc, argv, "c:i:w:xd:ur:s:jqvhV", opts, NULL)) != -1) {
		if ((opt == OPT_SCL || opt == OPT_IED || opt == OPT_SVCB) && scl_option(&cfg, opt, optarg, &cerr)) {
			fprintf(stderr, "svpub: --%s: %s\n", opt == OPT_SCL ? "scl" : opt == OPT_IED ? "ied" : "svcb",
				cerr.msg);
			return 2;
		}
	}
	if (cfg.scl.file[0] && load_scl(&cfg, config_path))
		return 2;
	/* Pass 2: options override the file, in command-line order. */
	optind = 1;
	while ((opt = getopt_long(argc, argv, "c:i:w:xd:ur:s:jqvhV", opts, NULL)) != -1) {
		char assign[SVPUB_PATH_LEN + 32];
		const char *what = NULL; /* the option, for its error message */

		assign[0] = '\0';
		switch (opt) {
		case 'i':
			snprintf(assign, sizeof(assign), "interface=%s", optarg);
			what = "--interface (-i)";
			opt_interface = optarg;
			if (cfg.backend == SVPUB_BACKEND_PCAP)
				cfg.backend = SVPUB_BACKEND_AF_PACKET;
			break;
		case 'w':
			snprintf(assign, sizeof(assign), "output=%s", optarg);
			what = "--write (-w)";
			opt_write = optarg;
			cfg.backend = SVPUB_BACKEND_PCAP;
			break;
		case 'x':
			afxdp = true;
			break;
		case 'd':
			snprintf(assign, sizeof(assign), "duration=%s", optarg);
			what = "--duration (-d)";
			break;
		case 'u':
			cfg.unpaced = true;
			break;
		case 'r':
			snprintf(assign, sizeof(assign), "record=%s", optarg);
			what = "--record (-r)";
			break;
		case 's':
			snprintf(assign, sizeof(assign), "%s", optarg);
			break;
		case 'j':
			json = true;
			break;
		case 'q':
			cfg.status = false;
			break;
		case OPT_PRINT_CONFIG:
			print_config = true;
			break;
		default:
			break;
		}
		if (assign[0] && sv_config_set(svpub_config_table, &cfg, assign, &cerr)) {
			if (what)
				fprintf(stderr, "svpub: %s: %s\n", what, cerr.msg);
			else
				fprintf(stderr, "svpub: %s\n", cerr.text);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "svpub: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	/* A run writes a file or publishes on an interface: never both, whatever the order of the options. */
	if (opt_write && (opt_interface || afxdp)) {
		fprintf(stderr, "svpub: --write %s contradicts %s%s%s: a run writes a file or publishes on an interface\n",
			opt_write, opt_interface ? "--interface " : "--af-xdp", opt_interface ? opt_interface : "",
			opt_interface && afxdp ? " and --af-xdp" : "");
		return 2;
	}
	if (afxdp)
		cfg.backend = SVPUB_BACKEND_AF_XDP;
	if (svpub_config_resolve_file(&cfg, config_path, &cerr)) {
		fprintf(stderr, "svpub: %s\n", cerr.text);
		return 2;
	}
	if (print_config) {
		sv_config_print(svpub_config_table, &cfg, stdout);
		return 0;
	}
	if (svpub_config_check_output(&cfg, &cerr)) {
		fprintf(stderr, "svpub: %s\n", cerr.text);
		return 2;
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal; /* no SA_RESTART: clock_nanosleep returns EINTR and the loop sees stop */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGXFSZ, SIG_IGN); /* a file size limit is a full disk: EFBIG, counted (sv_record.h) */

	if (setup_process(&cfg))
		return 1;
	err = svpub_create(&pub, &cfg);
	if (err)
		return 1;
	err = svpub_run(pub, &stop);
	if (err)
		rc = 1;
	svpub_print_summary(pub, stderr);
	if (json && svpub_print_json(pub, stdout))
		rc = 1;
	if (svpub_destroy(pub))
		rc = 1; /* said: the capture file, or records not all written (the summary's record line) */
	return rc;
}

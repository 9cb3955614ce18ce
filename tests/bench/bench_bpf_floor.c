// SPDX-License-Identifier: Apache-2.0
/*
 * What a BPF program run and a helper call cost on this machine before any logic: the floor under
 * svtrace's cost per frame (trace.bench prints it beside trace_ns_per_frame). A thread calls getppid()
 * in a loop and measures its CPU time per call with raw_tp programs on raw_syscalls:sys_enter: an empty
 * program attached once and RUNS times (RUNS program runs a call), and programs that call
 * bpf_ktime_get_ns(), bpf_get_current_pid_tgid() or bpf_probe_read_kernel() (8 octets of the context)
 * CALLS times. The probe read is how a script reads every kernel field (bpftrace, and svtrace's raw_tp
 * fallback); svtrace's tp_btf programs load fields directly: where it is dear, the bpftrace baseline is
 * dear. Differences between attached cases only (the first program on sys_enter also puts every syscall
 * on its slow path: that is in all of them): a run = (RUNS links - 1 link) / (RUNS - 1), a call = (CALLS
 * calls - empty) / CALLS. The cases take turns in
 * every round (the machine's drift hits them alike); the figures come from the medians. Programs are
 * loaded through bpf(2) directly (a few instructions: no object file, no libbpf).
 *
 *   bench_bpf_floor [ITERATIONS] [ROUNDS]          root (CAP_BPF, CAP_PERFMON)
 *   bench_bpf_floor --hold TP[,TP...]
 *
 * Prints: figure: bpf_run_empty_ns, bpf_ktime_call_ns, bpf_pid_call_ns, bpf_probe_read_call_ns (ns, one
 * decimal).
 *
 * --hold: the empty program attached to each raw tracepoint named (svtrace's hooks, in trace.bench), until
 * SIGINT or SIGTERM; "bench_bpf_floor: ready" on stderr once all are attached. A tracer that does nothing on
 * those hooks: its cost per frame, measured like the tools', is what every tracer on them pays before any
 * logic (trace_hooks_ns_per_frame).
 */
#include <errno.h>
#include <signal.h>
#include <linux/bpf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sv_clock.h"
#include "sv_stats.h"

#define CALLS 20		/* helper calls per program run */
#define RUNS 5			/* links of the empty program in the C_EMPTYN case */
#define MAX_ROUNDS 101

enum { C_EMPTY, C_EMPTYN, C_KTIME, C_PID, C_PROBE, C_NR };
static const char *const case_name[C_NR] = { "empty program", "empty program x 5", "20 x bpf_ktime_get_ns",
					     "20 x bpf_get_current_pid_tgid", "20 x bpf_probe_read_kernel" };

static long sys_bpf(int cmd, union bpf_attr *a)
{
	return syscall(__NR_bpf, cmd, a, sizeof(*a));
}

/* dst = src register */
static struct bpf_insn mov_reg(int dst, int src)
{
	return (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = (uint8_t)dst, .src_reg = (uint8_t)src };
}

/* dst = dst + imm, or dst = imm (@op BPF_ADD / BPF_MOV) */
static struct bpf_insn alu_imm(int op, int dst, int32_t imm)
{
	return (struct bpf_insn){ .code = (uint8_t)(BPF_ALU64 | op | BPF_K), .dst_reg = (uint8_t)dst, .imm = imm };
}

/* A raw_tp program: @helper called CALLS times (0: none), then return 0. bpf_probe_read_kernel reads the
 * context's first 8 octets (a kernel address) to the stack. */
static int prog_load(int helper, char *log, size_t log_len)
{
	struct bpf_insn insns[5 * CALLS + 3];
	union bpf_attr a;
	int n = 0;

	memset(insns, 0, sizeof(insns));
	if (helper == BPF_FUNC_probe_read_kernel)
		insns[n++] = mov_reg(BPF_REG_6, BPF_REG_1);	/* r6 = ctx */
	for (int i = 0; helper && i < CALLS; i++) {
		if (helper == BPF_FUNC_probe_read_kernel) {
			insns[n++] = mov_reg(BPF_REG_1, BPF_REG_10);	/* r1 = fp - 8, r2 = 8, r3 = ctx */
			insns[n++] = alu_imm(BPF_ADD, BPF_REG_1, -8);
			insns[n++] = alu_imm(BPF_MOV, BPF_REG_2, 8);
			insns[n++] = mov_reg(BPF_REG_3, BPF_REG_6);
		}
		insns[n].code = BPF_JMP | BPF_CALL;
		insns[n++].imm = helper;
	}
	insns[n].code = BPF_ALU64 | BPF_MOV | BPF_K;	/* r0 = 0 */
	insns[n++].dst_reg = BPF_REG_0;
	insns[n++].code = BPF_JMP | BPF_EXIT;
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_RAW_TRACEPOINT;
	a.insns = (uintptr_t)insns;
	a.insn_cnt = (uint32_t)n;
	a.license = (uintptr_t)"GPL";
	a.log_buf = (uintptr_t)log;
	a.log_size = (uint32_t)log_len;
	a.log_level = 1;
	log[0] = 0;
	return (int)sys_bpf(BPF_PROG_LOAD, &a);
}

static int attach(int prog, const char *tp)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.raw_tracepoint.name = (uintptr_t)tp;
	a.raw_tracepoint.prog_fd = (uint32_t)prog;
	return (int)sys_bpf(BPF_RAW_TRACEPOINT_OPEN, &a);
}

/* This thread's CPU ns for @n getppid() calls. */
static int64_t loop(int n)
{
	int64_t t0 = sv_clock_gettime_ns(CLOCK_THREAD_CPUTIME_ID);

	for (int i = 0; i < n; i++)
		syscall(SYS_getppid);
	return sv_clock_gettime_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
}

/* --hold: the empty program on each tracepoint of the comma-separated @list until SIGINT/SIGTERM */
static int hold(const char *list, char *log, size_t log_len)
{
	char names[512], *save = NULL;
	sigset_t set;
	int prog, sig, n = 0;

	if (strlen(list) >= sizeof(names)) {
		fprintf(stderr, "bench_bpf_floor: --hold: list of tracepoints too long (%zu octets)\n", strlen(list));
		return 2;
	}
	strcpy(names, list);
	/* blocked before anything is attached: a signal while attaching ends the wait below at once */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	prog = prog_load(0, log, log_len);
	if (prog < 0) {
		fprintf(stderr, "bench_bpf_floor: cannot load the empty raw_tp program: %s\n", strerror(errno));
		return 1;
	}
	for (char *tp = strtok_r(names, ",", &save); tp; tp = strtok_r(NULL, ",", &save), n++) {
		if (attach(prog, tp) < 0) {	/* the link lives until exit */
			fprintf(stderr, "bench_bpf_floor: cannot attach to raw tracepoint %s: %s\n", tp, strerror(errno));
			return 1;
		}
	}
	if (!n) {
		fprintf(stderr, "bench_bpf_floor: --hold: no tracepoint named\n");
		return 2;
	}
	fprintf(stderr, "bench_bpf_floor: ready (%d tracepoints)\n", n);
	sigwait(&set, &sig);
	return 0;
}

int main(int argc, char **argv)
{
	static char log[1 << 16];
	static int64_t v[C_NR][MAX_ROUNDS];
	const int helper[C_NR] = { 0, 0, BPF_FUNC_ktime_get_ns, BPF_FUNC_get_current_pid_tgid,
				   BPF_FUNC_probe_read_kernel };
	int n = argc > 1 ? atoi(argv[1]) : 100000, rounds = argc > 2 ? atoi(argv[2]) : 31;
	int prog[C_NR];
	double med[C_NR];

	if (argc > 1 && !strcmp(argv[1], "--hold")) {
		if (argc != 3) {
			fprintf(stderr, "usage: bench_bpf_floor --hold TP[,TP...]\n");
			return 2;
		}
		return hold(argv[2], log, sizeof(log));
	}

	if (n < 1000 || rounds < 3 || rounds > MAX_ROUNDS) {
		fprintf(stderr, "usage: bench_bpf_floor [ITERATIONS >= 1000] [ROUNDS 3..%d]\n", MAX_ROUNDS);
		return 2;
	}
	for (int c = 0; c < C_NR; c++) {
		prog[c] = prog_load(helper[c], log, sizeof(log));
		if (prog[c] < 0) {
			fprintf(stderr, "bench_bpf_floor: cannot load the %s raw_tp program: %s%s%s\n", case_name[c],
				strerror(errno), log[0] ? "\n" : "", log);
			return 1;
		}
	}
	loop(n / 4);	/* warm up */
	for (int r = 0; r < rounds; r++) {
		for (int k = 0; k < C_NR; k++) {
			/* each case first in turn */
			int c = (k + r) % C_NR, nl = c == C_EMPTYN ? RUNS : 1, link[RUNS];

			for (int l = 0; l < nl; l++) {
				link[l] = attach(prog[c], "sys_enter");
				if (link[l] < 0) {
					fprintf(stderr, "bench_bpf_floor: cannot attach to raw tracepoint sys_enter: %s\n",
						strerror(errno));
					return 1;
				}
			}
			v[c][r] = loop(n);
			for (int l = 0; l < nl; l++)
				close(link[l]);
		}
	}
	for (int c = 0; c < C_NR; c++) {
		sv_stats_sort_i64(v[c], (size_t)rounds);
		med[c] = (double)v[c][rounds / 2] / n;	/* ns per getppid() */
		printf("  %-30s %8.1f ns per getppid() (median of %d rounds of %d)\n", case_name[c], med[c], rounds, n);
	}
	printf("figure: bpf_run_empty_ns %.1f ns\n", (med[C_EMPTYN] - med[C_EMPTY]) / (RUNS - 1));
	printf("figure: bpf_ktime_call_ns %.1f ns\n", (med[C_KTIME] - med[C_EMPTY]) / CALLS);
	printf("figure: bpf_pid_call_ns %.1f ns\n", (med[C_PID] - med[C_EMPTY]) / CALLS);
	printf("figure: bpf_probe_read_call_ns %.1f ns\n", (med[C_PROBE] - med[C_EMPTY]) / CALLS);
	return 0;
}

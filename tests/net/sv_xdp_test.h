/* SPDX-License-Identifier: Apache-2.0 */
/*
 * For the tests that run bpf/sv_xdp.bpf.c through BPF_PROG_TEST_RUN (xdp_prog_test.c, wire_verdicts.c): load it,
 * read its per-reason counters. Header-only: each test is one program.
 */
#ifndef SV_XDP_TEST_H
#define SV_XDP_TEST_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "sv_xdp.h"
#include "sv_xdp.skel.h"

/* libbpf's messages only with SVKIT_VERBOSE (a test's own FAIL lines say what broke). */
static int sv_xdp_test_quiet(enum libbpf_print_level l, const char *f, va_list ap)
{
	if (l == LIBBPF_WARN && getenv("SVKIT_VERBOSE"))
		return vfprintf(stderr, f, ap);
	return 0;
}

/* The generic-mode program with @allowlist set, loaded; NULL (errno) on failure. */
static struct sv_xdp_bpf *sv_xdp_test_load(int allowlist)
{
	struct sv_xdp_bpf *s = sv_xdp_bpf__open();

	if (!s)
		return NULL;
	s->rodata->cfg_allowlist = (__u32)allowlist;
	bpf_program__set_autoload(s->progs.sv_xdp_redirect_hints, false);
	if (sv_xdp_bpf__load(s)) {
		sv_xdp_bpf__destroy(s);
		return NULL;
	}
	return s;
}

/* The counters summed over the CPUs. */
static void sv_xdp_test_counters(struct sv_xdp_bpf *s, uint64_t out[SV_XDP_CNT__MAX])
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *v = calloc(ncpu > 0 ? (size_t)ncpu : 1, sizeof(*v));

	for (__u32 k = 0; k < SV_XDP_CNT__MAX; k++) {
		out[k] = 0;
		if (v && ncpu > 0 && !bpf_map_lookup_elem(bpf_map__fd(s->maps.sv_xdp_counters), &k, v))
			for (int c = 0; c < ncpu; c++)
				out[k] += v[c];
	}
	free(v);
}

#endif /* SV_XDP_TEST_H */

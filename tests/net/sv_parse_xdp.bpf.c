// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Test wrapper (tests/net/wire_verdicts.c): bpf/sv_parse.h's whole walk, verified and run in the kernel through
 * BPF_PROG_TEST_RUN, which svtrace's tracepoint programs have no way to: the frame's octets from its first
 * EtherType on are copied into a map value (as svtrace copies them) and the walk's result is left in the
 * "result" array for the test to read. Always XDP_PASS.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "sv_parse.h"

struct window {
	__u8 w[SV_PARSE_WINDOW];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct window);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sv_parse);
} result SEC(".maps");

SEC("xdp")
int sv_parse_run(struct xdp_md *ctx)
{
	__u32 zero = 0;
	__u64 n = ctx->data_end - ctx->data;
	struct window *s = bpf_map_lookup_elem(&scratch, &zero);
	struct sv_parse *r = bpf_map_lookup_elem(&result, &zero);

	if (!s || !r)
		return XDP_ABORTED;
	n = n > SV_ETH_ADDRS_LEN ? n - SV_ETH_ADDRS_LEN : 0;
	if (n > SV_PARSE_WINDOW)
		n = SV_PARSE_WINDOW;
	/* Keep the verifier's view of the size bounded whatever clang folds. */
	asm volatile("%0 &= 0x1ff" : "+r"(n));
	if (n > SV_PARSE_WINDOW)
		return XDP_ABORTED;
	if (n && bpf_xdp_load_bytes(ctx, SV_ETH_ADDRS_LEN, s->w, n))
		return XDP_ABORTED;
	sv_parse_frame(s->w, (__u32)n, r);
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";

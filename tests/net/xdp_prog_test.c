// SPDX-License-Identifier: Apache-2.0
/*
 * bpf/sv_xdp.bpf.c through BPF_PROG_TEST_RUN: verdicts, per-reason counters and the metadata it writes,
 * for untagged, 802.1Q, 802.1ad+802.1Q, two 802.1Q, non-SV, truncated frames, with and without an APPID
 * allow-list, with and without a socket in the XSKMAP. Needs root (CAP_BPF + CAP_NET_ADMIN + CAP_NET_RAW):
 * exits 77 without. The XSKMAP entry is a real AF_XDP socket bound to "lo" queue 0 (copy mode; no program is
 * attached to lo, so no traffic is affected).
 */
#include <errno.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include <xdp/xsk.h>

#include "check.h"
#include "sv_wire.h"
#include "sv_xdp_test.h"

_Static_assert(sizeof(struct sv_xdp_meta) == 24, "struct sv_xdp_meta drifted from bpf/sv_xdp.h");

/* Frame builder: dst, src, [tags], ethertype, payload. */
static size_t build(uint8_t *b, const uint16_t *tags, unsigned ntags, uint16_t etype, size_t payload,
		    uint16_t appid)
{
	static const uint8_t dst[6] = { 0x01, 0x0c, 0xcd, 0x04, 0x00, 0x01 };
	static const uint8_t src[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
	size_t o = 12;

	memcpy(b, dst, 6);
	memcpy(b + 6, src, 6);
	for (unsigned i = 0; i < ntags; i++) {
		b[o++] = (uint8_t)(tags[i] >> 8);
		b[o++] = (uint8_t)tags[i];
		b[o++] = 0x80; /* PCP 4 */
		b[o++] = (uint8_t)(i + 1);
	}
	b[o++] = (uint8_t)(etype >> 8);
	b[o++] = (uint8_t)etype;
	for (size_t i = 0; i < payload; i++)
		b[o + i] = (uint8_t)i;
	if (payload >= 2) {
		b[o] = (uint8_t)(appid >> 8);
		b[o + 1] = (uint8_t)appid;
	}
	return o + payload;
}

struct tcase {
	const char *name;
	uint16_t tags[2];
	unsigned ntags;
	uint16_t etype;
	size_t payload;
	uint16_t appid;
	int verdict;
	int counter; /* which counter must go up by exactly one */
	int meta;    /* 1: metadata expected in front of the packet */
};

static void run_case(struct sv_xdp_bpf *s, const struct tcase *t)
{
	uint8_t in[256], out[512];
	uint64_t before[SV_XDP_CNT__MAX], after[SV_XDP_CNT__MAX];
	size_t len = build(in, t->tags, t->ntags, t->etype, t->payload, t->appid);
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in, .data_size_in = (__u32)len, .data_out = out,
		    .data_size_out = sizeof(out), .repeat = 1);
	int err;

	sv_xdp_test_counters(s, before);
	err = bpf_prog_test_run_opts(bpf_program__fd(s->progs.sv_xdp_redirect), &o);
	CHECK(!err, "%s: test run: %s", t->name, strerror(-err));
	if (err)
		return;
	sv_xdp_test_counters(s, after);
	CHECK((int)o.retval == t->verdict, "%s: verdict %u, want %d", t->name, o.retval, t->verdict);
	for (int k = 0; k < SV_XDP_CNT__MAX; k++) {
		uint64_t want = before[k] + (k == t->counter ? 1 : 0);

		CHECK(after[k] == want, "%s: counter %d is %llu, want %llu", t->name, k,
		      (unsigned long long)after[k], (unsigned long long)want);
	}
	if (t->meta) {
		struct sv_xdp_meta m;

		/* data_out = metadata + packet */
		CHECK(o.data_size_out == len + sizeof(m), "%s: data_out %u octets, want %zu (metadata + frame)",
		      t->name, o.data_size_out, len + sizeof(m));
		if (o.data_size_out == len + sizeof(m)) {
			memcpy(&m, out, sizeof(m));
			CHECK((m.magic & SV_XDP_META_MAGIC_MASK) == SV_XDP_META_MAGIC, "%s: meta magic %#x", t->name,
			      m.magic);
			CHECK(m.magic & (SV_XDP_META_CLOCK_TAI | SV_XDP_META_CLOCK_BOOT), "%s: no clock flag",
			      t->name);
			CHECK(m.rx_ns > 0, "%s: rx_ns 0", t->name);
			CHECK(!memcmp(out + sizeof(m), in, len), "%s: frame bytes changed", t->name);
		}
	} else {
		CHECK(o.data_size_out == len && !memcmp(out, in, len), "%s: frame changed or metadata added",
		      t->name);
	}
	printf("%s %s\n", failures ? "..." : "ok", t->name);
}

int main(void)
{
	static const struct tcase with_sock[] = {
		{ "untagged SV", { 0 }, 0, SV_ETH_P_SV, 60, 0x4000, XDP_REDIRECT, SV_XDP_CNT_REDIRECTED, 1 },
		{ "802.1Q SV", { SV_ETH_P_8021Q }, 1, SV_ETH_P_SV, 60, 0x4000, XDP_REDIRECT, SV_XDP_CNT_REDIRECTED, 1 },
		{ "802.1ad+802.1Q SV", { SV_ETH_P_8021AD, SV_ETH_P_8021Q }, 2, SV_ETH_P_SV, 60, 0x4000, XDP_REDIRECT,
		  SV_XDP_CNT_REDIRECTED, 1 },
		{ "IPv4", { 0 }, 0, 0x0800, 46, 0, XDP_PASS, SV_XDP_CNT_PASS_NOT_SV, 0 },
		{ "802.1Q GOOSE", { SV_ETH_P_8021Q }, 1, 0x88B8, 60, 0x0001, XDP_PASS, SV_XDP_CNT_PASS_NOT_SV, 0 },
		{ "802.1Q+802.1Q SV", { SV_ETH_P_8021Q, SV_ETH_P_8021Q }, 2, SV_ETH_P_SV, 60, 0x4000, XDP_REDIRECT,
		  SV_XDP_CNT_REDIRECTED, 1 },
		{ "three tags (not SV at depth 2)", { SV_ETH_P_8021AD, SV_ETH_P_8021Q }, 2, SV_ETH_P_8021Q, 60, 0, XDP_PASS,
		  SV_XDP_CNT_PASS_NOT_SV, 0 },
		/* an S-tag inside a C-tag is no QinQ (bpf/sv_wire.h): the codec would call it not SV */
		{ "802.1Q+802.1ad (not SV)", { SV_ETH_P_8021Q, SV_ETH_P_8021AD }, 2, SV_ETH_P_SV, 60, 0x4000, XDP_PASS,
		  SV_XDP_CNT_PASS_NOT_SV, 0 },
		/* 14 octets is the least BPF_PROG_TEST_RUN takes; ends inside the 802.1Q tag. */
		{ "truncated in tag", { 0 }, 0, SV_ETH_P_8021Q, 0, 0, XDP_PASS, SV_XDP_CNT_TRUNCATED, 0 },
		{ "truncated after one tag", { SV_ETH_P_8021Q }, 1, SV_ETH_P_8021Q, 1, 0, XDP_PASS, SV_XDP_CNT_TRUNCATED, 0 },
		/* SV EtherType, half an SV header: to user space (decoder names it), counted truncated. */
		{ "truncated SV header", { 0 }, 0, SV_ETH_P_SV, 4, 0x4000, XDP_REDIRECT, SV_XDP_CNT_TRUNCATED, 1 },
		{ "SV header only", { 0 }, 0, SV_ETH_P_SV, 8, 0x4000, XDP_REDIRECT, SV_XDP_CNT_REDIRECTED, 1 },
	};
	static const struct tcase allow[] = {
		{ "allowed APPID 0x4000", { 0 }, 0, SV_ETH_P_SV, 60, 0x4000, XDP_REDIRECT, SV_XDP_CNT_REDIRECTED, 1 },
		{ "allowed APPID 0x4000 tagged", { SV_ETH_P_8021Q }, 1, SV_ETH_P_SV, 60, 0x4000, XDP_REDIRECT,
		  SV_XDP_CNT_REDIRECTED, 1 },
		{ "APPID 0x4001 not in list", { 0 }, 0, SV_ETH_P_SV, 60, 0x4001, XDP_PASS, SV_XDP_CNT_NOT_ALLOWED, 0 },
		{ "truncated SV header, allow-list", { 0 }, 0, SV_ETH_P_SV, 4, 0x4000, XDP_PASS, SV_XDP_CNT_TRUNCATED,
		  0 },
	};
	static const struct tcase no_sock[] = {
		{ "SV without socket", { 0 }, 0, SV_ETH_P_SV, 60, 0x4000, XDP_PASS, SV_XDP_CNT_NO_SOCKET, 0 },
	};
	struct xsk_umem_config ucfg = { .fill_size = 64, .comp_size = 64, .frame_size = 2048 };
	struct xsk_socket_config scfg = { .rx_size = 64, .libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
					  .bind_flags = XDP_COPY };
	struct xsk_ring_prod fq;
	struct xsk_ring_cons cq, rxr;
	struct xsk_umem *umem = NULL;
	struct xsk_socket *xsk = NULL;
	struct sv_xdp_bpf *s, *a;
	size_t blen = 64 * 2048;
	void *buf;
	int err;

	if (geteuid() != 0) {
		printf("SKIP xdp_prog_test: needs root (CAP_BPF, CAP_NET_ADMIN, CAP_NET_RAW)\n");
		return 77;
	}
	libbpf_set_print(sv_xdp_test_quiet);
	libxdp_set_print((libxdp_print_fn_t)sv_xdp_test_quiet);
	s = sv_xdp_test_load(0);
	a = sv_xdp_test_load(1);
	if (!s || !a) {
		printf("FAIL xdp_prog_test: loading bpf/sv_xdp.bpf.c: %s\n", strerror(errno));
		return 1;
	}
	for (size_t i = 0; i < sizeof(no_sock) / sizeof(no_sock[0]); i++)
		run_case(s, &no_sock[i]);

	buf = mmap(NULL, blen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED || xsk_umem__create(&umem, buf, blen, &fq, &cq, &ucfg)) {
		printf("FAIL xdp_prog_test: UMEM: %s\n", strerror(errno));
		return 1;
	}
	err = xsk_socket__create(&xsk, "lo", 0, umem, &rxr, NULL, &scfg);
	if (err) {
		printf("SKIP xdp_prog_test: cannot bind an AF_XDP socket to lo: %s\n", strerror(-err));
		return 77;
	}
	CHECK(!xsk_socket__update_xskmap(xsk, bpf_map__fd(s->maps.sv_xdp_xsks)), "xskmap update");
	CHECK(!xsk_socket__update_xskmap(xsk, bpf_map__fd(a->maps.sv_xdp_xsks)), "xskmap update (allow)");
	for (size_t i = 0; i < sizeof(with_sock) / sizeof(with_sock[0]); i++)
		run_case(s, &with_sock[i]);
	{
		__u32 key = 0x4000, one = 1;

		CHECK(!bpf_map_update_elem(bpf_map__fd(a->maps.sv_xdp_appids), &key, &one, BPF_ANY), "appid map");
	}
	for (size_t i = 0; i < sizeof(allow) / sizeof(allow[0]); i++)
		run_case(a, &allow[i]);

	xsk_socket__delete(xsk);
	xsk_umem__delete(umem);
	munmap(buf, blen);
	sv_xdp_bpf__destroy(s);
	sv_xdp_bpf__destroy(a);
	printf("%s xdp_prog_test (%zu cases)\n", failures ? "FAIL" : "PASS",
	       sizeof(with_sock) / sizeof(with_sock[0]) + sizeof(allow) / sizeof(allow[0]) + 1);
	return failures ? 1 : 0;
}

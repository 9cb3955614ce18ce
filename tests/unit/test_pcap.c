/* SPDX-License-Identifier: Apache-2.0 */
/* Captures (common/sv_pcap.h): timestamps that do not fit, and a read that stops early. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "sv_log.h"
#include "sv_pcap.h"

/* ---- seconds + nanoseconds -> ns, checked --------------------------------------------------------- */

struct ts_case {
	const char *name;
	int64_t sec, nsec;
	int64_t ns;
	bool clamped;
};

static const struct ts_case ts_cases[] = {
	{ "epoch", 0, 0, 0, false },
	{ "2023", 1700000000, 123456789, 1700000000123456789LL, false },
	{ "the bound itself (2^62 ns, 2116)", 4611686018LL, 427387904, SV_PCAP_TS_MAX_NS, false },
	{ "one ns past the bound", 4611686018LL, 427387905, SV_PCAP_TS_MAX_NS, true },
	{ "fits int64 but past the bound (2262)", 9223372036LL, 0, SV_PCAP_TS_MAX_NS, true },
	/* pcapng at if_tsresol 9 with the timestamp 2^64 - 1: the UBSan report */
	{ "2^64 - 1 ns", 18446744073LL, 709551615, SV_PCAP_TS_MAX_NS, true },
	/* at if_tsresol 6 (microseconds, the default) the same field is 1000 times later */
	{ "2^64 - 1 us", 18446744073709LL, 551615000, SV_PCAP_TS_MAX_NS, true },
	{ "the seconds alone overflow", INT64_MAX / 1000, 0, SV_PCAP_TS_MAX_NS, true },
	{ "before 1823: if_tsoffset negative", -4611686019LL, 0, -SV_PCAP_TS_MAX_NS, true },
	{ "1960 is fine", -315619200LL, 5, -315619200LL * 1000000000 + 5, false },
	{ "most negative seconds", INT64_MIN, 0, -SV_PCAP_TS_MAX_NS, true },
};

static void test_ts_ns(void **state)
{
	(void)state;
	for (unsigned i = 0; i < sizeof(ts_cases) / sizeof(ts_cases[0]); i++) {
		const struct ts_case *tc = &ts_cases[i];
		uint64_t clamped = 7;

		print_message("case: %s\n", tc->name);
		assert_int_equal(sv_pcap_ts_ns(tc->sec, tc->nsec, &clamped), tc->ns);
		assert_int_equal(clamped, 7 + tc->clamped);
	}
}

/* ---- a pcapng whose EPB timestamps overflow, read through libpcap --------------------------------- */

static uint8_t *put32(uint8_t *p, uint32_t x)
{
	memcpy(p, &x, 4);
	return p + 4;
}

static uint8_t *put16(uint8_t *p, uint16_t x)
{
	memcpy(p, &x, 2);
	return p + 2;
}

static uint8_t *epb(uint8_t *p, uint64_t ts, const uint8_t *frame, uint32_t len)
{
	uint32_t padded = (len + 3u) & ~3u, total = 32 + padded;

	p = put32(p, 6);
	p = put32(p, total);
	p = put32(p, 0); /* interface 0 */
	p = put32(p, (uint32_t)(ts >> 32));
	p = put32(p, (uint32_t)ts);
	p = put32(p, len);
	p = put32(p, len);
	memset(p, 0, padded);
	memcpy(p, frame, len);
	p += padded;
	return put32(p, total);
}

/* SHB, IDB (Ethernet, if_tsresol @tsresol), then one EPB per timestamp. Returns the file's length. */
static size_t make_pcapng(uint8_t *buf, uint8_t tsresol, const uint64_t *ts, unsigned n)
{
	static const uint8_t frame[60] = { 0x01, 0x0c, 0xcd, 0x04, 0x00, 0x00, 0x02, 0, 0, 0, 0, 1, 0x08, 0x06 };
	uint8_t *p = buf;

	p = put32(p, 0x0A0D0D0A);
	p = put32(p, 28);
	p = put32(p, 0x1A2B3C4D);
	p = put16(p, 1);
	p = put16(p, 0);
	p = put32(p, 0xFFFFFFFF); /* section length unknown */
	p = put32(p, 0xFFFFFFFF);
	p = put32(p, 28);
	p = put32(p, 1);  /* IDB */
	p = put32(p, 32); /* 20 + if_tsresol option (4 + 1, padded to 8) + opt_endofopt (4) */
	p = put16(p, 1);  /* LINKTYPE_ETHERNET */
	p = put16(p, 0);
	p = put32(p, 0); /* snaplen */
	p = put16(p, 9);
	p = put16(p, 1);
	*p++ = tsresol;
	*p++ = 0;
	*p++ = 0;
	*p++ = 0;
	p = put32(p, 0); /* opt_endofopt */
	p = put32(p, 32);
	for (unsigned i = 0; i < n; i++)
		p = epb(p, ts[i], frame, sizeof(frame));
	return (size_t)(p - buf);
}

static char *write_tmp(const uint8_t *buf, size_t len)
{
	static char path[64];
	int fd;

	snprintf(path, sizeof(path), "/tmp/test_pcap_%d_XXXXXX", (int)getpid());
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
	return path;
}

static void test_pcapng_overflow(void **state)
{
	static const struct {
		uint8_t tsresol;
		uint64_t ts[3];
		int64_t want[3];
		uint64_t clamped;
	} cases[] = {
		/* nanoseconds: 2^64 - 1 does not fit; the frames around it keep their times */
		{ 9, { 1700000000000000000ull, UINT64_MAX, 1700000000000000001ull },
		  { 1700000000000000000LL, SV_PCAP_TS_MAX_NS, 1700000000000000001LL }, 1 },
		/* microseconds: 2^63 us is far beyond; 2^62 ns / 1000 us is the bound */
		{ 6, { 1700000000000000ull, 1ull << 63, 4611686018427387ull },
		  { 1700000000000000000LL, SV_PCAP_TS_MAX_NS, 4611686018427387000LL }, 1 },
	};

	(void)state;
	sv_log_set(NULL, NULL, SV_LOG_ERR);
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t buf[1024];
		size_t len = make_pcapng(buf, cases[i].tsresol, cases[i].ts, 3);
		char *path = write_tmp(buf, len);
		struct sv_pcap_reader *r;
		struct sv_pcap_pkt pkt;

		assert_int_equal(sv_pcap_open_read(&r, path), 0);
		for (unsigned k = 0; k < 3; k++) {
			assert_int_equal(sv_pcap_next(r, &pkt), 1);
			assert_int_equal(pkt.ts_ns, cases[i].want[k]);
		}
		assert_int_equal(sv_pcap_next(r, &pkt), 0);
		assert_int_equal(sv_pcap_ts_clamped(r), cases[i].clamped);
		assert_null(sv_pcap_read_error(r));
		sv_pcap_close_read(r);
		unlink(path);
	}
}

/* A file cut inside its third packet: two packets, then -EIO with the reason kept. */
static void test_truncated(void **state)
{
	uint8_t buf[1024];
	uint64_t ts[3] = { 1, 2, 3 };
	size_t len = make_pcapng(buf, 9, ts, 3);
	char *path = write_tmp(buf, len - 20);
	struct sv_pcap_reader *r;
	struct sv_pcap_pkt pkt;

	(void)state;
	sv_log_set(NULL, NULL, SV_LOG_ERR);
	assert_int_equal(sv_pcap_open_read(&r, path), 0);
	assert_int_equal(sv_pcap_next(r, &pkt), 1);
	assert_null(sv_pcap_read_error(r));
	assert_int_equal(sv_pcap_next(r, &pkt), 1);
	assert_int_equal(sv_pcap_next(r, &pkt), -EIO);
	assert_non_null(sv_pcap_read_error(r));
	assert_non_null(strstr(sv_pcap_read_error(r), "after packet 2"));
	sv_pcap_close_read(r);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ts_ns),
		cmocka_unit_test(test_pcapng_overflow),
		cmocka_unit_test(test_truncated),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: Apache-2.0
/*
 * sub_replay: test helper for svsub's live anomaly tests (tests/net/sub_anomalies.sh).
 *
 *   sub_replay -i IF [--fps N] FILE...    sends every frame of each capture unchanged (the bytes as captured,
 *                                         SV, GOOSE and anything else, in file order) on IF through AF_PACKET,
 *                                         paced at N frames/s (default 20000) on CLOCK_MONOTONIC; prints one
 *                                         JSON object: frames sent per file, send errors, elapsed time.
 *   sub_replay --craft OUT.pcap           writes the crafted anomaly capture (below); nothing is sent.
 *
 * Frames are sent unchanged so that the live counts can be compared with `svsub --read` of the same file:
 * the receive path must neither add nor lose an anomaly. Pacing keeps the veth peer's backlog from
 * overflowing (a drop there would be the sender's, not svsub's); the replay is faster than the captures'
 * own timing, which svsub's tracker only uses for gaps longer than half a wrap (none in these files).
 *
 * The crafted capture: two 9-2LE-shaped streams (1 ASDU, 8 channels, smpRate 80 -> 4000 samples/s, wrap
 * 4000 stated, smpSynch 1 so no latency is computed), frames 125 us apart, interleaved 1:1 while both run.
 *   "craftA" APPID 0x4100 -- the anomalies, in this order:
 *     1. smpCnt 0..999 in order                                         1000 frames
 *     2. 1010..1999: a gap of 10 (1000..1009 never sent)                 990 frames   lost 10
 *     3. 1995, 1996, 1997 again                                             3 frames   duplicates 3
 *     4. 2000..2099 with each pair swapped (2001, 2000, 2003, 2002...)   100 frames   out_of_order 50
 *     5. 2100..2299 with confRev 2 (1 before)                            200 frames   confrev_changes 1
 *     6. 2300..2349 with the simulation bit (Reserved1 bit 15)            50 frames   simulated 50
 *     7. 2350..3997, then across the wrap 2..499 (3998, 3999, 0, 1 lost) 2146 frames   lost 4
 *     expected: frames = samples = 4489, lost 14, duplicates 3, out_of_order 50, confrev_changes 1,
 *     simulated 50, resets 0 (tests/net/sub_anomalies.sh asserts these numbers, written there by hand).
 *   "craftB" APPID 0x4101 -- smpCnt 0..3999, 0..499 in order, 4500 frames, no anomaly: anomalies of one
 *     stream must not leak into another.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <arpa/inet.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "sv_clock.h"
#include "sv_codec.h"
#include "sv_pcap.h"

#define PROG "sub_replay"
#define MAX_FILES 16

static volatile sig_atomic_t stop;

static void on_sig(int s)
{
	(void)s;
	stop = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " -i IF [--fps N] FILE...   send each capture's frames unchanged, paced\n"
		"       " PROG " --craft OUT.pcap          write the crafted anomaly capture\n"
		"Test helper for tests/net/sub_anomalies.sh; prints one JSON object on stdout.\n"
		"EXAMPLES\n"
		"  " PROG " -i veth0 --fps 20000 qutzss_sv13asdu_goose_attack_inject_9311a.pcap\n"
		"  " PROG " --craft /tmp/craft.pcap && svsub --read /tmp/craft.pcap --json\n");
}

/* ---- crafted capture ------------------------------------------------------------------------------- */

struct craft {
	struct sv_pcap_writer *w;
	int64_t ts_ns;
	uint64_t frames;
};

static int craft_frame(struct craft *c, unsigned stream, uint16_t smpCnt, uint32_t confRev, bool simulated)
{
	static const uint8_t src[6] = { 0x02, 0x00, 0x00, 0x00, 0x41, 0x00 };
	uint8_t dst[6] = { 0x01, 0x0c, 0xcd, 0x04, 0x01, (uint8_t)stream };
	uint8_t seq[64], buf[256];
	const char *svid = stream ? "craftB" : "craftA";
	struct sv_view v;
	int len, err;

	memset(&v, 0, sizeof(v));
	/* a recognisable, valid signal: channel i = 1000 * (i + 1) + smpCnt, quality good */
	for (unsigned i = 0; i < 8; i++) {
		sv_put_be32(seq + 8 * i, 1000u * (i + 1) + smpCnt);
		sv_put_be32(seq + 8 * i + 4, 0);
	}
	v.dst = dst;
	v.src = src;
	v.appid = (uint16_t)(0x4100 + stream);
	v.simulated = simulated;
	v.noASDU = 1;
	v.asdu[0].svID = (const uint8_t *)svid;
	v.asdu[0].svID_len = (uint16_t)strlen(svid);
	v.asdu[0].smpCnt = smpCnt;
	v.asdu[0].confRev = confRev;
	v.asdu[0].smpSynch = SV_SMPSYNCH_LOCAL;
	v.asdu[0].smpRate = 80;
	v.asdu[0].present = SV_HAS_SMPRATE;
	v.asdu[0].seqData = seq;
	v.asdu[0].seqData_len = sizeof(seq);
	len = sv_codec_encode(&v, buf, sizeof(buf));
	if (len < 0) {
		fprintf(stderr, PROG ": encode: %s\n", strerror(-len));
		return len;
	}
	c->ts_ns += 125000;
	err = sv_pcap_write(c->w, buf, (uint32_t)len, (uint32_t)len, c->ts_ns);
	if (err)
		return err;
	c->frames++;
	return 0;
}

/* Stream A's plan as (smpCnt, confRev, simulated) steps; stream B is interleaved 1:1 while it lasts. */
static int craft_write(const char *path)
{
	struct craft c = { .ts_ns = 1700000000LL * 1000000000LL };
	uint16_t a[4489];
	uint32_t a_rev[4489];
	bool a_sim[4489];
	unsigned na = 0, nb = 0, ia = 0;
	int err;

#define A(cnt, rev, sim) (a[na] = (uint16_t)(cnt), a_rev[na] = (rev), a_sim[na] = (sim), na++)
	for (unsigned s = 0; s <= 999; s++)
		A(s, 1, false);
	for (unsigned s = 1010; s <= 1999; s++)
		A(s, 1, false);
	for (unsigned s = 1995; s <= 1997; s++)
		A(s, 1, false);
	for (unsigned s = 2000; s <= 2099; s += 2) {
		A(s + 1, 1, false);
		A(s, 1, false);
	}
	for (unsigned s = 2100; s <= 2299; s++)
		A(s, 2, false);
	for (unsigned s = 2300; s <= 2349; s++)
		A(s, 2, true);
	for (unsigned s = 2350; s <= 3997; s++)
		A(s, 2, false);
	for (unsigned s = 2; s <= 499; s++)
		A(s, 2, false);
#undef A
	if (na != sizeof(a) / sizeof(a[0])) {
		fprintf(stderr, PROG ": craft plan has %u frames, expected %zu\n", na, sizeof(a) / sizeof(a[0]));
		return -EINVAL;
	}
	err = sv_pcap_open_write(&c.w, path, sv_pcap_format_for_path(path), 0, NULL);
	if (err) {
		fprintf(stderr, PROG ": %s: %s\n", path, strerror(-err));
		return err;
	}
	while (!err && (ia < na || nb < 4500)) {
		if (ia < na)
			err = craft_frame(&c, 0, a[ia], a_rev[ia], a_sim[ia]), ia++;
		if (!err && nb < 4500)
			err = craft_frame(&c, 1, (uint16_t)(nb % 4000), 1, false), nb++;
	}
	if (sv_pcap_close_write(c.w) && !err)
		err = -EIO;
	if (err) {
		fprintf(stderr, PROG ": %s: write failed: %s\n", path, strerror(-err));
		return err;
	}
	printf("{\"crafted\": \"%s\", \"frames\": %" PRIu64 ", \"craftA_frames\": %u, \"craftB_frames\": %u}\n",
	       path, c.frames, na, nb);
	return 0;
}

/* ---- replay ---------------------------------------------------------------------------------------- */

static int open_tx(const char *ifname)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = 0 };
	int fd = socket(AF_PACKET, SOCK_RAW, 0), sz = 4 << 20;

	if (fd < 0) {
		fprintf(stderr, PROG ": socket(AF_PACKET): %s\n", strerror(errno));
		return -1;
	}
	sll.sll_ifindex = (int)if_nametoindex(ifname);
	if (!sll.sll_ifindex) {
		fprintf(stderr, PROG ": no interface %s\n", ifname);
		close(fd);
		return -1;
	}
	/* Through the qdisc (no PACKET_QDISC_BYPASS): its queue absorbs bursts instead of dropping. */
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll))) {
		fprintf(stderr, PROG ": bind %s: %s\n", ifname, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static int parse_uint(const char *s, unsigned long min, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "interface", required_argument, NULL, 'i' },
		{ "fps", required_argument, NULL, 'f' },
		{ "craft", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *ifname = NULL, *craft = NULL;
	unsigned long fps = 20000;
	uint64_t sent[MAX_FILES] = { 0 }, errors = 0, oversize = 0;
	int64_t t0, next, period;
	int c, fd, nfiles;

	while ((c = getopt_long(argc, argv, "i:f:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			ifname = optarg;
			break;
		case 'f':
			if (parse_uint(optarg, 1, 10000000, &fps)) {
				fprintf(stderr, PROG ": --fps: '%s' is not in 1..10000000\n", optarg);
				return 2;
			}
			break;
		case 'C':
			craft = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (craft)
		return craft_write(craft) ? 1 : 0;
	nfiles = argc - optind;
	if (!ifname || nfiles < 1 || nfiles > MAX_FILES) {
		usage(stderr);
		return 2;
	}
	signal(SIGINT, on_sig);
	signal(SIGTERM, on_sig);
	fd = open_tx(ifname);
	if (fd < 0)
		return 1;
	period = 1000000000LL / (int64_t)fps;
	t0 = next = sv_clock_gettime_ns(CLOCK_MONOTONIC);
	for (int f = 0; f < nfiles && !stop; f++) {
		struct sv_pcap_reader *r;
		struct sv_pcap_pkt pkt;
		int rc;

		if (sv_pcap_open_read(&r, argv[optind + f])) {
			fprintf(stderr, PROG ": cannot read %s\n", argv[optind + f]);
			close(fd);
			return 1;
		}
		while (!stop && (rc = sv_pcap_next(r, &pkt)) == 1) {
			struct timespec ts;
			bool ok = true;

			if (pkt.caplen != pkt.origlen) { /* a cut frame cannot be sent as it was on the wire */
				oversize++;
				continue;
			}
			next += period;
			ts.tv_sec = next / 1000000000LL;
			ts.tv_nsec = next % 1000000000LL;
			while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR && !stop)
				;
			while (send(fd, pkt.data, pkt.caplen, 0) < 0) {
				if (errno == ENOBUFS || errno == EAGAIN) { /* queue full: wait, never drop */
					struct timespec d = { 0, 50000 };

					nanosleep(&d, NULL);
					continue;
				}
				errors++;
				ok = false;
				break;
			}
			sent[f] += ok;
		}
		sv_pcap_close_read(r);
		if (rc < 0) {
			fprintf(stderr, PROG ": read error in %s\n", argv[optind + f]);
			close(fd);
			return 1;
		}
	}
	close(fd);
	printf("{\"files\": [");
	for (int f = 0; f < nfiles; f++)
		printf("%s{\"file\": \"%s\", \"frames_sent\": %" PRIu64 "}", f ? ", " : "", argv[optind + f], sent[f]);
	printf("], \"send_errors\": %" PRIu64 ", \"cut_frames_skipped\": %" PRIu64 ", \"elapsed_ns\": %" PRId64
	       ", \"interrupted\": %s}\n",
	       errors, oversize, sv_clock_gettime_ns(CLOCK_MONOTONIC) - t0, stop ? "true" : "false");
	return errors || stop ? 1 : 0;
}

// SPDX-License-Identifier: Apache-2.0
/*
 * bench_blast (sv_blast): test-only SV sender for svsub's receive tests and benchmarks (not a publisher: see svpub).
 * N synchronised 9-2LE streams (1 ASDU, smpSynch 2, smpCnt = sample of the TAI second) paced on CLOCK_TAI
 * in 1 ms batches through AF_PACKET sendmmsg (PACKET_QDISC_BYPASS). Options add a PRP copy on a second
 * interface (LAN A/B trailers, IEC 62439-3 §4.1.10), an in-band 802.1Q tag, and crafted malformed frames
 * whose expected decode error names it computes with the same codec svsub uses.
 * Prints one JSON object on stdout: what was sent, per error name what a receiver must count, and whether
 * the pacing kept up (max_lag_ns).
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

#include "sv_codec.h"

#define MAX_STREAMS 256
#define BATCH 1024
#define N_BAD 6

static volatile sig_atomic_t stop;
static void on_sig(int s)
{
	(void)s;
	stop = 1;
}

struct opts {
	const char *ifname[2];
	unsigned streams;
	unsigned rate; /* samples (= frames) per second per stream */
	double duration;
	bool prp;
	int vlan;      /* -1: untagged */
	unsigned malformed; /* rounds of the malformed set, spread over the run */
	unsigned appid_base;
};

static int64_t now_tai(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_TAI, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int open_tx(const char *ifname, int *ifindex)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = 0 };
	int fd = socket(AF_PACKET, SOCK_RAW, 0), one = 1, sz = 4 << 20;

	if (fd < 0)
		return -1;
	*ifindex = (int)if_nametoindex(ifname);
	if (!*ifindex) {
		fprintf(stderr, "sv_blast: no interface %s\n", ifname);
		close(fd);
		return -1;
	}
	sll.sll_ifindex = *ifindex;
	setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll))) {
		close(fd);
		return -1;
	}
	return fd;
}

static void fill_view(struct sv_view *v, uint8_t dst[6], const uint8_t src[6], unsigned i, const struct opts *o,
		      char *svid, uint8_t *seq, int lan)
{
	memset(v, 0, sizeof(*v));
	dst[0] = 0x01, dst[1] = 0x0c, dst[2] = 0xcd, dst[3] = 0x04, dst[4] = (uint8_t)(i >> 8), dst[5] = (uint8_t)i;
	v->dst = dst;
	v->src = src;
	if (o->vlan >= 0) {
		v->vlan = true;
		v->vlan_pcp = 4;
		v->vlan_id = (uint16_t)o->vlan;
	}
	v->appid = (uint16_t)(o->appid_base + i);
	v->noASDU = 1;
	snprintf(svid, 32, "blast%04u", i);
	v->asdu[0].svID = (const uint8_t *)svid;
	v->asdu[0].svID_len = (uint16_t)strlen(svid);
	v->asdu[0].confRev = 1;
	v->asdu[0].smpSynch = SV_SMPSYNCH_GLOBAL;
	v->asdu[0].seqData = seq;
	v->asdu[0].seqData_len = 64;
	if (o->rate == 4000 || o->rate == 4800) {
		v->asdu[0].smpRate = 80;
		v->asdu[0].present |= SV_HAS_SMPRATE;
	}
	if (lan) {
		v->redundancy = SV_RED_PRP;
		v->red_lan = (uint8_t)lan;
	}
}

/* Removes @del octets at @off (or inserts @ins of @nins) inside a 1-ASDU frame, fixing the enclosing
 * short-form BER lengths: @levels 1 = savPdu only, 3 = savPdu, seqASDU, ASDU. */
static size_t splice(uint8_t *f, size_t len, const struct sv_view *v, size_t off, size_t del, const uint8_t *ins,
		     size_t nins, int levels)
{
	int d = (int)nins - (int)del;
	size_t sv = v->sv_offset, asdu = v->asdu[0].offset;

	memmove(f + off + nins, f + off + del, len - off - del);
	if (nins) /* ins may be NULL for a pure deletion */
		memcpy(f + off, ins, nins);
	sv_put_be16(f + sv + 2, (uint16_t)(sv_be16(f + sv + 2) + d));
	f[sv + 9] = (uint8_t)(f[sv + 9] + d);		/* savPdu length (short form) */
	if (levels == 3) {
		f[asdu - 1] = (uint8_t)(f[asdu - 1] + d); /* seqASDU */
		f[asdu + 1] = (uint8_t)(f[asdu + 1] + d); /* ASDU */
	}
	return len + (size_t)d;
}

struct bad {
	uint8_t f[256];
	size_t len;
	int code;
	const char *what;
};

static int make_bad(struct bad *b, const struct opts *o)
{
	uint8_t dst[6], src[6] = { 0x02, 0, 0, 0, 0xbb, 0x01 }, seq[64] = { 0 }, f[256];
	char svid[32];
	struct sv_view v, d;
	struct sv_codec_error e;
	int len, i;
	size_t off;

	struct opts o2 = *o;
	o2.vlan = -1;
	fill_view(&v, dst, src, 0xff, &o2, svid, seq, 0);
	snprintf(svid, sizeof(svid), "bad");
	v.asdu[0].svID_len = 3;
	v.appid = 0x4ff0;
	len = sv_codec_encode(&v, f, sizeof(f));
	if (len < 0 || sv_codec_decode(f, (size_t)len, &d, &e))
		return -1;
	/* 0: truncated inside the SV header */
	memcpy(b[0].f, f, 18), b[0].len = 18, b[0].what = "truncated";
	/* 1: SV Length lies (longer than the frame) */
	memcpy(b[1].f, f, (size_t)len), b[1].len = (size_t)len, b[1].what = "length_lies_long";
	sv_put_be16(b[1].f + d.sv_offset + 2, (uint16_t)(sv_be16(f + d.sv_offset + 2) + 100));
	/* 2: SV Length lies (shorter than the PDU) */
	memcpy(b[2].f, f, (size_t)len), b[2].len = (size_t)len, b[2].what = "length_lies_short";
	sv_put_be16(b[2].f + d.sv_offset + 2, (uint16_t)(sv_be16(f + d.sv_offset + 2) - 20));
	/* 3: mandatory smpCnt missing: find 82 02 after svID */
	memcpy(b[3].f, f, (size_t)len), b[3].what = "smpcnt_removed";
	off = d.asdu[0].offset + 2 + 2 + d.asdu[0].svID_len;
	if (b[3].f[off] != 0x82)
		return -1;
	b[3].len = splice(b[3].f, (size_t)len, &d, off, 4, NULL, 0, 3);
	/* 4: noASDU 65535 (one ASDU present): 80 01 01 -> 80 03 00 FF FF */
	memcpy(b[4].f, f, (size_t)len), b[4].what = "huge_noasdu";
	off = d.sv_offset + 10;
	if (b[4].f[off] != 0x80)
		return -1;
	b[4].len = splice(b[4].f, (size_t)len, &d, off, 3, (const uint8_t[]){ 0x80, 0x03, 0x00, 0xff, 0xff }, 5, 1);
	/* 5: seqASDU missing: savPdu holds noASDU only */
	memcpy(b[5].f, f, (size_t)len), b[5].what = "seqasdu_removed";
	off = d.asdu[0].offset - 2;
	b[5].len = off;
	sv_put_be16(b[5].f + d.sv_offset + 2, (uint16_t)(off - d.sv_offset));
	b[5].f[d.sv_offset + 9] = (uint8_t)(off - d.sv_offset - 10);
	for (i = 0; i < N_BAD; i++) {
		if (!sv_codec_decode(b[i].f, b[i].len, &d, &e))
			return -1; /* would not be malformed */
		b[i].code = e.code;
	}
	return 0;
}

static int usage(int code)
{
	fprintf(code ? stderr : stdout,
		"usage: sv_blast -i IF [-I IF_LAN_B] [--streams N] [--rate R] [--duration S] [--prp] [--vlan VID]\n"
		"                [--malformed ROUNDS] [--appid-base 0x4000]\n"
		"Sends N synchronised 9-2LE streams of R frames/s each (total N*R) paced on CLOCK_TAI.\n"
		"EXAMPLES\n  sv_blast -i veth0 --streams 8 --rate 4000 --duration 10\n"
		"  sv_blast -i lanA -I lanB --prp --streams 1 --rate 4000 --duration 3\n");
	return code;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "interface", required_argument, NULL, 'i' }, { "interface-b", required_argument, NULL, 'I' },
		{ "streams", required_argument, NULL, 's' },   { "rate", required_argument, NULL, 'r' },
		{ "duration", required_argument, NULL, 'd' },  { "prp", no_argument, NULL, 'p' },
		{ "vlan", required_argument, NULL, 'v' },      { "malformed", required_argument, NULL, 'm' },
		{ "appid-base", required_argument, NULL, 'a' }, { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct opts o = { .streams = 8, .rate = 4000, .duration = 10, .vlan = -1, .appid_base = 0x4000 };
	static struct sv_template tpl[2][MAX_STREAMS];
	static uint8_t batch[BATCH][SV_TEMPLATE_MAX_FRAME];
	static struct mmsghdr msg[BATCH];
	static struct iovec iov[BATCH];
	static struct bad bad[N_BAD];
	uint64_t sent = 0, send_err = 0, bad_sent = 0, expect[SV_E__COUNT] = { 0 };
	uint16_t prp_seq[MAX_STREAMS] = { 0 };
	int fd[2] = { -1, -1 }, ifx[2], c, nif;
	int64_t start_sec, t_end, max_lag = 0, t_first = 0, t_last = 0;
	uint64_t k = 0, total, bad_every = 0;
	char *end;

	while ((c = getopt_long(argc, argv, "i:I:s:r:d:pv:m:a:h", lo, NULL)) != -1) {
		switch (c) {
		case 'i': o.ifname[0] = optarg; break;
		case 'I': o.ifname[1] = optarg; break;
		case 's': o.streams = (unsigned)strtoul(optarg, &end, 0); if (*end || !o.streams || o.streams > MAX_STREAMS) return usage(2); break;
		case 'r': o.rate = (unsigned)strtoul(optarg, &end, 0); if (*end || !o.rate || o.rate > 1000000) return usage(2); break;
		case 'd': o.duration = strtod(optarg, &end); if (*end || o.duration <= 0) return usage(2); break;
		case 'p': o.prp = true; break;
		case 'v': o.vlan = (int)strtol(optarg, &end, 0); if (*end || o.vlan < 0 || o.vlan > 4094) return usage(2); break;
		case 'm': o.malformed = (unsigned)strtoul(optarg, &end, 0); if (*end) return usage(2); break;
		case 'a': o.appid_base = (unsigned)strtoul(optarg, &end, 0); if (*end || o.appid_base > 0xffff) return usage(2); break;
		case 'h': return usage(0);
		default: return usage(2);
		}
	}
	if (!o.ifname[0])
		return usage(2);
	nif = o.ifname[1] ? 2 : 1;
	for (int i = 0; i < nif; i++) {
		fd[i] = open_tx(o.ifname[i], &ifx[i]);
		if (fd[i] < 0) {
			fprintf(stderr, "sv_blast: %s: %s\n", o.ifname[i], strerror(errno));
			return 1;
		}
	}
	for (unsigned s = 0; s < o.streams; s++) {
		for (int l = 0; l < nif; l++) {
			uint8_t dst[6], src[6] = { 0x02, 0, 0, 0, (uint8_t)l, (uint8_t)s }, seq[64];
			char svid[32];
			struct sv_view v;

			for (int ch = 0; ch < 8; ch++)
				sv_put_be32(seq + 8 * ch, (uint32_t)(1000 * (ch + 1))), sv_put_be32(seq + 8 * ch + 4, 0);
			fill_view(&v, dst, src, s, &o, svid, seq, o.prp ? (l ? 0xB : 0xA) : 0);
			if (sv_template_init(&tpl[l][s], &v)) {
				fprintf(stderr, "sv_blast: template failed\n");
				return 1;
			}
		}
	}
	if (o.malformed && make_bad(bad, &o)) {
		fprintf(stderr, "sv_blast: crafting malformed frames failed\n");
		return 1;
	}
	signal(SIGINT, on_sig);
	signal(SIGTERM, on_sig);
	/* Start at the next TAI second + 1 so smpCnt 0 is the first sample. */
	start_sec = now_tai() / 1000000000LL + 1;
	total = (uint64_t)(o.duration * o.rate);
	if (o.malformed)
		bad_every = total / (o.malformed * N_BAD + 1) + 1;
	t_end = start_sec * 1000000000LL + (int64_t)(o.duration * 1e9);
	while (!stop && k < total) {
		struct timespec ts;
		int64_t due, now;
		unsigned n = 0;

		now = now_tai();
		/* every sample index whose instant has passed, N streams each */
		while (k < total && n + o.streams * (unsigned)nif + 1 <= BATCH) {
			due = (start_sec + (int64_t)(k / o.rate)) * 1000000000LL +
			      (int64_t)((k % o.rate) * 1000000000ULL / o.rate);
			if (due > now)
				break;
			if (now - due > max_lag)
				max_lag = now - due;
			for (unsigned s = 0; s < o.streams; s++) {
				for (int l = 0; l < nif; l++) {
					struct sv_template *t = &tpl[l][s];

					sv_template_set_smpcnt(t, 0, (uint16_t)(k % o.rate));
					sv_template_set_prp_seq(t, prp_seq[s]);
					memcpy(batch[n], t->frame, t->len);
					iov[n].iov_base = batch[n];
					iov[n].iov_len = t->len;
					msg[n].msg_hdr.msg_iov = &iov[n];
					msg[n].msg_hdr.msg_iovlen = 1;
					msg[n].msg_hdr.msg_name = (void *)(intptr_t)l; /* which socket */
					n++;
				}
				prp_seq[s]++;
			}
			if (bad_every && k % bad_every == bad_every - 1 && bad_sent < (uint64_t)o.malformed * N_BAD) {
				struct bad *b = &bad[bad_sent % N_BAD];

				memcpy(batch[n], b->f, b->len);
				iov[n].iov_base = batch[n];
				iov[n].iov_len = b->len;
				msg[n].msg_hdr.msg_iov = &iov[n];
				msg[n].msg_hdr.msg_iovlen = 1;
				msg[n].msg_hdr.msg_name = (void *)(intptr_t)0;
				n++;
				expect[b->code]++;
				bad_sent++;
			}
			k++;
		}
		if (n) {
			if (!t_first)
				t_first = now;
			t_last = now_tai();
		}
		/* split per socket: frames for LAN A are even positions when nif == 2 */
		for (int l = 0; l < nif; l++) {
			static struct mmsghdr m2[BATCH];
			unsigned m = 0, done = 0;

			for (unsigned i = 0; i < n; i++)
				if ((intptr_t)msg[i].msg_hdr.msg_name == l) {
					m2[m] = msg[i];
					m2[m].msg_hdr.msg_name = NULL;
					m++;
				}
			while (done < m) {
				int r = sendmmsg(fd[l], m2 + done, m - done, 0);

				if (r < 0) {
					if (errno == EINTR)
						continue;
					send_err++;
					done++;
					continue;
				}
				done += (unsigned)r;
				if (l == 0 || !o.prp)
					sent += (unsigned)r;
			}
		}
		if (k < total) {
			due = (start_sec + (int64_t)(k / o.rate)) * 1000000000LL +
			      (int64_t)((k % o.rate) * 1000000000ULL / o.rate);
			if (due - now_tai() > 0) {
				/* wake at most 1 ms late: batches of <= 1 ms */
				int64_t wake = due;

				ts.tv_sec = wake / 1000000000LL;
				ts.tv_nsec = wake % 1000000000LL;
				clock_nanosleep(CLOCK_TAI, TIMER_ABSTIME, &ts, NULL);
			}
		}
	}
	(void)t_end;
	printf("{\"frames_sent\": %" PRIu64 ", \"good_frames_sent\": %" PRIu64 ", \"samples_per_stream\": %" PRIu64
	       ", \"streams\": %u, \"rate_per_stream\": %u, \"send_errors\": %" PRIu64 ", \"malformed_sent\": %" PRIu64
	       ", \"max_lag_ns\": %" PRId64 ", \"elapsed_ns\": %" PRId64 ", \"expected_errors\": {",
	       sent, sent - bad_sent, k, o.streams, o.rate, send_err, bad_sent, max_lag, t_last - t_first);
	for (int e = 1, first = 1; e < SV_E__COUNT; e++)
		if (expect[e]) {
			printf("%s\"%s\": %" PRIu64, first ? "" : ", ", sv_codec_strerror(e), expect[e]);
			first = 0;
		}
	printf("}}\n");
	for (int i = 0; i < nif; i++)
		close(fd[i]);
	return send_err ? 1 : 0;
}

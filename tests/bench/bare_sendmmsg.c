// SPDX-License-Identifier: Apache-2.0
/* Benchmark reference: the barest AF_PACKET transmit loop (sendmmsg of 64 prebuilt frames,
 * PACKET_QDISC_BYPASS), no encoding, no timestamps. Usage: bare_sendmmsg IFACE SECONDS [LEN]
 * Prints "frames_per_second N frames M". */
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#define BATCH 64

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static unsigned char frame[BATCH][1514];
	struct mmsghdr msg[BATCH];
	struct iovec iov[BATCH];
	struct sockaddr_ll sll = { .sll_family = AF_PACKET };
	unsigned len = argc > 3 ? (unsigned)strtoul(argv[3], NULL, 10) : 123;
	double secs, t0, t;
	unsigned long long sent = 0;
	int fd, one = 1;

	if (argc < 3 || len < 60 || len > 1514) {
		fprintf(stderr, "usage: bare_sendmmsg IFACE SECONDS [LEN]\n");
		return 2;
	}
	secs = strtod(argv[2], NULL);
	sll.sll_ifindex = (int)if_nametoindex(argv[1]);
	fd = socket(AF_PACKET, SOCK_RAW, 0);
	if (fd < 0 || !sll.sll_ifindex || bind(fd, (struct sockaddr *)&sll, sizeof(sll))) {
		perror("bare_sendmmsg: socket/bind");
		return 1;
	}
	setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one));
	for (int i = 0; i < BATCH; i++) {
		static const unsigned char hdr[] = { 0x01, 0x0c, 0xcd, 0x04, 0x00, 0x00, 0x02, 0, 0, 0, 0, 1, 0x88, 0xba };

		memcpy(frame[i], hdr, sizeof(hdr));
		iov[i].iov_base = frame[i];
		iov[i].iov_len = len;
		memset(&msg[i], 0, sizeof(msg[i]));
		msg[i].msg_hdr.msg_iov = &iov[i];
		msg[i].msg_hdr.msg_iovlen = 1;
	}
	t0 = now_s();
	do {
		int r = sendmmsg(fd, msg, BATCH, 0);

		if (r > 0)
			sent += (unsigned)r;
		else if (errno != ENOBUFS && errno != EAGAIN && errno != EINTR) {
			perror("sendmmsg");
			return 1;
		}
		t = now_s();
	} while (t - t0 < secs);
	printf("frames_per_second %.0f frames %llu\n", sent / (t - t0), sent);
	return 0;
}

// SPDX-License-Identifier: Apache-2.0
/*
 * The guests' receiver of svtrace's benchmark (tests/bench/trace.bench): the same kernel path as the
 * python receiver of tests/net/svtrace_lab.py - an AF_PACKET SOCK_RAW socket bound to EtherType 0x88BA
 * on one interface, every frame taken by the receiving thread's recvmsg (svtrace's T2b) - but in C,
 * with recvmmsg batches: the python loop's ~20 us of CPU per frame, which drifts by ~10 % over seconds,
 * would drown the few microseconds a tracer adds.
 *
 *   bench_sockrecv IFNAME SECONDS      prints the number of frames received
 */
#include <errno.h>
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

#define ETH_P_SV 0x88BA
#define BATCH 64
#define FRAME_MAX 2048

static volatile sig_atomic_t stop;

static void on_sig(int s)
{
	(void)s;
	stop = 1;
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static unsigned char buf[BATCH][FRAME_MAX];
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_SV) };
	struct timeval tv = { .tv_sec = 0, .tv_usec = 200000 };
	int fd, rcvbuf = 8 << 20;
	unsigned long long n = 0;
	double end;
	char *e;

	if (argc != 3 || !(sll.sll_ifindex = (int)if_nametoindex(argv[1]))) {
		fprintf(stderr, "usage: bench_sockrecv IFNAME SECONDS (interface '%s' not found)\n",
			argc > 1 ? argv[1] : "");
		return 2;
	}
	end = strtod(argv[2], &e);
	if (*e || end <= 0) {
		fprintf(stderr, "bench_sockrecv: bad duration '%s'\n", argv[2]);
		return 2;
	}
	end += mono_s();
	fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_SV));
	if (fd < 0 || bind(fd, (struct sockaddr *)&sll, sizeof(sll)) ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)) ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv))) {
		fprintf(stderr, "bench_sockrecv: AF_PACKET socket on %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	signal(SIGINT, on_sig);
	signal(SIGTERM, on_sig);
	for (int i = 0; i < BATCH; i++) {
		iov[i] = (struct iovec){ .iov_base = buf[i], .iov_len = FRAME_MAX };
		msgs[i] = (struct mmsghdr){ .msg_hdr = { .msg_iov = &iov[i], .msg_iovlen = 1 } };
	}
	while (!stop && mono_s() < end) {
		int r = recvmmsg(fd, msgs, BATCH, MSG_WAITFORONE, NULL);

		if (r > 0)
			n += (unsigned)r;
		else if (r < 0 && errno != EAGAIN && errno != EINTR) {
			fprintf(stderr, "bench_sockrecv: recvmmsg: %s\n", strerror(errno));
			break;
		}
	}
	printf("%llu\n", n);
	close(fd);
	return 0;
}

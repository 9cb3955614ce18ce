// SPDX-License-Identifier: Apache-2.0
/*
 * The guests' receiver of svtrace's benchmark (tests/bench/trace.bench): the same kernel path as the
 * python receiver of tests/net/svtrace_lab.py - an AF_PACKET SOCK_RAW socket bound to EtherType 0x88BA
 * on one interface, every frame taken by the receiving thread's recvmsg (svtrace's T2b) - but in C,
 * with recvmmsg batches: the python loop's ~20 us of CPU per frame, which drifts by ~10 % over seconds,
 * would drown the few microseconds a tracer adds.
 *
 *   bench_sockrecv IFNAME SECONDS [PERIOD_US]      prints the number of frames received
 *
 * Without PERIOD_US the thread blocks in recvmmsg and wakes for each frame or burst (a wake-up from the
 * sender's softirq, often an IPI). With PERIOD_US it sleeps to the next multiple of the period on the
 * monotonic clock (its own CPU's timer: no wake-up from the sender) and then takes every frame that
 * arrived (MSG_DONTWAIT until the socket is empty): a consumer working in bursts, as a vhost worker
 * takes the frames of one kick.
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

#include "sv_wire.h"

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
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(SV_ETH_P_SV) };
	struct timeval tv = { .tv_sec = 0, .tv_usec = 200000 };
	int fd, rcvbuf = 8 << 20;
	unsigned long long n = 0;
	long period_us = 0;
	struct timespec next;
	double end;
	char *e;

	if ((argc != 3 && argc != 4) || !(sll.sll_ifindex = (int)if_nametoindex(argv[1]))) {
		fprintf(stderr, "usage: bench_sockrecv IFNAME SECONDS [PERIOD_US] (interface '%s' not found)\n",
			argc > 1 ? argv[1] : "");
		return 2;
	}
	end = strtod(argv[2], &e);
	if (*e || end <= 0) {
		fprintf(stderr, "bench_sockrecv: bad duration '%s'\n", argv[2]);
		return 2;
	}
	if (argc == 4) {
		period_us = strtol(argv[3], &e, 10);
		if (*e || period_us <= 0 || period_us > 1000000) {
			fprintf(stderr, "bench_sockrecv: bad period '%s' (1..1000000 us)\n", argv[3]);
			return 2;
		}
	}
	end += mono_s();
	fd = socket(AF_PACKET, SOCK_RAW, htons(SV_ETH_P_SV));
	if (fd < 0 || bind(fd, (struct sockaddr *)&sll, sizeof(sll)) ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)) ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv))) {
		fprintf(stderr, "bench_sockrecv: AF_PACKET socket on %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	signal(SIGINT, on_sig);
	signal(SIGTERM, on_sig);
	fprintf(stderr, "bench_sockrecv: ready\n");	/* bound: frames from now on are queued to it */
	for (int i = 0; i < BATCH; i++) {
		iov[i] = (struct iovec){ .iov_base = buf[i], .iov_len = FRAME_MAX };
		msgs[i] = (struct mmsghdr){ .msg_hdr = { .msg_iov = &iov[i], .msg_iovlen = 1 } };
	}
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!stop && mono_s() < end) {
		int r;

		if (period_us) {
			/* the next period boundary (skipped ones are not made up: no burst of wake-ups) */
			long long t = ((long long)next.tv_sec * 1000000000LL + next.tv_nsec) / (period_us * 1000LL);

			t = (t + 1) * period_us * 1000LL;
			next.tv_sec = (time_t)(t / 1000000000LL);
			next.tv_nsec = (long)(t % 1000000000LL);
			r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
			if (r && r != EINTR)
				break;
			clock_gettime(CLOCK_MONOTONIC, &next);
			while ((r = recvmmsg(fd, msgs, BATCH, MSG_DONTWAIT, NULL)) > 0)
				n += (unsigned)r;
			if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
				fprintf(stderr, "bench_sockrecv: recvmmsg: %s\n", strerror(errno));
				break;
			}
			continue;
		}
		r = recvmmsg(fd, msgs, BATCH, MSG_WAITFORONE, NULL);

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

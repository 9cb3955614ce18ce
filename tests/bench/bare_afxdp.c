// SPDX-License-Identifier: Apache-2.0
/* Benchmark reference: the barest AF_XDP transmit loop through libxdp (copy mode, no XDP program):
 * frames prebuilt in the UMEM, 64 descriptors per kick. Usage: bare_afxdp IFACE SECONDS [LEN]
 * Prints "frames_per_second N frames M". */
#include <errno.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <xdp/xsk.h>

#define NFRAMES 2048
#define FSIZE XSK_UMEM__DEFAULT_FRAME_SIZE
#define BATCH 64

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	struct xsk_ring_prod fill, tx;
	struct xsk_ring_cons comp;
	struct xsk_umem_config uc = { .fill_size = 2048, .comp_size = NFRAMES, .frame_size = FSIZE };
	struct xsk_socket_config sc = { .tx_size = 2048, .libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
					.bind_flags = XDP_COPY };
	static uint64_t freel[NFRAMES];
	unsigned nfree = 0, len = argc > 3 ? (unsigned)strtoul(argv[3], NULL, 10) : 123;
	unsigned long long sent = 0;
	double secs, t0, t;
	void *area;
	int err;

	if (argc < 3) {
		fprintf(stderr, "usage: bare_afxdp IFACE SECONDS [LEN]\n");
		return 2;
	}
	secs = strtod(argv[2], NULL);
	area = mmap(NULL, (size_t)NFRAMES * FSIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED)
		return 1;
	err = xsk_umem__create(&umem, area, (size_t)NFRAMES * FSIZE, &fill, &comp, &uc);
	/* EBUSY: the queue of an AF_XDP socket that just closed is released a few ms later */
	for (int i = 0; !err; i++) {
		struct timespec w = { 0, 50000000 };

		err = xsk_socket__create(&xsk, argv[1], 0, umem, NULL, &tx, &sc);
		if (err != -EBUSY || i >= 100)
			break;
		nanosleep(&w, NULL);
		err = 0;
	}
	if (err) {
		fprintf(stderr, "bare_afxdp: %s\n", strerror(-err));
		return 1;
	}
	for (unsigned i = 0; i < NFRAMES; i++) {
		static const unsigned char hdr[] = { 0x01, 0x0c, 0xcd, 0x04, 0x00, 0x00, 0x02, 0, 0, 0, 0, 1, 0x88, 0xba };

		memcpy((char *)area + (size_t)i * FSIZE, hdr, sizeof(hdr));
		freel[nfree++] = (uint64_t)i * FSIZE;
	}
	t0 = now_s();
	do {
		uint32_t idx;
		unsigned n = xsk_ring_cons__peek(&comp, NFRAMES, &idx);

		for (unsigned i = 0; i < n; i++)
			freel[nfree++] = *xsk_ring_cons__comp_addr(&comp, idx + i);
		xsk_ring_cons__release(&comp, n);
		n = nfree < BATCH ? nfree : BATCH;
		n = xsk_ring_prod__reserve(&tx, n, &idx);
		for (unsigned i = 0; i < n; i++) {
			struct xdp_desc *d = xsk_ring_prod__tx_desc(&tx, idx + i);

			d->addr = freel[--nfree];
			d->len = len;
			d->options = 0;
		}
		xsk_ring_prod__submit(&tx, n);
		sent += n;
		sendto(xsk_socket__fd(xsk), NULL, 0, MSG_DONTWAIT, NULL, 0);
		t = now_s();
	} while (t - t0 < secs);
	/* frames still in the ring at the end were not sent yet */
	printf("frames_per_second %.0f frames %llu\n", sent / (t - t0), sent);
	xsk_socket__delete(xsk);
	xsk_umem__delete(umem);
	return 0;
}

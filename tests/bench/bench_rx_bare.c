// SPDX-License-Identifier: Apache-2.0
/*
 * The bare receive loop of svsub's receive benchmark: the same svrx socket (AF_XDP with bpf/sv_xdp, or the
 * AF_PACKET ring) and nothing else - no decode, no tracking - so svsub's full path can be compared with
 * what the socket alone delivers in the same run. Reads one octet per frame so the data is touched.
 * Runs until --duration seconds pass after the first frame, or --idle seconds without frames.
 * Prints one JSON object: frames, the kernel's drop counters, and the XDP verdict counters.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sv_clock.h"
#include "sv_log.h"
#include "svrx.h"

static volatile sig_atomic_t stop;
static void on_sig(int s)
{
	(void)s;
	stop = 1;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "interface", required_argument, NULL, 'i' }, { "backend", required_argument, NULL, 'b' },
		{ "xdp-mode", required_argument, NULL, 'x' },  { "duration", required_argument, NULL, 'd' },
		{ "idle", required_argument, NULL, 'I' },      { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct svrx_frame fr[256];
	struct svrx_config cfg;
	struct svrx_stats st;
	struct svrx *rx;
	struct sigaction sa = { .sa_handler = on_sig };
	double duration = 10, idle = 2;
	int64_t first = 0, last = 0;
	uint64_t frames = 0, touch = 0;
	char desc[512], *end;
	int c, err;

	svrx_config_init(&cfg);
	while ((c = getopt_long(argc, argv, "i:b:x:d:I:h", lo, NULL)) != -1) {
		switch (c) {
		case 'i': cfg.ifname = optarg; break;
		case 'b': if (svrx_backend_parse(optarg, &cfg.backend)) return 2; break;
		case 'x': if (svrx_xdp_mode_parse(optarg, &cfg.xdp_mode)) return 2; break;
		case 'd': duration = strtod(optarg, &end); if (*end) return 2; break;
		case 'I': idle = strtod(optarg, &end); if (*end) return 2; break;
		case 'h':
			printf("usage: bench_rx_bare -i IF [-b af_xdp|af_packet] [-x auto|native|skb] [-d S] [-I S]\n"
			       "EXAMPLES\n  bench_rx_bare -i veth1 -b af_xdp -d 10\n");
			return 0;
		default: return 2;
		}
	}
	sv_log_set(sv_log_stderr, (void *)"bench_rx_bare", SV_LOG_WARN);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	err = svrx_open(&rx, &cfg);
	if (err)
		return 1;
	svrx_describe(rx, desc, sizeof(desc));
	fprintf(stderr, "bench_rx_bare: %s\n", desc);
	fprintf(stderr, "bench_rx_bare: ready\n");
	while (!stop) {
		int n = svrx_poll(rx, fr, 256, 50);
		int64_t now = sv_clock_gettime_ns(CLOCK_MONOTONIC);

		if (n < 0 && n != -EINTR)
			break;
		for (int i = 0; i < n; i++)
			touch += fr[i].data[fr[i].len - 1];
		if (n > 0) {
			if (!first)
				first = now;
			last = now;
			frames += (unsigned)n;
		}
		if (first && (now - first > (int64_t)(duration * 1e9) || now - last > (int64_t)(idle * 1e9)))
			break;
	}
	svrx_release(rx);
	svrx_stats_get(rx, &st);
	printf("{\"frames\": %" PRIu64 ", \"kernel_drops\": %" PRIu64 ", \"ring_full\": %" PRIu64
	       ", \"fill_empty\": %" PRIu64 ", \"xdp_redirected\": %" PRIu64 ", \"xdp_pass_not_sv\": %" PRIu64
	       ", \"seconds\": %.3f, \"touch\": %" PRIu64 "}\n",
	       frames, st.kernel_drops, st.ring_full, st.fill_empty, st.xdp_redirected, st.xdp_pass_not_sv,
	       (double)(last - first) / 1e9, touch & 1);
	svrx_close(rx);
	return 0;
}

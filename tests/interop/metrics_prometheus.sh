#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A real Prometheus (Debian's) scrapes the metrics test server (tests/interop/metrics_serve: every family of
# configs/prometheus/metrics.txt, a writer updating them) on the loopback, with OpenMetrics as it negotiates it:
# the target is up, the totals Prometheus holds after the run equal what the server said it exported (the server
# lingers for one scrape after its end), histogram_quantile works on the exported buckets, the recording rules
# evaluate, and every query of the Grafana dashboard runs and returns series. Phase 2 points prom_lib.sh at the tools.
# Prints PASS/FAIL/SKIP; exit 77 when prometheus or the test server is missing.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
export SVKIT_SRC=${SVKIT_SRC:-$(cd "$HERE/../.." && pwd)}
BUILD=${SVKIT_BUILD:-$SVKIT_SRC/build}
SERVE=$BUILD/tests/interop/metrics_serve
. "$HERE/prom_lib.sh"
[ -x "$SERVE" ] || { echo "SKIP: $SERVE not built"; exit 77; }
command -v prometheus >/dev/null || { echo "SKIP: prometheus not installed (Debian package prometheus)"; exit 77; }

rc=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; rc=1; }
OUT=$(mktemp /tmp/svkit-metrics-serve.XXXXXX)
SPID=
cleanup() {
	[ -n "$SPID" ] && kill "$SPID" 2>/dev/null && wait "$SPID" 2>/dev/null
	prom_cleanup
	rm -f "$OUT"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# runs until SIGINT: once Prometheus has scraped it a few times (its first scrape comes ~5 s after it is ready)
"$SERVE" --catalogue "$SVKIT_SRC/configs/prometheus/metrics.txt" --listen 127.0.0.1:0 --streams 300 --max-rows 256 \
	--linger 30 >"$OUT" 2>"$OUT.err" &
SPID=$!
for _ in $(seq 1 100); do
	grep -q '^listening ' "$OUT" && break
	sleep 0.1
done
ADDR=$(awk '/^listening /{print $2}' "$OUT")
[ -n "$ADDR" ] || { fail "test server did not start: $(cat "$OUT.err")"; exit 1; }
prom_start svkit-test "$ADDR" || exit 1
pass "prometheus ready on $PROM_URL, scraping $ADDR every second"

if prom_wait 'up{job="svkit-test"}' == 1 15; then
	pass "target up (the OpenMetrics text Prometheus negotiated parses)"
else
	fail "target not up: $(prom_query 'up')"
fi
n=$(prom_value 'scrape_samples_scraped{job="svkit-test"}')
[ -n "$n" ] && [ "${n%.*}" -gt 5000 ] && pass "one scrape carries $n samples" || fail "scrape_samples_scraped '$n'"

prom_wait 'count_over_time(up{job="svkit-test"}[1m])' '>=' 6 30 || fail "fewer than 6 scrapes in 30 s"
prom_wait 'count(svkit:hop_latency_seconds:p99_5m{job="svkit-test"})' '>=' 6 20 ||
	fail "the recording rules did not evaluate within 20 s"
T_Q=$(date +%s.%N) # queries over the run are evaluated here, before the series go stale
# the end of the run: the server prints its totals, then lingers until one scrape rendered after the end is sent
kill -INT "$SPID"
for _ in $(seq 1 300); do
	grep -q '^linger ' "$OUT" && break
	sleep 0.1
done
FINAL=$(sed -n 's/^final //p' "$OUT")
LINGER=$(awk '/^linger /{print $2}' "$OUT")
[ "$LINGER" = scraped ] && pass "the server lingered until a scrape after the end ($LINGER)" || fail "linger: '$LINGER'"
want_frames=$(python3 -c "import json,sys; print(json.loads(sys.argv[1])['sub_frames_sum'])" "$FINAL")
want_hop=$(python3 -c "import json,sys; print(json.loads(sys.argv[1])['hop_count'])" "$FINAL")
wait "$SPID"
SPID=
sleep 1.5 # a failed scrape or two: Prometheus marks the series stale; last_over_time still sees their last values

got=$(prom_value 'max(last_over_time(svkit_run_finished{job="svkit-test"}[5m]))')
[ "$got" = 1 ] && pass "svkit_run_finished 1 in Prometheus" || fail "svkit_run_finished '$got'"
got=$(prom_value 'sum(last_over_time(svkit_sub_frames_total{job="svkit-test"}[5m]))')
if [ -n "$want_frames" ] && python3 -c "import sys; sys.exit(0 if int(float('$got')) == int('$want_frames') else 1)"; then
	pass "final total in Prometheus == the server's (sum of svkit_sub_frames_total over 256 streams + overflow: $got)"
else
	fail "final total: prometheus '$got', server '$want_frames'"
fi
got=$(prom_value 'last_over_time(svkit_hop_latency_seconds_count{job="svkit-test",hop="T1-T2b",port="vnet0"}[5m])')
if [ -n "$want_hop" ] && python3 -c "import sys; sys.exit(0 if int(float('$got')) == int('$want_hop') else 1)"; then
	pass "final histogram count in Prometheus == the server's ($got)"
else
	fail "histogram count: prometheus '$got', server '$want_hop'"
fi

# queries over the run
got=$(prom_value 'histogram_quantile(0.99, sum by (le) (rate(svkit_hop_latency_seconds_bucket{job="svkit-test",hop="T1-T2b",port="vnet0"}[1m])))' "$T_Q")
# the writer's values are uniform on 20..420 us: p99 ~ 416 us, in the (400, 500] us bucket
if [ -n "$got" ] && python3 -c "import sys; sys.exit(0 if 400e-6 < float('$got') <= 500e-6 else 1)"; then
	pass "histogram_quantile(0.99) = $got s, in the (400, 500] us bucket the writer's uniform 20..420 us puts it"
else
	fail "histogram_quantile(0.99) = '$got'"
fi
got=$(prom_value 'count(svkit:hop_latency_seconds:p99_5m{job="svkit-test"})' "$T_Q")
[ -n "$got" ] && [ "${got%.*}" -ge 6 ] && pass "recording rules evaluated ($got hop p99 series)" || fail "recording rules: '$got'"

python3 "$HERE/prom_dashboard.py" "$SVKIT_SRC/configs/prometheus/grafana-dashboard.json" "$PROM_URL" "$T_Q" || rc=1
exit $rc

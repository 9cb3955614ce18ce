#!/bin/bash
# svpub -> svsub live in network namespaces (issue 4 "Tests"): configs/pub-seapath-8x4000.yaml (8 streams of
# 9-2LE, 4000 frames/s each, smpSynch 2) for SUB_SECONDS (default 10) s over a veth pair, received by svsub
# with BACKEND (af_xdp: native XDP on veth; af_packet). Asserts: every one of the 8 streams accounted, every
# frame svpub says it sent counted as a frame and a sample of its stream, zero lost/duplicates/out of
# order/confRev changes/simulated/errors, no malformed frame, no kernel drop; latencies (receive time -
# sample time from smpCnt) present for every stream, min > 0 and max below a sane bound (50 ms + the
# publisher's worst lateness).
# Publisher and subscriber share this host's clock, which adjtimex may report unsynchronised (no PTP/NTP
# here): svsub runs with --clock-trusted, and the test checks the summary says so.
# A publisher that could not keep its rate (frames skipped/stopped, TX errors, overruns, fewer frames than
# 8 x 4000 x seconds, or more than 5 % over the duration) makes the test SKIP with the reason: it does not fail on a
# slow machine. Likewise, when the only fault is frames the kernel dropped at svsub's socket because svsub
# (SCHED_FIFO 10) was not scheduled in time - exactly accounted by the socket's drop counters, nothing else
# wrong - the run is repeated once, then SKIPs saying so (a busy shared machine; rates are tests/bench's job).
# Needs root; exits 77 (skip) without it. PASS/FAIL/SKIP on stdout.
set -u
BACKEND=${1:-af_xdp}
NAME="sub_svpub_${BACKEND}"
BUILD=${SVKIT_BUILD:?SVKIT_BUILD not set}
SRC=${SVKIT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
SVSUB=$BUILD/subscriber/svsub
SVPUB=$BUILD/publisher/svpub
CONF=$SRC/configs/pub-seapath-8x4000.yaml
SECS=${SUB_SECONDS:-10}

skip() { echo "SKIP $NAME: $*"; exit 77; }
fail() {
	echo "FAIL $NAME: $*"
	[ -s "$T/sub.err" ] && sed 's/^/  svsub: /' "$T/sub.err" | tail -20
	[ -s "$T/pub.err" ] && sed 's/^/  svpub: /' "$T/pub.err" | tail -10
	exit 1
}

[ "$(id -u)" -eq 0 ] || skip "needs root (CAP_NET_ADMIN, CAP_BPF, CAP_NET_RAW)"
[ -x "$SVSUB" ] || skip "svsub not built"
[ -x "$SVPUB" ] || skip "svpub not built"
[ -r "$CONF" ] || skip "$CONF missing"
command -v python3 >/dev/null || skip "python3 missing"

# shellcheck source=veth_pair.sh
. "$(dirname "$0")/veth_pair.sh"
veth_pair sp

# One run: svsub, then svpub, then the checks. Returns 0 pass, 1 fail, 77 the publisher missed its rate,
# 75 the only fault is frames the kernel dropped because svsub was not scheduled in time (ring overflow
# accounted exactly by the socket's drop counters, nothing else wrong): a busy machine, retried once.
attempt() {
	# svsub runs SCHED_FIFO (as in production, and so that other processes of a shared machine cannot starve it
	# into ring overflows); svpub too (below)
	RT=(); command -v chrt >/dev/null && RT=(chrt -f 10)
	rm -f "$T/sub.ready"
	ip netns exec "$NB" "${RT[@]}" "$SVSUB" -i b0 --backend "$BACKEND" --clock-trusted --json \
		--ready-file "$T/sub.ready" >"$T/sub.json" 2>"$T/sub.err" &
	SUBPID=$!
	wait_ready_file "$T/sub.ready" "$SUBPID" || fail "svsub did not start"

	ip netns exec "$NA" "$SVPUB" -c "$CONF" --interface a0 --duration "$SECS" -s priority=20 -s mlockall=true --json -q >"$T/pub.json" 2>"$T/pub.err" ||
		fail "svpub failed"
	sleep 0.5
	kill -INT "$SUBPID"
	wait "$SUBPID"; rc=$?
	SUBPID=
	[ $rc -eq 0 ] || fail "svsub exited with $rc after SIGINT"
	python3 - "$BACKEND" "$SECS" "$T/pub.json" "$T/sub.json" <<'PY'
import json, sys
backend, secs, pubf, subf = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4]
pub = json.load(open(pubf)); d = json.load(open(subf))
want_total = int(8 * 4000 * secs)
# Could the publisher keep the rate? Otherwise this is a slow machine, not a subscriber fault.
lag = pub["lateness_ns"]["max"] or 0
why = []
if pub["frames"] != want_total: why.append(f'sent {pub["frames"]} frames, not {want_total}')
for k in ("skipped", "stopped", "tx_errors", "outage"):
    if pub.get(k): why.append(f'{k} {pub[k]}')
if pub["duration_s"] > secs * 1.05: why.append(f'took {pub["duration_s"]:.2f} s for {secs:g} s of samples')
if why:
    print("SKIP: the publisher did not reach 8 x 4000 frames/s: " + ", ".join(why)); sys.exit(77)
bad = []
def need(c, msg):
    if not c: bad.append(msg)
sent = {s["appid"]: s for s in pub["per_stream"]}
streams = d["streams"]
need(len(streams) == 8, f"{len(streams)} streams, want 8")
need(d["source"].get("clock_trusted") is True, "summary does not say clock_trusted")
bound = 50_000_000 + lag
lat_p50 = []
for s in streams:
    p = sent.get(s["appid"])
    need(p is not None and p["svID"] == s["svID"], f'{s["svID"]}: not a stream svpub sent')
    n = p["frames"] if p else -1
    need(s["frames"] == n and s["samples"] == n, f'{s["svID"]}: {s["frames"]} frames/{s["samples"]} samples, sent {n}')
    for k in ("lost", "duplicates", "out_of_order", "confrev_changes", "simulated", "errors"):
        need(s[k] == 0, f'{s["svID"]}: {k} = {s[k]}')
    lat = s["latency_ns"]
    need(lat is not None, f'{s["svID"]}: no latency (clock_synchronised {s.get("clock_synchronised")})')
    if lat:
        need(lat["count"] == n, f'{s["svID"]}: latency of {lat["count"]} samples, want {n}')
        need(lat["min"] > 0, f'{s["svID"]}: latency min {lat["min"]} ns <= 0')
        need(lat["max"] < bound, f'{s["svID"]}: latency max {lat["max"]} ns >= {bound}')
        lat_p50.append(lat["p50"])
    need(s["latency_outliers"]["count"] == 0 and s["latency_negative"]["count"] == 0,
         f'{s["svID"]}: latency outliers {s["latency_outliers"]}, negative {s["latency_negative"]}')
need(d["sv_frames"] == pub["frames"], f'sv_frames {d["sv_frames"]} != sent {pub["frames"]}')
need(d["malformed_frames"] == 0, "malformed frames")
rx = d["source"]["rx"]
need(all(r["backend"] == backend for r in rx), "wrong back-end")
drops = sum(r["kernel_drops"] + (r["ring_full"] if backend == "af_xdp" else 0) for r in rx)
need(drops == 0, f"kernel drops {drops}")
for b in bad:
    print("  " + b)
print(f'  {rx[0]["description"]}')
print(f'  svpub sent {pub["frames"]} frames (max lateness {lag/1e3:.0f} us, {pub["overruns"]} wake-ups over one period), svsub counted {d["sv_frames"]}; '
      f'latency p50 {min(lat_p50) if lat_p50 else None}..{max(lat_p50) if lat_p50 else None} ns, '
      f'max {max(s["latency_ns"]["max"] for s in streams if s["latency_ns"]) if lat_p50 else None} ns over the 8 streams')
if bad and drops and d["sv_frames"] + drops == pub["frames"] and d["malformed_frames"] == 0 and \
        sum(s["lost"] for s in streams) <= drops and len(streams) == 8 and \
        all(s[k] == 0 for s in streams for k in ("duplicates", "out_of_order", "confrev_changes", "simulated", "errors")):
    sys.exit(75)
sys.exit(1 if bad else 0)
PY
}
attempt; rc=$?
if [ $rc -eq 75 ]; then
	echo "  svsub's socket overflowed (kernel drops) on a busy machine: one more run"
	attempt; rc=$?
fi
[ $rc -eq 77 ] && skip "publisher could not keep its rate (see above)"
[ $rc -eq 75 ] && skip "svsub was not scheduled often enough to drain its socket, twice (kernel drops, counted exactly; see above)"
[ $rc -eq 0 ] || fail "see above"
echo "PASS $NAME"

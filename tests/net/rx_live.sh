#!/bin/bash
# svsub live receive in network namespaces (rx back-ends). Usage: rx_live.sh MODE BACKEND
#   live      8 streams x 4000 frames/s for 10 s (RX_SECONDS): every frame received, 0 lost, counts exact,
#             latencies positive, XDP detached after SIGINT
#   prp       1 stream sent twice with PRP trailers on two veth pairs, svsub --interface-b: each sample once,
#             the copies discarded and counted per LAN
# BACKEND: af_xdp (native XDP on veth), af_xdp_skb (generic XDP), af_packet.
#   malformed 802.1Q-tagged streams plus crafted malformed frames (truncated, lying lengths, missing
#             mandatory fields, huge noASDU): counted by name exactly as the codec names them, no crash;
#             the tag is seen in the bytes (AF_XDP) or out of band (AF_PACKET auxdata)
# The sender is tests/bench/bench_blast (paced on CLOCK_TAI; it reports what a receiver must count).
# Needs root; exits 77 (skip) without it. PASS/FAIL/SKIP on stdout.
set -u
MODE=${1:?mode}
BACKEND=${2:-af_xdp}
NAME="rx_${MODE}_${BACKEND}"
BUILD=${SVKIT_BUILD:?SVKIT_BUILD not set}
SVSUB=$BUILD/subscriber/svsub
BLAST=$BUILD/tests/bench/bench_blast
SECS=${RX_SECONDS:-10}

skip() { echo "SKIP $NAME: $*"; exit 77; }
fail() { echo "FAIL $NAME: $*"; [ -s "$T/sub.err" ] && sed 's/^/  svsub: /' "$T/sub.err" | tail -20; exit 1; }

[ "$(id -u)" -eq 0 ] || skip "needs root (CAP_NET_ADMIN, CAP_BPF, CAP_NET_RAW)"
[ -x "$SVSUB" ] || skip "svsub not built"
[ -x "$BLAST" ] || skip "bench_blast not built"
command -v python3 >/dev/null || skip "python3 missing"

# shellcheck source=veth_pair.sh
. "$(dirname "$0")/veth_pair.sh"
veth_pair rx
if [ "$MODE" = prp ]; then
	ip link add a1 netns "$NA" type veth peer name b1 netns "$NB"
	ip -n "$NA" link set a1 up; ip -n "$NB" link set b1 up
fi

case "$BACKEND" in
af_xdp_skb) SUBARGS=(-i b0 --backend af_xdp --xdp-mode skb --json) ;;   # generic XDP
*) SUBARGS=(-i b0 --backend "$BACKEND" --json) ;;
esac
[ "$MODE" = prp ] && SUBARGS+=(--interface-b b1)
ip netns exec "$NB" "$SVSUB" "${SUBARGS[@]}" >"$T/sub.json" 2>"$T/sub.err" &
SUBPID=$!
for _ in $(seq 50); do grep -q "receiving" "$T/sub.err" 2>/dev/null && break; sleep 0.1; done
grep -q "receiving" "$T/sub.err" || fail "svsub did not start"
[ "$BACKEND" != af_packet ] && { ip -n "$NB" link show dev b0 | grep -q "xdp" || fail "no XDP program on b0 while running"; }

case "$MODE" in
live) BARGS=(-i a0 --streams 8 --rate 4000 --duration "$SECS") ;;
prp) BARGS=(-i a0 -I a1 --prp --streams 1 --rate 4000 --duration 3) ;;
malformed) BARGS=(-i a0 --streams 4 --rate 4000 --duration 3 --vlan 5 --malformed 20) ;;
*) fail "unknown mode $MODE" ;;
esac
ip netns exec "$NA" "$BLAST" "${BARGS[@]}" >"$T/tx.json" 2>"$T/tx.err" || fail "sender: $(cat "$T/tx.err" "$T/tx.json")"
sleep 0.5
kill -INT "$SUBPID"
wait "$SUBPID"; rc=$?
SUBPID=
[ $rc -eq 0 ] || fail "svsub exited with $rc after SIGINT"
ip -n "$NB" link show dev b0 | grep -q "xdp" && fail "XDP program left attached after SIGINT"

python3 - "$MODE" "$BACKEND" "$T/tx.json" "$T/sub.json" <<'PY' || fail "see above"
import json, sys
mode, backend, txf, subf = sys.argv[1:]
skb = backend == "af_xdp_skb"
backend = "af_xdp" if skb else backend
tx = json.load(open(txf)); d = json.load(open(subf))
bad = []
def need(c, msg):
    if not c: bad.append(msg)
streams = d["streams"]
n_streams = tx["streams"]
per = tx["samples_per_stream"]
need(len(streams) == n_streams, f"{len(streams)} streams, want {n_streams}")
for s in streams:
    need(s["frames"] == per and s["samples"] == per, f'{s["svID"]}: {s["frames"]} frames/{s["samples"]} samples, want {per}')
    for k in ("lost", "duplicates", "out_of_order", "confrev_changes", "simulated"):
        need(s[k] == 0, f'{s["svID"]}: {k} = {s[k]}')
    lat = s.get("latency_ns")
    if lat is not None:
        need(lat["min"] > 0, f'{s["svID"]}: latency min {lat["min"]} <= 0')
rx = d["source"]["rx"]
need(all(r["backend"] == backend for r in rx), "wrong back-end")
if backend == "af_xdp":
    need(all(r["xdp_mode"] == ("skb" if skb else "native") for r in rx), "wrong XDP mode")
need(sum(r["kernel_drops"] for r in rx) == 0, "kernel drops")
r2a = d["source"]["rx_to_app_ns"]
need(r2a is not None and r2a["min"] > 0, f"rx_to_app_ns {r2a}")
if mode == "live":
    need(d["sv_frames"] == tx["frames_sent"], f'sv_frames {d["sv_frames"]} != sent {tx["frames_sent"]}')
    need(d["malformed_frames"] == 0, "malformed frames")
    if backend == "af_xdp":
        need(rx[0]["xdp"]["redirected"] == tx["frames_sent"], f'xdp redirected {rx[0]["xdp"]["redirected"]}')
        need(rx[0]["ts_sources"]["xdp_meta"] == tx["frames_sent"], "not every frame had an XDP metadata stamp")
    else:
        need(rx[0]["ts_sources"]["kernel_sw"] == tx["frames_sent"], "not every frame had a kernel stamp")
elif mode == "prp":
    s = streams[0]; p = s["prp"]
    need(p is not None, "no PRP counters")
    if p:
        need(p["lan_a_frames"] == per and p["lan_b_frames"] == per, f"PRP frames per LAN {p}")
        need(p["lan_a_discarded"] + p["lan_b_discarded"] == per, f"PRP discarded {p}")
    need(d["sv_frames"] == 2 * per, f'sv_frames {d["sv_frames"]}, want {2*per}')
    need(len(rx) == 2 and all(r["frames"] == per for r in rx), "per-interface frame counts")
elif mode == "malformed":
    want = tx["expected_errors"]
    need(sum(want.values()) == tx["malformed_sent"] and tx["malformed_sent"] > 0, "sender crafted nothing")
    need(d["errors"] == want, f'errors {d["errors"]}, want {want}')
    need(d["malformed_frames"] == tx["malformed_sent"], f'malformed {d["malformed_frames"]} != {tx["malformed_sent"]}')
    good = tx["good_frames_sent"]
    oob = rx[0]["vlan_oob_frames"]
    if backend == "af_packet":
        # the kernel moves an in-band tag out of band before the packet taps: every good frame carries it
        need(oob["present"] == good, f"out-of-band VLAN frames {oob}, want {good} present")
    else:
        # XDP sees the tag in the bytes; the hints kfunc (native) says no out-of-band tag, SKB mode can't tell
        need(oob["present"] == 0, f"out-of-band VLAN frames {oob}")
        need(rx[0]["xdp"]["truncated"] == want.get("header_truncated", 0), f'xdp truncated {rx[0]["xdp"]["truncated"]}')
for b in bad:
    print("  " + b)
r = d["source"]["rx"][0]
print(f'  {r["description"]}')
print(f'  sent {tx["frames_sent"]} (max sender lag {tx["max_lag_ns"]/1e6:.1f} ms), sv {d["sv_frames"]}, malformed {d["malformed_frames"]}, '
      f'rx->app p50 {r2a and r2a["p50"]} ns p99 {r2a and r2a["p99"]} ns, stream latency '
      f'{"null (host clock unsynchronised)" if streams and streams[0]["latency_ns"] is None else "checked > 0"}')
sys.exit(1 if bad else 0)
PY
echo "PASS $NAME"

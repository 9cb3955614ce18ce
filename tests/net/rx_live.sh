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
#   flap      svsub --duration 6; 1 stream for 3 s, b0 taken down for ~1 s in the middle: svsub says it once
#             each way, keeps running to its --duration, exits 0, counts the outage (link_down, link_down_ns)
#             and every sample the sender could not deliver as lost (samples + lost = sent)
#   prp_flap  as flap with PRP: LAN A (b0) down for ~1 s while LAN B stays up: nothing lost, LAN B has every
#             sample, only LAN A counts an outage
#   downstart b0 down when svsub starts: "b0 is down ..., waiting", then up: every frame received, exit 0
#   gone      b0 deleted while svsub runs: it stops at once saying so, exit 1
#   appid     4 streams (APPIDs 0x4000..0x4003), svsub --appid 0x4001 --appid 0x4003: exactly those two
#             received whole, the others refused in the kernel (sv_xdp's allow-list, the socket filter)
#   cli       svsub's command line and configuration: --duration 0 (and the file's duration: 0) run until
#             SIGINT; stdout stays JSON lines when --json meets --jsonl or --app (the summary one line
#             among them); ranges (wrap 1, --umem-frames 64) refused naming the option and
#             the range, the same in --help; the end line shows the back-end's own counters only
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
if [ "$MODE" = prp ] || [ "$MODE" = prp_flap ]; then
	ip link add a1 netns "$NA" type veth peer name b1 netns "$NB"
	ip -n "$NA" link set a1 up; ip -n "$NB" link set b1 up
fi

if [ "$MODE" = cli ]; then
	CAP=$(dirname "$0")/../data/sv92le_omicron_50hz_fault_Z1_seapath.pcap
	[ -r "$CAP" ] || skip "$CAP missing"
	usage_err() { # DESCRIPTION ARGS...: exit 2, nothing on stdout
		local what=$1
		shift
		"$SVSUB" "$@" >"$T/out" 2>"$T/err"; local r=$?
		[ $r -eq 2 ] || fail "$what: exit $r, want 2 (usage)"
		[ -s "$T/out" ] && fail "$what: wrote stdout: $(head -c 200 "$T/out")"
		return 0
	}
	# stdout stays parseable: JSON lines (--jsonl, --app), the --json summary one more line among them; a
	# file's json: true with --app (a service's --json and an app in its file) runs; --jsonl replaces json
	printf 'json: true\n' >"$T/json.yaml"
	jsonl_out() { # WHAT MIN_LINES SUMMARIES TRIPS ARGS...: exit 0, stdout JSON lines, SUMMARIES summary lines
		local what=$1 min=$2 sums=$3 trips=$4
		shift 4
		"$SVSUB" "$@" >"$T/out" 2>"$T/err" || fail "$what: exit $?: $(tail -n 3 "$T/err")"
		python3 -c "
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
sums = sum(1 for o in lines if 'source' in o and 'streams' in o)
trips = sum(1 for o in lines if o.get('event') == 'trip')
ok = len(lines) >= int(sys.argv[2]) and sums == int(sys.argv[3]) and (trips > 0) == (sys.argv[4] == '1')
sys.exit(0 if ok else 1)" "$T/out" "$min" "$sums" "$trips" ||
			fail "$what: stdout is not JSON lines with $sums summary line(s) (trips: $trips): $(head -c 300 "$T/out")"
	}
	jsonl_out "--jsonl --json" 1000 1 0 --read "$CAP" --jsonl --json
	jsonl_out "--json --app" 2 1 1 --read "$CAP" --json --app overcurrent --pickup 50
	jsonl_out "json: true + --app" 2 1 1 -c "$T/json.yaml" --read "$CAP" --app overcurrent --pickup 50
	jsonl_out "--jsonl --app" 1000 0 1 --read "$CAP" --jsonl --app overcurrent --pickup 50
	jsonl_out "json: true + --jsonl" 1000 0 0 -c "$T/json.yaml" --read "$CAP" --jsonl
	# ranges: refused by name and range, the same range in --help and in a file
	usage_err "--wrap 1" --read "$CAP" --wrap 1
	grep -q -- "--wrap: 1 is out of range 0 or 2..65536" "$T/err" || fail "--wrap 1: $(cat "$T/err")"
	printf 'wrap: 1\n' >"$T/wrap.yaml"
	usage_err "wrap: 1" -c "$T/wrap.yaml" --read "$CAP"
	grep -q "wrap.yaml:1:7: wrap: 1 is out of range 0 or 2..65536" "$T/err" || fail "wrap: 1: $(cat "$T/err")"
	usage_err "--resync-run 1" --read "$CAP" --resync-run 1
	usage_err "--umem-frames 64" -i b0 --umem-frames 64
	grep -q -- "--umem-frames: 64 is out of range 0 or 256..1048576" "$T/err" ||
		fail "--umem-frames 64: $(cat "$T/err")"
	"$SVSUB" --help >"$T/help" || fail "--help"
	grep -q -- "--wrap N .*(0 or 2..65536" "$T/help" || fail "--help: wrap range"
	grep -q -- "--resync-run N .*(0 or 2..65536" "$T/help" || fail "--help: resync-run range"
	grep -q -- "--umem-frames N .*256..1048576" "$T/help" || fail "--help: umem-frames range"
	usage_err "--read --duration 0" --read "$CAP" --duration 0
	# --duration 0 = until stopped, on the command line as in the file (which it overrides)
	printf 'duration: 1\n' >"$T/dur1.yaml"
	printf 'duration: 0\n' >"$T/dur0.yaml"
	for args in "--duration 0" "-c $T/dur1.yaml --duration 0" "-c $T/dur0.yaml"; do
		# shellcheck disable=SC2086
		ip netns exec "$NB" "$SVSUB" -i b0 --backend "$BACKEND" $args >"$T/out" 2>"$T/sub.err" &
		SUBPID=$!
		sleep 2.5
		kill -0 "$SUBPID" 2>/dev/null || fail "svsub $args stopped by itself (exit $(wait "$SUBPID"; echo $?))"
		kill -INT "$SUBPID"
		wait "$SUBPID"; rc=$?
		SUBPID=
		[ $rc -eq 0 ] || fail "svsub $args: exit $rc after SIGINT"
	done
	# the last run's end line: the back-end's own counters
	grep -q "svsub: $BACKEND on b0" "$T/sub.err" || fail "no end line for $BACKEND"
	if [ "$BACKEND" = af_packet ]; then
		grep -q "fill ring empty" "$T/sub.err" && fail "af_packet end line names AF_XDP counters"
	else
		grep -q "fill ring empty" "$T/sub.err" || fail "af_xdp end line lacks its counters"
	fi
	# the reason latencies are not reported when the host clock says it is unsynchronised
	if grep -q "host clock: .*latencies will be marked unsynchronised" "$T/sub.err"; then
		ip netns exec "$NB" "$SVSUB" -i b0 --backend "$BACKEND" --duration 3 >"$T/out" 2>"$T/sub.err" &
		SUBPID=$!
		sleep 0.5
		ip netns exec "$NA" "$BLAST" -i a0 --streams 1 --rate 4000 --duration 1 >"$T/tx.json" 2>"$T/tx.err" ||
			fail "sender: $(cat "$T/tx.err")"
		wait "$SUBPID"; SUBPID=
		grep -q "latency: not reported, clock not synchronised: the host clock says it is not" "$T/out" ||
			fail "latency line does not name the host clock: $(grep latency "$T/out")"
		grep -q "0 samples with negative" "$T/out" && fail "latency line blames 0 samples"
	fi
	# samples without a latency are counted by reason (DINA: no smpRate, wrap learned after ~1 s)
	DINA=${SVKIT_SHARED:-}/captures/sv92le_60hz_vlan1_normal_dina.pcap
	if [ -r "$DINA" ]; then
		"$SVSUB" --read "$DINA" --json >"$T/out" 2>"$T/err" || fail "--read DINA"
		python3 -c "
import json, sys
s = json.load(open(sys.argv[1]))['streams'][0]
n = s['latency_ns']['count']
sys.exit(0 if s['latency_rate_unknown'] > 0 and n + s['latency_rate_unknown'] == s['samples'] else 1)" "$T/out" ||
			fail "DINA: latency count + latency_rate_unknown != samples"
		"$SVSUB" --read "$DINA" 2>/dev/null | grep -q "latency: none for [0-9]* samples before the rate was known" ||
			fail "DINA: text summary does not say why samples have no latency"
	fi
	echo "PASS $NAME"
	exit 0
fi

case "$BACKEND" in
af_xdp_skb) SUBARGS=(-i b0 --backend af_xdp --xdp-mode skb --json) ;;   # generic XDP
*) SUBARGS=(-i b0 --backend "$BACKEND" --json) ;;
esac
case "$MODE" in prp | prp_flap) SUBARGS+=(--interface-b b1) ;; esac
[ "$MODE" = appid ] && SUBARGS+=(--appid 0x4001 --appid 0x4003)
# flap, downstart: svsub stops by itself at its --duration, whatever the link did meanwhile
SUBDUR=6
case "$MODE" in flap | prp_flap | downstart) SUBARGS+=(--duration "$SUBDUR") ;; esac
[ "$MODE" = downstart ] && ip -n "$NB" link set b0 down
t0=$(date +%s.%N)
rm -f "$T/sub.ready"
ip netns exec "$NB" "$SVSUB" "${SUBARGS[@]}" --ready-file "$T/sub.ready" >"$T/sub.json" 2>"$T/sub.err" &
SUBPID=$!
# ready once every interface is open (with PRP both LANs: a sender started earlier loses LAN B's first frames)
wait_ready_file "$T/sub.ready" "$SUBPID" || fail "svsub did not start"
[ "$BACKEND" != af_packet ] && { ip -n "$NB" link show dev b0 | grep -q "xdp" || fail "no XDP program on b0 while running"; }

# Waits up to $1 s for svsub to exit by itself; sets rc.
sub_exit_within() {
	for _ in $(seq $(($1 * 10))); do kill -0 "$SUBPID" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$SUBPID" 2>/dev/null && fail "svsub still running $1 s later"
	wait "$SUBPID"; rc=$?
	SUBPID=
}

case "$MODE" in
live) BARGS=(-i a0 --streams 8 --rate 4000 --duration "$SECS") ;;
prp | prp_flap) BARGS=(-i a0 -I a1 --prp --streams 1 --rate 4000 --duration 3) ;;
malformed) BARGS=(-i a0 --streams 4 --rate 4000 --duration 3 --vlan 5 --malformed 20) ;;
appid) BARGS=(-i a0 --streams 4 --rate 4000 --duration 3 --appid-base 0x4000) ;;
flap | downstart) BARGS=(-i a0 --streams 1 --rate 4000 --duration 3) ;;
gone)
	sleep 0.5
	ip -n "$NB" link del b0 || fail "cannot delete b0"
	sub_exit_within 3
	[ $rc -eq 1 ] || fail "svsub exited with $rc when its interface was deleted, want 1"
	grep -q "b0: interface gone" "$T/sub.err" || fail "no 'b0: interface gone' on stderr"
	grep -q "^{" "$T/sub.json" || fail "no JSON summary after the interface was deleted"
	sed 's/^/  /' "$T/sub.err" | grep -E "gone|rx|ifindex"
	echo "PASS $NAME"
	exit 0
	;;
*) fail "unknown mode $MODE" ;;
esac
if [ "$MODE" = downstart ]; then
	sleep 0.5
	grep -q "b0 is down (administratively down), waiting" "$T/sub.err" || fail "no 'b0 is down ..., waiting' at start"
	kill -0 "$SUBPID" 2>/dev/null || fail "svsub stopped on an interface that is down"
	ip -n "$NB" link set b0 up
	sleep 0.5
fi
case "$MODE" in
flap | prp_flap)
	ip netns exec "$NA" "$BLAST" "${BARGS[@]}" >"$T/tx.json" 2>"$T/tx.err" &
	TXPID=$!
	sleep 1
	ip -n "$NB" link set b0 down
	sleep 1
	ip -n "$NB" link set b0 up
	wait "$TXPID" # nonzero: frames it could not send while the link was down (its send_errors)
	grep -q frames_sent "$T/tx.json" || fail "sender: $(cat "$T/tx.err" "$T/tx.json")"
	;;
*) ip netns exec "$NA" "$BLAST" "${BARGS[@]}" >"$T/tx.json" 2>"$T/tx.err" || fail "sender: $(cat "$T/tx.err" "$T/tx.json")" ;;
esac
sleep 0.5
case "$MODE" in
flap | prp_flap | downstart)
	sub_exit_within $((SUBDUR + 5))
	[ $rc -eq 0 ] || fail "svsub exited with $rc, want 0 at the end of its --duration"
	ran=$(python3 -c "import time; print(round(time.time() - $t0, 2))")
	python3 -c "import sys; sys.exit(0 if $ran >= $SUBDUR - 0.5 else 1)" ||
		fail "svsub stopped after $ran s, before its --duration $SUBDUR"
	;;
*)
	kill -INT "$SUBPID"
	wait "$SUBPID"; rc=$?
	SUBPID=
	[ $rc -eq 0 ] || fail "svsub exited with $rc after SIGINT"
	;;
esac
ip -n "$NB" link show dev b0 | grep -q "xdp" && fail "XDP program left attached after svsub stopped"
if [ "$MODE" = flap ] || [ "$MODE" = prp_flap ]; then
	# once per transition, not per frame or per check
	n_down=$(grep -c "b0.* is down" "$T/sub.err"); n_up=$(grep -c "b0.*: link up again" "$T/sub.err")
	[ "$n_down" -eq 1 ] && [ "$n_up" -eq 1 ] || fail "b0 down said $n_down times, up again $n_up times (want 1, 1)"
	grep -q "b1.* is down" "$T/sub.err" && fail "LAN B said down"
	grep -E "is down|up again|link down" "$T/sub.err" | sed 's/^/  /'
fi

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
if mode == "appid":  # only the allowed APPIDs, in the kernel
    n_streams = 2
    need(sorted(s["appid"] for s in streams) == [0x4001, 0x4003], f'APPIDs {[s["appid"] for s in streams]}')
    need(d["sv_frames"] == 2 * per, f'sv_frames {d["sv_frames"]}, want {2 * per}: the filter let others through')
need(len(streams) == n_streams, f"{len(streams)} streams, want {n_streams}")
for s in streams:
    if mode == "flap":  # the outage: what the sender sent while b0 was down is lost, the rest received
        # exact: every sample either received or counted lost; received = what the sender got out, but
        # for a few in flight when b0 went down
        need(s["samples"] + s["lost"] == per, f'{s["svID"]}: {s["samples"]} samples + {s["lost"]} lost != {per} sent')
        need(tx["frames_sent"] - 16 <= s["samples"] <= tx["frames_sent"],
             f'{s["svID"]}: {s["samples"]} samples, the sender got {tx["frames_sent"]} out')
        need(s["lost"] >= 2000, f'{s["svID"]}: lost {s["lost"]}, want the ~1 s outage (>= 2000 at 4000/s)')
    else:
        need(s["frames"] == per and s["samples"] == per, f'{s["svID"]}: {s["frames"]} frames/{s["samples"]} samples, want {per}')
    for k in ("lost", "duplicates", "out_of_order", "confrev_changes", "simulated"):
        if k != "lost" or mode != "flap":
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
if mode == "appid" and backend == "af_xdp":
    need(rx[0]["xdp"]["not_allowed"] == 2 * per, f'xdp not_allowed {rx[0]["xdp"]["not_allowed"]}, want {2 * per}')
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
elif mode == "prp_flap":
    s = streams[0]; p = s["prp"]
    need(p is not None and p["lan_b_frames"] == per, f"LAN B frames {p}, want {per}: it stayed up")
    need(p is not None and 0 < p["lan_a_frames"] <= per - 2000, f"LAN A frames {p}, want the ~1 s outage")
    need(len(rx) == 2 and rx[1]["frames"] == per and rx[1]["link_down"] == 0, "LAN B: every frame, no outage")
if mode in ("flap", "prp_flap"):
    need(rx[0]["link_down"] == 1, f'b0 link_down {rx[0]["link_down"]}, want 1')
    need(0.5e9 <= rx[0]["link_down_ns"] <= 3e9, f'b0 link_down_ns {rx[0]["link_down_ns"]}, want ~1 s')
if mode == "downstart":
    need(rx[0]["link_down"] == 1 and rx[0]["link_down_ns"] >= 0.3e9, f'link_down {rx[0]["link_down"]} / {rx[0]["link_down_ns"]} ns at start')
    need(d["sv_frames"] == tx["frames_sent"], f'sv_frames {d["sv_frames"]} != sent {tx["frames_sent"]}')
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

#!/bin/bash
# svpub live on a veth pair in a network namespace (label net, root): configs/pub-seapath-8x4000.yaml,
# 8 streams x 4000 frames/s for 5 s. dumpcap on the peer captures; every frame of every stream must be
# there with continuous smpCnt (wrapping 3999 -> 0), and the record file must hold a software TX
# timestamp for every frame, in order per stream. SKIP when the capture itself cannot keep up.
# Argument "af_xdp": the same through the AF_XDP back-end (copy mode), whose stamps are XDP TX metadata
# (xdp_meta; SKIP where the kernel lacks it, Linux < 6.8).
# First, one stream started mid-second (paced runs start at the current smpCnt): streams[0].count=100 sends
# exactly 100 frames, count=5000 exactly 5000 (svpub's JSON, its records and the peer's capture agree), and
# a quality event at 0.5 s for 0.1 s flags exactly the 400 frames 2000..2399 after the first one sent.
set -u
# shellcheck source=wait_ready.sh
. "$(dirname "$0")/wait_ready.sh"
MODE=${1:-af_packet}
case $MODE in
af_packet) BACKEND=(); WANT_TS=software ;;
af_xdp) BACKEND=(-x); WANT_TS=xdp_meta ;;
*) echo "usage: pub_live_8x4000.sh [af_packet|af_xdp]"; exit 2 ;;
esac
BUILD=${SVKIT_BUILD:-build}
SRC=${SVKIT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
SVPUB=$BUILD/publisher/svpub
CHECK=$BUILD/tests/net/pub_rec_check
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (netns, veth)"; exit 77; }
command -v dumpcap >/dev/null && command -v tshark >/dev/null || { echo "SKIP: dumpcap/tshark missing"; exit 77; }
[ -x "$SVPUB" ] && [ -x "$CHECK" ] || { echo "FAIL: svpub or pub_rec_check not built"; exit 1; }
NS=svpub$$
TMP=$(mktemp -d /tmp/pub_live.XXXXXX)
cleanup() {
	[ -n "${CAP_PID:-}" ] && kill "$CAP_PID" 2>/dev/null
	ip netns del "$NS" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
ip netns add "$NS" || { echo "SKIP: cannot create a netns"; exit 77; }
ip -n "$NS" link add pa$$ type veth peer name pb$$ || { echo "SKIP: cannot create veth"; exit 77; }
ip -n "$NS" link set pa$$ up
ip -n "$NS" link set pb$$ up
capture_start() { # FILE
	: >"$TMP/dumpcap.err"	# emptied before the start: wait_ready.sh
	ip netns exec "$NS" dumpcap -q -i pb$$ -B 64 -s 256 -f "ether proto 0x88ba or vlan" -w "$1" \
		2>"$TMP/dumpcap.err" &
	CAP_PID=$!
	wait_ready "$TMP/dumpcap.err" "Capturing on" "$CAP_PID"
}
capture_stop() {
	sleep 0.5
	kill -INT "$CAP_PID"; wait "$CAP_PID" 2>/dev/null; CAP_PID=
}
mid_second() { python3 -c 'import time; time.sleep((0.5 - time.time() % 1) % 1)'; }

# --- count and events, one stream, from the middle of a second ---
ip netns exec "$NS" "$SVPUB" "${BACKEND[@]}" -i pa$$ -s 'streams[0].count=100' -q --json >"$TMP/c100.json" \
	2>"$TMP/c100.err" || { echo "FAIL: svpub count=100 exited $?"; cat "$TMP/c100.err"; exit 1; }
capture_start "$TMP/count.pcap"
mid_second
ip netns exec "$NS" "$SVPUB" "${BACKEND[@]}" -i pa$$ -r "$TMP/count.rec" -q --json -s 'streams[0].count=5000' \
	-s 'streams[0].signal.events[0].type=quality' -s 'streams[0].signal.events[0].at=0.5' \
	-s 'streams[0].signal.events[0].duration=0.1' >"$TMP/c5000.json" 2>"$TMP/c5000.err"
rc=$?
capture_stop
[ $rc -eq 0 ] || { echo "FAIL: svpub count=5000 exited $rc"; cat "$TMP/c5000.err"; exit 1; }
tshark -r "$TMP/count.pcap" -o sv.decode_data_as_phsmeas:TRUE -T fields -E separator=';' -e sv.svID -e sv.smpCnt \
	-e sv.meas_quality >"$TMP/count.txt" 2>/dev/null
python3 - "$TMP/c100.json" "$TMP/c5000.json" "$TMP/count.txt" <<'PY' || exit 1
import json, sys
c100, c5000 = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
errs = []
for want, s in ((100, c100), (5000, c5000)):
    per = s["per_stream"][0]
    if s["frames"] != want or per["frames"] != want:
        errs.append(f"count={want}: svpub sent {s['frames']} frames (stream {per['svID']}: {per['frames']})")
rows = [l.rstrip("\n").split(";") for l in open(sys.argv[3])]
rows = [r for r in rows if r[0] == "svpub01"]
cnt = [int(r[1]) for r in rows]
flagged = [i for i, r in enumerate(rows) if any(int(q, 0) for q in r[2].split(","))]
if len(rows) != 5000:
    errs.append(f"count=5000: the peer captured {len(rows)} frames")
elif any(b != (a + 1) % 4000 for a, b in zip(cnt, cnt[1:])):
    errs.append("count=5000: smpCnt not continuous in the capture")
elif cnt[0] == 0:
    errs.append("the run started at smpCnt 0: not mid-second, the test proves nothing")
elif len(flagged) != 400 or flagged[0] != 2000 or flagged[-1] != 2399:
    errs.append(f"quality event at 0.5 s for 0.1 s: {len(flagged)} frames flagged, "
                f"{flagged[:1]}..{flagged[-1:]} after the first one sent; 400 expected, 2000..2399")
if errs:
    print("FAIL: " + "; ".join(errs)); sys.exit(1)
print(f"count: exactly 100 and 5000 frames from smpCnt {cnt[0]}; the quality event flags frames 2000..2399 of the run")
PY
# (without XDP TX metadata the af_xdp run SKIPs below)
if [ "$MODE" = af_packet ] || grep -q '"tx_timestamp_source":"xdp_meta"' "$TMP/c5000.json"; then
	"$CHECK" "$TMP/count.rec" 1 5000 $WANT_TS || exit 1
fi

# --- 8 streams x 4000 frames/s for 5 s ---
capture_start "$TMP/cap.pcap"
ip netns exec "$NS" "$SVPUB" -c "$SRC/configs/pub-seapath-8x4000.yaml" "${BACKEND[@]}" -i pa$$ -d 5 -r "$TMP/pub.rec" \
	-s priority=20 -q --json >"$TMP/sum.json" 2>"$TMP/svpub.err"
rc=$?
capture_stop
[ $rc -eq 0 ] || { echo "FAIL: svpub exited $rc"; cat "$TMP/svpub.err"; exit 1; }
if [ "$MODE" = af_xdp ] && ! grep -q '"tx_timestamp_source":"xdp_meta"' "$TMP/sum.json"; then
	echo "SKIP: no XDP TX metadata stamps here: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["tx_timestamp_detail"])' "$TMP/sum.json")"
	exit 77
fi
grep -q "Packets received/dropped" "$TMP/dumpcap.err" && dropped=$(sed -n 's/.*dropped on interface.*: \([0-9]*\).*/\1/p;s/.*Packets received\/dropped on interface .*: [0-9]*\/\([0-9]*\).*/\1/p' "$TMP/dumpcap.err" | tail -1)
tshark -r "$TMP/cap.pcap" -T fields -E separator=';' -e sv.svID -e sv.smpCnt >"$TMP/f.txt" 2>/dev/null
python3 - "$TMP/f.txt" "$TMP/sum.json" "${dropped:-0}" <<'PY'
import json, sys
s = json.load(open(sys.argv[2])); dropped = int(sys.argv[3] or 0)
want_streams = [f"SEAPATH_MU{i:02d}" for i in range(1, 9)]
if s["frames"] != 8 * 20000:
    print(f"FAIL: svpub sent {s['frames']} frames, {8*20000} expected (late {s['late']} skipped {s['skipped']})"); sys.exit(1)
seen = {}
for l in open(sys.argv[1]):
    svid, cnt = l.rstrip("\n").split(";")
    seen.setdefault(svid, []).append(int(cnt))
errs = []
for sv in want_streams:
    c = seen.get(sv, [])
    gaps = sum(1 for a, b in zip(c, c[1:]) if b != (a + 1) % 4000)
    if len(c) != 20000 or gaps:
        errs.append(f"{sv}: {len(c)} frames, {gaps} discontinuities")
if set(seen) - set(want_streams):
    errs.append(f"unexpected svIDs {sorted(set(seen) - set(want_streams))}")
if errs and dropped:
    print(f"SKIP: dumpcap dropped {dropped} frames: the capture cannot keep up on this machine ({'; '.join(errs[:3])})"); sys.exit(77)
if errs:
    print("FAIL: " + "; ".join(errs)); sys.exit(1)
print(f"capture: 8 streams x 20000 frames, smpCnt continuous; svpub late {s['late']}, "
      f"wake-up p99 {s['lateness_ns']['p99']} ns, TX stamps {s['tx_timestamp_source']}")
PY
rc=$?
[ $rc -eq 0 ] || exit $rc
"$CHECK" "$TMP/pub.rec" 8 20000 $WANT_TS || exit 1
echo "PASS: live 8 x 4000 frames/s for 5 s ($MODE), every frame captured in order, TX stamps ($WANT_TS) present and ordered; count and event times from the first frame sent"

#!/bin/bash
# svpub through a link that drops for ~1 s and comes back (label fault, root). svpub publishes 2 streams x
# 4000 frames/s on one end of a veth pair with --record and --json while the link drops:
#   peer_down      the far end is set down, then up (`ip link set dev PEER down`: carrier loss, issue 27);
#   peer_counted   the same with af_packet.ts_key=counted (the key arithmetic of kernels before 6.13);
#   peer_moved     the far end moves to another namespace (down on the way) and is set up there;
#   near_down      svpub's own end is set down, then up (ENETDOWN: counted as outage);
#   down_at_start  svpub's own end is down when it starts (how stamps name frames is settled once it is up).
# Checked in each:
#   - refused frames are counted and said: tx_errors + outage in the JSON summary equal the frames the records
#     mark refused (dropped, reason tx error), and the final statistics say the same; a carrier loss is a
#     warning naming the errno (ENOBUFS) and "no carrier" as it starts, at most one a second, and "stopped"
#     with the count;
#   - stamps resume: every frame sent after the link is back carries a kernel software stamp (ts_src software),
#     none "user" but a bounded few right at the return; every frame before the drop too.
set -u
BUILD=${SVKIT_BUILD:-build}
SRC=${SVKIT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
SVPUB=$BUILD/publisher/svpub
SVREPORT=$BUILD/report/svreport
# shellcheck source=../net/wait_ready.sh
. "$SRC/tests/net/wait_ready.sh"
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (netns, veth)"; exit 77; }
for t in "$SVPUB" "$SVREPORT"; do [ -x "$t" ] || { echo "FAIL: $t not built"; exit 1; }; done
NS=pflap$$
NS2=pflapb$$
TMP=$(mktemp -d /tmp/pub_link_flap.XXXXXX)
PID=
cleanup() {
	[ -n "$PID" ] && kill "$PID" 2>/dev/null
	ip netns del "$NS" 2>/dev/null
	ip netns del "$NS2" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
ip netns add "$NS" || { echo "SKIP: cannot create a netns"; exit 77; }
ip netns add "$NS2" || { echo "SKIP: cannot create a netns"; exit 77; }
fails=0

run() { # NAME HOW [svpub options...]: one run with one link drop
	local name=$1 how=$2 rc
	shift 2
	ip -n "$NS" link del fa 2>/dev/null
	ip -n "$NS2" link del fb 2>/dev/null
	ip -n "$NS" link add fa type veth peer name fb || { echo "SKIP: cannot create veth"; exit 77; }
	ip -n "$NS" link set fa up
	ip -n "$NS" link set fb up
	[ "$how" = start ] && ip -n "$NS" link set fa down
	rm -f "$TMP/$name.ready"
	ip netns exec "$NS" "$SVPUB" -i fa -d 5 -q --json -r "$TMP/$name.rec" -s 'streams[1].profile=9-2le-50hz' \
		--ready-file "$TMP/$name.ready" "$@" >"$TMP/$name.json" 2>"$TMP/$name.err" &
	PID=$!
	wait_ready_file "$TMP/$name.ready" "$PID" || { echo "FAIL: $name: svpub did not start: $(cat "$TMP/$name.err")"; exit 1; }
	sleep 1.5
	case $how in
	peer) ip -n "$NS" link set fb down; sleep 1; ip -n "$NS" link set fb up ;;
	moved) ip -n "$NS" link set fb netns "$NS2"; sleep 1; ip -n "$NS2" link set fb up ;;
	near) ip -n "$NS" link set fa down; sleep 1; ip -n "$NS" link set fa up ;;
	start) ip -n "$NS" link set fa up ;;
	esac
	wait "$PID"; rc=$?
	PID=
	[ $rc -eq 0 ] || { echo "FAIL: $name: svpub exited $rc: $(tail -5 "$TMP/$name.err")"; fails=$((fails + 1)); return; }
	"$SVREPORT" -q --csv "$TMP/$name.csv" "$TMP/$name.rec" 2>"$TMP/$name.report.err" ||
		{ echo "FAIL: $name: svreport: $(cat "$TMP/$name.report.err")"; fails=$((fails + 1)); return; }
	python3 - "$name" "$how" "$TMP/$name.json" "$TMP/$name.err" "$TMP/$name.csv" <<'PY' || fails=$((fails + 1))
import csv, json, re, sys
name, how, jpath, epath, cpath = sys.argv[1:6]
s = json.load(open(jpath))
err = open(epath).read()
bad = []
refused = s["tx_errors"] + s["outage"]
# what the records say, per stream in frame order (seq = frame index)
frames = {}
for r in csv.DictReader(open(cpath)):
    if r["point"] != "T0":
        continue
    frames.setdefault(r["stream"], []).append(r)
rec_refused = sum(1 for fs in frames.values() for r in fs if "dropped" in r["flags"].split("|") and r["reason"] == "32771")
if refused < 2 * 4000 // 2:
    bad.append(f"only {refused} frames refused ({s['tx_errors']} tx errors, {s['outage']} outage): the link was down ~1 s")
if rec_refused != refused:
    bad.append(f"the records mark {rec_refused} frames refused, the summary counts {refused} "
               f"({s['tx_errors']} tx errors + {s['outage']} outage)")
m = re.search(r"^svpub: \d+ frames in .* outage (\d+), tx errors (\d+),", err, re.M)
if not m or int(m.group(1)) != s["outage"] or int(m.group(2)) != s["tx_errors"]:
    bad.append(f"final statistics line disagrees with the JSON: {m.group(0) if m else 'missing'}")
if how in ("peer", "moved"):
    if s["tx_errors"] == 0 or s.get("tx_errors_by_errno") != {"ENOBUFS": s["tx_errors"]}:
        bad.append(f"carrier loss: tx_errors {s['tx_errors']}, by errno {s.get('tx_errors_by_errno')}: ENOBUFS expected")
    msgs = [l for l in err.splitlines() if "transmit errors on fa" in l]
    if not msgs or "ENOBUFS" not in msgs[0] or "no carrier" not in msgs[0]:
        bad.append(f"no warning naming ENOBUFS and the lost carrier when the frames were first refused: {msgs[:1]}")
    stop = [l for l in msgs if "stopped:" in l]
    if len(stop) != 1 or f"stopped: {s['tx_errors']} frames refused" not in stop[0]:
        bad.append(f"no 'stopped' message with the count {s['tx_errors']}: {stop}")
    if len(msgs) > 5:
        bad.append(f"{len(msgs)} messages about transmit errors for a ~1 s drop (rate limit: one a second)")
if how == "start" and ("keys not known yet" not in err or "TX timestamps on fa: keys " not in err):
    bad.append("down at start: the keys were not said to be settled once the interface came up")
# stamps before and after the drop, per stream
after_user = after = before_user = late_user = 0
for sid, fs in frames.items():
    fs.sort(key=lambda r: int(r["seq"]))
    drops = [int(r["seq"]) for r in fs if "dropped" in r["flags"].split("|")]
    if not drops:
        bad.append(f"stream {sid}: no refused frame in the records")
        continue
    first, last = min(drops), max(drops)
    for r in fs:
        seq, sent = int(r["seq"]), "dropped" not in r["flags"].split("|")
        if not sent:
            continue
        if seq < first:
            before_user += r["ts_src"] != "software"
        elif seq > last:
            after += 1
            if r["ts_src"] != "software":
                after_user += 1
                if seq > last + 20:  # 5 ms of frames after the last refused one
                    late_user += 1
if after < 2 * 4000:
    bad.append(f"only {after} frames recorded after the link came back (~2.5 s x 8000 expected)")
if before_user:
    bad.append(f"{before_user} frames before the drop without a kernel software stamp")
if late_user or after_user > 4:
    bad.append(f"{after_user} of {after} frames sent after the link came back are not stamped by the kernel "
               f"({late_user} more than 20 frames after the last refused one): the stamps did not resume")
if s["tx_timestamps_missing"] != before_user + after_user:
    bad.append(f"tx_timestamps_missing {s['tx_timestamps_missing']} != {before_user + after_user} unstamped frames")
for b in bad:
    print(f"FAIL: {name}: {b}")
if bad:
    sys.exit(1)
print(f"PASS: {name}: {s['tx_errors']} tx errors ({s.get('tx_errors_by_errno')}) + {s['outage']} outage = the "
      f"{rec_refused} frames the records mark refused; {after} frames after the link came back, {after_user} "
      f"without a kernel stamp; {s['tx_timestamp_detail']}")
PY
}

# The qdisc path (qdisc_bypass false): with the peer down the kernel takes the frames without an error and
# drops them in the qdisc; only the missing stamps tell, so svpub says so (with the lost carrier) and again
# when they return.
run_qdisc() {
	local name=qdisc_peer_down rc
	ip -n "$NS" link del fa 2>/dev/null
	ip -n "$NS" link add fa type veth peer name fb || { echo "SKIP: cannot create veth"; exit 77; }
	ip -n "$NS" link set fa up
	ip -n "$NS" link set fb up
	rm -f "$TMP/$name.ready"
	ip netns exec "$NS" "$SVPUB" -i fa -d 5 -q --json -s af_packet.qdisc_bypass=false \
		-s 'streams[1].profile=9-2le-50hz' --ready-file "$TMP/$name.ready" >"$TMP/$name.json" 2>"$TMP/$name.err" &
	PID=$!
	wait_ready_file "$TMP/$name.ready" "$PID" || { echo "FAIL: $name: svpub did not start: $(cat "$TMP/$name.err")"; exit 1; }
	sleep 1.5
	ip -n "$NS" link set fb down; sleep 1; ip -n "$NS" link set fb up
	wait "$PID"; rc=$?
	PID=
	[ $rc -eq 0 ] || { echo "FAIL: $name: svpub exited $rc: $(tail -5 "$TMP/$name.err")"; fails=$((fails + 1)); return; }
	python3 - "$name" "$TMP/$name.json" "$TMP/$name.err" <<'PY' || fails=$((fails + 1))
import json, sys
name, jpath, epath = sys.argv[1:4]
s, err = json.load(open(jpath)), open(epath).read()
miss = [l for l in err.splitlines() if "transmit stamps on fa:" in l]
bad = []
if s["tx_timestamps_missing"] < 4000:
    bad.append(f"only {s['tx_timestamps_missing']} stamps missing for ~1 s without carrier at 8000 frames/s")
if not miss or "no carrier" not in miss[0] or "tx_ts_missing" not in miss[0]:
    bad.append(f"no warning naming the missing stamps and the lost carrier: {miss[:1]}")
if not any("arriving again" in l for l in miss):
    bad.append(f"the stamps' return was not said: {miss}")
if len(miss) > 3:
    bad.append(f"{len(miss)} messages for one ~1 s drop")
for b in bad:
    print(f"FAIL: {name}: {b}")
if bad:
    sys.exit(1)
print(f"PASS: {name}: {s['tx_timestamps_missing']} frames dropped silently by the qdisc without carrier, said: {miss[0]}")
PY
}

run peer_down peer
run peer_counted peer -s af_packet.ts_key=counted
run peer_moved moved
run near_down near
run down_at_start start
run_qdisc
[ $fails -eq 0 ] || { echo "FAIL: $fails of 6 link drops"; exit 1; }
echo "PASS: svpub through 6 kinds of link drop: refused frames counted, reported and recorded alike; stamps resume"

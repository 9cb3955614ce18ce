#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Bad requests to svsub's metrics port never stall its packet path nor crash it (issue 32; label fault, root).
# svpub (configs/pub-seapath-8x4000.yaml: 8 streams x 4000 frames/s) -> veth -> svsub (AF_PACKET, SCHED_FIFO,
# --metrics 127.0.0.1:9462 in its namespace). While the traffic runs, metrics_abuse.py, in svsub's namespace,
# sends 200 requests for wrong paths, 50 POSTs, 5 requests with 100 kB headers, trickles one request for 12 s while
# scraping, and opens 1000 connections at once. Checked: svsub lost no sample and dropped no frame (its summary),
# received every frame svpub sent, exited 0 on SIGINT after a scrape of its final totals; it counted the abuse
# (svkit_metrics_http_requests_total by code, refused connections, deadline closes) and its final scrape equals its
# summary. Prints PASS/FAIL/SKIP; exit 0, 1 or 77.
set -u
NAME=metrics_abuse
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=${SVKIT_SRC:-$(cd "$HERE/../.." && pwd)}
BUILD=${SVKIT_BUILD:-$SRC/build}
SVPUB=$BUILD/publisher/svpub
SVSUB=$BUILD/subscriber/svsub
CONF=$SRC/configs/pub-seapath-8x4000.yaml
SECS=${METRICS_ABUSE_SECONDS:-50}
skip() { echo "SKIP $NAME: $*"; exit 77; }
fail() { echo "FAIL $NAME: $*"; for f in sub pub abuse; do [ -s "$T/$f.err" ] && sed "s/^/  $f: /" "$T/$f.err" | tail -8; done; exit 1; }
[ "$(id -u)" = 0 ] || skip "needs root (netns, veth)"
for b in "$SVPUB" "$SVSUB"; do [ -x "$b" ] || skip "$b not built"; done
command -v python3 >/dev/null || skip "python3 missing"
# shellcheck source=../net/veth_pair.sh
. "$SRC/tests/net/veth_pair.sh"
veth_pair mab
ip -n "$NB" link set lo up

RT=()
command -v chrt >/dev/null && RT=(chrt -f 10)
rm -f "$T/sub.ready"
ip netns exec "$NB" "${RT[@]}" "$SVSUB" -i b0 --backend af_packet --clock-trusted --json --metrics 127.0.0.1:9462 \
	--metrics-linger 30 --ready-file "$T/sub.ready" >"$T/sub.json" 2>"$T/sub.err" &
SUBPID=$!
wait_ready_file "$T/sub.ready" "$SUBPID" || fail "svsub did not start"
ip netns exec "$NA" "$SVPUB" -c "$CONF" --interface a0 --duration "$SECS" -s priority=20 --json -q >"$T/pub.json" \
	2>"$T/pub.err" &
PUBPID=$!
sleep 2
ip netns exec "$NB" python3 "$HERE/metrics_abuse.py" 127.0.0.1 9462 >"$T/abuse.out" 2>"$T/abuse.err"
arc=$?
cat "$T/abuse.out" | grep -v '^abuse '
[ $arc = 0 ] || fail "the abuse client saw a failure"
kill -0 "$SUBPID" 2>/dev/null && echo "PASS: svsub alive after the abuse" || fail "svsub died during the abuse"
wait "$PUBPID" || fail "svpub exited with $?"
sleep 0.5
# the final scrape (svsub lingers until it is taken), then the summary
kill -INT "$SUBPID"
ip netns exec "$NB" python3 - <<'PY' >"$T/final.out" 2>&1 || { cat "$T/final.out"; fail "no final scrape"; }
import sys, time, urllib.request
for _ in range(200):
    try:
        t = urllib.request.urlopen("http://127.0.0.1:9462/metrics", timeout=2).read().decode()
        if "\nsvkit_run_finished 1\n" in t:
            print(t)
            sys.exit(0)
    except OSError:
        pass
    time.sleep(0.1)
sys.exit(1)
PY
wait "$SUBPID" || fail "svsub exited with $? after SIGINT"
SUBPID=
python3 - "$T" "$NAME" <<'PY'
import json, re, sys
t = sys.argv[1]
j, p = json.load(open(f"{t}/sub.json")), json.load(open(f"{t}/pub.json"))
want = json.loads([l for l in open(f"{t}/abuse.out") if l.startswith("abuse ")][0][6:])
s = {}
for ln in open(f"{t}/final.out"):
    if ln and not ln.startswith("#") and " " in ln:
        k, _, v = ln.strip().rpartition(" ")
        s[k] = float(v)
bad = []
lost = sum(st["lost"] for st in j["streams"])
rx = j["source"]["rx"][0]
frames = sum(st["frames"] for st in j["streams"])
print(f"  svpub sent {p['frames']} frames, svsub received {frames} in {len(j['streams'])} streams: lost {lost}, "
      f"kernel drops {rx['kernel_drops']}")
if frames + rx["kernel_drops"] != p["frames"]:
    bad.append(f"{p['frames'] - frames - rx['kernel_drops']} frames svpub sent are not accounted for")
if want["abuse_drops"] and want["quiet_drops"]:
    print(f"SKIP {sys.argv[2]}: the machine is too busy to judge: svsub's socket overflowed without abuse too "
          f"({want['quiet_drops']:.0f} in the quiet phase, {want['abuse_drops']:.0f} during the abuse)")
    sys.exit(77)
if want["abuse_drops"]:
    bad.append(f"the packet path dropped {want['abuse_drops']:.0f} frames during the abuse, none without it")
c = {code: s.get(f'svkit_metrics_http_requests_total{{code="{code}"}}', -1) for code in ("200", "404", "405")}
refused = s.get('svkit_metrics_http_connections_total{result="refused"}', -1)
closes = s.get("svkit_metrics_http_deadline_closes_total", -1)
print(f"  svsub counted: requests {c}, {refused:.0f} connections refused, {closes:.0f} deadline closes")
if c["404"] != want["404"] or c["405"] != want["405"] or refused < 1 or closes < 1:
    bad.append("the abuse is not counted as it happened")
for st in j["streams"]:
    k = 'svkit_sub_frames_total{svid="%s",appid="0x%04x"}' % (st["svID"], st["appid"])
    if s.get(k) != st["frames"]:
        bad.append(f"final scrape {k} {s.get(k)} != {st['frames']}")
for b in bad:
    print("FAIL: " + b)
if not bad:
    print("PASS: no sample lost, no frame dropped while the metrics port was abused; the abuse counted; the final "
          "scrape equals the summary")
sys.exit(1 if bad else 0)
PY
prc=$?
[ $prc = 77 ] && exit 77
[ $prc = 0 ] || exit 1
echo "PASS $NAME"

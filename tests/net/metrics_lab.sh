#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A real Prometheus scrapes the lab's tools (issue 32, phase 2; label net, root): svpub in the publisher namespace,
# svtrace on the hypervisor (root namespace, --netns H) and svsub in each of the two guests, all with --metrics and
# --metrics-linger. Prometheus (Debian's, tests/interop/prom_lib.sh) runs in the root namespace on the loopback and
# reaches the tools in the namespaces over a management network: a veth pair from the root namespace to each of
# them, with its own /30 (what a cluster does with its management VLAN). ~60 s of traffic (METRICS_LAB_SECONDS);
# guest 1's port is taken down for 3 s in the middle. Checks:
#   - every target up; the loss alert SvkitSamplesLost fires for guest 1's streams, not guest 2's;
#   - after the end (each tool lingers until a scrape of its final totals), the totals Prometheus holds equal the
#     tools' JSON summaries exactly: svsub per stream (frames, samples, lost, duplicates, out of order), svtrace per
#     port and hop (frames, missing, dropped) and per stream, svpub per stream;
#   - histogram_quantile(0.99) of svtrace's T1-T2b hop toward guest 2 over the run agrees with svreport's p99 of
#     that hop (from svtrace's record) within the exported bucket that holds it;
#   - every Grafana dashboard query runs on this Prometheus without error and returns series (the svtrace drops by
#     reason only if the run dropped frames).
# Prints PASS/FAIL/SKIP; exit 0, 1 or 77.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
export SVKIT_SRC=${SVKIT_SRC:-$(cd "$HERE/../.." && pwd)}
export SVKIT_BUILD=${SVKIT_BUILD:-$SVKIT_SRC/build}
SECS=${METRICS_LAB_SECONDS:-60}
. "$HERE/svtrace_lib.sh"
. "$SVKIT_SRC/tests/interop/prom_lib.sh"
TMP=$(mktemp -d /tmp/metrics_lab.XXXXXX)
rc=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; rc=1; }
die() { echo "FAIL: $*"; for f in "$TMP"/*.err; do [ -s "$f" ] && { echo "--- $f"; tail -5 "$f"; }; done; exit 1; }
skip() { echo "SKIP: metrics_lab: $*"; exit 77; }
MG=()
cleanup() {
	prom_cleanup
	lab_cleanup
	for l in "${MG[@]}"; do ip link del "$l" 2>/dev/null; done
	[ "${METRICS_LAB_KEEP:-0}" = 1 ] && { rm -rf /tmp/metrics_lab.keep; cp -r "$TMP" /tmp/metrics_lab.keep; }
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

[ "$(id -u)" = 0 ] || skip "needs root"
SVTRACE=$(svtrace_bin) || skip "svtrace not built"
SVPUB=$(svpub_bin) || skip "svpub not built"
SVSUB=$(svsub_bin) || skip "svsub not built"
SVREPORT=$SVKIT_BUILD/report/svreport
[ -x "$SVREPORT" ] || skip "svreport not built"
command -v prometheus >/dev/null || skip "prometheus not installed (Debian package prometheus)"
command -v python3 >/dev/null && command -v curl >/dev/null || skip "python3 and curl needed"
CONFIG=$SVKIT_SRC/configs/pub-seapath-8x4000.yaml
lab_up || die "cannot build the lab"

# mgmt NS INDEX: a veth from the root namespace into NS, 10.X.Y.1/30 here, .2 there; prints the far address
NET=$((RANDOM % 200 + 20)).$((RANDOM % 250))
mgmt() {
	local ns=$1 i=$2 here="mq${i}r$((RANDOM % 10000))" there="mq$i"
	ip link add "$here" type veth peer name "$there" netns "$ns" || return 1
	MG+=("$here")
	ip addr add "10.$NET.$((i * 4 + 1))/30" dev "$here" && ip link set "$here" up &&
		ip -n "$ns" addr add "10.$NET.$((i * 4 + 2))/30" dev "$there" && ip -n "$ns" link set "$there" up || return 1
	echo "10.$NET.$((i * 4 + 2))"
}
A_PUB=$(mgmt "$NS_P" 0) && A_V1=$(mgmt "$NS_V1" 1) && A_V2=$(mgmt "$NS_V2" 2) || die "management veths"
T_PORT=$(prom_free_port)
PUB_T="$A_PUB:9460" TRACE_T="127.0.0.1:$T_PORT" V1_T="$A_V1:9462" V2_T="$A_V2:9462"
LINGER=60

RT=()
command -v chrt >/dev/null && RT=(chrt -f 10)
# svtrace first (it must see the first frame), then the subscribers, then Prometheus, then the traffic
"$SVTRACE" --netns "$NS_H" --ingress up0 --egress vm1p,vm2p --json --record "$TMP/trace.rec" --host hvA \
	--metrics "$TRACE_T" --metrics-linger $LINGER --ready-file "$TMP/trace.ready" >"$TMP/trace.json" 2>"$TMP/trace.err" &
TRACE_PID=$!
LAB_PIDS="$LAB_PIDS $TRACE_PID"
wait_ready_file "$TMP/trace.ready" "$TRACE_PID" || die "svtrace did not start"
for g in 1 2; do
	ns=$NS_V1 addr=$V1_T
	[ $g = 2 ] && ns=$NS_V2 addr=$V2_T
	# SCHED_FIFO, as in production: a shared machine's load must not starve it into socket overflows
	ip netns exec "$ns" "${RT[@]}" "$SVSUB" -i vm$g --backend af_packet --clock-trusted --json --host hvA \
		--metrics "$addr" --metrics-linger $LINGER --ready-file "$TMP/sub$g.ready" >"$TMP/sub$g.json" 2>"$TMP/sub$g.err" &
	eval "SUB${g}_PID=$!"
	LAB_PIDS="$LAB_PIDS $!"
	wait_ready_file "$TMP/sub$g.ready" "$!" || die "svsub in guest $g did not start"
done
prom_start svkit-lab "$PUB_T" "$TRACE_T" "$V1_T" "$V2_T" || die "prometheus"
pass "prometheus on $PROM_URL scrapes svtrace $TRACE_T, svsub $V1_T and $V2_T, svpub $PUB_T (management veths)"

ip netns exec "$NS_P" "$SVPUB" -c "$CONFIG" --interface p0 --duration "$SECS" --json -q --host hvA \
	--metrics "$A_PUB:9460" --metrics-linger $LINGER >"$TMP/pub.json" 2>"$TMP/pub.err" &
PUB_PID=$!
PUB_START=$SECONDS
LAB_PIDS="$LAB_PIDS $PUB_PID"
prom_wait 'count(up{job="svkit-lab"} == 1)' == 4 30 && pass "4 targets up" ||
	fail "targets up: $(prom_query 'up{job="svkit-lab"}')"

# guest 1's port down for 3 s in the middle of the run: its streams lose samples, guest 2's do not
while [ $((SECONDS - PUB_START)) -lt $((SECS / 2)) ]; do sleep 0.2; done
[ $((SECONDS - PUB_START)) -lt $((SECS - 8)) ] || die "the targets came up too late for the port-down test"
ip -n "$NS_H" link set vm1p down
sleep 3
ip -n "$NS_H" link set vm1p up
alerts() { curl -sf "$PROM_URL/api/v1/alerts"; }
firing() {	# alertname instance: how many firing alerts
	alerts | python3 -c '
import json, sys
a = json.load(sys.stdin)["data"]["alerts"]
print(sum(1 for x in a if x["labels"]["alertname"] == sys.argv[1] and x["labels"].get("instance") == sys.argv[2]
          and x["state"] == "firing"))' "$1" "$2"
}
n=0
for _ in $(seq 1 40); do
	n=$(firing SvkitSamplesLost "$V1_T")
	[ "${n:-0}" -ge 1 ] && break
	sleep 0.5
done
[ "${n:-0}" -ge 1 ] && pass "SvkitSamplesLost fires for guest 1 ($n streams) after its port was down for 3 s" ||
	fail "SvkitSamplesLost not firing for $V1_T: $(alerts | head -c 600)"
N2=$(firing SvkitSamplesLost "$V2_T") # judged below: only frames its socket dropped (counted) may explain one
n=$(firing SvkitHopFramesMissing "$TRACE_T")
[ "${n:-0}" -ge 1 ] && pass "SvkitHopFramesMissing fires on svtrace ($n hops)" || fail "SvkitHopFramesMissing not firing"

wait "$PUB_PID" || die "svpub exited with $?"
T_Q=$(date +%s.%N) # the dashboard's queries over the run are evaluated here, before the series go stale
sleep 2 # the last frames through
kill -INT "$TRACE_PID" "$SUB1_PID" "$SUB2_PID"
for p in "$TRACE_PID" "$SUB1_PID" "$SUB2_PID"; do wait "$p" || fail "a tool exited with $? (pid $p)"; done
for f in trace sub1 sub2 pub; do
	grep -q "not scraped" "$TMP/$f.err" && fail "$f: its linger ended unscraped"
	[ -s "$TMP/$f.json" ] || die "$f: no JSON summary"
done
pass "svpub, svtrace and both svsub ended, each after a scrape of its final totals"
sleep 2 # Prometheus marks the series stale; last_over_time still reads their last values

python3 - "$TMP" "$PROM_URL" "$TRACE_T" "$V1_T" "$V2_T" "$PUB_T" "$N2" <<'EOF' || rc=1
import json, sys, urllib.parse, urllib.request
tmp, url, trace_t, v1_t, v2_t, pub_t, n2 = sys.argv[1:]

def q(expr):
    u = url + "/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    d = json.load(urllib.request.urlopen(u, timeout=10))
    return {tuple(sorted(r["metric"].items())): float(r["value"][1]) for r in d["data"]["result"]}

def last(name, inst):
    """{frozenset(labels minus job/instance): value} of last_over_time(name{instance}[10m])"""
    out = {}
    for k, v in q(f'last_over_time({name}{{instance="{inst}"}}[10m])').items():
        out[frozenset((a, b) for a, b in k if a not in ("job", "instance", "__name__"))] = v
    return out

bad, n = [], 0
def eq(what, got, want):
    global n
    n += 1
    if got != want:
        bad.append(f"{what}: prometheus {got} != JSON {want}")

for g, inst in ((1, v1_t), (2, v2_t)):
    j = json.load(open(f"{tmp}/sub{g}.json"))
    for name, key in (("svkit_sub_frames_total", "frames"), ("svkit_sub_samples_total", "samples"),
                      ("svkit_sub_lost_samples_total", "lost"), ("svkit_sub_duplicate_samples_total", "duplicates"),
                      ("svkit_sub_out_of_order_samples_total", "out_of_order")):
        got = last(name, inst)
        for st in j["streams"]:
            lab = frozenset({"svid": st["svID"], "appid": "0x%04x" % st["appid"]}.items())
            eq(f"guest {g} {name} {st['svID']}", got.get(lab), float(st[key]))
    lost = sum(st["lost"] for st in j["streams"])
    print(f"  guest {g}: {len(j['streams'])} streams, {sum(s['frames'] for s in j['streams'])} frames, {lost} lost")
    if g == 1 and lost == 0:
        bad.append("guest 1 lost nothing while its port was down")
    drops = j["source"]["rx"][0]["kernel_drops"]
    if g == 2 and lost != drops:
        bad.append(f"guest 2 lost {lost}, its socket dropped {drops}: a loss nothing explains")
    if g == 2 and int(n2) and not drops:
        bad.append(f"the loss alert fired for guest 2 ({n2}), which lost nothing")
    if g == 2:
        print(f"  guest 2: " + (f"{lost} samples lost, all dropped at its socket (a loaded machine)" if lost else "no loss")
              + f", loss alert {'firing' if int(n2) else 'silent'}")
    got = last("svkit_sub_rx_frames_total", inst)
    eq(f"guest {g} rx frames", got.get(frozenset({"port": f"vm{g}"}.items())), float(j["source"]["rx"][0]["frames"]))
t = json.load(open(f"{tmp}/trace.json"))
for name, key in (("svkit_trace_hop_frames_total", "frames"), ("svkit_trace_hop_missing_frames_total", "missing"),
                  ("svkit_trace_hop_dropped_frames_total", "dropped")):
    got = last(name, trace_t)
    for h in t["hops"]:
        lab = frozenset({"hop": f"{h['from']}-{h['to']}", "port": h["egress"]}.items())
        eq(f"svtrace {name} {h['from']}-{h['to']} {h['egress']}", got.get(lab), float(h[key]))
got = last("svkit_hop_latency_seconds_count", trace_t)
for h in t["hops"]:
    lab = frozenset({"hop": f"{h['from']}-{h['to']}", "port": h["egress"]}.items())
    eq(f"svtrace hop latency count {h['from']}-{h['to']} {h['egress']}", got.get(lab), float(h["latency_ns"]["count"]))
got = last("svkit_trace_dropped_frames_total", trace_t)
for h in t["hops"]:
    if h["from"] == "T1" and h["to"] == "T2a":
        for reason, c in (h.get("drop_reasons") or {}).items():
            eq(f"svtrace drops {h['egress']} {reason}", got.get(frozenset({"port": h["egress"], "reason": reason}.items())),
               float(c))
got = last("svkit_trace_stream_frames_total", trace_t)
for s in t["streams"]:
    eq(f"svtrace stream {s['svID']}", got.get(frozenset({"svid": s["svID"], "appid": "0x%04x" % s["appid"]}.items())),
       float(s["frames"]))
eq("svtrace events lost", sum(last("svkit_events_lost_total", trace_t).values()), float(t["events_lost"]))
p = json.load(open(f"{tmp}/pub.json"))
got = last("svkit_pub_frames_total", pub_t)
for s in p["per_stream"]:
    eq(f"svpub {s['svID']}", got.get(frozenset({"svid": s["svID"], "appid": "0x%04x" % s["appid"]}.items())),
       float(s["frames"]))
miss = [h["missing"] for h in t["hops"] if h["egress"] == "vm1p" and h["from"] == "T1" and h["to"] == "T2b"][0]
lost1 = sum(st["lost"] for st in json.load(open(f"{tmp}/sub1.json"))["streams"])
print(f"  svtrace: {t['events']} events, {miss} frames missing toward vm1p (T1-T2b), {p['frames']} frames sent; "
      f"svsub in guest 1 counted {lost1} samples lost" + ("" if lost1 == miss else " (not asserted: see the report)"))
for b in bad[:10]:
    print("   " + b)
print(("PASS" if not bad else "FAIL") + f": {n - len(bad)} of {n} totals in Prometheus equal the tools' JSON summaries")
sys.exit(1 if bad else 0)
EOF

# p99 of svtrace's T1-T2b toward guest 2: Prometheus's over the run against svreport's from the record
"$SVREPORT" "$TMP/trace.rec" --json >"$TMP/report.json" 2>"$TMP/report.err" || fail "svreport: $(tail -3 "$TMP/report.err")"
python3 - "$TMP/report.json" "$PROM_URL" "$TRACE_T" <<'EOF' || rc=1
import json, sys, urllib.parse, urllib.request
rep, url, inst = sys.argv[1:]
EDGES = [10e-6, 25e-6, 50e-6, 100e-6, 150e-6, 200e-6, 250e-6, 300e-6, 400e-6, 500e-6, 1e-3, 2e-3, 4e-3, 10e-3,
         25e-3, 50e-3, 100e-3]

r = json.load(open(rep))
hops = [h for h in r["hops"] if h["name"] == "T1-T2b" and h["guest"] == "vm2p" and h["stream"] is None]
ref = hops[0]["latency_ns"]["p99"] / 1e9 if hops and hops[0]["latency_ns"] else None
expr = f'histogram_quantile(0.99, last_over_time(svkit_hop_latency_seconds_bucket{{instance="{inst}",hop="T1-T2b",port="vm2p"}}[10m]))'
d = json.load(urllib.request.urlopen(url + "/api/v1/query?" + urllib.parse.urlencode({"query": expr}), timeout=10))
res = d["data"]["result"]
got = float(res[0]["value"][1]) if res else None
if ref is None or got is None:
    print(f"FAIL: p99 of T1-T2b vm2p: svreport {ref}, prometheus {got}")
    sys.exit(1)
lo = max([0.0] + [e for e in EDGES if e < ref])
hi = min([e for e in EDGES if e >= ref] + [float("inf")])
ok = lo <= got <= hi
print(("PASS" if ok else "FAIL") + f": p99 of T1-T2b toward vm2p: prometheus {got * 1e6:.1f} us, svreport {ref * 1e6:.1f} us, "
      f"the exported bucket ({lo * 1e6:g}, {hi * 1e6:g}] us holds both")
sys.exit(0 if ok else 1)
EOF

# every dashboard query, over the run (svtrace's drops by reason exist only if the run dropped a frame)
allow=()
python3 -c 'import json,sys; sys.exit(0 if any(h.get("drop_reasons") for h in json.load(open(sys.argv[1]))["hops"]) else 1)' \
	"$TMP/trace.json" || allow=(--allow-empty svkit_trace_dropped_frames_total)
python3 "$SVKIT_SRC/tests/interop/prom_dashboard.py" "$SVKIT_SRC/configs/prometheus/grafana-dashboard.json" "$PROM_URL" \
	"$T_Q" "${allow[@]}" || rc=1
[ $rc = 0 ] && echo "PASS: metrics_lab" || echo "FAIL: metrics_lab"
exit $rc

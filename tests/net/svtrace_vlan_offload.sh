#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# svtrace and svsub with VLAN offload on (label net, root): every veth of the lab (svtrace_lib.sh: publisher ns ->
# bridge ns -> two guest ns) has rxvlan/txvlan (and the 802.1ad ones) on, so a tag moves out of the frame into
# skb->vlan_tci where the kernel takes it off (skb_vlan_untag behind T1, a VLAN device at the publisher) and
# stays there across the bridge and the veths: svtrace's tracepoints and the guest's XDP program see other
# octets than the publisher sent, and than each other. Six streams, one a case (python AF_PACKET senders):
#   untagged; 802.1Q VID 5; QinQ 802.1ad 100 + 802.1Q 7 and 802.1Q 200 + 802.1Q 8, both in the octets at T1;
#   802.1Q VID 9 and QinQ 802.1ad 300 + 802.1Q 10 with the outer tag out of band from the publisher on (pushed
#   by sv_vlan_push.bpf.c on p0's egress, as a VLAN device on an offloading NIC does).
# Required: svtrace counts every frame of every stream at T1, T2a and T2b of both guests (none missing, no parse
# error), and names each stream's VLAN as the tag nearest the SV EtherType (the codec's: 5, 7, 8, 9, 10; none
# untagged), wherever the tag was when it looked; svsub over AF_XDP in guest 1 receives every frame of every
# stream. Before bpf/sv_parse.h, svtrace's T1 did not see the QinQ frames as SV.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
SVKIT_BUILD=${SVKIT_BUILD:-$HERE/../../build}
. "$HERE/svtrace_lib.sh"
NAME=svtrace_vlan_offload
TMP=$(mktemp -d /tmp/svtrace_vlan.XXXXXX)
cleanup() { lab_cleanup; rm -rf "$TMP"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
skip() { echo "SKIP: $NAME: $*"; exit 77; }
fail() {
	echo "FAIL: $NAME: $*"
	for f in trace.err sub.err; do [ -s "$TMP/$f" ] && sed "s/^/  ${f%.err}: /" "$TMP/$f" | tail -15; done
	exit 1
}

[ "$(id -u)" = 0 ] || skip "needs root"
SVTRACE=$(svtrace_bin) || skip "svtrace not built"
SVSUB=$(svsub_bin) || skip "svsub not built"
command -v python3 >/dev/null || skip "python3 missing"
command -v ethtool >/dev/null || skip "ethtool missing"
LAB="$HERE/svtrace_lab.py"
lab_up || fail "cannot build the lab"

# VLAN offload on every veth of the lab (the default on veth; set, not assumed)
for nd in "$NS_P p0" "$NS_H up0" "$NS_H vm1p" "$NS_H vm2p" "$NS_V1 vm1" "$NS_V2 vm2"; do
	set -- $nd
	ip netns exec "$1" ethtool -K "$2" rxvlan on txvlan on rx-vlan-stag-hw-parse on tx-vlan-stag-hw-insert on \
		>/dev/null 2>&1 || skip "cannot turn VLAN offload on for $2"
done
# the publisher's VLAN device: this kernel may have neither 8021q nor act_vlan, so sv_vlan_push.bpf.c on p0's
# egress puts the tag of two streams out of band (p0 offloads it: it leaves p0 outside the octets)
PUSH="$SVKIT_BUILD/tests/net/sv_vlan_push.bpf.o"
[ -f "$PUSH" ] || skip "$PUSH not built"
command -v tc >/dev/null || skip "tc missing"
ip netns exec "$NS_P" tc qdisc add dev p0 clsact 2>/dev/null || skip "no clsact qdisc"
ip netns exec "$NS_P" tc filter add dev p0 egress bpf da obj "$PUSH" sec tc 2>"$TMP/tc.err" ||
	skip "cannot attach a tc BPF program to p0: $(head -1 "$TMP/tc.err")"

SECS=3 RATE=1000
# case: APPID interface tags (TPID:VID, outer first, in the octets sent) expected-VLAN
CASES="0x4100 p0 - none
0x4105 p0 0x8100:5 5
0x4107 p0 0x88a8:100,0x8100:7 7
0x4108 p0 0x8100:200,0x8100:8 8
0x4109 p0 - 9
0x410a p0 0x8100:10 10"

rm -f "$TMP/sub.ready"
ip netns exec "$NS_V1" "$SVSUB" -i vm1 --backend af_xdp --clock-trusted --json --ready-file "$TMP/sub.ready" \
	>"$TMP/sub.json" 2>"$TMP/sub.err" &
SUB_PID=$!
LAB_PIDS="$LAB_PIDS $SUB_PID"
wait_ready_file "$TMP/sub.ready" "$SUB_PID" || fail "svsub did not start"
: >"$TMP/r2.ready"
ip netns exec "$NS_V2" python3 "$LAB" recv vm2 $((SECS + 5)) >"$TMP/r2" 2>"$TMP/r2.ready" &
LAB_PIDS="$LAB_PIDS $!"
wait_ready "$TMP/r2.ready" listening $! || fail "receiver in guest 2 did not start"
rm -f "$TMP/trace.ready"
"$SVTRACE" --netns "$NS_H" --ingress up0 --egress vm1p,vm2p --json --duration $((SECS + 4)) \
	--record "$TMP/trace.rec" --ready-file "$TMP/trace.ready" >"$TMP/trace.json" 2>"$TMP/trace.err" &
TRACE_PID=$!
wait_ready_file "$TMP/trace.ready" "$TRACE_PID" || fail "svtrace did not start"

SENDERS=""
while read -r appid dev tags vlan; do
	set -- send "$dev" 1 $RATE $SECS --appid "$appid"
	[ "$tags" = - ] || set -- "$@" --tags "$tags"
	ip netns exec "$NS_P" python3 "$LAB" "$@" >"$TMP/sent.$appid" 2>&1 &
	SENDERS="$SENDERS $!"
done <<<"$CASES"
for p in $SENDERS; do wait "$p" || fail "a sender failed: $(cat "$TMP"/sent.* | head -3)"; done
wait "$TRACE_PID" || fail "svtrace exited with $?"
kill -INT "$SUB_PID"
wait "$SUB_PID" || fail "svsub exited with $? after SIGINT"
python3 "$LAB" recdump "$TMP/trace.rec" >"$TMP/rec.json" || fail "cannot decode the record"

python3 - "$TMP" "$CASES" <<'PY' || fail "see above"
import json, sys
tmp, cases = sys.argv[1], [l.split() for l in sys.argv[2].splitlines()]
trace = json.load(open(tmp + "/trace.json"))
rec = json.load(open(tmp + "/rec.json"))
sub = json.load(open(tmp + "/sub.json"))
bad = []
def need(c, msg):
    if not c:
        bad.append(msg)
need(trace["parse_errors"] == 0, "svtrace parse errors: %d" % trace["parse_errors"])
need(trace["events_lost"] == 0, "svtrace events lost: %d" % trace["events_lost"])
by_appid = {s["appid"]: s for s in trace["streams"]}
vlan_of = {s["appid"]: s["vlan"] for s in rec["streams"]}
sub_of = {s["appid"]: s for s in sub["streams"]}
need(len(trace["streams"]) == len(cases), "svtrace saw %d streams, %d sent" % (len(trace["streams"]), len(cases)))
for appid, dev, tags, vlan in cases:
    a = int(appid, 16)
    sent = int(open("%s/sent.%s" % (tmp, appid)).read())
    want_vlan = None if vlan == "none" else int(vlan)
    s = by_appid.get(a)
    hops = {(h["egress"], h["from"], h["to"]): h for h in s["hops"]} if s else {}
    line = ["APPID %s (%s%s): sent %d" % (appid, dev, "" if tags == "-" else " " + tags, sent)]
    for eg in ("vm1p", "vm2p"):
        for fr, to in (("T1", "T2a"), ("T2a", "T2b"), ("T1", "T2b")):
            h = hops.get((eg, fr, to))
            n, m = (h["frames"], h["missing"]) if h else (None, None)
            need(n == sent and m == 0, "APPID %s %s %s-%s: %s frames (missing %s), %d sent" % (appid, eg, fr, to, n, m, sent))
        line.append("%s %s" % (eg, hops[(eg, "T1", "T2b")]["frames"] if (eg, "T1", "T2b") in hops else None))
    need(vlan_of.get(a, "absent") == want_vlan, "APPID %s: svtrace names VLAN %s, want %s" % (appid, vlan_of.get(a, "absent"), want_vlan))
    line.append("VLAN %s" % vlan_of.get(a, "absent"))
    r = sub_of.get(a)
    need(r is not None and r["frames"] == sent, "APPID %s: svsub received %s frames, %d sent" % (appid, r["frames"] if r else None, sent))
    line.append("svsub %s" % (r["frames"] if r else None))
    print("  " + ", ".join(line))
need(sub["malformed_frames"] == 0, "svsub: %d malformed frames" % sub["malformed_frames"])
for b in bad:
    print("  " + b)
sys.exit(1 if bad else 0)
PY
echo "PASS: $NAME: untagged, 802.1Q and QinQ frames (tags in the octets or out of band) counted at every hop with their VLAN by svtrace, received by svsub over AF_XDP"

#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# vm/lab demo --noise net (6 s): bulk iperf3 TCP through the bridge toward both guests, a 200 Mbit/s htb
# bottleneck on each guest port. The report must show both cases of issue 6 side by side, labelled:
# guest1 with SV in its own higher class, guest2 with SV sharing the bulk class; and the class must
# matter: guest1's T1-T2b (hypervisor, where the queue is) p99 below guest2's. Nothing left behind.
set -u
SRC=${SVKIT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
export SVKIT_BUILD=${SVKIT_BUILD:-$SRC/build}
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 needed to read the JSON"; exit 77; }
OUT=$(mktemp -d /tmp/lab_noise_net.XXXXXX)
P=svn$((RANDOM % 9000 + 1000))
trap 'rm -rf "$OUT"' EXIT

"$SRC/vm/lab" demo --duration 6 --noise net --out "$OUT/run" --prefix "$P" >"$OUT/lab.log" 2>&1
rc=$?
if [ $rc = 77 ]; then echo "SKIP: $(grep SKIP "$OUT/lab.log" | head -1)"; exit 77; fi
fail=0
ip netns list | grep -q "^$P" && { echo "FAIL: namespaces left: $(ip netns list | grep "^$P")"; fail=1; }
ip -o link show | grep -q "$P" && { echo "FAIL: links left"; fail=1; }
pgrep -f "$OUT/run" >/dev/null && { echo "FAIL: processes left: $(pgrep -af "$OUT/run")"; fail=1; }
if [ $rc != 0 ]; then echo "FAIL: vm/lab demo --noise net exited $rc"; tail -20 "$OUT/lab.log"; exit 1; fi
python3 - "$OUT/run/report.json" <<'PY' || fail=1
import json, sys
r = json.load(open(sys.argv[1]))
ok = True
def bad(msg):
    global ok
    print("FAIL: " + msg); ok = False
labels = r.get("guest_labels", {})
if sorted(r["guests"]) != ["guest1", "guest2"]:
    bad("guests %s, expected guest1 and guest2" % r["guests"])
if "own higher class" not in (labels.get("guest1") or ""):
    bad("guest1 not labelled as SV in its own class: %r" % labels.get("guest1"))
if "shares the bulk class" not in (labels.get("guest2") or ""):
    bad("guest2 not labelled as SV sharing the bulk class: %r" % labels.get("guest2"))
p99 = {}
for g in ("guest1", "guest2"):
    e = [x for x in r["hops"] if x["guest"] == g and x["name"] == "T1-T2b" and x["stream"] is None]
    if not e or e[0]["count"] == 0:
        bad("no T1-T2b for %s" % g); continue
    p99[g] = e[0]["latency_ns"]["p99"]
    print("%s T1-T2b: count %d lost %d p99 %d ns (%s)" % (g, e[0]["count"], e[0]["lost"], p99[g], labels.get(g)))
if len(p99) == 2 and not p99["guest1"] < p99["guest2"]:
    bad("own-class guest1 T1-T2b p99 %d ns is not below shared-class guest2's %d ns" % (p99["guest1"], p99["guest2"]))
sys.exit(0 if ok else 1)
PY
grep -q "1:10" "$OUT/run/tc-classes.txt" 2>/dev/null || { echo "FAIL: no htb class statistics in tc-classes.txt"; fail=1; }
[ $fail = 0 ] || { echo FAIL; exit 1; }
echo PASS

#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# svreport over several hosts with the tools' own records (issue 32): the capture read twice by svsub, each run
# named a host by --host (hvA, hvB: the "hypervisors" one machine stands for) and each given to svreport as the
# records of a guest called vm1 (-g vm1=FILE). The record headers carry the names; the report keeps the two
# vm1 apart (hvA:vm1, hvB:vm1, each with every frame of the capture), lists both hosts with their tools and
# the clock their records say (flagged when not synchronised, as this machine's may be), and sums the cluster.
# Prints PASS/FAIL/SKIP; exit 0, 1 or 77.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=${SVKIT_SRC:-$(cd "$HERE/../.." && pwd)}
BUILD=${SVKIT_BUILD:-$SRC/build}
SVSUB=$BUILD/subscriber/svsub
SVREPORT=$BUILD/report/svreport
PCAP=$SRC/tests/data/sv92le_omicron_50hz_fault_Z1_seapath.pcap
for b in "$SVSUB" "$SVREPORT"; do [ -x "$b" ] || { echo "SKIP: $b not built"; exit 77; }; done
command -v python3 >/dev/null || { echo "SKIP: python3 missing"; exit 77; }
T=$(mktemp -d /tmp/report_hosts.XXXXXX)
trap 'rm -rf "$T"' EXIT
for h in hvA hvB; do
	"$SVSUB" --read "$PCAP" -q --json --record "$T/$h.rec" --host "$h" >"$T/$h.json" || { echo "FAIL: svsub --host $h"; exit 1; }
done
"$SVREPORT" -g "vm1=$T/hvA.rec" -g "vm1=$T/hvB.rec" --json >"$T/report.json" 2>"$T/report.err"
rc=$?
[ $rc -le 1 ] || { echo "FAIL: svreport exit $rc: $(tail -3 "$T/report.err")"; exit 1; }
"$SVREPORT" -g "vm1=$T/hvA.rec" -g "vm1=$T/hvB.rec" >"$T/report.txt" 2>&1
python3 - "$T" <<'PY'
import json, sys
t = sys.argv[1]
r = json.load(open(f"{t}/report.json"))
text = open(f"{t}/report.txt").read()
frames = json.load(open(f"{t}/hvA.json"))["streams"][0]["frames"]
bad = []
files = {f["host"]: f for f in r["files"]}
if sorted(files) != ["hvA", "hvB"]:
    bad.append(f"the files' hosts are {sorted(files)}, not the --host names")
guests = sorted(g if isinstance(g, str) else g.get("name", "") for g in r["guests"])
if guests != ["hvA:vm1", "hvB:vm1"]:
    bad.append(f"guests {guests}: the two vm1 are not kept apart")
for g in ("hvA:vm1", "hvB:vm1"):
    c = [h["count"] for h in r["hops"] if h["name"] == "Ts-T3" and h["guest"] == g and h["stream"] is None]
    if c != [frames]:
        bad.append(f"{g}: Ts-T3 counts {c}, the capture has {frames} frames")
hosts = {h["host"]: h for h in r["hosts"]["hosts"]}
for name in ("hvA", "hvB"):
    h = hosts.get(name)
    if not h or h["tools"] != "svsub" or [g["guest"] for g in h["guests"]] != [f"{name}:vm1"]:
        bad.append(f"hosts section for {name}: {h}")
unsync = sorted(r["hosts"]["cluster"]["unsynchronised_hosts"])
want = sorted(n for n in ("hvA", "hvB") if not hosts.get(n, {}).get("clock_synchronised", True))
if unsync != want:
    bad.append(f"unsynchronised hosts {unsync}, their entries say {want}")
for n in unsync:
    if f"{n}: svsub (1 file), clock NOT SYNCHRONISED" not in text:
        bad.append(f"text does not flag {n}")
if "cluster: 2 hosts" not in text:
    bad.append("no cluster line in the text")
for b in bad:
    print("FAIL: " + b)
if not bad:
    print(f"PASS: two runs named hvA and hvB by --host: guests hvA:vm1 and hvB:vm1 kept apart ({frames} frames each), "
          f"both hosts in the hosts section, unsynchronised hosts flagged: {unsync or 'none'}")
sys.exit(1 if bad else 0)
PY

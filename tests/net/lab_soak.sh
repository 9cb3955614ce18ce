#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# vm/lab soak (issue 29): a 2-minute soak of svpub and two guests' svsub in soak mode (10 s intervals) with three
# faults at their offsets: a SCHED_FIFO CPU hog on guest 1's CPU for 3 s, guest 2's switch port down for 1 s,
# guest 1's svsub restarted. Each fault is found in the records (read by soak_dump) at its time as the lab wrote
# it to faults.jsonl, within one interval, on the right guest:
#  - the hog: guest 1's intervals of that time show lost or late samples and a window (LOSS or LATENCY) whose
#    trigger lies in the hog holds the frames the hog held back (sampled during it); guest 2's intervals then
#    show nothing;
#  - the link: guest 2's losses lie in the intervals of the outage only, a LOSS window holds frames before and
#    after it, and the losses are exact: per stream, guest 2's frames plus its lost samples are svpub's frames;
#  - the restart: guest 1's first record ends with a LAST interval and the second starts with a FIRST one at
#    that time.
# Every interval of every record starts on a 10 s TAI boundary. The lab leaves no namespace behind.
set -u
SRC=${SVKIT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
export SVKIT_BUILD=${SVKIT_BUILD:-$SRC/build}
DUMP=$SVKIT_BUILD/tests/net/soak_dump
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 needed"; exit 77; }
[ -x "$DUMP" ] || { echo "SKIP: soak_dump not built"; exit 77; }
[ "$(nproc)" -ge 2 ] || { echo "SKIP: the CPU hog needs a second CPU to end it"; exit 77; }
OUT=$(mktemp -d /tmp/lab_soak.XXXXXX)
P=sks$((RANDOM % 9000 + 1000))
trap 'rm -rf "$OUT"' EXIT

"$SRC/vm/lab" soak --duration 120 --soak-interval 10 --faults hog:guest1@30+3,link:guest2@60+1,restart:guest1@90 \
	--out "$OUT/run" --prefix "$P" >"$OUT/lab.log" 2>&1
rc=$?
if [ $rc = 77 ]; then echo "SKIP: $(grep SKIP "$OUT/lab.log" | head -1)"; exit 77; fi
ip netns list | grep -q "^$P" && { echo "FAIL: the lab left namespaces: $(ip netns list | grep "^$P" | tr '\n' ' ')"; exit 1; }
[ $rc = 0 ] || { echo "FAIL: vm/lab soak exited $rc"; tail -20 "$OUT/lab.log"; exit 1; }
for f in "$OUT"/run/*.rec; do
	"$DUMP" "$f" >"${f%.rec}.jsonl" 2>"$OUT/dump.err" || { echo "FAIL: $f does not read: $(cat "$OUT/dump.err")"; exit 1; }
done
python3 - "$OUT/run" <<'PY'
import json, sys, os
d = sys.argv[1]
P = 10
G = 10**9
bad = []
def need(c, msg):
    if not c: bad.append(msg)
def load(name):
    return [json.loads(l) for l in open(os.path.join(d, name + ".jsonl"))]
def summaries(path):  # svsub's --json objects (one per run: a restart appends one)
    txt, out, i = open(path).read(), [], 0
    dec = json.JSONDecoder()
    while True:
        while i < len(txt) and txt[i].isspace(): i += 1
        if i >= len(txt): return out
        o, i = dec.raw_decode(txt, i)
        out.append(o)
faults = {f["kind"]: f for f in map(json.loads, open(os.path.join(d, "faults.jsonl")))}
need(set(faults) == {"hog", "link", "restart"}, f"faults.jsonl: {sorted(faults)}")
g1, g1b, g2, pub = load("guest1"), load("guest1-2"), load("guest2"), load("pub")
iv = lambda rs: [r for r in rs if r["k"] == "interval"]
for name, rs in (("guest1", g1), ("guest1-2", g1b), ("guest2", g2), ("pub", pub)):
    need(iv(rs) and all(r["tai_sec"] % P == 0 and r["period_ms"] == P * 1000 for r in iv(rs)),
         f"{name}: no interval, or one off a 10 s TAI boundary")
    need(all(r["clean"] for r in rs if r["k"] == "end"), f"{name}: no END")
def at(rs, lo, hi, key):  # sum of a counter over the intervals overlapping [lo, hi] ns
    return sum(r[key] for r in iv(rs) if r["tai_sec"] * G < hi and (r["tai_sec"] + P) * G > lo)
def window(rs, classes, lo, hi):
    evs = [r for r in rs if r["k"] == "event"]
    for w in rs:
        if w["k"] == "window" and not w["flags"] & 16 and w["classes"] & classes and lo <= w["t_trigger_ns"] <= hi:
            mine = [e for e in evs if e["stream"] == w["stream"] and w["t_start_ns"] <= e["t_ns"] <= w["t_end_ns"]]
            return w, mine
    return None, []
bounds = lambda f: (f["start_tai_ns"] // (P * G) * P * G, (f["end_tai_ns"] // (P * G) + 2) * P * G)  # within one interval after

# the hog on guest 1: lost or late there, a window holding frames from before it; nothing on guest 2
h = faults["hog"]
lo, hi = bounds(h)
n1 = at(g1, lo, hi, "lost") + at(g1, lo, hi, "late") + at(g1, lo, hi, "outliers")
need(n1 > 0, "hog: guest1 shows no lost or late sample in its intervals")
need(at(g2, h["start_tai_ns"], h["end_tai_ns"], "lost") + at(g2, h["start_tai_ns"], h["end_tai_ns"], "outliers") == 0,
     "hog on guest1: guest2 lost samples or had outliers then")
w, mine = window(g1, 2 | 1, h["start_tai_ns"] - G, hi)
need(w is not None, "hog: no LOSS or LATENCY window on guest1")
if w:  # the frames the hog held back: sampled during it, received after it
    need(len(mine) == w["records"] and any(h["start_tai_ns"] <= e["t2_ns"] <= h["end_tai_ns"] for e in mine),
         f"hog: guest1's window holds {len(mine)} frames (says {w['records']}), none sampled during the hog")
# the link of guest 2: losses in its intervals only, a LOSS window around it, exact
l = faults["link"]
lo, hi = bounds(l)
lost_at = sorted({r["tai_sec"] for r in iv(g2) if r["lost"]})
need(lost_at and all(lo <= t * G < hi for t in lost_at), f"link: guest2 lost in intervals {lost_at}, the outage at {l['start_tai_ns'] // G}")
need(at(g1, l["start_tai_ns"], l["end_tai_ns"], "lost") == 0, "link of guest2: guest1 lost samples then")
w, mine = window(g2, 2, l["start_tai_ns"], hi)
need(w is not None and any(e["t_ns"] < l["start_tai_ns"] for e in mine) and any(e["t_ns"] > l["end_tai_ns"] for e in mine),
     "link: no LOSS window on guest2 with frames before and after the outage")
sub2 = summaries(os.path.join(d, "svsub-guest2.json"))[-1]
sent = {s["svID"]: s["frames"] for s in json.load(open(os.path.join(d, "svpub.json")))["per_stream"]}
for s in sub2["streams"]:
    need(s["frames"] + s["lost"] == sent.get(s["svID"]),
         f"link: guest2 {s['svID']}: {s['frames']} frames + {s['lost']} lost != {sent.get(s['svID'])} sent")
need(sum(r["lost"] for r in iv(g2)) == sum(s["lost"] for s in sub2["streams"]), "guest2: intervals' lost != summary's")
# the restart of guest 1: the first record ends (LAST), the second starts (FIRST), at its time
r = faults["restart"]
lo, hi = bounds(r)
last = max(x["tai_sec"] for x in iv(g1) if x["flags"] & 2)
first = min(x["tai_sec"] for x in iv(g1b) if x["flags"] & 1)
need(lo <= last * G < hi and lo <= first * G < hi, f"restart at {r['start_tai_ns'] // G}: guest1 LAST at {last}, guest1-2 FIRST at {first}")
need(r.get("record", "").endswith("guest1-2.rec"), "restart: faults.jsonl does not name the new record")
for b in bad:
    print("  " + b)
print(f"  hog: {n1} lost/late on guest1; link: guest2 lost {sum(s['lost'] for s in sub2['streams'])} in {lost_at}; "
      f"restart: LAST {last}, FIRST {first}")
sys.exit(1 if bad else 0)
PY
rc=$?
[ $rc = 0 ] || { echo "FAIL: lab soak: checks above"; tail -5 "$OUT/lab.log"; exit 1; }
echo "PASS: lab soak: the hog, the link down and the restart found in the records at their times, on their guests"

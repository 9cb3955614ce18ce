#!/bin/bash
# Fault: a full disk under every tool's --record (issue 27, item 2). The svtrace lab (tests/net/svtrace_lib.sh:
# publisher ns -> bridge ns -> guest ns) carries one 9-2LE stream at 4000 frames/s for 11 s from svpub, with an
# overcurrent fault every 2 s; svtrace follows it on the bridge, svsub receives it in the guest (BACKEND:
# af_packet, af_xdp) with --app overcurrent. Each tool records into its own small tmpfs (mounted on a temporary
# folder, unmounted on exit) that a filler file leaves room for a second or two of records; at 6 s the fillers
# are removed (room comes back for a few seconds, then the disk is full again to the end).
# Checks, for each tool: it kept working (svpub sent every frame; svtrace followed every frame; svsub received
# every frame and its application tripped on every fault), it exited 1 (records not all written: documented),
# it said ENOSPC and how many records it could not write, its --json record object counts them per point, two
# stretches, the last one in the file (the space reserve let UNWRITTEN and END land). Then svreport on the three
# records: at every point "not recorded" equals the frames the tool says it could not write there, and not one
# frame lost or missing (no phantom network loss).
# Needs root (mount, namespaces); exits 77 (skip) otherwise. PASS/FAIL/SKIP lines on stdout.
set -u
BACKEND=${1:-af_packet}
NAME="record_full_disk_$BACKEND"
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=fault_lab.sh
. "$HERE/fault_lab.sh" recfull
pass() { echo "PASS $NAME: $*"; }

[ "$(id -u)" = 0 ] || skip "needs root (tmpfs mounts, network namespaces, BPF)"
fault_tools

# small_fs NAME KIB FILLER_KIB: a tmpfs of KIB KiB on $T/NAME with a filler file of FILLER_KIB KiB in it
small_fs() {
	mkdir -p "$T/$1"
	mount -t tmpfs -o "size=${2}k" tmpfs "$T/$1" || skip "cannot mount a tmpfs"
	MNTS="$MNTS $T/$1"
	dd if=/dev/zero of="$T/$1/filler" bs=1k count="$3" status=none || fail "filler on $1"
}
# Room for 2 blocks of 256 KiB or so past the reserve (260 KiB) on each: full after about a second
# (svsub writes 512 KB/s, svtrace 768 KB/s, svpub 256 KB/s); the fillers' room again at 6 s.
small_fs pub 1536 768
small_fs sub 2048 1280
small_fs trace 3072 2048

lab_up || fail "cannot build the lab"
SECS=11
FAULTS=""
for i in 0 1 2 3 4; do	# a fault of 0.4 s at 1, 3, 5, 7, 9 s: five trips
	FAULTS="$FAULTS -s streams[0].signal.events[$i].at=$((1 + 2 * i)) -s streams[0].signal.events[$i].duration=0.4"
	FAULTS="$FAULTS -s streams[0].signal.events[$i].current_factor=20"
done

rm -f "$T/sub.ready" "$T/trace.ready"	# beside the full filesystems, not on them
ip netns exec "$NS_V1" "$SVSUB" -i vm1 --backend "$BACKEND" --clock-trusted --app overcurrent --json \
	--record "$T/sub/sub.rec" --record-min-free 0 --ready-file "$T/sub.ready" >"$T/sub.out" 2>"$T/sub.err" &
SUBPID=$!
PIDS="$PIDS $SUBPID"
wait_ready_file "$T/sub.ready" "$SUBPID" || fail "svsub did not start"
"$SVTRACE" --netns "$NS_H" --ingress up0 --egress vm1p --json --record "$T/trace/trace.rec" \
	--record-min-free 0 --ready-file "$T/trace.ready" >"$T/trace.json" 2>"$T/trace.err" &
TRPID=$!
PIDS="$PIDS $TRPID"
wait_ready_file "$T/trace.ready" "$TRPID" || fail "svtrace did not start"
# shellcheck disable=SC2086
ip netns exec "$NS_P" "$SVPUB" --interface p0 --duration "$SECS" --json -q $FAULTS --record "$T/pub/pub.rec" \
	-s record_min_free_mib=0 >"$T/pub.json" 2>"$T/pub.err" &
PUBPID=$!
PIDS="$PIDS $PUBPID"
sleep 6
rm -f "$T/pub/filler" "$T/sub/filler" "$T/trace/filler"	# room comes back, for a few seconds
wait "$PUBPID"; PUBRC=$?
sleep 0.5
kill -INT "$SUBPID" "$TRPID"
wait "$SUBPID"; SUBRC=$?
wait "$TRPID"; TRRC=$?
PIDS=""
df -k "$T/pub" "$T/sub" "$T/trace" | sed 's/^/  /'

# Each tool: kept working, exit 1, said ENOSPC and the count, --json record object
python3 - "$T" "$PUBRC" "$SUBRC" "$TRRC" "$SECS" <<'PY' || fail "the tools' own account (above)"
import json, sys
T, pubrc, subrc, trrc, secs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
bad = []
def need(c, msg):
    print(("  ok   " if c else "  BAD  ") + msg)
    if not c: bad.append(msg)
pub = json.load(open(f"{T}/pub.json"))
trace = json.load(open(f"{T}/trace.json"))
sub_lines = [json.loads(l) for l in open(f"{T}/sub.out") if l.strip()]
sub = [l for l in sub_lines if "source" in l][-1]
trips = [l for l in sub_lines if l.get("event") == "trip"]
counts = {}
for name, d, rc in (("svpub", pub, pubrc), ("svsub", sub, subrc), ("svtrace", trace, trrc)):
    rec = d["record"]
    err = open(f"{T}/{name[2:]}.err").read()
    need(rc == 1, f"{name}: exit {rc} (1: records not all written, documented)")
    need(rec["unwritten_records"] > 0 and rec["errno"] == "ENOSPC", f"{name}: record says {rec['unwritten_records']} records not written, errno {rec['errno']}")
    need(rec["stretches"] == 2, f"{name}: {rec['stretches']} stretches of failed writes (full, room, full again)")
    need(rec["last_stretch_in_file"] and rec["space_reserve"], f"{name}: the last stretch and END in the file (reserve {rec['space_reserve']})")
    need("ENOSPC" in err and f"{rec['unwritten_records']} of {rec['records']} records NOT WRITTEN" in err,
         f"{name}: stderr says ENOSPC and '{rec['unwritten_records']} of {rec['records']} records NOT WRITTEN'")
    counts[name] = rec["unwritten_frames"]
sent = pub["frames"]
need(sent == 4000 * secs and pub["tx_errors"] == 0 and pub["outage"] == 0, f"svpub: published {sent} frames, {pub['tx_errors']} tx errors")
need(sub["sv_frames"] == sent, f"svsub: received {sub['sv_frames']} of {sent} frames while its disk was full")
need(len(trips) == 5, f"svsub: the application tripped {len(trips)} times on 5 faults (at 1, 3, 5, 7, 9 s)")
t1t2a = [h for h in trace["hops"] if h["from"] == "T1" and h["to"] == "T2a"]
need(t1t2a and t1t2a[0]["frames"] == sent and t1t2a[0]["missing"] == 0, f"svtrace: followed {t1t2a[0]['frames'] if t1t2a else None} of {sent} frames T1-T2a")
print("  unwritten frames:", counts)
json.dump(counts, open(f"{T}/counts.json", "w"))
sys.exit(1 if bad else 0)
PY
pass "each tool worked on, exited 1, said ENOSPC and its exact count"

# svreport: not recorded == each tool's count at its points, nothing lost or missing
"$SVREPORT" -q --json --alias vm1p=g1 "$T/pub/pub.rec" "$T/trace/trace.rec" -g "g1=$T/sub/sub.rec" \
	>"$T/report.json" 2>"$T/report.err" || fail "svreport: $(head -3 "$T/report.err")"
"$SVREPORT" --alias vm1p=g1 "$T/pub/pub.rec" "$T/trace/trace.rec" -g "g1=$T/sub/sub.rec" 2>/dev/null |
	grep -E "not written|notrec|^  T|not recorded" | sed 's/^/  /'
python3 - "$T/report.json" "$T/counts.json" <<'PY' || fail "svreport's account (above)"
import json, sys
d = json.load(open(sys.argv[1]))
c = json.load(open(sys.argv[2]))
bad = []
def need(ok, msg):
    print(("  ok   " if ok else "  BAD  ") + msg)
    if not ok: bad.append(msg)
want = {("T0", None): c["svpub"].get("T0", 0), ("T1", None): c["svtrace"].get("T1", 0),
        ("T2a", "g1"): c["svtrace"].get("T2a", 0), ("T2b", "g1"): c["svtrace"].get("T2b", 0),
        ("T3", "g1"): c["svsub"].get("T3", 0), ("T4", "g1"): c["svsub"].get("T4", 0)}
got = {(p["point"], p["guest"]): p for p in d["points"]}
for k, n in want.items():
    p = got.get(k)
    need(p is not None and n > 0 and p["not_recorded"] == n, f"{k[0]}: not recorded {p['not_recorded'] if p else None}, the tool could not write {n}")
    need(p is not None and p["missing"] == 0, f"{k[0]}: missing {p['missing'] if p else None}")
lost = [(h["name"], h["guest"], h["lost"]) for h in d["hops"] if h["lost"]]
need(not lost, f"no frame lost on any hop: {lost}")
need(d["totals"]["outage_lost"] == 0, f"outage_lost {d['totals']['outage_lost']}")
for f in d["files"]:
    u = f["unwritten"]
    need(f["clean_end"] and u["errno"] == "ENOSPC" and u["stretches"] == 2 and u["unlocated"] == 0 and
         u["records"] == u["end_lost_records"], f"{f['tool']}: END read, {u['records']} records not written in {u['stretches']} stretches (END: {u['end_lost_records']})")
sys.exit(1 if bad else 0)
PY
pass "svreport: not recorded at each point = the tool's count, no frame lost or missing"

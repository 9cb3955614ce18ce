#!/bin/bash
# Soak mode of svpub and svsub (issue 29), live in network namespaces: svpub --soak (configs/
# pub-seapath-8x4000.yaml: 8 streams x 4000 frames/s, smpSynch 2) -> veth -> svsub --soak, both with
# --soak-interval 5 --record, for SOAK_SECONDS (default 30) s, with the publisher's link set down for a second
# in the middle (the frames of that second never leave: an outage at svpub, a loss on every stream at svsub).
# Both records are read by soak_dump (libsv's reader) and checked against the tools' JSON summaries.
# svpub:
#  - INTERVAL records (Ts -> T0 per stream) on 5 s TAI boundaries, contiguous, FIRST and LAST flagged; per
#    stream their frames, late and dropped sum to its sent, late and skipped + outage + tx errors;
#  - the dropped frames are in the intervals of the outage only; a DROP window was kept around it, holding
#    frames before the link went down, the refused ones (flag DROPPED) and frames after it came back;
#  - every interval of svpub has the same TAI second as one of svsub's, and (when svsub's socket dropped
#    nothing) the same frames per stream: the summaries of two hosts line up without a join of frames;
#    svsub's lost samples per stream are exactly svpub's frames not sent.
# svsub:
#  - every INTERVAL starts on a TAI boundary (tai_sec a multiple of 5, period 5000 ms), each stream's intervals
#    follow each other without a hole, the first flagged FIRST and the last LAST (svsub stopped by SIGTERM);
#  - per stream, the intervals' frames, samples, lost, duplicates, out of order and latency counts sum exactly
#    to the summary's, and the HIST records of the intervals hold the latency counts;
#  - the loss is in the interval of the first sample after the link came back (or the one of the link going
#    down, when it fell on a boundary), in no other, and it is > 0.9 s of samples on every stream;
#  - a LOSS window was kept: its trigger lies in the outage, it holds its stream's frames from before the link
#    went down and after it came back (per-frame records only there: none outside windows), and the budget's
#    refusals of the other streams' loss windows are counted in svsub's JSON (soak.not_kept.loss).
# Soak mode without its preconditions (svsub: --record and live; svpub: --record, clock tai, paced on an
# interface) is a usage error. Needs root; exits 77 (skip) without it. PASS/FAIL/SKIP on stdout.
set -u
NAME=soak_pubsub
BUILD=${SVKIT_BUILD:?SVKIT_BUILD not set}
SRC=${SVKIT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
SVSUB=$BUILD/subscriber/svsub
SVPUB=$BUILD/publisher/svpub
DUMP=$BUILD/tests/net/soak_dump
CONF=$SRC/configs/pub-seapath-8x4000.yaml
SECS=${SOAK_SECONDS:-30}
BACKEND=${1:-af_packet}

skip() { echo "SKIP $NAME: $*"; exit 77; }
fail() {
	echo "FAIL $NAME: $*"
	[ -s "$T/sub.err" ] && sed 's/^/  svsub: /' "$T/sub.err" | tail -20
	[ -s "$T/pub.err" ] && sed 's/^/  svpub: /' "$T/pub.err" | tail -10
	exit 1
}

[ "$(id -u)" -eq 0 ] || skip "needs root (CAP_NET_ADMIN, CAP_NET_RAW)"
[ -x "$SVSUB" ] || skip "svsub not built"
[ -x "$SVPUB" ] || skip "svpub not built"
[ -x "$DUMP" ] || skip "soak_dump not built"
[ -r "$CONF" ] || skip "$CONF missing"
command -v python3 >/dev/null || skip "python3 missing"
tai_ns() { python3 -c 'import time; print(time.clock_gettime_ns(time.CLOCK_TAI))'; }

# soak mode's preconditions are usage errors (exit 2), said before anything starts
"$SVSUB" --read /dev/null --record "${TMPDIR:-/tmp}/soak$$.rec" --soak >/dev/null 2>"${TMPDIR:-/tmp}/soak$$.err"; rc=$?
grep -q -- "--soak needs --record FILE and --interface IF" "${TMPDIR:-/tmp}/soak$$.err" && [ $rc = 2 ] ||
	{ echo "FAIL $NAME: svsub --soak --read: exit $rc: $(cat "${TMPDIR:-/tmp}/soak$$.err")"; rm -f "${TMPDIR:-/tmp}/soak$$".*; exit 1; }
"$SVPUB" --write "${TMPDIR:-/tmp}/soak$$.pcap" -d 1 --record "${TMPDIR:-/tmp}/soak$$.rec" --soak >/dev/null 2>"${TMPDIR:-/tmp}/soak$$.err"; rc=$?
grep -q "soak: needs --record FILE, clock tai and a paced run" "${TMPDIR:-/tmp}/soak$$.err" && [ $rc = 2 ] ||
	{ echo "FAIL $NAME: svpub --soak --write: exit $rc: $(cat "${TMPDIR:-/tmp}/soak$$.err")"; rm -f "${TMPDIR:-/tmp}/soak$$".*; exit 1; }
rm -f "${TMPDIR:-/tmp}/soak$$".*

# shellcheck source=veth_pair.sh
. "$(dirname "$0")/veth_pair.sh"
veth_pair sk

RT=(); command -v chrt >/dev/null && RT=(chrt -f 10)
rm -f "$T/sub.ready"
ip netns exec "$NB" "${RT[@]}" "$SVSUB" -i b0 --backend "$BACKEND" --clock-trusted --json -q \
	--record "$T/sub.rec" --soak --soak-interval 5 --ready-file "$T/sub.ready" >"$T/sub.json" 2>"$T/sub.err" &
SUBPID=$!
wait_ready_file "$T/sub.ready" "$SUBPID" || fail "svsub did not start"

ip netns exec "$NA" "$SVPUB" -c "$CONF" --interface a0 --duration "$SECS" -s priority=20 -s mlockall=true --json -q \
	--record "$T/pub.rec" --soak --soak-interval 5 >"$T/pub.json" 2>"$T/pub.err" &
PUBPID=$!
sleep $((SECS / 2))
DOWN=$(tai_ns)
ip -n "$NA" link set a0 down
sleep 1
ip -n "$NA" link set a0 up
UP=$(tai_ns)
wait "$PUBPID" || fail "svpub failed"
sleep 0.5
kill -TERM "$SUBPID"	# SIGTERM here, SIGINT in the lab and under systemd: both flush what is open
wait "$SUBPID"; rc=$?
SUBPID=
[ $rc -eq 0 ] || fail "svsub exited with $rc after SIGTERM"
"$DUMP" "$T/sub.rec" >"$T/dump.jsonl" 2>"$T/dump.err" || fail "svsub's record does not read: $(cat "$T/dump.err")"
"$DUMP" "$T/pub.rec" >"$T/pdump.jsonl" 2>"$T/dump.err" || fail "svpub's record does not read: $(cat "$T/dump.err")"

python3 - "$T/sub.json" "$T/dump.jsonl" "$DOWN" "$UP" "$T/pub.json" "$T/pdump.jsonl" <<'PY' || fail "checks above"
import json, sys
sub = json.load(open(sys.argv[1]))
recs = [json.loads(l) for l in open(sys.argv[2])]
down, up = int(sys.argv[3]), int(sys.argv[4])
pub = json.load(open(sys.argv[5]))
precs = [json.loads(l) for l in open(sys.argv[6])]
P = 5
bad = []
def need(c, msg):
    if not c: bad.append(msg)

# --- svpub ---
def per_stream(tool, rs, summary, point):
    """Each stream's intervals, checked: on 5 s TAI boundaries, Ts -> point, contiguous, the first FIRST and the
    last LAST. Yields (name, its intervals, its summary, their sum of a counter)."""
    names = {r["stream"]: r["svid"] for r in rs if r["k"] == "stream"}
    iv = [r for r in rs if r["k"] == "interval"]
    need(all(r["clean"] for r in rs if r["k"] == "end"), f"{tool}: the record did not end with END")
    need(iv and all(r["tai_sec"] % P == 0 and r["period_ms"] == P * 1000 and r["from"] == 0 and r["point"] == point
                    for r in iv), f"{tool}: no interval, or one not Ts -> T{point - 1} on a 5 s TAI boundary")
    for idx, name in names.items():
        mine = sorted((r for r in iv if r["stream"] == idx), key=lambda r: r["tai_sec"])
        s = summary.get(name)
        if not s or not mine:
            bad.append(f"{tool} {name}: not in the summary or no interval"); continue
        secs = [r["tai_sec"] for r in mine]
        need(secs == list(range(secs[0], secs[-1] + P, P)), f"{tool} {name}: intervals not contiguous: {secs}")
        need(mine[0]["flags"] & 1 and mine[-1]["flags"] & 2, f"{tool} {name}: first not FIRST or last not LAST")
        yield name, mine, s, lambda k, m=mine: sum(r[k] for r in m)

pname = {r["stream"]: r["svid"] for r in precs if r["k"] == "stream"}
pivs = [r for r in precs if r["k"] == "interval"]
pwins = [r for r in precs if r["k"] == "window" and not r["flags"] & 16]
pevs = [r for r in precs if r["k"] == "event"]
sent = {s["svID"]: s for s in pub["per_stream"]}
out_at = set()
for name, mine, s, tot in per_stream("svpub", precs, sent, 1):
    need(tot("frames") == s["frames"], f"svpub {name}: intervals' frames {tot('frames')} != sent {s['frames']}")
    need(tot("late") == s["late"], f"svpub {name}: intervals' late {tot('late')} != late {s['late']}")
    nd = s["skipped"] + s["outage"] + s["tx_errors"]
    need(tot("dropped") == nd and nd > 0, f"svpub {name}: intervals' dropped {tot('dropped')}, not sent {nd}")
    out_at |= {r["tai_sec"] for r in mine if r["dropped"]}
ok = {t // 10**9 // P * P for t in (down, up)}
need(out_at and out_at <= ok, f"svpub: frames not sent in intervals {sorted(out_at)}, the outage was in {sorted(ok)}")
drop = [w for w in pwins if w["classes"] & 4 and down - 10**9 <= w["t_trigger_ns"] <= up + 10**9]
need(drop, f"svpub: no DROP window at the outage; windows {[(w['cls'], w['t_trigger_ns']) for w in pwins]}")
for w in drop[:1]:
    mine = [e for e in pevs if e["stream"] == w["stream"] and w["t_start_ns"] <= e["t_ns"] <= w["t_end_ns"]]
    need(any(e["t_ns"] < down and not e["flags"] & 0xA for e in mine), "svpub: DROP window without frames sent before")
    need(sum(1 for e in mine if e["flags"] & 8) >= 3000, "svpub: DROP window without the frames refused")
    need(any(e["t_ns"] > up and not e["flags"] & 0xA for e in mine) or w["flags"] & 1,
         "svpub: DROP window without frames sent after the link came back")

# --- svsub ---
svid = {r["stream"]: r["svid"] for r in recs if r["k"] == "stream"}
ivs = [r for r in recs if r["k"] == "interval"]
hists = [r for r in recs if r["k"] == "hist"]
wins = [r for r in recs if r["k"] == "window" and not r["flags"] & 16]
evs = [r for r in recs if r["k"] == "event"]
streams = {s["svID"]: s for s in sub["streams"]}
need(len(streams) == 8, f"{len(streams)} streams in the summary, want 8")
lost_at = set()
for name, mine, s, tot in per_stream("svsub", recs, streams, 5):
    for k, sk in (("frames", "frames"), ("samples", "samples"), ("lost", "lost"), ("duplicate", "duplicates"),
                  ("reordered", "out_of_order")):
        need(tot(k) == s[sk], f"{name}: intervals' {k} {tot(k)} != summary {sk} {s[sk]}")
    lat = s["latency_ns"]["count"] if s["latency_ns"] else 0
    need(tot("count") == lat, f"{name}: intervals' latency count {tot('count')} != summary {lat}")
    need(s["lost"] >= 0.9 * 4000, f"{name}: {s['lost']} samples lost, the link was down for 1 s")
    for r in mine:
        if r["lost"]:
            lost_at.add(r["tai_sec"])
# the loss shows at the first sample after the gap: Ts in [down, up + 0.5 s]
ok = {t // 10**9 // P * P for t in (down, up, up + 5 * 10**8)}
need(lost_at and lost_at <= ok, f"losses in intervals {sorted(lost_at)}, the outage was in {sorted(ok)}")
hc = sum(h["count"] for h in hists if h["stream"] == 0xFFFFFFFF)
need(hc == sum(r["count"] for r in ivs), f"interval HIST counts {hc} != intervals' {sum(r['count'] for r in ivs)}")
need(sum(1 for h in hists if h["stream"] != 0xFFFFFFFF) == len(svid), "not one whole-run HIST per stream")
loss = [w for w in wins if w["classes"] & 2 and down - 10**9 <= w["t_trigger_ns"] <= up + 10**9]
need(loss, f"no LOSS window around the outage; windows: {[(w['cls'], w['t_trigger_ns']) for w in wins]}")
for w in loss[:1]:
    mine = [e for e in evs if e["stream"] == w["stream"] and w["t_start_ns"] <= e["t_ns"] <= w["t_end_ns"]]
    before = [e for e in mine if e["t_ns"] < down]
    after = [e for e in mine if e["t_ns"] > up]
    # the trigger is the first frame after the outage: its 2 s before reach back ~1 s before the link went down
    need(len(before) >= 2000 and len(after) >= 4000,
         f"LOSS window of stream {w['stream']}: {len(before)} frames before the outage, {len(after)} after")
    need(w["records"] == len([e for e in evs if e["stream"] == w["stream"] and w["t_start_ns"] <= e["t_ns"] <= w["t_end_ns"]]),
         f"LOSS window says {w['records']} records, the file holds {len(mine)} in its span")
inwin = lambda e: any(w["stream"] == e["stream"] and w["t_start_ns"] <= e["t_ns"] <= w["t_end_ns"] for w in wins)
need(all(inwin(e) for e in evs), "per-frame records outside every window")
sk = sub.get("soak") or {}
need(sk.get("intervals", 0) > 0 and sk.get("write_errors", 1) == 0, f"JSON soak: {sk}")
need(len(loss) + sk.get("not_kept", {}).get("loss", 0) + sk.get("merged", 0) >= 8 or len(loss) >= 8,
     f"8 streams lost frames: {len(loss)} LOSS windows, not kept {sk.get('not_kept')}")
# --- both: the same intervals, the same frames in them; svsub lost what svpub could not send ---
drops = sum(r["kernel_drops"] for r in sub["source"]["rx"])
need(set(r["tai_sec"] for r in pivs) <= set(r["tai_sec"] for r in ivs), "svpub has intervals svsub has not")
if drops == 0:
    by_id = {v: k for k, v in svid.items()}
    for idx, name in pname.items():
        si = by_id.get(name)
        pf = {r["tai_sec"]: r["frames"] for r in pivs if r["stream"] == idx}
        sf = {r["tai_sec"]: r["frames"] for r in ivs if r["stream"] == si and r["tai_sec"] in pf}
        need(pf == sf, f"{name}: frames per interval svpub {pf} != svsub {sf}")
        s = sent[name]
        need(streams[name]["lost"] == s["skipped"] + s["outage"] + s["tx_errors"],
             f"{name}: svsub lost {streams[name]['lost']}, svpub did not send {s['skipped'] + s['outage'] + s['tx_errors']}")
else:
    print(f"  (svsub's socket dropped {drops} frames: the per-interval comparison with svpub is not made)")
for b in bad:
    print("  " + b)
print(f"  svpub: {len(pivs)} intervals, {len(pwins)} windows ({len(drop)} drop), {len(pevs)} per-frame records; soak {json.dumps(pub.get('soak'))}")
size = sum(1 for _ in recs)
print(f"  {len(ivs)} intervals, {len(wins)} windows ({len(loss)} loss), {len(evs)} per-frame records; "
      f"lost {sum(s['lost'] for s in streams.values())} samples in intervals {sorted(lost_at)}; soak {json.dumps(sk)}")
sys.exit(1 if bad else 0)
PY
echo "PASS $NAME: svpub and svsub intervals on 5 s TAI boundaries sum to their summaries and line up; the outage in its interval, DROP and LOSS windows around it"

#!/bin/bash
# Fault: a killed process and its records (issue 27, item 4). In the svtrace lab, svpub publishes one 9-2LE
# stream at a low rate (400 frames/s: a 256 KiB block holds 4 to 10 s of records) with --record; svtrace follows
# it with --record, svsub receives it in the guest with --record. After 3 s all three are killed with SIGKILL
# (no flush, no END). Each record must still read (svreport; a block cut by the kill at the end is allowed and
# said) and hold frames up to within the flush bound (record_flush_ms, 1 s by default, plus the loop's period)
# of the kill: before the flush period a block was written only when full, and all three left none.
# Needs root; exits 77 (skip) otherwise. PASS/FAIL/SKIP lines on stdout.
set -u
NAME=record_kill
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=fault_lab.sh
. "$HERE/fault_lab.sh" reckill

[ "$(id -u)" = 0 ] || skip "needs root (network namespaces, BPF)"
fault_tools
BOUND_MS=${RECORD_KILL_BOUND_MS:-1500}	# record_flush_ms (1000) + the loops' periods + a busy machine's delay

lab_up || fail "cannot build the lab"
rm -f "$T/sub.ready" "$T/trace.ready"
ip netns exec "$NS_V1" "$SVSUB" -i vm1 --backend af_packet --clock-trusted --record "$T/sub.rec" \
	--ready-file "$T/sub.ready" >/dev/null 2>"$T/sub.err" &
SUBPID=$!
PIDS="$PIDS $SUBPID"
wait_ready_file "$T/sub.ready" "$SUBPID" || fail "svsub did not start"
"$SVTRACE" --netns "$NS_H" --ingress up0 --egress vm1p --record "$T/trace.rec" --ready-file "$T/trace.ready" \
	>/dev/null 2>"$T/trace.err" &
TRPID=$!
PIDS="$PIDS $TRPID"
wait_ready_file "$T/trace.ready" "$TRPID" || fail "svtrace did not start"
ip netns exec "$NS_P" "$SVPUB" --interface p0 -q -s 'streams[0].sample_rate=400' --record "$T/pub.rec" \
	>/dev/null 2>"$T/pub.err" &
PUBPID=$!
PIDS="$PIDS $PUBPID"
sleep 3
KILL_TAI=$(python3 -c 'import time; print(time.clock_gettime_ns(time.CLOCK_TAI))')
{
	kill -KILL "$PUBPID" "$TRPID" "$SUBPID"
	wait "$PUBPID" "$TRPID" "$SUBPID"
} 2>/dev/null	# (the shell's "Killed" notices)
PIDS=""

bad=0
for tool in pub trace sub; do
	"$SVREPORT" -q --json --csv "$T/$tool.csv" "$T/$tool.rec" >"$T/$tool.report.json" 2>"$T/$tool.report.err"
	rc=$?
	python3 - "$tool" "$rc" "$T/$tool.csv" "$T/$tool.report.json" "$KILL_TAI" "$BOUND_MS" <<'PY' || bad=1
import csv, json, sys
tool, rc, csvf, repf, kill_tai, bound_ms = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6])
rows = list(csv.DictReader(open(csvf))) if rc in (0, 1) else []
f = json.load(open(repf))["files"][0] if rc in (0, 1) else {}
err = f.get("error")
times = [int(r["t_tai_ns"]) for r in rows if r["t_tai_ns"]]
last = max(times) if times else None
lag_ms = (kill_tai - last) / 1e6 if last else None
ok = (rc == 0 or (err and "block_truncated" in err)) and times and lag_ms <= bound_ms
print(f"  {'ok  ' if ok else 'BAD '} sv{tool}: {len(rows)} events recorded, the last {lag_ms:.0f} ms before SIGKILL "
      f"(bound {bound_ms} ms); END {'read' if f.get('clean_end') else 'absent (killed)'}"
      f"{'; ' + err if err else ''}" if last is not None else f"  BAD  sv{tool}: no event recorded (svreport exit {rc}: {err})")
sys.exit(0 if ok else 1)
PY
done
[ $bad = 0 ] || fail "a record lost more than the flush bound"
echo "PASS $NAME: svpub, svtrace and svsub killed with SIGKILL after 3 s at 400 frames/s: each record reads and ends within ${BOUND_MS} ms of the kill"

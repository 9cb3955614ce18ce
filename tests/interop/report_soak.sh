#!/bin/bash
# svreport's soak report over the synthetic soak of tests/bench/soak_gen.h (bench_soakgen: svpub, svtrace and two
# svsub in soak mode at 8 x 4000 frames/s, rotated parts, guest 1's svsub killed half way and restarted with a new
# run_id, a clock step, windows, losses) of 24 h and of 72 h: svreport finishes (exit 0) with every tool's
# intervals, the restart as a gap and the step in its JSON, its maximum RSS under 64 MiB (the soak's tables are
# fixed: ~2.5 MiB; the rest is the join window of the windows' frames, the per-(hop, guest, stream) histograms of
# 29 KiB and the readers' block buffers, ~21 MiB measured), and the 72 h report's RSS within 10 % of the 24 h
# one's (memory that does not grow with the soak's length; measured 4 %). Its time is printed, not judged
# (tests/bench/soak.bench prints the figure soak_report_seconds_72h). ~2 minutes on this machine, ~750 MB of
# disk in $TMPDIR (/var/tmp).
set -u
B=${SVKIT_BUILD:-build}
GEN=$B/tests/bench/bench_soakgen
SVREPORT=$B/report/svreport
[ -x "$GEN" ] && [ -x "$SVREPORT" ] || { echo "SKIP: bench_soakgen or svreport not built"; exit 77; }
[ -x /usr/bin/time ] || { echo "SKIP: /usr/bin/time (package time) missing"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 missing"; exit 77; }
# Under AddressSanitizer (the sanitizer tier) freed blocks wait in a quarantine of up to 256 MB, so the RSS
# measures the frees, not what is kept: quarantine off, and the absolute bound (the normal build's) not judged.
asan=false
if ldd "$SVREPORT" 2>/dev/null | grep -q libasan; then
	asan=true
	export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0:thread_local_quarantine_size_kb=0
fi
T=$(mktemp -d "${TMPDIR:-/var/tmp}/svreport-soak.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: svreport soak: $*"; exit 1; }

# report HOURS: generates HOURS of soak into $T/HOURS, reports it as JSON; prints "rss_kib seconds"
report() {
	local h=$1 d=$T/$1 aside
	mkdir "$d"
	"$GEN" "$d" "$h" >"$T/gen.out" 2>&1 || fail "bench_soakgen $h h: $(tail -3 "$T/gen.out")"
	aside=$(cd "$d" && ls g1-*.rec | head -1)
	/usr/bin/time -f '%M %e' -o "$T/time" "$SVREPORT" -q --json "$d/pub.rec" "$d/trace.rec" --alias vnet0=g1 \
		--alias vnet1=g2 -g "g1=$d/$aside" -g "g1=$d/g1.rec" -g "g2=$d/g2.rec" >"$T/$h.json" 2>"$T/err" ||
		fail "svreport on $h h exited $?: $(head -c 400 "$T/err")"
	python3 - "$T/$h.json" "$h" <<'PY' || fail "$h h: the report's figures are wrong"
import json, sys
r = json.load(open(sys.argv[1])); h = int(sys.argv[2]); s = r["soak"]
def want(what, got, exp):
    if got != exp:
        print(f"{h} h: {what}: {got}, want {exp}"); sys.exit(1)
want("hops", len(s["hops"]), 11)
want("clock steps", s["clock_steps"], 1)
want("run restarts", s["run_restarts"], 1)
want("events listed in full", sum(r["soak_events"]["unlisted"].values()), 0)
ivals = h * 360
for hop in s["hops"]:
    name = (hop["hop"], hop["guest"])
    want(f"{name} histogram count = INTERVAL count", hop["latency_ns"]["count"], hop["count"])
    if hop["hop"] == "Ts-T0" or (hop["hop"].startswith("Ts-") and hop["guest"] == "g2"):
        want(f"{name} intervals", hop["intervals"], ivals * 8)
    elif hop["hop"].startswith("T1") or hop["hop"].startswith("T2a"):
        want(f"{name} intervals", hop["intervals"], (ivals + 1) * 8)
gap = [e for e in r["soak_events"]["events"] if e["kind"] == "gap"]
want("gaps", len(gap), 1)
want("gap guest", gap[0]["guest"], "g1")
want("gap: the killed run", gap[0]["killed"], True)
if not 60e9 <= gap[0]["value"] <= 90e9:
    print(f"{h} h: gap of {gap[0]['value']} ns, want 60 .. 90 s"); sys.exit(1)
if abs(s["hours"] - h) > 0.01:
    print(f"{h} h: the soak spans {s['hours']} h"); sys.exit(1)
PY
	cat "$T/time"
	rm -rf "$d"
}
read -r rss24 s24 <<<"$(report 24)" || exit 1
read -r rss72 s72 <<<"$(report 72)" || exit 1
[ -n "$rss24" ] && [ -n "$rss72" ] || fail "no time figures"
echo "24 h: $s24 s, max RSS $rss24 KiB; 72 h: $s72 s, max RSS $rss72 KiB"
$asan || [ "$rss72" -le 65536 ] || fail "72 h: max RSS $rss72 KiB over 64 MiB"
[ "$rss72" -le $((rss24 * 110 / 100)) ] || fail "max RSS grew with the soak: $rss24 KiB at 24 h, $rss72 KiB at 72 h"
echo "PASS: svreport soak: 24 h and 72 h reported, max RSS $rss24 / $rss72 KiB (bound 64 MiB, growth < 10 %)"

#!/bin/bash
# svreport's command line: exit codes as the README and svreport(1) say (0 written, 1 a file that cannot be
# read, 2 usage), on records svpub writes: no arguments, a missing or foreign record, the same record twice, a
# budgets file missing (1) or wrong (2), a missing cyclictest file (1), --verdict-exit's NONE (0), and an --alias that renames nothing
# (said, exit 0); records svpub and svsub rotated (record_size_mib) read whole from their newest part, with or
# without their parts.
set -u
B=${SVKIT_BUILD:-build}
SVPUB=$B/publisher/svpub
SVREPORT=$B/report/svreport
[ -x "$SVPUB" ] && [ -x "$SVREPORT" ] || { echo "SKIP: svpub or svreport not built"; exit 77; }
T=$(mktemp -d /tmp/svreport-cli.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: svreport cli: $*"; exit 1; }
expect() { # RC WHAT ARGS...
	local want=$1 what=$2 rc
	shift 2
	"$SVREPORT" "$@" >"$T/out" 2>"$T/err"; rc=$?
	[ $rc = "$want" ] || fail "$what: exit $rc, want $want: $(head -c 300 "$T/err")"
}
"$SVPUB" -q -w "$T/p.pcap" -d 0.05 -r "$T/p.rec" >/dev/null 2>&1 || fail "svpub could not write a record"
expect 0 "a record" "$T/p.rec"
expect 0 "--verdict-exit with nothing to check (NONE)" --verdict-exit "$T/p.rec"
grep -q "NONE" "$T/out" || fail "NONE verdict not printed: $(grep -i verdict "$T/out")"
expect 2 "no arguments"
expect 1 "a missing record" "$T/missing.rec"
expect 1 "a record of another kind" "$T/p.pcap"
expect 2 "the same record twice" "$T/p.rec" "$T/p.rec"
expect 1 "a missing budgets file" -b "$T/missing.yaml" "$T/p.rec"
grep -q "missing.yaml" "$T/err" || fail "missing budgets file not named: $(cat "$T/err")"
printf 'budgets:\n  - hop: T9-T1\n    max_us: 1\n' >"$T/bad.yaml"
expect 2 "a wrong budgets file" -b "$T/bad.yaml" "$T/p.rec"
grep -q "bad.yaml" "$T/err" || fail "wrong budgets file not named: $(cat "$T/err")"
expect 1 "a missing cyclictest file" -C "$T/missing.hist" "$T/p.rec"
expect 0 "an alias that names no guest" --alias nohost:vnet0=g1 "$T/p.rec"
grep -q "warning: --alias nohost:vnet0=g1: no record names a guest 'nohost:vnet0'" "$T/err" ||
	fail "an unused alias not said: $(cat "$T/err")"
expect 2 "an alias without a name" --alias =g1 "$T/p.rec"
# A rotated record (svsub --record-size 1: 40000 frames in 1 MiB parts) reads whole from its newest file, and
# once when its parts are given too, in any order; a middle part alone is said to miss the run's start.
SVSUB=$B/subscriber/svsub
if [ -x "$SVSUB" ]; then
	"$SVPUB" -q -w "$T/r.pcap" -d 10 -r "$T/r.rec" -s record_size_mib=1 >/dev/null 2>&1 || fail "svpub could not write 10 s"
	[ -s "$T/r.rec.2" ] || fail "svpub record_size_mib=1: no part r.rec.2: $(ls "$T")"
	"$SVPUB" -q -w "$T/x.pcap" -d 1 -s record_keep=x >/dev/null 2>"$T/err"
	[ $? = 2 ] && grep -q "record_keep: 'x' is not a number of parts" "$T/err" || fail "svpub record_keep=x: $(cat "$T/err")"
	"$SVSUB" -q --read "$T/r.pcap" --record "$T/s.rec" --record-size 1 || fail "svsub --record-size 1"
	[ -s "$T/s.rec.2" ] || fail "svsub --record-size 1: no part s.rec.2: $(ls "$T")"
	"$SVSUB" -q --read "$T/r.pcap" --record "$T/x.rec" --record-keep x 2>"$T/err"
	[ $? = 2 ] && grep -q "record-keep: 'x' is not a number of parts" "$T/err" || fail "svsub --record-keep x: $(cat "$T/err")"
	expect 0 "a rotated record" -q --json "$T/s.rec"
	cp "$T/out" "$T/whole.json"
	expect 0 "a rotated record and its parts" -q --json "$T/s.rec.1" "$T/s.rec" "$T/s.rec.2"
	cp "$T/out" "$T/parts.json"
	expect 0 "svpub's and svsub's rotated records" -q --json "$T/r.rec" --guest "g=$T/s.rec"
	python3 - "$T/whole.json" "$T/parts.json" "$T/out" <<'PY' || fail "rotated record read wrong"
import json, sys
for path in sys.argv[1:]:
    r = json.load(open(path))
    files = [(f["tool"], f["parts"] > 1, f["events"]) for f in r["files"]]
    print(path, files, r["totals"]["frames"], r["warnings"])
    want = [("svsub", True, 40000)] if path != sys.argv[3] else [("svsub", True, 40000), ("svpub", True, 40000)]
    if files != want or r["totals"]["frames"] != 40000 or r["warnings"]:
        sys.exit(1)
PY
	expect 0 "a middle part alone" -q --json "$T/s.rec.1"
	grep -q "s.rec.1: svsub's records start at part 1 of its run" "$T/out" || fail "a part alone not said: $(head -c 600 "$T/out")"
fi
echo "PASS: svreport cli: exit codes 0/1/2 as documented, NONE with --verdict-exit is 0, a rotated record read whole"

#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# issue 33: svsub --comtrade on a full disk (a 32 KiB tmpfs: the .cfg fits, the .dat of the Omicron Z1 trip
# does not). The record cannot be written: its partial files are removed, the failure is said once with the
# reason and counted (JSON comtrade.failed, error), receiving is not stopped (every frame of the capture is in
# the summary, the trip is still reported), and the exit status is 1. Then the same into a directory with room:
# one record, exit 0.
set -u
BUILD=${SVKIT_BUILD:-build}
SRC=${SVKIT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
SVSUB=$BUILD/subscriber/svsub
CAP=$SRC/tests/data/sv92le_omicron_50hz_fault_Z1_seapath.pcap
[ -x "$SVSUB" ] || { echo "FAIL: $SVSUB not built"; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "SKIP: a tmpfs mount needs root"; exit 77; }
TMP=$(mktemp -d /tmp/comtrade_full.XXXXXX)
cleanup() { umount "$TMP/full" 2>/dev/null; rm -rf "$TMP"; }
trap cleanup EXIT INT TERM
mkdir "$TMP/full" "$TMP/room"
mount -t tmpfs -o size=32k svkit-ct-full "$TMP/full" || { echo "SKIP: cannot mount a tmpfs"; exit 77; }
fail=0
"$SVSUB" --read "$CAP" --app overcurrent --comtrade "$TMP/full" --json >"$TMP/out" 2>"$TMP/err"
rc=$?
summary=$(grep '"frames"' "$TMP/out" | tail -1)
python3 - "$rc" "$TMP/err" "$TMP/full" <<PY || fail=1
import json, os, sys
rc, err, full = int(sys.argv[1]), open(sys.argv[2]).read(), sys.argv[3]
lines = [json.loads(l) for l in open("$TMP/out") if l.startswith("{")]
summ = [l for l in lines if "frames" in l][-1]
trips = [l for l in lines if l.get("event") == "trip"]
ok = True
def check(c, what):
    global ok
    print(("PASS: " if c else "FAIL: ") + what)
    ok &= bool(c)
check(rc == 1, "exit status 1 when a record could not be written (%d)" % rc)
check(err.count("No space left on device") == 1 and "receiving goes on" in err,
      "the failure said once with its reason (%s)" % err.strip()[:200])
check(summ["frames"] == 12000 and len(trips) == 1, "every frame received and the trip reported all the same")
ct = summ["comtrade"]
check(ct["failed"] == 1 and ct["written"] == 0 and ct["error"] == "No space left on device",
      "counted: comtrade.failed 1, error ENOSPC (%s)" % ct)
check(os.listdir(full) == [], "no partial record left (%s)" % os.listdir(full))
sys.exit(0 if ok else 1)
PY
"$SVSUB" --read "$CAP" --app overcurrent --comtrade "$TMP/room" -q >/dev/null 2>&1
rc=$?
n=$(ls "$TMP/room"/*.cfg 2>/dev/null | wc -l)
if [ "$rc" -eq 0 ] && [ "$n" -eq 1 ]; then echo "PASS: with room: one record, exit 0"; else echo "FAIL: with room: rc $rc, $n records"; fail=1; fi
exit $fail

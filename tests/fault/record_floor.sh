#!/bin/bash
# Fault: a soak's records against the disk's size (issue 27, item 2: rotation). svpub writes 12 s of the 8
# streams of configs/pub-seapath-8x4000.yaml into a capture file (unpaced: ~25 MB of records in a second or
# two) with --record in parts of 1 MiB:
#  1. the default record_keep (16) on a folder with room: FILE and FILE.1 .. FILE.16 stay, the older parts
#     are deleted and counted, and svreport reads the run from FILE saying its first parts are gone;
#  2. record_keep=all on a 12 MiB tmpfs with a floor of 4 MiB (record_min_free_mib): the floor deletes the
#     run's oldest parts at each rotation, so the disk never fills: every record written, none lost,
#     and the free space at the end is above the floor less one part and the reserve;
#  3. a 4 MiB tmpfs under a floor of 8 MiB, nothing to delete: blocks are held back from the start, counted
#     (ENOSPC, "below the floor"), the part's END still lands (space reserve), svpub exits 1 and svreport
#     counts the frames as not recorded, not lost.
# Needs root for the tmpfs mounts (unmounted on exit); exits 77 (skip) otherwise. PASS/FAIL/SKIP on stdout.
set -u
NAME=record_floor
HERE=$(cd "$(dirname "$0")" && pwd)
SVKIT_BUILD=${SVKIT_BUILD:-$HERE/../../build}
SVKIT_SRC=${SVKIT_SRC:-$HERE/../..}
SVPUB=$SVKIT_BUILD/publisher/svpub
SVREPORT=$SVKIT_BUILD/report/svreport
CONF=$SVKIT_SRC/configs/pub-seapath-8x4000.yaml
T=$(mktemp -d /tmp/recfloor.XXXXXX)
MNTS=""
cleanup() {
	for m in $MNTS; do umount "$m" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
skip() { echo "SKIP $NAME: $*"; exit 77; }
fail() { echo "FAIL $NAME: $*"; [ -s "$T/err" ] && tail -8 "$T/err" | sed 's/^/  svpub: /'; exit 1; }

[ -x "$SVPUB" ] || skip "svpub not built"
[ -x "$SVREPORT" ] || skip "svreport not built"
[ -r "$CONF" ] || skip "$CONF missing"
command -v python3 >/dev/null || skip "python3 missing"
[ "$(id -u)" = 0 ] || skip "needs root (tmpfs mounts)"

small_fs() {	# NAME KIB
	mkdir -p "$T/$1"
	mount -t tmpfs -o "size=${2}k" tmpfs "$T/$1" || skip "cannot mount a tmpfs"
	MNTS="$MNTS $T/$1"
}
pub() {	# RECORD extra -s settings...: 12 s of 8 x 4000 frames into a capture, records in 1 MiB parts
	local rec=$1
	shift
	"$SVPUB" -c "$CONF" -w "$T/x.pcap" -d 12 -q --json --record "$rec" -s record_size_mib=1 "$@" \
		>"$T/pub.json" 2>"$T/err"
}
J() { python3 -c "import json,sys; d=json.load(open(sys.argv[1]))['record']; print($1)" "$T/pub.json"; }

# 1. the default keep
mkdir "$T/keep"
pub "$T/keep/pub.rec" || fail "keep: svpub exit $?"
n=$(find "$T/keep" -name 'pub.rec*' | wc -l)
deleted=$(J "d['parts_deleted']")
parts=$(J "d['parts']")
echo "  keep: $parts parts written, $deleted deleted, $n on disk: $(J "d['keep']") kept besides the live one"
[ "$(J "d['keep']")" = 16 ] || fail "keep: default record_keep is $(J "d['keep']"), want 16"
[ "$n" = 17 ] && [ -f "$T/keep/pub.rec.16" ] && [ ! -e "$T/keep/pub.rec.17" ] || fail "keep: $n files"
[ "$deleted" = $((parts - 17)) ] && [ "$deleted" -gt 0 ] || fail "keep: $deleted deleted of $parts"
grep -q "16 rotated parts kept, $deleted deleted" "$T/err" || fail "keep: the summary does not say it"
"$SVREPORT" "$T/keep/pub.rec" >"$T/report.txt" 2>&1 || fail "keep: svreport: $(head -3 "$T/report.txt")"
grep -q "records start at part $deleted of its run" "$T/report.txt" || fail "keep: svreport does not say the first parts are gone"
echo "PASS $NAME: record_keep 16 by default: 17 files of $parts parts, $deleted deleted and said (svpub, svreport)"

# 2. keep all, the floor keeps the disk from filling
small_fs floor 12288
pub "$T/floor/pub.rec" -s record_keep=all -s record_min_free_mib=4 || fail "floor: svpub exit $? (records lost?)"
free_kib=$(df -k --output=avail "$T/floor" | tail -1 | tr -d ' ')
echo "  floor: $(J "d['parts']") parts, $(J "d['parts_deleted_for_floor']") deleted for the floor, $(find "$T/floor" -name 'pub.rec*' | wc -l) on disk, ${free_kib} KiB free; complete $(J "d['complete']")"
[ "$(J "d['complete'] and d['unwritten_records'] == 0 and d['parts_deleted_for_floor'] > 0")" = True ] ||
	fail "floor: $(J "d")"
[ "$free_kib" -ge $((4096 - 1024 - 260)) ] || fail "floor: $free_kib KiB free, floor 4096 KiB"
grep -q "below the floor of 4 MiB: deleted the oldest part" "$T/err" || fail "floor: the deletions are not said"
echo "PASS $NAME: record_keep=all under a 4 MiB floor on 12 MiB: oldest parts deleted, the disk never full, every record written"

# 3. under the floor with nothing to delete: held back, counted, END lands, not recorded in svreport
small_fs low 4096
pub "$T/low/pub.rec" -s record_min_free_mib=8
rc=$?
[ $rc = 1 ] || fail "below the floor: svpub exit $rc, want 1 (records not written)"
grep -q "below the floor of 8 MiB and no older part left to delete" "$T/err" || fail "below the floor: not said"
# every block but the last (written at the end into the part's reserve, with UNWRITTEN and END)
[ "$(J "d['errno'] == 'ENOSPC' and d['held_back_by_floor'] > 0 and d['last_stretch_in_file'] and 8 * 4000 * 12 - 8192 < d['unwritten_frames']['T0'] < 8 * 4000 * 12")" = True ] ||
	fail "below the floor: $(J "d")"
"$SVREPORT" -q --json "$T/low/pub.rec" >"$T/report.json" 2>"$T/report.err" || fail "below the floor: svreport: $(head -3 "$T/report.err")"
python3 - "$T/report.json" "$(J "d['unwritten_frames']['T0']")" <<'PY' || fail "below the floor: svreport's account"
import json, sys
d = json.load(open(sys.argv[1]))
f = d["files"][0]
t0 = [p for p in d["points"] if p["point"] == "T0"][0]
print(f"  svreport: END read {f['clean_end']}, unwritten {f['unwritten']}, T0 frames {t0['frames']}, lost {[h['lost'] for h in d['hops']]}, outage_lost {d['totals']['outage_lost']}")
ok = f["clean_end"] and f["unwritten"]["below_floor"] and f["unwritten"]["records"] == f["unwritten"]["end_lost_records"]
ok = ok and f["unwritten"]["frames"]["T0"] == int(sys.argv[2]) and t0["frames"] + int(sys.argv[2]) == 8 * 4000 * 12
ok = ok and not [h for h in d["hops"] if h["lost"]] and d["totals"]["outage_lost"] == 0
sys.exit(0 if ok else 1)
PY
echo "PASS $NAME: under the floor with nothing to delete: every block held back and counted, END written, exit 1, not lost in svreport"

#!/bin/bash
# Damaged records (issue 27, item 5), through the tools: svpub writes a real record (20000 events, 5 s of one
# 4000 frames/s stream, unpaced into a pcap), the test damages a copy the way the issue did, and svreport --json
# must count what the damage cost:
#   A. the last block's magic zeroed, the record ending there (as a writer killed after that block leaves it):
#      the read ends with the error, and the block's records are counted lost, exactly (its header and framing
#      agree) - not "0 lost, exact";
#   B. the same on the END block of a whole record: 1 record lost, exact, no clean end;
#   C. one event's point out of range in a block whose CRC-32C is made valid again: that record alone is dropped
#      and counted (records_invalid 1), every later block is read (19999 events), no error.
# PASS/FAIL/SKIP lines; exit 77 = skip.
set -u
NAME=damaged_records
BUILD=${SVKIT_BUILD:?SVKIT_BUILD not set}
SVPUB=$BUILD/publisher/svpub
SVREPORT=$BUILD/report/svreport
FAILED=0

skip() { echo "SKIP $NAME: $*"; exit 77; }
[ -x "$SVPUB" ] || skip "svpub not built"
[ -x "$SVREPORT" ] || skip "svreport not built"
command -v python3 >/dev/null || skip "python3 missing"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
trap 'exit 1' INT TERM

"$SVPUB" -w "$T/pub.pcap" -u -d 5 --record "$T/pub.rec" -q 2>"$T/pub.err" || {
	echo "FAIL $NAME: svpub could not write the record"
	cat "$T/pub.err"
	exit 1
}

# damage MODE IN OUT: prints the number of records the damaged block held, and of events among them
damage() {
	python3 - "$@" <<'PY'
import struct, sys
mode, src, dst = sys.argv[1:4]
b = bytearray(open(src, "rb").read())
def crc32c(data, crc=0):
    global TABLE
    crc ^= 0xFFFFFFFF
    for x in data:
        crc = TABLE[(crc ^ x) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF
TABLE = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    TABLE.append(c)
blocks, at = [], 256
while at < len(b):
    magic, length, records, crc = struct.unpack_from("<IIII", b, at)
    blocks.append((at, length, records))
    at += 16 + length
def events_in(at, length):
    n, p = 0, at + 16
    while p < at + 16 + length:
        n += b[p] == 3
        p += struct.unpack_from("<H", b, p + 2)[0]
    return n
if mode == "last_events":   # the last block holding events, the file cut after it, its magic zeroed
    k = max(i for i, (_, _, n) in enumerate(blocks) if n > 1)
    at, length, records = blocks[k]
    events = events_in(at, length)
    b = b[:at + 16 + length]
    struct.pack_into("<I", b, at, 0)
elif mode == "last":        # the last block of the whole record (END), magic zeroed
    at, length, records = blocks[-1]
    events = events_in(at, length)
    struct.pack_into("<I", b, at, 0)
elif mode == "field":       # block 1's first EVENT: point 42, block CRC made valid again
    at, length, records = blocks[1]
    assert b[at + 16] == 3, "block 1 does not start with an EVENT"
    b[at + 16 + 1] = 42
    struct.pack_into("<I", b, at + 12, crc32c(b[at + 16:at + 16 + length], crc32c(b[at:at + 12])))
    records = events = 1
open(dst, "wb").write(b)
print(records, events)
PY
}

# check CASE FILE "RECORDS EVENTS" PYTHON-CONDITION: svreport --json on FILE; the condition sees f = files[0],
# n and ne = the records and events of the damaged block
check() {
	local case=$1 file=$2 n=$3 cond=$4 rc
	"$SVREPORT" --json "$file" >"$T/$case.json" 2>"$T/$case.err"
	rc=$?
	if python3 - "$T/$case.json" "$n" "$cond" <<'PY'; then
import json, sys
f = json.load(open(sys.argv[1]))["files"][0]
n, ne = map(int, sys.argv[2].split())
sys.exit(0 if eval(sys.argv[3]) else 1)
PY
		echo "PASS $NAME: $case: exit $rc, $(python3 -c 'import json,sys; f=json.load(open(sys.argv[1]))["files"][0]; print("events", f["events"], "damage", json.dumps(f["damage"]), "error", f["error"])' "$T/$case.json")"
	else
		echo "FAIL $NAME: $case: exit $rc, condition $cond"
		cat "$T/$case.json" "$T/$case.err" | head -40
		FAILED=1
	fi
}

n=$(damage last_events "$T/pub.rec" "$T/a.rec") || { echo "FAIL $NAME: damaging (a)"; exit 1; }
check "A: last block's magic zeroed, record ending there" "$T/a.rec" "$n" \
	'f["error"] and "block_magic" in f["error"] and f["damage"]["blocks_skipped"] == 1 and f["damage"]["records_lost"] == n and f["damage"]["records_lost_exact"] and f["damage"]["first_error"] == "block_magic" and f["events"] + ne == 20000 and ne > 1000'
n=$(damage last "$T/pub.rec" "$T/b.rec") || { echo "FAIL $NAME: damaging (b)"; exit 1; }
check "B: END block's magic zeroed" "$T/b.rec" "$n" \
	'f["error"] and f["damage"]["blocks_skipped"] == 1 and f["damage"]["records_lost"] == n == 1 and ne == 0 and f["damage"]["records_lost_exact"] and not f["clean_end"] and f["events"] == 20000'
n=$(damage field "$T/pub.rec" "$T/c.rec") || { echo "FAIL $NAME: damaging (c)"; exit 1; }
check "C: one event's point out of range, block CRC valid" "$T/c.rec" "$n" \
	'f["error"] is None and f["damage"]["records_invalid"] == 1 and f["damage"]["blocks_skipped"] == 0 and f["damage"]["first_error"] == "record_field" and f["events"] == 20000 - 1 and f["clean_end"]'
[ $FAILED -eq 0 ] || exit 1
exit 0

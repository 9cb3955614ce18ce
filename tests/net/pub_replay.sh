#!/bin/bash
# svpub replay of a capture (label interop, no root needed): the bundled OMICRON capture
# (tests/data/sv92le_omicron_50hz_fault_Z1_seapath.pcap: one 9-2LE stream, 12 000 samples with a
# three-phase fault) is replayed into a pcap file (--write) on two streams with their own identity:
#   A: 9-2LE 50 Hz (1 ASDU/frame), svID REPLAY-A, APPID 0x4123, VLAN 5 PCP 6, confRev 7;
#   B: F4800S2I4U4 (2 ASDUs/frame, 4800 samples/s), svID REPLAY-B, APPID 0x4124, untagged.
# Checked with tshark: every frame carries its stream's identity (not the capture's), smpCnt continuous
# from 0 at the top of the second and wrapping at the stream's sample rate, frames paced by the stream
# (250 us / 416.67 us apart on the file's clock), and sample n of each stream carries exactly the
# capture's sample n mod 12000 (values and quality; the 3.5 s run goes past the end of the capture,
# so the loop back to its first sample is checked too). B replays 4000 samples/s at 4800: svpub must warn,
# naming both rates (A, at the capture's own rate, must not).
set -u
BUILD=${SVKIT_BUILD:-build}
SRC=${SVKIT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
SVPUB=$BUILD/publisher/svpub
CAP=$SRC/tests/data/sv92le_omicron_50hz_fault_Z1_seapath.pcap
command -v tshark >/dev/null || { echo "SKIP: tshark not installed"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 not installed"; exit 77; }
[ -x "$SVPUB" ] || { echo "FAIL: $SVPUB not built"; exit 1; }
[ -f "$CAP" ] || { echo "FAIL: $CAP missing"; exit 1; }
TMP=$(mktemp -d /tmp/pub_replay.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

"$SVPUB" -w "$TMP/replay.pcap" -d 3.5 -q --json \
	-s streams[0].svid=REPLAY-A -s streams[0].appid=0x4123 -s streams[0].vlan_id=5 -s streams[0].vlan_priority=6 \
	-s streams[0].conf_rev=7 -s streams[0].signal.source=replay -s "streams[0].signal.replay=$CAP" \
	-s streams[1].svid=REPLAY-B -s streams[1].appid=0x4124 -s streams[1].vlan_id=-1 \
	-s streams[1].profile=F4800S2I4U4 -s streams[1].signal.source=replay -s "streams[1].signal.replay=$CAP" \
	-s streams[1].signal.replay_svid=AA1J1Q01A1MU0102 >"$TMP/sum.json" 2>"$TMP/err" ||
	{ echo "FAIL: svpub exited $?"; cat "$TMP/err"; exit 1; }
grep -q "svID AA1J1Q01A1MU0102 was sampled at 4000 samples/s, stream REPLAY-B publishes 4800 samples/s" "$TMP/err" ||
	{ echo "FAIL: no warning for a 4000 samples/s capture replayed at 4800 samples/s"; cat "$TMP/err"; exit 1; }
! grep -q "stream REPLAY-A publishes" "$TMP/err" || { echo "FAIL: a rate warning for REPLAY-A (4000 into 4000)"; exit 1; }
fields=(-o sv.decode_data_as_phsmeas:TRUE -T fields -E separator=';' -E occurrence=a -E aggregator=,
	-e frame.time_epoch -e sv.appid -e sv.svID -e sv.smpCnt -e sv.confRev -e sv.smpSynch -e vlan.id
	-e vlan.priority -e sv.meas_value -e sv.meas_quality -e _ws.expert)
tshark -r "$CAP" "${fields[@]}" >"$TMP/cap.txt" 2>"$TMP/tshark.err" &&
	tshark -r "$TMP/replay.pcap" "${fields[@]}" >"$TMP/out.txt" 2>>"$TMP/tshark.err" ||
	{ echo "FAIL: tshark"; cat "$TMP/tshark.err"; exit 1; }

python3 - "$TMP/cap.txt" "$TMP/out.txt" "$TMP/sum.json" <<'PY'
import json, sys
def load(path):
    out = []
    for l in open(path):
        f = l.rstrip("\n").split(";")
        # every occurrence, ","-joined: 8 values and 8 qualities per ASDU (PhsMeas1 / I4U4)
        v, q = list(map(int, f[8].split(","))), [int(x, 0) for x in f[9].split(",")]
        asdus = [(v[i:i + 8], q[i:i + 8]) for i in range(0, len(v), 8)]
        out.append(dict(t=float(f[0]), appid=f[1], svid=f[2].split(","), cnt=[int(c) for c in f[3].split(",")],
                        rev=f[4].split(","), synch=f[5].split(","), vid=f[6], pcp=f[7], asdus=asdus, expert=f[10]))
    return out
cap, out = load(sys.argv[1]), load(sys.argv[2])
summary = json.load(open(sys.argv[3]))
samples = [a for fr in cap for a in fr["asdus"]]
N = len(samples)
errs = []
if N != 12000:
    errs.append(f"capture: {N} samples, 12000 expected")
want = {  # appid -> svID, confRev, VLAN id, PCP, ASDUs/frame, sample rate, frame period
    "0x4123": ("REPLAY-A", "7", "5", "6", 1, 4000, 250e-6),
    "0x4124": ("REPLAY-B", "1", "", "", 2, 4800, 2 / 4800),
}
for appid, (svid, rev, vid, pcp, nasdu, rate, period) in want.items():
    fr = [f for f in out if f["appid"] == appid]
    if len(fr) != int(3.5 * rate / nasdu):
        errs.append(f"{appid}: {len(fr)} frames, {int(3.5 * rate / nasdu)} expected")
    n = 0
    for k, f in enumerate(fr):
        where = f"{appid} frame {k}"
        if f["svid"] != [svid] * nasdu or f["rev"] != [rev] * nasdu or f["synch"] != ["2"] * nasdu:
            errs.append(f"{where}: svID {f['svid']} confRev {f['rev']} smpSynch {f['synch']}"); break
        if f["vid"] != vid or f["pcp"] != pcp:
            errs.append(f"{where}: VLAN {f['vid']!r} PCP {f['pcp']!r}, {vid!r} {pcp!r} expected"); break
        if f["expert"]:
            errs.append(f"{where}: tshark expert info {f['expert']}"); break
        if k and abs((f["t"] - fr[0]["t"]) - k * period) > 2e-6:
            errs.append(f"{where}: at {f['t'] - fr[0]['t']:.6f} s, {k * period:.6f} expected"); break
        bad = False
        for a in range(nasdu):
            if f["cnt"][a] != n % rate:
                errs.append(f"{where} ASDU {a}: smpCnt {f['cnt'][a]}, {n % rate} expected"); bad = True; break
            if f["asdus"][a] != samples[n % N]:
                errs.append(f"{where} ASDU {a}: sample {n} = {f['asdus'][a]}, the capture's sample {n % N} is "
                            f"{samples[n % N]}"); bad = True; break
            n += 1
        if bad:
            break
    if fr and abs(fr[0]["t"] - round(fr[0]["t"]) - ((nasdu - 1) / rate)) > 1e-6:  # at its last sample
        errs.append(f"{appid}: first frame at {fr[0]['t']}, not at the instant of its last sample")
if not any(q != [0] * 8 for _, q in samples) and not any(v != samples[0][0] for v, _ in samples):
    errs.append("capture samples all equal: the test would prove nothing")
if summary["frames"] != len(out):
    errs.append(f"summary frames {summary['frames']}, file {len(out)}")
if errs:
    print("FAIL: " + "; ".join(errs[:6]))
    sys.exit(1)
print(f"PASS: {len(out)} frames of 2 streams replay the capture's {N} samples (looped) with their own identity, "
      "continuous smpCnt and their own pacing")
PY

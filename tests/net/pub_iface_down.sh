#!/bin/bash
# svpub when the network goes away (label net, root): a missing interface is a clear error (exit 1),
# no CAP_NET_RAW is a message naming it, and, through both back-ends (AF_PACKET, then AF_XDP copy mode):
#  - an interface already down at start is said so, and every frame is a counted outage (none "sent");
#  - an interface set down, up again, then deleted mid-run is a counted outage, with one message per
#    transition: svpub keeps its schedule and exits 0 with frames + outage + tx errors = every frame due;
#  - nothing queued while the link was down leaves when it is back: the peer's capture holds no frame
#    more than 100 ms after its sample instant (AF_XDP used to send ~2000 queued frames 0.5 s late).
set -u
# shellcheck source=wait_ready.sh
. "$(dirname "$0")/wait_ready.sh"
BUILD=${SVKIT_BUILD:-build}
SVPUB=$BUILD/publisher/svpub
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (netns, veth)"; exit 77; }
[ -x "$SVPUB" ] || { echo "FAIL: $SVPUB not built"; exit 1; }
NS=svpubd$$
TMP=$(mktemp -d /tmp/pub_down.XXXXXX)
CAP_PID=
cleanup() {
	[ -n "$CAP_PID" ] && kill "$CAP_PID" 2>/dev/null
	ip netns del "$NS" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
ip netns add "$NS" || { echo "SKIP: cannot create a netns"; exit 77; }
# (re)creates the pair da/db, both up
mkpair() {
	ip -n "$NS" link del da$$ 2>/dev/null
	ip -n "$NS" link add da$$ type veth peer name db$$ || { echo "SKIP: cannot create veth"; exit 77; }
	ip -n "$NS" link set da$$ up
	ip -n "$NS" link set db$$ up
}
mkpair
fail() { echo "FAIL: $*"; exit 1; }

ip netns exec "$NS" "$SVPUB" -i nosuch$$ -d 1 -q 2>"$TMP/e1"; rc=$?
[ $rc -eq 1 ] && grep -q "interface nosuch$$" "$TMP/e1" || fail "missing interface: rc $rc: $(cat "$TMP/e1")"

if command -v setpriv >/dev/null; then
	ip netns exec "$NS" setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$SVPUB" -i da$$ -d 1 -q 2>"$TMP/e2"; rc=$?
	[ $rc -eq 1 ] && grep -q "CAP_NET_RAW" "$TMP/e2" || fail "no privilege: rc $rc: $(cat "$TMP/e2")"
	ip netns exec "$NS" setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$SVPUB" -w "$TMP/x.pcap" -d 1 -q -s priority=10 2>"$TMP/e3"; rc=$?
	[ $rc -eq 1 ] && grep -q "CAP_SYS_NICE" "$TMP/e3" || fail "no CAP_SYS_NICE: rc $rc: $(cat "$TMP/e3")"
fi

CAPTURE=1
command -v dumpcap >/dev/null && command -v tshark >/dev/null || { CAPTURE=0; echo "note: no dumpcap/tshark: the late-frame check is skipped"; }
# TAI - REALTIME in whole seconds (0 where the kernel's TAI offset is unset): capture stamps are REALTIME
TAI_OFF=$(python3 -c 'import time; print(round(time.clock_gettime(time.CLOCK_TAI) - time.time()))')

for be in af_packet af_xdp; do
	opt=(); [ $be = af_xdp ] && opt=(-x)
	mkpair

	# already down at start: said once, every frame an outage
	ip -n "$NS" link set da$$ down
	ip netns exec "$NS" "$SVPUB" "${opt[@]}" -i da$$ -d 0.5 -q --json >"$TMP/$be.down.json" 2>"$TMP/$be.down.err"; rc=$?
	[ $rc -eq 0 ] || fail "$be: svpub on a down interface exited $rc: $(tail -3 "$TMP/$be.down.err")"
	grep -q "interface da$$ is down" "$TMP/$be.down.err" || fail "$be: no 'interface is down' message: $(cat "$TMP/$be.down.err")"
	python3 - "$TMP/$be.down.json" "$be" <<'PY' || exit 1
import json, sys
s = json.load(open(sys.argv[1]))
if s["frames"] != 0 or s["outage"] != 2000:
    print(f"FAIL: {sys.argv[2]}: interface down from the start: {s['frames']} frames sent, {s['outage']} outage, "
          f"2000 outage expected"); sys.exit(1)
PY
	ip -n "$NS" link set da$$ up

	# down, up, deleted while publishing
	if [ $CAPTURE = 1 ]; then
		: >"$TMP/$be.dumpcap.err"
		ip netns exec "$NS" dumpcap -q -i db$$ -B 16 -s 128 -f "ether proto 0x88ba or vlan" -w "$TMP/$be.pcap" \
			2>"$TMP/$be.dumpcap.err" &
		CAP_PID=$!
		wait_ready "$TMP/$be.dumpcap.err" "Capturing on" "$CAP_PID"
	fi
	ip netns exec "$NS" "$SVPUB" "${opt[@]}" -i da$$ -d 3 -q --json >"$TMP/$be.json" 2>"$TMP/$be.err" &
	PID=$!
	sleep 1
	ip -n "$NS" link set da$$ down
	sleep 0.5
	ip -n "$NS" link set da$$ up
	sleep 0.5
	ip -n "$NS" link del da$$
	wait $PID; rc=$?
	if [ -n "$CAP_PID" ]; then
		kill -INT "$CAP_PID" 2>/dev/null; wait "$CAP_PID" 2>/dev/null; CAP_PID=
	fi
	[ $rc -eq 0 ] || fail "$be: svpub exited $rc during the outage: $(tail -5 "$TMP/$be.err")"
	downs=$(grep -c "interface da$$ is down or gone" "$TMP/$be.err")
	backs=$(grep -c "interface da$$ is back" "$TMP/$be.err")
	[ "$downs" -eq 2 ] && [ "$backs" -eq 1 ] ||
		fail "$be: $downs 'down or gone' and $backs 'is back' messages, 2 and 1 expected (one per transition): $(cat "$TMP/$be.err")"
	[ $CAPTURE = 1 ] && tshark -r "$TMP/$be.pcap" -T fields -E separator=';' -e frame.time_epoch -e sv.smpCnt \
		>"$TMP/$be.txt" 2>/dev/null
	python3 - "$TMP/$be.json" "$be" "$CAPTURE" "$TMP/$be.txt" "$TAI_OFF" <<'PY' || exit 1
import json, sys
s = json.load(open(sys.argv[1])); be = sys.argv[2]
due = 3 * 4000
if s["outage"] < 2000 or s["frames"] < 4000:
    print(f"FAIL: {be}: frames {s['frames']} outage {s['outage']}: an outage of ~1.5 s was expected"); sys.exit(1)
if s["frames"] + s["outage"] + s["tx_errors"] != due:
    print(f"FAIL: {be}: frames {s['frames']} + outage {s['outage']} + errors {s['tx_errors']} != {due}"); sys.exit(1)
per = s["per_stream"][0]
if per["frames"] != s["frames"] or per["outage"] != s["outage"] or "dropped" in per:
    print(f"FAIL: {be}: per-stream {per} does not match the totals"); sys.exit(1)
late = []
if sys.argv[3] == "1":
    off, n = int(sys.argv[5]), 0
    for l in open(sys.argv[4]):
        t, cnt = l.rstrip("\n").split(";")
        n += 1
        # how long after its sample instant the peer saw the frame (sample seconds are TAI)
        age = (float(t) + off - int(cnt) / 4000) % 1.0
        if age > 0.1:
            late.append(round(age, 3))
    if n < 4000:
        print(f"FAIL: {be}: the peer captured {n} frames, svpub sent {s['frames']}"); sys.exit(1)
    if late:
        print(f"FAIL: {be}: {len(late)} frames reached the peer more than 100 ms after their sample instant "
              f"(queued while the link was down?), e.g. {late[:5]} s"); sys.exit(1)
print(f"{be}: {s['frames']} sent, {s['outage']} refused while down/deleted, none late at the peer")
PY
done
echo "PASS: missing interface and missing capability reported; af_packet and af_xdp: down at start and down/up/deleted mid-run counted as outage, one message per transition, nothing sent late after the link came back"

#!/bin/bash
# svpub when the network goes away (label net, root): a missing interface is a clear error (exit 1),
# no CAP_NET_RAW is a message naming it, and an interface set down and then deleted mid-run is a
# counted outage: svpub keeps its schedule, exits 0 with frames + outage = every frame due.
set -u
BUILD=${SVKIT_BUILD:-build}
SVPUB=$BUILD/publisher/svpub
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (netns, veth)"; exit 77; }
[ -x "$SVPUB" ] || { echo "FAIL: $SVPUB not built"; exit 1; }
NS=svpubd$$
TMP=$(mktemp -d /tmp/pub_down.XXXXXX)
trap 'ip netns del "$NS" 2>/dev/null; rm -rf "$TMP"' EXIT
ip netns add "$NS" || { echo "SKIP: cannot create a netns"; exit 77; }
ip -n "$NS" link add da$$ type veth peer name db$$ || { echo "SKIP: cannot create veth"; exit 77; }
ip -n "$NS" link set da$$ up
ip -n "$NS" link set db$$ up
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

ip netns exec "$NS" "$SVPUB" -i da$$ -d 3 -q --json >"$TMP/sum.json" 2>"$TMP/e4" &
PID=$!
sleep 1
ip -n "$NS" link set da$$ down
sleep 0.5
ip -n "$NS" link set da$$ up
sleep 0.5
ip -n "$NS" link del da$$
wait $PID; rc=$?
[ $rc -eq 0 ] || fail "svpub exited $rc during the outage: $(tail -5 "$TMP/e4")"
python3 - "$TMP/sum.json" <<'PY' || exit 1
import json, sys
s = json.load(open(sys.argv[1]))
due = 3 * 4000
if s["outage"] < 2000 or s["frames"] < 4000:
    print(f"FAIL: frames {s['frames']} outage {s['outage']}: an outage of ~1.5 s was expected"); sys.exit(1)
if s["frames"] + s["outage"] + s["tx_errors"] != due:
    print(f"FAIL: frames {s['frames']} + outage {s['outage']} + errors {s['tx_errors']} != {due}"); sys.exit(1)
print(f"PASS: missing interface and missing capability reported; outage counted ({s['frames']} sent, {s['outage']} refused while down/deleted), clean exit")
PY

#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# vm/lab step by step: 'up' builds the topology (namespaces, veths, bridge, state file) and leaves it;
# 'run' produces the records and the report on it; 'down' removes everything. The lab refuses, with a
# clear message and without touching anything, when not root, when a name it needs is taken, and when a
# lab of the same name is already up.
set -u
SRC=${SVKIT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
export SVKIT_BUILD=${SVKIT_BUILD:-$SRC/build}
LAB=$SRC/vm/lab
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
OUT=$(mktemp -d /tmp/lab_steps.XXXXXX)
chmod 755 "$OUT"
P=svs$((RANDOM % 9000 + 1000))
fail=0
cleanup() {
	"$LAB" down --prefix "$P" >/dev/null 2>&1
	ip netns del "${P}xhv" 2>/dev/null
	ip netns del "${P}xpub" 2>/dev/null
	rm -rf "$OUT"
}
trap cleanup EXIT
bad() { echo "FAIL: $*"; fail=1; }

# --- refusals ---------------------------------------------------------------------------------------
if command -v setpriv >/dev/null; then
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups bash "$LAB" up --prefix "$P" 2>&1)
	rc=$?
	[ $rc = 1 ] || bad "not root: exit $rc, expected 1"
	grep -q "needs root" <<<"$out" || bad "not root: no clear message: $out"
	ip netns list | grep -q "^$P" && bad "not root: something was created"
else
	echo "note: setpriv missing, not-root refusal not checked"
fi
# a namespace the lab needs already exists: refuse, leave it alone, create nothing
ip netns add "${P}xhv" || { echo "FAIL: cannot create a namespace"; exit 1; }
out=$("$LAB" up --prefix "${P}x" 2>&1)
rc=$?
[ $rc = 1 ] || bad "name taken: exit $rc, expected 1"
grep -q "'${P}xhv' already exists" <<<"$out" || bad "name taken: no clear message: $out"
[ -e "/run/netns/${P}xhv" ] || bad "name taken: the existing namespace was removed"
ip netns list | grep -q "^${P}xpub" && bad "name taken: the lab created ${P}xpub anyway"
ip netns del "${P}xhv"
# an interface name taken (in the root namespace)
ip link add "${P}xbr" type dummy 2>/dev/null && {
	out=$("$LAB" up --prefix "${P}x" 2>&1)
	rc=$?
	[ $rc = 1 ] && grep -q "interface '${P}xbr' already exists" <<<"$out" || bad "interface taken: exit $rc: $out"
	ip link del "${P}xbr"
	ip netns list | grep -q "^${P}x" && bad "interface taken: namespaces were created"
}
"$LAB" up --prefix 'bad name' >/dev/null 2>&1 && bad "a prefix with a space was accepted"

# --- up ---------------------------------------------------------------------------------------------
"$LAB" up --prefix "$P" >"$OUT/up.log" 2>&1 || { cat "$OUT/up.log"; echo "FAIL: up"; exit 1; }
for n in "${P}pub" "${P}hv" "${P}g1" "${P}g2"; do
	[ -e "/run/netns/$n" ] || bad "after up: no namespace $n"
done
ip -n "${P}hv" -o link show "${P}br" 2>/dev/null | grep -q "state UP\|UP," || bad "after up: bridge ${P}br not up"
for l in "${P}up" "${P}v1" "${P}v2"; do
	ip -n "${P}hv" -o link show "$l" 2>/dev/null | grep -q "master ${P}br" || bad "after up: $l not on the bridge"
done
ip -n "${P}g1" -o link show "${P}e1" >/dev/null 2>&1 || bad "after up: no ${P}e1 in ${P}g1"
ip -n "${P}pub" -o link show "${P}p0" >/dev/null 2>&1 || bad "after up: no ${P}p0 in ${P}pub"
[ -f "/run/svkit-lab/$P.state" ] || bad "after up: no state file"
out=$("$LAB" up --prefix "$P" 2>&1)
rc=$?
[ $rc = 1 ] && grep -q "already up" <<<"$out" || bad "a second 'up' of the same lab: exit $rc: $out"
[ -e "/run/netns/${P}hv" ] || bad "the refused second 'up' removed the first lab"

# --- run --------------------------------------------------------------------------------------------
"$LAB" run --prefix "$P" --duration 3 --out "$OUT/run" >"$OUT/run.log" 2>&1
rc=$?
if [ $rc = 77 ]; then
	echo "note: run skipped: $(grep SKIP "$OUT/run.log" | head -1)"
else
	[ $rc = 0 ] || { bad "run exited $rc"; tail -15 "$OUT/run.log"; }
	for f in pub.rec trace.rec guest1.rec guest2.rec report.json report.html cyclictest.hist setup.txt; do
		[ -s "$OUT/run/$f" ] || bad "run: no $f"
	done
	if command -v python3 >/dev/null && [ -s "$OUT/run/report.json" ]; then
		python3 - "$OUT/run/report.json" <<'PY' || fail=1
import json, sys
r = json.load(open(sys.argv[1]))
ev = {f["path"].rsplit("/", 1)[-1]: f["events"] for f in r["files"]}
ok = all(ev.get(f, 0) > 0 for f in ("pub.rec", "trace.rec", "guest1.rec", "guest2.rec"))
print("run: events per file %s" % ev)
if not ok:
    print("FAIL: a record file has no events")
sys.exit(0 if ok else 1)
PY
	fi
	[ -e "/run/netns/${P}hv" ] || bad "run removed the topology (only down may)"
	pgrep -f "$OUT/run" >/dev/null && bad "processes left after run: $(pgrep -af "$OUT/run")"
fi

# a run asking for other guests than the lab has: refused before anything starts
out=$("$LAB" run --prefix "$P" --guests 3 --duration 1 --out "$OUT/g3" 2>&1)
rc=$?
[ $rc = 1 ] && grep -q "built with 2 guest" <<<"$out" || bad "run --guests 3 on a 2-guest lab: exit $rc: $out"

# a run killed with SIGKILL leaves its root-namespace tools (cyclictest, svtrace): 'down' stops them
if [ $rc != 77 ] && [ -s "$OUT/run/trace.rec" ]; then
	"$LAB" run --prefix "$P" --duration 30 --out "$OUT/killed" >"$OUT/killed.log" 2>&1 &
	lab=$!
	for _ in $(seq 100); do [ -s "/run/svkit-lab/$P.pids" ] && pgrep -f "$OUT/killed/trace.rec" >/dev/null && break; sleep 0.1; done
	sleep 1
	kill -KILL $lab; wait $lab 2>/dev/null
	left=$(pgrep -f "$OUT/killed/(trace.rec|cyclictest)" | tr '\n' ' ')
	[ -n "$left" ] || bad "the killed run left nothing to stop (test setup): $(cat "$OUT/killed.log")"
fi

# --- down -------------------------------------------------------------------------------------------
"$LAB" down --prefix "$P" >"$OUT/down.log" 2>&1 || { bad "down failed"; cat "$OUT/down.log"; }
sleep 0.2
pgrep -af "$OUT/killed/" && bad "after down: the killed run's tools still run"
grep -q "stopped pid [0-9]* (.*svtrace.*), left by an interrupted run" "$OUT/down.log" ||
	bad "down did not say which tools of the killed run it stopped: $(cat "$OUT/down.log")"
[ -f "/run/svkit-lab/$P.pids" ] && bad "after down: pid file left"
ip netns list | grep -q "^$P" && bad "after down: namespaces left: $(ip netns list | grep "^$P" | tr '\n' ' ')"
ip -o link show | grep -q "$P" && bad "after down: links left"
[ -f "/run/svkit-lab/$P.state" ] && bad "after down: state file left"
out=$("$LAB" down --prefix "$P" 2>&1)
[ $? = 1 ] && grep -q "no lab '$P' is up" <<<"$out" || bad "down of a lab that is not up: $out"

[ $fail = 0 ] || { echo FAIL; exit 1; }
echo PASS

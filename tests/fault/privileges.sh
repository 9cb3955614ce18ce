#!/bin/bash
# Privileges (issue 27, item 1): the systemd units' capability sets, run for real.
# The capabilities, limits and scheduling policy are read from vm/systemd/{svsub@,svpub,svtrace}.service (never
# copied here). svsub and svpub run as an unprivileged user (nobody, with a temporary HOME) through setpriv with
# exactly their unit's ambient/bounding set and NoNewPrivileges, svtrace as root bounded to its unit's set, in
# throwaway namespaces:  ns P: p0 --- up0 [ns H: bridge br0] vm1p --- vm1 (ns G).
#   1. the units' sets work: svpub (af_packet, then af_xdp) -> svsub (af_xdp, then af_packet) through the bridge,
#      traced by svtrace (in H, then from here with --netns H and the drop-in's CAP_SYS_ADMIN): every frame svpub
#      says it sent is received and traced at T1 and T2a;
#   2. each capability a unit grants is needed: removed, the tool fails at start with a message naming it, or
#      (optional ones) runs and says what it lost; a unit granting one this test does not know fails the test;
#   3. svtrace --netns without CAP_SYS_ADMIN names the namespace and the capability (not "interface not found");
#      svpub's AF_XDP UMEM over RLIMIT_MEMLOCK says so (LimitMEMLOCK replaces CAP_IPC_LOCK).
# Where this machine cannot apply a unit's limit (raising RLIMIT_MEMLOCK/RTPRIO needs CAP_SYS_RESOURCE), the
# test keeps the machine's limit, says so, and sizes svpub's UMEM to it. PASS/FAIL/SKIP lines; exit 77 = skip.
set -u
NAME=privileges
SRC=${SVKIT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${SVKIT_BUILD:?SVKIT_BUILD not set}
UNITS=$SRC/vm/systemd
FAILED=0

skip() { echo "SKIP $NAME: $*"; exit 77; }
pass() { echo "PASS $NAME: $*"; }
note() { echo "NOTE $NAME: $*"; }
fail() {
	echo "FAIL $NAME: $*"
	FAILED=1
}
# show FILE: the last lines of a tool's stderr, under a FAIL
show() { [ -s "$1" ] && tail -n 8 "$1" | sed 's/^/    /'; }

[ "$(id -u)" -eq 0 ] || skip "needs root (namespaces, setpriv)"
for c in setpriv ip python3 prlimit; do command -v $c >/dev/null || skip "$c missing"; done
for b in subscriber/svsub publisher/svpub bpf/svtrace; do [ -x "$BUILD/$b" ] || skip "$b not built"; done
for u in svsub@ svpub svtrace; do [ -r "$UNITS/$u.service" ] || skip "$UNITS/$u.service missing"; done
RUID=$(id -u nobody 2>/dev/null) || skip "no user nobody to run the tools as"
RGID=$(id -g nobody)
setpriv --bounding-set=-all,+bpf,+perfmon,+net_admin,+net_raw,+sys_admin true 2>/dev/null ||
	skip "this kernel or setpriv lacks CAP_BPF/CAP_PERFMON (Linux 5.8+, util-linux 2.36+)"

# --- the units, parsed ---------------------------------------------------------------------------------------------
# unit_key UNIT KEY: the last value of KEY= (what systemd uses for a single-valued key)
unit_key() { sed -n "s/^$2=//p" "$UNITS/$1.service" | tail -n 1; }
# unit_caps UNIT KEY: every CAP_ of KEY= lines (they add up), lower case without CAP_, sorted
unit_caps() {
	sed -n "s/^$2=//p" "$UNITS/$1.service" | tr ' ' '\n' | sed -n 's/^CAP_//p' | tr '[:upper:]' '[:lower:]' | sort -u |
		paste -sd ' '
}
SUB_CAPS=$(unit_caps svsub@ AmbientCapabilities)
PUB_CAPS=$(unit_caps svpub AmbientCapabilities)
TRACE_CAPS=$(unit_caps svtrace CapabilityBoundingSet)
for u in svsub@ svpub; do
	[ "$(unit_caps $u AmbientCapabilities)" = "$(unit_caps $u CapabilityBoundingSet)" ] ||
		fail "$u.service: AmbientCapabilities and CapabilityBoundingSet differ"
	[ -n "$(unit_key $u User)" ] || fail "$u.service runs as root"
	[ "$(unit_key $u NoNewPrivileges)" = yes ] || fail "$u.service: no NoNewPrivileges=yes"
done
[ -z "$(unit_key svtrace User)" ] || fail "svtrace.service: this test expects it as root with a bounding set"
echo "units: svsub@ {$SUB_CAPS}  svpub {$PUB_CAPS}  svtrace {$TRACE_CAPS}"

# setpriv's list for exactly CAPS ("net_raw bpf" -> -all,+net_raw,+bpf)
cap_list() {
	local l=-all c
	for c in $1; do l+=",+$c"; done
	echo "$l"
}
# without CAPS ONE
minus() { echo " $1 " | sed "s/ $2 / /; s/^ //; s/ $//"; }

# prlimit_for UNIT: the unit's LimitMEMLOCK=/LimitRTPRIO= as prlimit options, those this machine lets root set
prlimit_for() {
	local v opts=() want
	v=$(unit_key "$1" LimitMEMLOCK)
	if [ -n "$v" ]; then
		want=$([ "$v" = infinity ] && echo unlimited || echo "$v")
		if prlimit --memlock="$want:$want" true 2>/dev/null; then opts+=("--memlock=$want:$want")
		else
			note "$1: LimitMEMLOCK=$v cannot be applied here (no CAP_SYS_RESOURCE): RLIMIT_MEMLOCK stays" \
				"$(ulimit -l) KiB" >&2
		fi
	fi
	v=$(unit_key "$1" LimitRTPRIO)
	if [ -n "$v" ]; then
		if prlimit --rtprio="$v:$v" true 2>/dev/null; then opts+=("--rtprio=$v:$v")
		else note "$1: LimitRTPRIO=$v cannot be applied here: RLIMIT_RTPRIO stays $(ulimit -r)" >&2
		fi
	fi
	echo "${opts[*]}"
}
# sched_for UNIT: chrt arguments for the unit's CPUScheduling*= (as systemd applies them, before dropping to User=)
sched_for() {
	local pol prio rof
	pol=$(unit_key "$1" CPUSchedulingPolicy)
	prio=$(unit_key "$1" CPUSchedulingPriority)
	rof=$(unit_key "$1" CPUSchedulingResetOnFork)
	[ "$pol" = fifo ] || return 0
	local a="chrt --fifo"
	[ "$rof" = yes ] && a+=" --reset-on-fork"
	if $a "${prio:-1}" true 2>/dev/null; then echo "$a ${prio:-1}"
	else note "$1: CPUSchedulingPolicy=fifo cannot be applied here (no CAP_SYS_NICE)" >&2
	fi
}
SUB_LIM=$(prlimit_for svsub@)
PUB_LIM=$(prlimit_for svpub)
TRACE_LIM=$(prlimit_for svtrace)
SUB_SCHED=$(sched_for svsub@)
PUB_SCHED=$(sched_for svpub)
PUB_PRIO=$(unit_key svpub CPUSchedulingPriority)

# --- a throwaway lab -----------------------------------------------------------------------------------------------
# shellcheck source=tests/net/wait_ready.sh
. "$SRC/tests/net/wait_ready.sh"
SUF=$$$RANDOM
NS_P=prvP$SUF NS_H=prvH$SUF NS_G=prvG$SUF
T=$(mktemp -d)
PIDS=""
cleanup() {
	local p
	for p in $PIDS; do kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
	for n in "$NS_P" "$NS_H" "$NS_G"; do ip netns del "$n" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
ip netns add "$NS_P" && ip netns add "$NS_H" && ip netns add "$NS_G" || skip "cannot create network namespaces"
ip -n "$NS_P" link add p0 type veth peer name up0 netns "$NS_H" &&
	ip -n "$NS_H" link add vm1p type veth peer name vm1 netns "$NS_G" &&
	ip -n "$NS_H" link add br0 type bridge || skip "cannot create veth/bridge"
for i in up0 vm1p; do ip -n "$NS_H" link set "$i" master br0 up; done
ip -n "$NS_H" link set br0 up && ip -n "$NS_P" link set p0 up && ip -n "$NS_G" link set vm1 up
for n in "$NS_P" "$NS_H" "$NS_G"; do ip -n "$n" link set lo up; done

# The tools where user nobody can run them, and its HOME.
chmod 755 "$T"
mkdir -p "$T/bin" "$T/home"
cp "$BUILD/subscriber/svsub" "$BUILD/publisher/svpub" "$BUILD/bpf/svtrace" "$T/bin/"
chmod 755 "$T/bin" "$T/bin"/*
chown "$RUID:$RGID" "$T/home"

# user_cmd NS LIMITS SCHED CAPS CMD...: sets CMD (an array) to run CMD in NS as nobody with exactly CAPS (ambient +
# bounding), the unit's limits and policy (applied by root first, as systemd does), no new privileges. Every
# wrapper execs the next, so a background "${CMD[@]}" & has the tool's PID.
user_cmd() {
	local ns=$1 lim=$2 sched=$3 l
	l=$(cap_list "$4")
	shift 4
	CMD=()
	# shellcheck disable=SC2206
	[ -n "$lim" ] && CMD+=(prlimit $lim)
	# shellcheck disable=SC2206
	[ -n "$sched" ] && CMD+=($sched)
	CMD+=(ip netns exec "$ns" setpriv --reuid="$RUID" --regid="$RGID" --clear-groups --inh-caps="$l"
		--ambient-caps="$l" --bounding-set="$l" --no-new-privs env HOME="$T/home" "$@")
}
# root_cmd NS CAPS CMD...: sets CMD to run CMD in NS (empty: here) as root bounded to CAPS (svtrace.service)
root_cmd() {
	local ns=$1 l
	l=$(cap_list "$2")
	shift 2
	CMD=()
	# shellcheck disable=SC2206
	[ -n "$TRACE_LIM" ] && CMD+=(prlimit $TRACE_LIM)
	[ -n "$ns" ] && CMD+=(ip netns exec "$ns")
	CMD+=(setpriv --bounding-set="$l" "$@")
}
as_user() {
	user_cmd "$@"
	"${CMD[@]}"
}
as_root() {
	root_cmd "$@"
	"${CMD[@]}"
}
jget() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1" 2>/dev/null; }

# svpub's AF_XDP UMEM (af_xdp.frames x 4 KiB) within RLIMIT_MEMLOCK when the unit's unlimited one could not be
# applied here: a limit of this machine, not of the unit
XDP_FRAMES=()
case "$PUB_LIM" in
*memlock=unlimited*) ;;
*)
	lim_kib=$(ulimit -l)
	if [ "$lim_kib" != unlimited ] && [ "$lim_kib" -lt 2048 ]; then
		skip "RLIMIT_MEMLOCK is $lim_kib KiB here and the units' LimitMEMLOCK cannot be applied (no" \
			"CAP_SYS_RESOURCE): too little for an AF_XDP UMEM"
	fi
	if [ "$lim_kib" != unlimited ]; then
		f=256
		while [ $((f * 2 * 4 * 2)) -le "$lim_kib" ] && [ $f -lt 2048 ]; do f=$((f * 2)); done
		XDP_FRAMES=(-s "af_xdp.frames=$f")
		note "svpub af_xdp: af_xdp.frames=$f to fit RLIMIT_MEMLOCK $lim_kib KiB"
	fi
	;;
esac

# --- 1. the units' sets work ---------------------------------------------------------------------------------------
# traffic RUN SUBBACKEND PUBMODE TRACEMODE: svtrace + svsub started, svpub sends 1 s, both stopped with SIGINT
traffic() {
	local run=$1 sbe=$2 pmode=$3 tmode=$4 subpid trpid rc pubargs=() n got tr tlabel
	# the ready files where each tool may write: svtrace is root (its bounding set lacks CAP_DAC_OVERRIDE),
	# svsub the user svkit would be
	local trready="$T/$run.tr.ready" subready="$T/home/$run.sub.ready"
	rm -f "$trready" "$subready"
	tlabel="{$TRACE_CAPS} in the namespace"
	[ "$tmode" = in_ns ] || tlabel="{$TRACE_CAPS sys_admin} with --netns"
	if [ "$tmode" = in_ns ]; then
		root_cmd "$NS_H" "$TRACE_CAPS" "$T/bin/svtrace" --ingress up0 --egress vm1p --json --ready-file "$trready"
	else	# from here with --netns, plus the drop-in's CAP_SYS_ADMIN
		root_cmd "" "$TRACE_CAPS sys_admin" "$T/bin/svtrace" --netns "$NS_H" --ingress up0 --egress vm1p --json \
			--ready-file "$trready"
	fi
	"${CMD[@]}" >"$T/$run.tr.json" 2>"$T/$run.tr.err" &
	trpid=$!
	PIDS="$PIDS $trpid"
	user_cmd "$NS_G" "$SUB_LIM" "$SUB_SCHED" "$SUB_CAPS" "$T/bin/svsub" -i vm1 --backend "$sbe" --json \
		--ready-file "$subready"
	"${CMD[@]}" >"$T/$run.sub.json" 2>"$T/$run.sub.err" &
	subpid=$!
	PIDS="$PIDS $subpid"
	if ! wait_ready_file "$trready" "$trpid"; then
		fail "$run: svtrace $tlabel did not start"
		show "$T/$run.tr.err"
	fi
	if ! wait_ready_file "$subready" "$subpid"; then
		fail "$run: svsub --backend $sbe with {$SUB_CAPS} did not start"
		show "$T/$run.sub.err"
	fi
	[ "$pmode" = af_xdp ] && pubargs=(--af-xdp "${XDP_FRAMES[@]}")
	[ -n "$PUB_SCHED" ] && [ -n "$PUB_PRIO" ] && pubargs+=(-s "priority=$PUB_PRIO")
	as_user "$NS_P" "$PUB_LIM" "$PUB_SCHED" "$PUB_CAPS" "$T/bin/svpub" -i p0 -d 1 -q --json "${pubargs[@]}" \
		>"$T/$run.pub.json" 2>"$T/$run.pub.err"
	rc=$?
	[ $rc -eq 0 ] || { fail "$run: svpub ($pmode) with {$PUB_CAPS} exited $rc"; show "$T/$run.pub.err"; }
	sleep 0.5
	kill -INT "$subpid" "$trpid" 2>/dev/null
	wait "$subpid"; rc=$?
	[ $rc -eq 0 ] || { fail "$run: svsub exited $rc after SIGINT"; show "$T/$run.sub.err"; }
	wait "$trpid"; rc=$?
	[ $rc -eq 0 ] || { fail "$run: svtrace exited $rc after SIGINT"; show "$T/$run.tr.err"; }
	n=$(jget "$T/$run.pub.json" 'd["frames"] if d["tx_errors"] == 0 else -1')
	got=$(jget "$T/$run.sub.json" 'd["sv_frames"]')
	tr=$(jget "$T/$run.tr.json" '" ".join(str(h["frames"]) for h in d["hops"] if (h["from"], h["to"]) == ("T1", "T2a"))')
	if [ "${n:-0}" -gt 0 ] && [ "$got" = "$n" ] && [ "$tr" = "$n" ]; then
		pass "$run: svpub $pmode {$PUB_CAPS} sent $n, svsub $sbe {$SUB_CAPS} received $got, svtrace $tlabel" \
			"traced $tr at T1-T2a"
	else
		fail "$run: svpub $pmode sent ${n:-?} (tx errors make it -1), svsub $sbe received ${got:-?}, svtrace T1-T2a ${tr:-?}"
		show "$T/$run.sub.err"
		show "$T/$run.tr.err"
	fi
}
traffic units1 af_xdp af_packet in_ns
traffic units2 af_packet af_xdp netns

# --- 2. each capability is needed -----------------------------------------------------------------------------------
# expect_fail WHAT PATTERN ERRFILE RC: the tool must have failed (RC != 0) with PATTERN (grep -E) on stderr
expect_fail() {
	if [ "$4" -ne 0 ] && grep -qE -- "$2" "$3"; then
		pass "$1: fails at start: $(grep -E -m1 -- "$2" "$3" | cut -c1-220)"
	else
		fail "$1: exit $4, no message matching '$2'"
		show "$3"
	fi
}
# svsub: what each capability of its unit buys, per back-end ("" = not used by that back-end)
sub_needs() {
	case "$1:$2" in
	net_raw:*) echo "CAP_NET_RAW" ;;
	net_admin:af_xdp) echo "lacks CAP_NET_ADMIN" ;;
	bpf:af_xdp) echo "lacks CAP_BPF" ;;
	net_admin:af_packet | bpf:af_packet) echo "" ;;
	*) echo "?" ;;
	esac
}
for cap in $SUB_CAPS; do
	if [ "$(sub_needs "$cap" af_xdp)" = "?" ]; then
		fail "svsub@.service grants CAP_${cap^^}, which this test does not know svsub to need"
		continue
	fi
	for be in af_xdp af_packet; do
		want=$(sub_needs "$cap" "$be")
		as_user "$NS_G" "$SUB_LIM" "" "$(minus "$SUB_CAPS" "$cap")" "$T/bin/svsub" -i vm1 --backend "$be" \
			--duration 1 --json >"$T/m.sub.json" 2>"$T/m.sub.err"
		rc=$?
		if [ -n "$want" ]; then
			expect_fail "svsub $be without CAP_${cap^^}" "$want" "$T/m.sub.err" $rc
		elif [ $rc -eq 0 ]; then
			pass "svsub $be without CAP_${cap^^}: runs (only --backend af_xdp uses it)"
		else
			fail "svsub $be without CAP_${cap^^}: exit $rc"
			show "$T/m.sub.err"
		fi
	done
done

for cap in $PUB_CAPS; do
	case $cap in
	net_raw)
		as_user "$NS_P" "$PUB_LIM" "" "$(minus "$PUB_CAPS" $cap)" "$T/bin/svpub" -i p0 -d 0.2 -q \
			>/dev/null 2>"$T/m.pub.err"
		expect_fail "svpub af_packet without CAP_NET_RAW" "needs CAP_NET_RAW" "$T/m.pub.err" $?
		as_user "$NS_P" "$PUB_LIM" "" "$(minus "$PUB_CAPS" $cap)" "$T/bin/svpub" -i p0 -d 0.2 -q --af-xdp \
			"${XDP_FRAMES[@]}" >/dev/null 2>"$T/m.pub.err"
		expect_fail "svpub af_xdp without CAP_NET_RAW" "needs CAP_NET_RAW" "$T/m.pub.err" $?
		;;
	net_admin)
		# optional: hardware TX stamps (SIOCSHWTSTAMP); veth has none, but the kernel checks the capability first
		as_user "$NS_P" "$PUB_LIM" "" "$(minus "$PUB_CAPS" $cap)" "$T/bin/svpub" -i p0 -d 0.2 -q --json \
			>"$T/m.pub.json" 2>"$T/m.pub.err"
		rc=$?
		d=$(jget "$T/m.pub.json" 'd["tx_timestamp_detail"]')
		if [ $rc -eq 0 ] && [[ $d == *"needs CAP_NET_ADMIN"* ]]; then
			pass "svpub af_packet without CAP_NET_ADMIN: runs, without hardware stamps, and says why: $d"
		else
			fail "svpub without CAP_NET_ADMIN: exit $rc, tx_timestamp_detail '$d' does not name CAP_NET_ADMIN"
			show "$T/m.pub.err"
		fi
		as_user "$NS_P" "$PUB_LIM" "" "$(minus "$PUB_CAPS" $cap)" "$T/bin/svpub" -i p0 -d 0.2 -q --af-xdp \
			"${XDP_FRAMES[@]}" >/dev/null 2>"$T/m.pub.err" &&
			pass "svpub af_xdp without CAP_NET_ADMIN: runs (AF_XDP transmit uses no XDP program)" ||
			{ fail "svpub af_xdp without CAP_NET_ADMIN failed"; show "$T/m.pub.err"; }
		;;
	*) fail "svpub.service grants CAP_${cap^^}, which this test does not know svpub to need" ;;
	esac
done

for cap in $TRACE_CAPS; do
	case $cap in
	bpf | perfmon)
		as_root "$NS_H" "$(minus "$TRACE_CAPS" $cap)" "$T/bin/svtrace" --ingress up0 --egress vm1p -d 1 \
			>/dev/null 2>"$T/m.tr.err"
		expect_fail "svtrace without CAP_${cap^^}" "missing privileges: .*CAP_${cap^^}" "$T/m.tr.err" $?
		;;
	*) fail "svtrace.service grants CAP_${cap^^}, which this test does not know svtrace to need" ;;
	esac
done

# --- 3. the messages of the issue -----------------------------------------------------------------------------------
as_root "" "$TRACE_CAPS" "$T/bin/svtrace" --netns "$NS_H" --ingress up0 --egress vm1p -d 1 >/dev/null 2>"$T/m.tr.err"
expect_fail "svtrace --netns without CAP_SYS_ADMIN" "network namespace '$NS_H'.*needs CAP_SYS_ADMIN" "$T/m.tr.err" $?
# LimitMEMLOCK is what lets the UMEM be locked (no CAP_IPC_LOCK): below it, svpub says so
as_user "$NS_P" "--memlock=1048576:1048576" "" "$PUB_CAPS" "$T/bin/svpub" -i p0 -d 0.2 -q --af-xdp \
	>/dev/null 2>"$T/m.pub.err"
expect_fail "svpub af_xdp with RLIMIT_MEMLOCK 1 MiB" "over RLIMIT_MEMLOCK.*LimitMEMLOCK" "$T/m.pub.err" $?

[ $FAILED -eq 0 ] || exit 1
pass "every unit's set works and every capability in it is needed or says what it buys"
exit 0

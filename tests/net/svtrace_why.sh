#!/bin/bash
# svtrace's why-late decomposition, each cause injected (label net, root): tests/net/svtrace_why.c.
# Two namespaces, two veth pairs: a0 (A) -> b0 (B) carries the test's frames, f0 (A) -> f1 (B) a flood of
# unrelated frames; both receive on CPU 0 (RPS), the senders run on CPU 1.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
SVKIT_BUILD=${SVKIT_BUILD:-$HERE/../../build}
SUF="$$$RANDOM"
NS_A="whyA$SUF"; NS_B="whyB$SUF"
skip() { echo "SKIP: svtrace_why: $*"; exit 77; }
cleanup() { ip netns del "$NS_A" 2>/dev/null; ip netns del "$NS_B" 2>/dev/null; }
trap cleanup EXIT INT TERM

[ "$(id -u)" = 0 ] || skip "needs root"
BIN="$SVKIT_BUILD/tests/net/svtrace_why"
[ -x "$BIN" ] || skip "svtrace_why not built"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
ip netns add "$NS_A" && ip netns add "$NS_B" || skip "cannot create namespaces"
ip -n "$NS_A" link add a0 type veth peer name b0 netns "$NS_B" &&
	ip -n "$NS_A" link add f0 type veth peer name f1 netns "$NS_B" || { echo "FAIL: svtrace_why: veth pairs"; exit 1; }
for l in a0 f0 lo; do ip -n "$NS_A" link set "$l" up; done
for l in b0 f1 lo; do ip -n "$NS_B" link set "$l" up; done
# the receive softirq of both pairs on CPU 0 (bit 0), whichever CPU sends
ip netns exec "$NS_B" sh -c 'echo 1 > /sys/class/net/b0/queues/rx-0/rps_cpus && echo 1 > /sys/class/net/f1/queues/rx-0/rps_cpus' ||
	skip "cannot set RPS on the receiving veths"
"$BIN" "$NS_A" "$NS_B" 0 1

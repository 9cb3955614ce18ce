# Sourced by the subscriber net tests: two namespaces joined by one veth pair, removed on exit.
#   veth_pair TAG   -> $NA (holds a0) and $NB (holds b0), both links up; $T a temporary folder.
# On exit (pass, fail or signal) it kills $SUBPID if set, deletes both namespaces and $T. Needs skip().
# Brings wait_ready (wait_ready.sh).
# shellcheck source=wait_ready.sh
. "$(dirname "${BASH_SOURCE[0]}")/wait_ready.sh"
veth_pair() {
	local s=$$$RANDOM
	NA=${1}a$s
	NB=${1}b$s
	T=$(mktemp -d)
	trap veth_pair_cleanup EXIT
	ip netns add "$NA" && ip netns add "$NB" || skip "cannot create network namespaces"
	ip link add a0 netns "$NA" type veth peer name b0 netns "$NB" || skip "cannot create veth"
	ip -n "$NA" link set a0 up
	ip -n "$NB" link set b0 up
}

veth_pair_cleanup() {
	[ -n "${SUBPID:-}" ] && kill -KILL "$SUBPID" 2>/dev/null
	ip netns del "$NA" 2>/dev/null
	ip netns del "$NB" 2>/dev/null
	rm -rf "$T"
}

# Shared lab for svtrace's network tests (sourced). Topology, all veth, names unique per run:
#   ns P (publisher) p0 --- up0 [ns H: bridge br0] vm1p --- vm1 (ns V1)
#                                                  vm2p --- vm2 (ns V2)
# svtrace runs in the root namespace and is told H's interfaces with --netns H.
# shellcheck source=wait_ready.sh
. "$(dirname "${BASH_SOURCE[0]}")/wait_ready.sh"
SUF="$$$RANDOM"
NS_P="svtP$SUF"; NS_H="svtH$SUF"; NS_V1="svtA$SUF"; NS_V2="svtB$SUF"
LAB_PIDS=""

lab_cleanup() {
	for p in $LAB_PIDS; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	for n in "$NS_P" "$NS_H" "$NS_V1" "$NS_V2"; do ip netns del "$n" 2>/dev/null; done
}

# lab_hv_links: the hypervisor namespace's links (its veth pairs to the publisher and the guests, the
# bridge), all up; also to build it again after it was replaced
lab_hv_links() {
	ip -n "$NS_P" link add p0 type veth peer name up0 netns "$NS_H" || return 1
	ip -n "$NS_H" link add vm1p type veth peer name vm1 netns "$NS_V1" || return 1
	ip -n "$NS_H" link add vm2p type veth peer name vm2 netns "$NS_V2" || return 1
	ip -n "$NS_H" link add br0 type bridge || return 1
	for i in up0 vm1p vm2p; do ip -n "$NS_H" link set "$i" master br0 up || return 1; done
	ip -n "$NS_H" link set br0 up && ip -n "$NS_P" link set p0 up && ip -n "$NS_V1" link set vm1 up &&
		ip -n "$NS_V2" link set vm2 up && ip -n "$NS_H" link set lo up
}

lab_up() {
	ip netns add "$NS_P" && ip netns add "$NS_H" && ip netns add "$NS_V1" && ip netns add "$NS_V2" || return 1
	lab_hv_links || return 1
	for n in "$NS_P" "$NS_V1" "$NS_V2"; do ip -n "$n" link set lo up; done
	# multicast flooding on a fresh bridge waits for nothing, but let the links settle
	sleep 0.5
}

svtrace_bin() {
	for b in "$SVKIT_BUILD/bpf/svtrace" "$SVKIT_BUILD/svtrace"; do
		[ -x "$b" ] && { echo "$b"; return 0; }
	done
	return 1
}

svpub_bin() {
	[ -x "$SVKIT_BUILD/publisher/svpub" ] && { echo "$SVKIT_BUILD/publisher/svpub"; return 0; }
	return 1
}

svsub_bin() {
	[ -x "$SVKIT_BUILD/subscriber/svsub" ] && { echo "$SVKIT_BUILD/subscriber/svsub"; return 0; }
	return 1
}

# json_get FILE PYTHON-EXPRESSION-ON-d
json_get() {
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"
}

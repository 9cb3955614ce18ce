# shellcheck shell=bash
# Sourced by the fault tests that run the tools in svtrace's lab (tests/net/svtrace_lib.sh), after NAME is set:
#   . "$(dirname "$0")/fault_lab.sh" TAG
# gives $T (a temporary folder /tmp/TAG.XXXXXX), PIDS (the tools' pids, killed at exit) and MNTS (mounts,
# unmounted at exit), the lab torn down and $T removed at exit; skip REASON (exit 77) and fail WHAT (exit 1
# after the last lines of $T/pub.err, sub.err and trace.err); fault_tools: SVPUB, SVSUB, SVTRACE and SVREPORT
# set, or a skip naming the one not built (python3 too).
FAULT_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SVKIT_BUILD=${SVKIT_BUILD:-$FAULT_HERE/../../build}
# shellcheck source=../net/svtrace_lib.sh
. "$FAULT_HERE/../net/svtrace_lib.sh"
T=$(mktemp -d "/tmp/$1.XXXXXX")
MNTS=""
PIDS=""
cleanup() {
	for p in $PIDS; do kill -KILL "$p" 2>/dev/null; done
	lab_cleanup
	for m in $MNTS; do umount "$m" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
skip() { echo "SKIP $NAME: $*"; exit 77; }
fail() {
	echo "FAIL $NAME: $*"
	for f in pub sub trace; do [ -s "$T/$f.err" ] && sed "s/^/  $f: /" "$T/$f.err" | tail -12; done
	exit 1
}
fault_tools() {
	SVPUB=$(svpub_bin) || skip "svpub not built"
	SVSUB=$(svsub_bin) || skip "svsub not built"
	SVTRACE=$(svtrace_bin) || skip "svtrace not built"
	SVREPORT=$SVKIT_BUILD/report/svreport
	[ -x "$SVREPORT" ] || skip "svreport not built"
	command -v python3 >/dev/null || skip "python3 missing"
}

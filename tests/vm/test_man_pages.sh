#!/bin/sh
# docs/man/*.[18]: each page renders with groff and man without a single warning, and names every option
# that the tool's specification (issues 3-6) gives it and, where the tools are built (SVKIT_BUILD), every
# option the tool itself lists (--features: its one option table).
set -u
SRC=${SVKIT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
for c in groff man; do command -v $c >/dev/null || { echo "SKIP: $c missing"; exit 77; }; done
T=$(mktemp -d /tmp/svkit-man.XXXXXX)
trap 'rm -rf "$T"' EXIT INT TERM
fail=0
for page in svpub.1 svsub.1 svtrace.8 svreport.1; do
	tool=${page%.*}
	f="$SRC/docs/man/$page"
	[ -f "$f" ] || { echo "FAIL: $f missing"; fail=1; continue; }
	LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$f" >"$T/groff" 2>&1
	LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$f" >"$T/$tool.txt" 2>"$T/man"
	if [ -s "$T/groff" ] || [ -s "$T/man" ]; then
		echo "FAIL: $page warnings:"; cat "$T/groff" "$T/man"; fail=1
	fi
	case $tool in
	svpub) opts="--config -c --interface --write --duration --unpaced --record --json --print-config --help --version" ;;
	svsub) opts="--interface --backend af_xdp af_packet --duration --record --record-size --record-keep --record-flush-ms --record-sync-ms --record-min-free --write --json --read --jsonl -c --app overcurrent --pickup --help --version" ;;
	svtrace) opts="--ingress --egress --netns --duration --live --record --record-size --record-keep --record-flush-ms --record-sync-ms --record-min-free --json --help --version" ;;
	svreport) opts="--budgets --html --json RECORDS --help --version" ;;
	esac
	# man hyphenates and justifies; search the unjustified text of the synopsis and options.
	tr -s ' \n' ' ' <"$T/$tool.txt" | sed 's/‐ //g; s/- //g' >"$T/flat"
	for o in $opts; do
		grep -qF -- "$o" "$T/flat" || { echo "FAIL: $page does not document $o"; fail=1; }
	done
	bin=""
	for d in publisher subscriber bpf report; do
		[ -x "${SVKIT_BUILD:-/nonexistent}/$d/$tool" ] && bin="$SVKIT_BUILD/$d/$tool"
	done
	if [ -n "$bin" ] && command -v python3 >/dev/null; then
		for o in $("$bin" --features | python3 -c 'import json, sys; print(" ".join(json.load(sys.stdin)["options"]))'); do
			grep -qF -- "--$o" "$T/flat" || { echo "FAIL: $page does not document --$o ($tool --features lists it)"; fail=1; }
		done
	fi
	for s in NAME SYNOPSIS DESCRIPTION OPTIONS "EXIT STATUS" EXAMPLES "SEE ALSO"; do
		grep -q "^$s" "$T/$tool.txt" || { echo "FAIL: $page lacks section $s"; fail=1; }
	done
	[ $fail = 0 ] && echo "ok: $page"
done
if [ "$fail" = 0 ]; then echo "PASS: man pages"; exit 0; fi
echo "FAIL: man pages"
exit 1

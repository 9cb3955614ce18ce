#!/bin/bash
# Every program's command line comes from its one table (sv_cli.h), without privileges: --features is one JSON
# line listing every option, and --help names each of them; --print-config of a command line loads back
# (-c / --config) to the same text, so the dump and the options agree; --version says "NAME (svkit) VERSION";
# exit codes 0 (--help), 2 (an unknown option, a value out of range).
set -u
BUILD=${SVKIT_BUILD:-build}
command -v python3 >/dev/null || { echo "SKIP: python3 missing"; exit 77; }
T=$(mktemp -d /tmp/tools_cli.XXXXXX)
trap 'rm -rf "$T"' EXIT INT TERM
fails=0 n=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# tool DIR NAME CONFIG-OPTION ARGS...: the checks above, ARGS the options whose dump is loaded back
tool() {
	local bin=$BUILD/$1/$2 name=$2 copt=$3
	shift 3
	[ -x "$bin" ] || { echo "skip: $name not built"; return; }
	n=$((n + 1))
	"$bin" --features >"$T/f.json" || fail "$name --features: exit $?"
	"$bin" --help >"$T/help" || fail "$name --help: exit $?"
	python3 - "$T/f.json" "$T/help" "$name" <<'PY' || fail "$name: --features and --help disagree"
import json, re, sys
f = json.loads(open(sys.argv[1]).read())
lines = open(sys.argv[1]).read().count("\n")
helptext = open(sys.argv[2]).read()
missing = [o for o in f["options"] if not re.search(r"--%s\b" % re.escape(o), helptext)]
ok = f["tool"] == sys.argv[3] and lines == 1 and "help" in f["options"] and "print-config" in f["options"] and not missing
print("%s: %s, %d options%s" % (sys.argv[3], "ok" if ok else "bad", len(f["options"]), ", missing in --help: %s" % missing if missing else ""))
sys.exit(0 if ok else 1)
PY
	"$bin" "$@" --print-config >"$T/p1.yaml" 2>"$T/err" || { fail "$name $* --print-config: $(cat "$T/err")"; return; }
	"$bin" "$copt" "$T/p1.yaml" --print-config >"$T/p2.yaml" 2>"$T/err" && cmp -s "$T/p1.yaml" "$T/p2.yaml" ||
		fail "$name: the dump of '$*' does not load back to the same: $(cat "$T/err"; diff "$T/p1.yaml" "$T/p2.yaml" | head -5)"
	"$bin" --version | grep -qx "$name (svkit) [0-9.]*" || fail "$name --version: $("$bin" --version)"
	"$bin" --no-such-option >/dev/null 2>&1
	[ $? = 2 ] || fail "$name --no-such-option: not exit 2"
}

tool publisher svpub -c -i eth9 -d 2.5 -s streams[0].svid=MU09 -s priority=10 --metrics 127.0.0.1:9460 --host hv3
tool subscriber svsub -c --interface eth9 --backend af_packet --wrap 4000 --xdp-mode skb --umem-frames 4096 \
	--record /tmp/x.rec --record-keep all --app overcurrent --no-block-test --metrics '[::1]:9462' --metrics-linger 30 \
	--host hv1
tool bpf svtrace -c -i up0 -e all --ovsdb unix:/run/x.sock --expect seen --ringbuf-kb 4096 -t 500 --record /tmp/t.rec \
	--metrics 0.0.0.0:9461 --metrics-linger 20.5 --host hv2
tool report svreport --config -w 5 --max-frames 100000 --expect seen --json -H /tmp/r.html
"$BUILD/subscriber/svsub" --read x.pcap --wrap 1 >/dev/null 2>"$T/err"
[ $? = 2 ] && grep -q "svsub: --wrap: 1 is out of range 0 or 2..65536" "$T/err" || fail "svsub --wrap 1: $(cat "$T/err")"
[ $fails -eq 0 ] || { echo "FAIL: $fails checks"; exit 1; }
echo "PASS: $n programs: --features lists every option and --help names each, --print-config loads back the same, --version, exit 2 on a bad option"

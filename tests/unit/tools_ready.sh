#!/bin/bash
# The tools' readiness as machines read it (sv_ready.h), without privileges: svpub writing a capture and
# svsub reading it send READY=1 (with MAINPID and STATUS), then STOPPING=1, to the socket NOTIFY_SOCKET names
# (a path, and '@' for the abstract namespace, as systemd's Type=notify does), and create their --ready-file
# holding the same lines, removed by the time they exit; --features lists ready-file for each tool; a
# --ready-file in a directory that does not exist is said and the run goes on (exit 0).
set -u
BUILD=${SVKIT_BUILD:-build}
SVPUB=$BUILD/publisher/svpub
SVSUB=$BUILD/subscriber/svsub
[ -x "$SVPUB" ] && [ -x "$SVSUB" ] || { echo "FAIL: svpub or svsub not built"; exit 1; }
command -v python3 >/dev/null || { echo "SKIP: python3 missing"; exit 77; }
T=$(mktemp -d /tmp/tools_ready.XXXXXX)
trap 'rm -rf "$T"' EXIT INT TERM
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# run ADDRESS FEED TOOL ARGS...: TOOL with NOTIFY_SOCKET=ADDRESS and --ready-file; FEED: a file written to
# its stdin, which stays open (TOOL stays running) until the ready file was seen, or "-": TOOL writes to a
# pipe read only after that. The datagrams in $T/msgs, the ready file's content in $T/seen.
run() {
	local addr=$1 feed=$2
	shift 2
	rm -f "$T/ready" "$T/msgs" "$T/seen"
	python3 - "$addr" "$feed" "$T/msgs" "$T/ready" "$T/seen" "$@" <<'PY'
import os, socket, subprocess, sys, time
addr, feed, out, ready, seen = sys.argv[1:6]
cmd = sys.argv[6:] + ["--ready-file", ready]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("\0" + addr[1:] if addr.startswith("@") else addr)
s.settimeout(0.05)
p = subprocess.Popen(cmd, env=dict(os.environ, NOTIFY_SOCKET=addr), stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE if feed == "-" else subprocess.DEVNULL, stderr=subprocess.DEVNULL)
if feed != "-":
    p.stdin.write(open(feed, "rb").read())
    p.stdin.flush()
msgs, content, t0 = [], None, time.time()
while content is None and p.poll() is None and time.time() - t0 < 30:
    try:
        msgs.append(s.recv(4096).decode())
    except socket.timeout:
        pass
    if any(m.startswith("READY=1") for m in msgs):
        content = open(ready).read() if os.path.exists(ready) else ""	# there before READY=1 came
p.stdin.close()
if feed == "-":
    while p.stdout.read(65536):
        pass
p.wait()
while True:	# what was sent before the exit
    try:
        msgs.append(s.recv(4096).decode())
    except socket.timeout:
        break
open(out, "w").write("%d %d\n" % (p.returncode, p.pid) + "\x1e".join(msgs))
open(seen, "w").write(content or "")
PY
}

# check WHAT: READY=1 with this run's pid and a STATUS first, STOPPING=1 later, the ready file seen with the
# READY lines and gone after the exit
check() {
	python3 - "$T/msgs" "$T/seen" "$1" <<'PY' || fail "$1: $(tr '\036' '|' <"$T/msgs")"
import sys
head, _, rest = open(sys.argv[1]).read().partition("\n")
rc, pid = head.split()
msgs = rest.split("\x1e") if rest else []
seen, what = open(sys.argv[2]).read(), sys.argv[3]
ready = [m for m in msgs if m.startswith("READY=1\n")]
ok = rc == "0" and len(ready) == 1 and ("MAINPID=%s\n" % pid) in ready[0] and "\nSTATUS=" in ready[0]
ok = ok and any(m.startswith("STOPPING=1") for m in msgs[msgs.index(ready[0]):]) if ready else False
ok = ok and seen == ready[0]
print("ok: %s: %s" % (what, ready[0].replace("\n", " ").strip()) if ok else "bad: %s: rc %s, seen %r" % (what, rc, seen))
sys.exit(0 if ok else 1)
PY
	[ -e "$T/ready" ] && fail "$1: the ready file is left after the exit"
}

"$SVPUB" -w "$T/one.pcap" -d 1 -q 2>/dev/null || fail "svpub -w"
run "$T/notify.sock" - "$SVPUB" -w /dev/stdout -d 5 -q
check "svpub -w, NOTIFY_SOCKET a path"
run "@svkit-tools-ready-$$" "$T/one.pcap" "$SVSUB" --read - -q
check "svsub --read, NOTIFY_SOCKET abstract"
for t in "$SVPUB" "$SVSUB" "$BUILD/bpf/svtrace"; do
	[ -x "$t" ] || continue
	"$t" --features | grep -q '"ready-file"' || fail "$t --features does not list ready-file"
done
"$SVSUB" --read "$T/one.pcap" -q --ready-file "$T/nosuch/ready" 2>"$T/err"
rc=$?
[ $rc = 0 ] && grep -q -- "--ready-file" "$T/err" || fail "a ready file that cannot be written: exit $rc, '$(cat "$T/err")'"
[ $fails -eq 0 ] || { echo "FAIL: $fails checks"; exit 1; }
echo "PASS: svpub and svsub say READY=1 (pid, status) and STOPPING=1 on NOTIFY_SOCKET (path and abstract), the ready file appears with the same lines and is gone at exit"

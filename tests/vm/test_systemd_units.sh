#!/bin/sh
# vm/systemd/*.service: systemd-analyze verify passes for each unit (an instance of svsub@), with
# the Documentation= man pages resolved from docs/man; svsub@ and svpub grant the same ambient and bounding
# capabilities (which ones, and that each is needed: tests/fault/privileges.sh, which runs the tools with them) and
# the real-time settings; a broken unit is caught (the check can fail).
set -u
SRC=${SVKIT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
command -v systemd-analyze >/dev/null || { echo "SKIP: systemd-analyze missing"; exit 77; }
SYSUNITS=/usr/lib/systemd/system
[ -f $SYSUNITS/sysinit.target ] || SYSUNITS=/lib/systemd/system
[ -f $SYSUNITS/sysinit.target ] || { echo "SKIP: no systemd unit directory to build a root from"; exit 77; }
T=$(mktemp -d /tmp/svkit-units.XXXXXX)
trap 'rm -rf "$T"' EXIT INT TERM
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }

# A throw-away root: the system's own units (for the targets ours depend on), stub programs where
# the units' ExecStart= point, our units where the package installs them, our man pages on MANPATH.
R="$T/root"
mkdir -p "$R/usr/lib/systemd" "$R/usr/bin" "$R/etc/systemd/system" "$T/man/man1" "$T/man/man8"
cp -a "$SYSUNITS" "$R/usr/lib/systemd/system"
mkdir -p "$R/usr/sbin"; printf '#!/bin/sh\nexit 0\n' >"$R/usr/sbin/svtrace"; chmod 755 "$R/usr/sbin/svtrace"
for b in svpub svsub svreport; do printf '#!/bin/sh\nexit 0\n' >"$R/usr/bin/$b"; chmod 755 "$R/usr/bin/$b"; done
mkdir -p "$R/usr/lib/svkit"; cp "$SRC/vm/systemd/svkit-set-aside" "$R/usr/lib/svkit/"	# ExecStartPre= keeps old records
cp "$SRC"/vm/systemd/*.service "$R/usr/lib/systemd/system/"
cp "$SRC"/docs/man/*.1 "$T/man/man1/"; cp "$SRC"/docs/man/*.8 "$T/man/man8/"
verify() {
	MANPATH="$T/man" systemd-analyze verify --root="$R" "$@" >"$T/v.out" 2>&1
}
for u in svsub@bay1.service svtrace.service svpub.service; do
	if verify "$u" && [ ! -s "$T/v.out" ]; then ok "verify $u"; else bad "verify $u: $(cat "$T/v.out")"; fi
done

# The contract of svsub@.
S="$SRC/vm/systemd/svsub@.service"
key() { sed -n "s/^$1=//p" "$2"; }
for u in "$S" "$SRC/vm/systemd/svpub.service"; do
	amb=$(key AmbientCapabilities "$u" | tr ' ' '\n' | sort | tr '\n' ' ')
	bnd=$(key CapabilityBoundingSet "$u" | tr ' ' '\n' | sort | tr '\n' ' ')
	if [ -n "$amb" ] && [ "$amb" = "$bnd" ]; then ok "$(basename "$u"): ambient = bounding = $amb"
	else bad "$(basename "$u"): AmbientCapabilities ($amb) differ from CapabilityBoundingSet ($bnd)"; fi
done
[ "$(key CPUSchedulingPolicy "$S")" = fifo ] || bad "svsub@: CPUSchedulingPolicy"
[ -n "$(key CPUSchedulingPriority "$S")" ] || bad "svsub@: CPUSchedulingPriority"
[ -n "$(key CPUAffinity "$S")" ] || bad "svsub@: CPUAffinity"
[ "$(key LimitMEMLOCK "$S")" = infinity ] || bad "svsub@: LimitMEMLOCK"
# a restart keeps what was recorded (the record moved aside, not truncated); a usage error is not retried
for u in "$S" "$SRC/vm/systemd/svpub.service" "$SRC/vm/systemd/svtrace.service"; do
	rec=$(sed -n 's/^ExecStart=.*--record \([^ ]*\).*/\1/p' "$u")
	[ "$(key ExecStartPre "$u")" = "/usr/lib/svkit/svkit-set-aside $rec" ] ||
		bad "$(basename "$u"): no ExecStartPre setting $rec aside"
	[ "$(key RestartPreventExitStatus "$u")" = 2 ] || bad "$(basename "$u"): RestartPreventExitStatus"
done
[ "$(key Restart "$S")" = on-failure ] || bad "svsub@: Restart"
# started means ready: each tool says READY=1 (sv_ready.h), so units ordered after one start once it is
for u in "$S" "$SRC/vm/systemd/svpub.service" "$SRC/vm/systemd/svtrace.service"; do
	[ "$(key Type "$u")" = notify ] || bad "$(basename "$u"): Type=$(key Type "$u"), not notify"
done
[ "$(key KillSignal "$S")" = SIGINT ] || bad "svsub@: KillSignal"
key ExecStart "$S" | grep -q -- '-c /etc/svkit/svsub-%i.yaml' || bad "svsub@: config per instance"
ok "svsub@ contract checked"

# svkit-set-aside: the last run's record and its rotated parts become NAME-STAMP.rec[.N] (svreport reads the
# run from NAME-STAMP.rec); an older stamp's file and an empty record are left alone.
A="$T/aside"
mkdir -p "$A"
for f in svtrace.rec svtrace.rec.1 svtrace.rec.2 svtrace.rec.20240101T000000Z; do echo "$f" >"$A/$f"; done
: >"$A/svpub.rec"
sh "$SRC/vm/systemd/svkit-set-aside" "$A/svtrace.rec" && sh "$SRC/vm/systemd/svkit-set-aside" "$A/svpub.rec" &&
	sh "$SRC/vm/systemd/svkit-set-aside" "$A/missing.rec" || bad "svkit-set-aside failed"
got=$(cd "$A" && ls | sed 's/-20[0-9]\{6\}T[0-9]\{6\}Z\.rec/-STAMP.rec/' | tr '\n' ' ')
[ "$got" = "svpub.rec svtrace-STAMP.rec svtrace-STAMP.rec.1 svtrace-STAMP.rec.2 svtrace.rec.20240101T000000Z " ] &&
	grep -qx svtrace.rec.2 "$A"/svtrace-*.rec.2 || bad "svkit-set-aside left: $got"
[ "$fail" = 0 ] && ok "svkit-set-aside: a record and its parts set aside together"

# Each unit must stop svkit tools with SIGINT so records are flushed.
for u in svtrace svpub; do
	[ "$(key KillSignal "$SRC/vm/systemd/$u.service")" = SIGINT ] || bad "$u: KillSignal"
done

# Negative controls: verify must reject a broken unit and a missing program.
sed 's/^CPUSchedulingPolicy=fifo/CPUSchedulingPolicy=fifoo/' "$S" >"$R/usr/lib/systemd/system/svbroken@.service"
if verify svbroken@x.service && ! grep -q . "$T/v.out"; then bad "a bad CPUSchedulingPolicy went unnoticed"
else ok "broken unit rejected: $(head -1 "$T/v.out")"; fi
rm "$R/usr/bin/svsub"
if verify svsub@bay1.service; then bad "missing /usr/bin/svsub went unnoticed"; else ok "missing program rejected"; fi

if [ "$fail" = 0 ]; then echo "PASS: systemd units"; exit 0; fi
echo "FAIL: systemd units"
exit 1

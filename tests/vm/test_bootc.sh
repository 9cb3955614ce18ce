#!/bin/sh
# vm/bootc: the recipe cannot be built here (no base image), so check it statically: every build
# argument declared, used and documented; the sources it COPYs exist; its RUN scripts parse; the
# first-boot unit verifies; setup-image writes valid kargs.d TOML and refuses bad arguments;
# tuned-firstboot applies the profile once; build-args round-trips good tuning files and names the
# line of every error in bad ones.
set -u
SRC=${SVKIT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
B="$SRC/vm/bootc"
CF="$B/Containerfile"
T=$(mktemp -d /tmp/svkit-bootc.XXXXXX)
trap 'rm -rf "$T"' EXIT INT TERM
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }

# --- build arguments --------------------------------------------------------------------------------
declared=$(sed -n 's/^ARG \([A-Z_][A-Z0-9_]*\).*/\1/p' "$CF" | sort -u)
for a in TARGET TARGET_PROFILE RTCPU_LIST EXTRA_KARGS EXTRA_PKG EXTRA_CMD; do
	echo "$declared" | grep -qx "$a" || bad "ARG $a not declared"
done
for a in $declared; do
	n=$(grep -v '^ARG ' "$CF" | grep -v '^#' | grep -cE "\\\$\\{?$a\\}?([^A-Za-z0-9_]|$)")
	[ "$n" -gt 0 ] || bad "ARG $a declared but never used"
	grep -q "^| \`$a\` |" "$B/README.md" || bad "ARG $a not documented in vm/bootc/README.md"
done
for a in $(sed -n 's/^| `\([A-Z_][A-Z0-9_]*\)` |.*/\1/p' "$B/README.md"); do
	echo "$declared" | grep -qx "$a" || bad "README documents ARG $a that the Containerfile lacks"
done
[ $fail = 0 ] && ok "ARGs declared, used, documented: $(echo $declared)"
grep -q '^FROM quay.io/centos-bootc/centos-bootc:stream9 AS builder' "$CF" || bad "builder stage"
[ "$(grep -c '^FROM quay.io/centos-bootc/centos-bootc:stream9' "$CF")" = 2 ] || bad "base image"
grep -q '/usr/lib/bootc/kargs.d/10-svkit-rt.toml' "$B/setup-image" || bad "setup-image does not write kargs.d"
for p in kernel-rt-core tuned tuned-profiles-realtime realtime-tests rtla setup-image 'COPY --from=builder'; do
	grep -qF -- "$p" "$CF" || bad "Containerfile lacks $p"
done
# Every COPY source (outside --from) exists in the tree, relative to the build context (the top).
for s in $(awk '/^COPY / && !/--from/ { for (i = 2; i < NF; i++) print $i }' "$CF"); do
	[ "$s" = . ] && continue
	[ -e "$SRC/$s" ] || bad "COPY source $s missing"
done
ok "COPY sources present"
# Every RUN script parses as sh (continuation lines joined; $ARGs are environment variables).
awk '/^RUN / { cmd = substr($0, 5); while (cmd ~ /\\$/) { sub(/\\$/, "", cmd); getline l; cmd = cmd l }
	print cmd > (dir "/run." ++n) }' dir="$T" "$CF"
nr=0
for r in "$T"/run.*; do
	nr=$((nr + 1))
	sh -n "$r" 2>"$T/sh.err" || bad "RUN does not parse: $(cat "$r"): $(cat "$T/sh.err")"
done
[ $nr -ge 5 ] && ok "$nr RUN scripts parse" || bad "only $nr RUN lines"

# --- the first-boot unit ----------------------------------------------------------------------------
U="$B/svkit-tuned-firstboot.service"
grep -qx 'ConditionPathExists=!/var/lib/svkit/tuned-applied' "$U" || bad "unit guard"
grep -qx 'Type=oneshot' "$U" || bad "unit not oneshot"
if command -v systemd-analyze >/dev/null; then
	S=/usr/lib/systemd/system
	[ -f $S/sysinit.target ] || S=/lib/systemd/system
	R="$T/root"
	mkdir -p "$R/usr/lib/systemd" "$R/usr/libexec/svkit"
	cp -a "$S" "$R/usr/lib/systemd/system"
	# tuned.service is in the image, not necessarily here.
	printf '[Unit]\nDescription=stub\n[Service]\nExecStart=/usr/libexec/svkit/tuned-firstboot\n' \
		>"$R/usr/lib/systemd/system/tuned.service"
	cp "$B/tuned-firstboot" "$R/usr/libexec/svkit/tuned-firstboot"
	cp "$U" "$R/usr/lib/systemd/system/"
	if systemd-analyze verify --man=no --root="$R" svkit-tuned-firstboot.service >"$T/v" 2>&1 && [ ! -s "$T/v" ]
	then ok "systemd-analyze verify svkit-tuned-firstboot.service"
	else bad "verify: $(cat "$T/v")"; fi
else
	bad "systemd-analyze missing"
fi

# --- setup-image --------------------------------------------------------------------------------------
PY=python3
toml() { $PY -c 'import sys, tomllib, json; print(json.dumps(tomllib.load(open(sys.argv[1], "rb"))))' "$1"; }
D="$T/img1"
if DESTDIR="$D" TARGET=host RTCPU_LIST=2-3,6 EXTRA_KARGS="intel_iommu=on iommu=pt" "$B/setup-image" >/dev/null; then
	j=$(toml "$D/usr/lib/bootc/kargs.d/10-svkit-rt.toml")
	case $j in
	*'"isolcpus=managed_irq,domain,2-3,6"'*'"nohz_full=2-3,6"'*'"rcu_nocbs=2-3,6"'*'"intel_iommu=on", "iommu=pt"'*) ok "kargs.d TOML: $j" ;;
	*) bad "kargs.d TOML: $j" ;;
	esac
	grep -qx 'PROFILE=realtime-virtual-host' "$D/usr/lib/svkit/tuned.env" || bad "host default profile"
else
	bad "setup-image host"
fi
D="$T/img2"
DESTDIR="$D" TARGET=guest "$B/setup-image" >/dev/null || bad "setup-image guest"
[ ! -e "$D/usr/lib/bootc/kargs.d/10-svkit-rt.toml" ] && ok "no kargs, no kargs.d file" || bad "empty kargs file written"
grep -qx 'PROFILE=realtime-virtual-guest' "$D/usr/lib/svkit/tuned.env" || bad "guest default profile"
D="$T/img3"
DESTDIR="$D" TARGET=guest TARGET_PROFILE=realtime EXTRA_KARGS=quiet "$B/setup-image" >/dev/null &&
	grep -qx 'PROFILE=realtime' "$D/usr/lib/svkit/tuned.env" &&
	[ "$(toml "$D/usr/lib/bootc/kargs.d/10-svkit-rt.toml")" = '{"kargs": ["quiet"], "match-architectures": ["x86_64"]}' ] &&
	ok "TARGET_PROFILE and EXTRA_KARGS alone" || bad "TARGET_PROFILE/EXTRA_KARGS alone"
sbad() { # expected message, env...
	msg=$1; shift
	if env "$@" DESTDIR="$T/x" "$B/setup-image" --check >/dev/null 2>"$T/e"; then bad "setup-image accepted $*"
	elif grep -qF -- "$msg" "$T/e"; then ok "setup-image refuses $*"
	else bad "setup-image $*: $(cat "$T/e")"; fi
}
sbad "TARGET must be host or guest" TARGET=hypervisor
sbad "RTCPU_LIST '2-' is not a CPU list" RTCPU_LIST=2-
sbad "contains a quote" 'EXTRA_KARGS=a="b c"'
sbad "is not a TuneD profile name" 'TARGET_PROFILE=../etc'

# --- tuned-firstboot, with a stand-in tuned-adm ---------------------------------------------------------
mkdir -p "$T/bin" "$T/tuned" "$T/state"
cat >"$T/bin/tuned-adm" <<'SH'
#!/bin/sh
case $1 in
profile) echo "$2" >"$TUNED_STUB_STATE"; echo "profile $2" >>"$TUNED_STUB_LOG" ;;
active) echo "Current active profile: $(cat "$TUNED_STUB_STATE")" ;;
verify) exit 0 ;;
esac
SH
chmod +x "$T/bin/tuned-adm"
printf 'TARGET=guest\nPROFILE=realtime-virtual-guest\nRTCPU_LIST=1-3\n' >"$T/tuned.env"
run_fb() {
	PATH="$T/bin:$PATH" TUNED_STUB_STATE="$T/state/active" TUNED_STUB_LOG="$T/state/log" \
		SVKIT_TUNED_ENV="$T/tuned.env" SVKIT_TUNED_MARKER="$T/state/var/tuned-applied" \
		SVKIT_TUNED_DIR="$T/tuned" "$B/tuned-firstboot" >"$T/fb.out" 2>&1
}
if run_fb && grep -qx 'isolated_cores=1-3' "$T/tuned/realtime-virtual-guest-variables.conf" &&
	grep -qx 'profile realtime-virtual-guest' "$T/state/log" && [ -s "$T/state/var/tuned-applied" ]; then
	ok "tuned-firstboot: variables, profile, marker"
else
	bad "tuned-firstboot: $(cat "$T/fb.out")"
fi
printf '#!/bin/sh\n[ "$1" = active ] && echo "Current active profile: balanced"; exit 0\n' >"$T/bin/tuned-adm"
rm -f "$T/state/var/tuned-applied"
if run_fb; then bad "tuned-firstboot succeeded though the profile did not apply"
elif [ -e "$T/state/var/tuned-applied" ]; then bad "marker written after a failure"
else ok "tuned-firstboot fails (no marker) when the profile does not apply"; fi

# --- build-args ---------------------------------------------------------------------------------------
BA="$B/build-args"
for f in "$B"/tuning/*.tuning; do
	"$BA" --list "$f" >"$T/list" || { bad "build-args --list $f"; continue; }
	# eval the shell form exactly as the README does, and compare word by word with --list.
	words=$("$BA" "$f") || { bad "build-args $f"; continue; }
	eval "set -- $words"
	: >"$T/eval"
	while [ $# -gt 0 ]; do
		[ "$1" = --build-arg ] || { bad "$f: expected --build-arg, got $1"; break; }
		printf '%s\n' "$2" >>"$T/eval"
		shift 2
	done
	"$BA" --null "$f" | tr '\0' '\n' | grep -v '^--build-arg$' >"$T/null"
	if cmp -s "$T/list" "$T/eval" && cmp -s "$T/list" "$T/null"; then ok "build-args $(basename "$f"): eval and --null match --list"
	else bad "build-args $(basename "$f") forms differ"; diff "$T/list" "$T/eval"; fi
	# and the result passes setup-image's own check
	xargs -d '\n' -a "$T/list" sh -c 'exec env "$@" "$0" --check' "$B/setup-image" >/dev/null || bad "$f: setup-image --check refuses build-args output"
done
grep -qx 'EXTRA_KARGS=intel_iommu=on iommu=pt intel_idle.max_cstate=1 processor.max_cstate=1' \
	"$T/list" 2>/dev/null || "$BA" --list "$B/tuning/example-host.tuning" | grep -qx \
	'EXTRA_KARGS=intel_iommu=on iommu=pt intel_idle.max_cstate=1 processor.max_cstate=1' || bad "repeated kargs appended"
# The host example's commands survive quoting and run as written (in a sandbox directory).
cmd=$("$BA" --list "$B/tuning/example-host.tuning" | sed -n 's/^EXTRA_CMD=//p')
case $cmd in *'printf '"'"'%s\n'"'"' '"'"'ACTION=="add"'*) ok "EXTRA_CMD keeps quotes" ;; *) bad "EXTRA_CMD: $cmd" ;; esac
tbad() { # name, expected fragment, content
	printf '%s\n' "$3" >"$T/$1.tuning"
	if "$BA" "$T/$1.tuning" >"$T/o" 2>"$T/e"; then bad "$1 accepted"
	elif [ -s "$T/o" ]; then bad "$1: printed flags on error"
	elif grep -qF -- "$2" "$T/e"; then ok "$1: $(cat "$T/e")"
	else bad "$1: '$(cat "$T/e")' lacks '$2'"; fi
}
tbad unknown "unknown.tuning:2: unknown key 'isolcpus'" "$(printf 'target = host\nisolcpus = 2-3\n')"
tbad notarget "target is required" "isolated_cpus = 2-3"
tbad badtarget2 "badtarget2.tuning:1: target must be host or guest, not 'vm'" "target = vm"
tbad twice "twice.tuning:3: isolated_cpus already set on line 2" "$(printf 'target = guest\nisolated_cpus = 1\nisolated_cpus = 2\n')"
tbad cpus "cpus.tuning:2: isolated_cpus '3-1' is not a CPU list" "$(printf 'target = guest\nisolated_cpus = 3-1\n')"
tbad karg "karg.tuning:2: kernel argument 'a=\"b' contains a quote" "$(printf 'target = guest\nkargs = ok a="b\n')"
tbad pkg "pkg.tuning:3: 'foo;rm' is not a package name" "$(printf 'target = guest\n\npackages = vim foo;rm\n')"
tbad noeq "noeq.tuning:2: expected 'key = value'" "$(printf 'target = guest\nkargs\n')"
tbad empty "empty.tuning:2: command has no value" "$(printf 'target = guest\ncommand =\n')"
tbad crlf "crlf.tuning:1: carriage return" "$(printf 'target = guest\r\n')"
"$BA" "$T/nonexistent.tuning" 2>"$T/e"; [ $? = 2 ] && grep -q 'cannot read' "$T/e" && ok "missing file" || bad "missing file"

if [ "$fail" = 0 ]; then echo "PASS: bootc recipe"; exit 0; fi
echo "FAIL: bootc recipe"
exit 1

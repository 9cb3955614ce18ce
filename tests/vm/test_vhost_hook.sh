#!/bin/sh
# vm/hooks/qemu: finds vhost workers by name (threads of QEMU, Linux >= 6.4; separate kernel threads
# before), gives them SCHED_FIFO above the QEMU main thread pinned to the housekeeping CPUs, leaves
# every other thread alone; a real QEMU with vhost=off is reported as "no vhost" with exit 0.
# There is no vhost-net here, so tests/vm/fake_vhost.py plays the workers (PR_SET_NAME).
set -u
SRC=${SVKIT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
HOOK="$SRC/vm/hooks/qemu"
FAKE="$SRC/tests/vm/fake_vhost.py"
if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: needs root (SCHED_FIFO, tap)"
	exit 77
fi
for c in chrt taskset python3; do
	command -v $c >/dev/null || { echo "SKIP: $c missing"; exit 77; }
done
T=$(mktemp -d /tmp/svkit-hook.XXXXXX)
PIDS=
TAP=svhk$$
TAP=$(echo "$TAP" | cut -c1-15)
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	for p in $PIDS; do
		i=0
		while kill -0 "$p" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
		kill -9 "$p" 2>/dev/null
	done
	ip link del "$TAP" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }

HK=$(($(nproc) - 1))  # the "housekeeping" CPU: the last one
sched() { sed 's/.*) //' "$1/stat" | awk '{ print $39 "/" $38 }'; }  # policy/rt_priority
cpus() { sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$1/status"; }
conf() {
	cat >"$T/hook.conf" <<EOF
# test configuration
housekeeping_cpus = $HK
vhost_priority    = 7
guests            = sv-* qemu-real
qemu_pid_dir      = $T
log_file          = $T/hook.log
syslog            = no
on_error          = fail
EOF
}
hook() { SVKIT_VHOST_CONF="$T/hook.conf" "$HOOK" "$@" </dev/null >"$T/out" 2>&1; }
wait_file() { i=0; while [ ! -s "$1" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done; [ -s "$1" ]; }

conf
# --- Linux >= 6.4 layout: 3 workers inside the "QEMU" process -------------------------------------
python3 "$FAKE" threads 3 "$T/fake.pid" &
PIDS="$PIDS $!"
wait_file "$T/fake.pid" || { echo "FAIL: helper did not start"; exit 1; }
Q=$(cat "$T/fake.pid")
cp "$T/fake.pid" "$T/sv-guest1.pid"
hook sv-guest1 prepare begin -
[ $? = 0 ] && grep -q 'configuration .* is valid' "$T/out" && ok "prepare validates" || bad "prepare: $(cat "$T/out")"
hook sv-guest1 started begin -
rc=$?
cat "$T/out"
[ $rc = 0 ] || bad "started: exit $rc"
nv=0
for t in /proc/"$Q"/task/*; do
	name=$(cat "$t/comm")
	case $name in
	vhost-"$Q")
		nv=$((nv + 1))
		[ "$(sched "$t")" = 1/7 ] || bad "worker ${t##*/}: sched $(sched "$t"), expected SCHED_FIFO(1)/7"
		[ "$(cpus "$t")" = "$HK" ] || bad "worker ${t##*/}: CPUs $(cpus "$t"), expected $HK"
		# Cross-check with the util-linux tools a user would run.
		chrt -p "${t##*/}" | grep -q 'SCHED_FIFO' || bad "chrt -p ${t##*/} does not say SCHED_FIFO"
		;;
	*)
		[ "$(sched "$t")" = 0/0 ] || bad "non-vhost thread $name (${t##*/}) was changed: $(sched "$t")"
		[ "$(cpus "$t")" != "$HK" ] || [ "$(nproc)" = 1 ] || bad "non-vhost thread $name was pinned"
		;;
	esac
done
[ $nv = 3 ] && ok "3 workers at SCHED_FIFO 7 on CPU $HK, others untouched" || bad "found $nv workers"
grep -q "3 vhost worker(s) of QEMU pid $Q at SCHED_FIFO 7 on CPUs $HK" "$T/hook.log" &&
	ok "logged to the log file" || bad "log file: $(cat "$T/hook.log")"

# --- priority stays above a real-time QEMU main thread ----------------------------------------------
chrt -f -p 20 "$Q"
hook sv-guest1 reconnect begin -
[ $? = 0 ] || bad "reconnect: $(cat "$T/out")"
bad_prio=0
for t in /proc/"$Q"/task/*; do
	[ "$(cat "$t/comm")" = "vhost-$Q" ] || continue
	[ "$(sched "$t")" = 1/21 ] || bad_prio=1
done
[ $bad_prio = 0 ] && ok "main thread at FIFO 20 -> workers at FIFO 21" || bad "not above main thread: $(cat "$T/out")"
chrt -o -p 0 "$Q"

# --- a guest the configuration does not select is left alone ---------------------------------------
cp "$T/fake.pid" "$T/other.pid"
: >"$T/hook.log"
hook other started begin -
[ $? = 0 ] && [ ! -s "$T/hook.log" ] && [ ! -s "$T/out" ] && ok "unselected guest ignored" || bad "unselected guest: $(cat "$T/out")"
# and operations other than prepare/started/reconnect are no-ops
hook sv-guest1 stopped end -
[ $? = 0 ] && [ ! -s "$T/out" ] && ok "stopped: no-op" || bad "stopped: $(cat "$T/out")"

# --- pre-6.4 layout: the worker is a separate (kernel) thread named vhost-<qemu pid> ----------------
sleep 300 &
S=$!
PIDS="$PIDS $S"
python3 "$FAKE" kthread "$S" &
K=$!
PIDS="$PIDS $K"
i=0
while [ "$(cat /proc/$K/comm 2>/dev/null)" != "vhost-$S" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
echo "$S" >"$T/sv-old.pid"
hook sv-old started begin -
rc=$?
if [ $rc = 0 ] && [ "$(sched /proc/$K)" = 1/7 ] && [ "$(cpus /proc/$K)" = "$HK" ] &&
	[ "$(sched /proc/$S)" = 0/0 ] && grep -q "kthread vhost-$S" "$T/out"; then
	ok "kernel-thread layout: worker $K tuned, QEMU $S untouched"
else
	bad "kernel-thread layout: rc $rc $(sched /proc/$K) $(cpus /proc/$K): $(cat "$T/out")"
fi

# --- errors: with on_error = fail they exit 1 and say what and where; with warn, exit 0 ------------
hook sv-gone started begin -
[ $? = 1 ] && grep -q 'no running QEMU for the guest' "$T/out" && ok "no pid file: clear error" || bad "no pid file: $(cat "$T/out")"
printf 'housekeeping_cpus = 0\nvhost_prio = 5\non_error = fail\nsyslog = no\nlog_file =\n' >"$T/bad.conf"
SVKIT_VHOST_CONF="$T/bad.conf" "$HOOK" sv-guest1 prepare begin - </dev/null >"$T/out" 2>&1
[ $? = 1 ] && grep -q "bad.conf:2: unknown key 'vhost_prio'" "$T/out" && ok "unknown key: $(cat "$T/out")" || bad "unknown key: $(cat "$T/out")"
printf 'housekeeping_cpus = 0-x\nvhost_priority = 100\nsyslog = no\nlog_file =\n' >"$T/bad2.conf"
SVKIT_VHOST_CONF="$T/bad2.conf" "$HOOK" sv-guest1 prepare begin - </dev/null >"$T/out" 2>&1
[ $? = 0 ] && grep -q "not a CPU list" "$T/out" && grep -q "not in 1..99" "$T/out" &&
	ok "on_error=warn: logged, exit 0" || bad "warn mode: $(cat "$T/out")"
"$HOOK" </dev/null >/dev/null 2>&1
[ $? = 2 ] && ok "usage error exit 2" || bad "usage error"

# --- no vhost: a real QEMU (TCG, stopped with -S) on a tap with vhost=off ---------------------------
if command -v qemu-system-x86_64 >/dev/null; then
	if ip tuntap add dev "$TAP" mode tap 2>/dev/null; then
		net="-netdev tap,id=n0,ifname=$TAP,script=no,downscript=no,vhost=off"
	else
		net="-netdev user,id=n0"
	fi
	# shellcheck disable=SC2086
	qemu-system-x86_64 -machine q35,accel=tcg -m 64 -display none -serial none -monitor none -S \
		-nodefaults $net -device virtio-net-pci,netdev=n0 -pidfile "$T/qemu-real.pid" \
		</dev/null >"$T/qemu.out" 2>&1 &
	PIDS="$PIDS $!"
	if wait_file "$T/qemu-real.pid"; then
		QR=$(cat "$T/qemu-real.pid")
		hook qemu-real started begin -
		rc=$?
		cat "$T/out"
		changed=0
		for t in /proc/"$QR"/task/*; do [ "$(sched "$t")" = 0/0 ] || changed=1; done
		if [ $rc = 0 ] && grep -q 'no vhost worker threads' "$T/out" && [ $changed = 0 ]; then
			ok "real QEMU ($net): no vhost reported, exit 0, no thread changed"
		else
			bad "real QEMU: rc $rc changed $changed"
		fi
	else
		bad "QEMU did not start: $(cat "$T/qemu.out")"
	fi
else
	echo "note: qemu-system-x86_64 missing, real-QEMU case not run"
	fail=1
fi

if [ "$fail" = 0 ]; then echo "PASS: vhost hook"; exit 0; fi
echo "FAIL: vhost hook"
exit 1

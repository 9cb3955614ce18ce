#!/bin/sh
# vm/render-domain: every example parameters file renders to XML that libvirt's schema accepts and
# that carries the real-time settings; bad parameter files fail with exit 2 and say what and where.
set -u
SRC=${SVKIT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
R="$SRC/vm/render-domain"
if ! command -v virt-xml-validate >/dev/null || ! command -v xmllint >/dev/null; then
	echo "SKIP: virt-xml-validate or xmllint missing (Debian libvirt-clients, libxml2-utils)"
	exit 77
fi
T=$(mktemp -d /tmp/svkit-render.XXXXXX)
trap 'rm -rf "$T"' EXIT INT TERM
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }
xp() { xmllint --xpath "$2" "$1" 2>/dev/null; }

n=0
for p in "$SRC"/vm/libvirt/examples/*.params; do
	n=$((n + 1))
	x="$T/$(basename "$p" .params).xml"
	if ! "$R" -o "$x" "$p"; then bad "render $p"; continue; fi
	if virt-xml-validate "$x" >"$T/v.out" 2>&1; then ok "valid: $(basename "$p")"
	else bad "virt-xml-validate $(basename "$p"): $(cat "$T/v.out")"; continue; fi
	# The settings that make it real time, whatever the example.
	case "$(xp "$x" 'string(/domain/os/type/@machine)')" in q35|pc-q35-*) ;; *) bad "not q35: $p";; esac
	[ "$(xp "$x" 'string(/domain/cpu/@mode)')" = host-passthrough ] || bad "cpu mode: $p"
	[ "$(xp "$x" 'string(/domain/cputune/vcpusched/@scheduler)')" = fifo ] || bad "vcpusched: $p"
	nv=$(xp "$x" 'string(/domain/vcpu)')
	[ "$(xp "$x" 'count(/domain/cputune/vcpupin)')" = "$nv" ] || bad "one vcpupin per vCPU: $p"
	[ -n "$(xp "$x" 'string(/domain/cputune/emulatorpin/@cpuset)')" ] || bad "emulatorpin: $p"
	[ "$(xp "$x" 'string(/domain/devices/memballoon/@model)')" = none ] || bad "memballoon: $p"
	[ "$(xp "$x" 'count(/domain/memoryBacking/locked)')" = 1 ] || bad "locked memory: $p"
	sv='/domain/devices/interface[1]'
	[ "$(xp "$x" "string($sv/model/@type)")" = virtio ] || bad "virtio model: $p"
	[ "$(xp "$x" "string($sv/driver/@name)")" = vhost ] || bad "vhost driver: $p"
	[ "$(xp "$x" "string($sv/driver/@queues)")" -ge 1 ] 2>/dev/null || bad "queues: $p"
	for o in csum tso4 tso6 ecn ufo; do
		[ "$(xp "$x" "string($sv/driver/guest/@$o)")" = off ] || bad "guest $o not off: $p"
	done
done
[ "$n" -ge 3 ] || bad "expected at least 3 example parameter files, found $n"

# Per-mode NIC shape.
x="$T/ovs-2vcpu.xml"
[ "$(xp "$x" 'string(/domain/devices/interface[1]/virtualport/@type)')" = openvswitch ] || bad "ovs: virtualport"
[ "$(xp "$x" 'string(/domain/devices/interface[1]/source/@bridge)')" = br-sv ] || bad "ovs: bridge"
[ "$(xp "$x" 'string(/domain/cputune/emulatorpin/@cpuset)')" = 0-1 ] || bad "ovs: emulatorpin"
[ "$(xp "$x" 'string(/domain/cputune/vcpupin[@vcpu="1"]/@cpuset)')" = 3 ] || bad "ovs: vcpupin 1"
[ "$(xp "$x" 'count(/domain/devices/interface)')" = 2 ] || bad "ovs: management NIC"
[ "$(xp "$x" 'string(/domain/devices/disk[@device="cdrom"]/source/@file)')" != "" ] || bad "ovs: seed iso"
x="$T/ovs-tap-1vcpu.xml"
[ "$(xp "$x" 'string(/domain/devices/interface[1]/@type)')" = ethernet ] || bad "ovs-tap: type"
[ "$(xp "$x" 'string(/domain/devices/interface[1]/target/@managed)')" = no ] || bad "ovs-tap: managed=no"
[ "$(xp "$x" 'string(/domain/devices/interface[1]/mac/@address)')" = 52:54:00:5e:00:02 ] || bad "ovs-tap: mac"
[ "$(xp "$x" 'string(/domain/devices/interface[1]/driver/@queues)')" = 2 ] || bad "ovs-tap: queues"
[ "$(xp "$x" 'count(/domain/memoryBacking/hugepages)')" = 0 ] || bad "ovs-tap: no hugepages"
x="$T/linux-bridge-hugepages.xml"
[ "$(xp "$x" 'count(/domain/devices/interface[1]/virtualport)')" = 0 ] || bad "linux: no virtualport"
[ "$(xp "$x" 'string(/domain/memoryBacking/hugepages/page/@size)')" = 1048576 ] || bad "linux: 1G pages"
[ "$(xp "$x" 'string(/domain/devices/interface[1]/driver/host/@tso4)')" = off ] || bad "linux: host offloads off"
[ "$(xp "$x" 'string(/domain/cputune/vcpusched/@vcpus)')" = 0-3 ] || bad "linux: vcpusched range"
[ "$(xp "$x" 'string(/domain/cputune/vcpusched/@priority)')" = 2 ] || bad "linux: vcpusched priority"
[ "$(xp "$x" 'string(/domain/cpu/topology/@cores)')" = 4 ] || bad "linux: topology"

# Bad parameter files: exit 2, message names the file, line and problem; nothing on stdout.
base="$SRC/vm/libvirt/examples/ovs-tap-1vcpu.params"
case_bad() { # name, expected message fragment, file content
	f="$T/$1.params"
	printf '%s\n' "$3" >"$f"
	"$R" "$f" >"$T/out" 2>"$T/err"
	rc=$?
	if [ "$rc" -ne 2 ]; then bad "$1: exit $rc, expected 2"; return; fi
	if [ -s "$T/out" ]; then bad "$1: wrote XML on error"; return; fi
	if grep -qF -- "$2" "$T/err"; then ok "$1: $(cat "$T/err")"
	else bad "$1: message '$(cat "$T/err")' lacks '$2'"; fi
}
good=$(grep -v '^#' "$base")
case_bad unknown "$T/unknown.params:3: unknown parameter 'vcpu_count'" "$(printf 'name = a\nmemory_mib = 1024\nvcpu_count = 2\n')"
case_bad missing "missing required parameter 'disk'" "$(echo "$good" | grep -v '^disk')"
case_bad dup "parameter 'name' already set on line" "$(printf '%s\nname = b\n' "$good")"
case_bad noeq "expected 'key = value'" "$(printf '%s\nhugepages\n' "$good")"
case_bad range "vcpu_priority: 100 is out of range [1, 99]" "$(echo "$good" | sed 's/^vcpu_priority.*/vcpu_priority = 100/')"
case_bad notnum "memory_mib: not an unsigned decimal integer" "$(echo "$good" | sed 's/^memory_mib.*/memory_mib = 1G/')"
case_bad choice "sv_port: 'macvtap' is not one of ovs, ovs-tap, linux" "$(echo "$good" | sed 's/^sv_port.*/sv_port = macvtap/')"
case_bad cpus "CPU list" "$(echo "$good" | sed 's/^vcpu_cpus.*/vcpu_cpus = 3-a/')"
case_bad clash "emulator_cpus and vcpu_cpus share CPU 3" "$(echo "$good" | sed 's/^emulator_cpus.*/emulator_cpus = 0,3/')"
case_bad bridge_tap "sv_bridge is not used with sv_port = ovs-tap" "$(printf '%s\nsv_bridge = br-sv\n' "$good")"
case_bad no_bridge "sv_port = ovs needs sv_bridge" "$(echo "$good" | sed 's/^sv_port.*/sv_port = ovs/')"
case_bad ifname "sv_tap: 'a-very-long-tap-name0'" "$(echo "$good" | sed 's/^sv_tap.*/sv_tap = a-very-long-tap-name0/')"
case_bad vnet "a prefix libvirt reserves" "$(echo "$good" | sed 's/^sv_tap.*/sv_tap = vnet-sv3/')"
case_bad mac "multicast MAC" "$(echo "$good" | sed 's/^sv_mac.*/sv_mac = 01:0c:cd:04:00:01/')"
case_bad huge "not a multiple of 1024 with 1G hugepages" "$(printf '%s\nhugepages = 1G\n' "$(echo "$good" | sed 's/^memory_mib.*/memory_mib = 1536/')")"
case_bad relpath "an absolute path is required" "$(echo "$good" | sed 's|^disk.*|disk = images/x.qcow2|')"
case_bad machine "the template is for q35 machines" "$(printf '%s\nmachine = pc-i440fx-7.2\n' "$good")"
"$R" "$T/does-not-exist.params" 2>"$T/err"; rc=$?
[ "$rc" = 2 ] && grep -q 'cannot read' "$T/err" && ok "missing file" || bad "missing file: rc $rc $(cat "$T/err")"

# A hostile value cannot break out of the XML: quotes are rejected or escaped, result stays valid.
{ echo "$good" | grep -v '^disk'; echo 'disk = /img/a&b<c>.qcow2'; } >"$T/esc.params"
if "$R" -o "$T/esc.xml" "$T/esc.params" && virt-xml-validate "$T/esc.xml" >/dev/null 2>&1 &&
	[ "$(xp "$T/esc.xml" 'string(/domain/devices/disk/source/@file)')" = '/img/a&b<c>.qcow2' ]; then
	ok "special characters escaped"
else
	bad "special characters in a path"
fi

if [ "$fail" = 0 ]; then echo "PASS: render-domain"; exit 0; fi
echo "FAIL: render-domain"
exit 1

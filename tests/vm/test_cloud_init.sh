#!/bin/sh
# vm/cloud-init/user-data: a #cloud-config document that cloud-init's own schema accepts (when the
# cloud-init package is installed; else a YAML check), and that does what the guest needs: installs
# svkit, enables svsub@, applies TuneD realtime-virtual-guest, ptp_kvm + phc2sys on /dev/ptp_kvm.
set -u
SRC=${SVKIT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
UD="$SRC/vm/cloud-init/user-data"
T=$(mktemp -d /tmp/svkit-ci.XXXXXX)
trap 'rm -rf "$T"' EXIT INT TERM
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }
[ "$(head -n 1 "$UD")" = "#cloud-config" ] && ok "#cloud-config header" || bad "first line is not #cloud-config"
if command -v cloud-init >/dev/null; then
	if cloud-init schema --config-file "$UD" >"$T/out" 2>&1; then ok "cloud-init schema: $(cat "$T/out")"
	else bad "cloud-init schema: $(cat "$T/out")"; fi
	# The schema check can fail: a wrong type must be reported.
	printf '#cloud-config\npackages: 5\n' >"$T/bad"
	cloud-init schema --config-file "$T/bad" >/dev/null 2>&1 && bad "schema accepted packages: 5" || ok "schema rejects a bad document"
else
	echo "note: cloud-init not installed; YAML checks only"
fi
# Content, read as YAML by /usr/bin/python3 (Debian's python3-yaml comes with cloud-init) or python3.
PY=python3
/usr/bin/python3 -c 'import yaml' 2>/dev/null && PY=/usr/bin/python3
$PY -c 'import yaml' 2>/dev/null || { echo "SKIP: no python3 yaml module"; exit 77; }
$PY - "$UD" "$SRC/vm/cloud-init/meta-data" <<'PYEOF' || fail=1
import sys, yaml
ud = yaml.safe_load(open(sys.argv[1]))
md = yaml.safe_load(open(sys.argv[2]))
err = []
def need(cond, what):
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        err.append(what)
need(isinstance(md, dict) and "instance-id" in md, "meta-data has instance-id")
pk = ud.get("packages", [])
for p in ("tuned", "linuxptp"):
    need(p in pk, "package %s" % p)
files = {f["path"]: f.get("content", "") for f in ud.get("write_files", [])}
cmds = [" ".join(c) if isinstance(c, list) else c for c in ud.get("runcmd", [])]
allcmd = "\n".join(cmds)
need("ptp_kvm" in files.get("/etc/modules-load.d/ptp_kvm.conf", ""), "ptp_kvm loaded at boot")
unit = files.get("/etc/systemd/system/phc2sys-kvm.service", "")
need("phc2sys -s /dev/ptp_kvm -c CLOCK_REALTIME" in unit, "phc2sys follows /dev/ptp_kvm")
need(any("ptp_kvm" in c for c in files.values() if "SUBSYSTEM" in c), "udev names /dev/ptp_kvm")
need("tuned-adm profile realtime-virtual-guest" in allcmd, "TuneD realtime-virtual-guest applied")
need("isolated_cores=" in files.get("/etc/tuned/realtime-virtual-guest-variables.conf", ""),
     "isolated cores set for the profile")
need("systemctl enable svsub@sv.service" in allcmd, "svsub@sv enabled")
need("/etc/svkit/svsub-sv.yaml" in files, "svsub@sv has its configuration")
need("apt-get install" in allcmd and "svkit_" in allcmd, "svkit .deb installed")
need("CPUAffinity=" in files.get("/etc/systemd/system/svsub@sv.service.d/cpu.conf", ""),
     "svsub@sv pinned to the isolated CPU")
# every shell fragment in runcmd must at least parse
import subprocess
for c in ud.get("runcmd", []):
    if isinstance(c, list) and c[:2] == ["sh", "-c"]:
        r = subprocess.run(["sh", "-n", "-c", c[2]])
        need(r.returncode == 0, "runcmd shell fragment parses")
sys.exit(1 if err else 0)
PYEOF
if [ "$fail" = 0 ]; then echo "PASS: cloud-init"; exit 0; fi
echo "FAIL: cloud-init"
exit 1

#!/bin/sh
# vm/ansible: the soak playbook passes ansible-playbook --syntax-check against the example inventory
# and ansible-lint (production profile, offline); a deliberately bad task is caught. Runs on a
# copy so that no cache lands in the source tree.
set -u
SRC=${SVKIT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
for c in ansible-playbook ansible-lint ansible-inventory; do
	command -v $c >/dev/null || { echo "SKIP: $c missing"; exit 77; }
done
T=$(mktemp -d /tmp/svkit-ansible.XXXXXX)
trap 'rm -rf "$T"' EXIT INT TERM
export HOME="$T/home" ANSIBLE_LOCAL_TEMP="$T/tmp" ANSIBLE_NOCOLOR=1 NO_COLOR=1
mkdir -p "$HOME"
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }
cp -r "$SRC/vm/ansible" "$T/a"
cd "$T/a" || exit 1
if ansible-playbook -i inventory.example.yml --syntax-check site.yml >"$T/out" 2>&1; then ok "syntax-check"
else bad "syntax-check: $(cat "$T/out")"; fi
# The inventory has the three groups the playbook targets, with the variables the roles need.
ansible-inventory -i inventory.example.yml --list >"$T/inv.json" 2>"$T/err" || bad "inventory: $(cat "$T/err")"
python3 - "$T/inv.json" <<'PY' || fail=1
import json, sys
inv = json.load(open(sys.argv[1]))
hv = inv["_meta"]["hostvars"]
def need(c, what):
    c = bool(c)
    print(("ok: " if c else "FAIL: ") + what)
    return c
good = True
for g in ("publisher", "hypervisors", "guests"):
    good &= need(inv.get(g, {}).get("hosts"), "inventory group %s has hosts" % g)
for h in inv["hypervisors"]["hosts"]:
    good &= need("svkit_trace_ingress" in hv[h] and "svkit_trace_egress" in hv[h], "%s: svtrace interfaces" % h)
for h in inv["guests"]["hosts"]:
    good &= need(all("interface" in i and "cpu" in i for i in hv[h]["svkit_sub_instances"]), "%s: svsub instances" % h)
sys.exit(0 if good else 1)
PY
if ansible-lint --offline --profile production site.yml inventory.example.yml >"$T/lint" 2>&1; then
	ok "ansible-lint (production profile): $(tail -n 1 "$T/lint")"
else
	bad "ansible-lint: $(cat "$T/lint")"
fi
# Negative control: a nameless shell task without changed_when must be reported.
cat >>roles/svkit_install/tasks/main.yml <<'Y'

- ansible.builtin.shell: ls /var/cache | wc -l
Y
if ansible-lint --offline --profile production site.yml >"$T/lint2" 2>&1; then bad "ansible-lint missed a bad task"
else ok "ansible-lint catches a bad task"; fi
if [ "$fail" = 0 ]; then echo "PASS: ansible"; exit 0; fi
echo "FAIL: ansible"
exit 1

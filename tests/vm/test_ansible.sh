#!/bin/sh
# vm/ansible: the soak playbook passes ansible-playbook --syntax-check against the example inventory
# and ansible-lint (production profile, offline); a deliberately bad task is caught. The Report play,
# run alone from another directory with a stub svreport over fake records, passes each svsub record
# as --guest GUEST=FILE and svtrace's egress ports as --alias PORT=GUEST (HOST:PORT=GUEST for a port name
# on two hypervisors); it fails, saying why, with no records and when two hypervisors of one node name share
# a port name. Runs on a copy so that no cache lands in
# the source tree.
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
    eg = hv[h].get("svkit_trace_egress", [])
    good &= need(isinstance(eg, list) and all(isinstance(e, dict) and "port" in e and e.get("guest") in inv["guests"]["hosts"]
                                              for e in eg), "%s: every egress port names the guest it feeds" % h)
for h in inv["guests"]["hosts"]:
    good &= need(all("interface" in i and "cpu" in i for i in hv[h]["svkit_sub_instances"]), "%s: svsub instances" % h)
sys.exit(0 if good else 1)
PY
if ansible-lint --offline --profile production site.yml inventory.example.yml >"$T/lint" 2>&1; then
	ok "ansible-lint (production profile): $(tail -n 1 "$T/lint")"
else
	bad "ansible-lint: $(cat "$T/lint")"
fi
# The Report play alone (tag report, implicit localhost), run from another directory: records are
# found under the playbook's directory, svreport (a stub that keeps its arguments) gets the guests.
mkdir -p "$T/bin" "$T/cwd"
cat >"$T/bin/svreport" <<'EOF'
#!/bin/sh
printf '%s\n' "$@" >"$SVKIT_STUB_ARGV"
echo '{"verdict":"PASS"}'
EOF
chmod +x "$T/bin/svreport"
R="$(cd "$T/a" && pwd -P)/svkit-records"
mkdir -p "$R/guest1" "$R/guest2" "$R/hv1" "$R/hv2" "$R/sv-publisher"
touch "$R/guest1/svsub-sv.rec" "$R/guest1/svsub-sv-20240101T000000Z.rec" "$R/guest2/svsub-sv.rec" \
	"$R/hv1/svtrace.rec" "$R/hv2/svtrace.rec" "$R/sv-publisher/svpub.rec" "$R/sv-publisher/svpub-summary.json"
report() { # INVENTORY: run the Report play from $T/cwd, output in $T/play
	rm -f "$T/argv"
	(cd "$T/cwd" && PATH="$T/bin:$PATH" SVKIT_STUB_ARGV="$T/argv" ansible-playbook -i "$1" -i localhost, \
		--tags report --limit localhost "$T/a/site.yml") >"$T/play" 2>&1
}
if report "$T/a/inventory.example.yml" && [ -s "$T/argv" ]; then
	ok "report play runs svreport from another directory"
	python3 - "$T/argv" "$R" <<'PY' || fail=1
import sys
argv = open(sys.argv[1]).read().split("\n")[:-1]
R = sys.argv[2]
def need(c, what):
    print(("ok: " if c else "FAIL: ") + what)
    return bool(c)
def pairs(opt):
    return [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == opt]
good = need(pairs("--guest") == ["guest1=%s/guest1/svsub-sv.rec" % R, "guest2=%s/guest2/svsub-sv.rec" % R],
            "report: --guest GUEST=FILE for each guest's svsub record: %s" % pairs("--guest"))
good &= need(sorted(pairs("--alias")) == ["sv-guest1=guest1", "sv-guest2=guest2"],
             "report: --alias PORT=GUEST for svtrace's egress ports: %s" % pairs("--alias"))
pos = [a for i, a in enumerate(argv) if not a.startswith("-") and (i == 0 or argv[i - 1] not in ("--guest", "--alias", "--html", "--window"))]
good &= need(sorted(pos) == sorted("%s/%s" % (R, f) for f in ("guest1/svsub-sv-20240101T000000Z.rec", "hv1/svtrace.rec",
                                                               "hv2/svtrace.rec", "sv-publisher/svpub.rec")),
             "report: the other records (svpub, svtrace, a set-aside svsub run) as they are: %s" % pos)
good &= need("--html" in argv and argv[argv.index("--html") + 1] == R + "/report.html", "report: HTML beside the records")
good &= need(pairs("--window") == ["5"], "report: a 5 s join window (svtrace writes untaken copies up to ~2.5 s late): %s" % pairs("--window"))
sys.exit(0 if good else 1)
PY
	if [ -s "$R/report.json" ]; then ok "report.json written under the playbook directory"; else bad "no report.json in $R"; fi
else bad "report play: $(cat "$T/play")"; fi
# One tap name on two hypervisors toward two guests (libvirt's vnet0 on each): told apart by host.
sed 's/port: sv-guest2/port: sv-guest1/' "$T/a/inventory.example.yml" >"$T/inv-dup.yml"
if report "$T/inv-dup.yml" && [ -s "$T/argv" ]; then
	a=$(grep -A1 -x -- --alias "$T/argv" | grep -v -x -- --alias | grep -v -x -- -- | sort | tr '\n' ' ')
	if [ "$a" = "hv1:sv-guest1=guest1 hv2:sv-guest1=guest2 " ]; then ok "report play: a port name on two hypervisors -> --alias HOST:PORT=GUEST"
	else bad "report play, one port name on two hypervisors: aliases '$a'"; fi
else bad "report play, one port name on two hypervisors: $(cat "$T/play")"; fi
# ... and refused when the two hypervisors also have one node name: nothing could tell them apart.
python3 - "$T/inv-dup.yml" "$T/inv-same.yml" <<'PY'
import sys
s = open(sys.argv[1]).read()
for h in ("hv1", "hv2"):
    s = s.replace("        %s:\n" % h, "        %s:\n          svkit_record_host: hv\n" % h, 1)
open(sys.argv[2], "w").write(s)
PY
if report "$T/inv-same.yml"; then bad "report play accepted two hypervisors with one node name and one port name"
elif grep -q "cannot tell their records apart" "$T/play" && [ ! -e "$T/argv" ]; then
	ok "report play refuses one port name on two hypervisors of one node name"
else bad "report play, same node name: $(cat "$T/play")"; fi
# No records: the play fails and says where it looked, instead of skipping the report.
rm -rf "$R"
if report "$T/a/inventory.example.yml"; then bad "report play succeeded without records"
elif grep -q "No svkit record" "$T/play" && [ ! -e "$T/argv" ]; then ok "report play fails without records"
else bad "report play, no records: $(cat "$T/play")"; fi
# Negative control: a nameless shell task without changed_when must be reported.
cat >>roles/svkit_install/tasks/main.yml <<'Y'

- ansible.builtin.shell: ls /var/cache | wc -l
Y
if ansible-lint --offline --profile production site.yml >"$T/lint2" 2>&1; then bad "ansible-lint missed a bad task"
else ok "ansible-lint catches a bad task"; fi
if [ "$fail" = 0 ]; then echo "PASS: ansible"; exit 0; fi
echo "FAIL: ansible"
exit 1

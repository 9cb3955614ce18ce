#!/bin/sh
# packaging/packaging.cmake: a CPack DEB of svkit, built here from a stand-in project that has the same
# programs as stubs (the real ones are built elsewhere), carries the right name, dependencies,
# maintainer, description, maintainer scripts, conffiles, units in /lib/systemd/system, the hook,
# the man pages (the same text as docs/man).
set -u
SRC=${SVKIT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
for c in cmake cpack dpkg-deb cc; do command -v $c >/dev/null || { echo "SKIP: $c missing"; exit 77; }; done
T=$(mktemp -d /tmp/svkit-pkg.XXXXXX)
trap 'rm -rf "$T"' EXIT INT TERM
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }
mkdir -p "$T/p"
printf 'int main(void) { return 0; }\n' >"$T/p/stub.c"
cat >"$T/p/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.25)
project(svkit VERSION 0.1.0 LANGUAGES C)
include(GNUInstallDirs)
foreach(p svpub svsub svreport)
	add_executable(\${p} stub.c)
	install(TARGETS \${p} DESTINATION \${CMAKE_INSTALL_BINDIR})
endforeach()
add_executable(svtrace stub.c)
install(TARGETS svtrace DESTINATION \${CMAKE_INSTALL_SBINDIR})
install(FILES stub.c DESTINATION \${CMAKE_INSTALL_LIBDIR}/svkit/bpf RENAME sv_xdp.bpf.o)
include($SRC/packaging/packaging.cmake)
CM
if ! { cmake -S "$T/p" -B "$T/b" -DCMAKE_INSTALL_PREFIX=/usr >"$T/log" 2>&1 &&
	cmake --build "$T/b" >>"$T/log" 2>&1 && (cd "$T/b" && cpack -G DEB >>"$T/log" 2>&1); }; then
	cat "$T/log"; echo "FAIL: cpack"; exit 1
fi
DEB=$(ls "$T"/b/svkit_*.deb 2>/dev/null | head -n 1)
[ -n "$DEB" ] || { cat "$T/log"; echo "FAIL: no svkit_*.deb"; exit 1; }
ok "built $(basename "$DEB")"
f() { dpkg-deb -f "$DEB" "$1"; }
[ "$(f Package)" = svkit ] || bad "Package: $(f Package)"
[ "$(f Version)" = 0.1.0 ] || bad "Version: $(f Version)"
for d in libbpf1 libxdp1 libpcap0.8 libyaml-0-2 libmicrohttpd12 libxml2; do
	f Depends | tr ',' '\n' | grep -q "^ *$d\b" || bad "Depends lacks $d: $(f Depends)"
done
[ -n "$(f Maintainer)" ] || bad "no Maintainer"
f Description | grep -q 'Sampled Values' || bad "Description"
# Debian policy: the synopsis once, then the extended text each line indented by exactly one space.
f Description | awk 'NR == 1 { syn = $0; next } $0 == " " syn || /^  / || !/^ / { e = 1 } END { exit e }' ||
	bad "Description: synopsis repeated or extended lines not indented by one space: $(f Description)"
ok "control: $(f Package) $(f Version); Depends: $(f Depends)"
dpkg-deb -c "$DEB" | awk '{ print $6 }' | sed 's|^\./|/|' >"$T/files"
for p in /usr/bin/svpub /usr/bin/svsub /usr/bin/svreport /usr/sbin/svtrace \
	/lib/systemd/system/svsub@.service /lib/systemd/system/svpub.service /lib/systemd/system/svtrace.service \
	/usr/lib/svkit/svkit-set-aside \
	/usr/lib/sysusers.d/svkit.conf /etc/libvirt/hooks/qemu.d/50-svkit-vhost /etc/svkit/vhost-hook.conf \
	/usr/share/man/man1/svpub.1.gz /usr/share/man/man1/svsub.1.gz /usr/share/man/man8/svtrace.8.gz \
	/usr/share/man/man1/svreport.1.gz /usr/share/svkit/vm/render-domain /usr/share/svkit/vm/libvirt/sv-guest.xml.in; do
	grep -qx "$p" "$T/files" || bad "package lacks $p"
done
grep -q '/svkit/bpf/sv_xdp.bpf.o$' "$T/files" || bad "package lacks the BPF objects"
dpkg-deb -c "$DEB" >"$T/list"
grep -q 'rwxr-xr-x.*50-svkit-vhost$' "$T/list" || bad "hook not executable"
grep -q 'rwxr-xr-x.*svkit-set-aside$' "$T/list" || bad "svkit-set-aside not executable"
mkdir -p "$T/ctl"
dpkg-deb -e "$DEB" "$T/ctl"
for s in postinst postrm conffiles; do [ -f "$T/ctl/$s" ] || bad "control lacks $s"; done
grep -qx /etc/svkit/vhost-hook.conf "$T/ctl/conffiles" 2>/dev/null || bad "conffiles"
sh -n "$T/ctl/postinst" || bad "postinst syntax"
# Man pages in the package are the ones in docs/man.
dpkg-deb -x "$DEB" "$T/root"
zcat "$T/root/usr/share/man/man1/svsub.1.gz" | cmp -s - "$SRC/docs/man/svsub.1" || bad "svsub.1.gz differs from docs/man/svsub.1"
[ $fail = 0 ] && ok "files, modes, maintainer scripts, conffiles"
if [ "$fail" = 0 ]; then echo "PASS: packaging"; exit 0; fi
echo "FAIL: packaging"
exit 1

# SPDX-License-Identifier: Apache-2.0
# svkit's Debian package (CPack DEB), and the install rules of what is not a program: the deployment files
# of vm/ and the man pages of docs/man. Included from the top-level CMakeLists.txt after the programs'
# subdirectories:
#     include(packaging/packaging.cmake)
# Build the package with:   cmake --build BUILD && (cd BUILD && cpack -G DEB)
# Programs and BPF objects are installed by their own CMakeLists (publisher/, subscriber/, bpf/,
# report/); this file adds the units, the libvirt hook, the man pages, the domain renderer.
include(GNUInstallDirs)
get_filename_component(SVKIT_TOP_DIR ${CMAKE_CURRENT_LIST_DIR} DIRECTORY)
set(SVKIT_VM_DIR ${SVKIT_TOP_DIR}/vm)
set(SVKIT_MAN_DIR ${SVKIT_TOP_DIR}/docs/man)
set(SVKIT_DEB_DIR ${CMAKE_CURRENT_LIST_DIR}/deb)

# systemd units where Debian keeps packaged units (not /etc: that is the administrator's).
install(FILES ${SVKIT_VM_DIR}/systemd/svsub@.service ${SVKIT_VM_DIR}/systemd/svpub.service
              ${SVKIT_VM_DIR}/systemd/svtrace.service
        DESTINATION /lib/systemd/system)
install(FILES ${SVKIT_VM_DIR}/systemd/svkit.sysusers DESTINATION /usr/lib/sysusers.d RENAME svkit.conf)
# the units' ExecStartPre: a restarted tool's last record and its parts set aside, not overwritten
install(PROGRAMS ${SVKIT_VM_DIR}/systemd/svkit-set-aside DESTINATION /usr/lib/svkit)
# libvirt runs every executable in qemu.d (libvirt >= 6.5): no clash with a site's own qemu hook.
install(PROGRAMS ${SVKIT_VM_DIR}/hooks/qemu
        DESTINATION /etc/libvirt/hooks/qemu.d RENAME 50-svkit-vhost)
install(FILES ${SVKIT_VM_DIR}/hooks/vhost-hook.conf DESTINATION /etc/svkit)
# Man pages, compressed as Debian policy wants them.
find_program(SVKIT_GZIP gzip)
# svtrace needs root (BPF, every namespace): an administration command, section 8, in /usr/sbin.
foreach(page svpub.1 svsub.1 svtrace.8 svreport.1)
	set(src ${SVKIT_MAN_DIR}/${page})
	string(REGEX REPLACE ".*\\." "" sec ${page})
	if(SVKIT_GZIP)
		set(gz ${CMAKE_BINARY_DIR}/man/${page}.gz)
		add_custom_command(OUTPUT ${gz}
			COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/man
			COMMAND ${SVKIT_GZIP} -9nc ${src} > ${gz}
			DEPENDS ${src} VERBATIM)
		list(APPEND SVKIT_MAN_GZ ${gz})
		install(FILES ${gz} DESTINATION ${CMAKE_INSTALL_MANDIR}/man${sec})
	else()
		install(FILES ${src} DESTINATION ${CMAKE_INSTALL_MANDIR}/man${sec})
	endif()
endforeach()
if(SVKIT_MAN_GZ)
	add_custom_target(svkit_man ALL DEPENDS ${SVKIT_MAN_GZ})
endif()
# The guest template, its renderer, cloud-init and Ansible material, for the hypervisor admin.
install(PROGRAMS ${SVKIT_VM_DIR}/render-domain DESTINATION ${CMAKE_INSTALL_DATADIR}/svkit/vm)
install(DIRECTORY ${SVKIT_VM_DIR}/libvirt ${SVKIT_VM_DIR}/cloud-init ${SVKIT_VM_DIR}/ansible
        DESTINATION ${CMAKE_INSTALL_DATADIR}/svkit/vm)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME svkit)
set(CPACK_PACKAGE_VENDOR "svkit")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "IEC 61850-9-2 Sampled Values toolkit: publisher, AF_XDP subscriber, eBPF tracer")
# CPack puts CPACK_PACKAGE_DESCRIPTION_SUMMARY first (the synopsis) and indents this text below it.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
"svkit measures and protects Sampled Values delivery in virtualised digital substations:
svpub publishes paced, timestamped SV streams; svsub receives them through AF_XDP inside
virtual machines, tracks every stream and runs protection functions; svtrace follows every
frame through a SEAPATH-style hypervisor with eBPF; svreport joins their records into a
per-hop latency report. Includes systemd units, a libvirt hook that raises vhost workers
to real-time priority, and a real-time guest template.")
set(CPACK_PACKAGE_CONTACT "svkit maintainers <svkit@localhost>")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "svkit maintainers <svkit@localhost>")
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://example.invalid/svkit")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE amd64)
# Named, not computed by dpkg-shlibdeps: the programs are built against Debian 12's libraries and
# the list is what a reader and the test can check.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libbpf1 (>= 1:1.1), libxdp1 (>= 1.3), libpcap0.8 (>= 1.10), libyaml-0-2, libmicrohttpd12 (>= 0.9.75), libxml2 (>= 2.9.14), libc6 (>= 2.36)")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "linuxptp, tuned")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "libvirt-daemon-system, rt-tests")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    "${SVKIT_DEB_DIR}/postinst;${SVKIT_DEB_DIR}/postrm;${SVKIT_DEB_DIR}/conffiles")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
include(CPack)

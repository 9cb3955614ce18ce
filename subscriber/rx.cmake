# svsub's live receive back-ends (AF_XDP + AF_PACKET) and the live loop: static library svsub_rx, linked
# into svsub by subscriber/CMakeLists.txt when this file exists. Needs the skeleton of bpf/sv_xdp.bpf.c.
if(TARGET sv_xdp_skel)
	set(SVSUB_RX_SOURCES
		${CMAKE_CURRENT_LIST_DIR}/svrx_common.c
		${CMAKE_CURRENT_LIST_DIR}/svrx_afxdp.c
		${CMAKE_CURRENT_LIST_DIR}/svrx_afpacket.c)
	# The live loop feeds svsub's pipeline (svsub_proc in svsub_core).
	if(TARGET svsub_core)
		list(APPEND SVSUB_RX_SOURCES ${CMAKE_CURRENT_LIST_DIR}/svrx_live.c)
	endif()
	add_library(svsub_rx STATIC ${SVSUB_RX_SOURCES})
	target_include_directories(svsub_rx PUBLIC ${CMAKE_CURRENT_LIST_DIR})
	target_link_libraries(svsub_rx PUBLIC sv sv_xdp_skel PkgConfig::LIBXDP PkgConfig::LIBBPF)
	if(TARGET svsub_core)
		target_link_libraries(svsub_rx PUBLIC svsub_core)
		target_compile_definitions(svsub_rx PUBLIC SVRX_HAVE_LIVE=1)
	endif()
else()
	message(WARNING "svsub: bpf/sv_xdp skeleton not built (SVKIT_BPF=OFF?): svsub has no live receive")
endif()

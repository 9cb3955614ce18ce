# svtrace: the loader and correlation (user space) beside its BPF program. Included by bpf/CMakeLists.txt.
# svtrace_core = correlation + system helpers (no skeleton), linked by the unit tests (tests/unit/test_trace*.c).
if(NOT TARGET svtrace_skel)
	return()
endif()
add_library(svtrace_core STATIC
	${CMAKE_CURRENT_SOURCE_DIR}/svtrace_corr.c
	${CMAKE_CURRENT_SOURCE_DIR}/svtrace_sys.c
	${CMAKE_CURRENT_SOURCE_DIR}/svtrace_ovsdb.c)
target_include_directories(svtrace_core PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(svtrace_core PUBLIC sv PkgConfig::LIBBPF)

add_executable(svtrace ${CMAKE_CURRENT_SOURCE_DIR}/svtrace.c)
target_link_libraries(svtrace PRIVATE svtrace_core svtrace_skel sv PkgConfig::LIBBPF)
install(TARGETS svtrace RUNTIME DESTINATION ${CMAKE_INSTALL_SBINDIR})

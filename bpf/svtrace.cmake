# svtrace: the program (svtrace.c: options, main) on its modules (svtrace_*.c), beside its BPF program.
# Included by bpf/CMakeLists.txt. svtrace_core = every module, the skeleton's (svtrace_setup.c) included: the
# unit tests (tests/unit/test_trace*.c) link it and drive the modules that run on plain data.
if(NOT TARGET svtrace_skel)
	return()
endif()
add_library(svtrace_core STATIC
	${CMAKE_CURRENT_SOURCE_DIR}/svtrace_corr.c
	${CMAKE_CURRENT_SOURCE_DIR}/svtrace_events.c
	${CMAKE_CURRENT_SOURCE_DIR}/svtrace_hlog.c
	${CMAKE_CURRENT_SOURCE_DIR}/svtrace_metrics.c
	${CMAKE_CURRENT_SOURCE_DIR}/svtrace_out.c
	${CMAKE_CURRENT_SOURCE_DIR}/svtrace_ovsdb.c
	${CMAKE_CURRENT_SOURCE_DIR}/svtrace_ports.c
	${CMAKE_CURRENT_SOURCE_DIR}/svtrace_rec.c
	${CMAKE_CURRENT_SOURCE_DIR}/svtrace_scan.c
	${CMAKE_CURRENT_SOURCE_DIR}/svtrace_setup.c
	${CMAKE_CURRENT_SOURCE_DIR}/svtrace_streams.c
	${CMAKE_CURRENT_SOURCE_DIR}/svtrace_sys.c)
target_include_directories(svtrace_core PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(svtrace_core PUBLIC sv svtrace_skel PkgConfig::LIBBPF)

add_executable(svtrace ${CMAKE_CURRENT_SOURCE_DIR}/svtrace.c)
target_link_libraries(svtrace PRIVATE svtrace_core sv sv_metrics_http PkgConfig::LIBBPF) # --metrics
install(TARGETS svtrace RUNTIME DESTINATION ${CMAKE_INSTALL_SBINDIR})

# Metrics for Prometheus (issue 32): the test server (every family of configs/prometheus/metrics.txt, served by
# sv_metrics_server while a writer thread updates them), the HTTP abuse test, promtool on the shipped rules and
# scrape config, and a real Prometheus scraping the test server.
add_executable(metrics_serve ${CMAKE_CURRENT_LIST_DIR}/metrics_serve.c)
target_link_libraries(metrics_serve PRIVATE sv_metrics_http)
add_test(NAME interop/metrics_http COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/metrics_http.py)
set_tests_properties(interop/metrics_http PROPERTIES LABELS interop RUN_SERIAL TRUE ENVIRONMENT "${SVKIT_TEST_ENV}"
	SKIP_RETURN_CODE 77 TIMEOUT 120)
add_test(NAME interop/metrics_rules COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/metrics_rules.sh)
set_tests_properties(interop/metrics_rules PROPERTIES LABELS interop ENVIRONMENT "${SVKIT_TEST_ENV}"
	SKIP_RETURN_CODE 77 TIMEOUT 60)
add_test(NAME interop/metrics_prometheus COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/metrics_prometheus.sh)
set_tests_properties(interop/metrics_prometheus PROPERTIES LABELS interop RUN_SERIAL TRUE ENVIRONMENT "${SVKIT_TEST_ENV}"
	SKIP_RETURN_CODE 77 TIMEOUT 120)
# Phase 2: the tools themselves serve their counters (svsub --read, svpub -w: no privileges); the final scrape
# equals their JSON summaries. svtrace and the live lab: tests/net/metrics_lab.sh.
add_test(NAME interop/metrics_tools COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/metrics_tools.py)
set_tests_properties(interop/metrics_tools PROPERTIES LABELS interop RUN_SERIAL TRUE ENVIRONMENT "${SVKIT_TEST_ENV}"
	SKIP_RETURN_CODE 77 TIMEOUT 120)

# svreport's command line and exit codes (tests/interop/report_cli.sh).
add_test(NAME interop/report_cli COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/report_cli.sh)
set_tests_properties(interop/report_cli PROPERTIES LABELS interop ENVIRONMENT "${SVKIT_TEST_ENV}"
	SKIP_RETURN_CODE 77 TIMEOUT 60)
# Several hosts (issue 32): two svsub runs named by --host, one guest name: kept apart, the hosts section.
add_test(NAME interop/report_hosts COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/report_hosts.sh)
set_tests_properties(interop/report_hosts PROPERTIES LABELS interop ENVIRONMENT "${SVKIT_TEST_ENV}"
	SKIP_RETURN_CODE 77 TIMEOUT 60)
# The soak report over 24 h and 72 h of synthetic soak records: figures, and memory flat with the length
# (tests/interop/report_soak.sh).
# (tests/bench is added after this tier: the script skips when bench_soakgen is not built.)
add_test(NAME interop/report_soak COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/report_soak.sh)
set_tests_properties(interop/report_soak PROPERTIES LABELS interop ENVIRONMENT "${SVKIT_TEST_ENV}"
	SKIP_RETURN_CODE 77 TIMEOUT 900)

# svreport's command line and exit codes (tests/interop/report_cli.sh).
add_test(NAME interop/report_cli COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/report_cli.sh)
set_tests_properties(interop/report_cli PROPERTIES LABELS interop ENVIRONMENT "${SVKIT_TEST_ENV}"
	SKIP_RETURN_CODE 77 TIMEOUT 60)

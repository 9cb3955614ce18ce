# Interop of svkit's encoder with Wireshark's dissector: many shapes encoded, decoded by tshark, compared.
add_executable(sv_shapes ${CMAKE_CURRENT_LIST_DIR}/sv_shapes.c)
target_link_libraries(sv_shapes PRIVATE sv)
add_test(NAME interop/tshark_shapes
	COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/tshark_shapes.py $<TARGET_FILE:sv_shapes> 400 20261130)
set_tests_properties(interop/tshark_shapes PROPERTIES LABELS interop SKIP_RETURN_CODE 77 TIMEOUT 300
	ENVIRONMENT "${SVKIT_TEST_ENV}")

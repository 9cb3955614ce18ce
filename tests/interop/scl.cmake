# SCL in (issue 33): svpub --scl -> svsub --scl, mismatches named, tshark sees the file's values.
if(Python3_Interpreter_FOUND)
	foreach(t pubsub mismatch tshark shape ied)
		add_test(NAME interop/scl_${t} COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/scl_interop.py ${t})
		set_tests_properties(interop/scl_${t} PROPERTIES LABELS interop ENVIRONMENT "${SVKIT_TEST_ENV}"
			SKIP_RETURN_CODE 77 TIMEOUT 180)
	endforeach()
endif()

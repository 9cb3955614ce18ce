# COMTRADE out (issue 33): the Omicron Z1 fault -> svsub --comtrade -> a reader written from C37.111-2013.
if(Python3_Interpreter_FOUND)
	foreach(t fault formats gap plot)
		add_test(NAME interop/comtrade_${t}
			COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/comtrade_interop.py ${t})
		set_tests_properties(interop/comtrade_${t} PROPERTIES LABELS interop ENVIRONMENT "${SVKIT_TEST_ENV}"
			SKIP_RETURN_CODE 77 TIMEOUT 180)
	endforeach()
endif()

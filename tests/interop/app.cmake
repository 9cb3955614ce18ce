# svsub --app overcurrent on the real captures, and svsub -c FILE (tests/interop/app_overcurrent.py).
if(Python3_Interpreter_FOUND)
	foreach(t fault normal config)
		add_test(NAME interop/app_overcurrent_${t}
			COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/app_overcurrent.py ${t})
		set_tests_properties(interop/app_overcurrent_${t} PROPERTIES LABELS interop
			ENVIRONMENT "${SVKIT_TEST_ENV}" SKIP_RETURN_CODE 77 TIMEOUT 120)
	endforeach()
endif()

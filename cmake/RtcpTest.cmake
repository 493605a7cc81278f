# rtcp_add_cppunit_test(NAME name SOURCES ... LIBS ... LABELS ... [TIMEOUT s] [ARGS suite...])
# Builds a CppUnit test executable (with the shared test main) and registers it with CTest
# (with ARGS: running only those suites).
function(rtcp_add_cppunit_test)
  cmake_parse_arguments(T "" "NAME;TIMEOUT" "SOURCES;LIBS;LABELS;ARGS" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE rtcp_testmain ${T_LIBS})
  add_test(NAME ${T_NAME} COMMAND ${T_NAME} ${T_ARGS})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  set(environment "RTCP_SOURCE_DIR=${CMAKE_SOURCE_DIR};RTCP_BINARY_DIR=${CMAKE_BINARY_DIR}")
  if(RTCP_SANITIZE)
    # Leaks inside the libraries we use (casacore's one-off singletons), not ours.
    list(APPEND environment "LSAN_OPTIONS=suppressions=${CMAKE_SOURCE_DIR}/cmake/lsan.supp")
  endif()
  set_tests_properties(${T_NAME} PROPERTIES LABELS "${T_LABELS}" TIMEOUT ${T_TIMEOUT}
    ENVIRONMENT "${environment}")
endfunction()

# rtcp_add_python_test(NAME name SCRIPT file [ARGS ...] LABELS ... [TIMEOUT s])
# Registers a Python 3 test script (run with Debian's /usr/bin/python3, which has
# python3-casacore and numpy) with CTest, in the same environment as the CppUnit tests.
function(rtcp_add_python_test)
  cmake_parse_arguments(T "" "NAME;SCRIPT;TIMEOUT" "ARGS;LABELS" ${ARGN})
  add_test(NAME ${T_NAME} COMMAND /usr/bin/python3 ${T_SCRIPT} ${T_ARGS})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  set(environment "RTCP_SOURCE_DIR=${CMAKE_SOURCE_DIR};RTCP_BINARY_DIR=${CMAKE_BINARY_DIR}")
  if(RTCP_SANITIZE)
    list(APPEND environment "LSAN_OPTIONS=suppressions=${CMAKE_SOURCE_DIR}/cmake/lsan.supp")
  endif()
  set_tests_properties(${T_NAME} PROPERTIES LABELS "${T_LABELS}" TIMEOUT ${T_TIMEOUT}
    ENVIRONMENT "${environment}")
endfunction()

# The kernels chosen at run time (AVX-512, AVX2, plain: the explicit ones and GCC's
# target_clones) run here only in their AVX-512 forms. qemu-user emulates processors
# without AVX-512, so a test given EMULATED_CPUS also runs, as NAME_<cpu>, on each of them
# (QEMU's names: Haswell-v2 has AVX2 and FMA, Nehalem only x86-64-v2, the oldest rtcp
# builds for), with every form that processor would choose. Not in the sanitizer build
# (its shadow memory does not map under qemu-user) nor without qemu-x86_64.
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64" AND NOT RTCP_SANITIZE)
  find_program(RTCP_QEMU_X86_64 qemu-x86_64)
endif()

# rtcp_add_cppunit_test(NAME name SOURCES ... LIBS ... LABELS ... [TIMEOUT s] [ARGS suite...]
#                       [EMULATED_CPUS cpu...])
# Builds a CppUnit test executable (with the shared test main) and registers it with CTest
# (with ARGS: running only those suites; with EMULATED_CPUS: also under qemu-user, above).
function(rtcp_add_cppunit_test)
  cmake_parse_arguments(T "" "NAME;TIMEOUT" "SOURCES;LIBS;LABELS;ARGS;EMULATED_CPUS" ${ARGN})
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
  if(RTCP_QEMU_X86_64)
    foreach(cpu IN LISTS T_EMULATED_CPUS)
      add_test(NAME ${T_NAME}_${cpu}
        COMMAND ${RTCP_QEMU_X86_64} -cpu ${cpu} $<TARGET_FILE:${T_NAME}> ${T_ARGS})
      set_tests_properties(${T_NAME}_${cpu} PROPERTIES LABELS "${T_LABELS}"
        TIMEOUT ${T_TIMEOUT} ENVIRONMENT "${environment}")
    endforeach()
  endif()
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

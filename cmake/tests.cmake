# One test binary per area (tests/<area>/*.c + tests/test_main.c). Each source file is one
# ctest entry `<area>.<file>`, run as `test_<area> <file>`, labelled with its area so that
# `ctest -L unit` selects the unit tests (run again under the sanitizers by `make test`).
set(PD_TEST_AREAS unit physics cli bad_input)
foreach(area ${PD_TEST_AREAS})
  file(GLOB area_sources CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/${area}/*.c)
  if(NOT area_sources)
    continue()
  endif()
  if(area STREQUAL "bad_input") # replays the fuzzers' findings through their entry points
    list(APPEND area_sources ${CMAKE_SOURCE_DIR}/fuzz/fuzz_targets.c)
  endif()
  add_executable(test_${area} ${area_sources} ${CMAKE_SOURCE_DIR}/tests/test_main.c)
  target_include_directories(test_${area} PRIVATE ${CMAKE_SOURCE_DIR}/src ${CMAKE_SOURCE_DIR}/tests
                             ${CMAKE_SOURCE_DIR}/fuzz ${CHOLMOD_INCLUDE_DIR})
  target_compile_options(test_${area} PRIVATE ${PD_WARNINGS})
  target_compile_definitions(test_${area} PRIVATE PD_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
                             PD_CLI_PATH="$<TARGET_FILE:peridot_cli>")
  target_link_libraries(test_${area} PRIVATE peridot)
  # the tests that run the program (PD_CLI_PATH) need it built; the unit tests never do, and the
  # portable and sanitizer builds of `make test` build test_unit alone
  if(NOT area STREQUAL "unit")
    add_dependencies(test_${area} peridot_cli)
  endif()
  list(FILTER area_sources INCLUDE REGEX "/tests/")
  foreach(src ${area_sources})
    get_filename_component(stem ${src} NAME_WE)
    add_test(NAME ${area}.${stem} COMMAND test_${area} ${stem})
    # passive OpenMP waiting: spinning threads of two tests running side by side starve
    # each other on a 2-core machine
    set_tests_properties(${area}.${stem} PROPERTIES LABELS ${area} TIMEOUT 900
                         ENVIRONMENT "OMP_WAIT_POLICY=PASSIVE")
  endforeach()
endforeach()

# The Python module's tests (tests/python/test_<name>.py, pytest; ctest `python.<name>`), under
# Debian's python3 (its python3-numpy and python3-pytest, scripts/setup.sh) rather than another
# python3 earlier on the PATH, with this build's shared library and program.
find_program(PD_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
find_program(PD_PYTHON3 python3)
file(GLOB PD_PYTHON_TESTS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/python/test_*.py)
foreach(src ${PD_PYTHON_TESTS})
  get_filename_component(stem ${src} NAME_WE)
  string(REGEX REPLACE "^test_" "" name ${stem})
  add_test(NAME python.${name} COMMAND ${PD_PYTHON3} -m pytest -q -s -p no:cacheprovider ${src})
  set_tests_properties(python.${name} PROPERTIES LABELS python TIMEOUT 300 ENVIRONMENT
    "OMP_WAIT_POLICY=PASSIVE;PYTHONDONTWRITEBYTECODE=1;PYTHONPATH=${CMAKE_SOURCE_DIR}/python;PERIDOT_LIB=$<TARGET_FILE:peridot_shared>;PERIDOT_CLI=$<TARGET_FILE:peridot_cli>")
endforeach()

# The report (src/report/): `uform info` of the fixture machines, text and JSON, checked by
# check_info_fixtures.py against what each fixture's files and the CUDA and NVML doubles say;
# and the doubles' peer attributes and NVLinks themselves (test_*.c, built by tests/CMakeLists.txt).
add_executable(uform_print_info ${CMAKE_CURRENT_LIST_DIR}/print_info.c)
target_include_directories(uform_print_info PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_compile_definitions(uform_print_info PRIVATE _GNU_SOURCE UFORM_TEST_FIXTURES="${PROJECT_SOURCE_DIR}/tests/fixtures")
target_compile_options(uform_print_info PRIVATE -Wall -Wextra -Wno-unused-parameter)
target_link_libraries(uform_print_info PRIVATE uform_static)
add_dependencies(uform_print_info uform_cuda_emulated uform_nvml_emulated)
set(uform_report_fixtures container_epyc_cpuset_quota)
# The GPU tables need the CUDA double, a shared library a WebAssembly build cannot load.
if(NOT EMSCRIPTEN)
  list(APPEND uform_report_fixtures two_socket_6248_smt grace_hopper_gh200)
endif()
set(uform_report_runs)
foreach(fixture ${uform_report_fixtures})
  list(APPEND uform_report_runs "${fixture}:double")
endforeach()
# NVLinks unknown: without NVML, and with an NVML whose nvmlInit_v2 fails; and through NVSwitches.
if(NOT EMSCRIPTEN)
  list(APPEND uform_report_runs two_socket_6248_smt:absent two_socket_6248_smt:init_fails
    two_socket_6248_smt:nvswitch)
endif()
foreach(run ${uform_report_runs})
  string(REPLACE ":" ";" parts ${run})
  list(GET parts 0 fixture)
  list(GET parts 1 nvml)
  set(name report.info_${fixture})
  if(NOT nvml STREQUAL "double")
    set(name ${name}_nvml_${nvml})
  endif()
  add_test(NAME ${name} COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/check_info_fixtures.py ${fixture} ${nvml}
    $<TARGET_FILE:uform_cuda_emulated> $<TARGET_FILE:uform_nvml_emulated> ${CMAKE_CROSSCOMPILING_EMULATOR}
    $<TARGET_FILE:uform_print_info>)
  set_tests_properties(${name} PROPERTIES LABELS report TIMEOUT 60)
endforeach()

file(GLOB uform_report_test_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/test_*.c)
foreach(source ${uform_report_test_sources})
  get_filename_component(name ${source} NAME_WE)
  target_compile_definitions(${name} PRIVATE UFORM_TEST_CUDA_DOUBLE="$<TARGET_FILE:uform_cuda_emulated>"
    UFORM_TEST_NVML_DOUBLE="$<TARGET_FILE:uform_nvml_emulated>")
  target_link_libraries(${name} PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)
  add_dependencies(${name} uform_cuda_emulated uform_nvml_emulated)
endforeach()

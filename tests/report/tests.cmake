# The report (src/report/): `uform info` of the fixture machines, text and JSON, checked by
# check_info_fixtures.py against what each fixture's files and the CUDA double say; and the
# double's peer attributes themselves (test_*.c, built by tests/CMakeLists.txt).
add_executable(uform_print_info ${CMAKE_CURRENT_LIST_DIR}/print_info.c)
target_include_directories(uform_print_info PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_compile_definitions(uform_print_info PRIVATE _GNU_SOURCE UFORM_TEST_FIXTURES="${PROJECT_SOURCE_DIR}/tests/fixtures")
target_compile_options(uform_print_info PRIVATE -Wall -Wextra -Wno-unused-parameter)
target_link_libraries(uform_print_info PRIVATE uform_static)
add_dependencies(uform_print_info uform_cuda_emulated)
set(uform_report_fixtures container_epyc_cpuset_quota)
# The GPU tables need the CUDA double, a shared library a WebAssembly build cannot load.
if(NOT EMSCRIPTEN)
  list(APPEND uform_report_fixtures two_socket_6248_smt grace_hopper_gh200)
endif()
foreach(fixture ${uform_report_fixtures})
  add_test(NAME report.info_${fixture} COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/check_info_fixtures.py ${fixture}
    $<TARGET_FILE:uform_cuda_emulated> ${CMAKE_CROSSCOMPILING_EMULATOR} $<TARGET_FILE:uform_print_info>)
  set_tests_properties(report.info_${fixture} PROPERTIES LABELS report TIMEOUT 60)
endforeach()

file(GLOB uform_report_test_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/test_*.c)
foreach(source ${uform_report_test_sources})
  get_filename_component(name ${source} NAME_WE)
  target_compile_definitions(${name} PRIVATE UFORM_TEST_CUDA_DOUBLE="$<TARGET_FILE:uform_cuda_emulated>")
  target_link_libraries(${name} PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)
  add_dependencies(${name} uform_cuda_emulated)
endforeach()

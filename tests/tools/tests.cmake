# The vocabularies as the C library lists them, against the public header and both faces.
add_executable(uform_print_vocabulary ${CMAKE_CURRENT_LIST_DIR}/print_vocabulary.c)
target_include_directories(uform_print_vocabulary PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_compile_options(uform_print_vocabulary PRIVATE -Wall -Wextra -Wno-unused-parameter)
target_link_libraries(uform_print_vocabulary PRIVATE uform_static)
# (A cross build's printer runs under its emulator.)
add_test(NAME tools.faces_vocabulary COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/check_faces.py ${PROJECT_SOURCE_DIR}
  ${CMAKE_CROSSCOMPILING_EMULATOR} $<TARGET_FILE:uform_print_vocabulary>)
set_tests_properties(tools.faces_vocabulary PROPERTIES LABELS tools TIMEOUT 60)

# The uform command, run for real: info (text and JSON), a tiny benchmark, mesh refusing
# without a GPU backend, and bad usage.
if(TARGET uform_cli)
  add_test(NAME tools.info_json COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/check_info.sh $<TARGET_FILE:uform_cli>)
  add_test(NAME tools.mesh_without_gpu COMMAND sh -c
    "! $<TARGET_FILE:uform_cli> mesh --directory /tmp --job smoke 2> err.txt && grep -q 'no GPU' err.txt"
    WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
  add_test(NAME tools.bad_usage COMMAND sh -c
    "$<TARGET_FILE:uform_cli> frobnicate; test $? -eq 2 && $<TARGET_FILE:uform_cli> info --bogus; test $? -eq 2")
  if(TARGET uform_bench_core)
    set(uform_cli_has_bench 1)
  else()
    set(uform_cli_has_bench 0)
  endif()
  add_test(NAME tools.cli_usage COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/check_cli.sh $<TARGET_FILE:uform_cli>
    $<TARGET_FILE:uform_cuda_emulated> ${uform_cli_has_bench})
  set_tests_properties(tools.info_json tools.mesh_without_gpu tools.bad_usage tools.cli_usage PROPERTIES
    LABELS tools TIMEOUT 60)
  if(TARGET uform_bench_core)
    add_test(NAME tools.bench_smoke COMMAND $<TARGET_FILE:uform_cli> bench --quick --rounds 1 --threads 1,2
      --peers uform,serial --duration 0.05 --warmup 0.02 --reduce-mib 16 --passes 1 --wake-samples 3 --idle 0.05)
    set_tests_properties(tools.bench_smoke PROPERTIES LABELS tools TIMEOUT 120)
  endif()
endif()

# The ABI check needs the CUDA toolkit's cuda.h (never the driver): /usr/local/cuda or
# whatever find_package(CUDAToolkit) finds. Without it the test is not built.
find_path(uform_cuda_include_dir cuda.h HINTS /usr/local/cuda/include)
if(NOT uform_cuda_include_dir)
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND)
    set(uform_cuda_include_dir ${CUDAToolkit_INCLUDE_DIRS})
  endif()
endif()
if(uform_cuda_include_dir)
  add_executable(test_cuda_abi_matches_toolkit ${CMAKE_CURRENT_LIST_DIR}/test_cuda_abi_matches_toolkit.c)
  target_include_directories(test_cuda_abi_matches_toolkit PRIVATE
    ${CMAKE_CURRENT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/src)
  target_include_directories(test_cuda_abi_matches_toolkit SYSTEM PRIVATE ${uform_cuda_include_dir})
  target_compile_options(test_cuda_abi_matches_toolkit PRIVATE -Wall -Wextra -Werror=incompatible-pointer-types)
  target_link_libraries(test_cuda_abi_matches_toolkit PRIVATE uform_static)
  add_test(NAME gpu.test_cuda_abi_matches_toolkit COMMAND test_cuda_abi_matches_toolkit)
  set_tests_properties(gpu.test_cuda_abi_matches_toolkit PROPERTIES TIMEOUT 60 LABELS gpu)
else()
  message(STATUS "  CUDA toolkit headers not found: gpu.test_cuda_abi_matches_toolkit not built")
endif()

# The other GPU tests run against the CUDA driver test double (tests/doubles/cuda_emulated):
# they are told where its two builds are, and built after them.
file(GLOB uform_gpu_test_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/test_*.c)
list(FILTER uform_gpu_test_sources EXCLUDE REGEX "/test_cuda_abi_matches_toolkit\\.c$")
foreach(source ${uform_gpu_test_sources})
  get_filename_component(name ${source} NAME_WE)
  target_compile_definitions(${name} PRIVATE
    UFORM_TEST_CUDA_DOUBLE="$<TARGET_FILE:uform_cuda_emulated>"
    UFORM_TEST_CUDA_DOUBLE_LEGACY="$<TARGET_FILE:uform_cuda_emulated_legacy>")
  add_dependencies(${name} uform_cuda_emulated uform_cuda_emulated_legacy)
endforeach()

# `uform info` lists the double's GPUs, text and JSON.
if(TARGET uform_cli)
  add_test(NAME gpu.info_lists_gpus COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/check_info_lists_gpus.sh
    $<TARGET_FILE:uform_cli> $<TARGET_FILE:uform_cuda_emulated>)
  set_tests_properties(gpu.info_lists_gpus PROPERTIES LABELS gpu TIMEOUT 60)
endif()

# Issue 16's findings on whatever driver loads: the machine's own where scripts/device-check runs
# it (skipped, exit 77, without an NVIDIA GPU), and here against the double, with a multicast
# machine whose probe must say yes.
if(TARGET test_gpu_any_driver_findings)
  set_tests_properties(gpu.test_gpu_any_driver_findings PROPERTIES SKIP_RETURN_CODE 77 LABELS device)
  add_test(NAME gpu.test_gpu_any_driver_findings_cuda_double COMMAND test_gpu_any_driver_findings)
  set_tests_properties(gpu.test_gpu_any_driver_findings_cuda_double PROPERTIES TIMEOUT 120 LABELS gpu
    ENVIRONMENT "UFORM_TEST_COPY_MIB=32;UFORM_TEST_EXPECT_MULTICAST=1;UFORM_CUDA_LIBRARY=$<TARGET_FILE:uform_cuda_emulated>;UFORM_CUDA_DOUBLE_CONFIG=device cc=9.0 memory=1G multicast=yes nvlink=0\\;device cc=9.0 memory=1G multicast=yes nvlink=0")
endif()

# scripts/device-check runs only where a GPU is lent: here its syntax, and its Python half's, are
# checked (the Python steps that can run against the double run in python/tests).
find_program(uform_bash bash)
find_package(Python3 COMPONENTS Interpreter QUIET)
if(uform_bash AND Python3_Interpreter_FOUND)
  add_test(NAME gpu.device_check_syntax COMMAND ${CMAKE_COMMAND} -E env PYTHONPYCACHEPREFIX=${CMAKE_CURRENT_BINARY_DIR}/pycache
    sh -c "\"$0\" -n \"$1\"/scripts/device-check && \"$2\" -m py_compile \"$1\"/scripts/device_check.py"
    ${uform_bash} ${PROJECT_SOURCE_DIR} ${Python3_EXECUTABLE})
  set_tests_properties(gpu.device_check_syntax PROPERTIES LABELS gpu TIMEOUT 60)
endif()

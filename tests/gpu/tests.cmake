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

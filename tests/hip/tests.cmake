# HIP tests: tests/CMakeLists.txt builds every tests/hip/test_*.c (test names hip.<file>) and
# includes this file after it. They run against the HIP runtime test double
# (tests/doubles/hip_emulated), and those that list NVIDIA and AMD together against the CUDA
# driver test double too (tests/doubles/cuda_emulated, built by tests/doubles/tests.cmake).
if(NOT TARGET uform_hip_emulated)
  include(${PROJECT_SOURCE_DIR}/tests/doubles/hip_emulated/double.cmake)
endif()
# The CUDA toolkit's stub libcuda.so, a real library none of us wrote, for the test that meets it
# beside the HIP double (skipped, exit 77, where it is not installed).
find_file(uform_cuda_stub_library libcuda.so PATHS /usr/local/cuda/lib64/stubs /usr/local/cuda/lib/stubs
  ${CUDAToolkit_LIBRARY_DIR}/stubs NO_DEFAULT_PATH)
if(NOT uform_cuda_stub_library)
  set(uform_cuda_stub_library "")
endif()
file(GLOB uform_hip_test_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/test_*.c)
foreach(source ${uform_hip_test_sources})
  get_filename_component(name ${source} NAME_WE)
  target_compile_definitions(${name} PRIVATE
    UFORM_TEST_HIP_DOUBLE="$<TARGET_FILE:uform_hip_emulated>"
    UFORM_TEST_CUDA_DOUBLE="$<TARGET_FILE:uform_cuda_emulated>"
    UFORM_TEST_CUDA_STUB="${uform_cuda_stub_library}")
  target_link_libraries(${name} PRIVATE ${CMAKE_DL_LIBS})
  add_dependencies(${name} uform_hip_emulated uform_cuda_emulated)
  set_tests_properties(hip.${name} PROPERTIES TIMEOUT 120 LABELS "hip;gpu" SKIP_RETURN_CODE 77)
endforeach()

# `uform info` lists the double's AMD GPUs after the CUDA double's NVIDIA ones.
if(TARGET uform_cli)
  add_test(NAME hip.info_lists_amd_gpus COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/check_info_lists_amd_gpus.sh
    $<TARGET_FILE:uform_cli> $<TARGET_FILE:uform_cuda_emulated> $<TARGET_FILE:uform_hip_emulated>)
  set_tests_properties(hip.info_lists_amd_gpus PROPERTIES LABELS "hip;gpu" TIMEOUT 60)
endif()

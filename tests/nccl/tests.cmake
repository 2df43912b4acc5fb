# NCCL tests: tests/CMakeLists.txt builds every tests/nccl/test_*.c (test names nccl.<file>) and
# includes this file after it. They run uform's NCCL loader and communicators against the NCCL
# test double (tests/doubles/nccl_emulated), over VRAM executors of the CUDA driver test double
# (tests/doubles/cuda_emulated, built by tests/doubles/tests.cmake).
if(NOT TARGET uform_nccl_emulated)
  include(${PROJECT_SOURCE_DIR}/tests/doubles/nccl_emulated/double.cmake)
endif()
file(GLOB uform_nccl_test_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/test_*.c)
foreach(source ${uform_nccl_test_sources})
  get_filename_component(name ${source} NAME_WE)
  target_compile_definitions(${name} PRIVATE
    UFORM_TEST_NCCL_DOUBLE="$<TARGET_FILE:uform_nccl_emulated>"
    UFORM_TEST_CUDA_DOUBLE="$<TARGET_FILE:uform_cuda_emulated>")
  target_link_libraries(${name} PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)
  add_dependencies(${name} uform_nccl_emulated uform_cuda_emulated)
  set_tests_properties(nccl.${name} PROPERTIES TIMEOUT 120 LABELS "nccl;gpu")
endforeach()

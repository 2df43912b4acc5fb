# Mesh rendezvous tests: real processes (fork), a real temporary directory, each process over
# its own VRAM executor on the CUDA driver test double (tests/doubles/cuda_emulated).
# Each process also loads the NCCL test double (tests/doubles/nccl_emulated) or, to be a
# machine without NCCL, a library path that does not exist: never a real libnccl.so.2 that may
# be installed here and cannot drive the emulated GPUs.
if(NOT TARGET uform_nccl_emulated)
  include(${PROJECT_SOURCE_DIR}/tests/doubles/nccl_emulated/double.cmake)
endif()
file(GLOB uform_rendezvous_test_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/test_*.c)
foreach(source ${uform_rendezvous_test_sources})
  get_filename_component(name ${source} NAME_WE)
  target_compile_definitions(${name} PRIVATE UFORM_TEST_CUDA_DOUBLE="$<TARGET_FILE:uform_cuda_emulated>"
    UFORM_TEST_NCCL_DOUBLE="$<TARGET_FILE:uform_nccl_emulated>")
  add_dependencies(${name} uform_cuda_emulated uform_nccl_emulated)
endforeach()

# `uform mesh` on three "nodes" (processes) over the double.
if(TARGET uform_cli)
  add_test(NAME rendezvous.uform_mesh_command COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/check_uform_mesh.sh
    $<TARGET_FILE:uform_cli> $<TARGET_FILE:uform_cuda_emulated> $<TARGET_FILE:uform_nccl_emulated>)
  set_tests_properties(rendezvous.uform_mesh_command PROPERTIES LABELS rendezvous TIMEOUT 120)
endif()

# One outcome under a killed or stopped process at each step: a dozen runs of a few seconds each.
foreach(name test_mesh_cuda_double_killed test_mesh_cuda_double_stalled)
  set_tests_properties(rendezvous.${name} PROPERTIES TIMEOUT 240)
endforeach()

# A pid namespace needs CAP_SYS_ADMIN: without it the test says so and exits 77.
set_tests_properties(rendezvous.test_mesh_cuda_double_pid_namespace PROPERTIES SKIP_RETURN_CODE 77)

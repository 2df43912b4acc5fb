# Mesh rendezvous tests: real processes (fork), a real temporary directory, each process over
# its own VRAM executor on the CUDA driver test double (tests/doubles/cuda_emulated).
file(GLOB uform_rendezvous_test_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/test_*.c)
foreach(source ${uform_rendezvous_test_sources})
  get_filename_component(name ${source} NAME_WE)
  target_compile_definitions(${name} PRIVATE UFORM_TEST_CUDA_DOUBLE="$<TARGET_FILE:uform_cuda_emulated>")
  add_dependencies(${name} uform_cuda_emulated)
endforeach()

# `uform mesh` on three "nodes" (processes) over the double.
if(TARGET uform_cli)
  add_test(NAME rendezvous.uform_mesh_command COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/check_uform_mesh.sh
    $<TARGET_FILE:uform_cli> $<TARGET_FILE:uform_cuda_emulated>)
  set_tests_properties(rendezvous.uform_mesh_command PROPERTIES LABELS rendezvous TIMEOUT 120)
endif()

# Mesh tests: the multicast probe end to end against the CUDA driver test double
# (tests/doubles/cuda_emulated), told where it is and built after it.
file(GLOB uform_mesh_test_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/test_*.c)
foreach(source ${uform_mesh_test_sources})
  get_filename_component(name ${source} NAME_WE)
  target_compile_definitions(${name} PRIVATE UFORM_TEST_CUDA_DOUBLE="$<TARGET_FILE:uform_cuda_emulated>")
  target_link_libraries(${name} PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)
  add_dependencies(${name} uform_cuda_emulated)
endforeach()

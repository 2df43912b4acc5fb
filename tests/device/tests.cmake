# test_vram_any_driver runs twice: against the CUDA driver test double (always), and against
# whatever libcuda.so.1 the machine has (skipped, exit 77, where there is no GPU; this is the
# run scripts/device-check cares about).
if(TARGET test_vram_any_driver)
  add_dependencies(test_vram_any_driver uform_cuda_emulated)
  set_tests_properties(device.test_vram_any_driver PROPERTIES SKIP_RETURN_CODE 77 LABELS device)
  add_test(NAME device.test_vram_any_driver_cuda_double COMMAND test_vram_any_driver)
  set_tests_properties(device.test_vram_any_driver_cuda_double PROPERTIES TIMEOUT 300 LABELS gpu
    ENVIRONMENT "UFORM_TEST_COPY_MIB=32;UFORM_CUDA_LIBRARY=$<TARGET_FILE:uform_cuda_emulated>;UFORM_CUDA_DOUBLE_CONFIG=device cc=9.0 memory=2G\\;device cc=9.0 memory=2G")
endif()

# test_mesh_any_driver likewise: the doubles (CUDA and NCCL) always, the machine's own drivers
# where there is a GPU.
if(TARGET test_mesh_any_driver)
  if(NOT TARGET uform_nccl_emulated)
    include(${PROJECT_SOURCE_DIR}/tests/doubles/nccl_emulated/double.cmake)
  endif()
  add_dependencies(test_mesh_any_driver uform_cuda_emulated uform_nccl_emulated)
  set_tests_properties(device.test_mesh_any_driver PROPERTIES SKIP_RETURN_CODE 77 LABELS device)
  add_test(NAME device.test_mesh_any_driver_doubles COMMAND test_mesh_any_driver)
  set_tests_properties(device.test_mesh_any_driver_doubles PROPERTIES TIMEOUT 120 LABELS gpu
    ENVIRONMENT "UFORM_CUDA_LIBRARY=$<TARGET_FILE:uform_cuda_emulated>;UFORM_NCCL_LIBRARY=$<TARGET_FILE:uform_nccl_emulated>;UFORM_CUDA_DOUBLE_CONFIG=device cc=9.0 memory=256M\\;device cc=9.0 memory=256M\\;device cc=9.0 memory=256M")
endif()

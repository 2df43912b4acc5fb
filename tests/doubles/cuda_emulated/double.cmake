# The CUDA driver test double, built only for tests: libuform_cuda_emulated.so (a CUDA 12+
# driver) and libuform_cuda_emulated_legacy.so (one older than 12.0: no cuGetProcAddress_v2).
# Tests load them through UFORM_CUDA_LIBRARY; nothing links against them.
set(uform_cuda_emulated_sources
  emulated_state.c emulated_discovery.c emulated_contexts.c emulated_memory.c emulated_streams.c
  emulated_events.c emulated_multicast.c emulated_config.c)
list(TRANSFORM uform_cuda_emulated_sources PREPEND ${CMAKE_CURRENT_LIST_DIR}/)
list(APPEND uform_cuda_emulated_sources ${CMAKE_CURRENT_LIST_DIR}/../common/double_config.c)
foreach(variant uform_cuda_emulated uform_cuda_emulated_legacy)
  add_library(${variant} SHARED ${uform_cuda_emulated_sources})
  target_include_directories(${variant} PRIVATE ${CMAKE_CURRENT_LIST_DIR} ${PROJECT_SOURCE_DIR}/src)
  target_compile_options(${variant} PRIVATE -Wall -Wextra -Wno-unused-parameter)
  target_link_libraries(${variant} PRIVATE Threads::Threads)
endforeach()
target_compile_definitions(uform_cuda_emulated_legacy PRIVATE EMULATED_LEGACY_DRIVER=1)
foreach(variant uform_cuda_emulated uform_cuda_emulated_legacy)
  target_compile_definitions(${variant} PRIVATE _GNU_SOURCE)
endforeach()

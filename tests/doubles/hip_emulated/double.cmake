# The HIP runtime test double, built only for tests: libuform_hip_emulated.so (a ROCm 6
# libamdhip64.so). Tests load it through UFORM_HIP_LIBRARY; nothing links against it.
# Included from tests/hip/tests.cmake (the HIP tests are what need it).
add_library(uform_hip_emulated SHARED
  ${CMAKE_CURRENT_LIST_DIR}/hip_double_runtime.c ${CMAKE_CURRENT_LIST_DIR}/hip_double_config.c
  ${CMAKE_CURRENT_LIST_DIR}/../common/double_config.c)
target_include_directories(uform_hip_emulated PRIVATE ${CMAKE_CURRENT_LIST_DIR} ${PROJECT_SOURCE_DIR}/src)
target_compile_definitions(uform_hip_emulated PRIVATE _GNU_SOURCE)
target_compile_options(uform_hip_emulated PRIVATE -Wall -Wextra -Wno-unused-parameter)
target_link_libraries(uform_hip_emulated PRIVATE Threads::Threads)

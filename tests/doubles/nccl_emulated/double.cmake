# The NCCL test double, built only for tests: libuform_nccl_emulated.so (an NCCL 2.x
# libnccl.so.2). Tests load it through UFORM_NCCL_LIBRARY; nothing links against it.
# Included from tests/nccl/tests.cmake (the NCCL tests are what need it).
add_library(uform_nccl_emulated SHARED ${CMAKE_CURRENT_LIST_DIR}/nccl_double.c
  ${CMAKE_CURRENT_LIST_DIR}/nccl_double_config.c ${CMAKE_CURRENT_LIST_DIR}/nccl_double_groups.c
  ${CMAKE_CURRENT_LIST_DIR}/../common/double_config.c)
target_include_directories(uform_nccl_emulated PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_compile_definitions(uform_nccl_emulated PRIVATE _GNU_SOURCE)
target_compile_options(uform_nccl_emulated PRIVATE -Wall -Wextra -Wno-unused-parameter)
target_link_libraries(uform_nccl_emulated PRIVATE Threads::Threads)

# The NVML test double, built only for tests: libuform_nvml_emulated.so (libnvidia-ml.so.1's
# entry points uform binds). Its GPUs come from the CUDA double's configuration, parsed by the
# CUDA double's own parser (built in here), so the two agree. Tests load it through
# UFORM_NVML_LIBRARY; nothing links against it.
add_library(uform_nvml_emulated SHARED ${CMAKE_CURRENT_LIST_DIR}/nvml_double.c
  ${CMAKE_CURRENT_LIST_DIR}/../cuda_emulated/emulated_config.c ${CMAKE_CURRENT_LIST_DIR}/../common/double_config.c)
target_include_directories(uform_nvml_emulated PRIVATE ${CMAKE_CURRENT_LIST_DIR}/../cuda_emulated)
target_compile_definitions(uform_nvml_emulated PRIVATE _GNU_SOURCE)
target_compile_options(uform_nvml_emulated PRIVATE -Wall -Wextra -Wno-unused-parameter -fvisibility=hidden)
target_link_libraries(uform_nvml_emulated PRIVATE Threads::Threads)

# Test doubles of the drivers uform loads at run time, each in its own folder.
include(${CMAKE_CURRENT_LIST_DIR}/cuda_emulated/double.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/nvml_emulated/double.cmake)

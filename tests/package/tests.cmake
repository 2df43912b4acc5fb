# The CMake package and the pkg-config file, used the way a consumer would: install into a
# scratch prefix, then build and run a program with find_package(uform) and with pkg-config.
if(NOT UFORM_SANITIZE)
  # The consumer configures in its own directory: a toolchain file given relative to this
  # source tree (scripts/test-cross does) is made absolute for it.
  set(uform_consumer_toolchain "")
  if(CMAKE_TOOLCHAIN_FILE)
    get_filename_component(uform_consumer_toolchain "${CMAKE_TOOLCHAIN_FILE}" ABSOLUTE BASE_DIR "${PROJECT_SOURCE_DIR}")
  endif()
  add_test(NAME package.consumer COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/check_consumer.sh
    ${PROJECT_BINARY_DIR} ${CMAKE_CURRENT_BINARY_DIR}/consumer ${CMAKE_COMMAND} ${CMAKE_C_COMPILER}
    # cross builds: the consumer is built with the same toolchain and run under the emulator
    ${uform_consumer_toolchain} ${CMAKE_CROSSCOMPILING_EMULATOR})
  set_tests_properties(package.consumer PROPERTIES LABELS package TIMEOUT 300)
endif()

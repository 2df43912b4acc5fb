# The CMake package and the pkg-config file, used the way a consumer would: install into a
# scratch prefix, then build and run a program with find_package(uform) and with pkg-config.
if(NOT UFORM_SANITIZE)
  add_test(NAME package.consumer COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/check_consumer.sh
    ${PROJECT_BINARY_DIR} ${CMAKE_CURRENT_BINARY_DIR}/consumer ${CMAKE_COMMAND} ${CMAKE_C_COMPILER}
    # cross builds: the consumer is built with the same toolchain and run under the emulator
    ${CMAKE_TOOLCHAIN_FILE} ${CMAKE_CROSSCOMPILING_EMULATOR})
  set_tests_properties(package.consumer PROPERTIES LABELS package TIMEOUT 300)
endif()

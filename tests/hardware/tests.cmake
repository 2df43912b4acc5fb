# The capture tool: records the machine it runs on as a fixture (tests/fixtures/README.md).
add_executable(uform_capture_fixture ${CMAKE_CURRENT_LIST_DIR}/capture_fixture.c)
target_include_directories(uform_capture_fixture PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_compile_definitions(uform_capture_fixture PRIVATE _GNU_SOURCE)
target_compile_options(uform_capture_fixture PRIVATE -Wall -Wextra -Wno-unused-parameter)
target_link_libraries(uform_capture_fixture PRIVATE uform_static)

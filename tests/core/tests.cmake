# The public header alone, strict C99 and C++ (built as part of the build, so a header that
# stops compiling breaks the build), and the exported symbol set of the shared library.
set(uform_header_flags -Wall -Wextra -pedantic -Werror)

add_executable(uform_header_c99 ${CMAKE_CURRENT_LIST_DIR}/header_c99.c)
set_target_properties(uform_header_c99 PROPERTIES C_STANDARD 99 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
target_compile_options(uform_header_c99 PRIVATE ${uform_header_flags})
target_link_libraries(uform_header_c99 PRIVATE uform_shared)
add_test(NAME core.header_c99 COMMAND uform_header_c99)

add_executable(uform_header_cxx ${CMAKE_CURRENT_LIST_DIR}/header_cxx.cpp)
set_target_properties(uform_header_cxx PROPERTIES CXX_STANDARD 11 CXX_STANDARD_REQUIRED ON CXX_EXTENSIONS OFF)
target_compile_options(uform_header_cxx PRIVATE ${uform_header_flags})
target_link_libraries(uform_header_cxx PRIVATE uform_shared)
add_test(NAME core.header_cxx COMMAND uform_header_cxx)

find_program(UFORM_NM nm)
if(UFORM_NM)
  add_test(NAME core.exported_symbols
           COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/check_symbols.sh $<TARGET_FILE:uform_shared>)
endif()
set_tests_properties(core.header_c99 core.header_cxx PROPERTIES LABELS core TIMEOUT 60)
if(UFORM_NM)
  set_tests_properties(core.exported_symbols PROPERTIES LABELS core TIMEOUT 60)
endif()

# The shared library's thread-local block, through a real dlopen of it (no shared library, and
# no dlopen of one, in the wasm32 build). Not a test_*.c: it takes the library's path.
if(NOT EMSCRIPTEN)
  add_executable(test_thread_local_block ${CMAKE_CURRENT_LIST_DIR}/thread_local_block.c)
  target_include_directories(test_thread_local_block PRIVATE ${CMAKE_CURRENT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/src)
  target_compile_definitions(test_thread_local_block PRIVATE _GNU_SOURCE)
  target_compile_options(test_thread_local_block PRIVATE -Wall -Wextra -Wno-unused-parameter)
  target_link_libraries(test_thread_local_block PRIVATE uform_static ${CMAKE_DL_LIBS})
  add_dependencies(test_thread_local_block uform_shared)
  add_test(NAME core.test_thread_local_block COMMAND test_thread_local_block $<TARGET_FILE:uform_shared>)
  set_tests_properties(core.test_thread_local_block PROPERTIES LABELS core TIMEOUT 120)
endif()

# The layers: no file under src/ includes a header of a layer above its own.
add_test(NAME core.layers COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/check_layers.sh ${PROJECT_SOURCE_DIR}/src)
set_tests_properties(core.layers PROPERTIES LABELS core TIMEOUT 60)

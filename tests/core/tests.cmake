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

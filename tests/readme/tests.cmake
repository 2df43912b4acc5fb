# The README's C programs, each compiled as written against the public header and the shared
# library (as a consumer would) and run: readme.c_1, readme.c_2, ... in the order they appear.
# Every one runs over the CUDA driver test double with two emulated devices, so the GPU and mesh
# programs take their GPU paths; the host ones ignore it. Editing the README re-configures.
set(uform_readme ${PROJECT_SOURCE_DIR}/README.md)
set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${uform_readme})
file(READ ${uform_readme} uform_readme_text)
set(uform_readme_fence "```c\n")
string(LENGTH "${uform_readme_fence}" uform_readme_fence_length)
set(uform_readme_blocks 0)
# Found with string(FIND), not a regex list: C code holds semicolons and brackets, which a CMake
# list would split on or choke on.
while(TRUE)
  string(FIND "${uform_readme_text}" "${uform_readme_fence}" start)
  if(start EQUAL -1)
    break()
  endif()
  math(EXPR start "${start} + ${uform_readme_fence_length}")
  string(SUBSTRING "${uform_readme_text}" ${start} -1 uform_readme_text)
  string(FIND "${uform_readme_text}" "\n```" end)
  if(end EQUAL -1)
    message(FATAL_ERROR "README.md: a ```c block without its closing fence")
  endif()
  math(EXPR end "${end} + 1")
  string(SUBSTRING "${uform_readme_text}" 0 ${end} block)
  string(SUBSTRING "${uform_readme_text}" ${end} -1 uform_readme_text)
  math(EXPR uform_readme_blocks "${uform_readme_blocks} + 1")
  set(name readme_c_${uform_readme_blocks})
  # Written only when it changed, so an unrelated README edit rebuilds nothing.
  set(source ${CMAKE_CURRENT_BINARY_DIR}/readme/${name}.c)
  set(written "")
  if(EXISTS ${source})
    file(READ ${source} written)
  endif()
  if(NOT written STREQUAL block)
    file(WRITE ${source} "${block}")
  endif()
  add_executable(${name} ${source})
  # The public header is C99: a user's program compiles as C99 with every warning an error.
  set_target_properties(${name} PROPERTIES C_STANDARD 99 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
  target_compile_options(${name} PRIVATE -Wall -Wextra -Werror -pedantic)
  if(EMSCRIPTEN)
    target_link_libraries(${name} PRIVATE uform_static) # no shared libraries there
  else()
    target_link_libraries(${name} PRIVATE uform_shared)
  endif()
  add_test(NAME readme.c_${uform_readme_blocks} COMMAND ${name})
  set_tests_properties(readme.c_${uform_readme_blocks} PROPERTIES LABELS readme TIMEOUT 120
    ENVIRONMENT "UFORM_CUDA_LIBRARY=$<TARGET_FILE:uform_cuda_emulated>;UFORM_CUDA_DOUBLE_CONFIG=device cc=9.0 memory=256M\\;device cc=8.0 memory=256M;UFORM_NCCL_LIBRARY=/nonexistent/libnccl.so.2")
  if(NOT EMSCRIPTEN)
    # The double gives two devices: a GPU program that found none did not run its GPU path.
    # (WebAssembly has no dlopen, so no GPUs there: the programs say so and end.)
    set_tests_properties(readme.c_${uform_readme_blocks} PROPERTIES FAIL_REGULAR_EXPRESSION "no GPUs")
  endif()
endwhile()
if(uform_readme_blocks EQUAL 0)
  message(FATAL_ERROR "README.md shows no ```c program: the quick start in C is missing")
endif()

# WebAssembly (wasm32) build with Debian's Emscripten (3.1.6), pthreads on shared memory and
# SIMD128, run under Node.js: ctest starts every test through CMAKE_CROSSCOMPILING_EMULATOR.
#   cmake -S . -B build-wasm32 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-wasm32-emscripten.cmake
# Emscripten's optimizer (run by emcc at link time) needs NODE_PATH=/usr/share/nodejs on Debian;
# scripts/test-wasm sets it.
find_program(uform_emcc emcc REQUIRED)
get_filename_component(uform_emcc_real "${uform_emcc}" REALPATH)
get_filename_component(uform_emscripten_root "${uform_emcc_real}" DIRECTORY)
if(NOT EXISTS "${uform_emscripten_root}/cmake/Modules/Platform/Emscripten.cmake")
  set(uform_emscripten_root /usr/share/emscripten)
endif()
include("${uform_emscripten_root}/cmake/Modules/Platform/Emscripten.cmake")

set(CMAKE_C_FLAGS_INIT "-pthread -msimd128")
set(CMAKE_CXX_FLAGS_INIT "-pthread -msimd128")
# PROXY_TO_PTHREAD: main() runs on a worker, so the Node main thread stays free to start more
# workers; the pool holds workers ready for the executor's threads. NODERAWFS: the host's files
# (fixtures, temporary files) through Node's fs. EXIT_RUNTIME: main's return ends the process
# with its status.
set(uform_wasm_link_flags "-pthread -sPROXY_TO_PTHREAD=1 -sPTHREAD_POOL_SIZE=8 -sALLOW_MEMORY_GROWTH=1 -sEXIT_RUNTIME=1 -sNODERAWFS=1")
set(CMAKE_EXE_LINKER_FLAGS_INIT "${uform_wasm_link_flags}")
find_program(uform_node node REQUIRED)
# Node 20's fetch clashes with Emscripten 3.1.6's loader; its wasm threads and SIMD are on.
set(CMAKE_CROSSCOMPILING_EMULATOR "${uform_node};--no-experimental-fetch")

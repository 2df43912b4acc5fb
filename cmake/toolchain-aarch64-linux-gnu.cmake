# Cross build for aarch64 Linux with Debian's cross toolchain, run under qemu-aarch64
# (cmake/cross-linux-gnu.cmake has the rest).
#   cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64-linux-gnu.cmake
set(CMAKE_SYSTEM_PROCESSOR aarch64)
include(${CMAKE_CURRENT_LIST_DIR}/cross-linux-gnu.cmake)

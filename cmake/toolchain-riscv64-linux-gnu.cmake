# Cross build for riscv64 Linux with Debian's cross toolchain, run under qemu-riscv64
# (cmake/cross-linux-gnu.cmake has the rest).
#   cmake -S . -B build-riscv64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-riscv64-linux-gnu.cmake
set(CMAKE_SYSTEM_PROCESSOR riscv64)
include(${CMAKE_CURRENT_LIST_DIR}/cross-linux-gnu.cmake)

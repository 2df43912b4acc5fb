# Cross build for aarch64 Linux with Debian's cross toolchain (gcc-aarch64-linux-gnu and
# libc6-dev-*-cross), run under qemu-user: ctest starts every test executable through
# CMAKE_CROSSCOMPILING_EMULATOR, and QEMU_CPU in the environment picks the emulated CPU model.
#   cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64-linux-gnu.cmake
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(uform_cross_triple aarch64-linux-gnu)
set(CMAKE_C_COMPILER ${uform_cross_triple}-gcc)
set(CMAKE_CXX_COMPILER ${uform_cross_triple}-g++)
# Appended, so a consumer may add its own root (-DCMAKE_FIND_ROOT_PATH=<install prefix>).
list(APPEND CMAKE_FIND_ROOT_PATH /usr/${uform_cross_triple})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# -L: the target's C library, where qemu-user finds the dynamic loader and libc.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /usr/${uform_cross_triple})

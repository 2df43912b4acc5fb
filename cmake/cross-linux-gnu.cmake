# Shared by the cross toolchain files (toolchain-<arch>-linux-gnu.cmake), which set
# CMAKE_SYSTEM_PROCESSOR and include this: Debian's cross toolchain for that architecture
# (gcc-<arch>-linux-gnu and libc6-dev-*-cross), run under qemu-user. ctest starts every test
# executable through CMAKE_CROSSCOMPILING_EMULATOR, and QEMU_CPU in the environment picks the
# emulated CPU model.
set(CMAKE_SYSTEM_NAME Linux)
set(uform_cross_triple ${CMAKE_SYSTEM_PROCESSOR}-linux-gnu)
set(CMAKE_C_COMPILER ${uform_cross_triple}-gcc)
set(CMAKE_CXX_COMPILER ${uform_cross_triple}-g++)
# Appended, so a consumer may add its own root (-DCMAKE_FIND_ROOT_PATH=<install prefix>).
list(APPEND CMAKE_FIND_ROOT_PATH /usr/${uform_cross_triple})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# -L: the target's C library, where qemu-user finds the dynamic loader and libc.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-${CMAKE_SYSTEM_PROCESSOR} -L /usr/${uform_cross_triple})

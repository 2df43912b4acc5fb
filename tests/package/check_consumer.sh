#!/bin/sh
set -eu
build=$1; scratch=$2; cmake=$3; cc=$4
# Cross builds: the toolchain file the consumer is configured with, then the emulator that
# runs its programs (empty on native builds).
toolchain=${5:-}
emulator=""
if [ "$#" -gt 5 ]; then shift 5; emulator="$*"; fi
run() { $emulator "$@"; }
rm -rf "$scratch" && mkdir -p "$scratch/app"
# Installed under one prefix, then moved: the consumer finds it where it lies now, which is
# neither the configured prefix (CMAKE_INSTALL_PREFIX) nor the one it was installed under.
$cmake --install "$build" --prefix "$scratch/installed" >/dev/null
mv "$scratch/installed" "$scratch/prefix"
cat > "$scratch/app/main.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <uform.h>
static uform_status_t one(void *context, size_t task, size_t thread) { ((int *)context)[task] = 1; return UFORM_STATUS_OK; }
int main(void) {
    int seen[64] = {0};
    uform_executor_t *executor = NULL;
    if (uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 2, 0, &executor)) return 1;
    if (uform_executor_for_n(executor, NULL, 64, one, seen)) return 2;
    uform_executor_free(executor);
    for (int i = 0; i < 64; i++) if (!seen[i]) return 3;
    if (strcmp(uform_version(), UFORM_VERSION_STRING)) return 4;
    printf("consumer ok: uform %s\n", uform_version());
    return 0;
}
C
cat > "$scratch/app/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.18)
project(consumer C)
find_package(uform 4.0 REQUIRED)
add_executable(consumer main.c)
target_link_libraries(consumer uform::uform)
CM
# CMake's package: CMAKE_PREFIX_PATH alone (cross builds add their toolchain and its root path).
$cmake -S "$scratch/app" -B "$scratch/app/build" -DCMAKE_PREFIX_PATH="$scratch/prefix" \
  ${toolchain:+-DCMAKE_TOOLCHAIN_FILE="$toolchain" -DCMAKE_FIND_ROOT_PATH="$scratch/prefix"} >/dev/null
$cmake --build "$scratch/app/build" >/dev/null
run "$scratch/app/build/consumer"
# pkg-config: PKG_CONFIG_PATH alone; uform.pc finds its prefix from where it lies.
if command -v pkg-config >/dev/null 2>&1; then
  pcdir=$(ls -d "$scratch"/prefix/lib*/pkgconfig "$scratch"/prefix/lib/*/pkgconfig 2>/dev/null | head -n 1)
  flags=$(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags --libs uform)
  libdir=$(PKG_CONFIG_PATH="$pcdir" pkg-config --variable=libdir uform)
  case "$flags" in
    *"$scratch/prefix/"*) ;;
    *) echo "pkg-config's flags do not point into the prefix $scratch/prefix: $flags" >&2; exit 1 ;;
  esac
  $cc "$scratch/app/main.c" $flags -Wl,-rpath,"$libdir" -o "$scratch/app/pkgconfig-consumer"
  run "$scratch/app/pkgconfig-consumer"
fi

#!/bin/sh
# Linker launcher of cross builds (tests/CMakeLists.txt sets it on the executables that tests
# run through shell scripts, such as the uform command): runs the link, keeps the target binary
# as <output>.target and writes <output> as a script that runs it under the emulator, so
# `$uform info` in a test script works as on a native build.
#   emulated-executable.sh <emulator words...> -- <link command...>
set -eu
emulator=""
while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do emulator="$emulator '$1'"; shift; done
[ "$#" -gt 0 ] || { echo "emulated-executable.sh: no -- before the link command" >&2; exit 2; }
shift
output=""
previous=""
for argument in "$@"; do
  [ "$previous" = "-o" ] && output=$argument
  previous=$argument
done
[ -n "$output" ] || { echo "emulated-executable.sh: the link command names no -o output" >&2; exit 2; }
"$@"
mv -f "$output" "$output.target"
case "$output" in /*) target="$output.target" ;; *) target="$(pwd)/$output.target" ;; esac
cat > "$output" <<WRAPPER
#!/bin/sh
# Written by cmake/emulated-executable.sh: the target binary, run under the emulator.
exec $emulator '$target' "\$@"
WRAPPER
chmod +x "$output"

#!/bin/sh
# The library's layers, lowest first: a file under src/<layer>/ may include headers of its own
# layer and of the layers below it, never of one above (docs/design.md, "Layers"). A header
# named by the public include path ("uform.h", "uform/...") is the contract, open to all.
# Usage: check_layers.sh <src directory>
set -eu
src="$1"
root=$(realpath "$src")
layers="platform core hardware kernels executor gpu mesh report"
rank() {
  i=0
  for layer in $layers; do
    [ "$layer" = "$1" ] && { echo $i; return; }
    i=$((i + 1))
  done
  echo -1
}
status=0
checked=0
for dir in "$src"/*/; do
  layer=$(basename "$dir")
  own=$(rank "$layer")
  [ "$own" -ge 0 ] || { echo "src/$layer/: a folder that is not a layer (add it to check_layers.sh's list)"; status=1; continue; }
  for file in $(find "$dir" -name '*.[ch]' | sort); do
    checked=$((checked + 1))
    here=$(dirname "$file")
    for path in $(sed -n 's|^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]\([^">]*\)[">].*|\1|p' "$file" | sort -u); do
      # Where the compiler finds it: beside the file, else on the -I src path; neither: a
      # system header or include/ (the public contract).
      if [ -f "$here/$path" ]; then target=$(realpath "$here/$path")
      elif [ -f "$src/$path" ]; then target=$(realpath "$src/$path")
      else continue; fi
      case "$target" in "$root"/*) ;; *) continue ;; esac
      named=${target#"$root"/}
      named=${named%%/*}
      other=$(rank "$named")
      if [ "$other" -lt 0 ]; then
        echo "${file#"$src"/}: includes $path, under src/$named/, which is not a layer"; status=1
      elif [ "$other" -gt "$own" ]; then
        echo "${file#"$src"/}: layer $layer includes $path, of $named, a layer above it"; status=1
      fi
    done
  done
done
[ "$checked" -gt 0 ] || { echo "no source files under $src"; exit 1; }
[ $status -eq 0 ] && echo "$checked files: every include names its own layer or one below ($layers)"
exit $status

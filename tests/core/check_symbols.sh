#!/bin/sh
# Every symbol the shared library exports is public API: uform_ and never uform__ (internal).
# Usage: check_symbols.sh <libuform.so>
set -eu
library="$1"
symbols=$(nm -D --defined-only "$library" | awk '$2 ~ /^[TtWwDdBbRrVvi]$/ { print $3 }' | sed 's/@.*//' | sort -u)
[ -n "$symbols" ] || { echo "no exported symbols in $library"; exit 1; }
status=0
for symbol in $symbols; do
  case "$symbol" in
    uform__*) echo "internal symbol exported: $symbol"; status=1 ;;
    uform_*) ;;
    *) echo "non-uform symbol exported: $symbol"; status=1 ;;
  esac
done
for required in uform_version uform_status_name uform_last_error uform_cpu_class_derived uform_numa_domains \
                uform_info_write uform_capabilities_compiled; do
  echo "$symbols" | grep -qx "$required" || { echo "missing export: $required"; status=1; }
done
[ $status -eq 0 ] && echo "$(echo "$symbols" | wc -l) exported symbols, all uform_*"
exit $status

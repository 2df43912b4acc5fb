#!/bin/sh
# usage: check_table.sh [EMULATOR...] UFORM-BENCH (every argument: the command that runs the bench)
# The side-by-side table as a user's terminal gets it: every line of the default output fits 100
# columns and holds none of the project's own target verdicts; --wide adds the other columns and
# --targets the verdicts. A tiny run (two pools, 1 and 2 threads, milliseconds each).
set -eu
bench=$*
tiny="--quick --table --counts 1,2 --peers uform,serial --duration 0.02 --warmup 0.01 --reduce-mib 4 --passes 1
  --wake-samples 2 --wake-idle-ms 1 --idle 0.02"
fail() { echo "check_table: $*" >&2; exit 1; }
out=$($bench $tiny 2>/dev/null) || fail "the default run failed"
echo "$out"
widest=$(printf '%s\n' "$out" | awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }')
[ "$widest" -le 100 ] || fail "the default output is $widest columns wide (at most 100)"
printf '%s\n' "$out" | grep -q '^| uform spinning *| *2 |' || fail "the default table has no uform row at 2 threads"
printf '%s\n' "$out" | grep -Eq 'Targets|MISSED|met$' && fail "the default output shows target verdicts"
printf '%s\n' "$out" | grep -q 'caller share' && fail "the default table shows a --wide column"
wide=$($bench $tiny --wide 2>/dev/null) || fail "the --wide run failed"
printf '%s\n' "$wide" | grep -q '| caller share |' || fail "--wide has no caller share column"
printf '%s\n' "$wide" | grep -q '| after short idle |' || fail "--wide has no after-short-idle column"
targets=$($bench $tiny --targets 2>/dev/null) || fail "the --targets run failed"
printf '%s\n' "$targets" | grep -q '^### Targets' || fail "--targets prints no targets"
printf '%s\n' "$targets" | grep -Eq -- '-> (met|MISSED)' || fail "--targets prints no verdict"
echo "check_table: default $widest columns, --wide and --targets as documented"

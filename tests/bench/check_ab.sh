#!/bin/sh
# usage: check_ab.sh PROJECT-SOURCE-DIR BENCH-DIR
# scripts/bench-ab as documented: a row per build with its median best batch, its ratio to the
# peer and to the first build (1.000 for the first against itself), each with the range over the
# paired rounds; and a clear refusal of a folder without uform-bench. Figures are not judged.
set -eu
src=$1 dir=$2
fail() { echo "check_ab: $*" >&2; exit 1; }
# check_run WHAT HEADING-REGEX ARGS...: runs bench-ab with ARGS on the build given twice; its
# heading, a row per build with both ratios and their ranges, the first build 1.000 of itself.
check_run() {
  what=$1 heading=$2
  shift 2
  out=$(python3 "$src/scripts/bench-ab" "$@" --peer uform:parked "$dir" "$dir") || fail "the $what run failed"
  echo "$out"
  printf '%s\n' "$out" | grep -q "$heading" || fail "no $what heading with the peer's time"
  rows=$(printf '%s\n' "$out" | grep -Ec ' [0-9]+ ns +[0-9]+\.[0-9]{3} \([0-9.]+-[0-9.]+\) +[0-9]+\.[0-9]{3} \([0-9.]+-[0-9.]+\)$')
  [ "$rows" -eq 2 ] || fail "expected 2 build rows with both ratios from the $what run, found $rows"
  printf '%s\n' "$out" | sed -n 3p | grep -q ' 1\.000 (1\.00-1\.00)$' || fail "in the $what run the first build is not 1.000 of itself"
}
check_run "paired-rounds" '^2 paired rounds of the best batch, --item bump; uform:parked: [0-9]* ns$' --rounds 2 --duration 0.02
check_run "--turns" '^3 cycles of turns, --item bump; uform:parked: [0-9]* ns$' --turns --cycles 3
if err=$(python3 "$src/scripts/bench-ab" --rounds 1 "$dir" "$dir/no-such-folder" 2>&1); then
  fail "a folder without uform-bench was accepted"
fi
printf '%s\n' "$err" | grep -q 'no uform-bench there' || fail "the refusal does not say what is missing: $err"
echo "check_ab: a row per build, ratios paired within rounds and within cycles of turns, a missing build refused"

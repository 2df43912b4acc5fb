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
# The folder given twice is two builds, each timed in its own processes: the second one's ratios
# to the first are of two different processes' times, never exactly 1 in every round.
printf '%s\n' "$out" | sed -n 4p | grep -q ' 1\.000 (1\.00-1\.00)$' &&
  fail "the second build's times are the first's: rounds were not kept per build"
check_run "--turns" '^3 cycles of turns, --item bump, 1 process(es) each; uform:parked: [0-9]* ns$' --turns --cycles 3
printf '%s\n' "$out" | sed -n 4p | grep -q ' 1\.000 (1\.00-1\.00)$' &&
  fail "with --turns the second build's times are the first's: cycles were not kept per build"
# --processes: every build and the peer in that many processes (a mean per cycle); 1 to 8.
check_run "--turns --processes 2" '^2 cycles of turns, --item bump, 2 process(es) each; uform:parked: [0-9]* ns$' \
  --turns --cycles 2 --processes 2
for bad in 0 9; do
  if err=$(python3 "$src/scripts/bench-ab" --turns --processes $bad "$dir" "$dir" 2>&1); then
    fail "--processes $bad was accepted"
  fi
  printf '%s\n' "$err" | grep -q -- '--processes must be 1 to 8' || fail "--processes $bad: no reason given: $err"
done
if err=$(python3 "$src/scripts/bench-ab" --processes 2 "$dir" "$dir" 2>&1); then
  fail "--processes without --turns was accepted"
fi
printf '%s\n' "$err" | grep -q -- "--processes is --turns' option" || fail "--processes without --turns: no reason given: $err"
# A child that stops answering, or dies, ends a --turns run with its name, never a hang.
stub=$(mktemp -d)
trap 'rm -rf "$stub"' EXIT
mkdir "$stub/hangs" "$stub/dies"
printf '#!/bin/sh\necho "UFORM_BENCH_RESULT ready"\nexec sleep 30\n' > "$stub/hangs/uform-bench"
printf '#!/bin/sh\necho "UFORM_BENCH_RESULT ready"\nexit 3\n' > "$stub/dies/uform-bench"
chmod +x "$stub/hangs/uform-bench" "$stub/dies/uform-bench"
start=$(date +%s)
if err=$(python3 "$src/scripts/bench-ab" --turns --cycles 1 --timeout 1 "$stub/hangs" "$stub/hangs" 2>&1); then
  fail "a child that never answers was accepted"
fi
[ $(( $(date +%s) - start )) -lt 20 ] || fail "a child that never answers held the run for 20 s or more"
printf '%s\n' "$err" | grep -q 'hangs/uform-bench (turns:uform:spinning:2) gave no answer in 1.0 s' ||
  fail "the hung child is not named: $err"
if err=$(python3 "$src/scripts/bench-ab" --turns --cycles 1 "$stub/dies" "$stub/dies" 2>&1); then
  fail "a child that died was accepted"
fi
printf '%s\n' "$err" | grep -Eq 'dies/uform-bench \(turns:uform:spinning:2\) (is gone|ended without an answer) \(exit status 3\)' ||
  fail "the dead child is not named with its status: $err"
printf '%s\n' "$err" | grep -q Traceback && fail "a dead child gave a traceback: $err"
if err=$(python3 "$src/scripts/bench-ab" --rounds 1 "$dir" "$dir/no-such-folder" 2>&1); then
  fail "a folder without uform-bench was accepted"
fi
printf '%s\n' "$err" | grep -q 'no uform-bench there' || fail "the refusal does not say what is missing: $err"
echo "check_ab: a row per build, ratios paired within rounds and within cycles of turns, a hung or dead child named, a missing build refused"

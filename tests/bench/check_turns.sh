#!/bin/sh
# usage: check_turns.sh UFORM-BENCH
# `uform bench --turns` as documented: every pool alive in its own process, taking turns; a row
# per pool with its median batch, its ratio to uform SPINNING (median, middle half, the share of
# cycles at most 0.9) and to both floors; the cycle count in the settings; options refused where
# they do not belong; --processes. A tiny run (uform's two moods, 6 cycles); the figures themselves are not judged.
set -eu
bench=$1
fail() { echo "check_turns: $*" >&2; exit 1; }
out=$($bench --turns --cycles 6 --peers uform --warmup 0.01 2>/dev/null) || fail "the run failed"
echo "$out"
printf '%s\n' "$out" | grep -q '^## uform bench --turns' || fail "no --turns heading"
printf '%s\n' "$out" | grep -q 'settings: 6 cycles, 2 threads' || fail "the settings line does not say 6 cycles"
printf '%s\n' "$out" | grep -Eq '^\| uform spinning +\| +[0-9.]+ [num]?s +\| +- +\| +- +\| +- +\| +[0-9]+\.[0-9]+ \| +[0-9]+\.[0-9]+ \|$' ||
  fail "the uform SPINNING row is not the reference with its ratios to both floors"
printf '%s\n' "$out" | grep -Eq '^\| uform parked +\| +[0-9.]+ [num]?s +\| +[0-9]+\.[0-9]+ \| +[0-9.]+-[0-9.]+ \| +[0-9]+% of 6 \|' ||
  fail "the uform PARKED row has no ratio over 6 cycles"
printf '%s\n' "$out" | grep -Eq '^\| floor \(two pinned threads\) +\| +[0-9.]+ [num]?s +\|' || fail "no floor row"
printf '%s\n' "$out" | grep -Eq "^\| floor, with the call's context +\| +[0-9.]+ [num]?s +\|.*\| +[0-9]+\.[0-9]+ \| +- +\|$" ||
  fail "no row for the floor with the call's context, with its ratio to the plain floor"
# After the table, the cycles split by the machine's latency mode, or a line saying it saw one.
printf '%s\n' "$out" | grep -Eq '^By latency mode: (one mode all run|too few floor batches|fast, the [0-9]+ cycles whose floor batch was under [0-9]+ ns)' ||
  fail "no split by latency mode after the table"
two=$($bench --turns --cycles 2 --peers uform --warmup 0.01 --item bump-two 2>/dev/null) ||
  fail "the run with --item bump-two failed"
printf '%s\n' "$two" | grep -q -- '--item bump-two' || fail "the settings do not say --item bump-two"
# --processes 2: every pool in two processes, still a row per pool, its ratios over every cycle.
pair=$($bench --turns --cycles 4 --processes 2 --peers uform --warmup 0.01 2>/dev/null) || fail "the run with --processes 2 failed"
printf '%s\n' "$pair" | grep -q 'every pool alive in 2 processes of its own (its batch: their mean)' ||
  fail "the settings do not say 2 processes"
[ "$(printf '%s\n' "$pair" | grep -c '^| uform parked ')" -eq 1 ] || fail "--processes 2 did not give one row per pool"
printf '%s\n' "$pair" | grep -Eq '^\| uform parked +\| +[0-9.]+ [num]?s +\| +[0-9]+\.[0-9]+ \| +[0-9.]+-[0-9.]+ \| +[0-9]+% of 4 \|' ||
  fail "with --processes 2 the uform PARKED row has no ratio over 4 cycles"
if $bench --turns --processes 9 >/dev/null 2>&1; then fail "--processes 9 was accepted"; fi
if $bench --pairs --processes 2 >/dev/null 2>&1; then fail "--processes without --turns was accepted"; fi
if $bench --turns --cycles 0 >/dev/null 2>&1; then fail "--cycles 0 was accepted"; fi
if $bench --pairs --cycles 5 >/dev/null 2>&1; then fail "--cycles without --turns was accepted"; fi
# A pool that cannot answer a turn is reported and fails the run, but never hangs it.
if UFORM_BENCH_CHILD=turns:nope:-:2 $bench --turns >/dev/null 2>&1; then fail "a child for no pool succeeded"; fi
# A pool whose process dies mid-run: named on stderr, left out of later cycles, the table still
# printed with a note, and the run's status 1.
set +e
died=$(UFORM_BENCH_TURNS_DIE_AT=3 $bench --turns --cycles 5 --peers uform --warmup 0.01 2>"${TMPDIR:-/tmp}/turns.$$")
status=$?
set -e
err=$(cat "${TMPDIR:-/tmp}/turns.$$"); rm -f "${TMPDIR:-/tmp}/turns.$$"
[ "$status" -eq 1 ] || fail "a run whose pools died exited $status, not 1"
for pool in "uform spinning" "uform parked" "floor (two pinned threads)" "floor, with the call's context"; do
  printf '%s\n' "$err" | grep -qF "$pool, cycle 3: FAILED" || fail "the dead pool $pool is not named: $err"
  printf '%s\n' "$err" | grep -qF "$pool, cycle 4" && fail "the dead pool $pool was asked for another turn: $err"
done
printf '%s\n' "$died" | grep -q 'FAILED a correctness check, crashed or hung' || fail "no note under the table"
printf '%s\n' "$died" | grep -Eq '^\| uform spinning +\| +[0-9.]+ [num]?s +\|' || fail "no table after a pool died"
# With two processes a pool, each dead process is named by its number.
set +e
UFORM_BENCH_TURNS_DIE_AT=2 $bench --turns --cycles 3 --processes 2 --peers uform --warmup 0.01 >/dev/null 2>"${TMPDIR:-/tmp}/turns.$$"
status=$?
set -e
err=$(cat "${TMPDIR:-/tmp}/turns.$$"); rm -f "${TMPDIR:-/tmp}/turns.$$"
[ "$status" -eq 1 ] || fail "a --processes 2 run whose pools died exited $status, not 1"
for pool in "uform spinning #1" "uform spinning #2" "uform parked #2"; do
  printf '%s\n' "$err" | grep -qF "$pool, cycle 2: FAILED" || fail "the dead process $pool is not named: $err"
  printf '%s\n' "$err" | grep -qF "$pool, cycle 3" && fail "the dead process $pool was asked for another turn: $err"
done
echo "check_turns: a row per pool and the floors, ratios within cycles, --item bump-two, bad options refused"

#!/bin/sh
# usage: check_pairs.sh UFORM-BENCH
# `uform bench --pairs` as documented: a row per pool and two for the floors (plain, and with the
# call's context), the per-round ratio to uform SPINNING with its range and the count of paired
# rounds, the ratios to both floors and the
# share of items the calling thread ran (uform forks: at 2 threads it runs about half, never all).
# A tiny run (uform's two moods, 2 rounds of milliseconds); the figures themselves are not judged.
set -eu
bench=$1
fail() { echo "check_pairs: $*" >&2; exit 1; }
out=$($bench --quick --pairs --rounds 2 --peers uform --duration 0.02 --warmup 0.01 2>/dev/null) ||
  fail "the run failed"
echo "$out"
printf '%s\n' "$out" | grep -q '^## uform bench --pairs' || fail "no --pairs heading"
printf '%s\n' "$out" | grep -q 'settings: 2 rounds, 2 threads' || fail "the settings line does not say 2 rounds"
printf '%s\n' "$out" | grep -Eq '^\| uform spinning +\| +[0-9.]+ [num]?s +\| +- +\| +- +\|.*\| +[0-9]+\.[0-9]+ \| +[0-9]+\.[0-9]+ \| +[0-9]+% \|$' ||
  fail "the uform SPINNING row is not the reference with its ratios to both floors and its caller share"
printf '%s\n' "$out" | grep -Eq '^\| uform parked +\| +[0-9.]+ [num]?s +\| +[0-9]+\.[0-9]+ \| +[0-9.]+-[0-9.]+ \(2\) \|' ||
  fail "the uform PARKED row has no ratio over 2 paired rounds"
printf '%s\n' "$out" | grep -Eq '^\| floor \(two pinned threads\) +\| +[0-9.]+ [num]?s +\|' ||
  fail "no floor row"
printf '%s\n' "$out" | grep -Eq "^\| floor, with the call's context +\| +[0-9.]+ [num]?s +\|.*\| +[0-9]+\.[0-9]+ \| +- +\| +50% \|$" ||
  fail "no row for the floor with the call's context, with its ratio to the plain floor"
share=$(printf '%s\n' "$out" | awk -F'|' '/^\| uform spinning/ { gsub(/[ %]/, "", $10); print $10 }')
[ "$share" -lt 100 ] || fail "uform's calling thread ran every item ($share%): the call did not fork"
two=$($bench --quick --pairs --rounds 1 --peers uform --duration 0.02 --warmup 0.01 --item bump-two 2>/dev/null) ||
  fail "the run with --item bump-two failed"
printf '%s\n' "$two" | grep -q -- '--item bump-two$' || fail "the settings do not say --item bump-two"
printf '%s\n' "$two" | grep -Eq '^\| uform spinning +\| +[0-9.]+ [num]?s +\|' || fail "no uform row with --item bump-two"
if $bench --pairs --item nope >/dev/null 2>&1; then fail "--item nope was accepted"; fi
if $bench --table --item bump-two >/dev/null 2>&1; then fail "--item without --pairs was accepted"; fi
echo "check_pairs: a row per pool and the floors, ratios paired within rounds, --item bump-two"

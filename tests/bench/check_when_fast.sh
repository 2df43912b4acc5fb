#!/bin/sh
# usage: check_when_fast.sh PROJECT-SOURCE-DIR
# scripts/bench-when-fast as documented, with stand-in floor programs (shell scripts printing a
# fixed round trip): under the threshold it runs the command K times and exits 0; over it, it
# gives up when its minutes run out with status 1 and no run; a floor program that prints no
# round trip, and a failing command, end it with status 2.
set -eu
src=$1
tool="python3 $src/scripts/bench-when-fast"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "check_when_fast: $*" >&2; exit 1; }
floor() { printf '#!/bin/sh\necho "CPUs 0,1: round trip %s ns, fork-join floor 1 ns"\n' "$1" > "$work/$2"; chmod +x "$work/$2"; }
floor 120 fast
floor 900 slow
printf '#!/bin/sh\necho "no such line"\n' > "$work/broken"; chmod +x "$work/broken"

out=$($tool --floor "$work/fast" --every 0 --runs 2 -- echo benchmark-ran) || fail "two fast runs did not exit 0"
echo "$out"
[ "$(printf '%s\n' "$out" | grep -c '^benchmark-ran$')" -eq 2 ] || fail "the command did not run twice"
printf '%s\n' "$out" | grep -q '^=== run 1 of 2 at [0-9:]* UTC, round trip 120 ns (under 350): echo benchmark-ran$' ||
  fail "no heading naming the run, the floor and the command"

status=0
out=$($tool --floor "$work/slow" --every 0.01 --minutes 0.002 -- echo benchmark-ran) || status=$?
echo "$out"
[ "$status" -eq 1 ] || fail "a slow machine gave status $status, not 1"
printf '%s\n' "$out" | grep -q benchmark-ran && fail "the command ran on a slow machine"
printf '%s\n' "$out" | grep -q '^floor readings (UTC, round trip ns): [0-9:]* 900' || fail "no list of the floors read"

status=0
$tool --floor "$work/broken" --every 0 -- echo benchmark-ran 2>"$work/err" || status=$?
[ "$status" -eq 2 ] || fail "a floor program without a round trip gave status $status, not 2"
grep -q 'printed no round trip' "$work/err" || fail "no message for a floor program without a round trip"

status=0
$tool --floor "$work/fast" --every 0 -- false 2>"$work/err" || status=$?
[ "$status" -eq 2 ] || fail "a failing command gave status $status, not 2"

status=0
$tool --floor "$work/fast" 2>"$work/err" || status=$?
[ "$status" -eq 2 ] || fail "no command gave status $status, not 2"
echo "check_when_fast: ok"

#!/usr/bin/env bash
# usage: check_stages.sh REPOSITORY
# scripts/stages.sh, which scripts/test-all runs every stage through: each stage says when it
# starts and ends, each runner's counts are read from its own summary lines (ctest, pytest,
# cargo, libFuzzer, clang-tidy), the closing summary lists them, and a failing stage ends the
# run with its own status after the summary so far. Fake runners print what the real ones do.
set -euo pipefail
repository=$1
fail() { echo "check_stages: $*" >&2; exit 1; }
out=$(bash -c '
  set -euo pipefail
  . "$1/scripts/stages.sh"
  fake_ctest() { printf "%s\n" "100% tests passed, 0 tests failed out of 12" "The following tests did not run:" \
    "	  4 - device.test_mesh_any_driver (Skipped)"; }
  fake_cross() { printf "%s\n" "95% tests passed, 1 tests failed out of 20" "90% tests passed, 2 tests failed out of 20"; }
  fake_pytest() { printf "%s\n" "....s" "172 passed, 1 skipped in 9.75s"; }
  fake_cargo() { printf "%s\n" "test result: ok. 10 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out" \
    "test result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out"; }
  fake_fuzz() { printf "%s\n" "stat::number_of_executed_units: 1000" "stat::number_of_executed_units: 25"; }
  fake_tidy() { echo "clang-tidy: 49 files of src/, 53 checks, no findings"; }
  stage "a build" - true
  stage "ctest" ctest fake_ctest
  stage "two ctest runs" ctest fake_cross
  stage "pytest" pytest fake_pytest
  stage "cargo" cargo fake_cargo
  stage "fuzz" fuzz fake_fuzz
  stage "tidy" tidy fake_tidy
  stage "a failure" - sh -c "echo broken; exit 7"
  echo "after the failure"
' _ "$repository" 2>&1) && fail "a failing stage did not fail the run"
status=$?
echo "$out"
[ "$status" -eq 7 ] || fail "the run's status is $status, not the failing stage's 7"
# A here-string, not `printf | grep -q`: grep -q stops at its first match, and under pipefail
# the printf it leaves writing into a closed pipe (SIGPIPE) failed the check now and then.
expect() { grep -Eq -- "$1" <<<"$out" || fail "no line matching: $1"; }
expect '^== \[[0-9:]{8}\] a build: started$'
expect '^== \[[0-9:]{8}\] a build: done in [0-9]+ s$'
expect '^== \[[0-9:]{8}\] ctest: done in [0-9]+ s \(11 passed, 0 failed, 1 skipped of 12\)$'
expect '^   two ctest runs +[0-9]+ s  37 passed, 3 failed, 0 skipped of 40$'
expect '^   pytest +[0-9]+ s  172 passed, 1 skipped$'
expect '^   cargo +[0-9]+ s  12 passed, 0 failed, 1 ignored$'
expect '^   fuzz +[0-9]+ s  2 targets, 1025 inputs run$'
expect '^   tidy +[0-9]+ s  49 files of src/, 53 checks, no findings$'
expect '^== \[[0-9:]{8}\] a failure: FAILED \(exit 7\) after [0-9]+ s$'
expect '^   a failure +[0-9]+ s  FAILED \(exit 7\)$'
expect '^   total: [0-9]+ s$'
grep -q "after the failure" <<<"$out" && fail "the run went on after a failing stage"
echo "check_stages: stage lines, counts, summary and the failing stage's status as documented"

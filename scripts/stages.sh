# Sourced by scripts/test-all: run a command as one named stage, say when it starts and when it
# ends (with its duration), keep its output for a closing summary of every runner's counts.
#   stage NAME KIND COMMAND...   KIND picks how counts are read from the output: ctest, pytest,
#                                cargo, fuzz, tidy, or - (no counts: a build, a check)
#   stages_summary               the closing table: each counted stage, then the total time
# The command's output is shown as it runs. A failing stage prints the summary so far and exits
# with the command's status. Each COMMAND is one command or function: a function that runs
# several must chain them with && (set -e does not reach into a pipeline's left side).

stages_log_dir=$(mktemp -d)
trap 'rm -rf "$stages_log_dir"' EXIT
stages_start=$SECONDS
stages_lines=()

stages_clock() { date -u +%H:%M:%S; }

# Counts of one runner's output, as one phrase: "133 passed, 0 failed, 2 skipped of 135".
stages_counts() {
  local kind=$1 log=$2
  case $kind in
    ctest)
      # "100% tests passed, 0 tests failed out of 135" per ctest run (several in one stage add up);
      # skipped tests are listed below "The following tests did not run:" as "(Skipped)".
      awk '/tests passed, .* tests failed out of/ { failed += $4; total += $NF }
           /\(Skipped\)$/ { skipped++ }
           END { if (total) printf "%d passed, %d failed, %d skipped of %d\n", total - failed - skipped, failed, skipped, total }' "$log"
      ;;
    pytest)
      # pytest -q's last line: "152 passed, 3 skipped in 41.20s" (failed, errors, warnings too).
      grep -E '^[0-9]+ (passed|failed)|^=* *[0-9]+ (passed|failed)' "$log" | tail -n 1 | sed -E 's/^=+ *//; s/ in [0-9.]+s.*$//; s/ *=+$//'
      ;;
    cargo)
      awk '/^test result: / { for (i = 1; i < NF; i++) { w = $(i + 1); sub(/[;,]$/, "", w)
             if (w == "passed") p += $i; else if (w == "failed") f += $i; else if (w == "ignored") g += $i } }
           END { if (p + f + g) printf "%d passed, %d failed, %d ignored\n", p, f, g }' "$log"
      ;;
    tidy)
      # scripts/tidy's one line: "clang-tidy: 49 files of src/, 53 checks, no findings".
      sed -n 's/^clang-tidy: //p' "$log" | tail -n 1
      ;;
    fuzz)
      awk '/stat::number_of_executed_units/ { n++; units += $NF }
           END { if (n) printf "%d targets, %d inputs run\n", n, units }' "$log"
      ;;
  esac
}

stage() {
  local name=$1 kind=$2
  shift 2
  local log="$stages_log_dir/${#stages_lines[@]}.log" start=$SECONDS status=0
  echo "== [$(stages_clock)] $name: started"
  "$@" 2>&1 | tee "$log" || status=$?
  local took=$((SECONDS - start))
  local counts=""
  [ "$kind" = "-" ] || counts=$(stages_counts "$kind" "$log")
  if [ "$status" -ne 0 ]; then
    echo "== [$(stages_clock)] $name: FAILED (exit $status) after ${took} s"
    stages_lines+=("$(printf '%-28s %6s s  FAILED (exit %d)%s' "$name" "$took" "$status" "${counts:+: $counts}")")
    stages_summary
    exit "$status"
  fi
  echo "== [$(stages_clock)] $name: done in ${took} s${counts:+ ($counts)}"
  stages_lines+=("$(printf '%-28s %6s s  %s' "$name" "$took" "${counts:-ok}")")
}

stages_summary() {
  echo
  echo "== summary"
  local line
  for line in "${stages_lines[@]}"; do echo "   $line"; done
  echo "   total: $((SECONDS - stages_start)) s"
}

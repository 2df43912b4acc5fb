#!/bin/sh
# The uform command's usage: every command answers --help (exit 0, a usage line, its options
# and exit codes), --version prints the version and the capabilities compiled, bad numbers and
# unknown options are refused with exit 2 and a message naming the option, and `uform mesh`
# checks every option before it opens a GPU (a CUDA driver whose cuInit fails shows it: a
# touched driver would answer exit 1 with the driver's error).
# usage: check_cli.sh UFORM CUDA_DOUBLE HAS_BENCH
set -u
uform=$1
double=$2
has_bench=$3
failures=0
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# expect CODE ARGS...: runs uform ARGS, checks the exit code; stdout in $out, stderr in $err.
expect() {
    code=$1
    shift
    "$uform" "$@" >"$out" 2>"$err"
    got=$?
    [ "$got" -eq "$code" ] || fail "uform $* exited $got, expected $code; stderr: $(cat "$err")"
}

# Help: stdout, exit 0, a usage line, and the exit codes said.
for args in "--help" "-h" "help" "help --help" "info --help" "info -h" "mesh --help" "mesh -h" \
    "mesh --job x --help" "version --help"; do
    # shellcheck disable=SC2086
    expect 0 $args
    grep -q "^usage: uform" "$out" || fail "uform $args printed no usage line"
    grep -q "^Exit status: 0" "$out" || fail "uform $args does not say its exit codes"
    [ -s "$err" ] && fail "uform $args wrote to stderr: $(cat "$err")"
done
expect 0 mesh --help
for option in --directory --job --index --count --multimem --timeout --json "default 0: 120 s"; do
    grep -q -- "$option" "$out" || fail "uform mesh --help does not name $option"
done
if [ "$has_bench" = 1 ]; then
    expect 0 bench --help
    grep -q "^usage: uform bench" "$out" || fail "uform bench --help printed no usage line"
    grep -q "^Exit status: 0" "$out" || fail "uform bench --help does not say its exit codes"
    for option in --rounds --passes --staging-reps --reduce-mib; do
        for value in abc -1 +1 " 1" 1x 1.5 "" 0x10 0 99999999999999999999; do
            refused "$option" bench --quick "$option" "$value"
        done
    done
    for option in --duration --timeout --idle --warmup --wake-idle-ms; do
        for value in abc -1 " 1" 1s "" inf nan 1e99 0x10 -0.5; do
            refused "$option" bench --quick "$option" "$value"
        done
    done
    refused "--duration" bench --quick --duration 0
fi

# Version: the library's and the headers' version, and the capabilities compiled.
for args in --version version; do
    expect 0 $args
    grep -Eq "^uform [0-9]+\.[0-9]+\.[0-9]+" "$out" || fail "uform $args: no version line: $(cat "$out")"
    grep -Eq "^capabilities compiled: serial(,|$)" "$out" || fail "uform $args: no capabilities: $(cat "$out")"
done

# Bad usage: exit 2, the reason on stderr, nothing on stdout.
refused() {
    needle=$1
    shift
    expect 2 "$@"
    grep -q -- "$needle" "$err" || fail "uform $*: stderr does not name '$needle': $(cat "$err")"
    [ -s "$out" ] && fail "uform $* wrote to stdout: $(cat "$out")"
}
refused "unknown command" frobnicate
refused "usage:" # no command at all
refused "unknown option" info --bogus
refused "unknown option" info --json extra
refused "unknown option" mesh --bogus
refused "unknown option" version --bogus
refused "unknown option" help --bogus
refused "needs a value" mesh --directory /tmp --job
refused "required" mesh --job smoke
refused "required" mesh --directory /tmp
refused "plain name" mesh --directory /tmp --job a/b
refused "plain name" mesh --directory /tmp --job ..
refused "not an existing directory" mesh --directory /nonexistent/uform --job smoke
refused "outside a run" mesh --directory /tmp --job smoke --index 2 --count 2
for option in --index --count --multimem; do
    for value in abc -1 +1 " 1" 1x 1.5 "" 0x10 99999999999999999999 2000000; do
        refused "$option" mesh --directory /tmp --job smoke "$option" "$value"
    done
done
refused "--count" mesh --directory /tmp --job smoke --count 0
for value in abc -1 +1 " 1" 1s "" inf nan 1e99 0x10 -0.5; do
    refused "--timeout" mesh --directory /tmp --job smoke --timeout "$value"
done

# Options first, GPUs after: a driver whose cuInit fails is never reached by bad usage ...
export UFORM_CUDA_LIBRARY="$double"
export UFORM_CUDA_DOUBLE_CONFIG="device cc=9.0 memory=1G;fault init=CUDA_ERROR_UNKNOWN"
refused "--timeout" mesh --directory /tmp --job smoke --timeout abc
refused "required" mesh --directory /tmp
grep -qi "cuda\|gpu" "$err" && fail "bad usage reached the driver: $(cat "$err")"
# ... and is reached by good usage, which then fails with the driver's error (exit 1).
expect 1 mesh --directory /tmp --job smoke --timeout 1.5 --index 0 --count 1 --multimem 0
grep -q "CUDA_ERROR_UNKNOWN" "$err" || fail "good usage did not reach the driver: $(cat "$err")"

[ "$failures" -eq 0 ] || { echo "$failures failures"; exit 1; }
echo "cli ok"

#!/usr/bin/env bash
# Run `make SUITE` for each suite named, timing each one. Every suite runs even when an earlier one
# fails; the exit status is non-zero if any failed, and a summary table closes the output.
#
#   run_suites.sh SUITE...                              one after another, output as it comes
#   run_suites.sh [--setup TARGET] --lanes 'A B' 'C'... lanes side by side, each lane's suites one after
#                                                       another; TARGET (shared state: venvs, caches)
#                                                       first, and nothing else when it fails
#
# Side by side, a suite's output goes to a file and is printed whole, in one piece, when the suite ends
# (a line says when each one starts), so the log reads suite by suite. Suites in different lanes must not
# share state: each one that needs the collection layout stages its own copy (hacking/in_staged_copy.sh).
set -uo pipefail

setup=
lanes=()
if [ "${1:-}" = "--setup" ]; then setup=${2:?--setup needs a make target}; shift 2; fi
if [ "${1:-}" = "--lanes" ]; then
    shift
    lanes=("$@")
else
    for suite in "$@"; do lanes+=("$suite"); done
    serial=1
fi
serial=${serial:-0}

work=$(mktemp -d "${TMPDIR:-/tmp}/modelarts-suites-XXXXXX")
trap 'rm -rf "$work"' EXIT
began=$(date +%s)

# run_one SUITE LANE: run `make SUITE`, record "suite status seconds" in $work/SUITE.row.
run_one() {
    local suite=$1 lane=$2 start status seconds
    start=$(date +%s)
    if [ "$serial" = 1 ] || [ "$lane" = setup ]; then
        echo "=== make $suite"
        if make --no-print-directory "$suite"; then status=passed; else status=FAILED; fi
    else
        echo "=== make $suite: started (lane $lane)"
        if make --no-print-directory "$suite" >"$work/$suite.log" 2>&1; then status=passed; else status=FAILED; fi
    fi
    seconds=$(($(date +%s) - start))
    printf '%-18s %-7s %5ss\n' "$suite" "$status" "$seconds" >"$work/$suite.row"
    if [ "$serial" != 1 ] && [ "$lane" != setup ]; then
        {
            flock 9
            echo "=== make $suite: $status in ${seconds}s (lane $lane); its output:"
            cat "$work/$suite.log"
            echo "=== end of make $suite"
        } 9>"$work/print.lock"
    fi
}

order=()
if [ -n "$setup" ]; then
    order+=("$setup")
    run_one "$setup" setup
fi
for lane in "${lanes[@]}"; do
    for suite in $lane; do order+=("$suite"); done
done

if [ -n "$setup" ] && ! grep -q passed "$work/$setup.row"; then
    echo "=== $setup failed: no suite was run" >&2
else
    if [ "$serial" = 1 ]; then
        for suite in "${lanes[@]}"; do run_one "$suite" 1; done
    else
        number=0
        for lane in "${lanes[@]}"; do
            number=$((number + 1))
            (for suite in $lane; do run_one "$suite" "$number"; done) &
        done
        wait
    fi
fi

echo
echo "=== summary"
passed=0
failed=0
for suite in "${order[@]}"; do
    if [ -f "$work/$suite.row" ]; then
        cat "$work/$suite.row"
        if grep -q passed "$work/$suite.row"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
    else
        printf '%-18s %-7s\n' "$suite" "not run"
        failed=$((failed + 1))
    fi
done
echo "suites: $passed passed, $failed failed or not run; $(($(date +%s) - began))s in all"
exit $((failed > 0))

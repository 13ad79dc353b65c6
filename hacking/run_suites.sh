#!/usr/bin/env bash
# Run `make SUITE` for each suite named, timing each one. Every suite runs even when an earlier one
# fails; the exit status is non-zero if any failed, and a summary table closes the output, followed by what failed
# in each failed suite (its FAILED/ERROR/fatal lines) when the suites ran together.
#
#   run_suites.sh SUITE...                            one after another, output as it comes
#   run_suites.sh [--setup TARGET] --jobs N SUITE...  N at a time, each next suite starting as soon as one
#                                                     ends (name the longest first); TARGET (what they
#                                                     share: venvs, caches) runs first, and nothing else
#                                                     when it fails
#
# N at a time, a suite's output goes to a file and is printed whole, in one piece, when the suite ends (a
# line says when each one starts), so the log reads suite by suite. Suites running together must not share
# state: each one that needs the collection layout stages its own copy (hacking/in_staged_copy.sh).
set -uo pipefail

setup=
jobs=1
if [ "${1:-}" = "--setup" ]; then setup=${2:?--setup needs a make target}; shift 2; fi
if [ "${1:-}" = "--jobs" ]; then jobs=${2:?--jobs needs a number}; shift 2; fi
suites=("$@")

work=$(mktemp -d "${TMPDIR:-/tmp}/modelarts-suites-XXXXXX")
trap 'rm -rf "$work"' EXIT
began=$(date +%s)

# run_one SUITE [together]: run `make SUITE`, record "suite status seconds" in $work/SUITE.row.
run_one() {
    local suite=$1 together=${2:-} start status seconds
    start=$(date +%s)
    if [ -z "$together" ]; then
        echo "=== make $suite"
        if make --no-print-directory "$suite"; then status=passed; else status=FAILED; fi
    else
        echo "=== make $suite: started"
        if make --no-print-directory "$suite" >"$work/$suite.log" 2>&1; then status=passed; else status=FAILED; fi
    fi
    seconds=$(($(date +%s) - start))
    printf '%-18s %-7s %5ss\n' "$suite" "$status" "$seconds" >"$work/$suite.row"
    if [ -n "$together" ]; then
        {
            flock 9
            echo "=== make $suite: $status in ${seconds}s; its output:"
            cat "$work/$suite.log"
            echo "=== end of make $suite"
        } 9>"$work/print.lock"
    fi
}

order=()
if [ -n "$setup" ]; then
    order+=("$setup")
    run_one "$setup"
fi
order+=("${suites[@]}")

if [ -n "$setup" ] && ! grep -q passed "$work/$setup.row"; then
    echo "=== $setup failed: no suite was run" >&2
elif [ "$jobs" -le 1 ]; then
    for suite in "${suites[@]}"; do run_one "$suite"; done
else
    running=0
    for suite in "${suites[@]}"; do
        if [ "$running" -ge "$jobs" ]; then
            wait -n
            running=$((running - 1))
        fi
        run_one "$suite" together &
        running=$((running + 1))
    done
    wait
fi

echo
echo "=== summary"
passed=0
failed=0
failed_suites=()
for suite in "${order[@]}"; do
    if [ -f "$work/$suite.row" ]; then
        cat "$work/$suite.row"
        if grep -q passed "$work/$suite.row"; then
            passed=$((passed + 1))
        else
            failed=$((failed + 1))
            failed_suites+=("$suite")
        fi
    else
        printf '%-18s %-7s\n' "$suite" "not run"
        failed=$((failed + 1))
    fi
done
# What failed, after the table: a CI that keeps only the end of the output still names the failing tests.
# pytest's summary lines (FAILED/ERROR), ansible's fatal lines and make's errors, from each failed suite's log.
# (A suite that did not run has no log; one run alone printed its output as it came.)
for suite in "${failed_suites[@]}"; do
    if [ -f "$work/$suite.log" ]; then
        echo "=== what failed in make $suite:"
        grep -a -E '^(FAILED|ERROR) |fatal: \[|^make(\[[0-9]+\])?: \*\*\*|^ERROR: ' "$work/$suite.log" | cut -c1-400 | tail -n 25
    fi
done
echo "suites: $passed passed, $failed failed or not run; $(($(date +%s) - began))s in all"
exit $((failed > 0))

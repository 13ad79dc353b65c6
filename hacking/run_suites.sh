#!/usr/bin/env bash
# Run `make SUITE` for each suite named, timing each one. Every suite runs even
# when an earlier one fails; the exit status is non-zero if any failed, and a
# summary table closes the output.
set -uo pipefail
declare -a rows
failed=0
for suite in "$@"; do
    echo "=== make $suite"
    start=$(date +%s)
    if make --no-print-directory "$suite"; then status=passed; else status=FAILED; failed=$((failed + 1)); fi
    rows+=("$(printf '%-16s %-7s %5ss' "$suite" "$status" "$(( $(date +%s) - start ))")")
done
echo
echo "=== summary"
printf '%s\n' "${rows[@]}"
passed=$(( $# - failed ))
echo "suites: $passed passed, $failed failed"
exit $(( failed > 0 ))

#!/usr/bin/env bash
# Prints the test counts from a `swift test` log (Swift Testing and XCTest lines), then checks
# that each Swift Testing run in it ran at least as many tests as given, in order:
#   scripts/test-summary.sh LOG [MIN_FIRST_RUN [MIN_SECOND_RUN …]]
# A filter or skip that matches nothing ("No matching test cases were run") still exits 0, so
# a run that silently ran nothing, or lost most of its suites, must fail here instead.
log=$1
shift
grep -E "^(✔|✘|􁁛|􀢄|━)? ?Test run with|Executed [0-9]+ tests" "$log" | tail -6
mapfile -t counts < <(grep -E "Test run with [0-9]+ tests?" "$log" | sed -E 's/.*Test run with ([0-9]+) tests?.*/\1/')
run=0
for minimum in "$@"; do
    ran=${counts[$run]:-0}
    if ((ran < minimum)); then
        echo "test-summary: run $((run + 1)) of $log ran $ran tests, fewer than the $minimum expected" >&2
        echo "test-summary: (lower the floor in the Makefile only if tests were removed on purpose)" >&2
        exit 1
    fi
    run=$((run + 1))
done

#!/usr/bin/env bash
# Prints the test counts from a `swift test` log (Swift Testing and XCTest lines).
log=$1
grep -E "^(✔|✘|􁁛|􀢄)? ?Test run with|Executed [0-9]+ tests" "$log" | tail -6

#!/usr/bin/env bash
# Fails when a build log shows a compiler warning: the project builds with zero warnings.
set -euo pipefail
log=$1
if grep -E "(warning|error): " "$log" | grep -v "^warning: 'main': Source files for target" | sort -u | grep -q .; then
    echo "check-warnings: the build printed warnings or errors:" >&2
    grep -E "(warning|error): " "$log" | sort -u >&2
    exit 1
fi
echo "check-warnings: 0 warnings"

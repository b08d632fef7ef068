#!/usr/bin/env bash
# Builds the fuzz seed corpus from Protocol/vectors: each vector twice, prefixed with an even
# byte (decoder target) and an odd byte (RelayCore target).
set -euo pipefail
out=$1
mkdir -p "$out"
i=0
for f in Protocol/vectors/valid/*/*.json Protocol/vectors/invalid/*.json Protocol/vectors/invalid/*.bin; do
    case "$f" in *.expect.json) continue ;; esac
    [ "$(stat -c %s "$f")" -le 8000 ] || continue
    { printf '\x00'; cat "$f"; } > "$out/seed-$i-d"
    { printf '\x01\x05'; cat "$f"; } > "$out/seed-$i-c"
    i=$((i + 1))
done
echo "fuzz corpus: $((i * 2)) seeds in $out"
# Inputs that once crashed stay in the corpus.
cp Fuzz/regressions/* "$out/" 2>/dev/null || true

#!/bin/bash
# Opt-in (slow): all 22 TPC-H queries at SF 0.1 and SF 1 through
# `rackdb tpch run --check`, with join_algorithm auto, hash, radix and
# sortmerge (a copy of the queries with `SET join_algorithm = ...;` in
# front) and 1 and 2 threads. SF 1 needs a few GB of memory and minutes.
set -u
fail=0
qs=$(mktemp -d)
trap 'rm -rf "$qs"' EXIT
for a in auto hash radix sortmerge; do
    mkdir "$qs/$a"
    for f in "$RACKDB_SHARED"/tpch/queries/q*.sql; do
        { echo "SET join_algorithm = '$a';"; cat "$f"; } > "$qs/$a/$(basename "$f")"
    done
done
for sf in ${RACKDB_SLOW_SF:-0.1 1}; do
    for a in auto hash radix sortmerge; do
        for th in 1 2; do
            if "$RACKDB" tpch run --sf "$sf" --check --threads "$th" --queries-dir "$qs/$a" \
                > "$qs/out.txt" 2>&1; then
                echo "ok: sf $sf, $a, $th threads"
            else
                echo "FAIL: sf $sf, $a, $th threads"
                grep -v ' ok$' "$qs/out.txt"
                fail=$((fail + 1))
            fi
        done
    done
done
echo "$fail failed"
[ "$fail" -eq 0 ]

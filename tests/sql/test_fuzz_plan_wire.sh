#!/usr/bin/env bash
# test_fuzz_plan_wire.sh — builds the plan decoder's libFuzzer target
# (tests/sql/fuzz_plan_wire.c) with clang-19 and ASan+UBSan and runs it for
# a bounded number of inputs, seeded with the encoding of a plan holding
# every operator and expression kind. Any crash, leak, sanitizer report or
# hang fails the test. Skips (exit 0) only when clang-19 is missing.
set -euo pipefail

CLANG=${CLANG:-clang-19}
if ! command -v "$CLANG" > /dev/null 2>&1; then
    echo "skipped: $CLANG not found"
    exit 0
fi
src=${RACKDB_SOURCE:?RACKDB_SOURCE not set}
build=${RACKDB_BUILD:?RACKDB_BUILD not set}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

sources=(sql/plan_wire.c sql/plan_print.c sql/plan.c sql/arena.c sql/func.c sql/ast.c sql/token.c
         storage/status.c storage/types.c)
flags=(-std=gnu11 -gline-tables-only -O1 -D_GNU_SOURCE -Wall -Wextra -Wno-unused-parameter
       -I"$src" -I"$src/tests/sql" -I"$build/generated")
"$CLANG" "${flags[@]}" -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    "${sources[@]/#/$src/}" "$src/tests/sql/fuzz_plan_wire.c" -lm -o "$tmp/fuzz_plan_wire"
"$CLANG" "${flags[@]}" -DFUZZ_SEED_MAIN "${sources[@]/#/$src/}" "$src/tests/sql/fuzz_plan_wire.c" \
    -lm -o "$tmp/seed"

corpus=$tmp/corpus
mkdir "$corpus"
"$tmp/seed" "$corpus/sample"

export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1"
log=$tmp/fuzz.log
if ! "$tmp/fuzz_plan_wire" -runs=20000 -max_len=4096 -seed=1 -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$build/fuzz_plan_wire_" "$corpus" > "$log" 2>&1; then
    tail -n 60 "$log" >&2
    echo "fuzz_plan_wire failed; the crashing input is saved as $build/fuzz_plan_wire_*" >&2
    exit 1
fi
grep -E '^(Done|stat::)' "$log" || true
echo "fuzz_plan_wire: 20000 runs, no crash, leak or hang"

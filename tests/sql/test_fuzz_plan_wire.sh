#!/usr/bin/env bash
# test_fuzz_plan_wire.sh — builds the plan decoder's libFuzzer target
# (tests/sql/fuzz_plan_wire.c) with clang-19 and ASan+UBSan and runs it for
# a bounded number of inputs, seeded with the encoding of a plan holding
# every operator and expression kind. Any crash, leak, sanitizer report or
# hang fails the test. Skips (exit 0) only when clang-19 is missing.
set -euo pipefail
. "${RACKDB_SOURCE:?RACKDB_SOURCE not set}/tests/fuzz_lib.sh"

sources=(sql/plan_wire.c sql/plan_print.c sql/plan.c sql/arena.c sql/func.c sql/ast.c sql/token.c
         storage/status.c storage/types.c)
flags=(-O1 -I"$src" -I"$src/tests/sql" -I"$build/generated")
fuzz_build fuzz_plan_wire "${flags[@]}" "${sources[@]/#/$src/}" "$src/tests/sql/fuzz_plan_wire.c" -lm
"$CLANG" "${FUZZ_CFLAGS[@]}" "${flags[@]}" -DFUZZ_SEED_MAIN "${sources[@]/#/$src/}" \
    "$src/tests/sql/fuzz_plan_wire.c" -lm -o "$tmp/seed"

corpus=$tmp/corpus
mkdir "$corpus"
"$tmp/seed" "$corpus/sample"

fuzz_run fuzz_plan_wire "20000 runs, no crash, leak or hang" -runs=20000 -max_len=4096 "$corpus"

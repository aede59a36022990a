#!/bin/bash
# `rackdb tpch run` end to end: TPC-H Q1 and Q6 at SF 0.01 and 0.1 checked
# against the built-in answers, the results written as answer-format CSV,
# the JSON report, and a failing check (a wrong answer directory) making
# the exit status non-zero, and --data loading dbgen files.
set -u
fail=0
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

check() { # name, condition already evaluated as $?
    if [ "$2" -ne 0 ]; then echo "FAIL: $1"; fail=$((fail + 1)); else echo "ok: $1"; fi
}

"$RACKDB" tpch run --sf 0.01 --queries 1,6 --check --threads 2 --reps 2 \
    --results "$out/res" --json "$out/run.json" > "$out/table.txt" 2> "$out/err.txt"
check "sf 0.01 q1,q6 --check exits 0" $?
grep -q '^q01 .* 4  ok$' "$out/table.txt"; check "q01 row in the table" $?
grep -q '^q06 .* 1  ok$' "$out/table.txt"; check "q06 row in the table" $?
diff <(cut -d'|' -f1,2,10 "$out/res/q01.csv") \
     <(cut -d'|' -f1,2,10 "$RACKDB_SHARED/tpch/answers/sf0.01/q01.csv") > /dev/null
check "q01.csv keys and counts equal the answer" $?
grep -q '"query": 6, "status": "ok"' "$out/run.json"; check "json has q06 ok" $?

# A query the engine cannot run yet fails only with --check.
"$RACKDB" tpch run --sf 0.01 --queries 3 > "$out/t3.txt" 2>&1
check "unsupported query without --check exits 0" $?
grep -q 'not supported' "$out/t3.txt"; check "reported as not supported" $?
"$RACKDB" tpch run --sf 0.01 --queries 3 --check > /dev/null 2>&1
[ $? -ne 0 ]; check "unsupported query with --check fails" $?

# Wrong answers are caught: run q06's text as q01 through --queries-dir.
mkdir "$out/qs"
cp "$RACKDB_SHARED/tpch/queries/q06.sql" "$out/qs/q01.sql"
"$RACKDB" tpch run --sf 0.01 --queries 1 --check --queries-dir "$out/qs" > "$out/bad.txt" 2>&1
[ $? -ne 0 ]; check "a wrong answer fails the check" $?
grep -q 'MISMATCH: row 1' "$out/bad.txt"; check "first differing row printed" $?

"$RACKDB" tpch run --sf 0.1 --queries 1,6 --check > "$out/sf01.txt" 2>&1
check "sf 0.1 q1,q6 --check exits 0" $?

# --data: dbgen's .tbl files loaded with COPY instead of generating.
mkdir "$out/data"
"$RACKDB" tpch gen --sf 0.01 --out "$out/data" --tables lineitem > /dev/null 2>&1
for t in nation region part supplier partsupp customer orders; do : > "$out/data/$t.tbl"; done
"$RACKDB" tpch run --sf 0.01 --data "$out/data" --queries 1,6 --check > "$out/data.txt" 2>&1
check "--data DIR loads .tbl files and checks" $?

echo "$fail failed"
[ "$fail" -eq 0 ]

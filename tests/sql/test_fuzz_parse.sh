#!/usr/bin/env bash
# test_fuzz_parse.sh — builds the SQL parser's libFuzzer target
# (tests/sql/fuzz_parse.c) with clang-19 and ASan+UBSan and runs it for a
# bounded number of inputs, seeded with the TPC-H queries and one statement
# of each kind. Any crash, leak, sanitizer report or hang fails the test.
# Only the parser's own sources are compiled (not the binder's), at -O0, which
# keeps the build to a few CPU seconds; the 20000 runs take a few more.
# Longer on demand, as test_fuzz_bind.sh: RACKDB_FUZZ_RUNS (-1: no limit),
# RACKDB_FUZZ_SECONDS, RACKDB_FUZZ_CORPUS (docs/testing.md).
# Skips (exit 0) only when clang-19 is missing.
set -euo pipefail

CLANG=${CLANG:-clang-19}
if ! command -v "$CLANG" > /dev/null 2>&1; then
    echo "skipped: $CLANG not found"
    exit 0
fi
src=${RACKDB_SOURCE:?RACKDB_SOURCE not set}
build=${RACKDB_BUILD:?RACKDB_BUILD not set}
shared=${RACKDB_SHARED:?RACKDB_SHARED not set}
runs=${RACKDB_FUZZ_RUNS:-20000}
seconds=${RACKDB_FUZZ_SECONDS:-0}
grammar=$build/generated/grammar.c
if [ ! -f "$grammar" ]; then
    echo "missing $grammar: build rackdb_sql first" >&2
    exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

parser_sources=(sql/arena.c sql/ast.c sql/ast_depth.c sql/ast_print.c sql/token.c sql/parse.c
                sql/error_format.c storage/status.c)
"$CLANG" -std=gnu11 -gline-tables-only -O0 -D_GNU_SOURCE -Wall -Wextra -Wno-unused-parameter \
    -Wno-unused-variable -Wno-unused-but-set-variable -Wno-sign-compare \
    -Wno-implicit-fallthrough -Wno-unused-function \
    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -I"$src" -I"$build/generated" \
    "${parser_sources[@]/#/$src/}" "$grammar" "$src/tests/sql/fuzz_parse.c" \
    -o "$tmp/fuzz_parse"

corpus=${RACKDB_FUZZ_CORPUS:-$tmp/corpus}
mkdir -p "$corpus"
cp "$shared"/tpch/queries/*.sql "$corpus/"
i=0
while IFS= read -r line; do
    printf '%s' "$line" > "$corpus/seed_$i.sql"
    i=$((i + 1))
done << 'SEEDS'
select distinct a, t.*, count(*) c from t as x (a, b) left join u using (a) where a between 1 and 2 group by 1 having sum(b) > 0 order by 1 desc nulls last limit 5 offset 1
with w (a) as (select 1) (select a from w union all select 2) intersect select 3 except select 4 fetch first 2 rows only
select case when a like 'x%' escape '!' then cast(a as decimal(15,2)) else a::double precision end, extract(year from date '1998-12-01' - interval '90' day (3)), substring(s from 1 for 2), $1 from t where a not in (select b from u) and exists (select 1) and x >= all (select 2) and y is not null
create table if not exists t (a int not null primary key, b varchar(10), c character varying(5), d char(3) null, primary key (a)); drop table if exists t
create view v (a) as values (1), (2); drop view v; create table t2 as select 1
insert into t (a, b) values (1, 'it''s'), (2, null); insert into t select * from u
copy t from '/tmp/x.tbl' with (delimiter '|', header false, format csv); copy t to 'x' delimiter ',' csv header; copy (select 1) to 'y'
call dbgen(sf = 0.1); explain analyze select 1; set threads to 4; show all; begin; commit; rollback
select "Quoted""Id", 'ünïcode' /* c /* nested */ */ -- end
SEEDS

# ASAN_OPTIONS from ctest may ask for leak detection already; keep it on.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1"
log=$tmp/fuzz.log
args=(-runs="$runs" -max_len=512 -seed=1 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
      -artifact_prefix="$build/fuzz_parse_")
if [ "$seconds" != 0 ]; then args+=(-max_total_time="$seconds"); fi
if ! "$tmp/fuzz_parse" "${args[@]}" "$corpus" > "$log" 2>&1; then
    tail -n 60 "$log" >&2
    echo "fuzz_parse failed; the crashing input is saved as $build/fuzz_parse_*" >&2
    exit 1
fi
grep -E '^(Done|stat::)' "$log" || true
echo "fuzz_parse: no crash, leak or hang (runs=$runs, seconds=$seconds)"

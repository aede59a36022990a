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
. "${RACKDB_SOURCE:?RACKDB_SOURCE not set}/tests/fuzz_lib.sh"
fuzz_limits
fuzz_grammar

parser_sources=(sql/arena.c sql/ast.c sql/ast_depth.c sql/ast_print.c sql/token.c sql/parse.c
                sql/error_format.c storage/status.c)
fuzz_build fuzz_parse -O0 -Wno-unused-variable -Wno-unused-but-set-variable -Wno-sign-compare \
    -Wno-implicit-fallthrough -Wno-unused-function -I"$src" -I"$build/generated" \
    "${parser_sources[@]/#/$src/}" "$grammar" "$src/tests/sql/fuzz_parse.c"

fuzz_sql_corpus seed << 'SEEDS'
select distinct a, t.*, count(*) c from t as x (a, b) left join u using (a) where a between 1 and 2 group by 1 having sum(b) > 0 order by 1 desc nulls last limit 5 offset 1
with w (a) as (select 1) (select a from w union all select 2) intersect select 3 except select 4 fetch first 2 rows only
select case when a like 'x%' escape '!' then cast(a as decimal(15,2)) else a::double precision end, extract(year from date '1998-12-01' - interval '90' day (3)), substring(s from 1 for 2), $1 from t where a not in (select b from u) and exists (select 1) and x >= all (select 2) and y is not null
create table if not exists t (a int not null primary key, b varchar(10), c character varying(5), d char(3) null, primary key (a)); drop table if exists t
create view v (a) as values (1), (2); drop view v; create table t2 as select 1
insert into t (a, b) values (1, 'it''s'), (2, null); insert into t select * from u
copy t from '/tmp/x.tbl' with (delimiter '|', header false, format csv); copy t to 'x' delimiter ',' csv header; copy (select 1) to 'y'
call dbgen(sf = 0.1); explain analyze select 1; set threads to 4; show all; begin; commit; rollback
select position('a' in (s)), trim(leading 'x' from s), trim(from s), trim(s), left(s, 1), right(s, 2), extract(isodow from d), greatest(a, 1), 'k' || a from t
select "Quoted""Id", 'ünïcode' /* c /* nested */ */ -- end
SEEDS

fuzz_run fuzz_parse "no crash, leak or hang (runs=$runs, seconds=$seconds)" \
    "${fuzz_limit_args[@]}" -max_len=512 "$corpus"

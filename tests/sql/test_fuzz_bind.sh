#!/usr/bin/env bash
# test_fuzz_bind.sh — builds the SQL front end's libFuzzer target
# (tests/sql/fuzz_bind.c: tokenizer + parser + binder against the TPC-H
# schema with SF 0.01 statistics) with clang-19 and ASan+UBSan and runs it
# for a bounded number of inputs, seeded with the TPC-H queries and
# statements that reach the binder's corners, with a dictionary made from the
# grammar's keywords, the function list and the TPC-H column names. Any
# crash, leak, sanitizer report, abort or hang (10 s for one input) fails.
#
# Only sql/ and the three storage files it needs are compiled, at -O0, which
# keeps the build to a few CPU seconds; the default 20000 runs take ~10 more.
# Longer on demand (docs/testing.md):
#   RACKDB_FUZZ_RUNS=-1 RACKDB_FUZZ_SECONDS=600 ctest -R sql/test_fuzz_bind
# runs for ten minutes; RACKDB_FUZZ_CORPUS=DIR keeps the grown corpus in DIR
# (reused by the next run). Skips (exit 0) only when clang-19 is missing.
set -euo pipefail
. "${RACKDB_SOURCE:?RACKDB_SOURCE not set}/tests/fuzz_lib.sh"
shared=${RACKDB_SHARED:?RACKDB_SHARED not set}
fuzz_limits
fuzz_grammar

sources=("$src"/sql/*.c "$src/storage/status.c" "$src/storage/types.c" "$src/storage/column.c")
fuzz_build fuzz_bind -O0 -Wno-unused-variable -Wno-unused-but-set-variable -Wno-sign-compare \
    -Wno-implicit-fallthrough -Wno-unused-function \
    -I"$src" -I"$src/tests" -I"$build/generated" \
    "${sources[@]}" "$grammar" "$src/tests/sql/fuzz_bind.c"

fuzz_sql_corpus bind_seed << 'SEEDS'
select n_name, count(*), sum(distinct s_acctbal) from supplier, nation where s_nationkey = n_nationkey group by n_name having count(*) > 1 order by 2 desc nulls first, n_name limit 3 offset 1
select * from nation n1 join nation n2 using (n_regionkey) left join region r on r.r_regionkey = n1.n_regionkey full join region r2 on true cross join (select 1 as one) as t (x)
select o_orderkey from orders o where exists (select * from lineitem where l_orderkey = o.o_orderkey and l_quantity > (select avg(l_quantity) from lineitem l2 where l2.l_partkey = lineitem.l_partkey)) and o_custkey not in (select c_custkey from customer where c_acctbal < 0) and o_totalprice > all (select o_totalprice from orders where o_custkey = 7) and o_orderdate >= any (select date '1995-01-01')
with a (k) as (select n_nationkey from nation), b as (select k, k * 2 as k2 from a) select k2, (select count(*) from b b2 where b2.k > b.k) from b union select r_regionkey, 1 from region intersect select 1, 2 except all select 3, 4 order by 1
select case when p_size between 1 and 5 then 'small' when p_size in (6, 7) then cast(p_size as varchar(3)) else p_type || '!' end, coalesce(nullif(p_brand, 'x'), 'y'), substring(p_name from 2 for 3), extract(month from date '1998-12-01' - interval '3' month), abs(-p_retailprice), round(p_retailprice, 1), upper(lower(p_mfgr)), length(p_comment) from part where p_name like '%green%' and p_type not ilike 'x\_%' escape '\' and p_comment is not null
select l_returnflag, sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)), avg(l_quantity) / 0, count(distinct l_suppkey), min(l_shipdate), max(l_commitdate - l_shipdate) from lineitem where l_shipdate <= date '1998-12-01' - interval '90' day group by rollup_not_a_thing, l_returnflag
create view v1 (a, b) as select n_name, n_regionkey from nation; create view v2 as select a, count(*) c from v1 group by a; select * from v2 join v1 on v2.a = v1.a; drop view v1; select * from v2
insert into nation select * from nation where n_nationkey = 1; insert into region (r_regionkey, r_name) values (9, 'x'), (10, null); create table t as select s_suppkey + 1 as k from supplier; copy (select 1 / 0, 2147483647 + 1, 9223372036854775807 * 2, cast('x' as int)) to 'f'
explain analyze select count(*) from customer, orders, lineitem where c_custkey = o_custkey and l_orderkey = o_orderkey and c_mktsegment = $1 and o_orderdate < $2::date
select cast(' 7 ' as integer), cast('abcdef' as char(3)), cast('héllo' as varchar(2)), cast('1e2' as decimal(5,0)), cast(2.5::double precision as integer), cast(2.5e0 as decimal(3,0)), cast(' 1999-02-29 ' as date), cast('9' as bigint), cast('1.5' as double precision), cast(1.005 as decimal(4,2)), cast(null as int), 1.5 * 2, 7 % 3, -(-2147483648), date '2000-01-31' + interval '1' month, date '2000-01-01' - date '1999-01-01', extract(day from date '2000-02-29'), 1 / 0.0, cast(true as int), cast('t' as boolean), abs(-3), round(2.345, 2)
select sum(sum(l_quantity)), l_orderkey, count(*, 1), substring(), nosuch(1), n_name from lineitem, nation where n_name = 1 and l_shipdate = 'x' group by l_partkey
select position('a' in p_name), trim(both 'x' from p_type), rtrim(p_brand), replace(p_comment, 'a', p_name), left(p_mfgr, -2), greatest(p_size, null, 3), least(p_retailprice, 1), floor(p_retailprice), ceil(p_size), mod(p_size, 0), sign(p_retailprice), sqrt(p_size), power(p_size, -1), ln(p_size), log(p_retailprice), pi(), octet_length(p_name), extract(isoyear from date '2021-01-03'), extract(week from $1::date), p_name || p_size, p_size::numeric, '1.50'::decimal from part
SEEDS
# The same statements with the arena failing after N allocations (fuzz_bind.c:
# a leading 0x01 byte, then N), for the binder's out-of-memory paths.
for n in 7 60 200; do
    for f in "$corpus"/bind_seed_[0-4].sql; do
        { printf '\001'; printf "\\$(printf '%03o' "$n")"; cat "$f"; } > "$f.oom$n"
    done
done

dict=$tmp/sql.dict
(
    set +o pipefail
    grep -oE '\b[A-Z][A-Z_]{1,}\b' "$src/sql/grammar.y" | sort -u | tr 'A-Z' 'a-z'
    grep -oE 'X\([A-Z_]+, "[a-z_ ]+"' "$src/sql/func.h" | sed -E 's/.*"(.*)"/\1/'
    grep -oE '\b[A-Z]{1,2}_[A-Z]+\b' "$shared/tpch/schema.sql" | tr 'A-Z' 'a-z'
    printf '%s\n' nation region supplier customer part partsupp orders lineitem '(' ')' ',' \
        '::' '||' '<>' '<=' '>=' '!=' "'" '"' '$1' '1e2' '0.5' '2147483648' "'1998-12-01'"
) | sort -u | grep -v '^$' | sed 's/\\/\\\\/g; s/"/\\"/g; s/.*/"&"/' > "$dict"

fuzz_run fuzz_bind "no crash, leak, abort or hang (runs=$runs, seconds=$seconds)" \
    -max_len=512 -dict="$dict" "${fuzz_limit_args[@]}" "$corpus"

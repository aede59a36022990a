#!/usr/bin/env bash
# test_shared_strings.sh — long strings that repeat are stored once per
# chunk (storage/string_dedup.h) by the loader and by CALL dbgen; queries
# must see the same values as if every row had its own copy: grouping,
# equality, LIKE, length and ordering over 150,000 loaded rows (three
# chunks) with two long values and unique long notes, and o_clerk and
# l_shipinstruct of CALL dbgen against the same tables loaded from `tpch gen`
# files.
set -u
: "${RACKDB:?}" "${RACKDB_SHARED:?}"
work=$(mktemp -d "${TMPDIR:-/tmp}/rackdb-shared-XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

awk 'BEGIN { split("DELIVER IN PERSON|TAKE BACK RETURN|NONE|COLLECT COD", v, "|");
             for (i = 0; i < 150000; i++) printf "%d|%s|note %d of row %d|\n", i, v[i % 4 + 1], i * 7, i }' >t.tbl
"$RACKDB" -q --threads 2 --mode csv \
    -c "create table t (id integer not null, instr char(25) not null, note varchar(44) not null)" \
    -c "copy t from '$work/t.tbl'" \
    -c "select instr, count(*), min(id), max(id), sum(length(instr)) from t group by instr order by instr" \
    -c "select count(*) from t where instr = 'TAKE BACK RETURN' and id % 4 = 1" \
    -c "select count(*) from t where instr like '%IN PERSON' and note like 'note 7%'" \
    -c "select id, instr, note from t where id in (0, 65535, 65536, 149999) order by id" \
    >got.csv 2>err.txt || fail "query run: $(cat err.txt)"
cat >want.csv <<'WANT'
instr,count,min,max,sum
COLLECT COD,37500,3,149999,412500
DELIVER IN PERSON,37500,0,149996,637500
NONE,37500,2,149998,150000
TAKE BACK RETURN,37500,1,149997,600000
count
37500
count
WANT
awk 'BEGIN { n = 0; for (i = 0; i < 150000; i += 4) if (sprintf("%d", i * 7) ~ /^7/) n++; print n }' >>want.csv
cat >>want.csv <<'WANT'
id,instr,note
0,DELIVER IN PERSON,note 0 of row 0
65535,COLLECT COD,note 458745 of row 65535
65536,DELIVER IN PERSON,note 458752 of row 65536
149999,COLLECT COD,note 1049993 of row 149999
WANT
diff want.csv got.csv >diff.txt || fail "loaded table: $(cat diff.txt)"

# CALL dbgen and the same tables loaded from files agree on the shared columns.
"$RACKDB" tpch gen --sf 0.01 --out "$work/sf" --tables orders,lineitem >/dev/null 2>err.txt ||
    fail "tpch gen: $(cat err.txt)"
queries=(-c "select o_clerk, count(*), sum(o_orderkey) from orders group by o_clerk order by o_clerk"
    -c "select count(*) from orders where o_clerk = 'Clerk#000000951'"
    -c "select l_shipinstruct, count(*), max(l_orderkey) from lineitem group by l_shipinstruct order by 1"
    -c "select count(*) from lineitem where l_shipinstruct like 'DELIVER%' and l_comment like '%ly%'")
"$RACKDB" -q --threads 2 --mode csv -c "call dbgen(sf = 0.01)" "${queries[@]}" >mem.csv 2>err.txt ||
    fail "dbgen run: $(cat err.txt)"
"$RACKDB" -q --threads 2 --mode csv -f "$RACKDB_SHARED/tpch/schema.sql" \
    -c "copy orders from '$work/sf/orders.tbl'" -c "copy lineitem from '$work/sf/lineitem.tbl'" \
    "${queries[@]}" >files.csv 2>err.txt || fail "files run: $(cat err.txt)"
[ "$(wc -l <mem.csv)" -gt 1000 ] || fail "dbgen output too short: $(head mem.csv)"
diff mem.csv files.csv >diff.txt || fail "dbgen and files differ: $(head diff.txt)"

[ "$failures" -eq 0 ] || { echo "$failures failed"; exit 1; }
echo "all passed"

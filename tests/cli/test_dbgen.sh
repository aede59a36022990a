#!/usr/bin/env bash
# test_dbgen.sh — CALL dbgen(sf = 0.01) end to end: the eight tables appear
# with the TPC-H schema and dbgen's row counts, their rows written back with
# COPY TO are byte-identical to dbgen 2.14.0's files (dbgen.sha1; lineitem's
# l_quantity is a DECIMAL, which dbgen prints without ".00"), a table of the
# same name is replaced (not appended to), and a database directory keeps
# them across runs.
set -u
: "${RACKDB:?}" "${RACKDB_SHARED:?}"
work=$(mktemp -d "${TMPDIR:-/tmp}/rackdb-dbgen-XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

tables="customer lineitem nation orders part partsupp region supplier"
args=(-q -c "create table nation (x int)" -c "insert into nation values (1), (2)"
    -c "call dbgen(sf = 0.01)")
for t in $tables; do args+=(-c "copy $t to '$t.tbl'"); done
"$RACKDB" db "${args[@]}" --mode csv -c ".tables" >tables.csv 2>err.txt ||
    fail "dbgen run: $(cat err.txt)"

for t in $tables; do
    want=$(awk -v t="$t" '$1 == "0.01" && $2 == t { print $3, $4 }' "$RACKDB_SHARED/tpch/dbgen.sha1")
    if [ "$t" = lineitem ]; then
        got=$(awk -F'|' 'BEGIN { OFS = "|" } { sub(/\.00$/, "", $5); print }' "$t.tbl" | sha1sum)
    else
        got=$(sha1sum <"$t.tbl")
    fi
    got="$(wc -l <"$t.tbl") ${got%% *}"
    [ "$got" = "$want" ] || fail "$t: rows and sha1 '$got', dbgen's '$want'"
done

expected="name,kind,rows
customer,table,1500
lineitem,table,60175
nation,table,25
orders,table,15000
part,table,2000
partsupp,table,8000
region,table,5
supplier,table,100"
[ "$(cat tables.csv)" = "$expected" ] || fail "tables after CALL: $(cat tables.csv)"
# The directory has them too, with dbgen's DDL (n_comment may be NULL).
[ "$("$RACKDB" db --mode csv -c .tables)" = "$expected" ] || fail "tables after reopening"
"$RACKDB" db -c ".schema nation" >schema.txt
[ "$(cat schema.txt)" = "CREATE TABLE nation (
    n_nationkey INTEGER NOT NULL,
    n_name CHAR(25) NOT NULL,
    n_regionkey INTEGER NOT NULL,
    n_comment VARCHAR(152)
);" ] || fail ".schema nation: $(cat schema.txt)"

# Bad scale factors fail with a clear error.
"$RACKDB" -c "call dbgen(sf = 0)" 2>err.txt && fail "sf = 0 accepted"
grep -q "^ERROR:" err.txt || fail "sf = 0 message: $(cat err.txt)"
"$RACKDB" -c "call dbgen(scale = 1)" 2>err.txt && fail "unknown argument accepted"

[ "$failures" -eq 0 ] || { echo "$failures failed"; exit 1; }
echo "all passed"

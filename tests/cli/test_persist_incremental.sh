#!/usr/bin/env bash
# test_persist_incremental.sh — a database directory is checkpointed table by
# table: after CALL dbgen(sf = 0.01), an INSERT into nation, a COPY into
# region, CREATE/DROP of a small table and a failed statement leave
# lineitem's file untouched (same name, inode, size and mtime, read with
# stat), rewrite only what changed, remove the files of replaced and
# dropped tables, and every run reads back the right rows.
set -u
: "${RACKDB:?RACKDB must name the rackdb program}"
work=$(mktemp -d "${TMPDIR:-/tmp}/rackdb-persist-XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
export HOME="$work"
failures=0

check() { # name expected actual
    if [ "$2" != "$3" ]; then
        echo "FAIL $1"
        echo "--- expected"; printf '%s\n' "$2"
        echo "--- actual"; printf '%s\n' "$3"
        failures=$((failures + 1))
    fi
}
rk() {
    "$RACKDB" "$@"
    echo "$? $*" >>"$work/statuses"
}
# The file MANIFEST names for a table, and its identity on disk.
file_of() { awk -v t="$1" '$1 == "table" && $NF == t { print $2 }' db/MANIFEST; }
ident() { stat -c '%n %i %s %y' "db/$1"; }

rk db -q -c "call dbgen(sf = 0.01)"
li=$(file_of lineitem)
[ -n "$li" ] || { echo "FAIL no lineitem in MANIFEST"; cat db/MANIFEST; exit 1; }
li_id=$(ident "$li")
nation=$(file_of nation)
orders_id=$(ident "$(file_of orders)")

check "insert" "INSERT 0 1" "$(rk db -c "insert into nation values (25, 'ATLANTIS', 1, 'lost')")"
check "lineitem kept after insert" "$li_id" "$(ident "$(file_of lineitem)")"
check "orders kept after insert" "$orders_id" "$(ident "$(file_of orders)")"
[ "$(file_of nation)" != "$nation" ] || { echo "FAIL nation not rewritten"; failures=$((failures + 1)); }
[ ! -e "db/$nation" ] || { echo "FAIL old nation file left: $nation"; failures=$((failures + 1)); }

printf '5|ATLANTIC|sunk|\n' >region.tbl
check "copy" "COPY 1" "$(rk db -c "copy region from 'region.tbl'")"
check "create" "CREATE TABLE" "$(rk db -c "create table scratch (a integer)")"
check "drop" "DROP TABLE" "$(rk db -c "drop table scratch")"
check "lineitem kept after copy, create, drop" "$li_id" "$(ident "$(file_of lineitem)")"

# A failed statement changes nothing on disk.
cp db/MANIFEST manifest.before
"$RACKDB" db -c "insert into nation values (26, 'X', 99999999999, 'too big')" 2>/dev/null
[ $? -ne 0 ] || { echo "FAIL bad insert succeeded"; failures=$((failures + 1)); }
cmp -s manifest.before db/MANIFEST || { echo "FAIL failed insert changed MANIFEST"; failures=$((failures + 1)); }

check "rows read back" "n,comment
26,lost
6,sunk
60175,li" "$(rk db -q --mode csv -c "select (select count(*) from nation) as n, n_comment as comment from nation where n_name = 'ATLANTIS'" \
    -c "select (select count(*) from region) as n, r_comment as comment from region where r_name = 'ATLANTIC'" \
    -c "select count(*) as n, 'li' as comment from lineitem" | awk '!seen[$0]++')"

# Eight table files, the MANIFEST and nothing else of ours: replaced and
# dropped tables' files are gone.
check "files" "8" "$(ls db | grep -c '\.rtbl$')"
ls db | grep -q '\.tmp$' && { echo "FAIL temporary files left"; failures=$((failures + 1)); }

# Dropping lineitem removes its file.
check "drop lineitem" "DROP TABLE" "$(rk db -c "drop table lineitem")"
[ ! -e "db/$li" ] || { echo "FAIL lineitem's file left after DROP"; failures=$((failures + 1)); }
check "files after drop" "7" "$(ls db | grep -c '\.rtbl$')"

if grep -v '^0 ' "$work/statuses"; then
    echo "FAIL: the runs above exited non-zero"
    failures=$((failures + 1))
fi
echo "$((failures == 0 ? 1 : 0)) passed, $failures failed"
[ "$failures" -eq 0 ]

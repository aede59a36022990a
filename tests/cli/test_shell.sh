#!/usr/bin/env bash
# test_shell.sh — the rackdb program as a user drives it: --version/--help,
# -c (repeated, in order), -f, stdin, every output mode compared exactly,
# dot commands, psql-style errors with exit status 1, and a database
# directory that keeps its tables across runs.
set -u
: "${RACKDB:?RACKDB must name the rackdb program}"
work=$(mktemp -d "${TMPDIR:-/tmp}/rackdb-shell-XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
export HOME="$work" # no history file outside the test
failures=0

check() { # name expected actual
    if [ "$2" != "$3" ]; then
        echo "FAIL $1"
        echo "--- expected"; printf '%s\n' "$2"
        echo "--- actual"; printf '%s\n' "$3"
        failures=$((failures + 1))
    fi
}
# Runs rackdb where it must succeed; statuses are checked at the end (a
# sanitizer's leak report, for one, turns into a non-zero status).
rk() {
    "$RACKDB" "$@"
    echo "$? $*" >>"$work/statuses"
}
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
check_status() { # name expected actual
    [ "$2" = "$3" ] || { echo "FAIL $1: exit status $3, expected $2"; failures=$((failures + 1)); }
}

# --- version and help -----------------------------------------------------------
v=$(rk --version)
[[ "$v" =~ ^rackdb\ [0-9]+\.[0-9]+\.[0-9]+\ \(LLVM\ 19\.[0-9]+\.[0-9]+\)$ ]] ||
    { echo "FAIL --version: $v"; failures=$((failures + 1)); }
check "-V" "$v" "$(rk -V)"
"$RACKDB" --help | grep -q "^usage: rackdb \[DIR\]" || { echo "FAIL --help"; failures=$((failures + 1)); }
"$RACKDB" --bogus 2>/dev/null
check_status "unknown option" 2 $?
"$RACKDB" --mode nope -c "begin" 2>/dev/null
check_status "unknown mode" 2 $?

# --- -c in order, tags in table mode --------------------------------------------
out=$(rk -c "create table t (a integer)" -c "insert into t values (1), (2)" \
    -c "begin; commit" -c "set threads = 3" -c "show threads" 2>&1)
check "-c sequence" "CREATE TABLE
INSERT 0 2
BEGIN
COMMIT
SET
 threads
---------
 3
(1 row)" "$out"
check "--threads" " threads
---------
 2
(1 row)" "$(rk --threads 2 -c "show threads")"
check "-q" " threads
---------
 5
(1 row)" "$(rk -q -c "set threads to 5" -c "show threads")"

# --- a catalog to print: names that need quoting, numbers, NULL ------------------
cat > setup.sql <<'SQL'
-- tables for the output modes
create table "we""ird, one" (x integer not null);
insert into "we""ird, one" values (1), (2),
  (3);  /* three rows */
create table plain (
    id   bigint not null,
    name varchar(10)
);
create view v as select 'a;b' as s;
SQL

check "-f table mode" "CREATE TABLE
INSERT 0 3
CREATE TABLE
CREATE VIEW
    name     | kind  | rows
-------------+-------+------
 plain       | table |    0
 v           | view  |
 we\"ird, one | table |    3
(3 rows)" "$(rk -f setup.sql -c .tables)"

check "csv mode" 'name,kind,rows
plain,table,0
v,view,
"we""ird, one",table,3' "$(rk -q -f setup.sql --mode csv -c .tables)"

check "json mode" '[
  {"name": "plain", "kind": "table", "rows": 0},
  {"name": "v", "kind": "view", "rows": null},
  {"name": "we\"ird, one", "kind": "table", "rows": 3}
]' "$(rk -f setup.sql --mode=json -c .tables)"

check "markdown mode" '| name        | kind  | rows |
| ----------- | ----- | ---: |
| plain       | table |    0 |
| v           | view  |      |
| we"ird, one | table |    3 |' "$(rk -q -f setup.sql -c ".mode markdown" -c .tables)"

check ".mode switches" "csv
name,kind,rows" "$(rk -c ".mode csv" -c ".mode" -c ".tables")"

# --- .schema ---------------------------------------------------------------------
check ".schema" 'CREATE TABLE "we""ird, one" (
    x INTEGER NOT NULL
);

CREATE TABLE plain (
    id BIGINT NOT NULL,
    name VARCHAR(10)
);

CREATE VIEW v AS select '"'a;b'"' as s;' "$(rk -q -f setup.sql -c .schema)"
check ".schema NAME" "CREATE TABLE plain (
    id BIGINT NOT NULL,
    name VARCHAR(10)
);" "$(rk -q -f setup.sql -c ".schema PLAIN")"

# --- stdin: statements over lines, dot commands, a last statement without ';' ----
out=$(printf 'create table s1 (x int);\n.mode csv\ncreate table\n  s2 (y int);\n.tables\ninsert into s1 values (7)' | rk)
# (command tags print in table mode only)
check "stdin" "CREATE TABLE
name,kind,rows
s1,table,0
s2,table,0" "$out"

# --- errors: psql format on stderr, exit status 1, nothing after the error runs --
"$RACKDB" -c "create table e (a int)" -c "create table e (a int)" -c "create table f (a int)" \
    >out.txt 2>err.txt
check_status "error exit" 1 $?
check "error stdout" "CREATE TABLE" "$(cat out.txt)"
check "error stderr" 'ERROR:  relation "e" already exists
LINE 1: create table e (a int)
                     ^' "$(cat err.txt)"

printf 'create table g (a int);\nselect *\n  fromm g;\ncreate table h (a int);\n' > bad.sql
"$RACKDB" -f bad.sql >out.txt 2>err.txt
check_status "-f stops at error" 1 $?
check "-f error stdout" "CREATE TABLE" "$(cat out.txt)"
check "-f error stderr" 'ERROR:  syntax error at or near "fromm"
LINE 2:   fromm g;
          ^' "$(cat err.txt)"

printf 'create table g (a int);\nselect nope from g;\ncreate table h (a int);\n' |
    "$RACKDB" >out.txt 2>err.txt
check_status "stdin stops at error" 1 $?
check "stdin error stdout" "CREATE TABLE" "$(cat out.txt)"
check "stdin error stderr" 'ERROR:  column "nope" does not exist
LINE 1: select nope from g;
               ^' "$(cat err.txt)"

"$RACKDB" -c ".schema nosuch" 2>err.txt
check_status ".schema missing" 1 $?
check ".schema missing message" 'ERROR:  relation "nosuch" does not exist' "$(cat err.txt)"
"$RACKDB" -c ".frobnicate" 2>/dev/null
check_status "unknown dot command" 1 $?

# --- .timer and .read ------------------------------------------------------------
out=$(rk -c ".timer on" -c "create table tt (x int)")
[[ "$out" =~ ^CREATE\ TABLE$'\n'Time:\ [0-9]+\.[0-9]{3}\ ms$ ]] ||
    { echo "FAIL .timer: $out"; failures=$((failures + 1)); }
printf '.read setup.sql\n.mode csv\n.tables\n' > outer.sql
check ".read" "CREATE TABLE
INSERT 0 3
CREATE TABLE
CREATE VIEW
name,kind,rows
plain,table,0
v,view,
\"we\"\"ird, one\",table,3" "$(rk -f outer.sql)"

# --- a database directory keeps tables, rows and views across runs ----------------
printf '1|one|\n2|two|\n3||\n' > small.tbl
rk db -c "create table small (k integer not null, v varchar(5))" \
    -c "copy small from 'small.tbl'" -c "create view sv as select v from small" >out.txt
check_status "db create" 0 $?
check "db create output" "CREATE TABLE
COPY 3
CREATE VIEW" "$(cat out.txt)"
check "db second run" "INSERT 0 1
 name  | kind  | rows
-------+-------+------
 small | table |    4
 sv    | view  |
(2 rows)" "$(rk db -c "insert into small values (4, 'four')" -c .tables)"
out=$(rk db --mode csv -c .tables -c "copy small to 'back.csv' (format csv)")
check "db third run" "name,kind,rows
small,table,4
sv,view," "$out"
check "db rows" '1,one
2,two
3,
4,four' "$(cat back.csv)"
check "db schema" "CREATE TABLE small (
    k INTEGER NOT NULL,
    v VARCHAR(5)
);

CREATE VIEW sv AS select v from small;" "$(rk db -c .schema)"

# A directory with someone else's files is refused (status 2).
mkdir foreign && echo mine >foreign/notes.txt
"$RACKDB" foreign -c "begin" 2>err.txt
check_status "foreign directory" 2 $?
grep -q "^rackdb: cannot open foreign: " err.txt || fail "foreign directory message: $(cat err.txt)"

if grep -v '^0 ' "$work/statuses"; then
    echo "FAIL: the runs above exited non-zero"
    failures=$((failures + 1))
fi
if [ "$failures" -ne 0 ]; then
    echo "$failures failed"
    exit 1
fi
echo "all passed"

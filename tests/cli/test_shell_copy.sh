#!/usr/bin/env bash
# test_shell_copy.sh — COPY FROM STDIN / TO STDOUT in the rackdb shell: data
# piped in for -c, TO STDOUT byte-identical to what went in (and without a
# "COPY n" line), inline data in a script ending at \., a bad row failing
# with its line and exit status 1 with the table unchanged, and STDIN /
# STDOUT in the persistent database directory.
set -u
: "${RACKDB:?RACKDB must name the rackdb program}"
work=$(mktemp -d "${TMPDIR:-/tmp}/rackdb-shell-copy-XXXXXX")
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

create="CREATE TABLE t (a INTEGER NOT NULL, b VARCHAR(20), c DECIMAL(15,2), d DATE)"
printf '1|one|1.50|1998-09-02\n2|\\N|-0.25|2000-02-29\n3|a\\|b\\tc|\\N|1970-01-01\n' > in.txt

# -c with the data on stdin, written back out byte for byte
"$RACKDB" db -c "$create" -c "COPY t FROM STDIN (DELIMITER '|')" < in.txt > tags.txt
check "COPY FROM STDIN tags" "CREATE TABLE
COPY 3" "$(cat tags.txt)"
"$RACKDB" db -c "COPY t TO STDOUT (DELIMITER '|')" > out.txt
check "COPY TO STDOUT byte-identical" "same" "$(cmp -s in.txt out.txt && echo same)"
check "COPY (query) TO STDOUT csv" "a,b
2," "$("$RACKDB" db -c "COPY (SELECT a, b FROM t WHERE a = 2) TO STDOUT (FORMAT csv, HEADER)")"

# a bad row: error with its line, status 1, nothing added
printf '4|four|4.00|2001-01-01\n5|five|5.00|2001-02-30\n' > bad.txt
err=$("$RACKDB" db -c "COPY t FROM STDIN (DELIMITER '|')" < bad.txt 2>&1 > /dev/null)
status=$?
check "bad row status" "1" "$status"
check "bad row message" "1" "$(echo "$err" | grep -c 'STDIN: line 2, column 4 (d)')"
check "bad row: table unchanged" "3" "$("$RACKDB" db --mode csv -c "SELECT count(*) AS n FROM t" 2>&1 | tail -1)"

# a script with inline data, the way pg_dump writes it: data to \., then SQL
cat > script.sql << 'SQL'
CREATE TABLE s (k INTEGER, v VARCHAR(10));
COPY s FROM STDIN;
10	ten
11	\N
\.
SELECT count(*) AS n, count(v) AS nv, sum(k) AS total FROM s;
SQL
check "script on stdin" "n,nv,total
2,1,21" "$("$RACKDB" --mode csv < script.sql 2>&1)"
check "script with -f" "n,nv,total
2,1,21" "$("$RACKDB" --mode csv -f script.sql 2>&1)"

if [ "$failures" -ne 0 ]; then
    echo "$failures failed"
    exit 1
fi
echo "all passed"

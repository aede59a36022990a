#!/usr/bin/env bash
# test_server_copy.sh — COPY FROM STDIN / TO STDOUT through `rackdb server`
# with psql: \copy round trips byte for byte (text with a delimiter, NULLs
# and escapes; CSV with a header; dbgen .tbl), inline data in a script
# ending at \., a bad row failing with its line and leaving the table as it
# was, COPY (query) TO STDOUT, COPY between other statements of one Query,
# memory_limit bounding the input, and the
# connection staying usable after each error.
source "$(dirname "$0")/server_lib.sh"
need_psql
start_server

pg -U a -c "CREATE TABLE t (a INTEGER NOT NULL, b VARCHAR(20), c DECIMAL(15,2), d DATE)"

# text format, '|' delimiter: NULL as \N, an escaped delimiter and a tab
printf '1|one|1.50|1998-09-02\n2|\\N|-0.25|2000-02-29\n3|a\\|b\\tc|\\N|1970-01-01\n' > "$TMP/in.txt"
check "\\copy FROM tag" "COPY 3" \
    "$(PGOPTIONS= psql -X -h 127.0.0.1 -p "$PORT" -U a -c "\\copy t FROM '$TMP/in.txt' (DELIMITER '|')")"
check "rows loaded" "3|1|2|one
a|b	c" "$(pg -At -U a -c "SELECT count(*), count(*) - count(b), count(c), max(b) FROM t" -c "SELECT b FROM t WHERE a = 3")"
pg -U a -c "\\copy t TO '$TMP/out.txt' (DELIMITER '|')"
check "\\copy round trip byte-identical" "same" "$(cmp -s "$TMP/in.txt" "$TMP/out.txt" && echo same)"

# CSV with a header, quoting where needed
pg -U a -c "\\copy t TO '$TMP/out.csv' (FORMAT csv, HEADER)"
check "csv header" "a,b,c,d" "$(head -1 "$TMP/out.csv")"
pg -U a -c "CREATE TABLE t2 (a INTEGER NOT NULL, b VARCHAR(20), c DECIMAL(15,2), d DATE)"
pg -U a -c "\\copy t2 FROM '$TMP/out.csv' (FORMAT csv, HEADER)"
pg -U a -c "\\copy t2 TO '$TMP/out2.csv' (FORMAT csv, HEADER)"
check "csv round trip" "same" "$(cmp -s "$TMP/out.csv" "$TMP/out2.csv" && echo same)"

# dbgen .tbl: a delimiter after every field
printf '7|x|0.01|1992-01-01|\n8||99.99|1998-12-01|\n' > "$TMP/in.tbl"
pg -U a -c "CREATE TABLE t3 (a INTEGER NOT NULL, b VARCHAR(20), c DECIMAL(15,2), d DATE)"
pg -U a -c "\\copy t3 FROM '$TMP/in.tbl' (FORMAT tbl)"
pg -U a -c "\\copy t3 TO '$TMP/out.tbl' (FORMAT tbl)"
check "tbl round trip" "same" "$(cmp -s "$TMP/in.tbl" "$TMP/out.tbl" && echo same)"

# COPY FROM STDIN with the data inline in a psql script, ended by \.
cat > "$TMP/script.sql" << 'SQL'
CREATE TABLE s (k INTEGER, v VARCHAR(10));
COPY s FROM STDIN;
10	ten
11	\N
\.
SELECT count(*), count(v), sum(k) FROM s;
SQL
check "inline COPY FROM STDIN" "COPY 2
2|1|21" "$(PGOPTIONS= psql -X -At -h 127.0.0.1 -p "$PORT" -U a -v ON_ERROR_STOP=1 -f "$TMP/script.sql" 2>&1 | grep -v CREATE)"

# a bad row anywhere: an error naming its line, and the table unchanged
printf '4|four|4.00|2001-01-01\n5|five|oops|2001-01-02\n' > "$TMP/bad.txt"
out=$(pg -U a -c "\\copy t FROM '$TMP/bad.txt' (DELIMITER '|')" 2>&1 || true)
check "bad row error" "1" "$(echo "$out" | grep -c 'ERROR:  STDIN: line 2, column 3 (c)')"
check "bad row: table unchanged" "3" "$(pg -At -U a -c 'SELECT count(*) FROM t')"
check "bad row: SQLSTATE" "22P02" "$(pg -U a -v VERBOSITY=verbose -c "\\copy t FROM '$TMP/bad.txt' (DELIMITER '|')" 2>&1 | sed -n 's/^ERROR:  \([0-9A-Z]*\):.*/\1/p')"

# errors before any data moves: no table, no channel needed for a file
check "missing table" 'ERROR:  relation "nosuch" does not exist' \
    "$(pg -U a -c "\\copy nosuch FROM '$TMP/in.txt'" 2>&1 | head -1 || true)"

# several statements in one Query around a COPY, and COPY (query) TO STDOUT
check "COPY (query) TO STDOUT" "1|one
3|a\\|b\\tc" "$(pg -U a -c "COPY (SELECT a, b FROM t WHERE c IS NULL OR c > 1 ORDER BY a) TO STDOUT (DELIMITER '|')")"
check "COPY TO STDOUT csv" "a,b
1,one" "$(pg -U a -c "COPY (SELECT a, b FROM t WHERE a = 1) TO STDOUT (FORMAT csv, HEADER)")"

# COPY FROM STDIN and TO STDOUT between other statements of one Query
printf '20\ttwenty\n21\tx\n' > "$TMP/s.txt"
check "COPY inside a multi-statement Query" "4
10	ten
20	twenty
42" "$(pg -At -U a -c "COPY s FROM STDIN; SELECT count(*) FROM s; COPY (SELECT k, v FROM s WHERE k % 10 = 0 ORDER BY k) TO STDOUT; SELECT 42" < "$TMP/s.txt")"

# many rows: the data arrives in many CopyData messages
seq 1 200000 | awk '{printf "%d|v%d|%d.%02d|1995-03-15\n", $1, $1 % 97, $1 % 1000, $1 % 100}' > "$TMP/big.txt"
pg -U a -c "CREATE TABLE big (a INTEGER NOT NULL, b VARCHAR(20), c DECIMAL(15,2), d DATE)"
check "big \\copy" "COPY 200000" \
    "$(PGOPTIONS= psql -X -h 127.0.0.1 -p "$PORT" -U a -c "\\copy big FROM '$TMP/big.txt' (DELIMITER '|')")"
pg -U a -c "\\copy big TO '$TMP/big.out' (DELIMITER '|')"
check "big round trip" "same" "$(cmp -s "$TMP/big.txt" "$TMP/big.out" && echo same)"

# memory_limit bounds the buffered input; the table stays as it was
out=$(PGOPTIONS='-c memory_limit=1MB' pg -U a -c "\\copy big FROM '$TMP/big.txt' (DELIMITER '|')" 2>&1 || true)
check "memory_limit" "1" "$(echo "$out" | grep -c 'ERROR:  COPY FROM STDIN data is larger than memory_limit')"
check "memory_limit: table unchanged" "200000" "$(pg -At -U a -c 'SELECT count(*) FROM big')"

stop_server
check "clean stop" "1 0" "$(grep -c 'rackdb server: stopped' "$SERVER_LOG") $SERVER_STATUS"
check "no sanitizer report" "0" "$(grep -c -E 'Sanitizer|runtime error' "$SERVER_LOG" || true)"
exit $FAILED

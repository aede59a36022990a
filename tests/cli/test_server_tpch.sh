#!/usr/bin/env bash
# test_server_tpch.sh — psql against `rackdb server`: CALL dbgen(sf = 0.01),
# then the 22 TPC-H queries of $RACKDB_SHARED/tpch/queries, each file run
# with `psql -f` (q15: CREATE VIEW, SELECT, DROP VIEW as three Query
# messages), their unaligned output compared with the answers in
# tpch/answers/sf0.01 (same rows in the same order; numbers within 0.01,
# strings exactly after trimming blanks; NULL printed as NULL, as the
# answers have it).
source "$(dirname "$0")/server_lib.sh"
need_psql
: "${RACKDB_SHARED:?RACKDB_SHARED not set}"
QUERIES=$RACKDB_SHARED/tpch/queries
ANSWERS=$RACKDB_SHARED/tpch/answers/sf0.01

# compare GOT WANT: prints the first difference and fails, or nothing.
compare() {
    awk -F'|' -v want="$2" '
        function trim(s) { gsub(/^[ \t]+|[ \t\r]+$/, "", s); return s }
        function numeric(s) { return s ~ /^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$/ }
        {
            if ((getline line < want) <= 0) { printf "row %d: extra row \"%s\"\n", NR, $0; bad = 1; exit }
            n = split(line, w, "|")
            if (n != NF) { printf "row %d: %d fields, expected %d\n", NR, NF, n; bad = 1; exit }
            for (i = 1; i <= NF; i++) {
                a = trim($i); b = trim(w[i])
                if (numeric(a) && numeric(b) ? (a - b > 0.01 || b - a > 0.01) : a != b) {
                    printf "row %d: got \"%s\", expected \"%s\"\n", NR, $0, line; bad = 1; exit
                }
            }
        }
        END {
            if (!bad && (getline line < want) > 0) { printf "row %d: missing \"%s\"\n", NR + 1, line; bad = 1 }
            exit bad
        }' "$1"
}

# the comparer itself must see a difference
printf '1|a|2.00\n' > "$TMP/want"
check "compare: equal within 0.01" "" "$(printf '1|a |2.004\n' | compare /dev/stdin "$TMP/want")"
check "compare: number differs" "1" "$(printf '1|a|2.02\n' | compare /dev/stdin "$TMP/want" | grep -c 'row 1: got')"
check "compare: text differs" "1" "$(printf '1|b|2.00\n' | compare /dev/stdin "$TMP/want" | grep -c 'row 1: got')"
check "compare: missing row" "1" "$(printf '' | compare /dev/stdin "$TMP/want" | grep -c 'row 1: missing')"
check "compare: extra row" "1" "$(printf '1|a|2\n1|a|2\n' | compare /dev/stdin "$TMP/want" | grep -c 'row 2: extra')"

start_server
pg -U tpch -c "CALL dbgen(sf = 0.01)" > /dev/null
for f in "$QUERIES"/q*.sql; do
    q=$(basename "$f" .sql)
    if ! pg -U tpch -A -t -F'|' -P null=NULL -f "$f" > "$TMP/$q.out" 2> "$TMP/$q.err"; then
        check "$q runs" "" "$(cat "$TMP/$q.err")"
        continue
    fi
    check "$q answer" "" "$(compare "$TMP/$q.out" "$ANSWERS/$q.csv")"
done
# q15's view is gone again, nothing else was left behind
check "no views left" "" "$(pg -At -U tpch -c '\dv')"
check "22 queries ran" "22" "$(ls "$TMP"/q*.out | wc -l)"

stop_server
check "clean stop" "0" "$SERVER_STATUS"
check "no sanitizer report" "0" "$(grep -c -E 'Sanitizer|runtime error' "$SERVER_LOG" || true)"
exit $FAILED

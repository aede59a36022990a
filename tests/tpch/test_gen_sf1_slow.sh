#!/bin/bash
# test_gen_sf1_slow.sh (opt-in) — SF 1 and SF 10 checks against dbgen's
# SHA-1s: SF 1 always, SF 10 when RACKDB_TPCH_SF10=1 (11 GB of files).
set -u
if [ -n "${RACKDB:-}" ] && [ -x "$RACKDB" ] && "$RACKDB" tpch gen --help >/dev/null 2>&1; then
    GEN=("$RACKDB" tpch gen)
else
    GEN=("$RACKDB_BUILD/tests/tpch_gen_cli" gen)
fi
SUMS="$RACKDB_SHARED/tpch/dbgen.sha1"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tpch_gen_slow.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
fail=0
scales="1"
[ "${RACKDB_TPCH_SF10:-0}" = 1 ] && scales="1 10"
for sf in $scales; do
    rm -f "$WORK"/*.tbl
    start=$(date +%s.%N)
    "${GEN[@]}" --sf "$sf" --out "$WORK" || { echo "FAIL: SF $sf generation"; fail=1; continue; }
    echo "SF $sf generated in $(echo "$(date +%s.%N) - $start" | bc) s"
    while read -r s t rows sum; do
        [ "$s" = "$sf" ] || continue
        got=$(sha1sum "$WORK/$t.tbl" | cut -d' ' -f1)
        if [ "$got" != "$sum" ]; then
            echo "FAIL: SF $sf $t.tbl sha1 $got, dbgen's is $sum"
            fail=1
        fi
    done < <(grep -v '^#' "$SUMS")
done
[ $fail = 0 ] && echo "SF $scales: all tables identical to dbgen"
exit $fail

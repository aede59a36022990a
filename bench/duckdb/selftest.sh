#!/usr/bin/env bash
# End-to-end check of the DuckDB harness on dbgen's SF 0.01 reference data:
# the load is verified byte for byte (load.mjs --verify), the 22 answers
# match /work/shared/tpch/answers/sf0.01 (compare.mjs), query.mjs agrees with
# tpch.mjs on q15, and compare.mjs rejects a wrong answer. Needs setup.sh to
# have installed node_modules (network access for npm the first time).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../lib/common.sh"
shared=${RACKDB_SHARED:-/work/shared}

"$here/setup.sh" >/dev/null
work=$(mktemp -d /tmp/rackdb-duckdb-selftest.XXXXXX)
trap 'rm -rf "$work"' EXIT
bench_reference_data "$work/data"

node "$here/load.mjs" --dir "$work/data" --threads 2 --verify >"$work/load.out" 2>&1
node "$here/tpch.mjs" --dir "$work/data" --threads 2 --reps 1 --results "$work/answers" >"$work/tpch.out"
node "$here/compare.mjs" --expected "$shared/tpch/answers/sf0.01" --actual "$work/answers" >"$work/compare.out" ||
	bench_die "DuckDB answers differ from the reference:
$(grep -v '^ok' "$work/compare.out")"

node "$here/query.mjs" --dir "$work/data" --threads 2 --file "$shared/tpch/queries/q15.sql" >"$work/q15.csv"
cmp -s "$work/q15.csv" "$work/answers/q15.csv" || bench_die "query.mjs and tpch.mjs disagree on q15"

# A wrong value beyond the tolerance must be reported.
sed -i '1s/|[0-9]*$/|999999/' "$work/answers/q01.csv"
if node "$here/compare.mjs" --expected "$shared/tpch/answers/sf0.01" --actual "$work/answers" --queries 1 >/dev/null; then
	bench_die "compare.mjs accepted a wrong q01"
fi
echo "bench/duckdb selftest: load verified, 22 answers match, oracle agrees"

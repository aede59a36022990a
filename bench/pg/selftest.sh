#!/usr/bin/env bash
# End-to-end check of the PostgreSQL harness on dbgen's SF 0.01 reference
# data: starts a private server (setup.sh), loads and runs the 22 queries
# (tpch.sh --results), compares the answers with /work/shared/tpch/answers
# (bench/duckdb/compare.mjs, so node is needed) and stops the server.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../lib/common.sh"
shared=${RACKDB_SHARED:-/work/shared}

work=$(mktemp -d /tmp/rackdb-pg-selftest.XXXXXX)
datadir=
cleanup() {
	[[ -z $datadir ]] || "$here/stop.sh" --datadir "$datadir" --remove 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
bench_reference_data "$work/data"

line=$("$here/setup.sh" --shared-buffers 128MB | tail -n 1) # "port=P datadir=D"
port=${line#port=}
port=${port%% *}
datadir=${line#* datadir=}
"$here/tpch.sh" --dir "$work/data" --port "$port" --reps 1 --results "$work/answers" >"$work/tpch.out"
node "$here/../duckdb/compare.mjs" --expected "$shared/tpch/answers/sf0.01" --actual "$work/answers" >"$work/compare.out" ||
	bench_die "PostgreSQL answers differ from the reference:
$(grep -v '^ok' "$work/compare.out")"
echo "bench/pg selftest: 22 answers match"

#!/usr/bin/env bash
# The TPC-H comparison (issue 6, Performance): the 22 queries on rackdb,
# DuckDB 1.5.6 and PostgreSQL 15 over the same dbgen .tbl files, with the
# same thread count, hot, best of R, every repetition timed from the SQL text
# (parse, plan, compile, run, all rows fetched). Each engine's harness writes
# its JSON into the output directory; report.mjs turns them into one table
# (per-query times, ratios, geometric means) and an SVG bar chart.
#
#   rackdb      `rackdb tpch run --data DIR --threads T --reps R --check`
#               (answers checked at SF 0.01, 0.1 and 1; nothing is cached
#               between repetitions: each one binds, plans and compiles anew)
#   DuckDB      bench/duckdb/tpch.mjs (in-memory database, threads = T)
#   PostgreSQL  bench/pg/setup.sh + tpch.sh (a private server on a free
#               port, keys + ANALYZE, max_parallel_workers_per_gather = T),
#               stopped and removed afterwards
#
# usage: run.sh [--sf 1] [--engines rackdb,duckdb,pg] [--threads 2] [--reps 3]
#               [--data DIR] [--out DIR] [--rackdb PATH] [--queries 1,6]
#   --sf        scale factor (default 1)
#   --engines   which engines to run (default all three)
#   --threads   threads per engine (default 2; PostgreSQL: parallel workers)
#   --reps      timed runs per query, the best counts (default 3)
#   --data      directory with the .tbl files (default /tmp/rackdb-tpch/sfSF);
#               generated with `rackdb tpch gen` when its files are missing
#   --out       results directory (default bench/results/tpch-sfSF-<time>)
#   --rackdb    the rackdb program (default $RACKDB, else build/release/rackdb)
#   --queries   a subset of query numbers (default all 22)
#
# Writes OUT/{rackdb,duckdb,pg}.json, OUT/*.log, OUT/report.md, OUT/tpch.svg
# and OUT/summary.json; prints the table. A failing engine is reported and
# left out; the exit status is 1 when any engine failed.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
source "$here/../lib/common.sh"

sf=1
engines=rackdb,duckdb,pg
threads=2
reps=3
data=
out=
rackdb=${RACKDB:-}
queries=
while (($#)); do
	case $1 in
	--sf) sf=$2; shift 2 ;;
	--engines) engines=$2; shift 2 ;;
	--threads) threads=$2; shift 2 ;;
	--reps) reps=$2; shift 2 ;;
	--data) data=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--rackdb) rackdb=$2; shift 2 ;;
	--queries) queries=$2; shift 2 ;;
	-h | --help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) bench_die "unknown argument '$1'" ;;
	esac
done
[[ $sf =~ ^[0-9]+(\.[0-9]+)?$ ]] || bench_die "--sf must be a number"
[[ $threads =~ ^[1-9][0-9]*$ ]] || bench_die "--threads must be a positive integer"
[[ $reps =~ ^[1-9][0-9]*$ ]] || bench_die "--reps must be a positive integer"
IFS=, read -r -a want <<<"$engines"
for e in "${want[@]}"; do
	[[ $e == rackdb || $e == duckdb || $e == pg ]] || bench_die "unknown engine '$e' (rackdb, duckdb, pg)"
done
has() { [[ ",$engines," == *",$1,"* ]]; }

rackdb=${rackdb:-$root/build/release/rackdb}
data=${data:-/tmp/rackdb-tpch/sf$sf}
out=${out:-$root/bench/results/tpch-sf$sf-$(date -u +%Y%m%dT%H%M%SZ)}

tables=(region nation supplier customer part partsupp orders lineitem)
missing=0
for t in "${tables[@]}"; do [[ -f $data/$t.tbl ]] || missing=1; done
if has rackdb || ((missing)); then
	[[ -x $rackdb ]] || bench_die "rackdb program not found at $rackdb (build it, or pass --rackdb)"
	rackdb=$(cd "$(dirname "$rackdb")" && pwd)/$(basename "$rackdb")
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
if ((missing)); then
	echo "generating SF $sf data into $data" >&2
	mkdir -p "$data"
	"$rackdb" tpch gen --sf "$sf" --out "$data" --threads "$threads" >&2
fi

qargs=()
[[ -z $queries ]] || qargs=(--queries "$queries")
failed=0
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

if has rackdb; then
	echo "== rackdb ($rackdb)" >&2
	# --check only where the program has answers; a mismatch is reported in
	# the JSON's status and the table, not a reason to drop the timings.
	check=()
	case $sf in 0.01 | 0.1 | 1) check=(--check) ;; esac
	if ! "$rackdb" tpch run --sf "$sf" --data "$data" --threads "$threads" --reps "$reps" \
		"${check[@]}" "${qargs[@]}" --json "$out/rackdb.json" >"$out/rackdb.log" 2>&1; then
		echo "rackdb: some query failed or mismatched (see $out/rackdb.log)" >&2
		[[ -f $out/rackdb.json ]] || failed=1
	fi
fi

if has duckdb; then
	echo "== DuckDB" >&2
	if "$root/bench/duckdb/setup.sh" >"$out/duckdb.log" 2>&1 &&
		node "$root/bench/duckdb/tpch.mjs" --dir "$data" --threads "$threads" --reps "$reps" \
			"${qargs[@]}" --json "$out/duckdb.json" >>"$out/duckdb.log" 2>&1; then
		:
	else
		echo "duckdb failed (see $out/duckdb.log)" >&2
		failed=1
	fi
fi

if has pg; then
	echo "== PostgreSQL" >&2
	pgdir=
	stop_pg() {
		if [[ -n $pgdir ]]; then
			"$root/bench/pg/stop.sh" --datadir "$pgdir" --remove >>"$out/pg.log" 2>&1 || true
			pgdir=
		fi
	}
	trap stop_pg EXIT
	if line=$("$root/bench/pg/setup.sh" 2>>"$out/pg.log" | tail -n 1) && [[ $line == port=* ]]; then
		port=${line#port=}
		port=${port%% *}
		pgdir=${line#*datadir=}
		if ! "$root/bench/pg/tpch.sh" --dir "$data" --port "$port" --reps "$reps" \
			--workers "$threads" "${qargs[@]}" --json "$out/pg.json" >>"$out/pg.log" 2>&1; then
			echo "postgres: some query failed (see $out/pg.log)" >&2
			[[ -f $out/pg.json ]] || failed=1
		fi
	else
		echo "postgres server did not start (see $out/pg.log)" >&2
		failed=1
	fi
	stop_pg
fi

load_after=$(cut -d' ' -f1-3 /proc/loadavg)
node "$here/report.mjs" --dir "$out" --sf "$sf" --threads "$threads" --reps "$reps" \
	--load "$load_before -> $load_after" --cores "$(nproc)"
echo "results in $out" >&2
exit "$failed"

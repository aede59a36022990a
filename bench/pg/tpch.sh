#!/usr/bin/env bash
# Runs TPC-H on a PostgreSQL server (normally one started by setup.sh):
# loads DIR/*.tbl into a fresh database, adds the primary keys and one
# lineitem index (what a tuned PostgreSQL TPC-H setup has: without them the
# correlated subqueries of q17/q20 rescan lineitem per row), ANALYZEs, then
# runs each qNN.sql R times in one session and reports the best time.
#
# A query's time is the sum of psql's \timing over the file's statements
# (q15: create view, select, drop view): client-measured round trips that
# cover parse, plan, execute and transferring all rows. Parallel query uses
# max_parallel_workers_per_gather = --workers (default 2).
#
# usage: tpch.sh --dir DIR --port P [--host H] [--db NAME] [--reps R]
#                [--workers W] [--queries 1,6] [--queries-dir D]
#                [--results D] [--json F] [--keys yes|no] [--timeout S]
#                [--no-load]
#   --dir          directory with dbgen's <table>.tbl files
#   --port/--host  server address (default host 127.0.0.1), user postgres
#   --db           database to (re)create and use (default tpch)
#   --reps         timed runs per query, best reported (default 3)
#   --workers      max_parallel_workers_per_gather (default 2)
#   --queries      subset of query numbers (default: every qNN.sql)
#   --queries-dir  where qNN.sql live (default /work/shared/tpch/queries)
#   --results      write each answer to D/qNN.csv ('|'-joined, NULL as NULL)
#   --json         also write the JSON summary to F
#   --keys         add primary keys + lineitem(l_partkey, l_suppkey) (default yes)
#   --timeout      statement_timeout in seconds (default 600)
#   --no-load      reuse the database loaded by an earlier run
#
# Prints a load table, a query table, then one JSON line (last line).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../lib/common.sh"

shared=${RACKDB_SHARED:-/work/shared}
dir=
port=
host=127.0.0.1
db=tpch
reps=3
workers=2
queries=
queries_dir=$shared/tpch/queries
results=
json=
keys=yes
timeout=600
load=1
while (($#)); do
	case $1 in
	--dir) dir=$2; shift 2 ;;
	--port) port=$2; shift 2 ;;
	--host) host=$2; shift 2 ;;
	--db) db=$2; shift 2 ;;
	--reps) reps=$2; shift 2 ;;
	--workers) workers=$2; shift 2 ;;
	--queries) queries=$2; shift 2 ;;
	--queries-dir) queries_dir=$2; shift 2 ;;
	--results) results=$2; shift 2 ;;
	--json) json=$2; shift 2 ;;
	--keys) keys=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--no-load) load=0; shift ;;
	-h | --help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) bench_die "unknown argument '$1'" ;;
	esac
done
[[ -n $port ]] || bench_die "--port is required"
((load == 0)) || [[ -n $dir ]] || bench_die "--dir is required (or --no-load)"
[[ $reps =~ ^[1-9][0-9]*$ ]] || bench_die "--reps must be a positive integer"
[[ $workers =~ ^[0-9]+$ ]] || bench_die "--workers must be a number"
[[ $keys == yes || $keys == no ]] || bench_die "--keys must be yes or no"
[[ $timeout =~ ^[0-9]+$ ]] || bench_die "--timeout must be a number of seconds"

tables=(region nation supplier customer part partsupp orders lineitem)
psql_base=(psql -X -q -v ON_ERROR_STOP=1 -h "$host" -p "$port" -U postgres)
export PGOPTIONS="-c max_parallel_workers_per_gather=$workers -c statement_timeout=${timeout}s -c client_min_messages=warning"

work=$(mktemp -d /tmp/rackdb-pg-tpch.XXXXXX)
trap 'rm -rf "$work"' EXIT
server_version=$("${psql_base[@]}" -d postgres -Atc 'show server_version') ||
	bench_die "cannot connect to PostgreSQL at $host:$port"

# ---- load -----------------------------------------------------------------
load_json=null
if ((load)); then
	for t in "${tables[@]}"; do
		[[ -f $dir/$t.tbl ]] || bench_die "missing data file $dir/$t.tbl"
	done
	"${psql_base[@]}" -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
	"${psql_base[@]}" -d "$db" -f "$shared/tpch/schema.sql"

	# dbgen ends each line with '|', which PostgreSQL's COPY would read as an
	# extra column: sed strips it on the way in. dbgen writes no backslashes
	# and no empty fields, so the text format reads every value as written.
	: >"$work/load"
	for t in "${tables[@]}"; do
		t0=$(bench_now)
		sed 's/|$//' "$dir/$t.tbl" | "${psql_base[@]}" -d "$db" -c "\\copy $t FROM STDIN WITH (FORMAT text, DELIMITER '|')"
		secs=$(bench_elapsed "$t0")
		rows=$("${psql_base[@]}" -d "$db" -Atc "SELECT count(*) FROM $t")
		lines=$(wc -l <"$dir/$t.tbl")
		((rows == lines)) || bench_die "$t: $rows rows loaded, file has $lines lines"
		echo "$t $rows $(stat -c %s "$dir/$t.tbl") $secs" >>"$work/load"
	done

	t0=$(bench_now)
	if [[ $keys == yes ]]; then
		"${psql_base[@]}" -d "$db" <<-'EOF'
			ALTER TABLE region ADD PRIMARY KEY (r_regionkey);
			ALTER TABLE nation ADD PRIMARY KEY (n_nationkey);
			ALTER TABLE supplier ADD PRIMARY KEY (s_suppkey);
			ALTER TABLE customer ADD PRIMARY KEY (c_custkey);
			ALTER TABLE part ADD PRIMARY KEY (p_partkey);
			ALTER TABLE partsupp ADD PRIMARY KEY (ps_partkey, ps_suppkey);
			ALTER TABLE orders ADD PRIMARY KEY (o_orderkey);
			ALTER TABLE lineitem ADD PRIMARY KEY (l_orderkey, l_linenumber);
			CREATE INDEX lineitem_part_supp ON lineitem (l_partkey, l_suppkey);
		EOF
	fi
	keys_secs=$(bench_elapsed "$t0")
	t0=$(bench_now)
	"${psql_base[@]}" -d "$db" -c 'ANALYZE'
	analyze_secs=$(bench_elapsed "$t0")

	awk -v keys="$keys_secs" -v analyze="$analyze_secs" -v text="$work/load.txt" -v json="$work/load.json" '
		function row(name, r, b, s) { printf "%-8s  %9d  %8.2f  %8.3f  %7.2f  %6.1f\n", name, r, b / 1e6, s, r / s / 1e6, b / 1e6 / s > text }
		BEGIN { printf "%-8s  %9s  %8s  %8s  %7s  %6s\n", "table", "rows", "MB", "seconds", "Mrows/s", "MB/s" > text }
		{ row($1, $2, $3, $4); R += $2; B += $3; S += $4
		  t = t sprintf("%s{\"table\":\"%s\",\"rows\":%d,\"bytes\":%d,\"seconds\":%.6f}", n++ ? "," : "", $1, $2, $3, $4) }
		END {
			row("total", R, B, S)
			printf "keys %.3f s, analyze %.3f s\n", keys, analyze > text
			printf "{\"tables\":[%s],\"total\":{\"rows\":%d,\"bytes\":%d,\"seconds\":%.6f,\"mb_per_s\":%.3f},\"keys_seconds\":%.6f,\"analyze_seconds\":%.6f}", t, R, B, S, B / 1e6 / S, keys, analyze > json
		}' "$work/load"
	load_json=$(cat "$work/load.json")
fi
echo "PostgreSQL $server_version, $workers workers per gather, data ${dir:-(loaded earlier)}, database $db"
if ((load)); then cat "$work/load.txt"; fi

# ---- queries --------------------------------------------------------------
# Picks qNN.sql files: all of them, or the numbers in --queries.
query_files=()
if [[ -z $queries ]]; then
	for f in "$queries_dir"/q[0-9][0-9].sql; do
		[[ -f $f ]] && query_files+=("$f")
	done
else
	IFS=, read -ra wanted <<<"$queries"
	for n in "${wanted[@]}"; do
		n=${n#q}
		[[ $n =~ ^[0-9]+$ ]] || bench_die "bad query number '$n'"
		f=$(printf '%s/q%02d.sql' "$queries_dir" $((10#$n)))
		[[ -f $f ]] || bench_die "no $f"
		query_files+=("$f")
	done
fi
((${#query_files[@]})) || bench_die "no queries found in $queries_dir"
[[ -z $results ]] || mkdir -p "$results"

# One psql session per query runs the file --reps times; "@rep" markers
# separate the \timing lines of each run. The first run's rows go to the
# answer file, later runs' to /dev/null.
: >"$work/times"
for f in "${query_files[@]}"; do
	name=$(basename "$f" .sql)
	out=${results:+$results/$name.csv}
	out=${out:-$work/$name.csv}
	{
		echo '\timing on'
		echo '\pset null NULL'
		for ((i = 1; i <= reps; i++)); do
			echo "\\echo @rep $i"
			if ((i == 1)); then echo "\\o $out"; else echo '\o /dev/null'; fi
			echo "\\i $f"
			echo '\o'
		done
	} >"$work/driver.sql"
	if "${psql_base[@]}" -d "$db" -A -t -F '|' -f "$work/driver.sql" >"$work/timing" 2>"$work/error"; then
		rows=$(wc -l <"$out")
		best=$(awk '/^@rep/ { if (n == 1 || (n > 1 && ms < best)) best = ms; n++; ms = 0; next }
			/^Time: / { ms += $2 }
			END { if (n == 1 || ms < best) best = ms; printf "%.3f", best }' "$work/timing")
		echo "$name $best $rows" >>"$work/times"
	else
		echo "error in $name: $(head -c 300 "$work/error")" >&2
		echo "$name - -" >>"$work/times"
	fi
done

awk -v version="$server_version" -v workers="$workers" -v reps="$reps" -v dir="$dir" -v keys="$keys" -v load="$load_json" '
	BEGIN { printf "%-5s  %10s  %6s\n%-5s  %10s  %6s\n", "query", "best ms", "rows", "-----", "----------", "------" }
	{
		printf "%-5s  %10s  %6s\n", $1, $2, $3
		if ($2 == "-") q = q sprintf("%s{\"query\":\"%s\",\"best_ms\":null,\"rows\":null}", n++ ? "," : "", $1)
		else { q = q sprintf("%s{\"query\":\"%s\",\"best_ms\":%s,\"rows\":%d}", n++ ? "," : "", $1, $2, $3); total += $2 }
	}
	END {
		printf "%-5s  %10.3f\n", "total", total
		printf "{\"harness\":\"pg-tpch\",\"postgres\":\"%s\",\"workers\":%d,\"reps\":%d,\"keys\":\"%s\",\"dir\":\"%s\",\"load\":%s,\"queries\":[%s],\"total_ms\":%.3f}\n", version, workers, reps, keys, dir, load, q, total
	}' "$work/times" | tee "$work/report"
[[ -z $json ]] || tail -n 1 "$work/report" >"$json"
if grep -q ' - -$' "$work/times"; then exit 1; fi

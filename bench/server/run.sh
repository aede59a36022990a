#!/usr/bin/env bash
# pgbench against `rackdb server` and against PostgreSQL 15 on the same
# machine: custom scripts select1.sql (protocol round trip) and q06.sql
# (TPC-H Q6 at --sf), for each client count and protocol mode, -T seconds
# each. rackdb serves an in-memory instance filled by CALL dbgen; PostgreSQL
# is a private cluster (bench/pg/setup.sh) loaded by bench/pg/tpch.sh from
# the same dbgen data (`rackdb tpch gen`).
#
# usage: run.sh [--sf 0.1] [--time 10] [--clients "1 8 32"]
#               [--modes "simple extended"] [--scripts "select1 q06"] [--no-pg]
# Needs: a built rackdb ($RACKDB or build/release/rackdb), pgbench
# (Debian: postgresql-client-common/postgresql-15), postgresql-15.
# Prints one line per run and a JSON line at the end.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../lib/common.sh"
RACKDB=${RACKDB:-$here/../../build/release/rackdb}
sf=0.1
secs=10
clients="1 8 32"
modes="simple extended"
scripts="select1 q06"
with_pg=1
while (($#)); do
	case $1 in
	--sf) sf=$2; shift 2 ;;
	--time) secs=$2; shift 2 ;;
	--clients) clients=$2; shift 2 ;;
	--modes) modes=$2; shift 2 ;;
	--scripts) scripts=$2; shift 2 ;;
	--no-pg) with_pg=0; shift ;;
	-h | --help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) bench_die "unknown argument '$1'" ;;
	esac
done
[[ -x $RACKDB ]] || bench_die "no rackdb at $RACKDB (set RACKDB)"
command -v pgbench >/dev/null || bench_die "pgbench not found (apt-get install postgresql-15)"

work=$(mktemp -d /tmp/rackdb-bench-server.XXXXXX)
rackdb_pid=
pg_datadir=
cleanup() {
	[[ -z $rackdb_pid ]] || { kill -TERM "$rackdb_pid" 2>/dev/null; wait "$rackdb_pid" 2>/dev/null || true; }
	[[ -z $pg_datadir ]] || "$here/../pg/stop.sh" --datadir "$pg_datadir" --remove >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT

rport=$(bench_free_port 55432)
"$RACKDB" server --port "$rport" 2>"$work/rackdb.log" &
rackdb_pid=$!
for _ in $(seq 100); do grep -q listening "$work/rackdb.log" && break; sleep 0.1; done
psql -X -q -h 127.0.0.1 -p "$rport" -U bench -c "CALL dbgen(sf = $sf)"

targets="rackdb:$rport"
if ((with_pg)); then
	mkdir -p "$work/tbl"
	"$RACKDB" tpch gen --sf "$sf" --out "$work/tbl" >/dev/null
	line=$("$here/../pg/setup.sh" | tail -1)
	pport=$(sed 's/.*port=\([0-9]*\).*/\1/' <<<"$line")
	pg_datadir=$(sed 's/.*datadir=\([^ ]*\).*/\1/' <<<"$line")
	"$here/../pg/tpch.sh" --dir "$work/tbl" --port "$pport" --db tpch --queries 6 --reps 1 >/dev/null
	targets="$targets postgres:$pport"
fi

json=
printf '%-8s %-8s %-9s %7s %12s %12s\n' server script mode clients tps latency_ms
for target in $targets; do
	name=${target%%:*}
	port=${target#*:}
	db=tpch
	[[ $name == rackdb ]] && db=bench
	user=postgres
	[[ $name == rackdb ]] && user=bench
	for script in $scripts; do
		for mode in $modes; do
			for c in $clients; do
				j=$((c < 4 ? c : 4))
				out=$(pgbench -n -h 127.0.0.1 -p "$port" -U "$user" -d "$db" -f "$here/$script.sql" \
					-c "$c" -j "$j" -T "$secs" -M "$mode" 2>&1) || { echo "$out" >&2; continue; }
				tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' <<<"$out" | tail -1)
				lat=$(sed -n 's/^latency average = \([0-9.]*\) ms/\1/p' <<<"$out")
				printf '%-8s %-8s %-9s %7d %12.1f %12.3f\n' "$name" "$script" "$mode" "$c" "$tps" "$lat"
				json="$json${json:+,}{\"server\":\"$name\",\"script\":\"$script\",\"mode\":\"$mode\",\"clients\":$c,\"tps\":$tps,\"latency_ms\":$lat}"
			done
		done
	done
done
echo "{\"harness\":\"server-pgbench\",\"sf\":$sf,\"seconds\":$secs,\"runs\":[$json]}"

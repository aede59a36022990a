#!/bin/bash
# TPC-H Q1 and Q6 (the single-table queries) on rackdb and DuckDB: same data
# (dbgen output made by `rackdb tpch gen`), same threads, best of R runs.
# Prints both times, the ratio, rackdb's compile share, and Q6's bytes of
# columns read per second beside a plain C read loop (bench_memread).
#
#   bench/tpch_single/run.sh [--sf 1] [--threads N] [--reps 5] [--build DIR] [--data DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
sf=1
threads=$(nproc)
reps=5
build="$root/build/release"
data=""
while [ $# -gt 0 ]; do
    case "$1" in
    --sf) sf=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --data) data=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
rackdb="$build/rackdb"
memread="$build/bench/tpch_single/bench_memread"
[ -x "$rackdb" ] || { echo "no $rackdb (build it first)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -z "$data" ]; then
    data="$work/data"
    mkdir -p "$data"
    "$rackdb" tpch gen --sf "$sf" --out "$data" > /dev/null
fi

"$rackdb" tpch run --sf "$sf" --data "$data" --queries 1,6 --threads "$threads" \
    --reps "$reps" --json "$work/rackdb.json" > "$work/rackdb.txt"
"$root/bench/duckdb/setup.sh" > /dev/null
node "$root/bench/duckdb/tpch.mjs" --dir "$data" --threads "$threads" --reps "$reps" \
    --queries 1,6 --json "$work/duckdb.json" > "$work/duckdb.txt"
mem=""
[ -x "$memread" ] && mem=$("$memread" 6001215 "$threads" 5)

RJ="$work/rackdb.json" DJ="$work/duckdb.json" MEM="$mem" SF="$sf" THREADS="$threads" node -e '
const fs = require("fs");
const r = JSON.parse(fs.readFileSync(process.env.RJ));
const d = JSON.parse(fs.readFileSync(process.env.DJ));
const mem = process.env.MEM ? JSON.parse(process.env.MEM) : null;
console.log(`TPC-H SF ${process.env.SF}, ${process.env.THREADS} threads (best of ${r.reps})`);
console.log("query  rackdb ms  compile ms  compile %  duckdb ms  rackdb/duckdb  status");
for (const q of r.queries) {
  const name = "q" + String(q.query).padStart(2, "0");
  const dq = d.queries.find((x) => x.query === name);
  const dm = dq ? dq.best_ms : NaN;
  console.log(`${name.padEnd(6)} ${q.best_ms.toFixed(2).padStart(9)} ${q.compile_ms.toFixed(2).padStart(11)}` +
    ` ${(100 * q.compile_ms / q.best_ms).toFixed(1).padStart(9)} ${dm.toFixed(2).padStart(10)}` +
    ` ${(q.best_ms / dm).toFixed(2).padStart(14)}  ${q.status}`);
  if (q.query === 6 && mem) {
    const rows = 6001215 * Number(process.env.SF);
    const gbs = rows * 28 / ((q.best_ms - q.compile_ms) / 1e3) / 1e9;
    console.log(`q06 columns read: ${gbs.toFixed(2)} GB/s excluding compile; plain C read loop: ` +
      `${mem.gb_per_s.toFixed(2)} GB/s (${(100 * gbs / mem.gb_per_s).toFixed(0)}%)`);
  }
}'

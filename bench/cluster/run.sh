#!/usr/bin/env bash
# bench/cluster/run.sh — TPC-H on local clusters of several sizes: per query
# the best time (measured at the client) and the bytes moved between
# servers, one column pair per cluster size, with the load average beside
# every run (the machine is shared; a run under load is noise).
#
#   bench/cluster/run.sh [--rackdb PATH] [--sf 1] [--servers 1,2,4]
#                        [--threads 2] [--reps 3] [--queries 1,6] [--out DIR]
#
# Each size is one `rackdb tpch run --servers N --json DIR/servers-N.json`
# (every server generates its own chunk; nation and region whole on each);
# the table is made from those files. --rackdb can name two programs
# (PATH_A,PATH_B): each size then runs A, then B, back to back, and the table
# has both, for a before/after comparison under the same load.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
rackdb="$here/../../build/release/rackdb"
sf=1
servers=1,2,4
threads=2
reps=3
queries=""
out=""
while [ $# -gt 0 ]; do
    case "$1" in
    --rackdb) rackdb=$2; shift 2 ;;
    --sf) sf=$2; shift 2 ;;
    --servers) servers=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --queries) queries=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
[ -n "$out" ] || out=$(mktemp -d "${TMPDIR:-/tmp}/rackdb-cluster-bench.XXXXXX")
mkdir -p "$out"
IFS=, read -r -a programs <<< "$rackdb"
IFS=, read -r -a sizes <<< "$servers"

runs=()
for n in "${sizes[@]}"; do
    for k in "${!programs[@]}"; do
        tag="servers-$n"
        [ "${#programs[@]}" -gt 1 ] && tag="$tag-$k"
        args=(tpch run --sf "$sf" --servers "$n" --threads "$threads" --reps "$reps"
              --json "$out/$tag.json")
        [ -n "$queries" ] && args+=(--queries "$queries")
        echo "== ${programs[$k]} $n servers; load before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
        "${programs[$k]}" "${args[@]}" > "$out/$tag.txt"
        echo "   load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
        echo "$(cut -d' ' -f1-3 /proc/loadavg)" > "$out/$tag.load"
        runs+=("$tag")
    done
done

# The table: per query, per run, best ms and MB moved.
python3 - "$out" "${runs[@]}" << 'EOF'
import json, sys
out, runs = sys.argv[1], sys.argv[2:]
data = {r: json.load(open(f"{out}/{r}.json")) for r in runs}
load = {r: open(f"{out}/{r}.load").read().strip() for r in runs}
print("| query | " + " | ".join(f"{r} ms | {r} MB" for r in runs) + " |")
print("|---|" + "---|---|" * len(runs))
qs = sorted({q["query"] for d in data.values() for q in d["queries"]})
tot = {r: [0.0, 0] for r in runs}
for q in qs:
    cells = []
    for r in runs:
        e = next((x for x in data[r]["queries"] if x["query"] == q), None)
        if not e or e["status"] not in ("ok", "unchecked"):
            cells += ["failed", "-"]
            continue
        tot[r][0] += e["best_ms"]
        tot[r][1] += e["shuffle_bytes"]
        cells += [f"{e['best_ms']:.0f}", f"{e['shuffle_bytes'] / 1e6:.2f}"]
    print(f"| q{q:02d} | " + " | ".join(cells) + " |")
print("| sum | " + " | ".join(f"{tot[r][0]:.0f} | {tot[r][1] / 1e6:.1f}" for r in runs) + " |")
print()
for r in runs:
    print(f"{r}: dbgen {data[r]['load_ms'] / 1e3:.1f} s, load average after the run {load[r]}")
EOF
echo "(JSON and text in $out)" >&2

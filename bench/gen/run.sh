#!/bin/bash
# bench/gen/run.sh — TPC-H generation speed: per-table rows/s and MB/s
# (bench_gen), then the wall time of the whole `rackdb tpch gen` command.
#
#   bench/gen/run.sh [BUILD_DIR] [SF] [OUT_DIR]
#
# BUILD_DIR defaults to build/release; OUT_DIR to a temporary directory
# (files are removed afterwards).
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$here/build/release}
sf=${2:-1}
out=${3:-}
tmp=""
if [ -z "$out" ]; then
    tmp=$(mktemp -d /tmp/bench_gen_run.XXXXXX)
    out=$tmp
    trap 'rm -rf "$tmp"' EXIT
fi
bench=$(find "$build" -name bench_gen -type f -perm -u+x | head -1)
[ -n "$bench" ] || { echo "bench_gen not built in $build (cmake --build $build --target bench_gen)"; exit 1; }
"$bench" --sf "$sf" --out "$out" --memory

if [ -x "$build/rackdb" ]; then
    start=$(date +%s.%N)
    "$build/rackdb" tpch gen --sf "$sf" --out "$out"
    end=$(date +%s.%N)
    echo "rackdb tpch gen --sf $sf: $(echo "$end - $start" | bc) s wall ($(nproc) cores)"
    rm -f "$out"/*.tbl
fi

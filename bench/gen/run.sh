#!/bin/bash
# bench/gen/run.sh — TPC-H generation speed: per-table rows/s and MB/s as
# .tbl files and straight into memory, on 1 and 2 threads (bench_gen), then
# the wall time of the whole `rackdb tpch gen` command and of
# `CALL dbgen(sf = SF)` in the shell, each with the load average next to it
# (figures taken on a busy machine say little; bench_gen also prints CPU
# seconds, which suffer less from other load).
#
#   bench/gen/run.sh [BUILD_DIR] [SF] [THREADS] [OUT_DIR]
#
# BUILD_DIR defaults to build/release, SF to 1, THREADS to "1,2"; OUT_DIR to
# a temporary directory (files are removed afterwards).
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$here/build/release}
sf=${2:-1}
threads=${3:-1,2}
out=${4:-}
tmp=""
if [ -z "$out" ]; then
    tmp=$(mktemp -d /tmp/bench_gen_run.XXXXXX)
    out=$tmp
    trap 'rm -rf "$tmp"' EXIT
fi
load() { cut -d' ' -f1-3 /proc/loadavg; }
bench=$(find "$build" -name bench_gen -type f -perm -u+x | head -1)
[ -n "$bench" ] || { echo "bench_gen not built in $build (cmake --build $build --target bench_gen)"; exit 1; }
"$bench" --sf "$sf" --threads "$threads" --out "$out" --mode both

if [ -x "$build/rackdb" ]; then
    echo
    echo "whole commands, $(nproc) cores:"
    for i in 1 2 3; do
        before=$(load)
        start=$(date +%s.%N)
        "$build/rackdb" tpch gen --sf "$sf" --out "$out" 2>/dev/null
        end=$(date +%s.%N)
        echo "  rackdb tpch gen --sf $sf: $(echo "$end - $start" | bc) s wall (load $before)"
        rm -f "$out"/*.tbl
    done
    for i in 1 2 3; do
        before=$(load)
        ms=$("$build/rackdb" -q -c ".timer on" -c "call dbgen(sf = $sf)" | sed -n 's/^Time: //p')
        echo "  CALL dbgen(sf = $sf): $ms (shell .timer, load $before)"
    done
fi

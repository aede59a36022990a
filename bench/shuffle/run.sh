#!/usr/bin/env bash
# bench/shuffle/run.sh — all-to-all shuffle of 1 GiB (in total) among 2, 3
# and 4 local processes: the multiplexer (schedule on and off) against a
# plain-socket all-to-all between the same processes, and MPI_Alltoallv when
# OpenMPI is installed, for message sizes 64 KiB .. 2 MiB.
#
#   bench/shuffle/run.sh BUILD_DIR [TOTAL_MB] [RANKS...]
#
# Every figure is aggregate network throughput: the bytes that cross
# between processes (TOTAL * (n-1)/n) divided by the slowest rank's time
# from "all connected" to "all received". Loopback on one machine: the
# processes share its cores, so this measures software overhead, not a NIC.
set -u
BUILD=${1:?usage: run.sh BUILD_DIR [TOTAL_MB] [RANKS...]}
TOTAL_MB=${2:-1024}
shift $(($# >= 2 ? 2 : $#))
RANKS=("$@")
[ ${#RANKS[@]} -gt 0 ] || RANKS=(2 3 4)
HERE=$(cd "$(dirname "$0")" && pwd)
MUX_NODE=$BUILD/bench/shuffle/bench_shuffle_mux
RAW=$BUILD/bench/shuffle/bench_shuffle_raw
RACKDB_BUILD=$BUILD
. "$HERE/../../tests/net/mux_lib.sh"
[ -x "$MUX_NODE" ] && [ -x "$RAW" ] || fail "build bench_shuffle_mux and bench_shuffle_raw in $BUILD"

MPI=
if command -v mpicc >/dev/null && command -v mpirun >/dev/null; then
    MPI=$MUX_TMP/mpi_alltoallv
    mpicc -O2 -o "$MPI" "$HERE/mpi_alltoallv.c" || MPI=
fi

# run_ranks N PROGRAM ARGS...: runs N ranks; prints the slowest rank's seconds.
run_ranks() {
    local n=$1 prog=$2 cluster r pids=() max=0 s
    shift 2
    cluster=$(mux_cluster "$n")
    for ((r = 0; r < n; r++)); do
        "$prog" --cluster "$cluster" --rank "$r" "$@" >"$MUX_TMP/r$r.log" 2>&1 &
        pids+=($!)
    done
    for ((r = 0; r < n; r++)); do
        wait "${pids[$r]}" || { cat "$MUX_TMP/r$r.log" >&2; fail "rank $r of $prog failed"; }
        s=$(grep -o 'in [0-9.]* s' "$MUX_TMP/r$r.log" | awk '{print $2}')
        max=$(awk -v a="$max" -v b="$s" 'BEGIN { print (b > a ? b : a) }')
    done
    echo "$max"
}

gbps() { # n seconds
    awk -v n="$1" -v s="$2" -v mb="$TOTAL_MB" \
        'BEGIN { printf "%.2f", mb * 1048576 * (n - 1) / n / s / 1e9 }'
}

printf '%-5s %-8s %12s %12s %12s %12s %10s %10s\n' ranks msg "mux sched" "mux nosched" "raw tcp" \
    "mpi a2av" "sched/raw" "nosch/raw"
for n in "${RANKS[@]}"; do
    per_rank=$(awk -v t="$TOTAL_MB" -v n="$n" 'BEGIN { print t / n }')
    for kb in 64 256 512 1024 2048; do
        # A pool of about 32 MiB per rank and credits for 8 MiB per peer.
        pool=$((32768 / kb)); [ $pool -lt 8 ] && pool=8
        cred=$((8192 / kb)); [ $cred -lt 4 ] && cred=4
        common=(--mb "$per_rank" --msg-kb "$kb" --workers 2 --no-verify --pool "$pool"
                --credits "$cred" --burst "$cred" --alarm 300)
        s_on=$(run_ranks "$n" "$MUX_NODE" "${common[@]}")
        s_off=$(run_ranks "$n" "$MUX_NODE" "${common[@]}" --no-schedule)
        s_raw=$(run_ranks "$n" "$RAW" --mb "$per_rank" --msg-kb "$kb")
        mpi=-
        if [ -n "$MPI" ]; then
            s_mpi=$(timeout 300 mpirun --allow-run-as-root --oversubscribe -np "$n" \
                --mca btl tcp,self "$MPI" --mb "$per_rank" --msg-kb "$kb" 2>/dev/null |
                grep -o 'in [0-9.]* s' | awk '{print $2}')
            [ -n "$s_mpi" ] && mpi="$(gbps "$n" "$s_mpi") GB/s"
        fi
        g_on=$(gbps "$n" "$s_on")
        g_off=$(gbps "$n" "$s_off")
        g_raw=$(gbps "$n" "$s_raw")
        printf '%-5s %-8s %12s %12s %12s %12s %10s %10s\n' "$n" "${kb}K" "$g_on GB/s" \
            "$g_off GB/s" "$g_raw GB/s" "$mpi" \
            "$(awk -v a="$g_on" -v b="$g_raw" 'BEGIN { printf "%.2f", a / b }')" \
            "$(awk -v a="$g_off" -v b="$g_raw" 'BEGIN { printf "%.2f", a / b }')"
    done
done

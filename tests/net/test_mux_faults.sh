# test_mux_faults.sh — failures during a shuffle among rank processes:
#   kill -9 of one rank  -> the others report an error naming it, exit cleanly
#   SIGSTOP of one rank  -> the others time out with an error naming it
#   garbage and a wrong protocol version sent to a rank's port, before and
#   during the shuffle -> that connection is closed and logged; the shuffle
#   still completes and verifies.
# Every survivor must exit within 10 s of the fault.
set -u
. "$RACKDB_SOURCE/tests/net/mux_lib.sh"
[ -x "$MUX_NODE" ] || fail "mux_node not built at $MUX_NODE"

# A slow shuffle (a few seconds) so that the fault lands in the middle.
SLOW=(--mb 64 --msg-kb 64 --workers 2 --delay-us 4000 --timeout-ms 2000 --heartbeat-ms 200)

# fault_run N VICTIM SIGNAL EXPECT: starts N ranks, sends SIGNAL to VICTIM
# mid-shuffle, and checks that every other rank fails with EXPECT in its error.
# A run whose rank lost the race for its port (see mux_ports) is started
# again on new ports, up to 3 times; any other failure to connect fails.
fault_run() {
    local n=$1 victim=$2 sig=$3 expect=$4 cluster r pids=() logs=() rc attempt
    for attempt in 1 2 3; do
        cluster=$(mux_cluster "$n")
        pids=()
        logs=()
        for ((r = 0; r < n; r++)); do
            mux_start "$cluster" "$r" "$MUX_TMP/$sig.$r.log" "${SLOW[@]}"
            pids+=("$MUX_LAST_PID")
            logs+=("$MUX_TMP/$sig.$r.log")
        done
        # Names, not a glob: each rank's shell creates its log only after
        # the fork, so a glob expanded now could still match nothing.
        mux_wait_connected "${logs[@]}"
        rc=$?
        [ $rc = 0 ] && break
        [ $rc = 2 ] || fail "$sig: ranks did not connect"
        echo "note: $sig lost a port race; retrying on new ports" >&2
        mux_cleanup_ranks
    done
    [ $rc = 0 ] || fail "$sig: ranks did not connect after 3 tries"
    sleep 0.5
    kill -0 "${pids[$victim]}" 2>/dev/null || fail "$sig: victim exited early"
    kill "-$sig" "${pids[$victim]}"
    # Every survivor fails; at least one names the victim. A survivor may
    # instead name another survivor that failed first and closed its
    # connections (with SIGSTOP, rank 0's 2 s timeout can fire before rank
    # 2's, and rank 2 then sees rank 0 leave): the fault's cascade, which
    # is a correct report too, and depends only on which timer fires first.
    local named=0 log
    for ((r = 0; r < n; r++)); do
        [ "$r" = "$victim" ] && continue
        log="$MUX_TMP/$sig.$r.log"
        mux_wait_bounded "${pids[$r]}" 10
        rc=$?
        [ $rc = 124 ] && fail "$sig: rank $r still running 10 s after the fault"
        [ $rc = 3 ] || { cat "$log" >&2; fail "$sig: rank $r exited $rc, expected 3"; }
        if grep -q "^rank $r: error: .*$expect" "$log"; then
            named=$((named + 1))
        elif ! grep -Eq "^rank $r: error: server [0-9]+ \(127.0.0.1:[0-9]*\).*(closed the connection|Connection reset)" "$log" ||
            grep -q "^rank $r: error: server $victim " "$log"; then
            cat "$log" >&2
            fail "$sig: rank $r reported neither '$expect' nor another survivor leaving"
        fi
        echo "ok: $sig: $(grep "^rank $r: error" "$log")"
    done
    [ $named -ge 1 ] || fail "$sig: no survivor reported '$expect'"
    mux_cleanup_ranks
}

mux_cleanup_ranks() {
    local pid
    for pid in "${MUX_PIDS[@]}"; do
        kill -CONT "$pid" 2>/dev/null
        kill -9 "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    done
    MUX_PIDS=()
}

fault_run 3 2 KILL "server 2 (127.0.0.1:[0-9]*)"
fault_run 3 1 STOP "server 1 (127.0.0.1:[0-9]*).*did not answer"

# Garbage: before the cluster is up (rank 0 alone) and in the middle.
cluster=$(mux_cluster 2)
port0=$(sed -n 1p "$cluster" | cut -d: -f2)
mux_start "$cluster" 0 "$MUX_TMP/garbage.0.log" --mb 16 --msg-kb 64 --delay-us 3000
pid0=$MUX_LAST_PID
for i in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$port0") 2>/dev/null && break; sleep 0.1; done
printf 'GET / HTTP/1.0\r\n\r\nthis is not a frame header.....' >"/dev/tcp/127.0.0.1/$port0"
mux_start "$cluster" 1 "$MUX_TMP/garbage.1.log" --mb 16 --msg-kb 64 --delay-us 3000
pid1=$MUX_LAST_PID
sleep 0.4
printf '\xff\xfe\xfd\xfc%.0s' $(seq 64) >"/dev/tcp/127.0.0.1/$port0"
# A well-formed magic with protocol version 9.
printf 'RDBX\x09\x04\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x04\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00' \
    >"/dev/tcp/127.0.0.1/$port0"
for r in 0 1; do
    pid=$([ $r = 0 ] && echo "$pid0" || echo "$pid1")
    mux_wait_bounded "$pid" 30
    rc=$?
    [ $rc = 0 ] || { cat "$MUX_TMP/garbage.$r.log" >&2; fail "garbage: rank $r exited $rc"; }
    grep -q "^rank $r ok" "$MUX_TMP/garbage.$r.log" || fail "garbage: rank $r not verified"
done
MUX_PIDS=()
log="$MUX_TMP/garbage.0.log"
[ "$(grep -c 'closing connection from 127.0.0.1:[0-9]*: bad magic' "$log")" = 2 ] ||
    { cat "$log" >&2; fail "garbage: two bad-magic closes not logged"; }
grep -q 'closing connection from 127.0.0.1:[0-9]*: wrong protocol version 9' "$log" ||
    { cat "$log" >&2; fail "garbage: wrong version not logged"; }
echo "ok: garbage connections closed and logged; shuffle verified"
grep 'closing connection' "$log"

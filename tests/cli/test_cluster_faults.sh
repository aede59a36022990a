#!/bin/bash
# test_cluster_faults.sh — `rackdb server --cluster` when servers fail.
# Three servers on loopback hold SF 0.01 (CALL dbgen through the
# coordinator, each rank its chunk), then:
#   kill -9 of rank 2 while a query waits for it -> the client gets an
#     error naming server 2, ranks 0 and 1 stay up; rank 2 started again
#     rejoins ("the cluster is whole again"), and after CALL dbgen the
#     counts are right again;
#   SIGSTOP of rank 1 while a query waits for it -> an error naming server
#     1 ("did not answer"); after SIGCONT the cluster is whole again and
#     rank 1 still has its rows;
#   garbage sent to rank 1's cluster port -> that connection is closed and
#     logged, the next query is right;
#   a query sent to rank 1 -> refused, naming the coordinator;
#   --transport verbs on a machine without an RDMA device -> the server
#     does not start and says why.
# Every wait is bounded, so a hang fails the test instead of stalling it.
set -u
. "$RACKDB_SOURCE/tests/cli/server_lib.sh"
set +e
need_psql

N=3
CLUSTER=$TMP/cluster
MUXP=()
PORTS=()
PIDS=()
for ((r = 0; r < N; r++)); do
    MUXP+=("$(free_port)")
    PORTS+=("$(free_port)")
done
for ((r = 0; r < N; r++)); do echo "127.0.0.1:${MUXP[$r]}"; done > "$CLUSTER"

cleanup() {
    if [ "$FAILED" != 0 ]; then
        for f in "$TMP"/rank*.log; do
            echo "--- $f" >&2
            tail -n 30 "$f" >&2
        done
    fi
    for p in "${PIDS[@]}"; do kill -CONT "$p" 2> /dev/null; kill -TERM "$p" 2> /dev/null; done
    for p in "${PIDS[@]}"; do wait "$p" 2> /dev/null; done
    rm -rf "$TMP"
}
trap cleanup EXIT

start_rank() { # start_rank R LOG
    "$RACKDB" server --cluster "$CLUSTER" --rank "$1" --port "${PORTS[$1]}" --transport tcp \
        2> "$2" &
    PIDS[$1]=$!
}

q() { # q RANK SQL...: psql on that rank, one row per line, fields joined by |
    local r=$1
    shift
    PGCONNECT_TIMEOUT=10 timeout 120 psql -X -q -A -t -h 127.0.0.1 -p "${PORTS[$r]}" \
        -U test -d test -v ON_ERROR_STOP=1 "$@" 2>&1
}

# Waits (up to 60 s) until the coordinator runs queries on every server.
wait_whole() {
    for _ in $(seq 1 300); do
        if [ "$(q 0 -c 'SELECT 1' 2> /dev/null)" = "1" ]; then return 0; fi
        sleep 0.2
    done
    echo "the cluster did not become whole again" >&2
    FAILED=1
    return 1
}

alive() { kill -0 "$1" 2> /dev/null; }

for ((r = 0; r < N; r++)); do start_rank "$r" "$TMP/rank$r.log"; done
wait_whole || exit 1
check "dbgen" "ok" "$(q 0 -c 'CALL dbgen(sf = 0.01)' && echo ok)"
check "lineitem rows" "60175" "$(q 0 -c 'SELECT count(*) FROM lineitem')"
check "nation rows" "25" "$(q 0 -c 'SELECT count(*) FROM nation')"

# The fault must land while the query runs, whatever the machine's speed:
# the victim is stopped first, so the query (its plan shipped, the other
# servers ready) waits for it; then it is killed, or left stopped.
QUERY="SELECT l_returnflag, count(*) FROM lineitem, orders WHERE l_orderkey = o_orderkey GROUP BY l_returnflag"
EXPECT=$'A|14876\nN|30397\nR|14902'
check "the query's rows" "$EXPECT" "$(q 0 -c "$QUERY ORDER BY 1")"

# --- kill -9 of rank 2 mid-query ---------------------------------------------------------
kill -STOP "${PIDS[2]}"
q 0 -c "$QUERY" > "$TMP/kill.out" &
client=$!
sleep 1
kill -9 "${PIDS[2]}"
wait "${PIDS[2]}" 2> /dev/null
wait "$client"
cat "$TMP/kill.out"
grep -q "server 2 (127.0.0.1:${MUXP[2]})" "$TMP/kill.out" ||
    check "kill -9: error names server 2" "yes" "no"
alive "${PIDS[0]}" && alive "${PIDS[1]}" || check "kill -9: ranks 0 and 1 stay up" "yes" "no"
out=$(q 0 -c 'SELECT count(*) FROM lineitem')
case "$out" in
*"the cluster is not whole"*) ;;
*) check "while rank 2 is away" "an error saying the cluster is not whole" "$out" ;;
esac
start_rank 2 "$TMP/rank2b.log"
wait_whole || exit 1
check "rejoined: dbgen" "ok" "$(q 0 -c 'CALL dbgen(sf = 0.01)' && echo ok)"
check "rejoined: lineitem rows" "60175" "$(q 0 -c 'SELECT count(*) FROM lineitem')"

# --- SIGSTOP of rank 1 mid-query ---------------------------------------------------------
kill -STOP "${PIDS[1]}"
q 0 -c "$QUERY" > "$TMP/stop.out" &
client=$!
wait "$client"
cat "$TMP/stop.out"
grep -q "server 1 (127.0.0.1:${MUXP[1]}) did not answer" "$TMP/stop.out" ||
    check "SIGSTOP: error names server 1" "yes" "no"
alive "${PIDS[0]}" && alive "${PIDS[2]}" || check "SIGSTOP: ranks 0 and 2 stay up" "yes" "no"
kill -CONT "${PIDS[1]}"
wait_whole || exit 1
check "resumed: lineitem rows" "60175" "$(q 0 -c 'SELECT count(*) FROM lineitem')"
grep -q "the cluster is whole again" "$TMP/rank1.log" ||
    check "rank 1 logs that it rejoined" "yes" "no"

# --- garbage to rank 1's cluster port ------------------------------------------------------
printf 'GET / HTTP/1.0\r\n\r\nnot a frame of the rackdb multiplexer at all' \
    > "/dev/tcp/127.0.0.1/${MUXP[1]}"
for _ in $(seq 1 50); do
    grep -q "closing connection from 127.0.0.1:[0-9]*: bad magic" "$TMP/rank1.log" && break
    sleep 0.1
done
grep -q "closing connection from 127.0.0.1:[0-9]*: bad magic" "$TMP/rank1.log" ||
    check "garbage: logged and closed" "yes" "no"
check "after garbage: the query's rows" "$EXPECT" "$(q 0 -c "$QUERY ORDER BY 1")"
check "after garbage: lineitem rows" "60175" "$(q 0 -c 'SELECT count(*) FROM lineitem')"

# --- queries go to rank 0 -------------------------------------------------------------------
out=$(q 1 -c 'SELECT count(*) FROM lineitem')
case "$out" in
*"rank 1 of a cluster"*"rank 0 (127.0.0.1:${MUXP[0]}"*) ;;
*) check "rank 1 refuses queries" "an error naming rank 0" "$out" ;;
esac

# --- --transport verbs without an RDMA device ------------------------------------------------
if ls /sys/class/infiniband/* > /dev/null 2>&1; then
    echo "note: this machine has an RDMA device; the verbs start-up error is not tested"
else
    one=$TMP/one
    echo "127.0.0.1:$(free_port)" > "$one"
    out=$(timeout 30 "$RACKDB" server --cluster "$one" --rank 0 --port "$(free_port)" \
        --transport verbs 2>&1)
    rc=$?
    [ $rc -ne 0 ] || check "verbs: start-up fails" "non-zero" "$rc"
    case "$out" in
    *"cannot join the cluster"*"no RDMA device found"*) ;;
    *) check "verbs: says why" "no RDMA device found" "$out" ;;
    esac
fi

# --- everyone stops cleanly ------------------------------------------------------------------
for r in 0 1 2; do kill -TERM "${PIDS[$r]}"; done
for r in 0 1 2; do
    for _ in $(seq 1 300); do alive "${PIDS[$r]}" || break; sleep 0.1; done
    if alive "${PIDS[$r]}"; then
        check "rank $r stops within 30 s" "yes" "no"
    else
        wait "${PIDS[$r]}"
        check "rank $r exit status" "0" "$?"
    fi
done
PIDS=()
[ "$FAILED" = 0 ] && echo "cluster faults: all checks passed"
exit "$FAILED"

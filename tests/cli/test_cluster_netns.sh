#!/bin/bash
# test_cluster_netns.sh — a two-server rackdb cluster whose servers live in
# two network namespaces joined by a veth pair, so every exchange crosses a
# real (virtual) link with its own addresses instead of loopback, as it
# would between two machines. psql talks to the coordinator inside its
# namespace; each of the 22 TPC-H queries must return what one plain
# server returns on the same data (rows compared sorted: ties may come in
# either order; AVG's last digits may differ). Needs root and iproute2;
# anywhere else it says "skipped".
set -u
. "$RACKDB_SOURCE/tests/cli/server_lib.sh"
set +e
need_psql

if [ "$(id -u)" != 0 ] || ! command -v ip > /dev/null; then
    echo "skipped: needs root and iproute2"
    exit 0
fi
tag=$$
NS=(rdbclu-$tag-a rdbclu-$tag-b)
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill -TERM "$p" 2> /dev/null; done
    for p in "${PIDS[@]}"; do wait "$p" 2> /dev/null; done
    for ns in "${NS[@]}"; do ip netns del "$ns" 2> /dev/null; done
    stop_server
    rm -rf "$TMP"
}
trap cleanup EXIT
for ns in "${NS[@]}"; do
    if ! ip netns add "$ns" 2> /dev/null; then
        echo "skipped: cannot create network namespaces here"
        exit 0
    fi
done
net=$((tag % 200 + 20))
IP=("10.214.$net.1" "10.214.$net.2")
ip link add "rcl${tag}a" netns "${NS[0]}" type veth peer name "rcl${tag}b" netns "${NS[1]}" || {
    echo "cannot create the veth pair" >&2
    exit 1
}
for r in 0 1; do
    dev=rcl${tag}$([ $r = 0 ] && echo a || echo b)
    ip -n "${NS[$r]}" addr add "${IP[$r]}/24" dev "$dev"
    ip -n "${NS[$r]}" link set lo up
    ip -n "${NS[$r]}" link set "$dev" up
done

CLUSTER=$TMP/cluster
printf '%s:7300\n%s:7301\n' "${IP[0]}" "${IP[1]}" > "$CLUSTER"
for r in 0 1; do
    ip netns exec "${NS[$r]}" "$RACKDB" server --cluster "$CLUSTER" --rank $r --transport tcp \
        --host "${IP[$r]}" --port 5433 2> "$TMP/rank$r.log" &
    PIDS+=($!)
done

cq() { # cq SQL-ARGS...: psql to the coordinator, inside its namespace
    PGCONNECT_TIMEOUT=10 timeout 120 ip netns exec "${NS[0]}" psql -X -q -A -t -h "${IP[0]}" \
        -p 5433 -U test -d test -v ON_ERROR_STOP=1 "$@" 2>&1
}
sq() { # sq SQL-ARGS...: psql to the single plain server on loopback
    PGCONNECT_TIMEOUT=10 timeout 120 psql -X -q -A -t -h 127.0.0.1 -p "$PORT" -U test -d test \
        -v ON_ERROR_STOP=1 "$@" 2>&1
}

# same_rows A B: the same rows, fields equal as text or, where both parse as
# numbers with a fraction, within 1e-9 relative: AVG is a DOUBLE whose last
# digits depend on how the partial sums were combined.
same_rows() {
    python3 - "$1" "$2" << 'EOF'
import sys
a, b = (open(f).read().splitlines() for f in sys.argv[1:3])
def same(x, y):
    if x == y:
        return True
    try:
        fx, fy = float(x), float(y)
    except ValueError:
        return False
    return "." in x and abs(fx - fy) <= 1e-9 * max(abs(fx), abs(fy))
ok = len(a) == len(b) and all(
    len(ra) == len(rb) and all(map(same, ra, rb))
    for ra, rb in ((la.split("|"), lb.split("|")) for la, lb in zip(a, b)))
sys.exit(0 if ok else 1)
EOF
}

whole=no
for _ in $(seq 1 300); do
    if [ "$(cq -c 'SELECT 1' 2> /dev/null)" = "1" ]; then
        whole=yes
        break
    fi
    sleep 0.2
done
if [ $whole != yes ]; then
    cat "$TMP/rank0.log" "$TMP/rank1.log" >&2
    echo "the cluster did not become whole within 60 s" >&2
    exit 1
fi
grep -q "rank 0 of a cluster of 2" "$TMP/rank0.log" || check "rank 0 logs its place" "yes" "no"

start_server
check "cluster: dbgen" "ok" "$(cq -c 'CALL dbgen(sf = 0.01)' && echo ok)"
check "single: dbgen" "ok" "$(sq -c 'CALL dbgen(sf = 0.01)' && echo ok)"
check "cluster: lineitem rows" "60175" "$(cq -c 'SELECT count(*) FROM lineitem')"
check "cluster: orders rows" "15000" "$(cq -c 'SELECT count(*) FROM orders')"

for f in "$RACKDB_SHARED"/tpch/queries/q*.sql; do
    name=$(basename "$f" .sql)
    cq -f "$f" | sort > "$TMP/$name.cluster"
    sq -f "$f" | sort > "$TMP/$name.single"
    if ! [ -s "$TMP/$name.single" ] || grep -q "ERROR" "$TMP/$name.single"; then
        check "$name: the single server answers" "rows" "$(head -3 "$TMP/$name.single")"
    elif ! same_rows "$TMP/$name.single" "$TMP/$name.cluster"; then
        echo "FAIL $name: the cluster's rows differ from one server's"
        diff "$TMP/$name.single" "$TMP/$name.cluster" | head -10
        FAILED=1
    else
        echo "ok   $name ($(wc -l < "$TMP/$name.cluster") rows)"
    fi
done

# The rows crossed the veth link: rank 0's end received what the queries
# shuffled to it, well beyond heartbeats.
rx=$(ip -n "${NS[0]}" -s link show "rcl${tag}a" | awk '/RX:/ { getline; print $1; exit }')
[ "${rx:-0}" -ge 1000000 ] || check "bytes over the veth link" ">= 1000000" "${rx:-0}"
echo "ok   $rx bytes received over the veth link"

for r in 0 1; do
    kill -TERM "${PIDS[$r]}"
    wait "${PIDS[$r]}"
    check "rank $r exit status" "0" "$?"
done
PIDS=()
if [ $FAILED != 0 ]; then
    for r in 0 1; do
        echo "--- rank $r log"
        tail -20 "$TMP/rank$r.log"
    done
fi
exit $FAILED

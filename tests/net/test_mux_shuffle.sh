# test_mux_shuffle.sh — all-to-all shuffles among 2, 3 and 4 rank processes
# on loopback, with the round-robin schedule on and off, and a broadcast.
# Each rank verifies every received message (origin tag + CRC-32C of the
# body) and that every message meant for it arrived exactly once.
set -u
. "$RACKDB_SOURCE/tests/net/mux_lib.sh"
[ -x "$MUX_NODE" ] || fail "mux_node not built at $MUX_NODE"

for n in 2 3 4; do
    mux_run_all "$n" "shuffle-n$n-scheduled" --mb 6 --msg-kb 64 --workers 2
    mux_run_all "$n" "shuffle-n$n-unscheduled" --mb 6 --msg-kb 64 --workers 2 --no-schedule
done
# The switch works: scheduled runs went through phase rounds, the others not.
for n in 2 3 4; do
    grep -q "rounds [1-9]" "$MUX_TMP/shuffle-n$n-scheduled.0.log" || fail "n=$n: no schedule rounds"
    grep -q "rounds 0;" "$MUX_TMP/shuffle-n$n-unscheduled.0.log" || fail "n=$n: rounds without schedule"
done
# Messages smaller than a tag-and-body boundary case and a single worker.
mux_run_all 3 "shuffle-small-msgs" --mb 1 --msg-kb 1 --workers 1 --credits 2 --pool 4
# Broadcast: every message to every rank, serialized once.
mux_run_all 3 "broadcast-n3" --mb 2 --msg-kb 128 --workers 2 --broadcast
mux_run_all 2 "broadcast-n2-unscheduled" --mb 2 --msg-kb 128 --broadcast --no-schedule
# One rank alone: everything is local.
mux_run_all 1 "single-rank" --mb 2 --msg-kb 64
# Transport choice: without an RDMA device, verbs fails at start-up with a
# clear message and auto falls back to tcp.
if [ -z "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
    cluster=$(mux_cluster 2)
    "$MUX_NODE" --alarm 30 --cluster "$cluster" --rank 0 --transport verbs >"$MUX_TMP/verbs.log" 2>&1
    rc=$?
    [ $rc = 3 ] || fail "--transport verbs exited $rc, expected 3"
    grep -q "error: no RDMA device found; use --transport tcp" "$MUX_TMP/verbs.log" ||
        { cat "$MUX_TMP/verbs.log" >&2; fail "verbs: no clear error"; }
    echo "ok: $(cat "$MUX_TMP/verbs.log")"
    mux_run_all 2 "auto-falls-back-to-tcp" --mb 2 --msg-kb 64 --transport auto
    grep -q "transport tcp" "$MUX_TMP/auto-falls-back-to-tcp.1.log" || fail "auto did not pick tcp"
else
    echo "skipped verbs checks: this machine has an RDMA device"
fi
echo "all shuffles verified"

# mux_lib.sh — shared helpers of the multi-process multiplexer tests
# (sourced by tests/net/test_mux_*.sh and bench/shuffle/run.sh).
#
# Ranks run as background processes that end themselves after
# $MUX_RANK_TIMEOUT seconds (mux_node --alarm), so none outlives its test;
# mux_cleanup (installed as the EXIT trap) kills whatever is left.

MUX_NODE=${MUX_NODE:-${RACKDB_BUILD:-.}/tests/mux_node}
MUX_PIDS=()
MUX_TMP=$(mktemp -d "${TMPDIR:-/tmp}/rackdb-mux.XXXXXX")

mux_cleanup() {
    local pid
    for pid in "${MUX_PIDS[@]}"; do
        kill -CONT "$pid" 2>/dev/null
        kill -9 "$pid" 2>/dev/null
    done
    for pid in "${MUX_PIDS[@]}"; do wait "$pid" 2>/dev/null; done
    MUX_PIDS=()
    rm -rf "$MUX_TMP"
}
trap mux_cleanup EXIT

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# mux_ports N: N distinct TCP ports nobody listens on at 127.0.0.1, random in
# 20000..32767: below Linux's ephemeral range (32768..60999), so an outgoing
# connection elsewhere on the machine cannot take one between our probe and
# the rank's bind. Another test can still pick the same port: mux_run_all
# retries a scenario whose bind lost that race.
mux_ports() {
    local want=$1 got=() p q dup
    while [ ${#got[@]} -lt "$want" ]; do
        p=$((20000 + (RANDOM * 32768 + RANDOM) % 12768))
        dup=0
        for q in "${got[@]}"; do [ "$q" = "$p" ] && dup=1; done
        [ $dup = 0 ] || continue
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then got+=("$p"); fi
    done
    echo "${got[@]}"
}

# mux_cluster N [host]: writes a cluster file of N loopback ranks; prints its path.
mux_cluster() {
    local n=$1 host=${2:-127.0.0.1} f="$MUX_TMP/cluster.$RANDOM" p
    : >"$f"
    for p in $(mux_ports "$n"); do echo "$host:$p" >>"$f"; done
    echo "$f"
}

# mux_start CLUSTER RANK LOG ARGS...: starts one rank in the background; its
# pid is appended to MUX_PIDS and left in MUX_LAST_PID.
mux_start() {
    local cluster=$1 rank=$2 log=$3
    shift 3
    "$MUX_NODE" --alarm "${MUX_RANK_TIMEOUT:-60}" --cluster "$cluster" --rank "$rank" "$@" \
        >"$log" 2>&1 &
    MUX_LAST_PID=$!
    MUX_PIDS+=("$MUX_LAST_PID")
}

# mux_run_all N LABEL ARGS...: runs N ranks to completion; every rank must
# exit 0 and report its checksum-verified receipt. When a rank could not bind
# its port because another process took it after mux_ports probed it, the
# scenario is run again on new ports (up to 3 times); any other failure fails.
mux_run_all() {
    local n=$1 label=$2 attempt
    shift 2
    for attempt in 1 2 3; do
        mux_run_once "$n" "$label" "$@" && return 0
        grep -qs "Address already in use" "$MUX_TMP/$label".*.log || break
        echo "note: $label lost a port race; retrying on new ports" >&2
    done
    fail "$label"
}

# mux_run_once N LABEL ARGS...: one attempt of mux_run_all; non-zero on failure.
mux_run_once() {
    local n=$1 label=$2 cluster r pids=() rc=0
    shift 2
    cluster=$(mux_cluster "$n")
    for ((r = 0; r < n; r++)); do
        mux_start "$cluster" "$r" "$MUX_TMP/$label.$r.log" "$@"
        pids+=("$MUX_LAST_PID")
    done
    for ((r = 0; r < n; r++)); do
        if ! wait "${pids[$r]}"; then
            echo "--- rank $r of $label failed; log:" >&2
            cat "$MUX_TMP/$label.$r.log" >&2
            rc=1
        elif ! grep -q "^rank $r ok" "$MUX_TMP/$label.$r.log"; then
            cat "$MUX_TMP/$label.$r.log" >&2
            rc=1
        fi
    done
    MUX_PIDS=()
    [ $rc = 0 ] || return 1
    echo "ok: $label ($(grep -h '^rank 0 ok' "$MUX_TMP/$label.0.log" | sed 's/^rank 0 ok: //'))"
}

# mux_wait_bounded PID SECONDS: waits for PID to exit; returns its status, or
# 124 if it is still running after SECONDS.
mux_wait_bounded() {
    local pid=$1 limit=$2 i
    for ((i = 0; i < limit * 10; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -0 "$pid" 2>/dev/null && return 124
    wait "$pid"
}

# mux_wait_connected LOG...: waits (up to 30 s) until every rank's log says
# it is connected to the whole cluster; otherwise prints the logs and returns
# 1 (2 when a rank lost the race for its port: see mux_ports).
mux_wait_connected() {
    local i f ok
    for ((i = 0; i < 300; i++)); do
        ok=1
        for f in "$@"; do grep -q "connected$" "$f" 2>/dev/null || ok=0; done
        [ $ok = 1 ] && return 0
        grep -qs "Address already in use" "$@" && break
        sleep 0.1
    done
    for f in "$@"; do echo "--- $f:" >&2; cat "$f" >&2; done
    grep -qs "Address already in use" "$@" && return 2
    return 1
}

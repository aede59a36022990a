# server_lib.sh — sourced by tests/cli/test_server_*.sh: starts `rackdb
# server` on a free loopback port in the background, waits until it
# accepts connections, and stops it when the test exits.
#   start_server [server options...]   sets PORT, SERVER_PID, SERVER_LOG
#   pg ARGS...                          psql against it, no ~/.psqlrc
set -euo pipefail

: "${RACKDB:?RACKDB not set}"
TMP=$(mktemp -d)
SERVER_PID=
SERVER_LOG=$TMP/server.log

# Stops the server; SERVER_STATUS = its exit status.
SERVER_STATUS=
stop_server() {
    if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill -TERM "$SERVER_PID" 2>/dev/null || true
        SERVER_STATUS=0
        wait "$SERVER_PID" 2>/dev/null || SERVER_STATUS=$?
    fi
    SERVER_PID=
}
trap 'stop_server; rm -rf "$TMP"' EXIT

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start_server() {
    PORT=$(free_port)
    "$RACKDB" server --port "$PORT" "$@" 2> "$SERVER_LOG" &
    SERVER_PID=$!
    for _ in $(seq 1 100); do
        if grep -q "listening on" "$SERVER_LOG" 2>/dev/null; then return 0; fi
        if ! kill -0 "$SERVER_PID" 2>/dev/null; then
            cat "$SERVER_LOG" >&2
            echo "server did not start" >&2
            exit 1
        fi
        sleep 0.1
    done
    echo "server not ready after 10 s" >&2
    exit 1
}

pg() {
    PGCONNECT_TIMEOUT=10 psql -X -q -h 127.0.0.1 -p "$PORT" -v ON_ERROR_STOP=1 "$@"
}

need_psql() {
    if ! command -v psql > /dev/null 2>&1; then
        echo "skipped: psql not installed"
        exit 0
    fi
}

# check NAME EXPECTED ACTUAL
FAILED=0
check() {
    if [ "$2" == "$3" ]; then
        echo "ok   $1"
    else
        echo "FAIL $1"
        echo "  expected: $(printf '%q' "$2")"
        echo "  actual:   $(printf '%q' "$3")"
        FAILED=1
    fi
}

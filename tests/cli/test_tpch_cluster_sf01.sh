#!/bin/bash
# `rackdb tpch run --sf 0.1 --servers 2 --check`: all 22 queries on two
# local servers at SF 0.1 (seconds in a release build). Sanitizer builds
# generate the data ten times slower, so there the test only says it was
# skipped (test_tpch_cluster.sh runs the same path at SF 0.01 there).
set -u
if grep -q '^RACKDB_SANITIZE:BOOL=ON' "$RACKDB_BUILD/CMakeCache.txt" 2>/dev/null; then
    echo "skipped: sanitizer build"
    exit 0
fi
export TMPDIR=$(mktemp -d)
trap 'rm -rf "$TMPDIR"' EXIT
"$RACKDB" tpch run --sf 0.1 --servers 2 --check
rc=$?
if pgrep -f "$TMPDIR/rackdb-cluster" > /dev/null; then
    echo "servers left running" >&2
    rc=1
fi
exit $rc

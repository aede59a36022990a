#!/bin/bash
# `rackdb tpch run --sf 0.01 --servers 3 --check`: three local servers, each
# generating its own chunk, all 22 queries through the coordinator checked
# against the answers. Then: no server process is left behind, and the
# servers' log directory is gone (the run ended cleanly). Last, a runner
# interrupted (SIGINT to it alone) while its servers run leaves none behind.
set -u
export TMPDIR=$(mktemp -d)
trap 'rm -rf "$TMPDIR"' EXIT
"$RACKDB" tpch run --sf 0.01 --servers 3 --check --json "$TMPDIR/run.json"
rc=$?
if pgrep -f "$TMPDIR/rackdb-cluster" > /dev/null; then
    echo "servers left running:" >&2
    pgrep -af "$TMPDIR/rackdb-cluster" >&2
    rc=1
fi
if ls -d "$TMPDIR"/rackdb-cluster-* > /dev/null 2>&1; then
    echo "the servers' logs were kept: the run did not end cleanly" >&2
    rc=1
fi
grep -q '"servers": 3' "$TMPDIR/run.json" || { echo "run.json lacks servers" >&2; rc=1; }
# every query moved rows between servers (q06's partial sums at least)
if grep -q '"shuffle_bytes": 0,' "$TMPDIR/run.json"; then
    echo "a query reports no bytes moved between servers" >&2
    rc=1
fi

# what each server runs: CALL dbgen's part/parts (dbgen -C 3 -S 2: a third
# of orders; nation and region whole on every part, marked replicated)
out=$(printf '%s\n' "CALL dbgen(sf = 0.01, part = 2, parts = 3);" \
    "SELECT count(*) AS n FROM nation;" "SELECT count(*) AS o FROM orders;" \
    "CALL dbgen(sf = 0.01, part = 4, parts = 3);" | "$RACKDB" 2>&1)
echo "$out" | tr -s ' ' | grep -qx ' 25' || { echo "part 2 of 3 lacks nation rows: $out" >&2; rc=1; }
echo "$out" | tr -s ' ' | grep -qx ' 5000' || { echo "part 2 of 3: orders: $out" >&2; rc=1; }
echo "$out" | grep -q "part 4 is not one of its 3 parts" || { echo "no error for part 4: $out" >&2; rc=1; }

# interrupted: the servers die with the runner
"$RACKDB" tpch run --sf 0.01 --servers 2 > /dev/null 2>&1 &
runner=$!
for _ in $(seq 1 100); do
    [ "$(pgrep -cf "$TMPDIR/rackdb-cluster")" -ge 2 ] && break
    sleep 0.1
done
[ "$(pgrep -cf "$TMPDIR/rackdb-cluster")" -ge 2 ] || { echo "servers did not start" >&2; rc=1; }
kill -INT "$runner"
wait "$runner"
for _ in $(seq 1 100); do
    pgrep -f "$TMPDIR/rackdb-cluster" > /dev/null || break
    sleep 0.1
done
if pgrep -f "$TMPDIR/rackdb-cluster" > /dev/null; then
    echo "servers left running after the runner was interrupted:" >&2
    pgrep -af "$TMPDIR/rackdb-cluster" >&2
    pgrep -f "$TMPDIR/rackdb-cluster" | xargs -r kill -KILL
    rc=1
fi
exit $rc

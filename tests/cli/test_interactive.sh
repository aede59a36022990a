#!/usr/bin/env bash
# test_interactive.sh — the shell at a terminal (a pseudo-terminal made by
# util-linux `script`): prompts and continuation prompts, a statement typed
# over several lines, an error that does not end the shell, Ctrl-C throwing
# away the unfinished input, history saved to ~/.rackdb_history, Ctrl-D
# leaving with status 0. Input is sent only after the prompt it answers has
# appeared, so the test does not depend on timing.
set -u
: "${RACKDB:?}"
command -v script >/dev/null || { echo "script (util-linux) is required"; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/rackdb-tty-XXXXXX")
cd "$work"
mkfifo input
HOME="$work" script -qfec "$RACKDB" typescript <input >/dev/null 2>&1 &
shell_pid=$!
exec 3>input
cleanup() {
    exec 3>&- 2>/dev/null
    kill "$shell_pid" 2>/dev/null
    cd / && rm -rf "$work"
}
trap cleanup EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

# Waits until the typescript holds `count` lines matching `pattern` (30 s).
wait_for() {
    local pattern=$1 count=$2
    for _ in $(seq 300); do
        [ "$(grep -c -- "$pattern" typescript 2>/dev/null)" -ge "$count" ] && return 0
        sleep 0.1
    done
    fail "timed out waiting for $count x '$pattern'"
    cat -v typescript
    exit 1
}
send() { printf "$1" >&3; }

wait_for '^rackdb> ' 1
send 'create table x (\n'
wait_for '^   \.\.\.> ' 1
send '  a int);\n'
wait_for '^CREATE TABLE' 1
send 'create table x (a int);\n'
wait_for '^ERROR:  relation "x" already exists' 1
send 'create table y (\n'
wait_for '^   \.\.\.> ' 2
send '\003' # Ctrl-C: y is forgotten
wait_for '^rackdb> ' 4
send '.tables\n'
wait_for '^(1 row)' 1
send '\004' # Ctrl-D
wait "$shell_pid"
status=$?
[ "$status" -eq 0 ] || fail "exit status $status"
tr -d '\r' <typescript >screen.txt
grep -q '^ x    | table |    0$' screen.txt || fail ".tables does not show x"
grep -q '^ y ' screen.txt && fail "y was created after Ctrl-C"
grep -q '^create\\040table\\040x\\040(\\040\\040\\040a\\040int);$' .rackdb_history ||
    fail "multi-line statement not in history: $(cat .rackdb_history)"
grep -q '^\.tables$' .rackdb_history || fail ".tables not in history"
[ "$failures" -eq 0 ] || { cat screen.txt; echo "$failures failed"; exit 1; }
echo "all passed"

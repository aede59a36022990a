# The SQL logic test runner can fail: every record of slt/selftest/wrong.test
# has a deliberately wrong expectation. Run normally, the runner must fail
# each of them; with --expect-fail (each record passes only when its check
# fails) it must pass them all.
set -u
runner="$RACKDB_BUILD/tests/sql_test_slt"
file="$RACKDB_SOURCE/tests/sql/slt/selftest/wrong.test"
records=$(grep -cE '^(statement|query) ' "$file")
fail() { echo "FAIL: $*"; exit 1; }

out=$("$runner" --threads 1 "$file" 2>/dev/null) && fail "the runner passed a file of wrong expectations"
# The two setup statements are right, all others wrong.
[[ $out == "2 passed, $((records - 2)) failed" ]] || fail "normal run: got '$out', expected 2 passed, $((records - 2)) failed"

out=$("$runner" --threads 1 --expect-fail "$file" 2>&1)
status=$?
# With --expect-fail the two correct setup statements are the failures.
[[ $out == *"$((records - 2)) passed, 2 failed"* ]] || fail "--expect-fail run: got '$out'"
[[ $status -ne 0 ]] || fail "--expect-fail run exited 0 despite 2 failures"
echo "1 passed, 0 failed"

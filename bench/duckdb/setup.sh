#!/usr/bin/env bash
# Installs the DuckDB harness's npm dependencies (@duckdb/node-api, pinned in
# package.json / package-lock.json) into bench/duckdb/node_modules.
# Idempotent: runs `npm ci` only when node_modules is missing or older than
# the lock file, or when the installed DuckDB is not the pinned one.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

want=$(node -p 'require("./package.json").dependencies["@duckdb/node-api"]')
have=$(node -p 'try { require("./node_modules/@duckdb/node-api/package.json").version } catch { "" }' 2>/dev/null || true)
stamp=node_modules/.package-lock.json

if [[ "$have" != "$want" || ! -f $stamp || package-lock.json -nt $stamp ]]; then
	echo "bench/duckdb: installing @duckdb/node-api $want" >&2
	# `npm ci` refuses a lock file that lacks an optional dependency. The
	# registry this lock was made against serves only the linux-x64 DuckDB
	# binaries, so the other platforms' bindings are absent from it; then
	# `npm install --no-save` installs the same locked versions (checked below).
	if ! npm ci --no-audit --no-fund --loglevel=silent; then
		echo "bench/duckdb: npm ci refused the lock file, using npm install --no-save" >&2
		npm install --no-save --no-audit --no-fund --loglevel=error
	fi
	touch "$stamp"
	have=$(node -p 'require("./node_modules/@duckdb/node-api/package.json").version')
	if [[ "$have" != "$want" ]]; then
		echo "bench/duckdb: installed @duckdb/node-api $have, want $want" >&2
		exit 1
	fi
fi
node -e 'import("@duckdb/node-api").then((m) => console.log(`bench/duckdb: DuckDB ${m.version()}, @duckdb/node-api ${process.argv[1]}`))' "$want"

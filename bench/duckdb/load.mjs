#!/usr/bin/env node
// Times DuckDB loading dbgen .tbl files: for each table, COPY t FROM
// 'DIR/t.tbl' into an in-memory database with the given thread count. Each
// repetition starts from a fresh database; a table's time is its best over
// the repetitions and the total is the sum of those bests.
//
// Prints a table (rows, MB, seconds, Mrows/s, MB/s per table and in total)
// and then the same figures as one JSON line (last line of stdout).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DEFAULT_SCHEMA,
  closeDatabase,
  defaultThreads,
  fail,
  loadTables,
  openDatabase,
  parseArgs,
  positiveInt,
  printLoadTable,
  roundTripMatches,
  summarizeLoad,
  tableList,
  verifyLoad,
  versionString,
  writeJson,
} from './lib.mjs';

const usage = `usage: load.mjs --dir DIR [--threads N] [--tables a,b] [--reps R]
                [--schema FILE] [--json FILE] [--verify]
  --dir      directory with dbgen's <table>.tbl files
  --threads  DuckDB threads (default: all cores)
  --tables   comma-separated subset of the 8 TPC-H tables (default: all)
  --reps     repetitions, best time per table is reported (default 1)
  --schema   DDL to run first (default /work/shared/tpch/schema.sql)
  --json     also write the JSON summary to FILE
  --verify   after loading, check row counts and that each table written
             back in dbgen's format is byte-identical to its .tbl file
`;

const args = parseArgs(process.argv.slice(2), { dir: 'string', threads: 'string', tables: 'string', reps: 'string', schema: 'string', json: 'string', verify: 'flag' }, usage);
if (!args.dir) fail('--dir is required', usage);
const threads = positiveInt(args.threads, 'threads', defaultThreads());
const reps = positiveInt(args.reps, 'reps', 1);
const tables = tableList(args.tables);

let best = null;
for (let rep = 0; rep < reps; rep++) {
  const db = await openDatabase({ threads, schemaPath: args.schema ?? DEFAULT_SCHEMA });
  const stats = await loadTables(db.conn, args.dir, tables);
  if (best === null) best = stats;
  else stats.forEach((s, i) => (best[i].seconds = Math.min(best[i].seconds, s.seconds)));
  const last = rep === reps - 1;
  if (last && args.verify) await verify(db.conn, stats);
  await closeDatabase(db);
}

const summary = summarizeLoad(best);
printLoadTable(summary);
const report = { harness: 'duckdb-load', ...versionString(), threads, reps, dir: args.dir, ...summary };
process.stdout.write(JSON.stringify(report) + '\n');
writeJson(args.json, report);

async function verify(conn, stats) {
  const problems = await verifyLoad(conn, args.dir, stats);
  const tmp = mkdtempSync(join(tmpdir(), 'duckdb-verify-'));
  try {
    for (const { table } of stats) if (!(await roundTripMatches(conn, args.dir, table, tmp))) problems.push(`${table}: written back, it differs from ${table}.tbl`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  if (problems.length) fail(`load verification failed:\n  ${problems.join('\n  ')}`);
  process.stderr.write(`verified: ${stats.length} tables, row counts and round trip match\n`);
}

#!/usr/bin/env node
// Runs arbitrary SQL on DuckDB over the TPC-H tables and prints the rows of
// the last SELECT as '|'-joined lines, NULL as "NULL", in the format of
// /work/shared/tpch/answers: an oracle for rackdb's variant queries.
//
// Data comes from DIR/*.tbl (loaded into memory on every call) or from a
// DuckDB database file given with --db, which is created and loaded from
// --dir on first use and reused afterwards, so many oracle calls at a larger
// scale pay the load once. A database file is opened by one process at a
// time.

import { existsSync, readFileSync, rmSync } from 'node:fs';
import {
  DEFAULT_SCHEMA,
  closeDatabase,
  defaultThreads,
  fail,
  formatRows,
  loadTables,
  openDatabase,
  parseArgs,
  positiveInt,
  runScript,
  tableList,
} from './lib.mjs';

const usage = `usage: query.mjs (--dir DIR | --db FILE [--dir DIR]) (--sql SQL | --file F)
                 [--threads N] [--tables a,b] [--doubles answers|full]
  --dir      directory with dbgen's <table>.tbl files, loaded first
  --db       DuckDB database file; loaded from --dir if it has no tables yet
  --sql      SQL text (several statements allowed; the last SELECT prints)
  --file     file with SQL text
  --tables   load only these tables (default: all 8)
  --threads  DuckDB threads (default: all cores)
  --doubles  'answers' prints doubles with 2 decimals like the reference
             answers (default); 'full' prints every digit
  --schema   DDL run before loading (default /work/shared/tpch/schema.sql)
`;

const args = parseArgs(process.argv.slice(2), { dir: 'string', db: 'string', sql: 'string', file: 'string', threads: 'string', tables: 'string', doubles: 'string', schema: 'string' }, usage);
if (!args.dir && !args.db) fail('--dir or --db is required', usage);
if ((args.sql === undefined) === (args.file === undefined)) fail('give exactly one of --sql and --file', usage);
const doubles = args.doubles ?? 'answers';
if (doubles !== 'answers' && doubles !== 'full') fail(`--doubles must be 'answers' or 'full'`, usage);
const threads = positiveInt(args.threads, 'threads', defaultThreads());
const sql = args.sql ?? readFileSync(args.file, 'utf8');

const fresh = !args.db || !existsSync(args.db);
if (fresh && !args.dir) fail(`${args.db} does not exist and no --dir to load it from`, usage);
const db = await openDatabase({ threads, path: args.db ?? ':memory:', schemaPath: fresh ? (args.schema ?? DEFAULT_SCHEMA) : undefined });
try {
  if (fresh) await loadTables(db.conn, args.dir, tableList(args.tables));
} catch (e) {
  // A half-loaded database file would be taken as complete next time.
  await closeDatabase(db);
  if (args.db) rmSync(args.db, { force: true });
  fail(e.message);
}
try {
  const answer = await runScript(db.conn, sql);
  const lines = formatRows(answer, doubles);
  process.stdout.write(lines.length ? lines.join('\n') + '\n' : '');
} catch (e) {
  process.stderr.write(`error: ${e.message}\n`);
  process.exitCode = 1;
} finally {
  await closeDatabase(db);
}

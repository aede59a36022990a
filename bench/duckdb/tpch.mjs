#!/usr/bin/env node
// Runs the TPC-H queries on DuckDB: loads DIR/*.tbl into an in-memory
// database, then runs each qNN.sql R times back to back and reports the best
// time ("hot": the data is in memory, and best-of-R drops first-run effects).
// A query's time covers parsing, planning, executing every statement of the
// file (q15: create view, select, drop view) and fetching all result chunks.
// Beside it, cpu_ms is the CPU time all of the process's threads spent in
// that run: on a shared machine it shows how much of the wall time was ours.
//
// --results DIR writes each query's answer as DIR/qNN.csv in the format of
// /work/shared/tpch/answers, so DuckDB doubles as an oracle (compare.mjs
// diffs two such directories with the answers' tolerance).

import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  DEFAULT_QUERIES,
  DEFAULT_SCHEMA,
  TPCH_TABLES,
  closeDatabase,
  defaultThreads,
  fail,
  fixed,
  formatRows,
  loadTables,
  nonNegativeInt,
  openDatabase,
  parseArgs,
  positiveInt,
  printLoadTable,
  printTable,
  queryFiles,
  runScript,
  summarizeLoad,
  versionString,
  writeJson,
  writeLines,
} from './lib.mjs';

const usage = `usage: tpch.mjs --dir DIR [--threads N] [--reps R] [--warmup W]
                [--queries 1,6] [--queries-dir DIR] [--results DIR]
                [--doubles answers|full] [--schema FILE] [--json FILE]
  --dir          directory with dbgen's <table>.tbl files
  --threads      DuckDB threads (default: all cores)
  --reps         timed runs per query, the best is reported (default 3)
  --warmup       untimed runs per query before the timed ones (default 0)
  --queries      subset of query numbers (default: every qNN.sql)
  --queries-dir  where qNN.sql live (default /work/shared/tpch/queries)
  --results      write each answer to DIR/qNN.csv ('|'-joined, no header)
  --doubles      'answers' rounds doubles to 2 decimals like the reference
                 answers (default); 'full' prints every digit
  --json         also write the JSON summary to FILE
`;

const args = parseArgs(
  process.argv.slice(2),
  { dir: 'string', threads: 'string', reps: 'string', warmup: 'string', queries: 'string', 'queries-dir': 'string', results: 'string', doubles: 'string', schema: 'string', json: 'string' },
  usage,
);
if (!args.dir) fail('--dir is required', usage);
const threads = positiveInt(args.threads, 'threads', defaultThreads());
const reps = positiveInt(args.reps, 'reps', 3);
const warmup = nonNegativeInt(args.warmup, 'warmup', 0);
const doubles = args.doubles ?? 'answers';
if (doubles !== 'answers' && doubles !== 'full') fail(`--doubles must be 'answers' or 'full'`, usage);
const queries = queryFiles(args['queries-dir'] ?? DEFAULT_QUERIES, args.queries);
if (queries.length === 0) fail('no queries found', usage);
if (args.results) mkdirSync(args.results, { recursive: true });

const db = await openDatabase({ threads, schemaPath: args.schema ?? DEFAULT_SCHEMA });
const load = summarizeLoad(await loadTables(db.conn, args.dir, TPCH_TABLES));
process.stdout.write(`DuckDB ${versionString().duckdb}, ${threads} threads, data ${args.dir}\n`);
process.stdout.write(`load: ${load.total.rows} rows, ${fixed(load.total.seconds, 3)} s, ${fixed(load.total.mb_per_s, 1)} MB/s\n`);

const results = [];
for (const q of queries) {
  const sql = readFileSync(q.file, 'utf8');
  let answer = null;
  const times = [];
  const cpu = [];
  for (let i = 0; i < warmup + reps; i++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    answer = await runScript(db.conn, sql);
    const ms = performance.now() - t0;
    const c = process.cpuUsage(c0);
    if (i >= warmup) {
      times.push(ms);
      cpu.push((c.user + c.system) / 1000);
    }
  }
  const rows = answer === null ? 0 : answer.currentRowCount;
  if (args.results) writeLines(join(args.results, `${q.name}.csv`), formatRows(answer, doubles));
  const best = times.indexOf(Math.min(...times));
  results.push({ query: q.name, best_ms: times[best], cpu_ms: cpu[best], rows, times_ms: times });
}
await closeDatabase(db);

const total = results.reduce((a, r) => a + r.best_ms, 0);
const totalCpu = results.reduce((a, r) => a + r.cpu_ms, 0);
printTable(
  ['query', 'best ms', 'cpu ms', 'rows'],
  [...results.map((r) => [r.query, fixed(r.best_ms, 2), fixed(r.cpu_ms, 1), String(r.rows)]), ['total', fixed(total, 2), fixed(totalCpu, 1), '']],
);
const report = { harness: 'duckdb-tpch', ...versionString(), threads, reps, warmup, dir: args.dir, load, queries: results, total_ms: total };
process.stdout.write(JSON.stringify(report) + '\n');
writeJson(args.json, report);

// Shared pieces of the DuckDB comparison harness: argument parsing, opening an
// in-memory DuckDB with the TPC-H schema, loading dbgen .tbl files, running a
// SQL script statement by statement, and printing results in the format of
// /work/shared/tpch/answers (fields joined by '|', no header, NULL as "NULL").
//
// Data flow: load.mjs / tpch.mjs / query.mjs parse their arguments with
// parseArgs(), call openDatabase() + loadTables(), then runScript() per query
// and formatRows() on the answer.

import { DuckDBInstance, DuckDBTypeId, StatementType, version as duckdbVersion } from '@duckdb/node-api';
import { createHash } from 'node:crypto';
import { createReadStream, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

export const SHARED = process.env.RACKDB_SHARED ?? '/work/shared';
export const DEFAULT_SCHEMA = join(SHARED, 'tpch', 'schema.sql');
export const DEFAULT_QUERIES = join(SHARED, 'tpch', 'queries');
export const TPCH_TABLES = ['region', 'nation', 'supplier', 'customer', 'part', 'partsupp', 'orders', 'lineitem'];

// Parses "--key value", "--key=value" and bare "--flag" into an object.
// `spec` maps each accepted key to 'string' or 'flag'; anything else is an
// error, so that a typo never silently runs the default benchmark.
export function parseArgs(argv, spec, usage) {
  const out = {};
  for (let i = 0; i < argv.length; i++) {
    let arg = argv[i];
    if (arg === '-h' || arg === '--help') {
      process.stdout.write(usage);
      process.exit(0);
    }
    if (!arg.startsWith('--')) fail(`unexpected argument '${arg}'`, usage);
    arg = arg.slice(2);
    let value;
    const eq = arg.indexOf('=');
    if (eq >= 0) {
      value = arg.slice(eq + 1);
      arg = arg.slice(0, eq);
    }
    const kind = spec[arg];
    if (kind === undefined) fail(`unknown option --${arg}`, usage);
    if (kind === 'flag') {
      out[arg] = true;
      continue;
    }
    if (value === undefined) {
      if (i + 1 >= argv.length) fail(`--${arg} needs a value`, usage);
      value = argv[++i];
    }
    out[arg] = value;
  }
  return out;
}

// A failed statement or a missing file ends the program with its message
// and status 1, not with a stack trace; a closed stdout (`| head`) is no
// error at all.
process.on('uncaughtException', (e) => {
  if (e?.code === 'EPIPE') process.exit(0);
  process.stderr.write(`error: ${e?.message ?? e}\n`);
  process.exit(1);
});

export function fail(message, usage) {
  process.stderr.write(`error: ${message}\n`);
  if (usage) process.stderr.write(usage);
  process.exit(2);
}

export function positiveInt(text, name, fallback) {
  return checkedInt(text, name, fallback, 1);
}

export function nonNegativeInt(text, name, fallback) {
  return checkedInt(text, name, fallback, 0);
}

function checkedInt(text, name, fallback, min) {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (text.trim() === '' || !Number.isInteger(n) || n < min) fail(`--${name} must be an integer >= ${min}, got '${text}'`);
  return n;
}

export function defaultThreads() {
  return availableParallelism();
}

// "a,b" -> ['a','b'], checked against the TPC-H table names.
export function tableList(text) {
  if (text === undefined) return TPCH_TABLES;
  const names = text.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);
  for (const n of names) if (!TPCH_TABLES.includes(n)) fail(`unknown table '${n}'`);
  return names;
}

// Opens a DuckDB database (in memory unless `path` is given) with the given
// thread count; the schema is created only when `schemaPath` is set.
export async function openDatabase({ threads, schemaPath, path = ':memory:' }) {
  const instance = await DuckDBInstance.create(path, { threads: String(threads) });
  const conn = await instance.connect();
  if (schemaPath) await conn.run(readFileSync(schemaPath, 'utf8'));
  return { instance, conn };
}

export async function closeDatabase(db) {
  db.conn.closeSync();
  db.instance.closeSync();
}

export function versionString() {
  return { duckdb: duckdbVersion(), node: process.version };
}

// The SQL that loads one dbgen file. dbgen ends every line with a '|', i.e.
// one more (empty) field than the table has columns. DuckDB's CSV reader,
// given a target table, treats an empty last field beyond the table's columns
// as a trailing delimiter and drops it, so plain DELIMITER '|' is correct
// (verifyLoad() and roundTripMatches() below check it). dbgen never quotes
// or escapes, so quoting is off: a '"' in a comment stays a character.
export function copySql(table, dir) {
  const file = join(dir, `${table}.tbl`).replaceAll("'", "''");
  return `COPY ${table} FROM '${file}' (DELIMITER '|', HEADER false, QUOTE '', ESCAPE '')`;
}

// Loads each table once and returns per-table {table, rows, bytes, seconds}.
// The time covers the COPY statement only (parse, read, convert, store).
export async function loadTables(conn, dir, tables) {
  const stats = [];
  for (const table of tables) {
    const file = join(dir, `${table}.tbl`);
    let bytes;
    try {
      bytes = statSync(file).size;
    } catch {
      throw new Error(`missing data file ${file}`);
    }
    const t0 = performance.now();
    const result = await conn.run(copySql(table, dir));
    const seconds = (performance.now() - t0) / 1000;
    const rows = Number(result.rowsChanged);
    stats.push({ table, rows, bytes, seconds });
  }
  return stats;
}

// Cheap sanity checks that the trailing '|' did not shift or drop a column:
// the row count matches the file's line count and the last column of every
// table holds text, not NULLs (what a misaligned load would leave).
export async function verifyLoad(conn, dir, stats) {
  const problems = [];
  for (const { table, rows } of stats) {
    const lines = countLines(join(dir, `${table}.tbl`));
    if (lines !== rows) problems.push(`${table}: ${rows} rows loaded, file has ${lines} lines`);
    const comment = lastColumn(table);
    const r = await conn.runAndReadAll(`SELECT count(*) FROM ${table} WHERE ${comment} IS NULL`);
    const nulls = Number(r.getRows()[0][0]);
    if (nulls !== 0) problems.push(`${table}: ${nulls} NULL ${comment} values`);
  }
  return problems;
}

function lastColumn(table) {
  const prefix = { region: 'r', nation: 'n', supplier: 's', customer: 'c', part: 'p', partsupp: 'ps', orders: 'o', lineitem: 'l' };
  return `${prefix[table]}_comment`;
}

function countLines(file) {
  const buf = readFileSync(file);
  let n = 0;
  for (let i = buf.indexOf(10); i >= 0; i = buf.indexOf(10, i + 1)) n++;
  if (buf.length > 0 && buf[buf.length - 1] !== 10) n++;
  return n;
}

// Splits a script into statements with DuckDB's own parser, so that a ';'
// inside a string or comment never splits a statement.
//
// runScript() executes every statement and returns the rows of the last
// SELECT (q15 is create view / select / drop view: the answer is the middle
// one). The whole call is what the benchmark times: parse, plan, execute and
// fetching every result chunk from DuckDB, but not converting values to
// JavaScript or text.
export async function runScript(conn, sql) {
  const extracted = await conn.extractStatements(sql);
  let answer = null;
  for (let i = 0; i < extracted.count; i++) {
    const prepared = await extracted.prepare(i);
    try {
      const reader = await prepared.runAndReadAll();
      if (prepared.statementType === StatementType.SELECT) answer = reader;
    } finally {
      prepared.destroySync();
    }
  }
  return answer;
}

// Doubles in the reference answers have exactly two decimals ("25.60",
// "15.49") except an exact zero, which is "0" (q08's market share at small
// scales); DECIMALs keep their scale as DuckDB prints them ("380456.00").
// 'full' prints every digit of a double instead.
export function formatValue(value, typeId, doubles) {
  if (value === null || value === undefined) return 'NULL';
  if (typeId === DuckDBTypeId.DOUBLE || typeId === DuckDBTypeId.FLOAT) {
    if (doubles === 'full') return String(value);
    if (value === 0) return '0';
    const text = value.toFixed(2);
    return text === '-0.00' ? '0.00' : text;
  }
  return String(value);
}

export function formatRows(reader, doubles = 'answers') {
  if (reader === null) return [];
  const types = [];
  for (let c = 0; c < reader.columnCount; c++) types.push(reader.columnTypeId(c));
  return reader.getRows().map((row) => row.map((v, c) => formatValue(v, types[c], doubles)).join('|'));
}

export function writeLines(file, lines) {
  writeFileSync(file, lines.length ? lines.join('\n') + '\n' : '');
}

// Prints an aligned text table: `header` is a list of column titles, `rows` a
// list of lists of strings; numeric-looking cells are right-aligned.
export function printTable(header, rows, out = process.stdout) {
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => String(r[c]).length)));
  const numeric = /^-?[\d.,]+$/;
  const line = (cells) =>
    cells
      .map((cell, c) => {
        const s = String(cell);
        return numeric.test(s) ? s.padStart(widths[c]) : s.padEnd(widths[c]);
      })
      .join('  ')
      .trimEnd();
  out.write(line(header) + '\n');
  out.write(widths.map((w) => '-'.repeat(w)).join('  ') + '\n');
  for (const r of rows) out.write(line(r) + '\n');
}

export function fixed(x, digits) {
  return Number.isFinite(x) ? x.toFixed(digits) : '-';
}

// Adds rows/s and MB/s (10^6 bytes per second) to load stats and totals them.
export function summarizeLoad(stats) {
  const perTable = stats.map((s) => ({
    ...s,
    rows_per_s: s.rows / s.seconds,
    mb_per_s: s.bytes / 1e6 / s.seconds,
  }));
  const rows = stats.reduce((a, s) => a + s.rows, 0);
  const bytes = stats.reduce((a, s) => a + s.bytes, 0);
  const seconds = stats.reduce((a, s) => a + s.seconds, 0);
  return { tables: perTable, total: { rows, bytes, seconds, rows_per_s: rows / seconds, mb_per_s: bytes / 1e6 / seconds } };
}

export function printLoadTable(summary, out = process.stdout) {
  const row = (name, s) => [name, String(s.rows), fixed(s.bytes / 1e6, 2), fixed(s.seconds, 3), fixed(s.rows_per_s / 1e6, 2), fixed(s.mb_per_s, 1)];
  printTable(
    ['table', 'rows', 'MB', 'seconds', 'Mrows/s', 'MB/s'],
    [...summary.tables.map((s) => row(s.table, s)), row('total', summary.total)],
    out,
  );
}

// Query files in a directory, "q01".."q22" order; `only` is "1,6" or
// "q01,q06" and restricts the set.
export function queryFiles(dir, only) {
  const all = [];
  for (let n = 1; n <= 99; n++) {
    const name = `q${String(n).padStart(2, '0')}`;
    const file = join(dir, `${name}.sql`);
    try {
      statSync(file);
    } catch {
      continue;
    }
    all.push({ n, name, file });
  }
  if (only === undefined) return all;
  const wanted = only.split(',').map((s) => {
    const n = Number(s.trim().replace(/^q/i, ''));
    if (!Number.isInteger(n)) fail(`bad query number '${s}'`);
    return n;
  });
  const picked = [];
  for (const n of wanted) {
    const q = all.find((x) => x.n === n);
    if (!q) fail(`no q${String(n).padStart(2, '0')}.sql in ${dir}`);
    picked.push(q);
  }
  return picked;
}

export function writeJson(file, obj) {
  if (file) writeFileSync(file, JSON.stringify(obj, null, 2) + '\n');
}

// Round-trip check of a loaded table: DuckDB writes it back in dbgen's format
// and the SHA-1 must equal the source file's. This proves that the trailing
// '|' was dropped and no value changed (blanks, dates, decimals, comments).
// dbgen prints l_quantity without decimals although the column is
// DECIMAL(15,2), so that one column is cast back to an integer.
export async function roundTripMatches(conn, dir, table, tmpDir) {
  const columns = table === 'lineitem' ? 'l_orderkey, l_partkey, l_suppkey, l_linenumber, CAST(l_quantity AS BIGINT), l_extendedprice, l_discount, l_tax, l_returnflag, l_linestatus, l_shipdate, l_commitdate, l_receiptdate, l_shipinstruct, l_shipmode, l_comment' : '*';
  const out = join(tmpDir, `${table}.roundtrip.tbl`);
  await conn.run(`COPY (SELECT ${columns}, '' FROM ${table}) TO '${out.replaceAll("'", "''")}' (DELIMITER '|', HEADER false, QUOTE '', ESCAPE '')`);
  const [a, b] = await Promise.all([sha1File(join(dir, `${table}.tbl`)), sha1File(out)]);
  rmSync(out, { force: true });
  return a === b;
}

function sha1File(file) {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha1');
    createReadStream(file)
      .on('data', (chunk) => hash.update(chunk))
      .on('end', () => resolve(hash.digest('hex')))
      .on('error', reject);
  });
}

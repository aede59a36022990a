#!/usr/bin/env node
// Compares query answers in the format of /work/shared/tpch/answers (one row
// a line, fields joined by '|'): two files, or every qNN.csv of an expected
// directory against the same name in an actual directory. Rules follow
// /work/shared/tpch/README.md: fields that both parse as numbers may differ by
// the tolerance (0.01 absolute by default, as the official answers round to 2
// decimals); other fields must be equal after trimming blanks. Rows are
// compared in order unless --unordered (for queries whose ORDER BY has ties).
//
// Exit status 0 when everything matches, 1 when something differs, 2 on bad
// usage. Only the first few differences per file are printed.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fail, parseArgs } from './lib.mjs';

const usage = `usage: compare.mjs --expected FILE|DIR --actual FILE|DIR
                  [--tolerance 0.01] [--unordered] [--queries 1,6]
`;
const args = parseArgs(process.argv.slice(2), { expected: 'string', actual: 'string', tolerance: 'string', unordered: 'flag', queries: 'string' }, usage);
if (!args.expected || !args.actual) fail('--expected and --actual are required', usage);
const tolerance = args.tolerance === undefined ? 0.01 : Number(args.tolerance);
if (!(tolerance >= 0)) fail(`bad --tolerance '${args.tolerance}'`, usage);

const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

const pairs = [];
if (statSync(args.expected).isDirectory()) {
  let names = readdirSync(args.expected).filter((n) => /^q\d+\.csv$/.test(n)).sort();
  if (args.queries) {
    const wanted = new Set(args.queries.split(',').map((s) => Number(s.trim().replace(/^q/i, ''))));
    names = names.filter((n) => wanted.has(Number(n.slice(1, -4))));
  }
  for (const n of names) pairs.push([join(args.expected, n), join(args.actual, n), n]);
} else {
  pairs.push([args.expected, args.actual, args.actual]);
}
if (pairs.length === 0) fail(`nothing to compare in ${args.expected}`);

let failed = 0;
for (const [expected, actual, name] of pairs) {
  const problems = compareFiles(expected, actual);
  if (problems.length === 0) {
    process.stdout.write(`ok    ${name}\n`);
    continue;
  }
  failed++;
  process.stdout.write(`FAIL  ${name}\n`);
  for (const p of problems.slice(0, 5)) process.stdout.write(`      ${p}\n`);
  if (problems.length > 5) process.stdout.write(`      ... ${problems.length - 5} more\n`);
}
process.stdout.write(`${pairs.length - failed} matched, ${failed} differed\n`);
process.exit(failed ? 1 : 0);

function readLines(file) {
  let text;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    return { error: `cannot read ${file}: ${e.code ?? e.message}` };
  }
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return { lines };
}

function compareFiles(expectedFile, actualFile) {
  const e = readLines(expectedFile);
  const a = readLines(actualFile);
  if (e.error || a.error) return [e.error ?? a.error];
  let exp = e.lines;
  let act = a.lines;
  if (args.unordered) {
    exp = [...exp].sort();
    act = [...act].sort();
  }
  const problems = [];
  if (exp.length !== act.length) problems.push(`${act.length} rows, expected ${exp.length}`);
  const n = Math.min(exp.length, act.length);
  for (let i = 0; i < n; i++) {
    const why = compareRow(exp[i], act[i]);
    if (why) problems.push(`row ${i + 1}: ${why}\n        expected: ${exp[i]}\n        actual:   ${act[i]}`);
  }
  return problems;
}

function compareRow(expectedLine, actualLine) {
  const ef = expectedLine.split('|');
  const af = actualLine.split('|');
  if (ef.length !== af.length) return `${af.length} fields, expected ${ef.length}`;
  for (let c = 0; c < ef.length; c++) {
    const x = ef[c].trim();
    const y = af[c].trim();
    if (x === y) continue;
    if (NUMBER.test(x) && NUMBER.test(y) && Math.abs(Number(x) - Number(y)) <= tolerance + 1e-9) continue;
    return `field ${c + 1}: '${y}', expected '${x}'`;
  }
  return null;
}

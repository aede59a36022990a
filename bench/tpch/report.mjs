#!/usr/bin/env node
// Turns the JSON files the three TPC-H harnesses wrote into one comparison:
// a table of per-query best times (ms), rackdb's ratio to each other engine
// (below 1: rackdb is faster), geometric means over the queries every engine
// ran, and an SVG chart with one bar per engine and query (log scale: the
// engines differ by orders of magnitude). Uses only Node's standard library.
//
//   node report.mjs --dir OUT [--sf 1] [--threads 2] [--reps 3]
//                   [--load "a b c -> d e f"] [--cores N]
//
// Reads OUT/rackdb.json (`rackdb tpch run --json`), OUT/duckdb.json
// (bench/duckdb/tpch.mjs) and OUT/pg.json (bench/pg/tpch.sh), whichever
// exist; writes OUT/report.md, OUT/tpch.svg and OUT/summary.json, and prints
// the table.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({
  options: {
    dir: { type: 'string' },
    sf: { type: 'string', default: '1' },
    threads: { type: 'string', default: '2' },
    reps: { type: 'string', default: '3' },
    load: { type: 'string', default: '' },
    cores: { type: 'string', default: '' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (args.help || !args.dir) {
  console.log('usage: node report.mjs --dir OUT [--sf 1] [--threads 2] [--reps 3] [--load TEXT] [--cores N]');
  process.exit(args.help ? 0 : 2);
}

const ENGINES = [
  { id: 'rackdb', name: 'rackdb', color: '#2a9d4a' },
  { id: 'duckdb', name: 'DuckDB 1.5.6', color: '#e8b400' },
  { id: 'pg', name: 'PostgreSQL 15', color: '#336791' },
];

// query number -> { ms, status } per engine
function readEngine(id) {
  const path = join(args.dir, `${id}.json`);
  if (!existsSync(path)) return null;
  const j = JSON.parse(readFileSync(path, 'utf8'));
  const byQuery = new Map();
  for (const q of j.queries ?? []) {
    const n = typeof q.query === 'number' ? q.query : parseInt(String(q.query).replace(/^q/, ''), 10);
    // rackdb reports every query with a status; a failed one has no time
    const status = q.status ?? 'ok';
    const ok = status === 'ok' || status === 'unchecked';
    byQuery.set(n, {
      ms: ok && q.best_ms > 0 ? q.best_ms : null,
      status,
      compile_ms: typeof q.compile_ms === 'number' ? q.compile_ms : null,
    });
  }
  return { json: j, byQuery };
}

const engines = ENGINES.map((e) => ({ ...e, data: readEngine(e.id) })).filter((e) => e.data);
if (!engines.length) {
  console.error(`no engine results in ${args.dir}`);
  process.exit(1);
}
const queries = [...new Set(engines.flatMap((e) => [...e.data.byQuery.keys()]))].sort((a, b) => a - b);
const ms = (e, q) => e.data.byQuery.get(q)?.ms ?? null;
const geomean = (xs) => (xs.length ? Math.exp(xs.reduce((a, x) => a + Math.log(x), 0) / xs.length) : null);
// Geometric means over the queries every engine finished, so they compare.
const common = queries.filter((q) => engines.every((e) => ms(e, q) !== null));
const rack = engines.find((e) => e.id === 'rackdb');
const others = engines.filter((e) => e.id !== 'rackdb');

const fmt = (x) => (x === null ? '—' : x >= 100 ? x.toFixed(0) : x.toFixed(1));
const ratio = (a, b) => (a === null || b === null ? null : a / b);
const fmtRatio = (r) => (r === null ? '—' : `${r.toFixed(2)}x`);

// rackdb's time includes compiling its pipelines; that part gets a column.
const compileOf = (q) => (rack ? rack.data.byQuery.get(q)?.compile_ms ?? null : null);
const header = ['query', ...engines.map((e) => `${e.name} ms`)];
if (rack) header.push('rackdb compile ms', ...others.map((o) => `rackdb / ${o.name}`));
const rows = [];
for (const q of queries) {
  const row = [`q${String(q).padStart(2, '0')}`];
  for (const e of engines) {
    const r = e.data.byQuery.get(q);
    row.push(r?.ms != null ? fmt(r.ms) : r ? r.status : '—');
  }
  if (rack) {
    row.push(ms(rack, q) !== null && compileOf(q) !== null ? fmt(compileOf(q)) : '—');
    for (const o of others) row.push(fmtRatio(ratio(ms(rack, q), ms(o, q))));
  }
  rows.push(row);
}
const means = engines.map((e) => geomean(common.map((q) => ms(e, q))));
const gm = ['geomean', ...means.map(fmt)];
if (rack) {
  const c = common.map(compileOf);
  gm.push(c.every((x) => x !== null && x > 0) ? fmt(geomean(c)) : '—');
  for (const o of others) gm.push(fmtRatio(ratio(means[0], means[engines.indexOf(o)])));
}
rows.push(gm);
const slower = rack
  ? Object.fromEntries(others.map((o) => [o.id, queries.filter((q) => (ratio(ms(rack, q), ms(o, q)) ?? 0) > 1)]))
  : {};

function markdown() {
  const line = (cells) => `| ${cells.join(' | ')} |`;
  const out = [line(header), line(header.map((_, i) => (i ? '---:' : '---'))), ...rows.map(line)];
  return out.join('\n');
}
function plain() {
  const w = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const pad = (cells) => cells.map((c, i) => (i ? c.padStart(w[i]) : c.padEnd(w[i]))).join('  ');
  return [pad(header), w.map((n) => '-'.repeat(n)).join('  '), ...rows.map(pad)].join('\n');
}

const context = [
  `TPC-H SF ${args.sf}, ${args.threads} threads, best of ${args.reps}, hot; times in ms include parse, plan and compile.`,
  `Geometric means over the ${common.length} queries every engine ran.` +
    (args.load ? ` Load average during the run: ${args.load}${args.cores ? ` (${args.cores} cores)` : ''}.` : ''),
];
for (const o of others) {
  const s = slower[o.id] ?? [];
  if (rack) context.push(`rackdb slower than ${o.name} on ${s.length ? s.map((q) => `q${String(q).padStart(2, '0')}`).join(', ') : 'no query'}.`);
}
const notOk = rack ? queries.filter((q) => !['ok', 'unchecked'].includes(rack.data.byQuery.get(q)?.status ?? 'ok')) : [];
if (notOk.length) context.push(`rackdb answers not ok: ${notOk.map((q) => `q${q} (${rack.data.byQuery.get(q).status})`).join(', ')}.`);

// --- SVG: grouped bars, log10 y axis ---
function svg() {
  const W = 1100, H = 420, left = 70, right = 20, top = 50, bottom = 60;
  const plotW = W - left - right, plotH = H - top - bottom;
  const all = engines.flatMap((e) => queries.map((q) => ms(e, q))).filter((x) => x !== null && x > 0);
  const lo = Math.pow(10, Math.floor(Math.log10(Math.min(...all))));
  const hi = Math.pow(10, Math.ceil(Math.log10(Math.max(...all))));
  const y = (v) => top + plotH - ((Math.log10(v) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * plotH;
  const group = plotW / queries.length;
  const bar = Math.max(2, (group * 0.8) / engines.length);
  const esc = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  const parts = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`);
  parts.push(`<rect width="${W}" height="${H}" fill="white"/>`);
  parts.push(`<text x="${W / 2}" y="20" text-anchor="middle" font-size="15">${esc(`TPC-H SF ${args.sf}, ${args.threads} threads: best of ${args.reps} per query (ms, log scale)`)}</text>`);
  for (let v = lo; v <= hi * 1.0001; v *= 10) {
    const yy = y(v).toFixed(1);
    parts.push(`<line x1="${left}" x2="${W - right}" y1="${yy}" y2="${yy}" stroke="#ddd"/>`);
    parts.push(`<text x="${left - 6}" y="${yy}" text-anchor="end" dominant-baseline="middle">${v >= 1 ? v : v.toPrecision(1)}</text>`);
  }
  queries.forEach((q, i) => {
    const x0 = left + i * group + group * 0.1;
    engines.forEach((e, k) => {
      const v = ms(e, q);
      if (v === null || v <= 0) return;
      const yy = y(v);
      parts.push(`<rect x="${(x0 + k * bar).toFixed(1)}" y="${yy.toFixed(1)}" width="${(bar - 1).toFixed(1)}" height="${(top + plotH - yy).toFixed(1)}" fill="${e.color}"><title>${esc(`${e.name} q${q}: ${v.toFixed(1)} ms`)}</title></rect>`);
    });
    parts.push(`<text x="${(left + i * group + group / 2).toFixed(1)}" y="${top + plotH + 16}" text-anchor="middle">q${String(q).padStart(2, '0')}</text>`);
  });
  parts.push(`<line x1="${left}" x2="${left}" y1="${top}" y2="${top + plotH}" stroke="#333"/>`);
  parts.push(`<line x1="${left}" x2="${W - right}" y1="${top + plotH}" y2="${top + plotH}" stroke="#333"/>`);
  engines.forEach((e, k) => {
    const x = left + k * 260;
    const g = means[k] === null ? '' : `, geomean ${fmt(means[k])} ms`;
    parts.push(`<rect x="${x}" y="${H - 22}" width="12" height="12" fill="${e.color}"/>`);
    parts.push(`<text x="${x + 18}" y="${H - 12}">${esc(e.name + g)}</text>`);
  });
  parts.push('</svg>');
  return parts.join('\n') + '\n';
}

const md = [`# TPC-H SF ${args.sf}`, '', ...context, '', markdown(), '', '![chart](tpch.svg)', ''].join('\n');
writeFileSync(join(args.dir, 'report.md'), md);
writeFileSync(join(args.dir, 'tpch.svg'), svg());
const summary = {
  sf: Number(args.sf),
  threads: Number(args.threads),
  reps: Number(args.reps),
  load: args.load,
  engines: engines.map((e, k) => ({ id: e.id, name: e.name, geomean_ms: means[k] })),
  geomean_queries: common,
  queries: queries.map((q) => ({ query: q, ...Object.fromEntries(engines.map((e) => [e.id, e.data.byQuery.get(q) ?? null])) })),
  rackdb_slower_than: slower,
};
writeFileSync(join(args.dir, 'summary.json'), JSON.stringify(summary, null, 2) + '\n');
console.log(context.join('\n'));
console.log();
console.log(plain());

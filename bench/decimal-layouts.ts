/**
 * Issue 27's choice of a DECIMAL(12,2) column's storage, measured on its hot loops (a sum per
 * group code, a count of values above a literal, the best top-K score as a number) over a
 * million values, one layout at a time:
 *
 * - `double`: the nearest double of each value; a sum multiplies by 10^scale and rounds per row
 *   (the engine before issue 27);
 * - `f64 units`: the scaled integer (units of 10^-scale) in a Float64Array, exact below 2^53;
 * - `i64 units`: the scaled integer in a BigInt64Array (each read makes a BigInt);
 * - `i32 pair`: the scaled integer as two Int32Arrays (high and low words), joined per read.
 *
 *   node bench/decimal-layouts.ts [--rows N] [--runs R]
 */
import { parseArgs } from 'node:util';
import { mulberry32 } from '@replix/testkit/mulberry32';
import { printTable } from './lib/report.ts';

const { values: args } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000' },
    runs: { type: 'string', default: '30' },
  },
});
const rows = Number(args.rows);
const runs = Number(args.runs);
const GROUPS = 4;

const random = mulberry32(7);
const codes = new Uint16Array(rows);
const doubles = new Float64Array(rows);
const units = new Float64Array(rows);
const big = new BigInt64Array(rows);
const high = new Int32Array(rows);
const low = new Int32Array(rows);
for (let i = 0; i < rows; i++) {
  const cents = Math.floor(random() * 10_000_000);
  codes[i] = Math.floor(random() * GROUPS);
  doubles[i] = Number(`${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`);
  units[i] = cents;
  big[i] = BigInt(cents);
  high[i] = Math.floor(cents / 2 ** 32);
  low[i] = cents | 0;
}
const LITERAL_UNITS = 9_900_050;

const layouts: Record<string, { sum: () => number; count: () => number; best: () => number }> = {
  double: {
    sum: () => {
      const sums = new Float64Array(GROUPS);
      for (let i = 0; i < rows; i++) sums[codes[i]!]! += Math.round(doubles[i]! * 100);
      return sums[0]!;
    },
    count: () => {
      let n = 0;
      for (let i = 0; i < rows; i++) if (doubles[i]! > 99000.5) n++;
      return n;
    },
    best: () => {
      let best = Number.NEGATIVE_INFINITY;
      for (let i = 0; i < rows; i++) if (-doubles[i]! > best) best = -doubles[i]!;
      return best;
    },
  },
  'f64 units': {
    sum: () => {
      const sums = new Float64Array(GROUPS);
      for (let i = 0; i < rows; i++) sums[codes[i]!]! += units[i]!;
      return sums[0]!;
    },
    count: () => {
      let n = 0;
      for (let i = 0; i < rows; i++) if (units[i]! > LITERAL_UNITS) n++;
      return n;
    },
    best: () => {
      let best = Number.NEGATIVE_INFINITY;
      for (let i = 0; i < rows; i++) if (-units[i]! > best) best = -units[i]!;
      return best;
    },
  },
  'i64 units': {
    sum: () => {
      const sums = new BigInt64Array(GROUPS);
      for (let i = 0; i < rows; i++) sums[codes[i]!]! += big[i]!;
      return Number(sums[0]!);
    },
    count: () => {
      const literal = BigInt(LITERAL_UNITS);
      let n = 0;
      for (let i = 0; i < rows; i++) if (big[i]! > literal) n++;
      return n;
    },
    best: () => {
      let best = Number.NEGATIVE_INFINITY;
      for (let i = 0; i < rows; i++) {
        const score = -Number(big[i]!);
        if (score > best) best = score;
      }
      return best;
    },
  },
  'i32 pair': {
    sum: () => {
      const sums = new Float64Array(GROUPS);
      for (let i = 0; i < rows; i++) sums[codes[i]!]! += high[i]! * 2 ** 32 + (low[i]! >>> 0);
      return sums[0]!;
    },
    count: () => {
      let n = 0;
      for (let i = 0; i < rows; i++) if (high[i]! * 2 ** 32 + (low[i]! >>> 0) > LITERAL_UNITS) n++;
      return n;
    },
    best: () => {
      let best = Number.NEGATIVE_INFINITY;
      for (let i = 0; i < rows; i++) {
        const score = -(high[i]! * 2 ** 32 + (low[i]! >>> 0));
        if (score > best) best = score;
      }
      return best;
    },
  },
};

function median(values: number[]): number {
  values.sort((a, b) => a - b);
  return values[Math.floor(values.length / 2)] ?? Number.NaN;
}

function time(run: () => number): number {
  for (let i = 0; i < 5; i++) run();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    run();
    times.push(performance.now() - started);
  }
  return median(times);
}

const table = Object.entries(layouts).map(([name, layout]) => ({
  layout: name,
  'sum by group ms': time(layout.sum).toFixed(3),
  'count > literal ms': time(layout.count).toFixed(3),
  'top score (as a number) ms': time(layout.best).toFixed(3),
}));
printTable(`DECIMAL(12,2) layouts, ${rows} values, median of ${runs} runs`, table);

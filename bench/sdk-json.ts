/**
 * `npm run bench:sdk-json`: what exact numbers cost the SDK on a large answer. Reads one
 * answer the way the instance writes it (docs/instance-api.md, "Success envelope"): orders
 * with an INT key, a BIGINT, DECIMAL(10,2) and DECIMAL(30,4) amounts, a DOUBLE, a timestamp,
 * text with some non-ASCII, a boolean, NULLs and an embedded customer, and compares
 *
 * - `JSON.parse` (what `numbers: 'plain'` does),
 * - `readJson` (the SDK's reader keeping digits, `packages/sdk/src/json-reader.ts`),
 * - `readJson` + `exactRows`: what a query's rows cost by default (bigint and digit strings).
 *
 *   node bench/sdk-json.ts [--rows N] [--runs R]
 *
 * Defaults: 20,000 rows (about 5 MB), R = 15: the median of R runs after R warm-up runs, the
 * three taking turns, and the ratio to JSON.parse. Timings are printed, never asserted.
 */
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { parseArgs } from 'node:util';
import { SchemaNumbers } from '../packages/sdk/src/column-numbers.ts';
import { exactRows } from '../packages/sdk/src/exact-rows.ts';
import { readJson } from '../packages/sdk/src/json-reader.ts';

const { values } = parseArgs({
  options: { rows: { type: 'string', default: '20000' }, runs: { type: 'string', default: '15' } },
});
const ROWS = Number(values.rows);
const RUNS = Number(values.runs);

const SCHEMA = new SchemaNumbers({
  tables: [
    {
      name: 'orders',
      columns: [
        { name: 'id', type: 'int' },
        { name: 'ledger_id', type: 'bigint' },
        { name: 'total', type: 'decimal' },
        { name: 'balance', type: 'decimal' },
        { name: 'weight', type: 'float' },
        { name: 'placed_at', type: 'timestamp' },
        { name: 'status', type: 'string' },
        { name: 'note', type: 'string' },
        { name: 'paid', type: 'boolean' },
      ],
      relations: [{ name: 'customer', table: 'customers' }],
    },
    {
      name: 'customers',
      columns: [
        { name: 'id', type: 'int' },
        { name: 'name', type: 'string' },
        { name: 'country', type: 'string' },
      ],
      relations: [],
    },
  ],
});

/** The answer's text, written as the instance writes it: compact, keys in selection order. */
function answer(rows: number): string {
  const names = ['Ada', 'Björk', 'Grace', 'Sigur Rós', 'Alan', '日本語', 'Zoë'];
  const parts: string[] = [];
  for (let i = 1; i <= rows; i++) {
    const cents = (i * 7919) % 1_000_000;
    const total = `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
    const balance = `${1234567890123n + BigInt(i) * 7n}.${String(i % 10000).padStart(4, '0')}`;
    const ledger = 9007199254740000n + BigInt(i) * 3n;
    const second = String(i % 60).padStart(2, '0');
    parts.push(
      `{"id":${i},"ledger_id":${ledger},"total":${total},"balance":${balance},` +
        `"weight":${(i * 0.37) % 100},"placed_at":"2025-03-${String((i % 28) + 1).padStart(2, '0')}T10:11:${second}.000Z",` +
        `"status":"${i % 3 ? 'paid' : 'shipped'}","note":${i % 4 ? 'null' : '"leave at the door, \\"please\\""'},` +
        `"paid":${i % 2 === 0},"customer":{"id":${i % 500},"name":"${names[i % names.length]}","country":"IS"}}`,
    );
  }
  const meta =
    `{"table":"orders","query":{"fields":["id"]},"pagination":{"count":${rows},"total_matched":${rows},` +
    `"has_more":false,"limit":${rows}},"timing_ms":12.345,"snapshot":{"swap_count":3,"age_ms":812},"version":"0.1.0"}`;
  return `{"data":[${parts.join(',')}],"meta":${meta}}`;
}

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

/**
 * The median time of each reader, run in turns (one of each per round), so that load from
 * elsewhere on the machine falls on all of them alike.
 */
function measure(readers: readonly (() => unknown)[]): number[] {
  const samples = readers.map((): number[] => []);
  for (let round = 0; round < 2 * RUNS; round++) {
    for (const [i, read] of readers.entries()) {
      const started = performance.now();
      read();
      if (round >= RUNS) samples[i]!.push(performance.now() - started);
    }
  }
  return samples.map(median);
}

const text = answer(ROWS);
const [plain, read, exact] = measure([
  () => JSON.parse(text),
  () => readJson(text),
  () => {
    const envelope = readJson(text) as { data: unknown[] };
    exactRows(envelope.data, 'orders', SCHEMA);
  },
]) as [number, number, number];

const mb = (text.length / 1e6).toFixed(1);
process.stdout.write(`sdk-json: ${ROWS} rows, ${mb} MB of JSON, median of ${RUNS} runs\n`);
const line = (name: string, ms: number) =>
  process.stdout.write(
    `  ${name.padEnd(28)} ${ms.toFixed(1).padStart(8)} ms  ${(ms / plain).toFixed(2)}× JSON.parse\n`,
  );
line('JSON.parse', plain);
line('readJson', read);
line('readJson + exactRows', exact);

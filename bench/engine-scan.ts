/**
 * Engine time of issue 17's scan and embed queries (b), (c), (d), issue 27's DECIMAL ones (e),
 * (f), (g), and issue 32's MIN/MAX/COUNT(DISTINCT) (h) and JSON-path filter (i, over an
 * `events` table of its own, a fifth of the fact rows), on an in-memory generation,
 * against DuckDB on one thread over the same rows: a quick loop for engine work, no database.
 *
 *   node --expose-gc bench/engine-scan.ts [--fact-rows N] [--dim-rows N] [--runs R] [--no-duckdb]
 *     [--only b,c,d] [--duckdb-storage file|memory]
 *
 * The two sides are timed in alternation, run by run, so load from other processes on the
 * machine weighs on both alike; compare the ratios, not absolute times across runs.
 */
import { parseArgs } from 'node:util';
import { compileSchema, GenerationBuilder, parseSchemaConfig, QueryEngine } from '@replix/engine';
import { CATEGORIES, MIN_MAX_DISTINCT, MIN_MAX_DISTINCT_SQL } from './lib/dataset.ts';
import { DIM_COLUMNS, DuckDbBaseline, FACT_COLUMNS } from './lib/duckdb-baseline.ts';
import { benchGeneration, benchRows } from './lib/memory-dataset.ts';
import { printTable } from './lib/report.ts';

const { values: args } = parseArgs({
  options: {
    'fact-rows': { type: 'string', default: '1000000' },
    'dim-rows': { type: 'string', default: '100000' },
    runs: { type: 'string', default: '40' },
    'no-duckdb': { type: 'boolean', default: false },
    'duckdb-storage': { type: 'string', default: 'file' },
    only: { type: 'string', default: 'b,c,d,e,f,g,h,i' },
  },
});
const factRows = Number(args['fact-rows']);
const dimRows = Number(args['dim-rows']);
const runs = Number(args.runs);
const only = new Set(args.only.split(','));
const log = (message: string) => process.stderr.write(`${message}\n`);

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

log(`generating ${factRows} fact rows, ${dimRows} dim rows…`);
const rows = benchRows(factRows, dimRows);
const generation = benchGeneration(rows);
const engine = new QueryEngine(generation.schema);
const meta = { swapCount: 0, ageMs: 0, version: 'bench' };

interface Scenario {
  /** Runs on the `events` table's engine (scenario i). */
  readonly events?: true;
  readonly key: string;
  readonly name: string;
  /** Query texts cycled through the runs. */
  readonly replix: readonly string[];
  readonly sql: readonly string[] | null;
}

const dimIds = Array.from({ length: 50 }, (_, i) => 1 + ((i * 4999) % dimRows));
const scenarios: Scenario[] = [
  {
    key: 'b',
    name: '(b) filter + ORDER BY + LIMIT 50',
    replix: CATEGORIES.map((c) => `fact (category = '${c}') { * } ORDER BY amount DESC LIMIT 50`),
    sql: CATEGORIES.map(
      (c) => `SELECT * FROM fact WHERE category = '${c}' ORDER BY amount DESC, id LIMIT 50`,
    ),
  },
  {
    key: 'c',
    name: '(c) COUNT/SUM by status',
    replix: ['fact { status COUNT(*) SUM(qty) }'],
    sql: ['SELECT status, COUNT(*), SUM(qty) FROM fact GROUP BY status'],
  },
  {
    key: 'e',
    name: '(e) filter + ORDER BY DECIMAL + LIMIT 50',
    replix: CATEGORIES.map((c) => `fact (category = '${c}') { * } ORDER BY price DESC LIMIT 50`),
    sql: CATEGORIES.map(
      (c) => `SELECT * FROM fact WHERE category = '${c}' ORDER BY price DESC, id LIMIT 50`,
    ),
  },
  {
    key: 'f',
    name: '(f) COUNT/SUM(DECIMAL) by status',
    replix: ['fact { status COUNT(*) SUM(price) }'],
    sql: ['SELECT status, COUNT(*), SUM(price) FROM fact GROUP BY status'],
  },
  {
    key: 'g',
    name: '(g) DECIMAL filter + COUNT/AVG',
    replix: ['fact (price > 99000.50) { COUNT(*) AVG(price) }'],
    sql: ['SELECT COUNT(*), AVG(price) FROM fact WHERE price > 99000.50'],
  },
  {
    key: 'h',
    name: '(h) MIN/MAX/COUNT(DISTINCT) by status',
    replix: [MIN_MAX_DISTINCT],
    sql: [MIN_MAX_DISTINCT_SQL],
  },
  {
    key: 'i',
    name: '(i) JSON-path filter + COUNT',
    events: true as const,
    replix: ["events (payload->'user'->'age' > 60 AND payload->'kind' = 'click') { COUNT(*) }"],
    sql: [
      `SELECT COUNT(*) FROM events WHERE json_type(payload, '$.user.age') IN ('UBIGINT', 'BIGINT', 'DOUBLE')
         AND json_extract(payload, '$.user.age')::DOUBLE > 60
         AND json_type(payload, '$.kind') = 'VARCHAR' AND json_extract_string(payload, '$.kind') = 'click'`,
    ],
  },
  {
    key: 'd',
    name: '(d) parent + children embedded',
    replix: dimIds.map((id) => `dim (id = ${id}) { * fact { * } }`),
    sql: null,
  },
].filter((scenario) => only.has(scenario.key));

let duck: DuckDbBaseline | null = null as DuckDbBaseline | null;

/** Scenario (i)'s table: an event's JSON payload, as a JSON column serves it. */
const eventRows = Array.from({ length: Math.max(1, Math.floor(factRows / 5)) }, (_, i) => [
  i + 1,
  JSON.stringify({
    kind: ['click', 'view', 'buy'][i % 3],
    user: { name: `user ${i % 997}`, age: 18 + ((i * 7919) % 70) },
    items: [i % 5, i % 7],
  }),
]);
const eventSchema = compileSchema(
  {
    tables: [
      {
        name: 'events',
        columns: [
          { name: 'id', type: 'int', nullable: false, sourceType: 'int' },
          { name: 'payload', type: 'json', nullable: false, sourceType: 'json' },
        ],
        primaryKey: ['id'],
        uniqueKeys: [],
        foreignKeys: [],
        estimatedRows: null,
      },
    ],
  },
  parseSchemaConfig({}),
);
const eventGeneration = (() => {
  const builder = new GenerationBuilder(eventSchema);
  builder.loader('events').appendRows(eventRows);
  return builder.finish(1);
})();
const eventEngine = new QueryEngine(eventSchema);

/** Milliseconds of one run of the engine. */
function timeEngine(text: string, events = false): number {
  const started = performance.now();
  if (events) eventEngine.execute(eventGeneration, text, meta);
  else engine.execute(generation, text, meta);
  return performance.now() - started;
}

/** Median ms of each side, alternating run by run, cycling through the texts; warm-up first. */
async function timeBoth(scenario: Scenario): Promise<{ replix: number; duck: number }> {
  const sql = duck !== null ? scenario.sql : null;
  const texts = scenario.replix.length;
  for (let i = 0; i < Math.max(5, texts); i++) {
    timeEngine(scenario.replix[i % texts] as string, scenario.events);
    if (sql) await duck?.timeOnce(sql[i % sql.length] as string);
  }
  const replix: number[] = [];
  const other: number[] = [];
  for (let i = 0; i < runs; i++) {
    replix.push(timeEngine(scenario.replix[i % texts] as string, scenario.events));
    if (sql && duck) other.push(await duck.timeOnce(sql[i % sql.length] as string));
  }
  return { replix: median(replix), duck: sql ? median(other) : Number.NaN };
}

if (!args['no-duckdb']) {
  log('loading DuckDB (one thread)…');
  const started = performance.now();
  duck = await DuckDbBaseline.open(args['duckdb-storage'] === 'memory' ? 'memory' : 'file');
  await duck.loadTable('dim', DIM_COLUMNS, rows.dim);
  await duck.loadTable('fact', FACT_COLUMNS, rows.fact);
  await duck.loadTable(
    'events',
    [
      { name: 'id', type: 'INTEGER' },
      { name: 'payload', type: 'VARCHAR' },
    ],
    eventRows,
  );
  log(`DuckDB loaded in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

const table: Record<string, string | number>[] = [];
for (const scenario of scenarios) {
  log(`timing ${scenario.name}…`);
  const { replix: replixMs, duck: duckMs } = await timeBoth(scenario);
  table.push({
    query: scenario.name,
    'Replix ms': replixMs.toFixed(3),
    'DuckDB ms (1 thread)': Number.isNaN(duckMs) ? '' : duckMs.toFixed(3),
    'Replix ÷ DuckDB': Number.isNaN(duckMs) ? '' : `${(replixMs / duckMs).toFixed(2)}×`,
    goal: scenario.sql ? '≤ 1.00×' : '',
  });
}
duck?.close();
printTable(`engine time, ${factRows} fact rows, median of ${runs} runs`, table);

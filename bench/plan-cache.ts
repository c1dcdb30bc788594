/**
 * Engine time of bench:engine's PK lookup (`fact (id = N) { id qty amount }`), every lookup a
 * new id (a new text), split by phase: parse and validate (a plan cache miss), the same through
 * a cold engine (the miss as `plan` runs it: shape, parse, validate, the plan's bytes counted,
 * cached), `plan` on a warm engine (the shape cache and binding), the executor alone on a ready
 * plan, `answer` on a ready plan (what a server runs after `plan`), and `execute` from text to
 * body. Then what a cached plan holds: for each kind of template (template-kinds.ts: issue 26's
 * IN lists and the biggest plans the parse caps allow), the heap retained per template after GC
 * against what the plan cache counts it as. In memory, no database:
 *
 *   npm run bench:plans [-- --rows 200000 --lookups 50000 --rounds 7 --templates 40]
 *
 * Times are CPU microseconds per lookup (`process.cpuUsage`, this process's threads), the least
 * of the rounds: on a shared machine the wall clock measures the neighbours.
 */
import { parseArgs } from 'node:util';
import { Executor } from '../packages/engine/src/exec/execute.ts';
import { JsonWriter } from '../packages/engine/src/exec/json-writer.ts';
import type { QueryPlan } from '../packages/engine/src/exec/plan.ts';
import { QueryBudget, runToEnd } from '../packages/engine/src/exec/query-budget.ts';
import { validateQuery } from '../packages/engine/src/exec/validate.ts';
import { DEFAULT_LIMIT, QueryEngine } from '../packages/engine/src/query-engine.ts';
import { compileSchema } from '../packages/engine/src/schema/compile-schema.ts';
import { parseSchemaConfig } from '../packages/engine/src/schema/schema-config.ts';
import type { SourceSchema } from '../packages/engine/src/source-schema.ts';
import { GenerationBuilder } from '../packages/engine/src/storage/generation-builder.ts';
import {
  KINDS_SCHEMA,
  measureTemplates,
  TEMPLATE_KINDS,
} from '../packages/engine/test/template-kinds.ts';
import { parseQuery } from '../packages/query/src/index.ts';
import { printTable } from './lib/report.ts';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '200000' },
    lookups: { type: 'string', default: '50000' },
    rounds: { type: 'string', default: '7' },
    templates: { type: 'string', default: '40' },
  },
});
const rows = Number(values.rows);
const lookups = Number(values.lookups);
const rounds = Number(values.rounds);

const source: SourceSchema = {
  tables: [
    {
      name: 'fact',
      columns: [
        { name: 'id', type: 'bigint', nullable: false, sourceType: 'bigint' },
        { name: 'qty', type: 'int', nullable: false, sourceType: 'int' },
        { name: 'amount', type: 'float', nullable: false, sourceType: 'double' },
      ],
      primaryKey: ['id'],
      uniqueKeys: [],
      foreignKeys: [],
      estimatedRows: null,
    },
  ],
};
const schema = compileSchema(source, parseSchemaConfig({}));
const builder = new GenerationBuilder(schema);
const loader = builder.loader('fact');
const batch: unknown[][] = [];
for (let id = 1; id <= rows; id++) {
  batch.push([String(id), id % 97, id * 0.5]);
  if (batch.length === 10_000) loader.appendRows(batch.splice(0));
}
loader.appendRows(batch);
const generation = builder.finish(1);
const meta = { version: 'bench', swapCount: 0, ageMs: 0 };

let round = 0;
/** New ids each round, so no text repeats. */
function texts(): string[] {
  round++;
  return Array.from(
    { length: lookups },
    (_, i) => `fact (id = ${1 + ((i * 7919 + round * 104_729) % rows)}) { id qty amount }`,
  );
}

function cpuMicros(): number {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
}

const warm = new QueryEngine(schema);
const phases: Record<string, (queries: string[]) => Promise<void> | void> = {
  'plan cache miss (parse + validate)': (queries) => {
    const options = { defaultLimit: DEFAULT_LIMIT, nestedDefaultLimit: 0 };
    for (const text of queries) validateQuery(schema, parseQuery(text), options);
  },
  'plan cache miss, cold engine (+ count)': (queries) => {
    for (const text of queries) new QueryEngine(schema).plan(text);
  },
  'plan, warm engine (shape hit + bind)': (queries) => {
    for (const text of queries) warm.plan(text);
  },
  'executor alone, plan ready': (queries) => {
    const plans: QueryPlan[] = queries.map((text) => warm.plan(text));
    const started = cpuMicros();
    for (const plan of plans) {
      const out = new JsonWriter(warm.limits.maxResponseBytes);
      runToEnd(new Executor(generation, new QueryBudget(warm.limits), out).run(plan));
      out.finish();
    }
    excluded = cpuMicros() - started;
  },
  'answer, plan ready': async (queries) => {
    const plans: QueryPlan[] = queries.map((text) => warm.plan(text));
    const started = cpuMicros();
    for (const plan of plans) await warm.answer(generation, plan, meta);
    excluded = cpuMicros() - started;
  },
  'plan + answer (a server)': async (queries) => {
    for (const text of queries) await warm.answer(generation, warm.plan(text), meta);
  },
  'execute (text to body text)': (queries) => {
    for (const text of queries) warm.execute(generation, text, meta);
  },
};
/** Set by a phase that times only part of its work. */
let excluded: number | undefined;

console.log(
  `${rows} rows; ${lookups} PK lookups with new ids per round; least of ${rounds} rounds`,
);
for (const [name, run] of Object.entries(phases)) {
  let best = Infinity;
  for (let r = 0; r <= rounds; r++) {
    const queries = texts();
    excluded = undefined;
    const started = cpuMicros();
    await run(queries);
    const spent = excluded ?? cpuMicros() - started;
    if (r > 0) best = Math.min(best, spent / lookups);
  }
  console.log(`${name.padEnd(40)} ${best.toFixed(2).padStart(7)} µs`);
}
const body = JSON.parse(warm.execute(generation, 'fact (id = 42) { id qty amount }', meta));
console.log(`meta.timing_ms of one lookup: ${body.meta.timing_ms}`);

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc (npm run bench:plans does)');
const templates = Number(values.templates);
const rowsOfKinds = Object.entries(TEMPLATE_KINDS).map(([kind, make]) => {
  const { measured, counted } = measureTemplates(make, templates, gc);
  const cached = new QueryEngine(KINDS_SCHEMA);
  cached.plan(make(0));
  return {
    'kind of template': kind,
    'measured KiB': measured / 1024,
    'counted KiB': counted / 1024,
    'counted ÷ measured': counted / measured,
    kept: cached.planCache.entries ? 'yes' : 'no (over the largest entry)',
  };
});
console.log('');
printTable(`heap a cached plan holds: ${templates} templates of each kind, after GC`, rowsOfKinds);

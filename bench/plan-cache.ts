/**
 * Engine time of the benchmark's PK lookup (`fact (id = N) { id qty amount }`) with distinct
 * ids, per phase: plan (parse + validate, or the plan cache), execute to the end, and the whole
 * `answer` path a server takes. In memory, no database: `node bench/plan-cache.ts [--rows N]`.
 */
import { parseArgs } from 'node:util';
import { QueryEngine } from '../packages/engine/src/query-engine.ts';
import { compileSchema } from '../packages/engine/src/schema/compile-schema.ts';
import { parseSchemaConfig } from '../packages/engine/src/schema/schema-config.ts';
import type { SourceSchema } from '../packages/engine/src/source-schema.ts';
import { GenerationBuilder } from '../packages/engine/src/storage/generation-builder.ts';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '200000' },
    lookups: { type: 'string', default: '200000' },
  },
});
const rows = Number(values.rows);
const lookups = Number(values.lookups);

const source: SourceSchema = {
  tables: [
    {
      name: 'fact',
      columns: [
        { name: 'id', type: 'bigint', nullable: false, sourceType: 'bigint' },
        { name: 'qty', type: 'int', nullable: false, sourceType: 'int' },
        { name: 'amount', type: 'float', nullable: false, sourceType: 'double' },
        { name: 'category', type: 'string', nullable: false, sourceType: 'varchar' },
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
  batch.push([String(id), id % 97, id * 0.5, `c${id % 12}`]);
  if (batch.length === 10_000) loader.appendRows(batch.splice(0));
}
loader.appendRows(batch);
const generation = builder.finish(1);
const meta = { version: 'bench', swapCount: 0, ageMs: 0 };

/** Distinct ids, so an exact-text cache never hits; a fresh engine per phase. */
function texts(offset: number): string[] {
  return Array.from(
    { length: lookups },
    (_, i) => `fact (id = ${1 + ((i * 7919 + offset) % rows)}) { id qty amount }`,
  );
}

function perLookup(label: string, run: (engine: QueryEngine, queries: string[]) => void): void {
  const engine = new QueryEngine(schema);
  run(engine, texts(1)); // warm up: JIT, and the plan cache's shapes
  const queries = texts(3);
  const started = performance.now();
  run(engine, queries);
  const us = ((performance.now() - started) * 1000) / queries.length;
  console.log(`${label.padEnd(44)} ${us.toFixed(2).padStart(7)} µs`);
}

console.log(`${rows} rows, ${lookups} distinct PK lookups per phase`);
perLookup('plan', (engine, queries) => {
  for (const text of queries) engine.plan(text);
});
perLookup('execute (plan + run to end)', (engine, queries) => {
  for (const text of queries) engine.execute(generation, text, meta);
});
const answerEngine = new QueryEngine(schema);
async function answers(queries: string[]): Promise<number> {
  const started = performance.now();
  for (const text of queries) await answerEngine.answer(generation, answerEngine.plan(text), meta);
  return ((performance.now() - started) * 1000) / queries.length;
}
await answers(texts(1));
console.log(
  `${'answer (plan + cooperative run)'.padEnd(44)} ${(await answers(texts(5))).toFixed(2).padStart(7)} µs`,
);
const sample = JSON.parse(
  answerEngine.execute(generation, 'fact (id = 42) { id qty amount }', meta),
);
console.log('meta.timing_ms of one lookup:', sample.meta.timing_ms);

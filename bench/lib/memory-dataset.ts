/**
 * The benchmark's `dim` and `fact` tables (bench/lib/dataset.ts) built in memory, without a
 * database: the same columns, types and value distributions, each value in its canonical form
 * (engine/src/source-schema.ts), so the engine and DuckDB can be timed on identical rows.
 */
import {
  compileSchema,
  type Generation,
  GenerationBuilder,
  parseSchemaConfig,
  type SourceColumn,
  type SourceSchema,
} from '@replix/engine';
import { mulberry32 } from '@replix/testkit/mulberry32';
import { CATEGORIES, REGIONS, STATUSES } from './dataset.ts';

function column(
  name: string,
  type: SourceColumn['type'],
  nullable: boolean,
  extra: Partial<SourceColumn> = {},
): SourceColumn {
  return { name, type, nullable, sourceType: type, ...extra };
}

/** What the MySQL connector introspects from dataset.ts's DDL. */
export const BENCH_SOURCE: SourceSchema = {
  tables: [
    {
      name: 'dim',
      columns: [
        column('id', 'int', false),
        column('name', 'string', false),
        column('region', 'string', false),
        column('created', 'date', false),
      ],
      primaryKey: ['id'],
      uniqueKeys: [],
      foreignKeys: [],
      estimatedRows: null,
    },
    {
      name: 'fact',
      columns: [
        column('id', 'bigint', false),
        column('dim_id', 'int', false),
        column('qty', 'int', false),
        column('big', 'bigint', false),
        column('amount', 'float', false),
        column('price', 'decimal', false, { scale: 2 }),
        column('category', 'string', false),
        column('status', 'string', false),
        column('note', 'string', true),
        column('day', 'date', false),
        column('updated_at', 'timestamp', false, { precision: 3 }),
        column('score', 'float', true),
      ],
      primaryKey: ['id'],
      uniqueKeys: [],
      foreignKeys: [
        {
          name: 'fact_dim',
          columns: ['dim_id'],
          referencedTable: 'dim',
          referencedColumns: ['id'],
        },
      ],
      estimatedRows: null,
    },
  ],
};

const WORDS =
  'amber basil cedar delta ember fjord gale harbor iris juniper kelp lumen maple nimbus onyx pebble quartz raven sierra tundra umber vale willow xenon yarrow zephyr order shipped late gift fragile express'.split(
    ' ',
  );
const MS_PER_DAY = 86_400_000;
const BIG_BASE = 9007199254740993n;

function pick<T>(values: readonly T[], random: () => number): T {
  return values[Math.floor(random() * values.length)] as T;
}

function days(start: string, count: number): string[] {
  const first = Date.parse(`${start}T00:00:00Z`);
  return Array.from({ length: count }, (_, i) =>
    new Date(first + i * MS_PER_DAY).toISOString().slice(0, 10),
  );
}

export interface BenchRows {
  readonly dim: unknown[][];
  readonly fact: unknown[][];
}

/** Deterministic rows of both tables, canonical values in column order. */
export function benchRows(factRows: number, dimRows: number, seed = 20240601): BenchRows {
  const random = mulberry32(seed);
  const created = days('2010-01-01', 3653);
  const dim: unknown[][] = [];
  for (let i = 0; i < dimRows; i++) {
    const id = i + 1;
    const name = `${pick(WORDS, random)} ${pick(WORDS, random)} ${id}`;
    dim.push([id, name, pick(REGIONS, random), pick(created, random)]);
  }
  const factDays = days('2020-01-01', 1827);
  const firstDay = Date.parse('2020-01-01T00:00:00Z');
  let pool = '';
  while (pool.length < 8192 + 200) pool += `${pick(WORDS, random)} `;
  const fact: unknown[][] = [];
  for (let i = 0; i < factRows; i++) {
    const id = i + 1;
    const big =
      id % 10 === 0
        ? (BIG_BASE + BigInt(id)).toString()
        : Math.floor((random() * 2 - 1) * 2 ** 40).toString();
    const cents = Math.floor(random() * 10_000_000);
    let note: string | null = null;
    const dayIndex = Math.floor(random() * factDays.length);
    if (random() >= 0.1) {
      const length = 20 + Math.floor(random() * 101);
      const offset = Math.floor(random() * 8192);
      note = `x${pool.slice(offset + 1, offset + length - 1)}x`;
    }
    const msOfDay = Math.floor(random() * MS_PER_DAY);
    fact.push([
      String(id),
      (id % dimRows) + 1,
      1 + Math.floor(random() * 1000),
      big,
      Math.round(random() * 1e8) / 1e4,
      `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`,
      pick(CATEGORIES, random),
      pick(STATUSES, random),
      note,
      factDays[dayIndex],
      (firstDay + dayIndex * MS_PER_DAY + msOfDay) * 1000,
      random() < 0.2 ? null : Math.round(random() * 1e6) / 1e4,
    ]);
  }
  return { dim, fact };
}

/** A generation of the benchmark's tables, as the instance would load it. */
export function benchGeneration(rows: BenchRows): Generation {
  const schema = compileSchema(BENCH_SOURCE, parseSchemaConfig({}));
  const builder = new GenerationBuilder(schema);
  builder.loader('dim').appendRows(rows.dim);
  builder.loader('fact').appendRows(rows.fact);
  return builder.finish(1);
}

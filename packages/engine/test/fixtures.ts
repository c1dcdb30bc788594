import { QueryEngine } from '../src/query-engine.ts';
import { compileSchema } from '../src/schema/compile-schema.ts';
import type { CompiledSchema } from '../src/schema/compiled-schema.ts';
import { parseSchemaConfig } from '../src/schema/schema-config.ts';
import type { SourceColumn, SourceSchema, SourceTable } from '../src/source-schema.ts';
import { Generation, type TableSnapshot } from '../src/storage/generation.ts';
import { GenerationBuilder } from '../src/storage/generation-builder.ts';
import { planIndexes } from '../src/storage/index-plan.ts';
import { buildIndexes, TableLoader } from '../src/storage/table-loader.ts';

export function column(
  name: string,
  type: SourceColumn['type'],
  nullable = true,
  scale?: number,
): SourceColumn {
  return { name, type, nullable, sourceType: type, ...(scale !== undefined ? { scale } : {}) };
}

export function table(
  name: string,
  columns: SourceColumn[],
  extra: Partial<SourceTable> = {},
): SourceTable {
  return {
    name,
    columns,
    primaryKey: ['id'],
    uniqueKeys: [],
    foreignKeys: [],
    estimatedRows: null,
    ...extra,
  };
}

/** customers 1-n orders; a small shop. */
export const shopSource: SourceSchema = {
  tables: [
    table('customers', [
      column('id', 'int', false),
      column('name', 'string'),
      column('country', 'string'),
    ]),
    table(
      'orders',
      [
        column('id', 'bigint', false),
        column('customer_id', 'int'),
        column('total', 'decimal', true, 2),
        column('status', 'string'),
        column('placed', 'date'),
      ],
      {
        foreignKeys: [
          {
            name: 'fk_customer',
            columns: ['customer_id'],
            referencedTable: 'customers',
            referencedColumns: ['id'],
          },
        ],
      },
    ),
  ],
};

export const shopRows: Record<string, unknown[][]> = {
  customers: [
    [1, 'Ada', 'UK'],
    [2, 'Björk', 'IS'],
    [3, 'Σωκράτης', 'GR'],
    [4, null, null],
  ],
  orders: [
    ['10', 1, '12.50', 'paid', '2024-01-02'],
    ['11', 1, '7.25', 'open', '2024-02-03'],
    ['12', 2, '100.00', 'paid', '2024-03-04'],
    ['13', 3, null, 'void', null],
    ['14', null, '1.00', 'paid', '2024-05-06'],
  ],
};

export function loadGeneration(
  schema: CompiledSchema,
  rows: Record<string, unknown[][]>,
  id = 1,
): Generation {
  const builder = new GenerationBuilder(schema);
  for (const [name, tableRows] of Object.entries(rows)) builder.loader(name).appendRows(tableRows);
  return builder.finish(id);
}

export function shop(config: unknown = {}): { schema: CompiledSchema; generation: Generation } {
  const schema = compileSchema(shopSource, parseSchemaConfig(config));
  return { schema, generation: loadGeneration(schema, shopRows) };
}

/**
 * Like `loadGeneration`, with chunks of `chunkRows` rows (the engine's default is 65536), so
 * small tests reach the multi-chunk code paths.
 */
export function buildGeneration(
  schema: CompiledSchema,
  rows: Record<string, readonly (readonly unknown[])[]>,
  chunkRows: number,
  id = 1,
): Generation {
  const plan = planIndexes(schema);
  const tables = new Map<string, TableSnapshot>();
  for (const compiled of schema.tables) {
    const loader = new TableLoader(compiled, chunkRows);
    loader.appendRows(rows[compiled.name] ?? []);
    const data = loader.finish();
    tables.set(compiled.name, {
      schema: compiled,
      data,
      indexes: buildIndexes(data, plan.get(compiled.name) ?? []),
    });
  }
  return new Generation(id, schema, tables);
}

/** The response envelope of `text`, parsed. */
export function runQuery(schema: CompiledSchema, generation: Generation, text: string) {
  return JSON.parse(new QueryEngine(schema).execute(generation, text, TEST_META));
}

export const TEST_META = { version: '0.1.0-test', swapCount: 0, ageMs: 0 };

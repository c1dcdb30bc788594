import type { CompiledSchema } from '../schema/compiled-schema.ts';
import { applyChanges, type RowChange } from './apply-changes.ts';
import { Generation, type TableSnapshot } from './generation.ts';
import { planIndexes } from './index-plan.ts';
import { buildIndexes, TableLoader } from './table-loader.ts';

/**
 * Builds a whole generation from scratch: stream each table's rows into `loader(name)`, then
 * `finish` builds the indexes and returns the generation.
 */
export class GenerationBuilder {
  readonly #schema: CompiledSchema;
  readonly #loaders = new Map<string, TableLoader>();

  constructor(schema: CompiledSchema) {
    this.#schema = schema;
    for (const table of schema.tables) this.#loaders.set(table.name, new TableLoader(table));
  }

  loader(table: string): TableLoader {
    const loader = this.#loaders.get(table);
    if (!loader) throw new Error(`table ${table} is not in the schema`);
    return loader;
  }

  finish(id: number): Generation {
    const plan = planIndexes(this.#schema);
    const tables = new Map<string, TableSnapshot>();
    for (const table of this.#schema.tables) {
      const data = this.loader(table.name).finish();
      tables.set(table.name, {
        schema: table,
        data,
        indexes: buildIndexes(data, plan.get(table.name) ?? []),
      });
    }
    return new Generation(id, this.#schema, tables);
  }
}

/**
 * The generation after `changes` (by API table name), sharing every untouched table, chunk and
 * index entry with `current`.
 */
export function nextGeneration(
  current: Generation,
  changes: ReadonlyMap<string, readonly RowChange[]>,
  id: number,
): Generation {
  const plan = planIndexes(current.schema);
  const tables = new Map(current.tables);
  for (const [name, tableChanges] of changes) {
    const snapshot = current.tables.get(name);
    if (!snapshot || tableChanges.length === 0) continue;
    tables.set(name, applyChanges(snapshot, tableChanges, plan.get(name) ?? []));
  }
  return new Generation(id, current.schema, tables);
}

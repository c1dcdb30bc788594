import type { CompiledSchema, CompiledTable } from '../schema/compiled-schema.ts';
import { applyChanges, type RowChange } from './apply-changes.ts';
import { Generation, type TableSnapshot } from './generation.ts';
import { type IndexSpec, planIndexes } from './index-plan.ts';
import type { TableData } from './table-data.ts';
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
      tables.set(table.name, tableSnapshot(table, data, plan.get(table.name) ?? []));
    }
    return new Generation(id, this.#schema, tables);
  }
}

/** One table of a new generation from its loaded rows: builds the indexes `specs` name. */
function tableSnapshot(
  table: CompiledTable,
  data: TableData,
  specs: readonly IndexSpec[],
): TableSnapshot {
  return { schema: table, data, indexes: buildIndexes(data, specs) };
}

/**
 * Assembles a generation from tables loaded apart (on other threads, in any order): `add` each
 * table's rows as they arrive, which builds its indexes then, and `finish` once all are in.
 */
export class GenerationAssembler {
  readonly #schema: CompiledSchema;
  readonly #plan: Map<string, IndexSpec[]>;
  readonly #tables = new Map<string, TableSnapshot>();

  constructor(schema: CompiledSchema) {
    this.#schema = schema;
    this.#plan = planIndexes(schema);
  }

  add(name: string, data: TableData): void {
    const table = this.#schema.tablesByName.get(name);
    if (!table) throw new Error(`table ${name} is not in the schema`);
    this.#tables.set(name, tableSnapshot(table, data, this.#plan.get(name) ?? []));
  }

  finish(id: number): Generation {
    const tables = new Map<string, TableSnapshot>();
    for (const table of this.#schema.tables) {
      const snapshot = this.#tables.get(table.name);
      if (!snapshot) throw new Error(`table ${table.name} was not loaded`);
      tables.set(table.name, snapshot);
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
  const stamps = new Map(current.tableStamps);
  for (const [name, tableChanges] of changes) {
    const snapshot = current.tables.get(name);
    if (!snapshot || tableChanges.length === 0) continue;
    tables.set(name, applyChanges(snapshot, tableChanges, plan.get(name) ?? []));
    stamps.set(name, id);
  }
  return new Generation(id, current.schema, tables, undefined, stamps);
}

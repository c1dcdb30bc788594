import type {
  CompiledSchema,
  CompiledTable,
  ForeignKeyRule,
  SourceColumn,
  SourceForeignKey,
} from '@replix/engine';

/** A foreign key whose ON DELETE or ON UPDATE rule changes referencing rows. */
export interface ActionForeignKey extends SourceForeignKey {
  /** Source name of the referencing (child) table. */
  readonly table: string;
}

/** Rules that change the referencing rows; `restrict` and `no action` change none. */
export function changesChildren(rule: ForeignKeyRule | undefined): boolean {
  return rule === 'cascade' || rule === 'set null' || rule === 'set default';
}

/**
 * The source's foreign keys with actions, as a graph from referenced (parent) table to the
 * keys that reference it, over every source table, served or not: an action may pass through
 * a table the instance does not serve.
 */
export class ForeignKeyGraph {
  readonly #incoming = new Map<string, ActionForeignKey[]>();
  readonly #served = new Map<string, CompiledTable>();
  readonly #columns = new Map<string, readonly SourceColumn[]>();

  constructor(schema: CompiledSchema) {
    for (const table of schema.tables) this.#served.set(table.sourceName, table);
    for (const table of schema.source?.tables ?? []) {
      this.#columns.set(table.name, table.columns);
      for (const key of table.foreignKeys) {
        if (!changesChildren(key.onDelete) && !changesChildren(key.onUpdate)) continue;
        const list = this.#incoming.get(key.referencedTable) ?? [];
        list.push({ ...key, table: table.name });
        this.#incoming.set(key.referencedTable, list);
      }
    }
  }

  /** Whether any foreign key of the source changes referencing rows. */
  get empty(): boolean {
    return this.#incoming.size === 0;
  }

  /** The action keys that reference `table` (a source name). */
  referencing(table: string): readonly ActionForeignKey[] {
    return this.#incoming.get(table) ?? [];
  }

  /** The served table of a source name, if served. */
  served(table: string): CompiledTable | undefined {
    return this.#served.get(table);
  }

  /** Served tables an action reaches from `table` through one or more keys (not `table`). */
  servedDescendants(table: string): CompiledTable[] {
    const seen = new Set<string>([table]);
    const found: CompiledTable[] = [];
    const pending = [table];
    for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
      for (const key of this.referencing(next)) {
        if (seen.has(key.table)) continue;
        seen.add(key.table);
        pending.push(key.table);
        const served = this.#served.get(key.table);
        if (served) found.push(served);
      }
    }
    return found;
  }

  /**
   * Unserved tables whose own changes set off actions that reach a served table: the change
   * stream must carry them too (with all their columns), or their deletes go unseen.
   */
  unservedParents(): { readonly table: string; readonly columns: readonly SourceColumn[] }[] {
    const parents: { table: string; columns: readonly SourceColumn[] }[] = [];
    for (const [table, columns] of this.#columns) {
      if (this.#served.has(table) || !this.#incoming.has(table)) continue;
      if (this.servedDescendants(table).length > 0) parents.push({ table, columns });
    }
    return parents;
  }

  /** Columns of an unserved source table, in source order, for reading its change images. */
  sourceColumns(table: string): readonly SourceColumn[] | undefined {
    return this.#columns.get(table);
  }
}

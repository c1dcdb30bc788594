import type { CompiledSchema, CompiledTable, RowChange } from '@replix/engine';
import type { SnapshotController } from '../snapshot/snapshot-controller.ts';
import type { RowFetcher } from './change-mapper.ts';

/** Reads the rows of `table` whose `column` is above `after` (all rows with `after` null). */
export type RowsSince = (
  table: CompiledTable,
  column: string,
  after: unknown,
) => Promise<unknown[][]>;

/**
 * Poll mode with a change column: each tick reads only the rows whose change column is above
 * the largest value already loaded and upserts them. Deletes are not seen (the safety net
 * reload covers them). Tables without the column are re-read whole.
 */
export class IncrementalPoller {
  readonly #controller: SnapshotController;
  readonly #schema: CompiledSchema;
  readonly #column: string;
  readonly #rowsSince: RowsSince;
  readonly #fetchAll: RowFetcher;
  readonly #high = new Map<string, unknown>();

  constructor(options: {
    controller: SnapshotController;
    schema: CompiledSchema;
    column: string;
    rowsSince: RowsSince;
    fetchAll: RowFetcher;
  }) {
    this.#controller = options.controller;
    this.#schema = options.schema;
    this.#column = options.column;
    this.#rowsSince = options.rowsSince;
    this.#fetchAll = options.fetchAll;
  }

  /** After a full snapshot: read the high-water marks again from it. */
  reset(): void {
    this.#high.clear();
  }

  /** One poll, applied as one generation (no swap when nothing changed). */
  async poll(): Promise<boolean> {
    return this.#controller.flush(async () => {
      const served = this.#controller.current();
      const changes = new Map<string, RowChange[]>();
      if (!served) return changes;
      for (const table of this.#schema.tables) {
        // Views are re-read at their own interval by `ViewRefresher`.
        if (table.kind !== 'table') continue;
        const column = table.columns.find((c) => c.sourceName === this.#column);
        if (!column) {
          const rows = await this.#fetchAll(table, null);
          changes.set(table.name, [
            { op: 'truncate' },
            ...rows.map((row): RowChange => ({ op: 'insert', row })),
          ]);
          continue;
        }
        if (!this.#high.has(table.name)) {
          // Canonical values throughout: the connector turns them into parameters itself.
          this.#high.set(table.name, served.generation.maxValue(table.name, column.index));
        }
        const rows = await this.#rowsSince(
          table,
          column.sourceName,
          this.#high.get(table.name) ?? null,
        );
        if (rows.length === 0) continue;
        changes.set(
          table.name,
          rows.map((row): RowChange => ({ op: 'insert', row })),
        );
        let high = this.#high.get(table.name) ?? null;
        for (const row of rows) {
          const value = row[column.index];
          if (
            value !== null &&
            value !== undefined &&
            (high === null || (value as number) > (high as number))
          )
            high = value;
        }
        this.#high.set(table.name, high);
      }
      return changes;
    });
  }
}

import type { SourceColumn } from '@replix/engine';
import type { MsSqlLsn } from './mssql-position.ts';
import { enableTableIssue } from './mssql-replication.ts';
import { msSqlStringLiteral } from './mssql-sql.ts';

/** A capture instance of a table: the change function's suffix, its low end and its columns. */
export interface MsSqlCaptureInstance {
  readonly name: string;
  /** `sys.fn_cdc_get_min_lsn`: changes before it are cleaned up; zero when not established. */
  readonly minLsn: MsSqlLsn;
  readonly columns: ReadonlySet<string>;
}

/** What to do about one followed table in a poll. */
export type MsSqlTablePlan =
  /** Read its changes through `captureInstance`. */
  | { readonly kind: 'read'; readonly captureInstance: string }
  /** Its columns no longer match the requested ones: report a `schemaChange`, stop following. */
  | { readonly kind: 'schemaChange'; readonly detail: string }
  /** No capture instance covers the requested columns: a setup problem, with the fix. */
  | { readonly kind: 'notCaptured'; readonly detail: string; readonly issue: string }
  /** Cleanup removed changes the stream still needs. */
  | { readonly kind: 'expired'; readonly captureInstance: string; readonly minLsn: MsSqlLsn };

export interface MsSqlTableState {
  readonly schema: string;
  readonly table: string;
  /** The columns the stream delivers, as the caller asked for them. */
  readonly requested: readonly SourceColumn[];
  /** The table's columns now, from sys.columns; undefined when the table is gone. */
  readonly current: readonly SourceColumn[] | undefined;
  readonly instances: readonly MsSqlCaptureInstance[];
  /** The first LSN the poll reads. */
  readonly next: MsSqlLsn;
}

/**
 * Decides how a poll treats one table. CDC keeps a dropped column in the capture instance (and
 * sends NULLs for it) and retypes a captured column along with the table, so drops and type
 * changes are told from the table's current columns. A column added to the table is not
 * captured by an existing instance, so the stream's columns stay what they were: no change.
 * With two capture instances (a DBA adding one after a schema change), the one with the longest
 * history that still covers every requested column is read.
 */
export function planMsSqlTable(state: MsSqlTableState): MsSqlTablePlan {
  if (state.current === undefined)
    return { kind: 'schemaChange', detail: 'The table was dropped.' };
  const current = new Map(state.current.map((column) => [column.name, column]));
  for (const column of state.requested) {
    const now = current.get(column.name);
    if (now === undefined) {
      return { kind: 'schemaChange', detail: `Column "${column.name}" was dropped.` };
    }
    if (now.sourceType !== column.sourceType) {
      return {
        kind: 'schemaChange',
        detail: `Column "${column.name}" changed type from ${column.sourceType} to ${now.sourceType}.`,
      };
    }
  }

  if (state.instances.length === 0) {
    return {
      kind: 'notCaptured',
      detail: `Change data capture is not enabled for table "${state.table}".`,
      issue: enableTableIssue(state.schema, state.table),
    };
  }
  const covering = state.instances
    .filter((instance) => state.requested.every((column) => instance.columns.has(column.name)))
    .sort((a, b) => a.minLsn.compare(b.minLsn));
  const chosen = covering[0];
  if (chosen === undefined) {
    const missing = state.requested
      .filter((column) => !state.instances.some((instance) => instance.columns.has(column.name)))
      .map((column) => `"${column.name}"`);
    const which = missing.length > 0 ? missing.join(', ') : 'the requested columns together';
    return {
      kind: 'notCaptured',
      detail: `No capture instance of table "${state.table}" captures ${which}.`,
      issue:
        `Create a capture instance of table "${state.table}" that captures every replicated ` +
        `column: EXEC sys.sp_cdc_enable_table @source_schema = ${msSqlStringLiteral(state.schema)}, ` +
        `@source_name = ${msSqlStringLiteral(state.table)}, @role_name = NULL, ` +
        `@capture_instance = ${msSqlStringLiteral(`${state.schema}_${state.table}_2`)} ` +
        '(a table may have two).',
    };
  }
  if (!chosen.minLsn.isZero && state.next.compare(chosen.minLsn) < 0) {
    return { kind: 'expired', captureInstance: chosen.name, minLsn: chosen.minLsn };
  }
  return { kind: 'read', captureInstance: chosen.name };
}

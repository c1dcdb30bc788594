import type { SourceColumn } from '@replix/engine';
import type { SourceChange } from '../replication.ts';
import { isMsSqlLargeObjectType, isMsSqlLegacyLargeObjectType } from './mssql-types.ts';

/** `__$operation` values of `cdc.fn_cdc_get_all_changes_…` with `all update old`. */
export const CDC_OPERATION = {
  delete: 1,
  insert: 2,
  updateBefore: 3,
  updateAfter: 4,
} as const;

/** One row of a change function's result, its values already in canonical form. */
export interface MsSqlChangeRow {
  readonly table: string;
  /** `__$start_lsn`, the transaction's commit LSN, as 20 hex digits. */
  readonly lsn: string;
  /** `__$seqval`, the change's place in its transaction, as 20 hex digits. */
  readonly seqval: string;
  readonly operation: number;
  readonly values: readonly unknown[];
}

/** The changes of one committed transaction, in the order they were made. */
export interface MsSqlTransaction {
  /** The commit LSN, as 20 hex digits. */
  readonly lsn: string;
  readonly changes: readonly SourceChange[];
}

/**
 * Indexes of the columns whose values change data capture does not send in an image: in update
 * before-images every large-object column unless the update changed it, in deletes text, ntext
 * and image (deprecated types CDC never copies there). Their NULLs mean "not sent", so they
 * are delivered as `undefined`, which `SourceChange` allows in `update.before`.
 */
export interface MsSqlUnsentColumns {
  readonly beforeImage: readonly number[];
  readonly deleteImage: readonly number[];
}

export function msSqlUnsentColumns(columns: readonly SourceColumn[]): MsSqlUnsentColumns {
  const beforeImage: number[] = [];
  const deleteImage: number[] = [];
  columns.forEach((column, index) => {
    if (isMsSqlLargeObjectType(column.sourceType)) beforeImage.push(index);
    if (isMsSqlLegacyLargeObjectType(column.sourceType)) deleteImage.push(index);
  });
  return { beforeImage, deleteImage };
}

/** The row's values with the unsent ones (see `MsSqlUnsentColumns`) made `undefined`. */
export function withUnsentValues(
  operation: number,
  values: unknown[],
  unsent: MsSqlUnsentColumns,
): unknown[] {
  const indexes =
    operation === CDC_OPERATION.updateBefore
      ? unsent.beforeImage
      : operation === CDC_OPERATION.delete
        ? unsent.deleteImage
        : [];
  for (const index of indexes) if (values[index] === null) values[index] = undefined;
  return values;
}

/** Commit order, then order within the transaction; a before-image just ahead of its after-image. */
function byLogOrder(a: MsSqlChangeRow, b: MsSqlChangeRow): number {
  if (a.lsn !== b.lsn) return a.lsn < b.lsn ? -1 : 1;
  if (a.seqval !== b.seqval) return a.seqval < b.seqval ? -1 : 1;
  return a.operation - b.operation;
}

/**
 * Merges the change rows of several tables (each capture instance is queried on its own) into
 * whole transactions in commit order. Rows of one transaction share `__$start_lsn`; within it,
 * `__$seqval` orders them across tables. An update comes as a before-image (3) directly
 * followed by its after-image (4) with the same `__$seqval`; an after-image with no before-image
 * becomes an update with `before: null`, and a before-image with no after-image (which CDC does
 * not produce) is dropped rather than guessed at.
 */
export function groupMsSqlChanges(rows: Iterable<MsSqlChangeRow>): MsSqlTransaction[] {
  const ordered = [...rows].sort(byLogOrder);
  const transactions: MsSqlTransaction[] = [];
  let current: { lsn: string; changes: SourceChange[] } | undefined;
  for (let i = 0; i < ordered.length; i++) {
    const row = ordered[i]!;
    if (current === undefined || current.lsn !== row.lsn) {
      current = { lsn: row.lsn, changes: [] };
      transactions.push(current);
    }
    switch (row.operation) {
      case CDC_OPERATION.delete:
        current.changes.push({ op: 'delete', table: row.table, row: row.values });
        break;
      case CDC_OPERATION.insert:
        current.changes.push({ op: 'insert', table: row.table, row: row.values });
        break;
      case CDC_OPERATION.updateBefore: {
        const next = ordered[i + 1];
        const paired =
          next !== undefined &&
          next.operation === CDC_OPERATION.updateAfter &&
          next.lsn === row.lsn &&
          next.seqval === row.seqval &&
          next.table === row.table;
        if (paired) {
          current.changes.push({
            op: 'update',
            table: row.table,
            before: row.values,
            after: next.values,
          });
          i++;
        }
        break;
      }
      case CDC_OPERATION.updateAfter:
        current.changes.push({ op: 'update', table: row.table, before: null, after: row.values });
        break;
      default:
        // `all update old` produces no other operation codes.
        break;
    }
  }
  return transactions;
}

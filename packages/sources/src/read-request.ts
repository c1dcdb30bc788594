import type { TableReadRequest } from './connector.ts';
import { SourceError } from './errors.ts';

/** Rows per batch when a `TableReadRequest` names no `batchSize`. */
export const DEFAULT_BATCH_SIZE = 5000;

/**
 * Checks a read request before any SQL is sent and returns its batch size: a zero or fractional
 * size would never fill a batch, and a read of no columns is no valid SELECT on MySQL.
 */
export function checkReadRequest(request: TableReadRequest): number {
  const size = request.batchSize ?? DEFAULT_BATCH_SIZE;
  if (!Number.isSafeInteger(size) || size < 1) {
    throw new SourceError(
      'invalid_read_request',
      'A table read needs a positive whole batch size.',
    );
  }
  if (request.columns.length === 0) {
    throw new SourceError('invalid_read_request', 'A table read needs at least one column.');
  }
  return size;
}

/** Where a snapshot reader stands: reads run one table at a time, and none after close. */
export type SnapshotReadState = 'open' | 'reading' | 'closed';

/** Throws the error for a read that the reader's state does not allow. */
export function checkSnapshotState(state: SnapshotReadState): void {
  if (state === 'closed') throw new SourceError('snapshot_closed', 'The snapshot is closed.');
  if (state === 'reading') {
    throw new SourceError('snapshot_busy', 'The snapshot reads one table at a time.');
  }
}

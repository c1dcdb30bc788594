import {
  PositionExpiredError,
  ReplicationError,
  type SourceError,
  type SourceTarget,
  sourceErrorFrom,
} from '../errors.ts';

/** The SQLSTATE of an error PostgreSQL reported, if it is one. */
export function codeOfPostgresError(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  return typeof error.code === 'string' ? error.code : undefined;
}

/** 55006 object_in_use: another walsender streams from the slot (or is still letting it go). */
export function isSlotBusy(error: unknown): boolean {
  return codeOfPostgresError(error) === '55006';
}

/**
 * A replication error as a `SourceError` with a safe message: WAL the slot needs gone (58P01,
 * "requested WAL segment has already been removed") means the position expired; a busy slot
 * may free itself; everything else is mapped as any query error (connection lost, …).
 */
export function replicationErrorFrom(
  error: unknown,
  target: SourceTarget,
  position: string,
  action: string,
): SourceError {
  const code = codeOfPostgresError(error);
  if (code === '58P01') {
    return new PositionExpiredError(
      position,
      'The WAL needed to resume from this position was removed: take a new snapshot.',
    );
  }
  if (code === '55006') {
    return new ReplicationError(
      'replication_failed',
      'The replication slot is in use by another connection.',
      { shouldRetry: true },
    );
  }
  return sourceErrorFrom(error, target, action);
}

/**
 * A failed replication connection. The pool's ordinary connection worked just before, so a
 * refused login here (28000) is pg_hba.conf having no `replication` line for this user and
 * host, and 42501 is the missing REPLICATION attribute.
 */
export function replicationConnectErrorFrom(error: unknown, target: SourceTarget): SourceError {
  const code = codeOfPostgresError(error);
  if (code === '28000') {
    return new ReplicationError(
      'replication_not_ready',
      'The source database refused a replication connection.',
      {
        issues: [
          'Allow replication connections for the user in pg_hba.conf (a line whose database is "replication").',
        ],
      },
    );
  }
  if (code === '42501') {
    return new ReplicationError(
      'replication_not_ready',
      'The user may not start a replication connection.',
      { issues: ['Give the user the REPLICATION attribute (or make it a superuser).'] },
    );
  }
  return sourceErrorFrom(error, target, 'connecting for replication');
}

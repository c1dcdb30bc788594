import { sourceDialect } from '@replix/sources';
import { recordAudit } from '../../adapters/events/audit-log.ts';
import { notify } from '../../adapters/events/notifications.ts';
import type { StoreDb } from '../../adapters/store/open-store.ts';
import type { ReplicationSourceRow } from '../../adapters/store/replication-sources.ts';
import type { SecretBox } from '../../adapters/store/secret-box.ts';
import { replicaReplicationId } from '../../domain/replication-id.ts';
import { splitSourceSchema } from '../../domain/source-schema-name.ts';
import { connectionTarget, withSourceConnector } from '../source-access/connection-target.ts';

/** Where docs/replication.md says how to drop the state by hand. */
export const DROP_BY_HAND_DOC = 'docs/replication.md#dropping-it-by-hand';

/** The replica ordinals whose state waits to be dropped on `source`, from `from` up. */
function ordinalsFrom(source: ReplicationSourceRow, from: number): number[] {
  return Array.from({ length: Math.max(0, source.replicas_launched - from) }, (_, i) => from + i);
}

/**
 * Drops the state of replicas `from` up on the recorded source, reached with the recorded
 * settings (through their tunnel, if any). Dropping what does not exist succeeds. Returns the
 * failure's message (a source error's names no host, user or password), or undefined.
 */
export async function dropSourceState(
  secrets: SecretBox,
  source: ReplicationSourceRow,
  from: number,
): Promise<string | undefined> {
  try {
    const target = connectionTarget(source, secrets, source.source_schema);
    for (const ordinal of ordinalsFrom(source, from)) {
      await withSourceConnector(
        { ...target, replicationId: replicaReplicationId(source.replication_id, ordinal) },
        (connector) => connector.dropReplication(),
      );
    }
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : 'The replication state could not be dropped.';
  }
}

/**
 * Records that every attempt to drop the state failed: an audit event and a sticky
 * notification naming what is left where (source host, port and database; no user or
 * secret), so an operator can drop it by hand.
 */
export async function reportStateLeft(
  db: StoreDb,
  source: ReplicationSourceRow,
  from: number,
  attempts: number,
  error: string,
): Promise<void> {
  const state = sourceDialect(source.backend).replicationState;
  if (state === undefined) return;
  const names = ordinalsFrom(source, from).map(
    (ordinal) => `${state.namePrefix}${replicaReplicationId(source.replication_id, ordinal)}`,
  );
  const { database } = splitSourceSchema(source.backend, source.source_schema);
  const host = source.host.includes(':') ? `[${source.host}]` : source.host;
  await recordAudit(db, {
    accountId: source.account_id,
    databaseId: source.database_id,
    entityType: 'database',
    entityId: source.database_id,
    eventType: 'database.replication_drop_failed',
    payload: {
      replicationState: state.what,
      names,
      host: source.host,
      port: source.port,
      database,
      attempts,
      error,
    },
  });
  await notify(db, {
    accountId: source.account_id,
    databaseId: source.database_id,
    eventType: 'database.replication_drop_failed',
    message: `The ${state.what} ${names.join(', ')} could not be dropped from ${host}:${source.port}/${database} after ${attempts} attempts; it keeps holding the source's change log. Drop it by hand: ${DROP_BY_HAND_DOC}.`,
    detail: error,
    severity: 'error',
    sticky: true,
  });
}

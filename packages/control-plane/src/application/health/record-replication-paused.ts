import type { Kysely } from 'kysely';
import { recordAudit } from '../../adapters/events/audit-log.ts';
import { recordReplicationPausedIf } from '../../adapters/store/database-store.ts';
import type { Store } from '../../adapters/store/schema.ts';

export interface ReplicationPausedObservation {
  readonly accountId: string;
  readonly databaseId: string;
  /** The store's `replication_paused` as read before the instance was asked. */
  readonly storedPaused: boolean;
  /** What the instance's `/health/detail` said. */
  readonly observedPaused: boolean;
}

/**
 * Makes the store agree with an instance whose replication was paused or resumed directly
 * (an admin key calling `/replication/pause|resume`). The update is conditional on the stored
 * value read before asking the instance, so a pause or resume the control plane made meanwhile
 * is never undone by an answer read before it. Returns whether the store changed.
 */
export async function recordReplicationPaused(
  tx: Kysely<Store>,
  observation: ReplicationPausedObservation,
): Promise<boolean> {
  const { accountId, databaseId, storedPaused, observedPaused } = observation;
  if (storedPaused === observedPaused) return false;
  if (!(await recordReplicationPausedIf(tx, databaseId, storedPaused, observedPaused))) {
    return false;
  }
  await recordAudit(tx, {
    accountId,
    databaseId,
    entityType: 'database',
    entityId: databaseId,
    // Not database.pause_replication (an action the control plane took): found at the instance.
    eventType: observedPaused ? 'database.replication_paused' : 'database.replication_resumed',
    payload: { replicationPaused: observedPaused, source: 'instance' },
  });
  return true;
}

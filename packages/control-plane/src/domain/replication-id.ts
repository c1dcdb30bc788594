/** PostgreSQL sources name slot and publication `replix_<id>`, at most 63 bytes in all. */
const MAX_REPLICATION_ID = 56;

/**
 * The replication id of a database: stable across its deploys, so a redeployed instance
 * resumes from the slot its predecessor left, and terminate knows what to drop.
 */
export function replicationIdFor(databaseId: string): string {
  return `rx_${databaseId.replaceAll('-', '').toLowerCase()}`.slice(0, MAX_REPLICATION_ID);
}

/**
 * The replication id of an instance's replica `ordinal`: replica 0 keeps the database's own (so
 * a database without replicas names its state as before), replica k adds `_r<k>`. Each replica
 * follows the source itself, under its own slot or binlog client.
 */
export function replicaReplicationId(replicationId: string, ordinal: number): string {
  if (!Number.isInteger(ordinal) || ordinal < 0)
    throw new Error('A replica ordinal is an integer ≥ 0.');
  return ordinal === 0 ? replicationId : `${replicationId}_r${ordinal}`;
}

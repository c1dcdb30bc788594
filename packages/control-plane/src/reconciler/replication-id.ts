/** PostgreSQL sources name slot and publication `replix_<id>`, at most 63 bytes in all. */
const MAX_REPLICATION_ID = 56;

/**
 * The replication id of a database: stable across its deploys, so a redeployed instance
 * resumes from the slot its predecessor left, and terminate knows what to drop.
 */
export function replicationIdFor(databaseId: string): string {
  return `rx_${databaseId.replaceAll('-', '').toLowerCase()}`.slice(0, MAX_REPLICATION_ID);
}

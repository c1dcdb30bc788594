import { sourceDialect } from '@replix/sources';
import { connectionTarget, withSourceConnector } from '../connections/connection-target.ts';
import type { RoleContext } from '../roles/role.ts';
import type { DatabaseRow } from './leases.ts';
import { replicationIdFor } from './replication-id.ts';

/**
 * Drops what change data capture keeps on the source for the database (the dialect's
 * `replicationState`: PostgreSQL's slot and publication), so a terminated database does not
 * hold WAL on the customer's server. Other sources keep nothing. A failure is logged and ignored: the database is terminated anyway,
 * and an unreachable source must not block that.
 */
export async function dropReplicationState(
  context: Pick<RoleContext, 'db' | 'secrets' | 'log'>,
  database: DatabaseRow,
): Promise<void> {
  try {
    const connection = await context.db
      .selectFrom('connections')
      .selectAll()
      .where('id', '=', database.connection_id)
      .executeTakeFirst();
    if (!connection || sourceDialect(connection.backend).replicationState === undefined) return;
    const target = connectionTarget(connection, context.secrets, database.source_schema);
    await withSourceConnector(
      { ...target, replicationId: replicationIdFor(database.id) },
      (connector) => connector.dropReplication(),
    );
  } catch (error) {
    context.log.warn(
      { databaseId: database.id, err: { message: (error as Error).message } },
      'could not drop the source replication state',
    );
  }
}

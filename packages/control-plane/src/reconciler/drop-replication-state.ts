import { sourceDialect } from '@replix/sources';
import { connectionTarget, withSourceConnector } from '../connections/connection-target.ts';
import { MAX_REPLICAS } from '../domain/plans.ts';
import type { RoleContext } from '../roles/role.ts';
import type { DatabaseRow } from './leases.ts';
import { replicaReplicationId, replicationIdFor } from './replication-id.ts';

/** Every replica ordinal a database may ever have run: those of the largest plan. */
const EVERY_ORDINAL = Array.from({ length: MAX_REPLICAS }, (_, ordinal) => ordinal);

/**
 * Drops what change data capture keeps on the source for the database (the dialect's
 * `replicationState`: PostgreSQL's slot and publication) under each replica's replication id
 * (`replicaReplicationId`), so a terminated database does not hold WAL on the customer's
 * server. By default every ordinal any plan allows: a database may have run more replicas
 * before a resize or a downgrade, and dropping what does not exist costs one statement. Other
 * sources keep nothing. A failure is logged and ignored: the database is terminated anyway,
 * and an unreachable source must not block that.
 */
export async function dropReplicationState(
  context: Pick<RoleContext, 'db' | 'secrets' | 'log'>,
  database: DatabaseRow,
  ordinals: readonly number[] = EVERY_ORDINAL,
): Promise<void> {
  try {
    const connection = await context.db
      .selectFrom('connections')
      .selectAll()
      .where('id', '=', database.connection_id)
      .executeTakeFirst();
    if (!connection || sourceDialect(connection.backend).replicationState === undefined) return;
    const target = connectionTarget(connection, context.secrets, database.source_schema);
    const base = replicationIdFor(database.id);
    for (const ordinal of ordinals) {
      await withSourceConnector(
        { ...target, replicationId: replicaReplicationId(base, ordinal) },
        (connector) => connector.dropReplication(),
      );
    }
  } catch (error) {
    context.log.warn(
      { databaseId: database.id, err: { message: (error as Error).message } },
      'could not drop the source replication state',
    );
  }
}

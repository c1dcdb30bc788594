import { randomUUID } from 'node:crypto';
import { sourceDialect } from '@replix/sources';
import { type Selectable, sql } from 'kysely';
import type { SourceSettings } from '../../application/source-access/connection-target.ts';
import { replicationIdFor } from '../../domain/replication-id.ts';
import { splitSourceSchema } from '../../domain/source-schema-name.ts';
import type { JobQueue, Lease } from '../jobs/job-queue.ts';
import { connectionById } from './connection-store.ts';
import type { DatabaseRow } from './database-store.ts';
import { everLaunched } from './instance-store.ts';
import type { StoreDb } from './open-store.ts';
import type { ReplicationSourceTable } from './schema.ts';

export type ReplicationSourceRow = Selectable<ReplicationSourceTable>;

/** Sources whose replication state waits to be dropped and is due, the longest due first. */
export const REPLICATION_DROP_QUEUE: JobQueue<'replication_sources'> = {
  table: 'replication_sources',
  waiting: sql<boolean>`drop_from IS NOT NULL AND drop_failed_at IS NULL`,
  order: sql`lease_until NULLS FIRST, updated_at`,
};

/**
 * Which place the state is kept in: the server (through its tunnel, if any) and the database
 * on it (PostgreSQL's slots and publications are per database). User, password and TLS may
 * change without moving it; a new host, port or database is another place.
 */
export function sourceKey(settings: SourceSettings, sourceSchema: string): string {
  const { database } = splitSourceSchema(settings.backend, sourceSchema);
  return JSON.stringify([
    settings.backend,
    settings.host.toLowerCase(),
    settings.port,
    database,
    settings.ssh ? [settings.ssh.host.toLowerCase(), settings.ssh.port] : null,
  ]);
}

/**
 * Records, before an instance of `replicas` replicas is started on `settings`, that its
 * replicas keep replication state there, with the settings (secrets still sealed) that reach
 * it: terminate and resize drop it with these, whatever the connection says by then. The
 * newest credentials for the same place replace older ones. Replicas started here no longer
 * wait to be dropped on this source (a database provisioned again after a failed drop).
 * Nothing for sources that keep no state (the dialect's `replicationState`).
 */
export async function recordReplicationSource(
  db: StoreDb,
  database: Pick<DatabaseRow, 'id' | 'account_id' | 'source_schema'>,
  settings: SourceSettings,
  replicas: number,
): Promise<void> {
  if (sourceDialect(settings.backend).replicationState === undefined) return;
  const sealed = {
    backend: settings.backend,
    host: settings.host,
    port: settings.port,
    username: settings.username,
    password_enc: settings.password_enc,
    tls_mode: settings.tls_mode,
    ssh: settings.ssh ? JSON.stringify(settings.ssh) : null,
    ssh_private_key_enc: settings.ssh_private_key_enc,
    source_schema: database.source_schema,
    replication_id: replicationIdFor(database.id),
  };
  const dropFrom = sql<number | null>`CASE
    WHEN replication_sources.drop_from IS NULL THEN NULL
    WHEN GREATEST(replication_sources.drop_from, ${replicas}) >= GREATEST(replication_sources.replicas_launched, ${replicas}) THEN NULL
    ELSE GREATEST(replication_sources.drop_from, ${replicas}) END`;
  await db
    .insertInto('replication_sources')
    .values({
      id: randomUUID(),
      database_id: database.id,
      account_id: database.account_id,
      source_key: sourceKey(settings, database.source_schema),
      replicas_launched: replicas,
      ...sealed,
    })
    .onConflict((conflict) =>
      conflict.columns(['database_id', 'source_key']).doUpdateSet({
        ...sealed,
        replicas_launched: sql`GREATEST(replication_sources.replicas_launched, ${replicas})`,
        drop_from: dropFrom,
        drop_failed_at: sql`CASE WHEN ${dropFrom} IS NULL THEN NULL ELSE replication_sources.drop_failed_at END`,
        updated_at: new Date(),
      }),
    )
    .execute();
}

/**
 * Marks the replication state of the database's replicas from ordinal `fromOrdinal` up to be
 * dropped on every source it was recorded on, due now, with a fresh count of attempts. A
 * database launched before sources were recorded has none: its connection's current settings
 * are recorded then, for every replica ordinal (`maxReplicas`), as the best guess left (the
 * behaviour before sources were recorded).
 */
export async function requestReplicationDrop(
  db: StoreDb,
  database: Pick<DatabaseRow, 'id' | 'account_id' | 'source_schema' | 'connection_id'>,
  fromOrdinal: number,
  maxReplicas: number,
): Promise<void> {
  const recorded = await db
    .selectFrom('replication_sources')
    .select('id')
    .where('database_id', '=', database.id)
    .executeTakeFirst();
  // Only a database that ran instances may have left state; one never launched has none.
  const launched = await everLaunched(db, database.id);
  if (!recorded && launched) {
    const connection = await connectionById(db, database.connection_id);
    if (!connection) return;
    await recordReplicationSource(db, database, connection, maxReplicas);
  }
  await db
    .updateTable('replication_sources')
    .set({
      drop_from: sql`LEAST(COALESCE(drop_from, ${fromOrdinal}), ${fromOrdinal})`,
      drop_attempts: 0,
      drop_error: null,
      drop_failed_at: null,
      // Due now, unless an attempt holds it (that one's outcome leaves it due again).
      lease_until: sql`CASE WHEN lease_owner IS NULL THEN NULL ELSE lease_until END`,
      updated_at: new Date(),
    })
    .where('database_id', '=', database.id)
    .where('replicas_launched', '>', fromOrdinal)
    .execute();
}

/** The ids of the database's sources whose replication state waits to be dropped. */
export function dropsWaitingOf(db: StoreDb, databaseId: string): Promise<{ id: string }[]> {
  return db
    .selectFrom('replication_sources')
    .select('id')
    .where('database_id', '=', databaseId)
    .where(REPLICATION_DROP_QUEUE.waiting)
    .execute();
}

/** `owner`'s lease on a source's drop from ordinal `from`: held while that drop is still the one asked for. */
export function dropLease(sourceId: string, owner: string, from: number): Lease {
  return { id: sourceId, owner, held: sql<boolean>`drop_from = ${from}` };
}

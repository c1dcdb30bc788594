import { type Insertable, type Selectable, sql, type Updateable } from 'kysely';
import type { StoreDb } from './open-store.ts';
import type { DatabaseTable } from './schema.ts';

/** The `databases` table: every read and write of a database's row. */

export type DatabaseRow = Selectable<DatabaseTable>;

/**
 * Writes `changes` to the database's row only while `owner` holds its lease; the row as
 * written, or undefined when the lease is no longer ours.
 */
export function updateLeasedDatabase(
  db: StoreDb,
  databaseId: string,
  owner: string,
  changes: Updateable<DatabaseTable>,
): Promise<DatabaseRow | undefined> {
  return db
    .updateTable('databases')
    .set(changes)
    .where('id', '=', databaseId)
    .where('lease_owner', '=', owner)
    .returningAll()
    .executeTakeFirst();
}

/** Records where the database's endpoint is, for life (its port and URL). */
export async function recordEndpoint(
  db: StoreDb,
  databaseId: string,
  endpoint: { readonly port: number; readonly url: string },
): Promise<void> {
  await db
    .updateTable('databases')
    .set({ endpoint_port: endpoint.port, endpoint_url: endpoint.url })
    .where('id', '=', databaseId)
    .execute();
}

/** The account's databases, oldest first. */
export function listDatabaseRows(db: StoreDb, accountId: string): Promise<DatabaseRow[]> {
  return db
    .selectFrom('databases')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('deleted_at', 'is', null)
    .orderBy('created_at', 'asc')
    .orderBy('id')
    .execute();
}

export async function countLiveDatabases(tx: StoreDb, accountId: string): Promise<number> {
  const { count } = await tx
    .selectFrom('databases')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('account_id', '=', accountId)
    .where('deleted_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(count);
}

export function insertDatabaseRow(
  tx: StoreDb,
  values: Insertable<DatabaseTable>,
): Promise<DatabaseRow> {
  return tx.insertInto('databases').values(values).returningAll().executeTakeFirstOrThrow();
}

/** Changes a live database and stamps `updated_at`; undefined when it is gone. */
export function updateLiveDatabaseRow(
  tx: StoreDb,
  id: string,
  changes: Updateable<DatabaseTable>,
): Promise<DatabaseRow | undefined> {
  return tx
    .updateTable('databases')
    .set({ ...changes, updated_at: new Date() })
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

/** Changes a database row (whatever its state) and stamps `updated_at`. */
export async function updateDatabaseRow(
  tx: StoreDb,
  id: string,
  changes: Updateable<DatabaseTable>,
): Promise<void> {
  await tx
    .updateTable('databases')
    .set({ ...changes, updated_at: new Date() })
    .where('id', '=', id)
    .execute();
}

/** Locks one of the account's live databases for the rest of the transaction. */
export function lockDatabaseRow(
  tx: StoreDb,
  accountId: string,
  id: string,
): Promise<DatabaseRow | undefined> {
  return tx
    .selectFrom('databases')
    .selectAll()
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .where('deleted_at', 'is', null)
    .forUpdate()
    .executeTakeFirst();
}

/** Every database not deleted, with what the plan limits are checked against. */
export function liveDatabases(db: StoreDb) {
  return db
    .selectFrom('databases')
    .select([
      'account_id',
      'status',
      'instance_size',
      'replicas',
      'goal',
      'region',
      'sync_mode',
      'sync_interval',
    ])
    .where('deleted_at', 'is', null)
    .execute();
}

/** The ids of an account's databases not deleted, in id order (the order they are locked in). */
export function databaseIdsOf(db: StoreDb, accountId: string) {
  return db
    .selectFrom('databases')
    .select('id')
    .where('account_id', '=', accountId)
    .where('deleted_at', 'is', null)
    .orderBy('id')
    .execute();
}

/** The names of the live databases on a connection, in name order. */
export async function databaseNamesOn(tx: StoreDb, connectionId: string): Promise<string[]> {
  const rows = await tx
    .selectFrom('databases')
    .select('name')
    .where('connection_id', '=', connectionId)
    .where('deleted_at', 'is', null)
    .orderBy('name')
    .execute();
  return rows.map((row) => row.name);
}

/** Marks the database's key set changed, so the reconciler pushes it to the instance. */
export async function bumpKeysVersion(tx: StoreDb, databaseId: string): Promise<void> {
  await tx
    .updateTable('databases')
    .set({ keys_version: sql<number>`keys_version + 1` })
    .where('id', '=', databaseId)
    .execute();
}

/** A database's row by id, deleted or not; undefined when there is none. */
export function databaseById(db: StoreDb, databaseId: string): Promise<DatabaseRow | undefined> {
  return db.selectFrom('databases').selectAll().where('id', '=', databaseId).executeTakeFirst();
}

/** The version of the database's key set (raised by every key created or revoked). */
export async function keysVersionOf(db: StoreDb, databaseId: string): Promise<number> {
  const { keys_version } = await db
    .selectFrom('databases')
    .select('keys_version')
    .where('id', '=', databaseId)
    .executeTakeFirstOrThrow();
  return keys_version;
}

/** Where a database runs: its account and region (deleted databases too), or undefined. */
export function databasePlaceOf(
  db: StoreDb,
  databaseId: string,
): Promise<Pick<DatabaseRow, 'account_id' | 'region'> | undefined> {
  return db
    .selectFrom('databases')
    .select(['account_id', 'region'])
    .where('id', '=', databaseId)
    .executeTakeFirst();
}

/**
 * Records that the database's replication is paused or not, only while the stored value is
 * still `storedPaused`; whether the row changed.
 */
export async function recordReplicationPausedIf(
  db: StoreDb,
  databaseId: string,
  storedPaused: boolean,
  paused: boolean,
): Promise<boolean> {
  const updated = await db
    .updateTable('databases')
    .set({ replication_paused: paused, updated_at: new Date() })
    .where('id', '=', databaseId)
    .where('replication_paused', '=', storedPaused)
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) > 0;
}

/** What an account's live databases of `statuses` hold of compute, but `exceptDatabaseId`'s. */
export function computeRowsOf(
  db: StoreDb,
  accountId: string,
  statuses: readonly DatabaseRow['status'][],
  exceptDatabaseId?: string,
): Promise<Pick<DatabaseRow, 'instance_size' | 'replicas' | 'goal'>[]> {
  let query = db
    .selectFrom('databases')
    .select(['instance_size', 'replicas', 'goal'])
    .where('account_id', '=', accountId)
    .where('deleted_at', 'is', null)
    .where('status', 'in', [...statuses]);
  if (exceptDatabaseId) query = query.where('id', '!=', exceptDatabaseId);
  return query.execute();
}

/**
 * The live databases whose endpoint the reconciler opens on start: those with a recorded port,
 * or with a serving instance (deployed before endpoints existed), with that instance's id.
 */
export function endpointsToRestore(db: StoreDb) {
  return db
    .selectFrom('databases')
    .leftJoin('instances', (join) =>
      join
        .onRef('instances.database_id', '=', 'databases.id')
        .on('instances.removed_at', 'is', null)
        .on('instances.standby', '=', false),
    )
    .select([
      'databases.id as databaseId',
      'databases.status as status',
      'databases.endpoint_port as endpointPort',
      'databases.endpoint_url as endpointUrl',
      'instances.id as instanceId',
    ])
    .where('databases.deleted_at', 'is', null)
    .where((eb) =>
      eb.or([eb('databases.endpoint_port', 'is not', null), eb('instances.id', 'is not', null)]),
    )
    .execute();
}

/** Locks a database's row for the rest of the transaction, whatever its state. */
export async function lockDatabaseRowById(tx: StoreDb, databaseId: string): Promise<void> {
  await tx.selectFrom('databases').select('id').where('id', '=', databaseId).forUpdate().execute();
}

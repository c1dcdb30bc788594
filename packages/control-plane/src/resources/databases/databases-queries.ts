import type { Insertable, Kysely, Updateable } from 'kysely';
import type { DatabaseRow } from '../../store/database-store.ts';
import type { StoreDb } from '../../store/open-store.ts';
import type { DatabaseTable, Store } from '../../store/schema.ts';

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

/** Locks the account row: serialises what counts the account's databases. */
export async function lockAccountRow(tx: Kysely<Store>, accountId: string): Promise<void> {
  await tx.selectFrom('accounts').select('id').where('id', '=', accountId).forUpdate().execute();
}

/** The stored plan name of an account. */
export async function planNameOf(tx: Kysely<Store>, accountId: string): Promise<string> {
  const account = await tx
    .selectFrom('accounts')
    .select('plan')
    .where('id', '=', accountId)
    .executeTakeFirstOrThrow();
  return account.plan;
}

/** Locks a live connection row; false when it has been deleted. */
export async function lockLiveConnection(tx: Kysely<Store>, id: string): Promise<boolean> {
  const live = await tx
    .selectFrom('connections')
    .select('id')
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .forUpdate()
    .executeTakeFirst();
  return live !== undefined;
}

export async function countLiveDatabases(tx: Kysely<Store>, accountId: string): Promise<number> {
  const { count } = await tx
    .selectFrom('databases')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('account_id', '=', accountId)
    .where('deleted_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(count);
}

export function insertDatabaseRow(
  tx: Kysely<Store>,
  values: Insertable<DatabaseTable>,
): Promise<DatabaseRow> {
  return tx.insertInto('databases').values(values).returningAll().executeTakeFirstOrThrow();
}

/** Changes a live database and stamps `updated_at`; undefined when it is gone. */
export function updateLiveDatabaseRow(
  tx: Kysely<Store>,
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
  tx: Kysely<Store>,
  id: string,
  changes: Updateable<DatabaseTable>,
): Promise<void> {
  await tx
    .updateTable('databases')
    .set({ ...changes, updated_at: new Date() })
    .where('id', '=', id)
    .execute();
}

/** The backend of a connection (any state: a database keeps its connection). */
export async function backendOfConnection(db: StoreDb, connectionId: string): Promise<string> {
  const { backend } = await db
    .selectFrom('connections')
    .select('backend')
    .where('id', '=', connectionId)
    .executeTakeFirstOrThrow();
  return backend;
}

/** The connection of one of the account's databases. */
export function connectionOfDatabase(db: StoreDb, accountId: string, database: DatabaseRow) {
  return db
    .selectFrom('connections')
    .selectAll()
    .where('id', '=', database.connection_id)
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
}

/** Locks one of the account's live databases for the rest of the transaction. */
export function lockDatabaseRow(
  tx: Kysely<Store>,
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

/** Whether the database has a succeeded build: something to deploy. */
export async function hasSucceededBuild(db: Kysely<Store>, databaseId: string): Promise<boolean> {
  const build = await db
    .selectFrom('builds')
    .select('id')
    .where('database_id', '=', databaseId)
    .where('status', '=', 'succeeded')
    .limit(1)
    .executeTakeFirst();
  return build !== undefined;
}

/** A build of the account's database: its id and status. */
export function buildOfDatabase(
  tx: Kysely<Store>,
  accountId: string,
  databaseId: string,
  buildId: string,
) {
  return tx
    .selectFrom('builds')
    .select(['id', 'status'])
    .where('id', '=', buildId)
    .where('database_id', '=', databaseId)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
}

/** Where the control plane reaches the database's serving instance, if it has one. */
export function liveInstanceAddress(tx: Kysely<Store>, databaseId: string) {
  return tx
    .selectFrom('instances')
    .select(['private_url', 'replica_urls', 'control_key_id'])
    .where('database_id', '=', databaseId)
    .where('removed_at', 'is', null)
    .where('standby', '=', false)
    .executeTakeFirst();
}

import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import type { StoreDb } from '../../../adapters/store/open-store.ts';
import type { ConnectionTable, Store } from '../../../adapters/store/schema.ts';

export type ConnectionRow = Selectable<ConnectionTable>;

/** The account's connections, oldest first. */
export function listConnectionRows(db: StoreDb, accountId: string): Promise<ConnectionRow[]> {
  return db
    .selectFrom('connections')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('deleted_at', 'is', null)
    .orderBy('created_at', 'asc')
    .orderBy('id')
    .execute();
}

export function insertConnectionRow(
  tx: Kysely<Store>,
  values: Insertable<ConnectionTable>,
): Promise<ConnectionRow> {
  return tx.insertInto('connections').values(values).returningAll().executeTakeFirstOrThrow();
}

/** Changes a live connection and stamps `updated_at`. */
export function updateConnectionRow(
  tx: Kysely<Store>,
  id: string,
  changes: Updateable<ConnectionTable>,
): Promise<ConnectionRow> {
  return tx
    .updateTable('connections')
    .set({ ...changes, updated_at: new Date() })
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Locks the connection row for the rest of the transaction. */
export async function lockConnectionRow(tx: Kysely<Store>, id: string): Promise<void> {
  await tx.selectFrom('connections').select('id').where('id', '=', id).forUpdate().execute();
}

export async function markConnectionDeleted(tx: Kysely<Store>, id: string): Promise<void> {
  await tx
    .updateTable('connections')
    .set({ deleted_at: new Date(), updated_at: new Date() })
    .where('id', '=', id)
    .execute();
}

/** Keeps a connection's last test result (not a change of the connection: no `updated_at`). */
export async function recordConnectionTest(
  db: StoreDb,
  id: string,
  columns: Pick<Updateable<ConnectionTable>, 'last_test' | 'last_tested_at'>,
): Promise<void> {
  await db.updateTable('connections').set(columns).where('id', '=', id).execute();
}

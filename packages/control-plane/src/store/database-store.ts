import type { Selectable, Updateable } from 'kysely';
import type { StoreDb } from './open-store.ts';
import type { DatabaseTable } from './schema.ts';

/** The `databases` table's writes made under a lease (the reconciler's goals). */

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

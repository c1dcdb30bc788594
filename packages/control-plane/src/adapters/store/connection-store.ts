import type { Selectable } from 'kysely';
import type { StoreDb } from './open-store.ts';
import type { ConnectionTable } from './schema.ts';

/** The `connections` table's reads the reconciler, the builder and the API share. */

export type ConnectionRow = Selectable<ConnectionTable>;

/** A connection's row by id, deleted or not; undefined when there is none. */
export function connectionById(db: StoreDb, id: string): Promise<ConnectionRow | undefined> {
  return db.selectFrom('connections').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function countLiveConnections(db: StoreDb, accountId: string): Promise<number> {
  const { n } = await db
    .selectFrom('connections')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('account_id', '=', accountId)
    .where('deleted_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(n);
}

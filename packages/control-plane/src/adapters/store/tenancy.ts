import type { Selectable } from 'kysely';
import { notFound } from '../../domain/errors.ts';
import type { StoreDb } from './open-store.ts';
import type { ConnectionTable, DatabaseTable } from './schema.ts';

/**
 * Loads a database of the caller's account. Another account's database is reported exactly
 * like a missing one (404), so ids leak nothing.
 */
export async function ownedDatabase(
  db: StoreDb,
  accountId: string,
  id: string,
): Promise<Selectable<DatabaseTable>> {
  const row = await db
    .selectFrom('databases')
    .selectAll()
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  if (!row) throw notFound('Database');
  return row;
}

export async function ownedConnection(
  db: StoreDb,
  accountId: string,
  id: string,
): Promise<Selectable<ConnectionTable>> {
  const row = await db
    .selectFrom('connections')
    .selectAll()
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  if (!row) throw notFound('Connection');
  return row;
}

import type { Insertable, Kysely, Selectable } from 'kysely';
import { notFound } from '../../domain/errors.ts';
import type { StoreDb } from '../../store/open-store.ts';
import type { BuildTable, Store } from '../../store/schema.ts';

/** A build of the caller's account; another account's build is a 404 like a missing one. */
export async function ownedBuild(
  db: StoreDb,
  accountId: string,
  id: string,
): Promise<Selectable<BuildTable>> {
  const row = await db
    .selectFrom('builds')
    .selectAll()
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  if (!row) throw notFound('Build');
  return row;
}

/** A database's builds, newest first. */
export function buildRowsOf(db: StoreDb, databaseId: string): Promise<Selectable<BuildTable>[]> {
  return db
    .selectFrom('builds')
    .selectAll()
    .where('database_id', '=', databaseId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

export async function insertBuildRow(
  db: Kysely<Store>,
  values: Insertable<BuildTable>,
): Promise<void> {
  await db.insertInto('builds').values(values).execute();
}

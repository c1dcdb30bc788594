import type { Selectable } from 'kysely';
import type { ApiContext } from '../api/context.ts';
import type { StoreDb } from '../store/open-store.ts';
import type { InstanceTable } from '../store/schema.ts';

export type InstanceRow = Selectable<InstanceTable>;

/** The database's live instance row (at most one: a unique index), if any. */
export function liveInstanceOf(db: StoreDb, databaseId: string): Promise<InstanceRow | undefined> {
  return db
    .selectFrom('instances')
    .selectAll()
    .where('database_id', '=', databaseId)
    .where('removed_at', 'is', null)
    .executeTakeFirst();
}

/** Stops the database's live instance, if any, and marks its row removed. Idempotent. */
export async function stopLiveInstance(
  context: Pick<ApiContext, 'db' | 'driver'>,
  databaseId: string,
): Promise<InstanceRow | undefined> {
  const instance = await liveInstanceOf(context.db, databaseId);
  if (!instance) return undefined;
  await context.driver.stop(instance.id);
  await context.db
    .updateTable('instances')
    .set({ removed_at: new Date(), updated_at: new Date() })
    .where('id', '=', instance.id)
    .execute();
  return instance;
}

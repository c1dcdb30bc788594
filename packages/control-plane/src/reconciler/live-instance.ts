import type { Selectable } from 'kysely';
import type { ApiContext } from '../api/context.ts';
import type { StoreDb } from '../store/open-store.ts';
import type { InstanceTable } from '../store/schema.ts';

export type InstanceRow = Selectable<InstanceTable>;

/** The database's serving instance row (at most one: a unique index), if any. */
export function liveInstanceOf(db: StoreDb, databaseId: string): Promise<InstanceRow | undefined> {
  return db
    .selectFrom('instances')
    .selectAll()
    .where('database_id', '=', databaseId)
    .where('removed_at', 'is', null)
    .where('standby', '=', false)
    .executeTakeFirst();
}

/** Marks the instance's row removed (idempotent). */
export async function markRemoved(db: StoreDb, instanceId: string): Promise<void> {
  await db
    .updateTable('instances')
    .set({ removed_at: new Date(), updated_at: new Date() })
    .where('id', '=', instanceId)
    .where('removed_at', 'is', null)
    .execute();
}

/**
 * Stops serving the database: its endpoint answers 503 with `message` from now on, then its
 * instances (the serving one and a deploy's standby, if any) stop and their rows are marked
 * removed. Idempotent. Returns the serving instance it stopped.
 */
export async function stopLiveInstance(
  context: Pick<ApiContext, 'db' | 'driver'>,
  databaseId: string,
  message: string,
): Promise<InstanceRow | undefined> {
  await context.driver.unroute(databaseId, message);
  const instances = await context.db
    .selectFrom('instances')
    .selectAll()
    .where('database_id', '=', databaseId)
    .where('removed_at', 'is', null)
    .execute();
  for (const instance of instances) {
    await context.driver.stop(instance.id);
    await markRemoved(context.db, instance.id);
  }
  return instances.find((instance) => !instance.standby);
}

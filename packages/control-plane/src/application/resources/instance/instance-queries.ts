import type { StoreDb } from '../../../adapters/store/open-store.ts';

/** How many of the database's unseen notifications were skipped. */
export async function skippedNotificationCount(db: StoreDb, databaseId: string): Promise<number> {
  const tally = await db
    .selectFrom('notifications')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('database_id', '=', databaseId)
    .where('seen_at', 'is', null)
    .where('skipped', '=', true)
    .executeTakeFirstOrThrow();
  return Number(tally.n);
}

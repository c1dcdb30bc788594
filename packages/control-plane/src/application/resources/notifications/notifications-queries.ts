import type { StoreDb } from '../../../adapters/store/open-store.ts';

/** A database's listed unseen notifications (not skipped), newest first. */
export function unseenNotifications(db: StoreDb, databaseId: string) {
  return db
    .selectFrom('notifications')
    .selectAll()
    .where('database_id', '=', databaseId)
    .where('seen_at', 'is', null)
    .where('skipped', '=', false)
    .orderBy('created_at', 'desc')
    .orderBy('seq', 'desc')
    .execute();
}

/** A database's unseen notifications, counted apart: listed ones and skipped ones. */
export async function countsOf(
  db: StoreDb,
  databaseId: string,
): Promise<{ unseenCount: number; skippedCount: number }> {
  const rows = await db
    .selectFrom('notifications')
    .select((eb) => ['skipped', eb.fn.countAll<number>().as('n')])
    .where('database_id', '=', databaseId)
    .where('seen_at', 'is', null)
    .groupBy('skipped')
    .execute();
  const count = (skipped: boolean) => Number(rows.find((row) => row.skipped === skipped)?.n ?? 0);
  return { unseenCount: count(false), skippedCount: count(true) };
}

/**
 * Marks the database's unseen notifications `ids` seen, or all of them but the sticky ones
 * when `ids` is undefined; the ids marked.
 */
export async function markNotificationsSeen(
  db: StoreDb,
  databaseId: string,
  ids: readonly string[] | undefined,
): Promise<{ id: string }[]> {
  let update = db
    .updateTable('notifications')
    .set({ seen_at: new Date() })
    .where('database_id', '=', databaseId)
    .where('seen_at', 'is', null);
  update = ids
    ? update.where('id', 'in', ids)
    : // A skipped notification is never listed, so it cannot be named: "all" clears it.
      update.where((eb) => eb.or([eb('sticky', '=', false), eb('skipped', '=', true)]));
  return update.returning('id').execute();
}

/**
 * In-app notifications per database. At most UNSEEN_NOTIFICATION_CAP unseen ones are listed;
 * older unseen ones are skipped (counted in `skippedCount`), the audit log keeps everything.
 */
import type { Static } from 'typebox';
import { recordAudit } from '../../../adapters/events/audit-log.ts';
import type { StoreDb } from '../../../adapters/store/open-store.ts';
import { iso } from '../common-schemas.ts';
import { countsOf, markNotificationsSeen, unseenNotifications } from './notifications-queries.ts';
import type { Notification } from './notifications-schemas.ts';

export async function listNotifications(db: StoreDb, databaseId: string) {
  const [rows, tally] = await Promise.all([
    unseenNotifications(db, databaseId),
    countsOf(db, databaseId),
  ]);
  return {
    notifications: rows.map((row) => ({
      id: row.id,
      eventType: row.event_type,
      message: row.message,
      detail: row.detail,
      severity: row.severity as Static<typeof Notification>['severity'],
      sticky: row.sticky,
      createdAt: iso(row.created_at),
    })),
    ...tally,
  };
}

/**
 * Marks the named notifications seen, or without `ids` every one but sticky ones (clearing the
 * skipped ones too); answers the counts after.
 */
export async function markSeen(
  db: StoreDb,
  accountId: string,
  databaseId: string,
  ids: readonly string[] | undefined,
) {
  await db.transaction().execute(async (tx) => {
    if (ids?.length === 0) return;
    const marked = await markNotificationsSeen(tx, databaseId, ids);
    if (marked.length > 0)
      await recordAudit(tx, {
        accountId,
        databaseId,
        entityType: 'database',
        entityId: databaseId,
        eventType: 'notification.seen',
        payload: { count: marked.length, all: !ids },
      });
  });
  return countsOf(db, databaseId);
}

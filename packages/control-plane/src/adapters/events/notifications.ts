import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Store } from '../store/schema.ts';

/** Unseen notifications kept per database; older unseen ones are marked skipped. */
export const UNSEEN_NOTIFICATION_CAP = 20;

export interface NotificationInput {
  readonly accountId: string;
  readonly databaseId: string;
  readonly eventType: string;
  readonly message: string;
  readonly detail?: string | null;
  readonly severity: 'success' | 'error' | 'info';
  readonly sticky?: boolean;
}

/** Adds an in-app notification and skips the oldest unseen ones beyond the cap. */
export async function notify(db: Kysely<Store>, input: NotificationInput): Promise<void> {
  await db
    .insertInto('notifications')
    .values({
      id: randomUUID(),
      account_id: input.accountId,
      database_id: input.databaseId,
      event_type: input.eventType,
      message: input.message,
      detail: input.detail ?? null,
      severity: input.severity,
      sticky: input.sticky ?? false,
    })
    .execute();
  const keep = db
    .selectFrom('notifications')
    .select('id')
    .where('database_id', '=', input.databaseId)
    .where('seen_at', 'is', null)
    .where('skipped', '=', false)
    .orderBy('created_at', 'desc')
    .orderBy('seq', 'desc')
    .limit(UNSEEN_NOTIFICATION_CAP);
  await db
    .updateTable('notifications')
    .set({ skipped: true })
    .where('database_id', '=', input.databaseId)
    .where('seen_at', 'is', null)
    .where('skipped', '=', false)
    .where('id', 'not in', keep)
    .execute();
}

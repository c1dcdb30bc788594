import { sql } from 'kysely';
import { notFound } from '../../domain/errors.ts';
import type { StoreDb } from './open-store.ts';

/** Every account, oldest first, with its activity counts and overage settings. */
export function customerRows(db: StoreDb) {
  return db
    .selectFrom('accounts as a')
    .leftJoin('billing_accounts as b', 'b.account_id', 'a.id')
    .select([
      'a.id',
      'a.email',
      'a.plan',
      'a.created_at',
      sql<number>`(SELECT count(*) FROM instances i JOIN databases d ON d.id = i.database_id WHERE d.account_id = a.id AND d.deleted_at IS NULL AND i.removed_at IS NULL AND NOT i.standby)::int`.as(
        'running_count',
      ),
      sql<number>`(SELECT count(*) FROM builds b WHERE b.account_id = a.id AND b.created_at > now() - interval '30 days')::int`.as(
        'builds_30d',
      ),
      sql<Date | null>`GREATEST((SELECT max(e.created_at) FROM audit_events e WHERE e.account_id = a.id), (SELECT max(u.last_seen_at) FROM users u WHERE u.account_id = a.id))`.as(
        'last_activity',
      ),
      'b.overage_enabled',
      'b.spending_cap_cents',
    ])
    .orderBy('a.created_at', 'asc')
    .execute();
}

export async function requireCustomer(db: StoreDb, id: string): Promise<void> {
  const row = await db.selectFrom('accounts').select('id').where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound('Customer');
}

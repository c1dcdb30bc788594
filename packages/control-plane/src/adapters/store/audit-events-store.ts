import { type SelectQueryBuilder, sql } from 'kysely';
import type { AccountAuditFilter } from '../../application/resources/audit/audit-schemas.ts';
import type { StoreDb } from './open-store.ts';
import type { Store } from './schema.ts';

type AuditQuery = SelectQueryBuilder<Store, 'audit_events', object>;

/**
 * Applies the filters shared by both endpoints. Times compare at millisecond precision, the
 * precision of the `createdAt` we return, so `after=<an event's createdAt>` excludes that event.
 */
function filtered(query: AuditQuery, accountId: string, filter: AccountAuditFilter): AuditQuery {
  const createdMs = sql<Date>`date_trunc('milliseconds', audit_events.created_at)`;
  let result = query.where('audit_events.account_id', '=', accountId);
  if (filter.databaseId) result = result.where('audit_events.database_id', '=', filter.databaseId);
  if (filter.eventType) result = result.where('audit_events.event_type', '=', filter.eventType);
  if (filter.after) result = result.where(createdMs, '>', new Date(filter.after));
  if (filter.before) result = result.where(createdMs, '<', new Date(filter.before));
  return result;
}

/**
 * One page of the matching events, newest first, with their database's name, the name of the
 * key or connection they are about (so the log shows names, not ids), and the total.
 */
export async function auditEventRows(db: StoreDb, accountId: string, filter: AccountAuditFilter) {
  const base = filtered(db.selectFrom('audit_events'), accountId, filter);
  const [rows, count] = await Promise.all([
    base
      .leftJoin('databases', 'databases.id', 'audit_events.database_id')
      .leftJoin('api_keys', (join) =>
        join
          .onRef('api_keys.id', '=', 'audit_events.entity_id')
          .on('audit_events.entity_type', '=', 'api_key'),
      )
      .leftJoin('management_keys', (join) =>
        join
          .onRef('management_keys.id', '=', 'audit_events.entity_id')
          .on('audit_events.entity_type', '=', 'management_key'),
      )
      .leftJoin('connections', (join) =>
        join
          .onRef('connections.id', '=', 'audit_events.entity_id')
          .on('audit_events.entity_type', '=', 'connection'),
      )
      .selectAll('audit_events')
      .select([
        'databases.name as db_name',
        'api_keys.name as api_key_name',
        'management_keys.name as management_key_name',
        'connections.name as connection_name',
      ])
      .orderBy('audit_events.created_at', 'desc')
      .orderBy('audit_events.seq', 'desc')
      .limit(Number(filter.limit ?? 25))
      .offset(Number(filter.offset ?? 0))
      .execute(),
    base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.total) };
}

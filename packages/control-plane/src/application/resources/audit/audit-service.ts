/**
 * The audit log (spec §4.1): every state change, immutable, newest first, paged by
 * `limit`/`offset`. Unlike notifications nothing is ever capped or skipped here.
 */
import type { Static } from 'typebox';
import { auditEventRows } from '../../../adapters/store/audit-events-store.ts';
import type { StoreDb } from '../../../adapters/store/open-store.ts';
import { iso } from '../common-schemas.ts';
import type { AccountAuditFilter, AuditEventWithDatabase } from './audit-schemas.ts';

type AuditEventRecord = Static<typeof AuditEventWithDatabase>;

type AuditRow = Awaited<ReturnType<typeof auditEventRows>>['rows'][number];

/**
 * The name of what the event is about, from its row (a key deleted since is named by the name
 * its event recorded).
 */
function entityNameOf(row: AuditRow): { entityName?: string } {
  const recorded = row.payload?.name;
  const name =
    row.api_key_name ??
    row.management_key_name ??
    row.connection_name ??
    (row.entity_type === 'database' ? row.db_name : null) ??
    (typeof recorded === 'string' ? recorded : null);
  return name ? { entityName: name } : {};
}

/** One page of the account's events, newest first, with the number of events matching the filters. */
export async function auditPage(
  db: StoreDb,
  accountId: string,
  filter: AccountAuditFilter,
): Promise<{ events: AuditEventRecord[]; total: number }> {
  const { rows, total } = await auditEventRows(db, accountId, filter);
  const events = rows.map(
    (row): AuditEventRecord => ({
      id: row.id,
      entityType: row.entity_type,
      entityId: row.entity_id,
      eventType: row.event_type,
      ...(row.payload ? { payload: row.payload } : {}),
      createdAt: iso(row.created_at),
      ...entityNameOf(row),
      ...(row.actor_type
        ? {
            actor: {
              type: row.actor_type,
              ...(row.actor_id ? { id: row.actor_id } : {}),
              name: row.actor_name ?? row.actor_type,
            },
          }
        : {}),
      ...(row.database_id ? { databaseId: row.database_id } : {}),
      ...(row.db_name ? { databaseName: row.db_name } : {}),
    }),
  );
  return { events, total };
}

/** One page of a database's events: the account's page for that database, without the database. */
export async function databaseAuditPage(
  db: StoreDb,
  accountId: string,
  databaseId: string,
  filter: Omit<AccountAuditFilter, 'databaseId'>,
) {
  const page = await auditPage(db, accountId, { ...filter, databaseId });
  return {
    total: page.total,
    events: page.events.map(({ databaseId: _id, databaseName: _name, ...event }) => event),
  };
}

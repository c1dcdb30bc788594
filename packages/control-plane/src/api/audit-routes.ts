import { type SelectQueryBuilder, sql } from 'kysely';
import { type Static, Type } from 'typebox';
import type { Store } from '../store/schema.ts';
import type { ApiServer } from './api-server.ts';
import { DateTime, ErrorResponse, errorResponses, IdParams, iso, Uuid } from './common-schemas.ts';
import type { ApiContext } from './context.ts';
import { ownedDatabase } from './tenancy.ts';

const auditEventFields = {
  id: Uuid,
  entityType: Type.String({ description: 'What the event is about: `database`, `api_key`, …' }),
  entityId: Uuid,
  eventType: Type.String({
    description: '`<entity>.<verb>`; docs/control-plane/audit-and-notifications.md lists them.',
  }),
  payload: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  createdAt: DateTime,
};

const AuditEvent = Type.Object(auditEventFields, { $id: 'AuditEvent' });

const AuditEventWithDatabase = Type.Object(
  {
    ...auditEventFields,
    databaseId: Type.Optional(Uuid),
    databaseName: Type.Optional(
      Type.String({ description: 'The name of the database, also when it has been deleted.' }),
    ),
  },
  { $id: 'AuditEventWithDatabase' },
);

const pageQuery = {
  limit: Type.Optional(
    Type.Enum(['25', '50', '100'], { description: 'Page size; 25 when omitted.' }),
  ),
  offset: Type.Optional(
    Type.String({
      pattern: '^[0-9]{1,9}$',
      description: 'Events to skip (a non-negative integer); 0 when omitted.',
    }),
  ),
  eventType: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  after: Type.Optional(Type.String({ format: 'date-time', description: 'Only events after.' })),
  before: Type.Optional(Type.String({ format: 'date-time', description: 'Only events before.' })),
};

const DatabaseAuditQuery = Type.Object(pageQuery, { additionalProperties: false });
const AccountAuditQuery = Type.Object(
  { ...pageQuery, databaseId: Type.Optional(Uuid) },
  { additionalProperties: false },
);
type AccountAuditFilter = Static<typeof AccountAuditQuery>;

const tags = ['audit-log'];

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

/** One page of events, newest first, with the number of events matching the filters. */
async function auditPage(
  db: ApiContext['db'],
  accountId: string,
  filter: AccountAuditFilter,
): Promise<{ events: Array<Static<typeof AuditEventWithDatabase>>; total: number }> {
  const base = filtered(db.selectFrom('audit_events'), accountId, filter);
  const [rows, count] = await Promise.all([
    base
      .leftJoin('databases', 'databases.id', 'audit_events.database_id')
      .selectAll('audit_events')
      .select('databases.name as db_name')
      .orderBy('audit_events.created_at', 'desc')
      .orderBy('audit_events.seq', 'desc')
      .limit(Number(filter.limit ?? 25))
      .offset(Number(filter.offset ?? 0))
      .execute(),
    base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  const events = rows.map(
    (row): Static<typeof AuditEventWithDatabase> => ({
      id: row.id,
      entityType: row.entity_type,
      entityId: row.entity_id,
      eventType: row.event_type,
      ...(row.payload ? { payload: row.payload } : {}),
      createdAt: iso(row.created_at),
      ...(row.database_id ? { databaseId: row.database_id } : {}),
      ...(row.db_name ? { databaseName: row.db_name } : {}),
    }),
  );
  return { events, total: Number(count.total) };
}

/**
 * The audit log (spec §4.1): every state change, immutable, newest first, paged by
 * `limit`/`offset`. Unlike notifications nothing is ever capped or skipped here.
 */
export function registerAuditRoutes(app: ApiServer, { db }: ApiContext): void {
  app.get(
    '/databases/:id/audit-log',
    {
      schema: {
        tags,
        summary: "A database's audit events, newest first",
        params: IdParams,
        querystring: DatabaseAuditQuery,
        response: {
          200: Type.Object(
            { events: Type.Array(AuditEvent), total: Type.Integer() },
            { $id: 'AuditLogPage' },
          ),
          404: ErrorResponse,
          ...errorResponses(),
        },
      },
    },
    async (request) => {
      const { accountId } = request.principal;
      // Also 404 for another account's database, so ids leak nothing.
      const database = await ownedDatabase(db, accountId, request.params.id);
      const page = await auditPage(db, accountId, { ...request.query, databaseId: database.id });
      return {
        total: page.total,
        events: page.events.map(({ databaseId: _id, databaseName: _name, ...event }) => event),
      };
    },
  );

  app.get(
    '/account/audit-log',
    {
      schema: {
        tags,
        summary: "The account's audit events across all its databases, newest first",
        querystring: AccountAuditQuery,
        response: {
          200: Type.Object(
            { events: Type.Array(AuditEventWithDatabase), total: Type.Integer() },
            { $id: 'AccountAuditLogPage' },
          ),
          ...errorResponses(),
        },
      },
    },
    async (request) => auditPage(db, request.principal.accountId, request.query),
  );
}

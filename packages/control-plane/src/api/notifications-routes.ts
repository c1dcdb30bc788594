import { type Static, Type } from 'typebox';
import { recordAudit } from '../events/audit-log.ts';
import { UNSEEN_NOTIFICATION_CAP } from '../events/notifications.ts';
import type { StoreDb } from '../store/open-store.ts';
import type { ApiServer } from './api-server.ts';
import { DateTime, ErrorResponse, errorResponses, IdParams, iso, Uuid } from './common-schemas.ts';
import type { ApiContext } from './context.ts';
import { ownedDatabase } from './tenancy.ts';

const Notification = Type.Object(
  {
    id: Uuid,
    eventType: Type.String(),
    message: Type.String(),
    detail: Type.Union([Type.String(), Type.Null()]),
    severity: Type.Enum(['success', 'error', 'info']),
    sticky: Type.Boolean({
      description: 'Stays until marked seen by id; "mark all seen" leaves it.',
    }),
    createdAt: DateTime,
  },
  { $id: 'Notification' },
);

const counts = {
  unseenCount: Type.Integer({ description: 'Unseen notifications that are listed.' }),
  skippedCount: Type.Integer({
    description: `Older unseen notifications skipped to keep at most ${UNSEEN_NOTIFICATION_CAP} listed; the audit log has them all.`,
  }),
};

const NotificationCounts = Type.Object(counts, { $id: 'NotificationCounts' });

const tags = ['notifications'];

async function countsOf(
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
 * In-app notifications per database. At most UNSEEN_NOTIFICATION_CAP unseen ones are listed;
 * older unseen ones are skipped (counted in `skippedCount`), the audit log keeps everything.
 */
export function registerNotificationsRoutes(app: ApiServer, { db }: ApiContext): void {
  app.get(
    '/databases/:id/notifications',
    {
      schema: {
        tags,
        summary: "A database's unseen notifications, newest first",
        params: IdParams,
        response: {
          200: Type.Object(
            { notifications: Type.Array(Notification), ...counts },
            { $id: 'NotificationList' },
          ),
          404: ErrorResponse,
          ...errorResponses(),
        },
      },
    },
    async (request) => {
      const database = await ownedDatabase(db, request.principal.accountId, request.params.id);
      const [rows, tally] = await Promise.all([
        db
          .selectFrom('notifications')
          .selectAll()
          .where('database_id', '=', database.id)
          .where('seen_at', 'is', null)
          .where('skipped', '=', false)
          .orderBy('created_at', 'desc')
          .orderBy('seq', 'desc')
          .execute(),
        countsOf(db, database.id),
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
    },
  );

  app.post(
    '/databases/:id/notifications/seen',
    {
      schema: {
        tags,
        summary: 'Mark notifications seen: the ones named, or all but sticky ones',
        description:
          'Without `ids`, marks every unseen notification seen except sticky ones, and clears the skipped ones. Sticky notifications are marked seen only when named in `ids`.',
        params: IdParams,
        body: Type.Object(
          { ids: Type.Optional(Type.Array(Uuid, { maxItems: 1000, uniqueItems: true })) },
          { additionalProperties: false },
        ),
        response: { 200: NotificationCounts, 404: ErrorResponse, ...errorResponses() },
      },
      // The body is optional: no body means "all".
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request) => {
      const { accountId } = request.principal;
      const database = await ownedDatabase(db, accountId, request.params.id);
      const { ids } = request.body;
      await db.transaction().execute(async (tx) => {
        let update = tx
          .updateTable('notifications')
          .set({ seen_at: new Date() })
          .where('database_id', '=', database.id)
          .where('seen_at', 'is', null);
        if (ids) {
          if (ids.length === 0) return;
          update = update.where('id', 'in', ids);
        } else {
          // A skipped notification is never listed, so it cannot be named: "all" clears it.
          update = update.where((eb) =>
            eb.or([eb('sticky', '=', false), eb('skipped', '=', true)]),
          );
        }
        const marked = await update.returning('id').execute();
        if (marked.length > 0)
          await recordAudit(tx, {
            accountId,
            databaseId: database.id,
            entityType: 'database',
            entityId: database.id,
            eventType: 'notification.seen',
            payload: { count: marked.length, all: !ids },
          });
      });
      return countsOf(db, database.id);
    },
  );
}

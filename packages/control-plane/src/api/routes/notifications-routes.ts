import { ownedDatabase } from '../../adapters/store/tenancy.ts';
import {
  ErrorResponse,
  errorResponses,
  IdParams,
} from '../../application/resources/common-schemas.ts';
import {
  MarkSeenBody,
  NotificationCounts,
  NotificationList,
} from '../../application/resources/notifications/notifications-schemas.ts';
import {
  listNotifications,
  markSeen,
} from '../../application/resources/notifications/notifications-service.ts';
import type { ApiServer } from '../api-server.ts';
import type { ApiContext } from '../context.ts';

const tags = ['notifications'];

/** In-app notifications per database (notifications-service.ts says which are listed). */
export function registerNotificationsRoutes(app: ApiServer, { db }: ApiContext): void {
  app.get(
    '/databases/:id/notifications',
    {
      schema: {
        tags,
        summary: "A database's unseen notifications, newest first",
        params: IdParams,
        response: { 200: NotificationList, 404: ErrorResponse, ...errorResponses() },
      },
    },
    async (request) => {
      const database = await ownedDatabase(db, request.principal.accountId, request.params.id);
      return listNotifications(db, database.id);
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
        body: MarkSeenBody,
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
      return markSeen(db, accountId, database.id, request.body.ids);
    },
  );
}

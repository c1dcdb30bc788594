import { Type } from 'typebox';
import { UNSEEN_NOTIFICATION_CAP } from '../../../adapters/events/notifications.ts';
import { DateTime, Uuid } from '../common-schemas.ts';

export const Notification = Type.Object(
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

export const NotificationCounts = Type.Object(counts, { $id: 'NotificationCounts' });

export const NotificationList = Type.Object(
  { notifications: Type.Array(Notification), ...counts },
  { $id: 'NotificationList' },
);

export const MarkSeenBody = Type.Object(
  { ids: Type.Optional(Type.Array(Uuid, { maxItems: 1000, uniqueItems: true })) },
  { additionalProperties: false },
);

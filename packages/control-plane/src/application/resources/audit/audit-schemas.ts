import { type Static, Type } from 'typebox';
import { DateTime, Uuid } from '../common-schemas.ts';

const auditEventFields = {
  id: Uuid,
  entityType: Type.String({ description: 'What the event is about: `database`, `api_key`, …' }),
  entityId: Uuid,
  eventType: Type.String({
    description: '`<entity>.<verb>`; docs/control-plane/audit-and-notifications.md lists them.',
  }),
  payload: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  createdAt: DateTime,
  entityName: Type.Optional(
    Type.String({
      description:
        'The name of the API key, management key, connection or database the event is about, when it has one.',
    }),
  ),
  actor: Type.Optional(
    Type.Object(
      {
        type: Type.Union([
          Type.Literal('user'),
          Type.Literal('management_key'),
          Type.Literal('system'),
        ]),
        id: Type.Optional(Type.String({ description: "The user's or the key's id." })),
        name: Type.String({
          description: "The user's email, the management key's name, or `system`.",
        }),
      },
      {
        description:
          'Who made the change: a signed-in user, a management key, or the system (background work such as builds, deploys and health). Absent on events recorded before actors were kept.',
      },
    ),
  ),
};

export const AuditEvent = Type.Object(auditEventFields, { $id: 'AuditEvent' });

export const AuditEventWithDatabase = Type.Object(
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

export const DatabaseAuditQuery = Type.Object(pageQuery, { additionalProperties: false });
export const AccountAuditQuery = Type.Object(
  { ...pageQuery, databaseId: Type.Optional(Uuid) },
  { additionalProperties: false },
);
export type AccountAuditFilter = Static<typeof AccountAuditQuery>;

export const AuditLogPage = Type.Object(
  { events: Type.Array(AuditEvent), total: Type.Integer() },
  { $id: 'AuditLogPage' },
);

export const AccountAuditLogPage = Type.Object(
  { events: Type.Array(AuditEventWithDatabase), total: Type.Integer() },
  { $id: 'AccountAuditLogPage' },
);

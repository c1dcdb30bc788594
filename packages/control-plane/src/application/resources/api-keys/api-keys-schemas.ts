import { Type } from 'typebox';
import type { ApiKeyScope } from '../../../adapters/store/schema.ts';
import { DateTime, Uuid } from '../common-schemas.ts';

export const API_KEY_SCOPES = ['query', 'admin'] as const satisfies readonly ApiKeyScope[];

const Scope = Type.Enum([...API_KEY_SCOPES], {
  description:
    'What the key may do on the instance. `query`: run queries and read `/schema`; safe to ship to browsers and apps. `admin`: also reload, pause and resume replication, read metrics and health detail; keep it on servers, never in a browser.',
});

export const ApiKey = Type.Object(
  {
    id: Uuid,
    keyId: Type.String({ description: 'The key id: 16 lowercase hex digits.' }),
    name: Type.String(),
    prefix: Type.String({ description: '`rxk_<keyId>`: the start of the key, to recognise it.' }),
    scope: Scope,
    createdAt: DateTime,
  },
  { $id: 'ApiKey', description: 'An instance API key; the key itself is never returned again.' },
);

export const CreatedApiKey = Type.Object(
  {
    id: Uuid,
    keyId: Type.String(),
    name: Type.String(),
    prefix: Type.String(),
    scope: Scope,
    createdAt: DateTime,
    key: Type.String({
      description:
        'The whole key, `rxk_<keyId>.<hmac>`, for `Authorization: Bearer …` on the instance. Shown once.',
    }),
  },
  { $id: 'CreatedApiKey' },
);

export const CreateApiKeyBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    scope: Type.Optional(Type.Enum([...API_KEY_SCOPES], { description: 'Default query.' })),
  },
  { additionalProperties: false },
);

export const DbParams = Type.Object({ dbId: Uuid });
export const KeyParams = Type.Object({
  dbId: Uuid,
  keyId: Type.String({ minLength: 1, maxLength: 64 }),
});

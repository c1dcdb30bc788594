import { Type } from 'typebox';
import { DateTime, Uuid } from '../common-schemas.ts';

export const ManagementKey = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    prefix: Type.String({ description: 'The first characters of the key, to recognise it.' }),
    createdAt: DateTime,
    lastUsedAt: Type.Union([DateTime, Type.Null()]),
  },
  { $id: 'ManagementKey' },
);

export const CreatedManagementKey = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    prefix: Type.String(),
    createdAt: DateTime,
    lastUsedAt: Type.Null(),
    key: Type.String({ description: 'The whole key, `rmk_…`. Shown once; only its hash is kept.' }),
  },
  { $id: 'CreatedManagementKey' },
);

export const CreateManagementKeyBody = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 100 }) },
  { additionalProperties: false },
);

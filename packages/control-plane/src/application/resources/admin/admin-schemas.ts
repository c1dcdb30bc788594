import { Type } from 'typebox';
import { PLANS } from '../../../domain/plans.ts';
import { DateTime, Uuid } from '../common-schemas.ts';

export const Customer = Type.Object(
  {
    id: Uuid,
    email: Type.String(),
    plan: Type.String(),
    createdAt: DateTime,
    databaseCount: Type.Integer({ description: 'Databases not deleted.' }),
    runningInstanceCount: Type.Integer({ description: 'Live instances (started, not removed).' }),
    buildsLast30Days: Type.Integer(),
    lastActivityAt: Type.Union([DateTime, Type.Null()], {
      description: 'The latest of its last audit event and its users’ last request.',
    }),
    planLimit: Type.Object({ databases: Type.Integer(), computeUnits: Type.Integer() }),
    overLimit: Type.Boolean({
      description:
        'Usage exceeds a limit of the plan: more databases, more compute units in use (beyond any overage), a larger instance size, a region or a poll interval the plan does not allow. Happens after a downgrade or an admin override.',
    }),
  },
  { $id: 'Customer' },
);

export const PlanBody = Type.Object(
  { plan: Type.Enum([...PLANS], { description: 'The plan to put the customer on.' }) },
  { additionalProperties: false },
);

export const CustomerPlan = Type.Object({ id: Uuid, plan: Type.String() }, { $id: 'CustomerPlan' });

export const Deprovisioned = Type.Object(
  {
    ok: Type.Boolean({
      description:
        'True when every database is stopping or stopped; false when some were in the middle of an action the reconciler had already started (call again once it finishes).',
    }),
    databasesAffected: Type.Integer({
      description:
        'Databases whose instance is now being terminated, plus queued starts that were cancelled.',
    }),
  },
  { $id: 'Deprovisioned' },
);

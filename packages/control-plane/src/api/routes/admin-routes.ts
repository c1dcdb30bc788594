import { Type } from 'typebox';
import {
  Customer,
  CustomerPlan,
  Deprovisioned,
  PlanBody,
} from '../../application/resources/admin/admin-schemas.ts';
import {
  deprovisionCustomer,
  listCustomers,
  overridePlan,
} from '../../application/resources/admin/admin-service.ts';
import {
  ErrorResponse,
  errorResponses,
  IdParams,
} from '../../application/resources/common-schemas.ts';
import type { ApiServer } from '../api-server.ts';
import type { ApiContext } from '../context.ts';

const tags = ['admin'];

/** Operator routes; only members of the identity provider's `service-admins` group. */
export function registerAdminRoutes(app: ApiServer, { db }: ApiContext): void {
  app.get(
    '/admin/customers',
    {
      config: { admin: true },
      schema: {
        tags,
        summary: 'Every customer account with its usage (admin only)',
        response: { 200: Type.Array(Customer), 403: ErrorResponse, ...errorResponses() },
      },
    },
    async () => listCustomers(db),
  );

  app.patch(
    '/admin/customers/:id/plan',
    {
      config: { admin: true },
      schema: {
        tags,
        summary: "Set a customer's plan without the payment provider (admin only)",
        description:
          'Overrides the plan at once; its limits apply from the next request. Overage is turned off on a plan without it. Recorded in the customer’s audit log as `account.plan_changed` with the admin’s identity. Does not touch the customer’s subscription at the payment provider.',
        params: IdParams,
        body: PlanBody,
        response: {
          200: CustomerPlan,
          403: ErrorResponse,
          404: ErrorResponse,
          ...errorResponses(),
        },
      },
    },
    async (request) => overridePlan(db, request.principal, request.params.id, request.body.plan),
  );

  app.post(
    '/admin/customers/:id/deprovision',
    {
      config: { admin: true },
      schema: {
        tags,
        summary: 'Terminate every instance of a customer (admin only)',
        description:
          'Records a `terminate` goal for each running, paused or failed database (the reconciler removes the instance; the database ends `terminated`, its settings and builds kept) and cancels queued actions that have not started (a queued provision is dropped; a queued action on a deployed database becomes a terminate). Actions the reconciler has already started are left to finish (`ok` false). Every change is in the customer’s audit log with the admin’s identity.',
        params: IdParams,
        response: {
          200: Deprovisioned,
          403: ErrorResponse,
          404: ErrorResponse,
          ...errorResponses(),
        },
      },
    },
    async (request) => deprovisionCustomer(db, request.principal, request.params.id),
  );
}

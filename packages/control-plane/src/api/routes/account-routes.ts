import {
  AcceptTosBody,
  Account,
  TosAccepted,
} from '../../application/resources/account/account-schemas.ts';
import { acceptTos, accountOf } from '../../application/resources/account/account-service.ts';
import { errorResponses } from '../../application/resources/common-schemas.ts';
import type { ApiServer } from '../api-server.ts';
import type { ApiContext } from '../context.ts';

const tags = ['account'];

/** The caller's account and their acceptance of the terms of service. */
export function registerAccountRoutes(app: ApiServer, context: ApiContext): void {
  const { db } = context;
  const { termsVersion } = context.config.billing;

  app.get(
    '/account',
    {
      schema: {
        tags,
        summary: "The caller's account: plan, role, terms acceptance, limits and usage",
        response: { 200: Account, ...errorResponses() },
      },
    },
    async (request) =>
      accountOf(db, request.principal, {
        termsVersion,
        minPollInterval: context.config.minPollInterval,
      }),
  );

  app.post(
    '/account/accept-tos',
    {
      schema: {
        tags,
        summary: 'Record that the caller accepted the terms of service',
        description:
          'Records, for the authenticated user, the acceptance of `version` (default the current terms version, `REPLIX_TOS_VERSION`) with the time. Accepting a version again keeps the first acceptance and answers the same. The web app calls it on first login (spec §4.1).',
        body: AcceptTosBody,
        response: { 200: TosAccepted, ...errorResponses() },
      },
      // The body is optional: no body means the current version.
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request) =>
      acceptTos(db, request.principal, request.body.version ?? termsVersion, termsVersion),
  );
}

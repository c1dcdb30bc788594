import { ownedDatabase } from '../../adapters/store/tenancy.ts';
import {
  AccountAuditLogPage,
  AccountAuditQuery,
  AuditLogPage,
  DatabaseAuditQuery,
} from '../../application/resources/audit/audit-schemas.ts';
import { auditPage, databaseAuditPage } from '../../application/resources/audit/audit-service.ts';
import {
  ErrorResponse,
  errorResponses,
  IdParams,
} from '../../application/resources/common-schemas.ts';
import type { ApiServer } from '../api-server.ts';
import type { ApiContext } from '../context.ts';

const tags = ['audit-log'];

/** The audit log of a database and of the whole account (audit-service.ts). */
export function registerAuditRoutes(app: ApiServer, { db }: ApiContext): void {
  app.get(
    '/databases/:id/audit-log',
    {
      schema: {
        tags,
        summary: "A database's audit events, newest first",
        params: IdParams,
        querystring: DatabaseAuditQuery,
        response: { 200: AuditLogPage, 404: ErrorResponse, ...errorResponses() },
      },
    },
    async (request) => {
      const { accountId } = request.principal;
      // Also 404 for another account's database, so ids leak nothing.
      const database = await ownedDatabase(db, accountId, request.params.id);
      return databaseAuditPage(db, accountId, database.id, request.query);
    },
  );

  app.get(
    '/account/audit-log',
    {
      schema: {
        tags,
        summary: "The account's audit events across all its databases, newest first",
        querystring: AccountAuditQuery,
        response: { 200: AccountAuditLogPage, ...errorResponses() },
      },
    },
    async (request) => auditPage(db, request.principal.accountId, request.query),
  );
}

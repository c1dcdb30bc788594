import { Type } from 'typebox';
import {
  ErrorResponse,
  errorResponses,
  IdParams,
  LogsResponse,
} from '../../application/resources/common-schemas.ts';
import {
  InstanceMetrics,
  InstanceStatus,
} from '../../application/resources/instance/instance-schemas.ts';
import {
  infraLogs,
  instanceLogs,
  instanceMetrics,
  instanceStatus,
} from '../../application/resources/instance/instance-service.ts';
import {
  MetricsHistory,
  MetricsHistoryQuery,
} from '../../application/resources/instance/metrics-history-schemas.ts';
import { metricsHistory } from '../../application/resources/instance/metrics-history-service.ts';
import type { ApiServer } from '../api-server.ts';
import type { ApiContext } from '../context.ts';

const tags = ['instances'];

/** The instance status, metrics and log endpoints of a database. */
export function registerInstanceRoutes(app: ApiServer, context: ApiContext): void {
  app.get(
    '/databases/:id/instance',
    {
      schema: {
        tags,
        summary: "The database's instance status: the dashboard's polling endpoint",
        description:
          '`connection`, `deployedInstanceConfig` and `hasPendingChanges` sit beside `database`, not inside it (docs/control-plane/lifecycle.md). `instance` is null while nothing runs; `latestBuild` is null before the first build.',
        params: IdParams,
        response: { 200: InstanceStatus, 404: ErrorResponse, ...errorResponses() },
      },
    },
    async (request) => instanceStatus(context, request.principal.accountId, request.params.id),
  );

  app.get(
    '/databases/:id/metrics',
    {
      schema: {
        tags,
        summary: "The running instance's metrics, read from its Prometheus endpoint",
        params: IdParams,
        response: {
          200: InstanceMetrics,
          404: ErrorResponse,
          503: ErrorResponse,
          ...errorResponses(),
        },
      },
    },
    async (request) =>
      instanceMetrics(context, request.principal.accountId, request.params.id, request.log),
  );

  app.get(
    '/databases/:id/metrics/history',
    {
      schema: {
        tags,
        summary: "The database's metrics over the last 24 hours, as the health monitor read them",
        description:
          'Readings kept by the control plane every `intervalSeconds` while an instance answers, for `retentionSeconds`; served whether or not the instance runs now. `GET /databases/{id}/metrics` is the live reading.',
        params: IdParams,
        querystring: MetricsHistoryQuery,
        response: { 200: MetricsHistory, 404: ErrorResponse, ...errorResponses() },
      },
    },
    async (request) =>
      metricsHistory(context.db, request.principal.accountId, request.params.id, request.query),
  );

  app.get(
    '/databases/:id/infra-logs',
    {
      schema: {
        tags,
        summary: 'Log of the latest deploy (infrastructure apply); poll with nextToken until done',
        params: IdParams,
        querystring: Type.Object({
          nextToken: Type.Optional(
            Type.String({ pattern: '^[0-9]{1,18}$', description: 'From the previous response.' }),
          ),
        }),
        response: { 200: LogsResponse, 404: ErrorResponse, ...errorResponses() },
      },
    },
    async (request) =>
      infraLogs(context, request.principal.accountId, request.params.id, request.query.nextToken),
  );

  app.get(
    '/databases/:id/instance-logs',
    {
      schema: {
        tags,
        summary: 'Recent log lines of the running instance; poll with nextToken to tail it',
        description:
          '`done` stays false while the instance lives (a live tail); with no live instance the answer is empty and `done` is true.',
        params: IdParams,
        querystring: Type.Object({
          nextToken: Type.Optional(Type.String({ maxLength: 200 })),
        }),
        response: {
          200: LogsResponse,
          404: ErrorResponse,
          503: ErrorResponse,
          ...errorResponses(),
        },
      },
    },
    async (request) =>
      instanceLogs(
        context,
        request.principal.accountId,
        request.params.id,
        request.query.nextToken,
        request.log,
      ),
  );
}

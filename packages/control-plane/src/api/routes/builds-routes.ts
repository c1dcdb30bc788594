import { Type } from 'typebox';
import { BuildSchema } from '../../application/resources/builds/builds-schemas.ts';
import {
  getBuild,
  listBuilds,
  readBuildLog,
} from '../../application/resources/builds/builds-service.ts';
import {
  ErrorResponse,
  errorResponses,
  IdParams,
  LogsResponse,
} from '../../application/resources/common-schemas.ts';
import type { ApiServer } from '../api-server.ts';
import type { ApiContext } from '../context.ts';

const tags = ['builds'];

/** Builds of a database, one build, and a build's log (spec §2 Build, LogsResponse). */
export function registerBuildsRoutes(app: ApiServer, context: ApiContext): void {
  app.get(
    '/databases/:id/builds',
    {
      schema: {
        tags,
        summary: "List a database's builds, newest first",
        params: IdParams,
        response: { 200: Type.Array(BuildSchema), 404: ErrorResponse, ...errorResponses() },
      },
    },
    async (request) => listBuilds(context, request.principal.accountId, request.params.id),
  );

  app.get(
    '/builds/:id',
    {
      schema: {
        tags,
        summary: 'Get one build',
        params: IdParams,
        response: { 200: BuildSchema, 404: ErrorResponse, ...errorResponses() },
      },
    },
    async (request) => getBuild(context, request.principal.accountId, request.params.id),
  );

  app.get(
    '/builds/:id/logs',
    {
      schema: {
        tags,
        summary: "Read a build's log; poll with the returned nextToken until done is true",
        params: IdParams,
        querystring: Type.Object({
          nextToken: Type.Optional(
            Type.String({
              pattern: '^[0-9]{1,15}$',
              description: 'The nextToken of the last page.',
            }),
          ),
        }),
        response: { 200: LogsResponse, 404: ErrorResponse, ...errorResponses() },
      },
    },
    async (request) =>
      readBuildLog(
        context,
        request.principal.accountId,
        request.params.id,
        request.query.nextToken,
      ),
  );
}

import { Type } from 'typebox';
import { BuildSchema, buildResource } from '../builder/build-resource.ts';
import { notFound } from '../errors.ts';
import type { StoreDb } from '../store/open-store.ts';
import type { ApiServer } from './api-server.ts';
import { ErrorResponse, errorResponses, IdParams, LogsResponse } from './common-schemas.ts';
import type { ApiContext } from './context.ts';
import { ownedDatabase } from './tenancy.ts';

/** Lines per page of a build log. */
const LOG_PAGE = 500;
const FINISHED = new Set(['succeeded', 'failed']);

const tags = ['builds'];

async function ownedBuild(db: StoreDb, accountId: string, id: string) {
  const row = await db
    .selectFrom('builds')
    .selectAll()
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  if (!row) throw notFound('Build');
  return row;
}

/** Builds of a database, one build, and a build's log (spec §2 Build, LogsResponse). */
export function registerBuildsRoutes(app: ApiServer, { db }: ApiContext): void {
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
    async (request) => {
      const database = await ownedDatabase(db, request.principal.accountId, request.params.id);
      const rows = await db
        .selectFrom('builds')
        .selectAll()
        .where('database_id', '=', database.id)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .execute();
      return rows.map(buildResource);
    },
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
    async (request) =>
      buildResource(await ownedBuild(db, request.principal.accountId, request.params.id)),
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
    async (request) => {
      // The status is read before the lines: a build writes its last line before it finishes,
      // so when it had finished by then, the lines read next are all there will be.
      const build = await ownedBuild(db, request.principal.accountId, request.params.id);
      const after = Number(request.query.nextToken ?? 0);
      const rows = await db
        .selectFrom('log_lines')
        .select(['id', 'ts', 'message'])
        .where('stream_id', '=', build.id)
        .where('id', '>', String(after))
        .orderBy('id')
        .limit(LOG_PAGE)
        .execute();
      const last = rows.at(-1);
      const finished = FINISHED.has(build.status);
      const nextToken = last
        ? String(last.id)
        : (request.query.nextToken ?? (finished ? null : '0'));
      return {
        lines: rows.map((row) => ({ message: row.message, timestamp: Number(row.ts) })),
        nextToken,
        done: finished && rows.length < LOG_PAGE,
      };
    },
  );
}

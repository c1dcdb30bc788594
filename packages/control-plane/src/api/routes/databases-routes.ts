import { Type } from 'typebox';
import {
  ErrorResponse,
  errorResponses,
  IdParams,
} from '../../application/resources/common-schemas.ts';
import {
  CreateDatabaseBody,
  Database,
  UpdateDatabaseBody,
  UpdatedDatabase,
} from '../../application/resources/databases/databases-schemas.ts';
import {
  createDatabase,
  getDatabase,
  listDatabases,
  readDatabaseSchema,
  updateDatabase,
} from '../../application/resources/databases/databases-service.ts';
import { SchemaIntrospectionResponse } from '../../application/source-access/source-schema-read.ts';
import type { ApiServer } from '../api-server.ts';
import type { ApiContext } from '../context.ts';

const tags = ['databases'];

/** Databases: a schema config bound to a connection. DELETE is the `delete` action. */
export function registerDatabasesRoutes(app: ApiServer, context: ApiContext): void {
  app.get(
    '/databases',
    {
      schema: {
        tags,
        summary: "List the account's databases",
        response: { 200: Type.Array(Database), ...errorResponses() },
      },
    },
    async (request) => listDatabases(context, request.principal.accountId),
  );

  app.post(
    '/databases',
    {
      schema: {
        tags,
        summary: 'Create a database (status draft); provision it to build and run an instance',
        body: CreateDatabaseBody,
        response: {
          201: Database,
          403: ErrorResponse,
          404: ErrorResponse,
          ...errorResponses(),
        },
      },
    },
    async (request, reply) =>
      reply
        .status(201)
        .send(await createDatabase(context, request.principal.accountId, request.body)),
  );

  app.get(
    '/databases/:id',
    {
      schema: {
        tags,
        summary: 'One database',
        params: IdParams,
        response: { 200: Database, 404: ErrorResponse, ...errorResponses() },
      },
    },
    async (request) => getDatabase(context, request.principal.accountId, request.params.id),
  );

  app.patch(
    '/databases/:id',
    {
      schema: {
        tags,
        summary: 'Change settings; they apply at the next rebuild or reconfigure',
        description:
          'The answer is the database with `pendingChanges`: each setting that now differs from the running instance and the action that applies it (reconfigure for runtime settings, rebuild for the source schema and schema config).',
        params: IdParams,
        body: UpdateDatabaseBody,
        response: { 200: UpdatedDatabase, 404: ErrorResponse, ...errorResponses() },
      },
    },
    async (request) =>
      updateDatabase(context, request.principal.accountId, request.params.id, request.body),
  );

  app.get(
    '/databases/:id/schema',
    {
      schema: {
        tags,
        summary: "The source schema's tables, columns and foreign-key relations, read live",
        params: IdParams,
        response: {
          200: SchemaIntrospectionResponse,
          404: ErrorResponse,
          502: ErrorResponse,
          ...errorResponses(),
        },
      },
    },
    async (request) => readDatabaseSchema(context, request.principal.accountId, request.params.id),
  );
}

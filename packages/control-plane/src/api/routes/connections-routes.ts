import { Type } from 'typebox';
import {
  ErrorResponse,
  errorResponses,
  IdParams,
} from '../../application/resources/common-schemas.ts';
import {
  Connection,
  ConnectionTestFailedResponse,
  CreateConnectionBody,
  SourceSchemaQuery,
  TestConnectionBody,
  TestConnectionResult,
  TestSavedConnectionBody,
  UpdateConnectionBody,
} from '../../application/resources/connections/connections-schemas.ts';
import {
  createConnection,
  deleteConnection,
  getConnection,
  listConnections,
  readConnectionSchema,
  testConnectionOf,
  testRawConnection,
  updateConnection,
} from '../../application/resources/connections/connections-service.ts';
import { SchemaIntrospectionResponse } from '../../application/source-access/source-schema-read.ts';
import { ApiError } from '../../domain/errors.ts';
import type { ApiServer } from '../api-server.ts';
import type { ApiContext } from '../context.ts';

const tags = ['connections'];

/** Why the raw test refuses an empty password, and the two ways to test a user without one. */
const EMPTY_TEST_PASSWORD =
  'body.mysqlPassword must not be empty: the raw credentials test needs a password. A user without one is tested by saving the connection without a password (POST /v1/connections tests it first and saves nothing when the test fails) or, once saved, by POST /v1/connections/{id}/test.';

/** Connections: source servers and their credentials (secrets sealed, never returned). */
export function registerConnectionsRoutes(app: ApiServer, context: ApiContext): void {
  app.post(
    '/connections/test-connection',
    {
      schema: {
        tags,
        summary:
          'Check raw credentials: connectivity, latency, schemas, size and change-log readiness',
        description:
          'A server that cannot be reached or refuses the login answers 200 with ok false and the reason. `mysqlPassword` may not be empty (the API contract); a user without a password is tested by saving the connection (`POST /connections` with no password tests it first) or by `POST /connections/{id}/test`.',
        body: TestConnectionBody,
        response: { 200: TestConnectionResult, ...errorResponses() },
      },
      // Before the schema's own refusal, which could only say the field is too short.
      preValidation: async (request) => {
        const body = request.body as { mysqlPassword?: unknown } | undefined;
        if (body?.mysqlPassword === '')
          throw new ApiError('validation_failed', EMPTY_TEST_PASSWORD);
      },
    },
    async (request) => testRawConnection(request.body),
  );

  app.get(
    '/connections',
    {
      schema: {
        tags,
        summary: "List the account's connections",
        response: { 200: Type.Array(Connection), ...errorResponses() },
      },
    },
    async (request) => listConnections(context, request.principal.accountId),
  );

  app.post(
    '/connections',
    {
      schema: {
        tags,
        summary: 'Test a connection, then save it; the password and SSH key are stored sealed',
        description:
          'The connection is tested first; a failing test answers 422 `connection_test_failed` with the result in `test`, and nothing is saved, unless `skipTest` is true. The saved connection carries the result in `lastTest`.',
        body: CreateConnectionBody,
        response: {
          201: Connection,
          403: ErrorResponse,
          422: ConnectionTestFailedResponse,
          ...errorResponses(),
        },
      },
    },
    async (request, reply) =>
      reply
        .status(201)
        .send(await createConnection(context, request.principal.accountId, request.body)),
  );

  app.get(
    '/connections/:id',
    {
      schema: {
        tags,
        summary: 'One connection',
        params: IdParams,
        response: { 200: Connection, 404: ErrorResponse, ...errorResponses() },
      },
    },
    async (request) => getConnection(context, request.principal.accountId, request.params.id),
  );

  app.post(
    '/connections/:id/test',
    {
      schema: {
        tags,
        summary: 'Check a saved connection with its stored credentials, TLS mode and SSH tunnel',
        description:
          "Answers as the raw connection test does: a server that cannot be reached or refuses the login answers 200 with ok false and the reason. The result becomes the connection's `lastTest`.",
        params: IdParams,
        body: TestSavedConnectionBody,
        response: { 200: TestConnectionResult, ...errorResponses(403, 404) },
      },
      // The body is optional: no body tests the server's default login database.
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request) =>
      testConnectionOf(
        context,
        request.principal.accountId,
        request.params.id,
        request.body.database,
      ),
  );

  app.get(
    '/connections/:id/schema',
    {
      schema: {
        tags,
        summary:
          "A source schema's tables, columns and foreign-key relations through a saved connection, read live",
        description:
          'The same answer as the schema of a database on this connection and source schema, before the database exists.',
        params: IdParams,
        querystring: SourceSchemaQuery,
        response: {
          200: SchemaIntrospectionResponse,
          404: ErrorResponse,
          502: ErrorResponse,
          ...errorResponses(),
        },
      },
    },
    async (request) =>
      readConnectionSchema(
        context,
        request.principal.accountId,
        request.params.id,
        request.query.sourceSchema,
      ),
  );

  app.patch(
    '/connections/:id',
    {
      schema: {
        tags,
        summary: 'Change a connection; omitted fields and secrets stay as they are',
        description:
          'A change of host, port, user, password, TLS mode or SSH tunnel is tested first: a failing test answers 422 `connection_test_failed` and nothing changes, unless `skipTest` is true.',
        params: IdParams,
        body: UpdateConnectionBody,
        response: {
          200: Connection,
          403: ErrorResponse,
          404: ErrorResponse,
          422: ConnectionTestFailedResponse,
          ...errorResponses(),
        },
      },
    },
    async (request) =>
      updateConnection(context, request.principal.accountId, request.params.id, request.body),
  );

  app.delete(
    '/connections/:id',
    {
      schema: {
        tags,
        summary: 'Delete a connection no database uses any more',
        params: IdParams,
        response: { 204: Type.Null(), 404: ErrorResponse, 409: ErrorResponse, ...errorResponses() },
      },
    },
    async (request, reply) => {
      await deleteConnection(context, request.principal.accountId, request.params.id);
      return reply.status(204).send(null);
    },
  );
}

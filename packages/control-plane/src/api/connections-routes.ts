import { randomUUID } from 'node:crypto';
import { SOURCE_TLS_MODES, type SourceEngine, type SourceTlsMode } from '@replix/sources';
import { Type } from 'typebox';
import { accountPlan } from '../connections/account-plan.ts';
import { connectionResource } from '../connections/connection-resource.ts';
import { DEFAULT_REGION, REGIONS } from '../connections/regions.ts';
import { testSavedConnection } from '../connections/saved-connection-test.ts';
import {
  readSourceSchema,
  SchemaIntrospectionResponse,
} from '../connections/source-schema-read.ts';
import { assertUsablePrivateKey } from '../connections/ssh-private-key.ts';
import { testConnection } from '../connections/test-connection.ts';
import { assertRegion } from '../domain/plan-enforcement.ts';
import { ApiError } from '../errors.ts';
import { recordAudit } from '../events/audit-log.ts';
import type { ConnectionTable } from '../store/schema.ts';
import type { ApiServer } from './api-server.ts';
import { DateTime, ErrorResponse, errorResponses, IdParams, Uuid } from './common-schemas.ts';
import type { ApiContext } from './context.ts';
import { fieldChanges } from './field-changes.ts';
import { ownedConnection } from './tenancy.ts';

const BACKENDS = ['mysql', 'postgres', 'mssql'] as const;
const DEFAULT_PORTS: Record<SourceEngine, number> = { mysql: 3306, postgres: 5432, mssql: 1433 };

// Host names go into source URLs: no spaces, slashes, `@`, `?` or `#`.
const Host = Type.String({ minLength: 1, maxLength: 255, pattern: '^[^\\s/@?#]+$' });
const Port = Type.Integer({ minimum: 1, maximum: 65535 });
const Backend = Type.Enum([...BACKENDS], {
  description: 'The source engine; `mysql` covers MariaDB.',
});
const Region = Type.Enum([...REGIONS], {
  description:
    'Where instances run unless a database says otherwise; non-default regions need the Teams plan or above.',
});
const TlsMode = Type.Enum([...SOURCE_TLS_MODES], {
  description:
    'TLS to the source: `disable`, `prefer` (default), `require`, `verify-full` (certificate and host name checked).',
});
const PrivateKey = Type.String({
  minLength: 1,
  maxLength: 16_384,
  description: 'An unencrypted OpenSSH or PEM private key. Write-only.',
});

const SshInput = Type.Object(
  {
    host: Host,
    port: Type.Optional(Port),
    user: Type.String({ minLength: 1, maxLength: 128 }),
    privateKey: PrivateKey,
  },
  {
    additionalProperties: false,
    description: 'Reach the source through this SSH server (port 22 by default).',
  },
);

const SshPatch = Type.Object(
  {
    host: Host,
    port: Type.Optional(Port),
    user: Type.String({ minLength: 1, maxLength: 128 }),
    privateKey: Type.Optional(PrivateKey),
  },
  {
    additionalProperties: false,
    description:
      'Replaces the SSH settings; without privateKey the stored key is kept. null removes the tunnel.',
  },
);

const Connection = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    backend: Backend,
    host: Type.String(),
    port: Type.Integer(),
    user: Type.String(),
    hasPassword: Type.Boolean({
      description: 'The password is stored (sealed); it is never returned.',
    }),
    defaultRegion: Region,
    tlsMode: TlsMode,
    ssh: Type.Union([
      Type.Object({
        host: Type.String(),
        port: Type.Integer(),
        user: Type.String(),
        hasPrivateKey: Type.Boolean(),
      }),
      Type.Null(),
    ]),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { $id: 'Connection', description: 'A source server and the credentials to read it.' },
);

const CreateConnectionBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    backend: Type.Optional(Backend),
    host: Host,
    port: Type.Optional(Port),
    user: Type.String({ minLength: 1, maxLength: 128 }),
    password: Type.String({ minLength: 1, maxLength: 1024, description: 'Write-only.' }),
    defaultRegion: Type.Optional(Region),
    tlsMode: Type.Optional(TlsMode),
    ssh: Type.Optional(SshInput),
  },
  { $id: 'CreateConnectionBody', additionalProperties: false },
);

const UpdateConnectionBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    host: Type.Optional(Host),
    port: Type.Optional(Port),
    user: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    password: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
    defaultRegion: Type.Optional(Region),
    tlsMode: Type.Optional(TlsMode),
    ssh: Type.Optional(Type.Union([SshPatch, Type.Null()])),
  },
  {
    $id: 'UpdateConnectionBody',
    additionalProperties: false,
    description:
      'Fields to change; the backend cannot change. Running instances keep the old settings until rebuilt or redeployed.',
  },
);

const LoginDatabase = Type.String({
  minLength: 1,
  description:
    'PostgreSQL: the database to log in to (default `postgres`); SQL Server: the database whose CDC is checked (default `master`).',
});

const TestConnectionBody = Type.Object(
  {
    backend: Type.Optional(Backend),
    mysqlHost: Host,
    mysqlPort: Type.Optional(Port),
    mysqlUser: Type.String({ minLength: 1 }),
    mysqlPassword: Type.String({ minLength: 1 }),
    database: Type.Optional(LoginDatabase),
    tlsMode: Type.Optional(TlsMode),
    ssh: Type.Optional(SshInput),
  },
  {
    $id: 'TestConnectionBody',
    additionalProperties: false,
    description:
      'Raw credentials to check before saving a connection. The field names say mysql for every backend.',
  },
);

const TestSavedConnectionBody = Type.Object(
  { database: Type.Optional(LoginDatabase) },
  {
    $id: 'TestSavedConnectionBody',
    additionalProperties: false,
    description: 'Optional; the stored host, credentials, TLS mode and SSH tunnel are used.',
  },
);

const SourceSchemaQuery = Type.Object({
  sourceSchema: Type.String({
    minLength: 1,
    maxLength: 255,
    description:
      "The source schema, as a database's `sourceSchema`: the database (MySQL), or `<database>[/<schema>]` (PostgreSQL, SQL Server).",
  }),
});

const TestConnectionResult = Type.Object(
  {
    ok: Type.Boolean(),
    error: Type.Optional(
      Type.String({ description: 'Why the connection failed (when ok is false).' }),
    ),
    latencyMs: Type.Optional(Type.Number({ description: 'Round trip of a trivial query, ms.' })),
    estimatedSizeGb: Type.Optional(
      Type.Number({
        description: 'Data plus index size in GB (10^9 bytes); omitted when it cannot be read.',
      }),
    ),
    availableSchemas: Type.Optional(
      Type.Array(Type.String(), {
        description: 'Databases the user can use, system ones excluded.',
      }),
    ),
    binlog: Type.Optional(
      Type.Object(
        {
          logBin: Type.Boolean(),
          format: Type.Union([Type.String(), Type.Null()]),
          serverId: Type.Union([Type.Integer(), Type.Null()]),
          ready: Type.Boolean(),
          issues: Type.Array(Type.String()),
        },
        {
          description:
            'Change-log readiness: the binlog (MySQL), logical replication (PostgreSQL: format is wal_level) or CDC (SQL Server: format `cdc`).',
        },
      ),
    ),
  },
  { $id: 'TestConnectionResult' },
);

const tags = ['connections'];

/** Connections: source servers and their credentials (secrets sealed, never returned). */
export function registerConnectionsRoutes(app: ApiServer, { db, secrets }: ApiContext): void {
  app.post(
    '/connections/test-connection',
    {
      schema: {
        tags,
        summary:
          'Check raw credentials: connectivity, latency, schemas, size and change-log readiness',
        description:
          'A server that cannot be reached or refuses the login answers 200 with ok false and the reason.',
        body: TestConnectionBody,
        response: { 200: TestConnectionResult, ...errorResponses() },
      },
    },
    async (request) => {
      const body = request.body;
      const backend = body.backend ?? 'mysql';
      return testConnection({
        backend,
        host: body.mysqlHost,
        port: body.mysqlPort ?? DEFAULT_PORTS[backend],
        user: body.mysqlUser,
        password: body.mysqlPassword,
        database: body.database,
        tlsMode: body.tlsMode,
        ssh: body.ssh && { ...body.ssh, port: body.ssh.port ?? 22 },
      });
    },
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
    async (request) => {
      const rows = await db
        .selectFrom('connections')
        .selectAll()
        .where('account_id', '=', request.principal.accountId)
        .where('deleted_at', 'is', null)
        .orderBy('created_at', 'asc')
        .orderBy('id')
        .execute();
      return rows.map(connectionResource);
    },
  );

  app.post(
    '/connections',
    {
      schema: {
        tags,
        summary: 'Save a connection; the password and SSH key are stored sealed',
        body: CreateConnectionBody,
        response: { 201: Connection, 403: ErrorResponse, ...errorResponses() },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const { accountId } = request.principal;
      const backend = body.backend ?? 'mysql';
      const defaultRegion = body.defaultRegion ?? DEFAULT_REGION;
      assertRegion(await accountPlan(db, accountId), defaultRegion);
      if (body.ssh) assertUsablePrivateKey(body.ssh.privateKey, 'body.ssh.privateKey');
      const id = randomUUID();
      const now = new Date();
      const row = await db.transaction().execute(async (tx) => {
        const inserted = await tx
          .insertInto('connections')
          .values({
            id,
            account_id: accountId,
            name: body.name,
            backend,
            host: body.host,
            port: body.port ?? DEFAULT_PORTS[backend],
            username: body.user,
            password_enc: secrets.seal(body.password),
            default_region: defaultRegion,
            tls_mode: body.tlsMode ?? 'prefer',
            ssh: body.ssh
              ? JSON.stringify({
                  host: body.ssh.host,
                  port: body.ssh.port ?? 22,
                  user: body.ssh.user,
                })
              : null,
            ssh_private_key_enc: body.ssh ? secrets.seal(body.ssh.privateKey) : null,
            created_at: now,
            updated_at: now,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
        await recordAudit(tx, {
          accountId,
          entityType: 'connection',
          entityId: id,
          eventType: 'connection.created',
          payload: { name: body.name, backend, ssh: body.ssh !== undefined },
        });
        return inserted;
      });
      return reply.status(201).send(connectionResource(row));
    },
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
    async (request) =>
      connectionResource(await ownedConnection(db, request.principal.accountId, request.params.id)),
  );

  app.post(
    '/connections/:id/test',
    {
      schema: {
        tags,
        summary: 'Check a saved connection with its stored credentials, TLS mode and SSH tunnel',
        description:
          'Answers as the raw connection test does: a server that cannot be reached or refuses the login answers 200 with ok false and the reason.',
        params: IdParams,
        body: TestSavedConnectionBody,
        response: { 200: TestConnectionResult, ...errorResponses(403, 404) },
      },
      // The body is optional: no body tests the server's default login database.
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request) => {
      const connection = await ownedConnection(db, request.principal.accountId, request.params.id);
      return testSavedConnection(connection, secrets, request.body.database);
    },
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
    async (request) => {
      const connection = await ownedConnection(db, request.principal.accountId, request.params.id);
      return readSourceSchema(connection, secrets, request.query.sourceSchema);
    },
  );

  app.patch(
    '/connections/:id',
    {
      schema: {
        tags,
        summary: 'Change a connection; omitted fields and secrets stay as they are',
        params: IdParams,
        body: UpdateConnectionBody,
        response: { 200: Connection, 403: ErrorResponse, 404: ErrorResponse, ...errorResponses() },
      },
    },
    async (request) => {
      const body = request.body;
      const { accountId } = request.principal;
      const current = await ownedConnection(db, accountId, request.params.id);
      if (body.defaultRegion !== undefined && body.defaultRegion !== current.default_region) {
        assertRegion(await accountPlan(db, accountId), body.defaultRegion);
      }
      const { changes, changed, set } = fieldChanges<ConnectionTable>();
      if (body.name !== undefined) set('name', 'name', body.name);
      if (body.host !== undefined) set('host', 'host', body.host);
      if (body.port !== undefined) set('port', 'port', body.port);
      if (body.user !== undefined) set('user', 'username', body.user);
      if (body.password !== undefined) set('password', 'password_enc', secrets.seal(body.password));
      if (body.defaultRegion !== undefined)
        set('defaultRegion', 'default_region', body.defaultRegion);
      if (body.tlsMode !== undefined) set('tlsMode', 'tls_mode', body.tlsMode as SourceTlsMode);
      if (body.ssh === null) {
        set('ssh', 'ssh', null);
        changes.ssh_private_key_enc = null;
      } else if (body.ssh !== undefined) {
        const { privateKey } = body.ssh;
        if (privateKey !== undefined) {
          assertUsablePrivateKey(privateKey, 'body.ssh.privateKey');
          changes.ssh_private_key_enc = secrets.seal(privateKey);
        } else if (current.ssh_private_key_enc === null) {
          throw new ApiError(
            'validation_failed',
            'body.ssh.privateKey is required: the connection has no SSH key yet.',
          );
        }
        set(
          'ssh',
          'ssh',
          JSON.stringify({ host: body.ssh.host, port: body.ssh.port ?? 22, user: body.ssh.user }),
        );
      }
      const row = await db.transaction().execute(async (tx) => {
        const updated = await tx
          .updateTable('connections')
          .set({ ...changes, updated_at: new Date() })
          .where('id', '=', current.id)
          .where('deleted_at', 'is', null)
          .returningAll()
          .executeTakeFirstOrThrow();
        await recordAudit(tx, {
          accountId,
          entityType: 'connection',
          entityId: current.id,
          eventType: 'connection.updated',
          payload: { changed },
        });
        return updated;
      });
      return connectionResource(row);
    },
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
      const { accountId } = request.principal;
      const current = await ownedConnection(db, accountId, request.params.id);
      await db.transaction().execute(async (tx) => {
        // Locks the connection, so a database cannot be created on it meanwhile.
        await tx
          .selectFrom('connections')
          .select('id')
          .where('id', '=', current.id)
          .forUpdate()
          .execute();
        const users = await tx
          .selectFrom('databases')
          .select('name')
          .where('connection_id', '=', current.id)
          .where('deleted_at', 'is', null)
          .orderBy('name')
          .execute();
        if (users.length > 0) {
          throw new ApiError(
            'conflict',
            `The connection is used by ${users.length} database(s) (${users
              .slice(0, 5)
              .map((u) => u.name)
              .join(', ')}); delete them first.`,
          );
        }
        await tx
          .updateTable('connections')
          .set({ deleted_at: new Date(), updated_at: new Date() })
          .where('id', '=', current.id)
          .execute();
        await recordAudit(tx, {
          accountId,
          entityType: 'connection',
          entityId: current.id,
          eventType: 'connection.deleted',
          payload: { name: current.name },
        });
      });
      return reply.status(204).send(null);
    },
  );
}

import { randomBytes, randomUUID } from 'node:crypto';
import type { SourceEngine } from '@replix/sources';
import { Type } from 'typebox';
import { accountPlan } from '../connections/account-plan.ts';
import { Database, databaseResource } from '../connections/database-resource.ts';
import { LOG_LEVELS, SYNC_MODES, validSchemaConfig } from '../connections/database-settings.ts';
import { REGIONS } from '../connections/regions.ts';
import {
  readSourceSchema,
  SchemaIntrospectionResponse,
} from '../connections/source-schema-read.ts';
import {
  assertDatabaseCount,
  assertInstanceSize,
  assertPollInterval,
  assertRegion,
} from '../domain/plan-enforcement.ts';
import { INSTANCE_SIZE_NAMES, type InstanceSize } from '../domain/plans.ts';
import { ApiError } from '../errors.ts';
import { recordAudit } from '../events/audit-log.ts';
import type { DatabaseTable } from '../store/schema.ts';
import type { ApiServer } from './api-server.ts';
import { ErrorResponse, errorResponses, IdParams, Uuid } from './common-schemas.ts';
import type { ApiContext } from './context.ts';
import { fieldChanges } from './field-changes.ts';
import { ownedConnection, ownedDatabase } from './tenancy.ts';

const SchemaConfigInput = Type.Record(Type.String(), Type.Unknown(), {
  description:
    'The schema config (docs/schema-config.md); validated, 400 invalid_schema_config names the key path.',
});
const SyncMode = Type.Enum([...SYNC_MODES]);
const SyncInterval = Type.Integer({
  minimum: 1,
  maximum: 86_400,
  description:
    'Seconds between sync ticks; in poll mode at least the plan’s pollModeMinSyncInterval.',
});
const LogLevel = Type.Enum([...LOG_LEVELS]);
const SafetyNet = Type.Integer({
  minimum: 0,
  maximum: 604_800,
  description: 'Seconds between full safety-net reloads; 0 for none.',
});

const CreateDatabaseBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    connectionId: Uuid,
    sourceSchema: Type.String({ minLength: 1, maxLength: 255 }),
    schemaConfig: Type.Optional(SchemaConfigInput),
    region: Type.Optional(
      Type.Enum([...REGIONS], { description: "Default: the connection's defaultRegion." }),
    ),
    instanceSize: Type.Optional(
      Type.Enum([...INSTANCE_SIZE_NAMES], { description: 'Default xs.' }),
    ),
    syncMode: Type.Optional(
      Type.Enum([...SYNC_MODES], { description: "Default: the schema config's sync.mode (cdc)." }),
    ),
    syncInterval: Type.Optional(SyncInterval),
    logLevel: Type.Optional(Type.Enum([...LOG_LEVELS], { description: 'Default info.' })),
    safetyNet: Type.Optional(SafetyNet),
  },
  { $id: 'CreateDatabaseBody', additionalProperties: false },
);

const UpdateDatabaseBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    sourceSchema: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    schemaConfig: Type.Optional(SchemaConfigInput),
    syncMode: Type.Optional(SyncMode),
    syncInterval: Type.Optional(SyncInterval),
    logLevel: Type.Optional(LogLevel),
    safetyNet: Type.Optional(SafetyNet),
  },
  {
    $id: 'UpdateDatabaseBody',
    additionalProperties: false,
    description:
      'Changes become pending changes: the running instance keeps its settings until a rebuild or reconfigure. Size: the resize action; region and connection cannot change.',
  },
);

const tags = ['databases'];

/** Databases: a schema config bound to a connection. DELETE is the `delete` action. */
export function registerDatabasesRoutes(app: ApiServer, { db, secrets }: ApiContext): void {
  app.get(
    '/databases',
    {
      schema: {
        tags,
        summary: "List the account's databases",
        response: { 200: Type.Array(Database), ...errorResponses() },
      },
    },
    async (request) => {
      const rows = await db
        .selectFrom('databases')
        .selectAll()
        .where('account_id', '=', request.principal.accountId)
        .where('deleted_at', 'is', null)
        .orderBy('created_at', 'asc')
        .orderBy('id')
        .execute();
      return rows.map(databaseResource);
    },
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
    async (request, reply) => {
      const body = request.body;
      const { accountId } = request.principal;
      const connection = await ownedConnection(db, accountId, body.connectionId);
      const schemaConfig = body.schemaConfig ?? {};
      const config = validSchemaConfig(schemaConfig, connection.backend as SourceEngine);
      const plan = await accountPlan(db, accountId);
      const { limits } = plan;
      const region = body.region ?? connection.default_region;
      assertRegion(plan, region);
      const instanceSize: InstanceSize = body.instanceSize ?? 'xs';
      assertInstanceSize(plan, instanceSize);
      const syncMode = body.syncMode ?? config.sync.mode;
      const configInterval = Math.max(1, Math.round(config.sync.interval));
      const syncInterval =
        body.syncInterval ??
        (syncMode === 'poll'
          ? Math.max(configInterval, limits.pollModeMinSyncInterval)
          : configInterval);
      assertPollInterval(plan, syncMode, syncInterval);
      const id = randomUUID();
      const now = new Date();
      const row = await db.transaction().execute(async (tx) => {
        // Serialises creations per account (the count below) and against deleting the connection.
        await tx
          .selectFrom('accounts')
          .select('id')
          .where('id', '=', accountId)
          .forUpdate()
          .execute();
        const live = await tx
          .selectFrom('connections')
          .select('id')
          .where('id', '=', connection.id)
          .where('deleted_at', 'is', null)
          .forUpdate()
          .executeTakeFirst();
        if (!live) throw new ApiError('not_found', 'Connection not found.');
        const { count } = await tx
          .selectFrom('databases')
          .select((eb) => eb.fn.countAll<string>().as('count'))
          .where('account_id', '=', accountId)
          .where('deleted_at', 'is', null)
          .executeTakeFirstOrThrow();
        assertDatabaseCount(plan, Number(count));
        const inserted = await tx
          .insertInto('databases')
          .values({
            id,
            account_id: accountId,
            connection_id: connection.id,
            name: body.name,
            source_schema: body.sourceSchema,
            schema_config: JSON.stringify(schemaConfig),
            region,
            instance_size: instanceSize,
            sync_mode: syncMode,
            sync_interval: syncInterval,
            log_level: body.logLevel ?? 'info',
            safety_net: body.safetyNet ?? Math.round(config.sync.safety_net),
            status: 'draft',
            goal: null,
            key_secret_enc: secrets.seal(randomBytes(32)),
            created_at: now,
            updated_at: now,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
        await recordAudit(tx, {
          accountId,
          databaseId: id,
          entityType: 'database',
          entityId: id,
          eventType: 'database.created',
          payload: { name: body.name, connectionId: connection.id, region, instanceSize },
        });
        return inserted;
      });
      return reply.status(201).send(databaseResource(row));
    },
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
    async (request) =>
      databaseResource(await ownedDatabase(db, request.principal.accountId, request.params.id)),
  );

  app.patch(
    '/databases/:id',
    {
      schema: {
        tags,
        summary: 'Change settings; they apply at the next rebuild or reconfigure',
        params: IdParams,
        body: UpdateDatabaseBody,
        response: { 200: Database, 404: ErrorResponse, ...errorResponses() },
      },
    },
    async (request) => {
      const body = request.body;
      const { accountId } = request.principal;
      const current = await ownedDatabase(db, accountId, request.params.id);
      const { changes, changed, set } = fieldChanges<DatabaseTable>();
      if (body.schemaConfig !== undefined) {
        const { backend } = await db
          .selectFrom('connections')
          .select('backend')
          .where('id', '=', current.connection_id)
          .executeTakeFirstOrThrow();
        validSchemaConfig(body.schemaConfig, backend as SourceEngine);
        set('schemaConfig', 'schema_config', JSON.stringify(body.schemaConfig));
      }
      if (body.name !== undefined) set('name', 'name', body.name);
      if (body.sourceSchema !== undefined) set('sourceSchema', 'source_schema', body.sourceSchema);
      if (body.syncMode !== undefined) set('syncMode', 'sync_mode', body.syncMode);
      if (body.syncInterval !== undefined) set('syncInterval', 'sync_interval', body.syncInterval);
      if (body.logLevel !== undefined) set('logLevel', 'log_level', body.logLevel);
      if (body.safetyNet !== undefined) set('safetyNet', 'safety_net', body.safetyNet);
      if (body.syncMode !== undefined || body.syncInterval !== undefined) {
        assertPollInterval(
          await accountPlan(db, accountId),
          body.syncMode ?? current.sync_mode,
          body.syncInterval ?? current.sync_interval,
        );
      }
      const row = await db.transaction().execute(async (tx) => {
        const updated = await tx
          .updateTable('databases')
          .set({ ...changes, updated_at: new Date() })
          .where('id', '=', current.id)
          .where('deleted_at', 'is', null)
          .returningAll()
          .executeTakeFirst();
        if (!updated) throw new ApiError('not_found', 'Database not found.');
        await recordAudit(tx, {
          accountId,
          databaseId: current.id,
          entityType: 'database',
          entityId: current.id,
          eventType: 'database.updated',
          payload: { changed },
        });
        return updated;
      });
      return databaseResource(row);
    },
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
    async (request) => {
      const { accountId } = request.principal;
      const database = await ownedDatabase(db, accountId, request.params.id);
      const connection = await db
        .selectFrom('connections')
        .selectAll()
        .where('id', '=', database.connection_id)
        .where('account_id', '=', accountId)
        .executeTakeFirstOrThrow();
      return readSourceSchema(connection, secrets, database.source_schema);
    },
  );
}

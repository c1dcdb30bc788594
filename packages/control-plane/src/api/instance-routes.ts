import type { Selectable } from 'kysely';
import { Type } from 'typebox';
import { BuildSchema, buildResource } from '../builder/build-resource.ts';
import { databaseConfigHash } from '../builder/config-hash.ts';
import { databaseResource } from '../connections/database-resource.ts';
import { allowedActions } from '../domain/allowed-actions.ts';
import { ACTIONS, type DatabaseStatus } from '../domain/database-status.ts';
import {
  INSTANCE_SIZES,
  type InstanceSize,
  PLANS,
  type Plan,
  planLimits,
} from '../domain/plans.ts';
import { InstanceClient } from '../drivers/instance-client.ts';
import { parseInstanceMetrics } from '../drivers/parse-instance-metrics.ts';
import { ApiError } from '../errors.ts';
import { liveInstanceOf } from '../reconciler/live-instance.ts';
import type { DatabaseTable, DeployedInstanceConfig, InstanceTable } from '../store/schema.ts';
import type { ApiServer } from './api-server.ts';
import { availableSchemas } from './available-schemas.ts';
import {
  DateTime,
  ErrorResponse,
  errorResponses,
  IdParams,
  iso,
  LogsResponse,
  Uuid,
} from './common-schemas.ts';
import type { ApiContext } from './context.ts';
import { ownedDatabase } from './tenancy.ts';

const tags = ['instances'];
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) =>
  Type.Union([schema, Type.Null()]);

const ActionAvailability = Type.Object(
  {
    allowed: Type.Boolean(),
    mode: Type.Union([Type.Literal('immediate'), Type.Literal('queued')], {
      description:
        '`immediate`: done in the request. `queued`: recorded as a goal the reconciler carries out.',
    }),
    reason: Type.Optional(Type.String({ description: 'Present exactly when `allowed` is false.' })),
  },
  // No $id: thirteen keys share it, and a $id may appear only once in a response schema.
  { description: 'Spec §2 ActionAvailability.' },
);

const AllowedActionsSchema = Type.Object(
  Object.fromEntries(ACTIONS.map((action) => [action, ActionAvailability])) as Record<
    (typeof ACTIONS)[number],
    typeof ActionAvailability
  >,
  { $id: 'AllowedActions' },
);

const InstanceDatabase = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    connectionId: Uuid,
    sourceSchema: Type.String(),
    status: Type.String(),
    region: Type.String(),
    instanceSize: Type.String(),
    syncMode: Type.String(),
    syncInterval: Type.Number(),
    logLevel: Type.String(),
    safetyNet: Type.Number(),
    replicationPaused: Type.Boolean(),
    goal: Nullable(
      Type.Object({
        action: Type.String(),
        requestedAt: DateTime,
        claimed: Type.Boolean({
          description: 'The reconciler has started it; it can no longer be cancelled.',
        }),
      }),
    ),
    currentBuildId: Nullable(Uuid),
    lastError: Nullable(Type.String()),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  {
    $id: 'InstanceStatusDatabase',
    description:
      'The database fields instance management needs (the Database resource without its schema config) and its goal.',
  },
);

const InstanceConnection = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    backend: Type.String(),
    minSyncInterval: Type.Number({
      description: "Seconds: the plan's shortest poll-mode sync interval.",
    }),
    allowedSyncModes: Type.Array(Type.String()),
    availableSchemas: Type.Array(Type.String(), {
      description: 'Read from the source (cached a minute); empty when it does not answer.',
    }),
  },
  { $id: 'InstanceStatusConnection' },
);

const DeployedInstanceConfigSchema = Type.Object(
  {
    instanceSize: Type.String(),
    taskCpu: Type.Number(),
    taskMemoryMb: Type.Number(),
    syncMode: Type.String(),
    syncInterval: Type.Number(),
    logLevel: Type.String(),
    safetyNet: Type.Number(),
  },
  {
    $id: 'DeployedInstanceConfig',
    description:
      'The settings the live instance runs with; before the first deploy, the settings the next deploy will use.',
  },
);

const InstanceSchema = Type.Object(
  {
    id: Uuid,
    databaseId: Uuid,
    buildId: Type.Optional(Nullable(Uuid)),
    containerServiceArn: Type.Optional(
      Nullable(Type.String({ description: "The driver's reference (process: `process:<pid>`)." })),
    ),
    endpointUrl: Type.Optional(Nullable(Type.String())),
    healthStatus: Type.Optional(
      Nullable(
        Type.Union([
          Type.Literal('ok'),
          Type.Literal('degraded'),
          Type.Literal('unreachable'),
          Type.Literal('cap_exceeded'),
        ]),
      ),
    ),
    snapshotAgeMs: Type.Optional(Nullable(Type.Integer())),
    swapCount: Type.Optional(Nullable(Type.Integer())),
    rowCounts: Type.Optional(
      Type.Record(Type.String(), Type.Integer(), {
        description: 'Rows per table at the last health check; absent before the first.',
      }),
    ),
    lastHealthCheck: Type.Optional(Nullable(DateTime)),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { $id: 'Instance' },
);

const NotificationItem = Type.Object({
  id: Uuid,
  eventType: Type.String(),
  message: Type.String(),
  detail: Nullable(Type.String()),
  severity: Type.Union([Type.Literal('success'), Type.Literal('error'), Type.Literal('info')]),
  sticky: Type.Boolean(),
  createdAt: DateTime,
});

const InstanceStatus = Type.Object(
  {
    database: InstanceDatabase,
    connection: InstanceConnection,
    deployedInstanceConfig: DeployedInstanceConfigSchema,
    hasPendingChanges: Type.Boolean({
      description:
        "The database's settings differ from the deployed ones, or its schema config from the current build's; false before the first deploy.",
    }),
    instance: Nullable(InstanceSchema),
    latestBuild: Nullable(BuildSchema),
    allowedActions: AllowedActionsSchema,
    notifications: Type.Array(NotificationItem, {
      description: 'Unseen, not skipped, newest first.',
    }),
    unseenCount: Type.Integer(),
    skippedCount: Type.Integer({
      description: 'Older unseen notifications auto-skipped; the audit log has them.',
    }),
    computeUnitsLimit: Type.Number(),
    maxInstanceSize: Type.String(),
    pollModeMinSyncInterval: Type.Number(),
    dataTransferGBPerMonth: Type.Number(),
  },
  { $id: 'InstanceStatus' },
);

const InstanceMetrics = Type.Object(
  {
    queriesOk: Type.Number({ description: 'Successful queries since the instance started.' }),
    queriesErr: Type.Number({ description: 'Failed queries since the instance started.' }),
    snapshotBytes: Type.Number(),
    snapshotAgeSeconds: Type.Number({ description: 'Seconds since the last sync.' }),
    swapCount: Type.Number(),
    tableRows: Type.Record(Type.String(), Type.Number()),
    queryDurationSum: Type.Number({ description: 'Seconds.' }),
    queryDurationCount: Type.Number(),
  },
  { $id: 'InstanceMetrics' },
);

/** How many infra log lines one response carries at most. */
const LOG_PAGE = 500;

type DatabaseRow = Selectable<DatabaseTable>;

function asPlan(plan: string): Plan {
  return (PLANS as readonly string[]).includes(plan) ? (plan as Plan) : 'free';
}

/** The settings a deploy of the database would use now. */
function settingsOf(row: DatabaseRow): DeployedInstanceConfig {
  const size = INSTANCE_SIZES[row.instance_size as InstanceSize] ?? INSTANCE_SIZES.xs;
  return {
    instanceSize: row.instance_size,
    taskCpu: size.taskCpu,
    taskMemoryMb: size.taskMemoryMb,
    syncMode: row.sync_mode,
    syncInterval: row.sync_interval,
    logLevel: row.log_level,
    safetyNet: row.safety_net,
  };
}

function sameSettings(a: DeployedInstanceConfig, b: DeployedInstanceConfig): boolean {
  return (
    a.instanceSize === b.instanceSize &&
    a.syncMode === b.syncMode &&
    a.syncInterval === b.syncInterval &&
    a.logLevel === b.logLevel &&
    a.safetyNet === b.safetyNet
  );
}

function instanceResource(row: Selectable<InstanceTable>) {
  return {
    id: row.id,
    databaseId: row.database_id,
    buildId: row.build_id,
    containerServiceArn: row.container_ref,
    endpointUrl: row.endpoint_url,
    healthStatus: row.health_status as 'ok' | 'degraded' | 'unreachable' | 'cap_exceeded' | null,
    snapshotAgeMs: row.snapshot_age_ms,
    swapCount: row.swap_count,
    ...(row.row_counts ? { rowCounts: row.row_counts } : {}),
    lastHealthCheck: iso(row.last_health_check),
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

/** The instance status, metrics and log endpoints of a database. */
export function registerInstanceRoutes(app: ApiServer, context: ApiContext): void {
  const { db } = context;

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
    async (request) => {
      const { accountId } = request.principal;
      const row = await ownedDatabase(db, accountId, request.params.id);
      const [account, connection, instance, latestBuild, currentBuild, hasBuild, notes, tally] =
        await Promise.all([
          db
            .selectFrom('accounts')
            .select('plan')
            .where('id', '=', accountId)
            .executeTakeFirstOrThrow(),
          db
            .selectFrom('connections')
            .selectAll()
            .where('id', '=', row.connection_id)
            .executeTakeFirstOrThrow(),
          liveInstanceOf(db, row.id),
          db
            .selectFrom('builds')
            .selectAll()
            .where('database_id', '=', row.id)
            .orderBy('created_at', 'desc')
            .limit(1)
            .executeTakeFirst(),
          row.current_build_id
            ? db
                .selectFrom('builds')
                .select('config_hash')
                .where('id', '=', row.current_build_id)
                .executeTakeFirst()
            : undefined,
          db
            .selectFrom('builds')
            .select('id')
            .where('database_id', '=', row.id)
            .where('status', '=', 'succeeded')
            .limit(1)
            .executeTakeFirst(),
          db
            .selectFrom('notifications')
            .selectAll()
            .where('database_id', '=', row.id)
            .where('seen_at', 'is', null)
            .where('skipped', '=', false)
            .orderBy('created_at', 'desc')
            .orderBy('seq', 'desc')
            .execute(),
          db
            .selectFrom('notifications')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('database_id', '=', row.id)
            .where('seen_at', 'is', null)
            .where('skipped', '=', true)
            .executeTakeFirstOrThrow(),
        ]);
      const plan = asPlan(account.plan);
      const limits = planLimits(plan);
      const wanted = settingsOf(row);
      const deployed = row.deployed_config;
      const configHash = currentBuild?.config_hash;
      // The schema config is left out: it can be large, and GET /databases/{id} has it.
      const { schemaConfig: _schemaConfig, ...database } = databaseResource(row);
      const hasPendingChanges =
        deployed !== null &&
        (!sameSettings(deployed, wanted) ||
          (configHash != null && configHash !== databaseConfigHash(row)));
      return {
        database: {
          ...database,
          goal: row.goal
            ? {
                action: row.goal.action,
                requestedAt: row.goal.requestedAt,
                claimed: row.goal.claimedAt !== undefined,
              }
            : null,
        },
        connection: {
          id: connection.id,
          name: connection.name,
          backend: connection.backend,
          minSyncInterval: limits.pollModeMinSyncInterval,
          allowedSyncModes: ['cdc', 'poll'],
          availableSchemas: await availableSchemas(connection, context.secrets, row.source_schema),
        },
        deployedInstanceConfig: deployed ?? wanted,
        hasPendingChanges,
        instance: instance ? instanceResource(instance) : null,
        latestBuild: latestBuild ? buildResource(latestBuild) : null,
        allowedActions: allowedActions({
          status: row.status as DatabaseStatus,
          goal: row.goal,
          plan,
          hasBuild: hasBuild !== undefined,
          replicationPaused: row.replication_paused,
        }),
        notifications: notes.map((note) => ({
          id: note.id,
          eventType: note.event_type,
          message: note.message,
          detail: note.detail,
          severity: note.severity as 'success' | 'error' | 'info',
          sticky: note.sticky,
          createdAt: iso(note.created_at),
        })),
        unseenCount: notes.length,
        skippedCount: Number(tally.n),
        computeUnitsLimit: limits.computeUnits,
        maxInstanceSize: limits.maxInstanceSize,
        pollModeMinSyncInterval: limits.pollModeMinSyncInterval,
        dataTransferGBPerMonth: limits.dataTransferGBPerMonth,
      };
    },
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
    async (request) => {
      const row = await ownedDatabase(db, request.principal.accountId, request.params.id);
      const instance = await liveInstanceOf(db, row.id);
      if (!instance?.endpoint_url) {
        throw new ApiError('instance_unavailable', 'The database has no running instance.');
      }
      const client = new InstanceClient(
        instance.endpoint_url,
        context.secrets.openBuffer(row.key_secret_enc),
        instance.control_key_id,
      );
      let text: string;
      try {
        const response = await client.call('GET', '/metrics');
        if (response.status !== 200) throw new Error(`status ${response.status}`);
        text = response.text;
      } catch (error) {
        request.log.warn({ reason: (error as Error).message }, 'instance metrics unavailable');
        throw new ApiError(
          'instance_unavailable',
          'The instance did not answer; retry when its status is running.',
        );
      }
      return parseInstanceMetrics(text);
    },
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
    async (request) => {
      const row = await ownedDatabase(db, request.principal.accountId, request.params.id);
      const given = request.query.nextToken ?? null;
      const deployment = await db
        .selectFrom('deployments')
        .select(['id', 'finished_at'])
        .where('database_id', '=', row.id)
        .orderBy('started_at', 'desc')
        .limit(1)
        .executeTakeFirst();
      if (!deployment) return { lines: [], nextToken: given, done: true };
      let query = db
        .selectFrom('log_lines')
        .select(['id', 'ts', 'message'])
        .where('stream_id', '=', deployment.id)
        .orderBy('id')
        .limit(LOG_PAGE);
      if (given !== null) query = query.where('id', '>', given);
      const lines = await query.execute();
      const last = lines.at(-1);
      return {
        lines: lines.map((line) => ({ message: line.message, timestamp: Number(line.ts) })),
        nextToken: last ? String(last.id) : given,
        done: deployment.finished_at !== null && lines.length < LOG_PAGE,
      };
    },
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
    async (request) => {
      const row = await ownedDatabase(db, request.principal.accountId, request.params.id);
      const instance = await liveInstanceOf(db, row.id);
      if (!instance) return { lines: [], nextToken: null, done: true };
      try {
        const chunk = await context.driver.readLogs(instance.id, request.query.nextToken);
        return { lines: chunk.lines, nextToken: chunk.nextToken, done: false };
      } catch (error) {
        request.log.warn({ reason: (error as Error).message }, 'instance logs unavailable');
        throw new ApiError('instance_unavailable', "The instance's logs cannot be read now.");
      }
    },
  );
}

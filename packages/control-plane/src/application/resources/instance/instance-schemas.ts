import type { Selectable } from 'kysely';
import { Type } from 'typebox';
import type { InstanceTable } from '../../../adapters/store/schema.ts';
import { ACTIONS } from '../../../domain/database-lifecycle.ts';
import { BuildSchema } from '../builds/builds-schemas.ts';
import { DateTime, iso, Uuid } from '../common-schemas.ts';
import { PendingChanges } from '../databases/databases-schemas.ts';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(
  schema: T,
  options: { description?: string } = {},
) => Type.Union([schema, Type.Null()], options);

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
    replicas: Type.Integer({
      description: 'Read replicas the next deploy runs; resize changes it.',
    }),
    syncMode: Type.String(),
    syncInterval: Type.Number(),
    syncModeReason: Nullable(
      Type.String({ description: 'Why Replix chose the sync mode; null when the user chose it.' }),
    ),
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
    endpointUrl: Nullable(
      Type.String({
        description:
          "The database's endpoint, the same for its whole life (null before its first deploy); 503 `service_unavailable` while no instance serves it.",
      }),
    ),
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
    replicas: Type.Integer({ description: 'Read replicas the instance runs.' }),
  },
  {
    $id: 'DeployedInstanceConfig',
    description:
      'The settings the live instance runs with; before the first deploy, the settings the next deploy will use.',
  },
);

const HealthStatus = Type.Union([
  Type.Literal('ok'),
  Type.Literal('degraded'),
  Type.Literal('unreachable'),
  Type.Literal('cap_exceeded'),
]);

const ReplicaStatus = Type.Object(
  {
    ordinal: Type.Integer({ description: '0 … replicaCount − 1, kept across restarts.' }),
    healthStatus: Nullable(HealthStatus, {
      description: 'At the last health check; null before the first.',
    }),
    snapshotAgeMs: Nullable(Type.Integer()),
    swapCount: Nullable(Type.Integer()),
  },
  { $id: 'ReplicaStatus', description: 'One read replica of the instance.' },
);

const InstanceSchema = Type.Object(
  {
    id: Uuid,
    databaseId: Uuid,
    buildId: Type.Optional(Nullable(Uuid)),
    containerServiceArn: Type.Optional(
      Nullable(Type.String({ description: "The driver's reference (process: `process:<pid>`)." })),
    ),
    endpointUrl: Type.Optional(
      Nullable(
        Type.String({
          description:
            "The database's endpoint, where queries go: the same for every instance of the database.",
        }),
      ),
    ),
    healthStatus: Type.Optional(
      Nullable(HealthStatus, {
        description:
          'The instance as a whole: `ok` when every replica is, `degraded` when some replicas serve and some do not, `unreachable` when none answers, `cap_exceeded` when any is over its memory cap.',
      }),
    ),
    snapshotAgeMs: Type.Optional(Nullable(Type.Integer())),
    swapCount: Type.Optional(Nullable(Type.Integer())),
    rowCounts: Type.Optional(
      Type.Record(Type.String(), Type.Integer(), {
        description: 'Rows per table at the last health check; absent before the first.',
      }),
    ),
    lastHealthCheck: Type.Optional(Nullable(DateTime)),
    replicaCount: Type.Integer({ description: 'Read replicas the instance runs.' }),
    replicas: Type.Array(ReplicaStatus, { description: 'Each replica by ordinal.' }),
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

export const InstanceStatus = Type.Object(
  {
    database: InstanceDatabase,
    connection: InstanceConnection,
    deployedInstanceConfig: DeployedInstanceConfigSchema,
    hasPendingChanges: Type.Boolean({
      description:
        "The database's settings differ from the deployed ones, or its schema config from the current build's; false before the first deploy.",
    }),
    pendingChanges: PendingChanges,
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

export const InstanceMetrics = Type.Object(
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

type HealthStatusValue = 'ok' | 'degraded' | 'unreachable' | 'cap_exceeded';

/**
 * Each replica of the instance by ordinal, with its last health reading (null before one); an
 * instance recorded before replicas is one replica whose reading is the instance's.
 */
function replicaStatuses(row: Selectable<InstanceTable>) {
  const count = Math.max(1, row.replica_urls?.length ?? 1);
  const readings = row.replica_health ?? [
    {
      ordinal: 0,
      healthStatus: row.health_status,
      snapshotAgeMs: row.snapshot_age_ms,
      swapCount: row.swap_count,
    },
  ];
  return Array.from({ length: count }, (_, ordinal) => {
    const reading = readings.find((each) => each.ordinal === ordinal);
    return {
      ordinal,
      healthStatus: (reading?.healthStatus ?? null) as HealthStatusValue | null,
      snapshotAgeMs: reading?.snapshotAgeMs ?? null,
      swapCount: reading?.swapCount ?? null,
    };
  });
}

/** The API view of an instance row (spec §2 Instance, with its replicas). */
export function instanceResource(row: Selectable<InstanceTable>) {
  const replicas = replicaStatuses(row);
  return {
    id: row.id,
    databaseId: row.database_id,
    buildId: row.build_id,
    containerServiceArn: row.container_ref,
    endpointUrl: row.endpoint_url,
    healthStatus: row.health_status as HealthStatusValue | null,
    snapshotAgeMs: row.snapshot_age_ms,
    swapCount: row.swap_count,
    ...(row.row_counts ? { rowCounts: row.row_counts } : {}),
    lastHealthCheck: iso(row.last_health_check),
    replicaCount: replicas.length,
    replicas,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

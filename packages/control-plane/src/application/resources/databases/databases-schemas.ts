import { schemaConfigJsonSchema } from '@replix/engine';
import type { Selectable } from 'kysely';
import { type Static, Type } from 'typebox';
import type { DatabaseTable } from '../../../adapters/store/schema.ts';
import { DATABASE_STATUSES } from '../../../domain/database-lifecycle.ts';
import { LOG_LEVELS, SYNC_MODES } from '../../../domain/database-settings.ts';
import { INSTANCE_SIZE_NAMES } from '../../../domain/plans.ts';
import { REGIONS } from '../../../domain/regions.ts';
import { DateTime, iso, Uuid } from '../common-schemas.ts';
import { documentedAs } from '../documented-schemas.ts';

/** A database record in the API (GET/POST/PATCH /databases). */
export const Database = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    connectionId: Uuid,
    sourceSchema: Type.String({
      description:
        'The source database (MySQL), or `<database>[/<schema>]` (PostgreSQL, SQL Server).',
    }),
    schemaConfig: documentedAs(
      Type.Record(Type.String(), Type.Unknown()),
      schemaConfigJsonSchema('The schema config as given (docs/schema-config.md).'),
    ),
    region: Type.String(),
    instanceSize: Type.String(),
    replicas: Type.Integer({
      description: 'Read replicas each instance runs behind the endpoint; changed by resize.',
    }),
    syncMode: Type.String(),
    syncInterval: Type.Number({ description: 'Seconds.' }),
    syncModeReason: Type.Union([Type.String(), Type.Null()], {
      description:
        'Why Replix chose the sync mode, e.g. poll because the source cannot do change data capture; null when the user chose it.',
    }),
    logLevel: Type.String(),
    safetyNet: Type.Number({ description: 'Seconds between safety-net reloads; 0 for none.' }),
    status: Type.Enum([...DATABASE_STATUSES]),
    replicationPaused: Type.Boolean(),
    currentBuildId: Type.Union([Uuid, Type.Null()]),
    lastError: Type.Union([Type.String(), Type.Null()]),
    endpointUrl: Type.Union([Type.String(), Type.Null()], {
      description:
        'Where the database answers queries (the instance query API), the same for its whole life: across redeploys, resizes, pause and resume. Null until its first deploy.',
    }),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { $id: 'Database', description: 'A schema config bound to a source connection.' },
);

// Optional before documentedAs: `Type.Optional` makes a new schema, which would not be the one
// the document knows.
const SchemaConfigInput = documentedAs(
  Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  schemaConfigJsonSchema(
    'The schema config (docs/schema-config.md); validated, 400 invalid_schema_config names the key path.',
  ),
);
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

/** 1 … the plan's maxReplicas (16 is the most any launch accepts; the plan check says more). */
const Replicas = Type.Integer({
  minimum: 1,
  maximum: 16,
  description:
    'Read replicas: whole instances of the database’s size behind its one endpoint, each following the source itself; at most the plan’s maxReplicas, each counting its size’s compute units.',
});

export const CreateDatabaseBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    connectionId: Uuid,
    sourceSchema: Type.String({ minLength: 1, maxLength: 255 }),
    schemaConfig: SchemaConfigInput,
    region: Type.Optional(
      Type.Enum([...REGIONS], { description: "Default: the connection's defaultRegion." }),
    ),
    instanceSize: Type.Optional(
      Type.Enum([...INSTANCE_SIZE_NAMES], { description: 'Default xs.' }),
    ),
    replicas: Type.Optional(Replicas),
    syncMode: Type.Optional(
      Type.Enum([...SYNC_MODES], { description: "Default: the schema config's sync.mode (cdc)." }),
    ),
    syncInterval: Type.Optional(SyncInterval),
    logLevel: Type.Optional(Type.Enum([...LOG_LEVELS], { description: 'Default info.' })),
    safetyNet: Type.Optional(SafetyNet),
  },
  { $id: 'CreateDatabaseBody', additionalProperties: false },
);
export type CreateDatabaseBody = Static<typeof CreateDatabaseBody>;

export const UpdateDatabaseBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    sourceSchema: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    schemaConfig: SchemaConfigInput,
    syncMode: Type.Optional(SyncMode),
    syncInterval: Type.Optional(SyncInterval),
    logLevel: Type.Optional(LogLevel),
    safetyNet: Type.Optional(SafetyNet),
  },
  {
    $id: 'UpdateDatabaseBody',
    additionalProperties: false,
    description:
      'Changes become pending changes: the running instance keeps its settings until a rebuild or reconfigure. Size and replicas: the resize action; region and connection cannot change.',
  },
);
export type UpdateDatabaseBody = Static<typeof UpdateDatabaseBody>;

export const PendingChanges = Type.Array(
  Type.Object(
    {
      setting: Type.String({
        description:
          'The database field that differs from what the instance runs (`instanceSize`, `replicas`, `syncMode`, `syncInterval`, `logLevel`, `safetyNet`), or `schema`: the source schema or schema config differ from what the current build compiled.',
      }),
      appliedBy: Type.Union([Type.Literal('reconfigure'), Type.Literal('rebuild')], {
        description: 'The action that applies it: reconfigure for settings, rebuild for `schema`.',
      }),
    },
    { $id: 'PendingChange' },
  ),
  {
    description:
      'What differs from the running instance and which action applies each; empty before the first deploy.',
  },
);

export const ActionAccepted = Type.Object(
  {
    status: Type.String({
      description:
        'The database status after the call: the transitional status of a queued action (`building`, `deploying`, `pausing`, `terminating`, `deleting`), or the restored one after cancel-goal.',
    }),
  },
  { $id: 'ActionAccepted' },
);

export const ReconfigureAccepted = Type.Object(
  {
    ...ActionAccepted.properties,
    notApplied: Type.Array(PendingChanges.items, {
      description:
        'Pending changes this reconfigure leaves pending: a changed source schema or schema config (`schema`), which only a rebuild applies. Empty when it applies everything.',
    }),
  },
  { $id: 'ReconfigureAccepted' },
);

/** A PATCH's answer: the database, and what now differs from its running instance. */
export const UpdatedDatabase = Type.Object(
  { ...Database.properties, pendingChanges: PendingChanges },
  { $id: 'UpdatedDatabase' },
);

export const ReloadAccepted = Type.Object(
  {
    status: Type.Literal('running'),
    reloading: Type.Literal(true, {
      description: 'The instance started a full reload; it swaps the snapshot in when done.',
    }),
  },
  { $id: 'ReloadAccepted' },
);

export const ReplicationState = Type.Object(
  { replication_paused: Type.Boolean() },
  { $id: 'ReplicationState' },
);

export const ResizeBody = Type.Object(
  {
    instanceSize: Type.Optional(
      Type.Union(
        INSTANCE_SIZE_NAMES.map((size) => Type.Literal(size)),
        { description: 'The new size; at most the plan’s maxInstanceSize.' },
      ),
    ),
    replicas: Type.Optional(Replicas),
  },
  {
    additionalProperties: false,
    description:
      'The new size, replica count, or both (at least one); the change is a redeploy with zero downtime.',
  },
);

export const RedeployBody = Type.Object(
  {
    buildId: Type.String({ format: 'uuid', description: 'A succeeded build of this database.' }),
  },
  { additionalProperties: false },
);

/** The API view of a database row; the key secret and internal bookkeeping stay out. */
export function databaseResource(row: Selectable<DatabaseTable>) {
  return {
    id: row.id,
    name: row.name,
    connectionId: row.connection_id,
    sourceSchema: row.source_schema,
    schemaConfig: row.schema_config,
    region: row.region,
    instanceSize: row.instance_size,
    replicas: row.replicas,
    syncMode: row.sync_mode,
    syncInterval: row.sync_interval,
    syncModeReason: row.sync_mode_reason,
    logLevel: row.log_level,
    safetyNet: row.safety_net,
    status: row.status as (typeof DATABASE_STATUSES)[number],
    replicationPaused: row.replication_paused,
    currentBuildId: row.current_build_id,
    lastError: row.last_error,
    endpointUrl: row.endpoint_url,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

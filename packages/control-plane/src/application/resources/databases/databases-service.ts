import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { type SourceBackend, sourceDialect } from '@replix/sources';
import type { Selectable } from 'kysely';
import { recordAudit } from '../../../adapters/events/audit-log.ts';
import { accountPlan } from '../../../adapters/store/account-plan.ts';
import { lockAccount } from '../../../adapters/store/account-store.ts';
import {
  countLiveDatabases,
  insertDatabaseRow,
  listDatabaseRows,
  updateLiveDatabaseRow,
} from '../../../adapters/store/database-store.ts';
import { fieldChanges } from '../../../adapters/store/field-changes.ts';
import type { ConnectionTable, DatabaseTable } from '../../../adapters/store/schema.ts';
import type { SecretBox } from '../../../adapters/store/secret-box.ts';
import { ownedConnection, ownedDatabase } from '../../../adapters/store/tenancy.ts';
import type { ApiContext } from '../../../api/context.ts';
import { validSchemaConfig } from '../../../domain/database-settings.ts';
import { ApiError } from '../../../domain/errors.ts';
import {
  assertConfigPollInterval,
  assertDatabaseCount,
  assertInstanceSize,
  assertPollInterval,
  assertRegion,
  assertReplicas,
} from '../../../domain/plan-enforcement.ts';
import type { InstanceSize } from '../../../domain/plans.ts';
import { splitSourceSchema } from '../../../domain/source-schema-name.ts';
import { sourceReadiness } from '../../source-access/source-readiness.ts';
import { readSourceSchema } from '../../source-access/source-schema-read.ts';
import type { TestConnectionResult } from '../../source-access/test-connection.ts';
import {
  backendOfConnection,
  connectionOfDatabase,
  lockLiveConnection,
} from './databases-queries.ts';
import {
  type CreateDatabaseBody,
  databaseResource,
  type UpdateDatabaseBody,
} from './databases-schemas.ts';
import { pendingChangesOf } from './pending-changes.ts';

type Context = Pick<ApiContext, 'db' | 'secrets' | 'config'>;

export async function listDatabases({ db }: Context, accountId: string) {
  return (await listDatabaseRows(db, accountId)).map(databaseResource);
}

export async function getDatabase({ db }: Context, accountId: string, id: string) {
  return databaseResource(await ownedDatabase(db, accountId, id));
}

/**
 * Creates a draft database on one of the account's connections. The schema config is
 * validated, the region, size, sync interval and database count checked against the plan; the
 * defaults come from the connection and the schema config.
 */
export async function createDatabase(
  { db, secrets, config: settings }: Context,
  accountId: string,
  body: CreateDatabaseBody,
) {
  const connection = await ownedConnection(db, accountId, body.connectionId);
  const schemaConfig = body.schemaConfig ?? {};
  const config = validSchemaConfig(schemaConfig, connection.backend as SourceBackend);
  const plan = await accountPlan(db, accountId, settings.minPollInterval);
  const { limits } = plan;
  const region = body.region ?? connection.default_region;
  assertRegion(plan, region);
  const instanceSize: InstanceSize = body.instanceSize ?? 'xs';
  assertInstanceSize(plan, instanceSize);
  const replicas = body.replicas ?? 1;
  assertReplicas(plan, replicas);
  // Neither the body nor the config chose a sync mode: CDC where the source can do it.
  const chosenMode = body.syncMode ?? explicitSyncMode(schemaConfig);
  const answer = await sourceAnswer(connection, secrets, body.sourceSchema);
  assertSourceHasSchema(connection.backend, body.sourceSchema, answer);
  const cdcProblem =
    chosenMode === undefined ? cdcUnavailableReason(connection.backend, answer) : undefined;
  const syncMode = chosenMode ?? (cdcProblem ? 'poll' : config.sync.mode);
  const configInterval = Math.max(1, Math.round(config.sync.interval));
  if (body.syncInterval === undefined && syncMode === 'poll') {
    // A config written for a faster plan is refused by name, not slowed down in silence.
    assertConfigPollInterval(plan, explicitSyncInterval(schemaConfig));
  }
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
    await lockAccount(tx, accountId);
    if (!(await lockLiveConnection(tx, connection.id))) {
      throw new ApiError('not_found', 'Connection not found.');
    }
    assertDatabaseCount(plan, await countLiveDatabases(tx, accountId));
    const inserted = await insertDatabaseRow(tx, {
      id,
      account_id: accountId,
      connection_id: connection.id,
      name: body.name,
      source_schema: body.sourceSchema,
      schema_config: JSON.stringify(schemaConfig),
      region,
      instance_size: instanceSize,
      replicas,
      sync_mode: syncMode,
      sync_interval: syncInterval,
      sync_mode_reason: cdcProblem ?? null,
      log_level: body.logLevel ?? 'info',
      safety_net: body.safetyNet ?? Math.round(config.sync.safety_net),
      status: 'draft',
      goal: null,
      key_secret_enc: secrets.seal(randomBytes(32)),
      created_at: now,
      updated_at: now,
    });
    await recordAudit(tx, {
      accountId,
      databaseId: id,
      entityType: 'database',
      entityId: id,
      eventType: 'database.created',
      payload: { name: body.name, connectionId: connection.id, region, instanceSize, replicas },
    });
    return inserted;
  });
  return databaseResource(row);
}

/** The `sync.interval` the schema config gives itself, or undefined (the default applies). */
function explicitSyncInterval(schemaConfig: Record<string, unknown>): number | undefined {
  const sync = schemaConfig.sync;
  if (typeof sync !== 'object' || sync === null) return undefined;
  const interval = (sync as Record<string, unknown>).interval;
  return typeof interval === 'number' ? interval : undefined;
}

/** The `sync.mode` a schema config sets itself, if it does. */
function explicitSyncMode(schemaConfig: Record<string, unknown>): 'cdc' | 'poll' | undefined {
  const sync = schemaConfig.sync;
  if (typeof sync !== 'object' || sync === null) return undefined;
  const mode = (sync as Record<string, unknown>).mode;
  return mode === 'cdc' || mode === 'poll' ? mode : undefined;
}

/** How long creating a database waits for the source's answer before going on without it. */
const READINESS_TIMEOUT_MS = 5000;

/**
 * The connection test for the database about to be created or changed, or undefined when the
 * source does not answer in time (the deploy will say what is wrong then).
 */
function sourceAnswer(
  connection: Selectable<ConnectionTable>,
  secrets: SecretBox,
  sourceSchema: string,
): Promise<TestConnectionResult | undefined> {
  return Promise.race([
    sourceReadiness(connection, secrets, sourceSchema).catch(() => undefined),
    sleep(READINESS_TIMEOUT_MS, undefined, { ref: false }),
  ]);
}

/** At most this many of the source's names are listed in a refusal. */
const LISTED_NAMES = 10;

/**
 * Refuses a `sourceSchema` the source answered it does not have (issue 31: it used to be
 * accepted, and only the provision failed), naming those it has. A source that did not answer
 * refuses nothing: it may be down for now, and the deploy reports it.
 */
function assertSourceHasSchema(
  backend: string,
  sourceSchema: string,
  answer: TestConnectionResult | undefined,
): void {
  const { database } = splitSourceSchema(backend, sourceSchema);
  const missing = () =>
    `body.sourceSchema names the database "${database}", which the source does not have or this user cannot open`;
  if (answer?.ok === false && answer.failedCheck === 'database') {
    throw new ApiError('validation_failed', `${missing()}.`);
  }
  const names = answer?.ok ? (answer.availableSchemas ?? []) : [];
  if (names.length === 0 || names.includes(database)) return;
  const listed = names.slice(0, LISTED_NAMES).map((name) => `"${name}"`);
  const more = names.length > LISTED_NAMES ? ` and ${names.length - LISTED_NAMES} more` : '';
  throw new ApiError(
    'validation_failed',
    `${missing()}: it has ${listed.join(', ')}${more} (the connection test, POST /v1/connections/{id}/test, lists them as availableSchemas).`,
  );
}

/**
 * Why the source cannot do change data capture (the connection test's verdict), or undefined
 * when it can, or did not answer in time (the deploy will say so then).
 */
function cdcUnavailableReason(
  backend: string,
  answer: TestConnectionResult | undefined,
): string | undefined {
  const changeLog = answer?.ok ? answer.binlog : undefined;
  if (!changeLog || changeLog.ready) return undefined;
  const logName = sourceDialect(backend).changeLog.name.toLowerCase();
  const why = changeLog.logBin
    ? `the source is not set up for change data capture (${changeLog.issues.join(' ')})`
    : `the source’s ${logName} is off`;
  return `Poll: ${why}, so CDC is not available.`;
}

/** Changes settings; they become pending changes until a rebuild or reconfigure. */
export async function updateDatabase(
  { db, secrets, config: settings }: Context,
  accountId: string,
  id: string,
  body: UpdateDatabaseBody,
) {
  const current = await ownedDatabase(db, accountId, id);
  const { changes, changed, set } = fieldChanges<DatabaseTable>();
  if (body.schemaConfig !== undefined) {
    const backend = await backendOfConnection(db, current.connection_id);
    validSchemaConfig(body.schemaConfig, backend as SourceBackend);
    set('schemaConfig', 'schema_config', JSON.stringify(body.schemaConfig));
  }
  if (body.name !== undefined) set('name', 'name', body.name);
  if (body.sourceSchema !== undefined && body.sourceSchema !== current.source_schema) {
    const connection = await connectionOfDatabase(db, accountId, current);
    const answer = await sourceAnswer(connection, secrets, body.sourceSchema);
    assertSourceHasSchema(connection.backend, body.sourceSchema, answer);
  }
  if (body.sourceSchema !== undefined) set('sourceSchema', 'source_schema', body.sourceSchema);
  if (body.syncMode !== undefined) {
    set('syncMode', 'sync_mode', body.syncMode);
    // The user has chosen: Replix's reason for its own choice no longer applies.
    changes.sync_mode_reason = null;
  }
  if (body.logLevel !== undefined) set('logLevel', 'log_level', body.logLevel);
  if (body.safetyNet !== undefined) set('safetyNet', 'safety_net', body.safetyNet);
  if (body.syncMode !== undefined || body.syncInterval !== undefined) {
    const plan = await accountPlan(db, accountId, settings.minPollInterval);
    const syncMode = body.syncMode ?? current.sync_mode;
    // Switching to poll without an interval: the plan's fastest poll, not CDC's 1 s.
    const syncInterval =
      body.syncInterval ??
      (syncMode === 'poll'
        ? Math.max(current.sync_interval, plan.limits.pollModeMinSyncInterval)
        : current.sync_interval);
    assertPollInterval(plan, syncMode, syncInterval);
    if (syncInterval !== current.sync_interval || body.syncInterval !== undefined) {
      set('syncInterval', 'sync_interval', syncInterval);
    }
  }
  const row = await db.transaction().execute(async (tx) => {
    const updated = await updateLiveDatabaseRow(tx, current.id, changes);
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
  return { ...databaseResource(row), pendingChanges: await pendingChangesOf(db, row) };
}

/** The database's source schema, read live through its connection. */
export async function readDatabaseSchema({ db, secrets }: Context, accountId: string, id: string) {
  const database = await ownedDatabase(db, accountId, id);
  const connection = await connectionOfDatabase(db, accountId, database);
  return readSourceSchema(connection, secrets, database.source_schema);
}

import { InstanceClient, parseInstanceMetrics } from '@replix/instance-protocol';
import type { BaseLogger } from 'pino';
import { combineReplicaMetrics } from '../../../adapters/drivers/combine-replica-metrics.ts';
import { replicaUrlsOf } from '../../../adapters/drivers/replica-urls.ts';
import {
  buildConfigHash,
  hasSucceededBuild,
  latestBuildOf,
} from '../../../adapters/store/build-store.ts';
import { connectionById } from '../../../adapters/store/connection-store.ts';
import { latestDeploymentOf } from '../../../adapters/store/deployment-store.ts';
import { liveInstanceOf } from '../../../adapters/store/instance-store.ts';
import { logLinesAfter } from '../../../adapters/store/log-lines.ts';
import { ownedDatabase } from '../../../adapters/store/tenancy.ts';
import type { ApiContext } from '../../../api/context.ts';
import { allowedActions } from '../../../domain/allowed-actions.ts';
import type { DatabaseStatus } from '../../../domain/database-lifecycle.ts';
import { deployedConfigOf } from '../../../domain/database-settings.ts';
import { ApiError } from '../../../domain/errors.ts';
import { asPlan, planLimits, withPollFloor } from '../../../domain/plans.ts';
import { availableSchemas } from '../../source-access/available-schemas.ts';
import { buildResource } from '../builds/builds-schemas.ts';
import { iso } from '../common-schemas.ts';
import { planNameOf } from '../databases/databases-queries.ts';
import { databaseResource } from '../databases/databases-schemas.ts';
import { pendingChanges } from '../databases/pending-changes.ts';
import { unseenNotifications } from '../notifications/notifications-queries.ts';
import { skippedNotificationCount } from './instance-queries.ts';
import { instanceResource } from './instance-schemas.ts';

/** How many infra log lines one response carries at most. */
const LOG_PAGE = 500;

type Context = Pick<ApiContext, 'db' | 'secrets' | 'driver' | 'config'>;
/** The request's logger: a failure to reach the instance is logged with the request. */
type RequestLog = Pick<BaseLogger, 'warn'>;

/** The database's instance status: the dashboard's polling endpoint. */
export async function instanceStatus(context: Context, accountId: string, id: string) {
  const { db } = context;
  const row = await ownedDatabase(db, accountId, id);
  const [planName, connection, instance, latestBuild, currentBuild, hasBuild, notes, skipped] =
    await Promise.all([
      planNameOf(db, accountId),
      connectionById(db, row.connection_id).then((connection) => {
        if (!connection) throw new Error("The database's connection is not in the store.");
        return connection;
      }),
      liveInstanceOf(db, row.id),
      latestBuildOf(db, row.id),
      row.current_build_id ? buildConfigHash(db, row.current_build_id) : undefined,
      hasSucceededBuild(db, row.id),
      unseenNotifications(db, row.id),
      skippedNotificationCount(db, row.id),
    ]);
  const plan = asPlan(planName);
  const limits = withPollFloor(planLimits(plan), context.config.minPollInterval);
  const deployed = row.deployed_config;
  // The schema config is left out: it can be large, and GET /databases/{id} has it.
  const { schemaConfig: _schemaConfig, ...database } = databaseResource(row);
  const pending = pendingChanges(row, currentBuild?.config_hash);
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
    // A config recorded before replicas ran one.
    deployedInstanceConfig: {
      replicas: 1,
      ...(deployed ?? { ...deployedConfigOf(row), instanceSize: row.instance_size }),
    },
    hasPendingChanges: pending.length > 0,
    pendingChanges: pending,
    instance: instance ? instanceResource(instance) : null,
    latestBuild: latestBuild ? buildResource(latestBuild) : null,
    allowedActions: allowedActions({
      status: row.status as DatabaseStatus,
      goal: row.goal,
      plan,
      hasBuild,
      hasDeployment: row.current_build_id !== null,
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
    skippedCount: skipped,
    computeUnitsLimit: limits.computeUnits,
    maxInstanceSize: limits.maxInstanceSize,
    pollModeMinSyncInterval: limits.pollModeMinSyncInterval,
    dataTransferGBPerMonth: limits.dataTransferGBPerMonth,
  };
}

/**
 * The running instance's metrics, read from its replicas' Prometheus endpoints and combined
 * (`combineReplicaMetrics`: counts summed); 503 when no replica answers.
 */
export async function instanceMetrics(
  context: Context,
  accountId: string,
  id: string,
  log: RequestLog,
) {
  const { db } = context;
  const row = await ownedDatabase(db, accountId, id);
  const instance = await liveInstanceOf(db, row.id);
  const urls = instance ? replicaUrlsOf(instance) : [];
  if (!instance || urls.length === 0) {
    throw new ApiError('instance_unavailable', 'The database has no running instance.');
  }
  const secret = context.secrets.openBuffer(row.key_secret_enc);
  const answers = await Promise.all(
    urls.map(async (url) => {
      try {
        const client = new InstanceClient(url, secret, instance.control_key_id);
        const response = await client.call('GET', '/metrics');
        if (response.status !== 200) throw new Error(`status ${response.status}`);
        return parseInstanceMetrics(response.text);
      } catch (error) {
        log.warn({ reason: (error as Error).message }, 'instance metrics unavailable');
        return undefined;
      }
    }),
  );
  const reports = answers.filter((report) => report !== undefined);
  if (reports.length === 0) {
    throw new ApiError(
      'instance_unavailable',
      'The instance did not answer; retry when its status is running.',
    );
  }
  return combineReplicaMetrics(reports);
}

/** A page of the latest deploy's log after `nextToken`. */
export async function infraLogs(
  { db }: Context,
  accountId: string,
  id: string,
  nextToken: string | undefined,
) {
  const row = await ownedDatabase(db, accountId, id);
  const given = nextToken ?? null;
  const deployment = await latestDeploymentOf(db, row.id);
  if (!deployment) return { lines: [], nextToken: given, done: true };
  const lines = await logLinesAfter(db, deployment.id, given, LOG_PAGE);
  const last = lines.at(-1);
  return {
    lines: lines.map((line) => ({ message: line.message, timestamp: Number(line.ts) })),
    nextToken: last ? String(last.id) : given,
    done: deployment.finished_at !== null && lines.length < LOG_PAGE,
  };
}

/** The running instance's recent log lines after `nextToken`: a live tail. */
export async function instanceLogs(
  context: Context,
  accountId: string,
  id: string,
  nextToken: string | undefined,
  log: RequestLog,
) {
  const { db } = context;
  const row = await ownedDatabase(db, accountId, id);
  const instance = await liveInstanceOf(db, row.id);
  if (!instance) return { lines: [], nextToken: null, done: true };
  try {
    const chunk = await context.driver.readLogs(instance.id, nextToken);
    return { lines: chunk.lines, nextToken: chunk.nextToken, done: false };
  } catch (error) {
    log.warn({ reason: (error as Error).message }, 'instance logs unavailable');
    throw new ApiError('instance_unavailable', "The instance's logs cannot be read now.");
  }
}

import { setTimeout as sleep } from 'node:timers/promises';
import { InstanceClient, parseInstanceMetrics } from '@replix/instance-protocol';
import { combineReplicaMetrics } from '../../adapters/drivers/combine-replica-metrics.ts';
import { monitoredInstances, recordHealthReading } from '../../adapters/store/instance-store.ts';
import {
  METRICS_SAMPLE_INTERVAL_MS,
  pruneMetricsSamples,
  recordMetricsSample,
} from '../../adapters/store/metrics-samples.ts';
import type { ReplicaHealth } from '../../adapters/store/schema.ts';
import type { LoopPulse } from '../../roles/loop-pulse.ts';
import type { RoleContext, RunningRole } from '../../roles/role.ts';
import { classifyHealth, type HealthDetail, type HealthReading } from './classify-health.ts';
import { combineReplicaHealth } from './combine-replica-health.ts';
import { recordReplicationPaused } from './record-replication-paused.ts';

interface Checked {
  readonly instanceId: string;
  readonly previous: string | null;
  readonly accountId: string;
  readonly databaseId: string;
  readonly databaseName: string;
  readonly replicationPaused: boolean;
}

/**
 * The health-monitor role: every `healthIntervalMs` it asks each replica of each live instance
 * of a `running` database for `/health/detail` and records each replica's health and the
 * instance's (`combineReplicaHealth`: `degraded` when only some replicas serve), snapshot age,
 * swap count and row counts. Leaving `ok` emits `instance.unhealthy`; coming back to `ok` from an unhealthy
 * status emits `instance.recovered`; the first reading of an instance emits nothing. A
 * replication pause state that differs from the store's (paused or resumed at the instance
 * with an admin key) is recorded, so the two always agree within a period.
 *
 * An instance with no health yet (just deployed, or stopped by a graceful shutdown and started
 * again: `markHealthUnknown`) that does not answer is still starting, not unhealthy: its
 * health stays unknown until it first answers, so a normal restart raises no alarm.
 *
 * Every `METRICS_SAMPLE_INTERVAL_MS` it also keeps a reading of each answering instance's
 * metrics, its answering replicas' combined (`combine-replica-metrics.ts`, `metrics-samples.ts`),
 * and drops the readings past the retention. Each pass reports to `pulse` (the process's probes).
 */
export async function startHealthMonitor(
  context: RoleContext,
  pulse?: LoopPulse,
): Promise<RunningRole> {
  const { db, log } = context;
  const stopping = new AbortController();

  const record = async (
    checked: Checked,
    reading: HealthReading,
    replicaHealth: ReplicaHealth[],
  ) => {
    await db.transaction().execute(async (tx) => {
      if (reading.replicationPaused !== null) {
        await recordReplicationPaused(tx, {
          accountId: checked.accountId,
          databaseId: checked.databaseId,
          storedPaused: checked.replicationPaused,
          observedPaused: reading.replicationPaused,
        });
      }
      const starting = checked.previous === null && reading.health === 'unreachable';
      // Conditional on the status we read: of two monitors, only one reports a transition.
      const recorded = await recordHealthReading(tx, checked.instanceId, checked.previous, {
        healthStatus: starting ? null : reading.health,
        replicaHealth,
        snapshotAgeMs: reading.snapshotAgeMs,
        swapCount: reading.swapCount,
        rowCounts: reading.rowCounts,
      });
      if (!recorded) return;
      const event = {
        accountId: checked.accountId,
        databaseId: checked.databaseId,
        databaseName: checked.databaseName,
      };
      if (checked.previous === 'ok' && reading.health !== 'ok') {
        await context.events.emit(tx, {
          type: 'instance.unhealthy',
          ...event,
          fields: { healthStatus: reading.health },
          message: `${checked.databaseName} is unhealthy: ${reading.health.replace('_', ' ')}.`,
          severity: 'error',
        });
      } else if (
        checked.previous !== null &&
        checked.previous !== 'ok' &&
        reading.health === 'ok'
      ) {
        await context.events.emit(tx, {
          type: 'instance.recovered',
          ...event,
          fields: {},
          message: `${checked.databaseName} is healthy again.`,
          severity: 'success',
        });
      }
    });
  };

  /** When each instance's metrics were last kept, and when old readings were last dropped. */
  const lastSampled = new Map<string, number>();
  let lastPruned = 0;
  /** One reading for the instance: its answering replicas' metrics combined. */
  const sampleMetrics = async (clients: readonly InstanceClient[], row: Checked) => {
    const now = Date.now();
    if (now - (lastSampled.get(row.instanceId) ?? 0) < METRICS_SAMPLE_INTERVAL_MS) return;
    lastSampled.set(row.instanceId, now);
    const responses = await Promise.all(
      clients.map((client) => client.call('GET', '/metrics').catch(() => undefined)),
    );
    const reports = responses.flatMap((response) =>
      response?.status === 200 ? [parseInstanceMetrics(response.text)] : [],
    );
    if (reports.length === 0 || stopping.signal.aborted) return;
    await recordMetricsSample(db, row, combineReplicaMetrics(reports));
  };

  const check = async () => {
    const rows = await monitoredInstances(db);
    await Promise.all(
      rows.map(async (row) => {
        const secret = context.secrets.openBuffer(row.keySecretEnc);
        // Every replica by ordinal; one without an address yet reads as unreachable.
        const urls = row.replicaUrls ?? [row.privateUrl];
        const clients = urls.map((url) =>
          url === null ? null : new InstanceClient(url, secret, row.controlKeyId),
        );
        const readings = await Promise.all(
          clients.map(async (client) =>
            classifyHealth(
              client
                ? await client.json<HealthDetail>('GET', '/health/detail').catch(() => undefined)
                : undefined,
            ),
          ),
        );
        if (stopping.signal.aborted) return;
        const reading = combineReplicaHealth(readings);
        const replicaHealth = readings.map((each, ordinal) => ({
          ordinal,
          healthStatus: each.health,
          snapshotAgeMs: each.snapshotAgeMs,
          swapCount: each.swapCount,
        }));
        await record(row, reading, replicaHealth).catch((error: unknown) =>
          log.warn({ err: error, instanceId: row.instanceId }, 'recording instance health failed'),
        );
        const answering = clients.filter(
          (client, ordinal): client is InstanceClient =>
            client !== null && readings[ordinal]?.health !== 'unreachable',
        );
        if (answering.length === 0) return;
        await sampleMetrics(answering, row).catch((error: unknown) =>
          log.warn({ err: error, instanceId: row.instanceId }, 'keeping instance metrics failed'),
        );
      }),
    );
    // Forget instances no longer live, so the map holds only what runs.
    const live = new Set(rows.map((row) => row.instanceId));
    for (const instanceId of lastSampled.keys())
      if (!live.has(instanceId)) lastSampled.delete(instanceId);
    if (Date.now() - lastPruned >= METRICS_SAMPLE_INTERVAL_MS) {
      lastPruned = Date.now();
      await pruneMetricsSamples(db);
    }
  };

  const loop = (async () => {
    while (!stopping.signal.aborted) {
      try {
        await check();
        pulse?.passed();
      } catch (error) {
        pulse?.failed();
        log.error({ err: error }, 'health check pass failed');
      }
      await sleep(context.config.healthIntervalMs, undefined, { signal: stopping.signal }).catch(
        () => {},
      );
    }
  })();

  return {
    async close() {
      stopping.abort();
      await loop;
    },
  };
}

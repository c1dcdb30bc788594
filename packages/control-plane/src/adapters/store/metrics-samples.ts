import type { InstanceMetricsReport } from '@replix/instance-protocol';
import type { Kysely } from 'kysely';
import type { Store } from './schema.ts';

/** How often the health monitor keeps a reading of each instance's metrics. */
export const METRICS_SAMPLE_INTERVAL_MS = 30_000;
/** How long readings are kept: the dashboard's charts show this much history. */
export const METRICS_RETENTION_MS = 24 * 3600_000;

/** Stores one reading of an instance's metrics, taken now. */
export async function recordMetricsSample(
  db: Kysely<Store>,
  instance: { readonly databaseId: string; readonly instanceId: string },
  metrics: InstanceMetricsReport,
): Promise<void> {
  await db
    .insertInto('instance_metrics_samples')
    .values({
      database_id: instance.databaseId,
      instance_id: instance.instanceId,
      queries_ok: metrics.queriesOk,
      queries_err: metrics.queriesErr,
      snapshot_bytes: metrics.snapshotBytes,
      snapshot_age_seconds: metrics.snapshotAgeSeconds,
      swap_count: metrics.swapCount,
      table_rows: JSON.stringify(metrics.tableRows),
      query_duration_sum: metrics.queryDurationSum,
      query_duration_count: metrics.queryDurationCount,
    })
    .execute();
}

/** Deletes the readings older than the retention; returns how many went. */
export async function pruneMetricsSamples(db: Kysely<Store>, now = Date.now()): Promise<number> {
  const result = await db
    .deleteFrom('instance_metrics_samples')
    .where('sampled_at', '<', new Date(now - METRICS_RETENTION_MS))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

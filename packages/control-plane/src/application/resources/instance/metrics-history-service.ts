/**
 * The metrics history of a database: the readings the health monitor keeps
 * (`health/metrics-samples.ts`), so charts show the last day whether or not a page was open.
 */
import type { Static } from 'typebox';
import {
  METRICS_RETENTION_MS,
  METRICS_SAMPLE_INTERVAL_MS,
} from '../../../adapters/store/metrics-samples.ts';
import type { StoreDb } from '../../../adapters/store/open-store.ts';
import { ownedDatabase } from '../../../adapters/store/tenancy.ts';
import { iso } from '../common-schemas.ts';
import { metricsSampleRows } from './metrics-history-queries.ts';
import type { MetricsHistory, MetricsHistoryFilter } from './metrics-history-schemas.ts';

export async function metricsHistory(
  db: StoreDb,
  accountId: string,
  id: string,
  filter: MetricsHistoryFilter,
): Promise<Static<typeof MetricsHistory>> {
  const database = await ownedDatabase(db, accountId, id);
  const oldest = Date.now() - METRICS_RETENTION_MS;
  const asked = filter.since ? Date.parse(filter.since) : oldest;
  const rows = await metricsSampleRows(db, database.id, new Date(Math.max(asked, oldest)));
  return {
    samples: rows.map((row) => ({
      at: iso(row.sampled_at),
      queriesOk: row.queries_ok,
      queriesErr: row.queries_err,
      snapshotBytes: row.snapshot_bytes,
      snapshotAgeSeconds: row.snapshot_age_seconds,
      swapCount: row.swap_count,
      tableRows: row.table_rows,
      queryDurationSum: row.query_duration_sum,
      queryDurationCount: row.query_duration_count,
    })),
    intervalSeconds: METRICS_SAMPLE_INTERVAL_MS / 1000,
    retentionSeconds: METRICS_RETENTION_MS / 1000,
  };
}

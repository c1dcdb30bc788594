import type { StoreDb } from '../../../adapters/store/open-store.ts';

/** At most this many readings in one answer: a day of readings of two instances fits. */
const MAX_SAMPLES = 10_000;

/** The database's metrics readings taken after `since`, oldest first. */
export function metricsSampleRows(db: StoreDb, databaseId: string, since: Date) {
  return db
    .selectFrom('instance_metrics_samples')
    .selectAll()
    .where('database_id', '=', databaseId)
    .where('sampled_at', '>', since)
    .orderBy('sampled_at', 'asc')
    .orderBy('id', 'asc')
    .limit(MAX_SAMPLES)
    .execute();
}

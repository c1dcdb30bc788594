import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { MAX_BUILD_ATTEMPTS } from '../../builder/build-queue.ts';
import { HEARTBEAT_STALE_MS } from '../../roles/heartbeat.ts';
import type { StoreDb } from '../../store/open-store.ts';

const DEPLOY_DLQ_WINDOW_MS = 24 * 60 * 60 * 1000;
const RECENT_BUILDS = 10;

export interface Heartbeat {
  readonly name: string;
  readonly region: string;
  readonly revision: number;
}

/** The processes with a recent heartbeat. */
export function liveHeartbeats(db: StoreDb): Promise<Heartbeat[]> {
  return db
    .selectFrom('service_heartbeats')
    .select(['name', 'region', 'revision'])
    .where('last_seen_at', '>', new Date(Date.now() - HEARTBEAT_STALE_MS))
    .execute();
}

/** Per-region counts ({region, n}) of every job queue and dead-letter list. */
export async function queueCounts(db: StoreDb) {
  const [queued, inProgress, deployWaiting, deployInFlight, results, dlq, deployDlq] =
    await Promise.all([
      db
        .selectFrom('builds')
        .select((eb) => ['region', eb.fn.countAll<number>().as('n')])
        .where('status', '=', 'queued')
        .groupBy('region')
        .execute(),
      db
        .selectFrom('builds')
        .select((eb) => ['region', eb.fn.countAll<number>().as('n')])
        .where('status', '=', 'in_progress')
        .groupBy('region')
        .execute(),
      db
        .selectFrom('databases')
        .select((eb) => ['region', eb.fn.countAll<number>().as('n')])
        .where('goal', 'is not', null)
        .where(sql<boolean>`goal->>'claimedAt' IS NULL`)
        .groupBy('region')
        .execute(),
      db
        .selectFrom('databases')
        .select((eb) => ['region', eb.fn.countAll<number>().as('n')])
        .where('goal', 'is not', null)
        .where(sql<boolean>`goal->>'claimedAt' IS NOT NULL`)
        .groupBy('region')
        .execute(),
      // A finished build whose outcome the reconciler has not yet taken up: the goal still names it.
      db
        .selectFrom('builds')
        .innerJoin('databases', 'databases.id', 'builds.database_id')
        .select((eb) => ['builds.region as region', eb.fn.countAll<number>().as('n')])
        .where('builds.status', 'in', ['succeeded', 'failed'])
        .where(sql<boolean>`databases.goal->>'buildId' = builds.id::text`)
        .groupBy('builds.region')
        .execute(),
      db
        .selectFrom('builds')
        .select((eb) => ['region', eb.fn.countAll<number>().as('n')])
        .where('status', '=', 'failed')
        // Failed after every attempt the builder makes: a dead letter nothing retries.
        .where('attempts', '>=', MAX_BUILD_ATTEMPTS)
        .groupBy('region')
        .execute(),
      db
        .selectFrom('deployments')
        .innerJoin('databases', 'databases.id', 'deployments.database_id')
        .select((eb) => ['databases.region as region', eb.fn.countAll<number>().as('n')])
        .where('deployments.status', '=', 'failed')
        .where(
          (eb) => eb.fn.coalesce('deployments.finished_at', 'deployments.started_at'),
          '>=',
          new Date(Date.now() - DEPLOY_DLQ_WINDOW_MS),
        )
        .groupBy('databases.region')
        .execute(),
    ]);
  return { queued, inProgress, deployWaiting, deployInFlight, results, dlq, deployDlq };
}

/** A region's latest builds, of one account or (undefined) of all. */
export function recentBuildRows(db: StoreDb, region: string, accountId: string | undefined) {
  let query = db
    .selectFrom('builds')
    .select(['id', 'status', 'started_at', 'finished_at', 'duration_seconds'])
    .where('region', '=', region)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(RECENT_BUILDS);
  if (accountId) query = query.where('account_id', '=', accountId);
  return query.execute();
}

/** Times a trivial query on the store: the round trip every role depends on. */
export async function storeLatencyMs(db: StoreDb): Promise<number> {
  const started = performance.now();
  await sql`SELECT 1`.execute(db);
  return Math.round(performance.now() - started);
}

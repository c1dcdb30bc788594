import { sql } from 'kysely';
import type { StoreDb } from './open-store.ts';

/** How far back a failed deployment counts as a dead letter of the deploy queue. */
const DEPLOY_DLQ_WINDOW_MS = 24 * 60 * 60 * 1000;

/** Per-region counts ({region, n}) of every job queue and dead-letter list. */
export async function queueCounts(db: StoreDb, maxBuildAttempts: number) {
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
        .where('attempts', '>=', maxBuildAttempts)
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

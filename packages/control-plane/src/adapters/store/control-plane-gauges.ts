import { sql } from 'kysely';
import type { StoreDb } from './open-store.ts';

/** What `/metrics` reads from the store at each scrape (roles/control-plane-metrics.ts). */
export interface StoreGaugeReading {
  /** Instances not removed, by their last recorded health (null: not read yet). */
  readonly instancesByHealth: ReadonlyArray<{ readonly health: string | null; readonly n: number }>;
  /** Goals a reconciler could claim now (no lease, or one that ran out). */
  readonly goalsWaiting: number;
  /** Seconds the one of them claimable longest has waited; 0 when none waits. */
  readonly oldestGoalWaitSeconds: number;
}

/**
 * Two aggregate reads, each one row per health value or one row: their cost does not grow with
 * what a scrape returns. A goal is claimable since its lease ran out, or since it was last
 * written when it has none (queued, or given back without a wait).
 */
export async function readStoreGauges(db: StoreDb): Promise<StoreGaugeReading> {
  const [instances, goals] = await Promise.all([
    db
      .selectFrom('instances')
      .select((eb) => ['health_status as health', eb.fn.countAll<number>().as('n')])
      .where('removed_at', 'is', null)
      .groupBy('health_status')
      .execute(),
    db
      .selectFrom('databases')
      .select([
        sql<number>`count(*)`.as('waiting'),
        sql<number | null>`extract(epoch from now() - min(greatest(updated_at, lease_until)))`.as(
          'oldest',
        ),
      ])
      .where('goal', 'is not', null)
      .where('deleted_at', 'is', null)
      .where(sql<boolean>`(lease_until IS NULL OR lease_until < now())`)
      .executeTakeFirstOrThrow(),
  ]);
  return {
    instancesByHealth: instances.map((row) => ({ health: row.health, n: Number(row.n) })),
    goalsWaiting: Number(goals.waiting),
    oldestGoalWaitSeconds: Math.max(0, Number(goals.oldest ?? 0)),
  };
}

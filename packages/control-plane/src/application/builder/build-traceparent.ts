import type { BuildRow } from '../../adapters/store/build-queue.ts';
import { databaseById } from '../../adapters/store/database-store.ts';
import type { StoreDb } from '../../adapters/store/open-store.ts';

/**
 * The `traceparent` of the request whose goal queued this build: the goal keeps it
 * (`queueGoal`) and names its build while it waits for it, so the build's spans continue that
 * request's trace. Undefined for a build no goal waits for, or one queued with tracing off.
 */
export async function buildTraceparent(db: StoreDb, build: BuildRow): Promise<string | undefined> {
  const goal = (await databaseById(db, build.database_id))?.goal;
  return goal && 'buildId' in goal && goal.buildId === build.id ? goal.traceparent : undefined;
}

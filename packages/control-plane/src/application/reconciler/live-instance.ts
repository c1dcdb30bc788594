import {
  type InstanceRow,
  liveInstancesOf,
  markRemoved,
} from '../../adapters/store/instance-store.ts';
import type { ApiContext } from '../../api/context.ts';

/**
 * Stops serving the database: its endpoint answers 503 with `message` from now on, then its
 * instances (the serving one and a deploy's standby, if any) stop and their rows are marked
 * removed. Idempotent. Returns the serving instance it stopped.
 */
export async function stopLiveInstance(
  context: Pick<ApiContext, 'db' | 'driver'>,
  databaseId: string,
  message: string,
): Promise<InstanceRow | undefined> {
  await context.driver.unroute(databaseId, message);
  const instances = await liveInstancesOf(context.db, databaseId);
  for (const instance of instances) {
    await context.driver.stop(instance.id);
    await markRemoved(context.db, instance.id);
  }
  return instances.find((instance) => !instance.standby);
}

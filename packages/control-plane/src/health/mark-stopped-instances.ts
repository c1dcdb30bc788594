import type { Kysely } from 'kysely';
import type { Store } from '../store/schema.ts';

/**
 * Records that a graceful shutdown stopped these instances on purpose: their health becomes
 * unknown (null), which the health monitor reads as "starting" until they answer again, so
 * the restart that follows reports neither `instance.unhealthy` nor `instance.recovered`.
 */
export async function markStoppedInstances(
  db: Kysely<Store>,
  instanceIds: readonly string[],
): Promise<void> {
  if (instanceIds.length === 0) return;
  await db
    .updateTable('instances')
    .set({ health_status: null, updated_at: new Date() })
    .where('id', 'in', instanceIds)
    .where('removed_at', 'is', null)
    .execute();
}

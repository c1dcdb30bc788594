import type { StoreDb } from './open-store.ts';

/** The revision of the control-plane code; bumped with each release of its contract. */
export const CONTROL_PLANE_REVISION = 1;
export const HEARTBEAT_INTERVAL_MS = 5000;
/** A process whose heartbeat is older than this is counted as gone. */
export const HEARTBEAT_STALE_MS = 30_000;

/** Registers a running service (api, reconciler, builder, health-monitor) and keeps it fresh. */
export async function startHeartbeat(
  db: StoreDb,
  entry: { processId: string; name: string; region: string },
): Promise<() => Promise<void>> {
  const beat = () =>
    db
      .insertInto('service_heartbeats')
      .values({
        process_id: entry.processId,
        name: entry.name,
        revision: CONTROL_PLANE_REVISION,
        region: entry.region,
        started_at: new Date(),
        last_seen_at: new Date(),
      })
      .onConflict((oc) => oc.column('process_id').doUpdateSet({ last_seen_at: new Date() }))
      .execute();
  await beat();
  const timer = setInterval(() => {
    beat().catch(() => {});
  }, HEARTBEAT_INTERVAL_MS);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await db
      .deleteFrom('service_heartbeats')
      .where('process_id', '=', entry.processId)
      .execute()
      .catch(() => {});
  };
}

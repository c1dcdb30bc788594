import { performance } from 'node:perf_hooks';
import { HEARTBEAT_STALE_MS } from '../../../adapters/store/heartbeat-store.ts';
import { pingStore, type StoreDb } from '../../../adapters/store/open-store.ts';

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

/** Times a trivial query on the store: the round trip every role depends on. */
export async function storeLatencyMs(db: StoreDb): Promise<number> {
  const started = performance.now();
  await pingStore(db);
  return Math.round(performance.now() - started);
}

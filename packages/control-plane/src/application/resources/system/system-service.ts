/**
 * The control plane's own health (spec §2, control-plane health response), from heartbeats,
 * the job tables and a timed store round trip. Recent builds are the caller's account's unless
 * the caller is an admin.
 */

import { MAX_BUILD_ATTEMPTS } from '../../../adapters/store/build-queue.ts';
import { recentBuildRows } from '../../../adapters/store/build-store.ts';
import { CONTROL_PLANE_REVISION } from '../../../adapters/store/heartbeat-store.ts';
import type { StoreDb } from '../../../adapters/store/open-store.ts';
import { queueCounts } from '../../../adapters/store/queue-counts.ts';
import { REGIONS } from '../../../domain/regions.ts';
import { ROLE_NAMES } from '../../../domain/role-names.ts';
import type { Principal } from '../../identity/principal.ts';
import { iso } from '../common-schemas.ts';
import { type Heartbeat, liveHeartbeats, storeLatencyMs } from './system-queries.ts';

/** At least one process of each role must run; more are allowed (they share work by leases). */
const DESIRED_COUNT = 1;

function revisions(live: readonly Heartbeat[]) {
  return {
    runningRevision: live.length ? Math.min(...live.map((beat) => beat.revision)) : 0,
    latestRevision: CONTROL_PLANE_REVISION,
    runningCount: live.length,
    desiredCount: DESIRED_COUNT,
  };
}

/** Per-region counts of `rows` ({region, n}), 0 for regions without rows. */
function byRegion(rows: ReadonlyArray<{ region: string; n: number | string | bigint }>) {
  return (region: string) => Number(rows.find((row) => row.region === region)?.n ?? 0);
}

async function queues(db: StoreDb) {
  const rows = await queueCounts(db, MAX_BUILD_ATTEMPTS);
  const count = {
    queued: byRegion(rows.queued),
    inProgress: byRegion(rows.inProgress),
    deployWaiting: byRegion(rows.deployWaiting),
    deployInFlight: byRegion(rows.deployInFlight),
    results: byRegion(rows.results),
    dlq: byRegion(rows.dlq),
    deployDlq: byRegion(rows.deployDlq),
  };
  return REGIONS.map((region) => ({
    region,
    build: { waiting: count.queued(region), inFlight: count.inProgress(region) },
    deploy: { waiting: count.deployWaiting(region), inFlight: count.deployInFlight(region) },
    buildResults: { waiting: count.results(region), inFlight: 0 },
    dlq: { waiting: count.dlq(region) },
    deployDlq: { waiting: count.deployDlq(region) },
  }));
}

async function recentBuilds(db: StoreDb, accountId: string | undefined) {
  return Promise.all(
    REGIONS.map(async (region) => {
      const rows = await recentBuildRows(db, region, accountId);
      return {
        region,
        builds: rows.map((row) => ({
          id: row.id,
          status: row.status,
          startedAt: iso(row.started_at),
          durationMs:
            row.duration_seconds !== null
              ? row.duration_seconds * 1000
              : row.started_at && row.finished_at
                ? row.finished_at.getTime() - row.started_at.getTime()
                : null,
          logsUrl: `/v1/builds/${row.id}/logs`,
        })),
      };
    }),
  );
}

export async function systemHealth(db: StoreDb, { admin, accountId }: Principal) {
  const live = await liveHeartbeats(db);
  const [queueList, builds, latencyMs] = await Promise.all([
    queues(db),
    recentBuilds(db, admin ? undefined : accountId),
    storeLatencyMs(db),
  ]);
  return {
    services: ROLE_NAMES.map((name) => ({
      name,
      ...revisions(live.filter((beat) => beat.name === name)),
    })),
    builderServices: REGIONS.map((region) => ({
      region,
      ...revisions(live.filter((beat) => beat.name === 'builder' && beat.region === region)),
    })),
    queues: queueList,
    sidecarHealth: REGIONS.map((region) => {
      const ok = live.some((beat) => beat.name === 'health-monitor' && beat.region === region);
      return { region, ok, latencyMs: ok ? latencyMs : null };
    }),
    recentBuilds: builds,
  };
}

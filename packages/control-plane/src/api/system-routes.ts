import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { Type } from 'typebox';
import { MAX_BUILD_ATTEMPTS } from '../builder/build-queue.ts';
import { REGIONS } from '../config.ts';
import { CONTROL_PLANE_REVISION, HEARTBEAT_STALE_MS } from '../roles/heartbeat.ts';
import { ROLE_NAMES } from '../roles/role.ts';
import type { StoreDb } from '../store/open-store.ts';
import type { ApiServer } from './api-server.ts';
import { errorResponses, iso } from './common-schemas.ts';
import type { ApiContext } from './context.ts';

const DEPLOY_DLQ_WINDOW_MS = 24 * 60 * 60 * 1000;
const RECENT_BUILDS = 10;
/** At least one process of each role must run; more are allowed (they share work by leases). */
const DESIRED_COUNT = 1;

const Revisions = {
  runningRevision: Type.Integer({
    description: 'The lowest revision among live processes; 0 when none runs.',
  }),
  latestRevision: Type.Integer({ description: "This control plane's code revision." }),
  runningCount: Type.Integer({ description: 'Processes with a heartbeat in the last 30 s.' }),
  desiredCount: Type.Integer({ description: 'At least this many must run; more are allowed.' }),
};
const Queue = Type.Object({ waiting: Type.Integer(), inFlight: Type.Integer() });
const DeadLetters = Type.Object({ waiting: Type.Integer() });

const SystemHealth = Type.Object(
  {
    services: Type.Array(Type.Object({ name: Type.String(), ...Revisions })),
    builderServices: Type.Array(Type.Object({ region: Type.String(), ...Revisions })),
    queues: Type.Array(
      Type.Object({
        region: Type.String(),
        build: Queue,
        deploy: Queue,
        buildResults: Queue,
        dlq: DeadLetters,
        deployDlq: DeadLetters,
      }),
    ),
    sidecarHealth: Type.Array(
      Type.Object({
        region: Type.String(),
        ok: Type.Boolean({ description: 'A health monitor is live in the region.' }),
        latencyMs: Type.Union([Type.Integer(), Type.Null()], {
          description: 'Round trip of `SELECT 1` on the store, in ms; null when not ok.',
        }),
      }),
    ),
    recentBuilds: Type.Array(
      Type.Object({
        region: Type.String(),
        builds: Type.Array(
          Type.Object({
            id: Type.String(),
            status: Type.String(),
            startedAt: Type.Union([Type.String(), Type.Null()]),
            durationMs: Type.Union([Type.Integer(), Type.Null()]),
            logsUrl: Type.Union([Type.String(), Type.Null()]),
          }),
        ),
      }),
    ),
  },
  { $id: 'SystemHealth' },
);

interface Heartbeat {
  readonly name: string;
  readonly region: string;
  readonly revision: number;
}

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
  const count = {
    queued: byRegion(queued),
    inProgress: byRegion(inProgress),
    deployWaiting: byRegion(deployWaiting),
    deployInFlight: byRegion(deployInFlight),
    results: byRegion(results),
    dlq: byRegion(dlq),
    deployDlq: byRegion(deployDlq),
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
      let query = db
        .selectFrom('builds')
        .select(['id', 'status', 'started_at', 'finished_at', 'duration_seconds'])
        .where('region', '=', region)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(RECENT_BUILDS);
      if (accountId) query = query.where('account_id', '=', accountId);
      const rows = await query.execute();
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

/** Times a trivial query on the store: the round trip every role depends on. */
async function storeLatencyMs(db: StoreDb): Promise<number> {
  const started = performance.now();
  await sql`SELECT 1`.execute(db);
  return Math.round(performance.now() - started);
}

/**
 * The control plane's own health (spec §2, control-plane health response), from heartbeats,
 * the job tables and a timed store round trip. Any signed-in user may read it; recent builds
 * are the caller's account's unless the caller is an admin.
 */
export function registerSystemRoutes(app: ApiServer, { db }: ApiContext): void {
  app.get(
    '/system/health',
    {
      schema: {
        tags: ['system'],
        summary: 'Control-plane health: services, builders, queues, sidecars, recent builds',
        response: { 200: SystemHealth, ...errorResponses() },
      },
    },
    async (request) => {
      const live: Heartbeat[] = await db
        .selectFrom('service_heartbeats')
        .select(['name', 'region', 'revision'])
        .where('last_seen_at', '>', new Date(Date.now() - HEARTBEAT_STALE_MS))
        .execute();
      const [queueList, builds, latencyMs] = await Promise.all([
        queues(db),
        recentBuilds(db, request.principal.admin ? undefined : request.principal.accountId),
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
    },
  );
}

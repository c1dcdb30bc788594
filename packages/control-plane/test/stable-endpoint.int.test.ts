import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deriveApiKey } from '@replix/instance-protocol';
import { testMariaDb, testPostgres } from '@replix/testkit/vitest';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openStore } from '../src/adapters/store/open-store.ts';
import { resolveControlPlaneConfig } from '../src/config.ts';
import { type RunningControlPlane, startControlPlane } from '../src/start-control-plane.ts';
import {
  addApiKey,
  databaseRow,
  eventually,
  killInstanceProcesses,
  liveInstances,
  requestAction,
  type SeededSource,
  seedProvision,
  statusReached,
} from './reconciler-fixtures.ts';

// Four deploys one after another, each loading a snapshot: a slow machine gets room.
vi.setConfig({ testTimeout: 300_000, hookTimeout: 180_000 });

const SHOP = `
  CREATE TABLE item (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL);
  INSERT INTO item VALUES (1, 'one'), (2, 'two'), (3, 'three');
`;
const QUERY = 'item { id name } ORDER BY id';
const EXPECTED = [
  { id: 1, name: 'one' },
  { id: 2, name: 'two' },
  { id: 3, name: 'three' },
];
/** 20 queries a second. */
const LOAD_INTERVAL_MS = 50;

interface Answer {
  readonly status: number;
  readonly data: unknown;
  readonly error?: string;
}

/** Sends the query every 50 ms without waiting for answers, as a steady client would. */
function steadyLoad(url: string, apiKey: string) {
  const answers: Promise<Answer>[] = [];
  const send = () =>
    fetch(`${url}/query?q=${encodeURIComponent(QUERY)}`, {
      headers: { authorization: `Bearer ${apiKey}` },
    }).then(
      async (response) => {
        const body = (await response.json()) as { data?: unknown };
        return { status: response.status, data: body.data ?? body };
      },
      (error: unknown) => ({ status: 0, data: null, error: String(error) }),
    );
  const timer = setInterval(() => answers.push(send()), LOAD_INTERVAL_MS);
  return {
    async stop(): Promise<Answer[]> {
      clearInterval(timer);
      return Promise.all(answers);
    },
  };
}

describe('one stable endpoint per database', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'replix-endpoint-'));
  const secretKey = randomBytes(32).toString('hex');
  let storeUrl: string;
  let dropStore = async () => {};
  let cp: RunningControlPlane;
  let source: Awaited<ReturnType<ReturnType<typeof testMariaDb>['createDatabase']>>;
  let seeded: SeededSource;
  let apiKey: string;
  let endpointUrl: string;

  /** A control plane on the same store and data folder each time: a restart. */
  async function startCp(): Promise<RunningControlPlane> {
    const config = resolveControlPlaneConfig({
      REPLIX_BUNDLE_CACHE_DIR: process.env.REPLIX_BUNDLE_CACHE_DIR,
      REPLIX_DATA_DIR: dataDir,
      REPLIX_API_PORT: '0',
      REPLIX_SECRET_KEY: secretKey,
      REPLIX_HEALTH_INTERVAL_MS: '500',
      REPLIX_RECONCILE_INTERVAL_MS: '200',
      DATABASE_URL: storeUrl,
    });
    return startControlPlane(config, {
      roles: ['api', 'reconciler', 'builder', 'health-monitor'],
      store: await openStore({ databaseUrl: storeUrl }),
      log: pino({ level: process.env.REPLIX_TEST_LOG_LEVEL ?? 'silent' }),
    });
  }

  const query = async () => {
    const response = await fetch(`${endpointUrl}/query?q=${encodeURIComponent(QUERY)}`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  beforeAll(async () => {
    const store = await testPostgres().createDatabase();
    storeUrl = store.url;
    dropStore = () => store.drop();
    source = await testMariaDb().createDatabase(SHOP);
    cp = await startCp();
    seeded = await seedProvision(cp.context.db, cp.context.secrets, source.url);
    const row = await statusReached(cp.context.db, seeded.databaseId, 'running');
    endpointUrl = row.endpoint_url as string;
    expect(endpointUrl).toBe(`http://127.0.0.1:${row.endpoint_port}`);
    apiKey = deriveApiKey(seeded.keySecret, await addApiKey(cp.context.db, seeded));
    await eventually(async () => (await query()).status === 200, 30_000, 'the first answer');
  });
  afterAll(async () => {
    await cp?.close();
    killInstanceProcesses(dataDir);
    await source?.drop();
    await dropStore();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers every query of a steady load through redeploy, resize, reconfigure and rebuild, on one URL', async () => {
    const db = cp.context.db;
    const load = steadyLoad(endpointUrl, apiKey);
    const switchOvers: Record<string, number> = {};
    const actions: Array<[string, string, () => Promise<Record<string, string>>]> = [
      [
        'redeploy',
        'deploying',
        async () => ({
          buildId: (await databaseRow(db, seeded.databaseId)).current_build_id as string,
        }),
      ],
      ['resize', 'deploying', async () => ({ instanceSize: 's' })],
      ['reconfigure', 'deploying', async () => ({})],
      ['rebuild', 'building', async () => ({})],
    ];
    for (const [action, status, extra] of actions) {
      const [before] = await liveInstances(db, seeded.databaseId);
      const started = Date.now();
      await requestAction(db, seeded.databaseId, action, status, await extra());
      // Switched over once the store records the new instance as serving (right after the
      // endpoint is pointed at it).
      await eventually(
        async () => {
          const serving = (await liveInstances(db, seeded.databaseId)).find(
            (instance) => !instance.standby,
          );
          return serving && serving.id !== before?.id;
        },
        180_000,
        `the switch of ${action}`,
      );
      switchOvers[action] = Date.now() - started;
      const row = await statusReached(db, seeded.databaseId, 'running', 180_000);
      expect(row.endpoint_url).toBe(endpointUrl);
      const instances = await liveInstances(db, seeded.databaseId);
      expect(instances.map((instance) => instance.endpoint_url)).toEqual([endpointUrl]);
    }
    const answers = await load.stop();
    const failed = answers.filter(
      (answer) => answer.status !== 200 || JSON.stringify(answer.data) !== JSON.stringify(EXPECTED),
    );
    console.log(
      `stable endpoint under ${1000 / LOAD_INTERVAL_MS} queries/s: ${answers.length} queries, ${failed.length} failed; switch-over ms (action call to new instance serving): ${JSON.stringify(switchOvers)}`,
    );
    expect(failed.slice(0, 3)).toEqual([]);
    expect(answers.length).toBeGreaterThan(20);
  });

  it('answers 503 with the envelope while paused, and serves on the same URL after resume', async () => {
    const db = cp.context.db;
    await requestAction(db, seeded.databaseId, 'pause', 'pausing');
    await statusReached(db, seeded.databaseId, 'paused');
    expect(await query()).toEqual({
      status: 503,
      body: {
        error: {
          code: 'service_unavailable',
          message: 'The database is paused: resume it to serve queries.',
        },
      },
    });
    await requestAction(db, seeded.databaseId, 'resume', 'deploying');
    const row = await statusReached(db, seeded.databaseId, 'running');
    expect(row.endpoint_url).toBe(endpointUrl);
    expect(await query()).toEqual({
      status: 200,
      body: expect.objectContaining({ data: EXPECTED }),
    });
  });

  it('keeps the URL through terminate and a new provision', async () => {
    const db = cp.context.db;
    await requestAction(db, seeded.databaseId, 'terminate', 'terminating');
    await statusReached(db, seeded.databaseId, 'terminated');
    const terminated = await query();
    expect(terminated.status).toBe(503);
    expect(terminated.body).toEqual({
      error: {
        code: 'service_unavailable',
        message: 'The database is terminated: provision it again to serve queries.',
      },
    });
    await requestAction(db, seeded.databaseId, 'provision', 'building');
    const row = await statusReached(db, seeded.databaseId, 'running', 180_000);
    expect(row.endpoint_url).toBe(endpointUrl);
    await eventually(async () => (await query()).status === 200, 30_000, 'answers again');
    expect((await query()).body.data).toEqual(EXPECTED);
  });

  it('serves again on the same URL once a killed instance is restarted', async () => {
    const [before] = await liveInstances(cp.context.db, seeded.databaseId);
    process.kill(before?.pid as number, 'SIGKILL');
    await eventually(
      async () => {
        const [after] = await liveInstances(cp.context.db, seeded.databaseId);
        return after && after.pid !== before?.pid && (await query()).status === 200;
      },
      60_000,
      'answers from the restarted instance',
    );
    expect((await query()).body.data).toEqual(EXPECTED);
  });

  it('keeps the URL across a control-plane restart', async () => {
    await cp.close();
    cp = await startCp();
    await eventually(async () => (await query()).status === 200, 90_000, 'answers after restart');
    expect((await query()).body.data).toEqual(EXPECTED);
    const row = await databaseRow(cp.context.db, seeded.databaseId);
    expect(row.endpoint_url).toBe(endpointUrl);
  });
});

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TestDatabase } from '@replix/testkit';
import { testMariaDb, testPostgres } from '@replix/testkit/vitest';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { METRICS_RETENTION_MS } from '../src/adapters/store/metrics-samples.ts';
import { openStore } from '../src/adapters/store/open-store.ts';
import { resolveControlPlaneConfig } from '../src/config.ts';
import { type RunningControlPlane, startControlPlane } from '../src/start-control-plane.ts';
import { STORE_KINDS } from './control-plane-harness.ts';
import {
  accountOf,
  insertConnection,
  insertDatabase,
  sourceFromUrl,
} from './lifecycle-fixtures.ts';
import { eventually, goal, liveInstances, statusReached } from './reconciler-fixtures.ts';

const EMAIL = 'history@example.com';

/**
 * The health monitor's metrics history (`GET /v1/databases/{id}/metrics/history`) and a normal
 * restart: a control plane stopped gracefully (its instances stopped with it) and started again
 * on the same data folder and store brings the database back without an unhealthy (or
 * recovered) notification, and keeps the history, pruned to its retention.
 */
describe.each(STORE_KINDS)('metrics history and a graceful restart on the %s store', (kind) => {
  let source: TestDatabase;
  let dataDir: string;
  let databaseUrl: string | undefined;
  let dropStore = async () => {};
  let running: RunningControlPlane | undefined;
  const secretKey = randomBytes(32).toString('hex');

  beforeAll(async () => {
    source = await testMariaDb().createDatabase(
      "CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(40)); INSERT INTO customers VALUES (1, 'Ada'), (2, 'Grace')",
    );
    dataDir = mkdtempSync(join(tmpdir(), 'replix-history-'));
    if (kind === 'postgres') {
      const database = await testPostgres().createDatabase();
      databaseUrl = database.url;
      dropStore = () => database.drop();
    }
  });
  afterAll(async () => {
    await running?.close();
    await dropStore();
    await source?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** A control plane with every role, on the same data folder and store every time. */
  const start = async () => {
    const config = resolveControlPlaneConfig({
      REPLIX_BUNDLE_CACHE_DIR: process.env.REPLIX_BUNDLE_CACHE_DIR,
      REPLIX_DATA_DIR: dataDir,
      REPLIX_API_PORT: '0',
      REPLIX_SECRET_KEY: secretKey,
      REPLIX_HEALTH_INTERVAL_MS: '300',
      REPLIX_RECONCILE_INTERVAL_MS: '200',
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    });
    const store = await openStore(databaseUrl ? { databaseUrl } : { dataDir });
    running = await startControlPlane(config, {
      store,
      log: pino({ level: process.env.REPLIX_TEST_LOG_LEVEL ?? 'silent' }),
    });
    return running;
  };

  async function get(cp: RunningControlPlane, path: string, email = EMAIL) {
    const token = await cp.context.issuer!.sign({ email, admin: false });
    const response = await fetch(`${cp.url}${path}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    // biome-ignore lint/suspicious/noExplicitAny: the test reads the body field by field
    return { status: response.status, body: (await response.json()) as any };
  }

  const historyOf = (cp: RunningControlPlane, databaseId: string, query = '') =>
    get(cp, `/v1/databases/${databaseId}/metrics/history${query}`);

  /** A reading the monitor would have kept, at `at`. */
  const insertSample = (
    cp: RunningControlPlane,
    ids: { databaseId: string; instanceId: string },
    at: Date,
  ) =>
    cp.context.db
      .insertInto('instance_metrics_samples')
      .values({
        database_id: ids.databaseId,
        instance_id: ids.instanceId,
        sampled_at: at,
        queries_ok: 7,
        queries_err: 0,
        snapshot_bytes: 1,
        snapshot_age_seconds: 0,
        swap_count: 0,
        table_rows: JSON.stringify({ customers: 2 }),
        query_duration_sum: 0,
        query_duration_count: 7,
      })
      .execute();

  const healthOf = async (cp: RunningControlPlane, instanceId: string) =>
    (
      await cp.context.db
        .selectFrom('instances')
        .select('health_status')
        .where('id', '=', instanceId)
        .executeTakeFirstOrThrow()
    ).health_status;

  it('keeps readings for a day, serves them, and a restart raises no health alarm', {
    timeout: 180_000,
  }, async () => {
    let cp = await start();
    // The caller's account is made on their first request, like any new user's.
    expect((await get(cp, '/v1/management-keys')).status).toBe(200);
    const owner = { accountId: await accountOf(cp, EMAIL) };
    const connectionId = await insertConnection(cp, owner, sourceFromUrl(source.url));
    const { id: databaseId } = await insertDatabase(cp, owner, {
      connectionId,
      sourceSchema: source.name,
      status: 'building',
      goal: goal('provision', 'draft'),
    });
    await statusReached(cp.context.db, databaseId, 'running');
    const [instance] = await liveInstances(cp.context.db, databaseId);
    const instanceId = instance!.id;
    const ids = { databaseId, instanceId };
    await eventually(
      async () => (await healthOf(cp, instanceId)) === 'ok' || undefined,
      20_000,
      'ok',
    );

    // The monitor keeps a reading without any page asking for metrics.
    const first = await eventually(
      async () => {
        const history = await historyOf(cp, databaseId);
        return history.body.samples?.length > 0 ? history : undefined;
      },
      20_000,
      'a kept reading',
    );
    expect(first.status).toBe(200);
    expect(first.body.intervalSeconds).toBe(30);
    expect(first.body.retentionSeconds).toBe(86_400);
    expect(first.body.samples[0]).toMatchObject({
      tableRows: { customers: 2 },
      queriesOk: expect.any(Number),
      snapshotBytes: expect.any(Number),
    });
    expect(Date.parse(first.body.samples[0].at)).toBeLessThanOrEqual(Date.now());

    // Oldest first; `since` keeps the later ones; nothing past the retention is served.
    const hour = 3600_000;
    await insertSample(cp, ids, new Date(Date.now() - 2 * hour));
    await insertSample(cp, ids, new Date(Date.now() - METRICS_RETENTION_MS - hour));
    const all = await historyOf(cp, databaseId);
    const times = all.body.samples.map((sample: { at: string }) => Date.parse(sample.at));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(times[0]).toBeGreaterThan(Date.now() - 3 * hour);
    expect(times[0]).toBeLessThan(Date.now() - hour);
    const since = new Date(Date.now() - hour).toISOString();
    const recent = await historyOf(cp, databaseId, `?since=${encodeURIComponent(since)}`);
    expect(recent.body.samples.length).toBe(all.body.samples.length - 1);

    // Hostile input and other accounts.
    const bad = await historyOf(cp, databaseId, '?since=yesterday');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toEqual(expect.any(String));
    const extra = await historyOf(cp, databaseId, '?limit=5');
    expect(extra.status).toBe(400);
    expect((await get(cp, '/v1/management-keys', 'other@example.com')).status).toBe(200);
    const foreign = await get(
      cp,
      `/v1/databases/${databaseId}/metrics/history`,
      'other@example.com',
    );
    expect(foreign.status).toBe(404);

    // A normal stop: the instances stop with the control plane; their health is unknown.
    await running!.close();
    running = undefined;
    const store = await openStore(databaseUrl ? { databaseUrl } : { dataDir });
    const stopped = await store.db
      .selectFrom('instances')
      .select('health_status')
      .where('id', '=', instanceId)
      .executeTakeFirstOrThrow();
    await store.close();
    expect(stopped.health_status).toBeNull();

    // And a start again on the same folder: the instance comes back, nothing alarming is said.
    const stoppedAt = new Date();
    cp = await start();
    await eventually(
      async () => (await healthOf(cp, instanceId)) === 'ok' || undefined,
      60_000,
      'ok again',
    );
    // A few more readings: still nothing to report.
    await sleep(1500);
    const notifications = await cp.context.db
      .selectFrom('notifications')
      .select(['event_type', 'severity', 'message'])
      .where('database_id', '=', databaseId)
      .execute();
    expect(notifications.filter((note) => note.event_type.startsWith('instance.'))).toEqual([]);
    expect(notifications.filter((note) => note.severity === 'error')).toEqual([]);
    const audit = await cp.context.db
      .selectFrom('audit_events')
      .select('event_type')
      .where('database_id', '=', databaseId)
      .where('created_at', '>', stoppedAt)
      .execute();
    expect(audit.map((event) => event.event_type)).not.toContain('instance.unhealthy');

    // The history outlived the restart; the reading past the retention was pruned.
    const after = await eventually(
      async () => {
        const history = await historyOf(cp, databaseId);
        const last = history.body.samples.at(-1);
        return last && Date.parse(last.at) > stoppedAt.getTime() ? history : undefined;
      },
      20_000,
      'a reading after the restart',
    );
    expect(after.body.samples.length).toBeGreaterThan(all.body.samples.length);
    const kept = await cp.context.db
      .selectFrom('instance_metrics_samples')
      .select('sampled_at')
      .where('database_id', '=', databaseId)
      .execute();
    const oldest = Math.min(...kept.map((row) => row.sampled_at.getTime()));
    expect(oldest).toBeGreaterThan(Date.now() - METRICS_RETENTION_MS);
  });
});

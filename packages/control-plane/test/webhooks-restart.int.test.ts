import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { testPostgres } from '@replix/testkit/vitest';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../src/adapters/store/open-store.ts';
import { startWebhookDeliverer } from '../src/application/webhook-delivery/webhook-deliverer.ts';
import { resolveControlPlaneConfig } from '../src/config.ts';
import type { RoleName } from '../src/domain/role-names.ts';
import { type RunningControlPlane, startControlPlane } from '../src/start-control-plane.ts';
import { STORE_KINDS } from './control-plane-harness.ts';
import { insertAccount, insertDatabase, insertWebhookSubscription } from './lifecycle-fixtures.ts';
import { eventually } from './reconciler-fixtures.ts';
import { signatureValid, TestReceiver } from './webhook-test-receiver.ts';

describe.each(STORE_KINDS)('webhook deliveries across restarts on the %s store', (kind) => {
  let receiver: TestReceiver;
  let dataDir: string;
  let databaseUrl: string | undefined;
  let dropDatabase = async () => {};
  let running: RunningControlPlane | undefined;
  const secretKey = randomBytes(32).toString('hex');

  beforeAll(async () => {
    receiver = await TestReceiver.start();
    dataDir = mkdtempSync(join(tmpdir(), 'replix-webhooks-restart-'));
    if (kind === 'postgres') {
      const database = await testPostgres().createDatabase();
      databaseUrl = database.url;
      dropDatabase = () => database.drop();
    }
  });
  afterAll(async () => {
    await running?.close();
    await dropDatabase();
    await receiver?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** A control plane process on the same store every time (PGlite in the data folder, or PostgreSQL). */
  const start = async (roles: RoleName[], env: Record<string, string> = {}) => {
    const config = resolveControlPlaneConfig({
      REPLIX_BUNDLE_CACHE_DIR: process.env.REPLIX_BUNDLE_CACHE_DIR,
      REPLIX_DATA_DIR: dataDir,
      REPLIX_API_PORT: '0',
      REPLIX_SECRET_KEY: secretKey,
      REPLIX_WEBHOOKS_ALLOW_LOCAL: '1',
      REPLIX_WEBHOOKS_CA_FILE: receiver.caFile,
      REPLIX_WEBHOOK_TIMEOUT_MS: '1000',
      REPLIX_WEBHOOK_POLL_MS: '50',
      // The second attempt comes 5 s × 0.2 = 1 s after the first.
      REPLIX_WEBHOOK_RETRY_SCALE: '0.2',
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
      ...env,
    });
    const store = await openStore(databaseUrl ? { databaseUrl } : { dataDir });
    running = await startControlPlane(config, {
      roles,
      store,
      log: pino({ level: process.env.REPLIX_TEST_LOG_LEVEL ?? 'silent' }),
    });
    return running;
  };
  const stop = async () => {
    await running?.close();
    running = undefined;
  };

  /** A build.failed event of the database, recorded as the builder does (webhooks follow). */
  const emitBuildFailed = (
    context: RunningControlPlane['context'],
    accountId: string,
    databaseId: string,
    error: string,
  ) =>
    context.db.transaction().execute((tx) =>
      context.events.emit(tx, {
        type: 'build.failed',
        accountId,
        databaseId,
        databaseName: 'db',
        fields: { error },
        message: 'm',
        severity: 'error',
      }),
    );

  it('loses no delivery and sends none twice when the control plane restarts', async () => {
    // First process: API and reconciler (which delivers webhooks).
    let cp = await start(['api', 'reconciler']);
    const accountId = await insertAccount(cp);
    const { id: databaseId } = await insertDatabase(cp, { accountId }, { status: 'running' });
    const secret = randomBytes(32).toString('hex');
    const subscriptionId = await insertWebhookSubscription(
      cp,
      { accountId },
      databaseId,
      receiver.url('/restart'),
      secret,
    );
    const emit = (context: RunningControlPlane['context'], error: string) =>
      emitBuildFailed(context, accountId, databaseId, error);
    const deliveryOf = (context: RunningControlPlane['context'], error: string) =>
      context.db
        .selectFrom('webhook_deliveries')
        .selectAll()
        .where('subscription_id', '=', subscriptionId)
        .where('body', 'like', `%"error":"${error}"%`)
        .executeTakeFirstOrThrow();

    // The first attempt fails; the process stops before the retry is due.
    receiver.answers = [500];
    await emit(cp.context, 'first');
    await eventually(
      async () => (await deliveryOf(cp.context, 'first')).status === 'retrying',
      20_000,
      'the first attempt',
    );
    await stop();
    expect(receiver.received.filter((r) => r.body?.error === 'first')).toHaveLength(1);

    // A process without a deliverer records a second event: pending, nothing sent.
    cp = await start(['api']);
    await emit(cp.context, 'second');
    await sleep(1500);
    expect((await deliveryOf(cp.context, 'second')).status).toBe('pending');
    expect(receiver.received.filter((r) => r.body?.error === 'second')).toEqual([]);
    await stop();

    // A new process with a deliverer finishes both: the retry with the same event id, the
    // pending one once.
    cp = await start(['reconciler']);
    const first = await eventually(async () => {
      const row = await deliveryOf(cp.context, 'first');
      return row.status === 'delivered' ? row : undefined;
    });
    const second = await eventually(async () => {
      const row = await deliveryOf(cp.context, 'second');
      return row.status === 'delivered' ? row : undefined;
    });
    await sleep(1500);
    const firstRequests = receiver.received.filter((r) => r.body?.error === 'first');
    const secondRequests = receiver.received.filter((r) => r.body?.error === 'second');
    expect(firstRequests).toHaveLength(2);
    expect(secondRequests).toHaveLength(1);
    expect(firstRequests.map((r) => r.headers['x-service-event-id'])).toEqual([
      first.event_id,
      first.event_id,
    ]);
    expect(secondRequests[0]?.headers['x-service-event-id']).toBe(second.event_id);
    expect(first.event_id).not.toBe(second.event_id);
    for (const request of [...firstRequests, ...secondRequests]) {
      expect(signatureValid(secret, request)).toBe(true);
    }
    expect(first.attempt_count).toBe(2);
    expect(second.attempt_count).toBe(1);
    await stop();
  });

  it('retries with the same event id when a lease runs out mid-attempt (at least once)', async () => {
    const cp = await start(['api'], { REPLIX_WEBHOOK_TIMEOUT_MS: '1500' });
    const accountId = await insertAccount(cp);
    const { id: databaseId } = await insertDatabase(cp, { accountId }, { status: 'running' });
    const subscriptionId = await insertWebhookSubscription(
      cp,
      { accountId },
      databaseId,
      receiver.url('/lease'),
    );
    receiver.answers = ['hang'];
    const slow = await startWebhookDeliverer(cp.context);
    await emitBuildFailed(cp.context, accountId, databaseId, 'lease');
    await eventually(async () => receiver.received.some((r) => r.path === '/lease'));
    // As if the slow deliverer's process had died: its lease runs out, another takes over.
    await cp.context.db
      .updateTable('webhook_deliveries')
      .set({ lease_until: new Date(Date.now() - 60_000) })
      .where('subscription_id', '=', subscriptionId)
      .execute();
    const other = await startWebhookDeliverer({ ...cp.context, processId: 'another-process' });
    const row = await eventually(async () => {
      const delivery = await cp.context.db
        .selectFrom('webhook_deliveries')
        .selectAll()
        .where('subscription_id', '=', subscriptionId)
        .executeTakeFirstOrThrow();
      return delivery.status === 'delivered' ? delivery : undefined;
    });
    await slow.close(); // Its attempt times out; the delivered state stands.
    await other.close();
    const requests = receiver.received.filter((r) => r.path === '/lease');
    expect(requests).toHaveLength(2);
    expect(new Set(requests.map((r) => r.headers['x-service-event-id']))).toEqual(
      new Set([row.event_id]),
    );
    const after = await cp.context.db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('id', '=', row.id)
      .executeTakeFirstOrThrow();
    expect(after).toMatchObject({ status: 'delivered', attempt_count: 1, last_status_code: 200 });
    const attempts = await cp.context.db
      .selectFrom('webhook_attempts')
      .selectAll()
      .where('delivery_id', '=', row.id)
      .orderBy('seq')
      .execute();
    expect(attempts.map((a) => [a.status_code, a.succeeded])).toEqual([
      [200, true],
      [null, false],
    ]);
    await stop();
  });
});

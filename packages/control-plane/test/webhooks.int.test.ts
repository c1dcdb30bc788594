import { Webhook as StandardWebhook, WebhookVerificationError } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MAX_ATTEMPTS } from '../src/application/webhook-delivery/retry-schedule.ts';
import { startWebhookDeliverer } from '../src/application/webhook-delivery/webhook-deliverer.ts';
import type { RunningRole } from '../src/roles/role.ts';
import {
  EMBEDDED_STORE,
  startTestControlPlane,
  type TestControlPlane,
} from './control-plane-harness.ts';
import { type Caller, caller, insertDatabase } from './lifecycle-fixtures.ts';
import { eventually } from './reconciler-fixtures.ts';
import { signatureValid, TestReceiver } from './webhook-test-receiver.ts';

const TIMEOUT_MS = 1000;

describe.each(EMBEDDED_STORE)('webhooks on the %s store', (kind) => {
  let cp: TestControlPlane;
  let receiver: TestReceiver;
  let deliverer: RunningRole | undefined;
  let owner: Caller;
  let databaseId: string;
  let databaseName: string;

  beforeAll(async () => {
    receiver = await TestReceiver.start();
    cp = await startTestControlPlane(kind, {
      env: {
        REPLIX_WEBHOOKS_ALLOW_LOCAL: '1',
        REPLIX_WEBHOOKS_CA_FILE: receiver.caFile,
        REPLIX_WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
        // 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h → 0.25 ms … 1.8 s.
        REPLIX_WEBHOOK_RETRY_SCALE: '0.00005',
        REPLIX_WEBHOOK_POLL_MS: '50',
      },
    });
    owner = await caller(cp, `hooks-${kind}@example.com`, 'pro');
  });
  // A database per test, so each event goes to that test's subscriptions only.
  beforeEach(async () => {
    databaseName = `shop-${Math.random().toString(36).slice(2, 8)}`;
    databaseId = (await insertDatabase(cp, owner, { status: 'running', name: databaseName })).id;
    receiver.answers = [];
  });
  afterAll(async () => {
    await deliverer?.close();
    await cp?.close();
    await receiver?.close();
  });

  const startDeliverer = async () => {
    deliverer ??= await startWebhookDeliverer(cp.context);
  };

  const subscribe = async (eventTypes: string[], path = '/hooks') => {
    const response = await cp.request('POST', `/v1/databases/${databaseId}/webhooks`, {
      token: owner.token,
      body: { url: receiver.url(path), eventTypes, description: 'test' },
    });
    expect(response.status).toBe(201);
    return response.body as { id: string; secret: string; standardWebhooksSecret: string };
  };

  const emit = (type: 'build.completed' | 'build.failed', fields: Record<string, unknown>) =>
    cp.context.db.transaction().execute((tx) =>
      cp.context.events.emit(tx, {
        type,
        accountId: owner.accountId,
        databaseId,
        databaseName,
        fields,
        message: 'test',
        severity: 'info',
      }),
    );

  const deliveries = async (webhookId: string) => {
    const response = await cp.request(
      'GET',
      `/v1/databases/${databaseId}/webhooks/${webhookId}/deliveries`,
      { token: owner.token },
    );
    expect(response.status).toBe(200);
    return response.body as Array<Record<string, unknown> & { id: string; status: string }>;
  };

  const settled = (webhookId: string, count = 1) =>
    eventually(
      async () => {
        const list = await deliveries(webhookId);
        return list.length >= count &&
          list.every((d) => d.status === 'delivered' || d.status === 'failed')
          ? list
          : undefined;
      },
      30_000,
      'the deliveries to settle',
    );

  it('creates a subscription, shows its secret once and keeps it sealed', async () => {
    const response = await cp.request('POST', `/v1/databases/${databaseId}/webhooks`, {
      token: owner.token,
      body: { url: receiver.url('/created'), eventTypes: ['build.completed', 'build.failed'] },
    });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      id: expect.any(String),
      databaseId,
      url: receiver.url('/created'),
      eventTypes: ['build.completed', 'build.failed'],
      description: null,
      createdAt: expect.any(String),
      secret: expect.stringMatching(/^[0-9a-f]{64}$/),
      standardWebhooksSecret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    // One secret in two forms: the Standard Webhooks one carries the hex one's 32 bytes.
    const { standardWebhooksSecret: standard } = response.body as Record<string, string>;
    expect(Buffer.from((standard as string).slice(6), 'base64').toString('hex')).toBe(
      (response.body as Record<string, string>).secret,
    );
    const list = await cp.request('GET', `/v1/databases/${databaseId}/webhooks`, {
      token: owner.token,
    });
    expect(list.status).toBe(200);
    const { secret, standardWebhooksSecret, ...record } = response.body;
    expect(list.body).toContainEqual(record);
    expect(JSON.stringify(list.body)).not.toContain(secret);
    expect(JSON.stringify(list.body)).not.toContain(standardWebhooksSecret);
    const row = await cp.context.db
      .selectFrom('webhook_subscriptions')
      .selectAll()
      .where('id', '=', record.id)
      .executeTakeFirstOrThrow();
    expect(row.secret_enc).not.toContain(secret);
    expect(cp.context.secrets.open(row.secret_enc)).toBe(secret);
    const audit = await cp.context.db
      .selectFrom('audit_events')
      .selectAll()
      .where('entity_id', '=', record.id)
      .execute();
    expect(audit.map((event) => event.event_type)).toEqual(['webhook.created']);
    expect(JSON.stringify(audit)).not.toContain(secret);
    expect(JSON.stringify(audit)).not.toContain(standardWebhooksSecret);
  });

  it('rejects unknown and missing event types and bad URLs with validation_failed', async () => {
    for (const body of [
      { url: receiver.url(), eventTypes: ['build.exploded'] },
      { url: receiver.url(), eventTypes: ['webhook.test'] },
      { url: receiver.url(), eventTypes: [] },
      { url: receiver.url() },
      { url: 'not a url', eventTypes: ['build.failed'] },
      { url: 'ftp://127.0.0.1/x', eventTypes: ['build.failed'] },
      { url: 'https://user:pw@127.0.0.1/x', eventTypes: ['build.failed'] },
    ]) {
      const response = await cp.request('POST', `/v1/databases/${databaseId}/webhooks`, {
        token: owner.token,
        body,
      });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body).toEqual({ error: 'validation_failed', message: expect.any(String) });
    }
    const unknown = await cp.request('POST', `/v1/databases/${databaseId}/webhooks`, {
      token: owner.token,
      body: { url: receiver.url(), eventTypes: ['build.exploded'] },
    });
    expect(unknown.body.message).toContain('eventTypes');
  });

  it('answers 401 without a token and 404 for another account', async () => {
    const { id } = await subscribe(['build.failed']);
    const other = await caller(cp, `other-${kind}@example.com`, 'pro');
    const paths: Array<[string, string]> = [
      ['GET', `/v1/databases/${databaseId}/webhooks`],
      ['POST', `/v1/databases/${databaseId}/webhooks`],
      ['DELETE', `/v1/databases/${databaseId}/webhooks/${id}`],
      ['GET', `/v1/databases/${databaseId}/webhooks/${id}/deliveries`],
      ['POST', `/v1/databases/${databaseId}/webhooks/${id}/test`],
      [
        'POST',
        `/v1/databases/${databaseId}/webhooks/${id}/deliveries/00000000-0000-4000-8000-000000000000/retry`,
      ],
    ];
    for (const [method, path] of paths) {
      const body =
        method === 'POST' ? { url: receiver.url(), eventTypes: ['build.failed'] } : undefined;
      const anonymous = await cp.request(method, path, { body });
      expect(anonymous.status, `${method} ${path}`).toBe(401);
      const foreign = await cp.request(method, path, { token: other.token, body });
      expect(foreign.status, `${method} ${path}`).toBe(404);
      expect(foreign.body.error).toBe('not_found');
    }
    // The subscription is untouched.
    const list = await cp.request('GET', `/v1/databases/${databaseId}/webhooks`, {
      token: owner.token,
    });
    expect(list.body.map((w: { id: string }) => w.id)).toContain(id);
  });

  it('delivers a platform event, signed, to the subscriptions of its type only', async () => {
    const completed = await subscribe(['build.completed'], '/completed');
    const failedOnly = await subscribe(['build.failed'], '/failed-only');
    await startDeliverer();
    await emit('build.completed', { endpointUrl: 'https://shop.example.com' });
    const [delivery] = await settled(completed.id);
    const [request, ...more] = receiver.received.filter((r) => r.path === '/completed');
    expect(more).toEqual([]);
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.headers['x-service-event']).toBe('build.completed');
    expect(request?.headers['x-service-event-id']).toMatch(/^evt_[0-9a-f-]{36}$/);
    expect(signatureValid(completed.secret, request as never)).toBe(true);
    expect(signatureValid(failedOnly.secret, request as never)).toBe(false);
    // The Standard Webhooks headers verify with that standard's own library.
    expect(request?.headers['webhook-id']).toBe(request?.headers['x-service-event-id']);
    const verified = new StandardWebhook(completed.standardWebhooksSecret).verify(
      request?.raw as string,
      request?.headers as Record<string, string>,
    );
    expect(verified).toEqual(request?.body);
    expect(() =>
      new StandardWebhook(failedOnly.standardWebhooksSecret).verify(
        request?.raw as string,
        request?.headers as Record<string, string>,
      ),
    ).toThrow(WebhookVerificationError);
    expect(Object.keys(request?.body).sort()).toEqual([
      'databaseId',
      'databaseName',
      'endpointUrl',
      'timestamp',
    ]);
    expect(request?.body).toEqual({
      databaseId,
      databaseName,
      endpointUrl: 'https://shop.example.com',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    expect(delivery).toEqual({
      id: expect.any(String),
      subscriptionId: completed.id,
      eventId: request?.headers['x-service-event-id'],
      eventType: 'build.completed',
      status: 'delivered',
      attemptCount: 1,
      lastAttemptAt: expect.any(String),
      lastStatusCode: 200,
      deliveredAt: expect.any(String),
      createdAt: expect.any(String),
      attempts: [
        {
          attempt: 1,
          attemptedAt: expect.any(String),
          durationMs: expect.any(Number),
          statusCode: 200,
          succeeded: true,
        },
      ],
    });
    expect(await deliveries(failedOnly.id)).toEqual([]);
  });

  it('retries after 500s and timeouts with the same event id, then delivers', async () => {
    const hook = await subscribe(['build.failed'], '/flaky');
    await startDeliverer();
    receiver.answers = [500, 'hang', 503, 200];
    await emit('build.failed', { error: 'boom' });
    const [delivery] = await settled(hook.id);
    const requests = receiver.received.filter((r) => r.body?.error === 'boom');
    expect(requests).toHaveLength(4);
    const eventIds = new Set(requests.map((r) => r.headers['x-service-event-id']));
    expect([...eventIds]).toEqual([delivery?.eventId]);
    for (const request of requests) {
      expect(signatureValid(hook.secret, request)).toBe(true);
      expect(request.headers['webhook-id']).toBe(delivery?.eventId);
      const standard = new StandardWebhook(hook.standardWebhooksSecret);
      expect(standard.verify(request.raw, request.headers as Record<string, string>)).toEqual(
        request.body,
      );
      expect(request.raw).toBe(requests[0]?.raw);
    }
    expect(delivery).toMatchObject({
      status: 'delivered',
      attemptCount: 4,
      lastStatusCode: 200,
    });
    expect(delivery?.lastError).toBeUndefined();
    expect(delivery?.nextAttemptAt).toBeUndefined();
    const attempts = delivery?.attempts as Array<Record<string, unknown>>;
    expect(attempts.map((a) => [a.attempt, a.statusCode, a.succeeded])).toEqual([
      [4, 200, true],
      [3, 503, false],
      [2, undefined, false],
      [1, 500, false],
    ]);
    expect(attempts[2]?.error).toBe('No response within 1 s.');
    expect(attempts[1]?.error).toBe('The endpoint answered HTTP 503.');
    expect(attempts[2]?.durationMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
  });

  it('does not follow redirects, and fails for good when the schedule runs out', async () => {
    const hook = await subscribe(['build.failed'], '/gone');
    await startDeliverer();
    receiver.answers = [302, ...new Array(MAX_ATTEMPTS - 1).fill(500)];
    await emit('build.failed', { error: 'never' });
    const [delivery] = await settled(hook.id);
    expect(receiver.received.filter((r) => r.body?.error === 'never')).toHaveLength(MAX_ATTEMPTS);
    expect(receiver.received.filter((r) => r.path === '/elsewhere')).toEqual([]);
    expect(delivery).toMatchObject({
      status: 'failed',
      attemptCount: MAX_ATTEMPTS,
      lastStatusCode: 500,
      lastError: 'The endpoint answered HTTP 500.',
    });
    expect(delivery?.nextAttemptAt).toBeUndefined();
    expect(delivery?.deliveredAt).toBeUndefined();
    const first = (delivery?.attempts as Array<Record<string, unknown>> | undefined)?.at(-1);
    expect(first).toMatchObject({
      attempt: 1,
      statusCode: 302,
      error: 'The endpoint answered HTTP 302; redirects are not followed.',
    });
    const audit = await cp.context.db
      .selectFrom('audit_events')
      .selectAll()
      .where('entity_id', '=', delivery?.id as string)
      .execute();
    expect(audit.map((e) => e.event_type)).toEqual(['webhook_delivery.failed']);

    // Retry now: one more attempt, which succeeds.
    const retried = await cp.request(
      'POST',
      `/v1/databases/${databaseId}/webhooks/${hook.id}/deliveries/${delivery?.id}/retry`,
      { token: owner.token },
    );
    expect(retried.status).toBe(202);
    expect(retried.body).toMatchObject({ id: delivery?.id, status: 'retrying' });
    const [after] = await settled(hook.id);
    expect(after).toMatchObject({ status: 'delivered', attemptCount: MAX_ATTEMPTS + 1 });
    const all = receiver.received.filter((r) => r.body?.error === 'never');
    expect(new Set(all.map((r) => r.headers['x-service-event-id'])).size).toBe(1);
    // A delivered one is not retried.
    const again = await cp.request(
      'POST',
      `/v1/databases/${databaseId}/webhooks/${hook.id}/deliveries/${delivery?.id}/retry`,
      { token: owner.token },
    );
    expect(again.status).toBe(409);
    expect(again.body.error).toBe('conflict');
  });

  it('sends a test event on request', async () => {
    const hook = await subscribe(['instance.recovered'], '/test-event');
    await startDeliverer();
    const response = await cp.request(
      'POST',
      `/v1/databases/${databaseId}/webhooks/${hook.id}/test`,
      { token: owner.token },
    );
    expect(response.status).toBe(202);
    expect(response.body).toMatchObject({
      subscriptionId: hook.id,
      eventType: 'webhook.test',
      status: 'pending',
      attemptCount: 0,
      attempts: [],
    });
    const [delivery] = await settled(hook.id);
    expect(delivery).toMatchObject({ id: response.body.id, status: 'delivered' });
    const [request] = receiver.withEventId(response.body.eventId);
    expect(request?.headers['x-service-event']).toBe('webhook.test');
    expect(signatureValid(hook.secret, request as never)).toBe(true);
    expect(request?.body).toEqual({
      databaseId,
      databaseName,
      webhookId: hook.id,
      timestamp: expect.any(String),
    });
  });

  it('lists the last 50 deliveries, newest first', async () => {
    // No deliverer for this subscription's URL matters: the list is read from the store.
    const hook = await subscribe(['build.failed'], '/history');
    const ids: string[] = [];
    for (let i = 0; i < 55; i++) {
      const response = await cp.request(
        'POST',
        `/v1/databases/${databaseId}/webhooks/${hook.id}/test`,
        { token: owner.token },
      );
      ids.push(response.body.id);
    }
    const list = await deliveries(hook.id);
    expect(list).toHaveLength(50);
    expect(list.map((d) => d.id)).toEqual(ids.slice(5).reverse());
  });

  it('deletes a subscription with its deliveries; events no longer reach it', async () => {
    const hook = await subscribe(['build.failed'], '/deleted');
    await cp.request('POST', `/v1/databases/${databaseId}/webhooks/${hook.id}/test`, {
      token: owner.token,
    });
    const deleted = await cp.request('DELETE', `/v1/databases/${databaseId}/webhooks/${hook.id}`, {
      token: owner.token,
    });
    expect(deleted.status).toBe(204);
    const gone = await cp.request(
      'GET',
      `/v1/databases/${databaseId}/webhooks/${hook.id}/deliveries`,
      { token: owner.token },
    );
    expect(gone.status).toBe(404);
    const again = await cp.request('DELETE', `/v1/databases/${databaseId}/webhooks/${hook.id}`, {
      token: owner.token,
    });
    expect(again.status).toBe(404);
    const left = await cp.context.db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('subscription_id', '=', hook.id)
      .execute();
    expect(left).toEqual([]);
    const audit = await cp.context.db
      .selectFrom('audit_events')
      .select('event_type')
      .where('entity_id', '=', hook.id)
      .orderBy('seq')
      .execute();
    expect(audit.map((e) => e.event_type)).toEqual([
      'webhook.created',
      'webhook.tested',
      'webhook.deleted',
    ]);
  });
});

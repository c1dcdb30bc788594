import { type ChildProcess, spawn } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { freePort } from '@replix/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebhookDeliverer } from '../src/application/webhook-delivery/webhook-deliverer.ts';
import type { RunningRole } from '../src/roles/role.ts';
import { startTestControlPlane, type TestControlPlane } from './control-plane-harness.ts';
import { caller, insertDatabase } from './lifecycle-fixtures.ts';
import { eventually } from './reconciler-fixtures.ts';

const RECEIVER = fileURLToPath(
  new URL('../../../examples/webhook-receiver/receiver.mjs', import.meta.url),
);

/** The example receiver as its README runs it, and the lines it printed. */
async function startExample(secret: string, port: number) {
  const child: ChildProcess = spawn(process.execPath, [RECEIVER], {
    env: { PATH: process.env.PATH ?? '', WEBHOOK_SECRET: secret, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Array<Record<string, unknown>> = [];
  let buffered = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const parts = buffered.split('\n');
    buffered = parts.pop() ?? '';
    for (const line of parts) if (line.trim()) lines.push(JSON.parse(line));
  });
  await eventually(async () => lines.some((line) => line.event === 'listening'), 10_000);
  return { child, lines, url: `http://127.0.0.1:${port}/` };
}

/** Signs like spec §6 says, independently of the control plane's code. */
function sign(secret: string, t: number, body: string): string {
  return `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}`;
}

describe('the webhook receiver example', () => {
  let cp: TestControlPlane;
  let example: Awaited<ReturnType<typeof startExample>>;
  let deliverer: RunningRole;
  let secret: string;
  let databaseId: string;
  let webhookId: string;
  let token: string;

  beforeAll(async () => {
    // Local development settings: http:// to 127.0.0.1, as the example's README describes.
    cp = await startTestControlPlane('pglite', {
      env: { REPLIX_WEBHOOKS_ALLOW_LOCAL: '1', REPLIX_WEBHOOK_POLL_MS: '50' },
    });
    const owner = await caller(cp, 'example@example.com', 'pro');
    token = owner.token;
    databaseId = (await insertDatabase(cp, owner, { status: 'running', name: 'shop' })).id;
    const port = await freePort();
    const created = await cp.request('POST', `/v1/databases/${databaseId}/webhooks`, {
      token,
      body: { url: `http://127.0.0.1:${port}/`, eventTypes: ['build.completed'] },
    });
    expect(created.status).toBe(201);
    secret = created.body.secret;
    webhookId = created.body.id;
    example = await startExample(secret, port);
    deliverer = await startWebhookDeliverer(cp.context);
  });
  afterAll(async () => {
    await deliverer?.close();
    example?.child.kill();
    await cp?.close();
  });

  const post = (body: string, headers: Record<string, string>) =>
    fetch(example.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });

  it('accepts a real delivery from the control plane', async () => {
    const { account_id: accountId } = await cp.context.db
      .selectFrom('databases')
      .select('account_id')
      .where('id', '=', databaseId)
      .executeTakeFirstOrThrow();
    await cp.context.db.transaction().execute((tx) =>
      cp.context.events.emit(tx, {
        type: 'build.completed',
        accountId,
        databaseId,
        databaseName: 'shop',
        fields: { endpointUrl: 'https://shop.example.com' },
        message: 'm',
        severity: 'success',
      }),
    );
    const line = await eventually(
      async () => example.lines.find((l) => l.type === 'build.completed'),
      20_000,
    );
    expect(line).toEqual({
      id: expect.stringMatching(/^evt_/),
      type: 'build.completed',
      payload: {
        databaseId,
        databaseName: 'shop',
        endpointUrl: 'https://shop.example.com',
        timestamp: expect.any(String),
      },
    });
    const deliveries = await cp.request(
      'GET',
      `/v1/databases/${databaseId}/webhooks/${webhookId}/deliveries`,
      { token },
    );
    expect(deliveries.body[0]).toMatchObject({ status: 'delivered', lastStatusCode: 204 });
  });

  it('refuses a tampered body, an old or future timestamp, a wrong secret and no signature', async () => {
    const body = JSON.stringify({ databaseId, databaseName: 'shop', timestamp: 'now' });
    const now = Math.floor(Date.now() / 1000);
    const headers = (signature: string) => ({
      'x-service-event': 'build.completed',
      'x-service-event-id': `evt_${crypto.randomUUID()}`,
      'x-service-signature': signature,
    });
    const tampered = await post(body.replace('shop', 'shoq'), headers(sign(secret, now, body)));
    expect(tampered.status).toBe(400);
    expect(await tampered.json()).toEqual({ error: 'signature mismatch' });
    // A minute past the 5-minute tolerance either way, so a slow machine cannot bring it back in.
    const old = await post(body, headers(sign(secret, now - 360, body)));
    expect(old.status).toBe(400);
    expect(await old.json()).toEqual({ error: 'timestamp outside tolerance' });
    const future = await post(body, headers(sign(secret, now + 360, body)));
    expect(future.status).toBe(400);
    const wrong = await post(body, headers(sign(randomBytes(32).toString('hex'), now, body)));
    expect(wrong.status).toBe(400);
    const unsigned = await post(body, { 'x-service-event': 'build.completed' });
    expect(unsigned.status).toBe(400);
    // Within the tolerance, it is accepted; the same event id again is answered but handled once.
    const good = headers(sign(secret, now - 120, body));
    expect((await post(body, good)).status).toBe(204);
    expect((await post(body, good)).status).toBe(204);
    await eventually(async () => example.lines.some((l) => l.id === good['x-service-event-id']));
    expect(example.lines.filter((l) => l.id === good['x-service-event-id'])).toHaveLength(1);
  });
});

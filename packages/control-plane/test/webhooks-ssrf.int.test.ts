import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_ATTEMPTS } from '../src/application/webhook-delivery/retry-schedule.ts';
import { startWebhookDeliverer } from '../src/application/webhook-delivery/webhook-deliverer.ts';
import type { RunningRole } from '../src/roles/role.ts';
import {
  EMBEDDED_STORE,
  startTestControlPlane,
  type TestControlPlane,
} from './control-plane-harness.ts';
import {
  type Caller,
  caller,
  insertDatabase,
  insertWebhookSubscription,
} from './lifecycle-fixtures.ts';
import { eventually } from './reconciler-fixtures.ts';
import { TestReceiver } from './webhook-test-receiver.ts';

/** One address of each blocked range, as a URL host. */
const BLOCKED_URLS: Array<[string, string]> = [
  ['https://127.0.0.1/hook', 'loopback'],
  ['https://127.1.2.3:8443/hook', 'loopback'],
  ['https://[::1]/hook', 'loopback'],
  ['https://localhost/hook', 'loopback'],
  ['https://10.0.0.1/hook', 'private'],
  ['https://172.16.5.4/hook', 'private'],
  ['https://192.168.1.1/hook', 'private'],
  ['https://[fc00::1]/hook', 'private'],
  ['https://[fd00:ec2::254]/hook', 'private'],
  ['https://169.254.169.254/latest/meta-data/', 'link-local'],
  ['https://[fe80::1]/hook', 'link-local'],
  ['https://100.64.0.1/hook', 'shared (CGNAT)'],
  ['https://0.0.0.0/hook', 'unspecified'],
  ['https://[::]/hook', 'unspecified'],
  ['https://224.0.0.1/hook', 'multicast'],
  ['https://[ff02::1]/hook', 'multicast'],
  ['https://[::ffff:127.0.0.1]/hook', 'loopback'],
  ['https://[::ffff:169.254.169.254]/hook', 'link-local'],
  ['https://[::ffff:10.0.0.1]/hook', 'private'],
  ['https://[64:ff9b::127.0.0.1]/hook', 'loopback'],
  // IPv6 forms a gateway translates to IPv4: local-use NAT64, 6to4, Teredo, SIIT.
  ['https://[64:ff9b:1::a00:1]/hook', 'translated (IPv6 to IPv4)'],
  ['https://[0064:FF9B:0001:0000:0000:0000:8.8.8.8]/hook', 'translated (IPv6 to IPv4)'],
  ['https://[2002:7f00:1::1]/hook', 'translated (IPv6 to IPv4)'],
  ['https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/hook', 'translated (IPv6 to IPv4)'],
  ['https://[::ffff:0:127.0.0.1]/hook', 'translated (IPv6 to IPv4)'],
  ['https://[::8.8.8.8]/hook', 'reserved'],
  // Numeric forms the URL parser turns into 127.0.0.1.
  ['https://2130706433/hook', 'loopback'],
  ['https://0x7f.1/hook', 'loopback'],
];

describe.each(EMBEDDED_STORE)('webhook SSRF protection on the %s store', (kind) => {
  let cp: TestControlPlane;
  let receiver: TestReceiver;
  let owner: Caller;
  let databaseId: string;

  beforeAll(async () => {
    receiver = await TestReceiver.start();
    // The production setting: no REPLIX_WEBHOOKS_ALLOW_LOCAL.
    cp = await startTestControlPlane(kind, {
      env: {
        REPLIX_WEBHOOKS_CA_FILE: receiver.caFile,
        REPLIX_WEBHOOK_TIMEOUT_MS: '1000',
        REPLIX_WEBHOOK_RETRY_SCALE: '0.00001',
        REPLIX_WEBHOOK_POLL_MS: '50',
      },
    });
    owner = await caller(cp, `ssrf-${kind}@example.com`, 'pro');
    databaseId = (await insertDatabase(cp, owner, { status: 'running' })).id;
  });
  afterAll(async () => {
    await cp?.close();
    await receiver?.close();
  });

  const create = (url: string) =>
    cp.request('POST', `/v1/databases/${databaseId}/webhooks`, {
      token: owner.token,
      body: { url, eventTypes: ['build.failed'] },
    });

  it.each(BLOCKED_URLS)('refuses to register %s (%s)', async (url, reason) => {
    const response = await create(url);
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      error: 'validation_failed',
      message: `The url resolves to a ${reason} address; webhooks are only sent to public addresses.`,
    });
  });

  it('refuses http://, and hosts that do not resolve', async () => {
    const http = await create('http://93.184.215.14/hook');
    expect(http.status).toBe(400);
    expect(http.body.message).toBe('url must use https://.');
    const unresolvable = await create('https://nothing-here.invalid/hook');
    expect(unresolvable.status).toBe(400);
    expect(unresolvable.body.message).toBe(
      'The host nothing-here.invalid of the url could not be resolved.',
    );
  });

  it('accepts a public address (nothing is sent at registration)', async () => {
    const response = await create('https://93.184.215.14/hook');
    expect(response.status).toBe(201);
    expect(response.body.url).toBe('https://93.184.215.14/hook');
  });

  it('checks again at every attempt: a URL that now resolves to a blocked address is not sent to', async () => {
    // Subscriptions whose hosts resolve to loopback now (as if DNS changed after registration),
    // written straight to the store: registration would refuse them.
    const urls = [receiver.url('/now-loopback'), `https://localhost:${receiver.port}/now-local`];
    const ids: string[] = [];
    for (const url of urls) {
      ids.push(await insertWebhookSubscription(cp, owner, databaseId, url));
    }
    let deliverer: RunningRole | undefined;
    try {
      deliverer = await startWebhookDeliverer(cp.context);
      await cp.context.db.transaction().execute((tx) =>
        cp.context.events.emit(tx, {
          type: 'build.failed',
          accountId: owner.accountId,
          databaseId,
          databaseName: 'x',
          fields: { error: 'e' },
          message: 'm',
          severity: 'error',
        }),
      );
      for (const id of ids) {
        const [delivery] = await eventually(
          async () => {
            const response = await cp.request(
              'GET',
              `/v1/databases/${databaseId}/webhooks/${id}/deliveries`,
              { token: owner.token },
            );
            return response.body?.[0]?.status === 'failed' ? response.body : undefined;
          },
          30_000,
          'the delivery to fail',
        );
        expect(delivery).toMatchObject({
          status: 'failed',
          attemptCount: MAX_ATTEMPTS,
          lastError:
            'Not sent: The url resolves to a loopback address; webhooks are only sent to public addresses.',
        });
        expect(delivery.lastStatusCode).toBeUndefined();
      }
      expect(receiver.received).toEqual([]);
    } finally {
      await deliverer?.close();
    }
  });
});

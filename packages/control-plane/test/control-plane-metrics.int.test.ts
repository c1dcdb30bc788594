import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from './control-plane-harness.ts';
import { insertAccount, insertDatabase } from './lifecycle-fixtures.ts';
import { eventually, goal } from './reconciler-fixtures.ts';

const TOKEN = 'scrape-token-of-the-test-0123456789';

async function scrape(
  url: string,
  authorization?: string,
): Promise<{ status: number; type: string | null; text: string }> {
  const response = await fetch(`${url}/metrics`, {
    ...(authorization ? { headers: { authorization } } : {}),
  });
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    text: await response.text(),
  };
}

/** The value of one sample line of an exposition text, or undefined when it is not there. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('/metrics with the scrape token', () => {
  let plane: TestControlPlane;
  beforeAll(async () => {
    plane = await startTestControlPlane('pglite', {
      roles: ['api', 'reconciler'],
      env: { REPLIX_METRICS_TOKEN: TOKEN, REPLIX_PROBE_PORT: '0' },
    });
  }, 60_000);
  afterAll(() => plane?.close());

  it('refuses a scrape without the token, or with another, in the envelope', async () => {
    for (const authorization of [undefined, 'Bearer wrong-token', `Basic ${TOKEN}`, TOKEN]) {
      const answer = await scrape(plane.url, authorization);
      expect({ authorization, status: answer.status, body: JSON.parse(answer.text) }).toEqual({
        authorization,
        status: 401,
        body: { error: 'unauthorized', message: 'The metrics scrape token is required.' },
      });
    }
    // Nor does the token of an API user open it.
    const userToken = await plane.token('metrics-user@example.com');
    expect((await scrape(plane.url, `Bearer ${userToken}`)).status).toBe(401);
  });

  it('counts requests by route template, method and status class, never by the URL asked', async () => {
    const userToken = await plane.token('requests@example.com');
    for (let i = 0; i < 3; i++)
      await plane.request('GET', `/v1/databases/${randomUUID()}`, { token: userToken });
    await plane.request('GET', `/no/such/${randomUUID()}`);
    const { status, type, text } = await scrape(plane.url, `Bearer ${TOKEN}`);
    expect(status).toBe(200);
    expect(type).toMatch(/^text\/plain; version=0\.0\.4/);
    const route = text.match(/route="\/v1\/databases\/[^"]*"/)?.[0];
    expect(route).toBe('route="/v1/databases/:id"');
    expect(
      sample(
        text,
        'replix_control_plane_http_requests_total{route="/v1/databases/:id",method="GET",status_class="4xx"}',
      ),
    ).toBe(3);
    expect(
      sample(
        text,
        'replix_control_plane_http_requests_total{route="unmatched",method="GET",status_class="4xx"}',
      ),
    ).toBe(1);
    expect(
      sample(
        text,
        'replix_control_plane_http_request_duration_seconds_count{route="/v1/databases/:id",method="GET"}',
      ),
    ).toBe(3);
    expect(text).not.toMatch(/route="\/no\/such/);
  });

  it('reads instances by health and the goal queue from the store at the scrape', async () => {
    const store = { context: { db: plane.store.db, secrets: plane.context.secrets } };
    const accountId = await insertAccount(store);
    const waiting = await insertDatabase(store, { accountId }, { status: 'running' });
    const other = await insertDatabase(store, { accountId }, { status: 'running' });
    await plane.store.db
      .insertInto('instances')
      .values([
        {
          id: randomUUID(),
          database_id: waiting.id,
          driver: 'process',
          control_key_id: 'k1',
          health_status: 'unreachable',
        },
        {
          id: randomUUID(),
          database_id: other.id,
          driver: 'process',
          control_key_id: 'k2',
          health_status: null,
        },
      ])
      .execute();
    // A goal nobody could claim for two minutes: its lease held by a reconciler long gone.
    await plane.store.db
      .updateTable('databases')
      .set({
        goal: JSON.stringify(goal('pause', 'running')),
        status: 'pausing',
        updated_at: new Date(Date.now() - 120_000),
        lease_owner: 'gone',
        lease_until: new Date(Date.now() - 100_000),
      })
      .where('id', '=', waiting.id)
      .execute();
    // Read before the reconciler claims it (it runs every 200 ms): a claimed goal is not waiting.
    const { text } = await scrape(plane.url, `Bearer ${TOKEN}`);
    expect(sample(text, 'replix_control_plane_instances{health="unreachable"}')).toBe(1);
    expect(sample(text, 'replix_control_plane_instances{health="unknown"}')).toBe(1);
    expect(sample(text, 'replix_control_plane_instances{health="ok"}')).toBe(0);
    expect(sample(text, 'replix_control_plane_store_read_ok')).toBe(1);
    const lag = sample(text, 'replix_control_plane_reconciler_lag_seconds') ?? 0;
    const waitingGoals = sample(text, 'replix_control_plane_goals_waiting') ?? 0;
    // Either the scrape came first (the goal waited ~100 s) or the reconciler did (none waits).
    expect(waitingGoals === 1 ? lag >= 99 && lag < 200 : lag === 0).toBe(true);
  });

  it('counts a goal the reconciler finished by action and outcome, on the probe listener too', async () => {
    const store = { context: { db: plane.store.db, secrets: plane.context.secrets } };
    const accountId = await insertAccount(store);
    // A database never deployed: its terminate has nothing to stop and finishes at once.
    await insertDatabase(
      store,
      { accountId },
      {
        status: 'terminating',
        goal: goal('terminate', 'draft'),
      },
    );
    const series =
      'replix_control_plane_goals_finished_total{action="terminate",outcome="succeeded"}';
    const text = await eventually(async () => {
      const answer = await scrape(plane.probeUrl as string, `Bearer ${TOKEN}`);
      return (sample(answer.text, series) ?? 0) >= 1 ? answer.text : undefined;
    });
    expect(sample(text, series)).toBe(1);
    expect(
      sample(
        text,
        'replix_control_plane_goal_duration_seconds_count{action="terminate",outcome="succeeded"}',
      ),
    ).toBe(1);
    expect(sample(text, 'replix_control_plane_webhook_attempts_total{outcome="failed"}')).toBe(0);
    expect((await scrape(plane.probeUrl as string)).status).toBe(401);
  });
});

describe('/metrics without a scrape token configured', () => {
  let plane: TestControlPlane;
  beforeAll(async () => {
    plane = await startTestControlPlane('pglite', { env: { REPLIX_PROBE_PORT: '0' } });
  }, 60_000);
  afterAll(() => plane?.close());

  it('does not exist, on the API port or the probe listener', async () => {
    for (const url of [plane.url, plane.probeUrl as string]) {
      const answer = await scrape(url, `Bearer ${TOKEN}`);
      expect({ status: answer.status, body: JSON.parse(answer.text) }).toEqual({
        status: 404,
        body: { error: 'not_found', message: 'Metrics are off: REPLIX_METRICS_TOKEN is not set.' },
      });
    }
  });
});

import { randomUUID } from 'node:crypto';
import type { RunningInstance } from '@replix/instance';
import { deriveApiKey, newKeyId } from '@replix/instance-protocol';
import type { TestDatabase } from '@replix/testkit';
import { testMariaDb } from '@replix/testkit/vitest';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  POSTGRES_STORE,
  startTestControlPlane,
  type TestControlPlane,
} from './control-plane-harness.ts';
import {
  type Caller,
  caller,
  insertBuild,
  insertDatabase,
  insertInstance,
  startRealInstance,
} from './lifecycle-fixtures.ts';

const ACTION_PATHS = [
  'provision',
  'rebuild',
  'reconfigure',
  'redeploy',
  'resize',
  'pause',
  'resume',
  'terminate',
  'reload',
  'pause-replication',
  'resume-replication',
  'cancel-goal',
];

describe.each(POSTGRES_STORE)('database actions on the %s store', (kind) => {
  let cp: TestControlPlane;
  let alice: Caller;
  let bob: Caller;

  beforeAll(async () => {
    cp = await startTestControlPlane(kind);
    alice = await caller(cp, `alice-${kind}@example.com`, 'pro');
    bob = await caller(cp, `bob-${kind}@example.com`);
  });
  afterAll(() => cp?.close());

  const row = (id: string) =>
    cp.context.db
      .selectFrom('databases')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
  /**
   * Earlier tests leave alice's databases running; the plan's compute units count them
   * (docs/control-plane/billing.md), so the tests of actions that start an instance stop them.
   */
  const stopAlicesInstances = () =>
    cp.context.db
      .updateTable('databases')
      .set({ status: 'terminated', goal: null })
      .where('account_id', '=', alice.accountId)
      .where('status', 'in', ['building', 'deploying', 'running'])
      .execute();
  const audit = (id: string, eventType: string) =>
    cp.context.db
      .selectFrom('audit_events')
      .selectAll()
      .where('database_id', '=', id)
      .where('event_type', '=', eventType)
      .execute();

  it('answers 401 without a token on every action route', async () => {
    const id = randomUUID();
    for (const action of ACTION_PATHS) {
      const response = await cp.request('POST', `/v1/databases/${id}/${action}`);
      expect(response.status, action).toBe(401);
      expect(response.body.error).toBe('unauthorized');
    }
    expect((await cp.request('DELETE', `/v1/databases/${id}`)).status).toBe(401);
  });

  it('lists every action as its own operation in the OpenAPI document', async () => {
    const document = (await cp.request('GET', '/v1/openapi.json')).body;
    for (const action of ACTION_PATHS) {
      const operation = document.paths[`/v1/databases/{id}/${action}`]?.post;
      expect(operation, action).toBeDefined();
      expect(operation.responses['409'] ?? operation.responses['503'], action).toBeDefined();
    }
    expect(document.paths['/v1/databases/{id}'].delete.responses).toHaveProperty('204');
    for (const route of ['instance', 'metrics', 'infra-logs', 'instance-logs']) {
      expect(document.paths[`/v1/databases/{id}/${route}`]?.get, route).toBeDefined();
    }
  });

  it("reports another account's database as not found for every action", async () => {
    const { id } = await insertDatabase(cp, alice, { status: 'running', withBuild: true });
    for (const action of ACTION_PATHS) {
      const body =
        action === 'resize'
          ? { instanceSize: 's' }
          : action === 'redeploy'
            ? { buildId: randomUUID() }
            : undefined;
      const response = await cp.request('POST', `/v1/databases/${id}/${action}`, {
        token: bob.token,
        body,
      });
      expect(response.status, action).toBe(404);
      expect(response.body).toEqual({ error: 'not_found', message: 'Database not found.' });
    }
    expect((await cp.request('DELETE', `/v1/databases/${id}`, { token: bob.token })).status).toBe(
      404,
    );
    expect((await row(id)).status).toBe('running');
  });

  it('queues provision with the goal and the building status, and cancel-goal undoes it', async () => {
    const { id } = await insertDatabase(cp, alice, { status: 'draft' });
    const provisioned = await cp.request('POST', `/v1/databases/${id}/provision`, {
      token: alice.token,
    });
    expect(provisioned.status).toBe(202);
    expect(provisioned.body).toEqual({ status: 'building' });
    const stored = await row(id);
    expect(stored.status).toBe('building');
    expect(stored.goal).toEqual({
      action: 'provision',
      fromStatus: 'draft',
      requestedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    const [event] = await audit(id, 'database.provision');
    expect(event?.payload).toEqual({ fromStatus: 'draft', toStatus: 'building' });

    const again = await cp.request('POST', `/v1/databases/${id}/provision`, { token: alice.token });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({
      error: 'action_not_allowed',
      message: 'Another action is queued: provision. Cancel it first.',
    });

    const cancelled = await cp.request('POST', `/v1/databases/${id}/cancel-goal`, {
      token: alice.token,
    });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toEqual({ status: 'draft' });
    const restored = await row(id);
    expect(restored.status).toBe('draft');
    expect(restored.goal).toBeNull();
    const [cancelEvent] = await audit(id, 'database.cancel_goal');
    expect(cancelEvent?.payload).toEqual({
      fromStatus: 'building',
      toStatus: 'draft',
      cancelledAction: 'provision',
    });
  });

  it('refuses to cancel a goal the reconciler has claimed, or when there is none', async () => {
    const { id } = await insertDatabase(cp, alice, {
      status: 'terminating',
      withBuild: true,
      goal: {
        action: 'terminate',
        fromStatus: 'running',
        requestedAt: new Date().toISOString(),
        claimedAt: new Date().toISOString(),
      },
    });
    const response = await cp.request('POST', `/v1/databases/${id}/cancel-goal`, {
      token: alice.token,
    });
    expect(response.status).toBe(409);
    expect(response.body.message).toBe(
      'The terminate has already started and can no longer be cancelled.',
    );
    const idle = await insertDatabase(cp, alice, { status: 'running', withBuild: true });
    const none = await cp.request('POST', `/v1/databases/${idle.id}/cancel-goal`, {
      token: alice.token,
    });
    expect(none.status).toBe(409);
    expect(none.body).toEqual({ error: 'action_not_allowed', message: 'No action is queued.' });
  });

  it.each([
    ['running', 'rebuild', 'building'],
    ['running', 'reconfigure', 'deploying'],
    ['running', 'pause', 'pausing'],
    ['running', 'terminate', 'terminating'],
    ['paused', 'resume', 'deploying'],
    ['paused', 'terminate', 'terminating'],
    ['failed', 'rebuild', 'building'],
    ['failed', 'terminate', 'terminating'],
    ['terminated', 'provision', 'building'],
  ] as const)(
    '%s database: %s → 202 %s with its goal and audit event',
    async (from, action, to) => {
      const { id } = await insertDatabase(cp, alice, { status: from, withBuild: true });
      const response = await cp.request('POST', `/v1/databases/${id}/${action}`, {
        token: alice.token,
      });
      expect(response.status).toBe(202);
      // A reconfigure also says what it leaves pending for a rebuild: nothing here.
      expect(response.body).toEqual(
        action === 'reconfigure' ? { status: to, notApplied: [] } : { status: to },
      );
      const stored = await row(id);
      expect(stored.status).toBe(to);
      expect(stored.goal).toMatchObject({ action, fromStatus: from });
      expect(stored.goal?.claimedAt).toBeUndefined();
      const events = await audit(id, `database.${action}`);
      expect(events).toHaveLength(1);
      expect(events[0]?.payload).toEqual({ fromStatus: from, toStatus: to });
    },
  );

  it('answers 409 with the matrix reason for a disallowed action', async () => {
    const { id } = await insertDatabase(cp, alice, { status: 'paused', withBuild: true });
    const response = await cp.request('POST', `/v1/databases/${id}/pause`, { token: alice.token });
    expect(response.status).toBe(409);
    expect(response.body).toEqual({
      error: 'action_not_allowed',
      message: 'Pause needs a running database; this one is paused: use Resume instead.',
    });
    const terminate = await insertDatabase(cp, alice, { status: 'draft' });
    const refused = await cp.request('POST', `/v1/databases/${terminate.id}/terminate`, {
      token: alice.token,
    });
    expect(refused.status).toBe(409);
    expect(refused.body.message).toBe(
      'Terminate needs a running, paused or failed database; this one is draft: use Delete instead.',
    );
    const noBuild = await insertDatabase(cp, alice, { status: 'failed' });
    const reconfigure = await cp.request('POST', `/v1/databases/${noBuild.id}/reconfigure`, {
      token: alice.token,
    });
    expect(reconfigure.status).toBe(409);
    expect(reconfigure.body.message).toBe(
      'The database has no successful build yet: use Rebuild instead.',
    );
    expect((await row(id)).status).toBe('paused');
  });

  describe('resize', () => {
    beforeEach(stopAlicesInstances);

    it('queues the new size within the plan', async () => {
      const { id } = await insertDatabase(cp, alice, { status: 'running', withBuild: true });
      const response = await cp.request('POST', `/v1/databases/${id}/resize`, {
        token: alice.token,
        body: { instanceSize: 'm' },
      });
      expect(response.status).toBe(202);
      expect(response.body).toEqual({ status: 'deploying' });
      const stored = await row(id);
      expect(stored.goal).toMatchObject({
        action: 'resize',
        instanceSize: 'm',
        fromStatus: 'running',
      });
      // The reconciler applies the size when it deploys.
      expect(stored.instance_size).toBe('xs');
      const [event] = await audit(id, 'database.resize');
      expect(event?.payload).toEqual({
        fromStatus: 'running',
        toStatus: 'deploying',
        instanceSize: 'm',
      });
    });

    it('answers 403 plan_limit above the plan’s largest size', async () => {
      const { id } = await insertDatabase(cp, alice, { status: 'running', withBuild: true });
      const response = await cp.request('POST', `/v1/databases/${id}/resize`, {
        token: alice.token,
        body: { instanceSize: 'l' },
      });
      expect(response.status).toBe(403);
      expect(response.body).toEqual({
        error: 'plan_limit',
        message: "Instance size l is above the pro plan's largest, m; upgrade to use it.",
      });
      expect((await row(id)).goal).toBeNull();
    });

    it('rejects an unknown size, a missing one, and the current one with validation_failed', async () => {
      const { id } = await insertDatabase(cp, alice, { status: 'running', withBuild: true });
      for (const body of [{ instanceSize: 'huge' }, {}, undefined]) {
        const response = await cp.request('POST', `/v1/databases/${id}/resize`, {
          token: alice.token,
          body,
        });
        expect(response.status).toBe(400);
        expect(response.body.error).toBe('validation_failed');
      }
      const unknown = await cp.request('POST', `/v1/databases/${id}/resize`, {
        token: alice.token,
        body: { instanceSize: 'huge' },
      });
      expect(unknown.body.message).toContain('instanceSize');
      const same = await cp.request('POST', `/v1/databases/${id}/resize`, {
        token: alice.token,
        body: { instanceSize: 'xs' },
      });
      expect(same.status).toBe(400);
      expect(same.body.message).toBe('body.instanceSize is already xs; choose another size.');
    });
  });

  describe('resize: replicas', () => {
    beforeEach(stopAlicesInstances);

    it('queues a new replica count within the plan, alone or with a size', async () => {
      const { id } = await insertDatabase(cp, alice, { status: 'running', withBuild: true });
      const response = await cp.request('POST', `/v1/databases/${id}/resize`, {
        token: alice.token,
        body: { replicas: 2 },
      });
      expect(response.status).toBe(202);
      const stored = await row(id);
      expect(stored.goal).toMatchObject({ action: 'resize', replicas: 2 });
      expect(stored.goal).not.toHaveProperty('instanceSize');
      // The reconciler applies the count when it deploys.
      expect(stored.replicas).toBe(1);
      const [event] = await audit(id, 'database.resize');
      expect(event?.payload).toEqual({ fromStatus: 'running', toStatus: 'deploying', replicas: 2 });

      const both = await insertDatabase(cp, alice, { status: 'running', withBuild: true });
      const sized = await cp.request('POST', `/v1/databases/${both.id}/resize`, {
        token: alice.token,
        body: { instanceSize: 's', replicas: 2 },
      });
      expect(sized.status).toBe(202);
      expect((await row(both.id)).goal).toMatchObject({ instanceSize: 's', replicas: 2 });
    });

    it('answers 403 plan_limit above the plan’s replicas or compute units, 400 for the current count', async () => {
      const { id } = await insertDatabase(cp, alice, { status: 'running', withBuild: true });
      const above = await cp.request('POST', `/v1/databases/${id}/resize`, {
        token: alice.token,
        body: { replicas: 3 },
      });
      expect(above.status).toBe(403);
      expect(above.body).toEqual({
        error: 'plan_limit',
        message: "3 replicas are above the pro plan's most, 2; upgrade to use them.",
      });
      // Two m replicas are 8 compute units: all the pro plan has, with nothing else running.
      const units = await cp.request('POST', `/v1/databases/${id}/resize`, {
        token: alice.token,
        body: { instanceSize: 'm', replicas: 2 },
      });
      expect(units.status).toBe(202);
      const other = await insertDatabase(cp, alice, { status: 'running', withBuild: true });
      const over = await cp.request('POST', `/v1/databases/${other.id}/resize`, {
        token: alice.token,
        body: { replicas: 2 },
      });
      expect(over.status).toBe(403);
      expect(over.body.message).toMatch(/^This needs 2 compute units and your instances use \d+/);
      for (const body of [{ replicas: 0 }, { replicas: 1.5 }, { replicas: 17 }]) {
        const bad = await cp.request('POST', `/v1/databases/${other.id}/resize`, {
          token: alice.token,
          body,
        });
        expect(bad.status, JSON.stringify(body)).toBe(400);
      }
      const same = await cp.request('POST', `/v1/databases/${other.id}/resize`, {
        token: alice.token,
        body: { replicas: 1 },
      });
      expect(same.status).toBe(400);
      expect(same.body.message).toBe(
        'The database already runs xs with 1 replica; choose another size or replica count.',
      );
    });
  });

  describe('redeploy', () => {
    beforeEach(stopAlicesInstances);

    it('queues a past succeeded build without a new build job', async () => {
      const { id } = await insertDatabase(cp, alice, { status: 'failed', withBuild: true });
      const past = await insertBuild(cp, alice, id, 'succeeded');
      const response = await cp.request('POST', `/v1/databases/${id}/redeploy`, {
        token: alice.token,
        body: { buildId: past },
      });
      expect(response.status).toBe(202);
      expect(response.body).toEqual({ status: 'deploying' });
      expect((await row(id)).goal).toMatchObject({ action: 'redeploy', buildId: past });
      const builds = await cp.context.db
        .selectFrom('builds')
        .select('id')
        .where('database_id', '=', id)
        .execute();
      expect(builds).toHaveLength(2);
      const [event] = await audit(id, 'database.redeploy');
      expect(event?.payload).toEqual({
        fromStatus: 'failed',
        toStatus: 'deploying',
        buildId: past,
      });
    });

    it('rejects a missing or malformed buildId, and a build that did not succeed', async () => {
      const { id } = await insertDatabase(cp, alice, { status: 'running', withBuild: true });
      for (const body of [{}, { buildId: 'not-a-uuid' }, undefined]) {
        const response = await cp.request('POST', `/v1/databases/${id}/redeploy`, {
          token: alice.token,
          body,
        });
        expect(response.status).toBe(400);
        expect(response.body.error).toBe('validation_failed');
        expect(response.body.message).toMatch(/buildId|body/);
      }
      const failed = await insertBuild(cp, alice, id, 'failed');
      const response = await cp.request('POST', `/v1/databases/${id}/redeploy`, {
        token: alice.token,
        body: { buildId: failed },
      });
      expect(response.status).toBe(400);
      expect(response.body).toEqual({
        error: 'validation_failed',
        message:
          'body.buildId names a build that is failed; only a succeeded build can be redeployed.',
      });
      expect((await row(id)).goal).toBeNull();
    });

    it('reports a build of another database or account as not found', async () => {
      const { id } = await insertDatabase(cp, alice, { status: 'running', withBuild: true });
      const sibling = await insertDatabase(cp, alice, { status: 'running', withBuild: true });
      const foreign = await insertDatabase(cp, bob, { status: 'running', withBuild: true });
      for (const buildId of [sibling.buildId, foreign.buildId, randomUUID()]) {
        const response = await cp.request('POST', `/v1/databases/${id}/redeploy`, {
          token: alice.token,
          body: { buildId },
        });
        expect(response.status).toBe(404);
        expect(response.body).toEqual({ error: 'not_found', message: 'Build not found.' });
      }
    });
  });

  describe('delete', () => {
    it('deletes a database with nothing deployed at once (204)', async () => {
      const { id } = await insertDatabase(cp, alice, { status: 'draft' });
      const response = await cp.request('DELETE', `/v1/databases/${id}`, { token: alice.token });
      expect(response.status).toBe(204);
      const stored = await row(id);
      expect(stored.deleted_at).not.toBeNull();
      expect(stored.status).toBe('deleting');
      const [event] = await audit(id, 'database.delete');
      expect(event?.payload).toEqual({ fromStatus: 'draft', toStatus: 'deleted' });
      const again = await cp.request('DELETE', `/v1/databases/${id}`, { token: alice.token });
      expect(again.status).toBe(404);
      const status = await cp.request('GET', `/v1/databases/${id}/instance`, {
        token: alice.token,
      });
      expect(status.status).toBe(404);
    });

    it('queues the teardown of a deployed database (202 deleting)', async () => {
      const { id } = await insertDatabase(cp, alice, { status: 'running', withBuild: true });
      const response = await cp.request('DELETE', `/v1/databases/${id}`, { token: alice.token });
      expect(response.status).toBe(202);
      expect(response.body).toEqual({ status: 'deleting' });
      const stored = await row(id);
      expect(stored.deleted_at).toBeNull();
      expect(stored.goal).toMatchObject({ action: 'delete', fromStatus: 'running' });
    });

    it('refuses while another action is pending', async () => {
      const { id } = await insertDatabase(cp, alice, {
        status: 'building',
        goal: { action: 'provision', fromStatus: 'draft', requestedAt: new Date().toISOString() },
      });
      const response = await cp.request('DELETE', `/v1/databases/${id}`, { token: alice.token });
      expect(response.status).toBe(409);
      expect(response.body.message).toBe('Another action is queued: provision. Cancel it first.');
    });
  });

  it('lets only one of two concurrent actions through', async () => {
    const { id } = await insertDatabase(cp, alice, { status: 'running', withBuild: true });
    const responses = await Promise.all(
      ['pause', 'terminate', 'rebuild'].map((action) =>
        cp.request('POST', `/v1/databases/${id}/${action}`, { token: alice.token }),
      ),
    );
    expect(responses.map((r) => r.status).sort()).toEqual([202, 409, 409]);
  });

  describe('immediate actions on a live instance', () => {
    let source: TestDatabase;
    let instance: RunningInstance;
    let databaseId: string;
    let keySecret: Buffer;
    let controlKeyId: string;

    beforeAll(async () => {
      source = await testMariaDb().createDatabase(`
        CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL);
        INSERT INTO items SELECT seq, CONCAT('item ', seq) FROM seq_1_to_1000;
      `);
      const seeded = await insertDatabase(cp, alice, { status: 'running', withBuild: true });
      databaseId = seeded.id;
      keySecret = seeded.keySecret;
      controlKeyId = newKeyId();
      instance = await startRealInstance(source.url, keySecret, controlKeyId);
      await insertInstance(cp, databaseId, instance.url, controlKeyId, seeded.buildId);
    });
    afterAll(async () => {
      await instance?.close();
      await source?.drop();
    });

    it('reloads through the instance (202) and records the audit event', async () => {
      const swapsBefore = instance.controller.current()?.swapCount ?? 0;
      const response = await cp.request('POST', `/v1/databases/${databaseId}/reload`, {
        token: alice.token,
      });
      expect(response.status).toBe(202);
      expect(response.body).toEqual({ status: 'running', reloading: true });
      await expect
        .poll(() => instance.controller.current()?.swapCount ?? 0, { timeout: 30_000 })
        .toBeGreaterThan(swapsBefore);
      const [event] = await audit(databaseId, 'database.reload');
      expect(event?.payload).toEqual({ fromStatus: 'running', toStatus: 'running' });
    });

    it("passes the instance's reload_busy through as action_not_allowed with its message", async () => {
      await expect.poll(() => instance.controller.busy, { timeout: 30_000 }).toBe(false);
      // A write lock on the source table holds a reload started directly mid-cycle.
      const locker = await mysql.createConnection(source.url);
      try {
        await locker.query('LOCK TABLES items WRITE');
        const direct = await fetch(`${instance.url}/reload`, {
          method: 'POST',
          headers: { authorization: `Bearer ${deriveApiKey(keySecret, controlKeyId)}` },
        });
        expect(direct.status).toBe(202);
        expect(instance.controller.busy).toBe(true);
        const response = await cp.request('POST', `/v1/databases/${databaseId}/reload`, {
          token: alice.token,
        });
        expect(response.status).toBe(409);
        expect(response.body).toEqual({
          error: 'action_not_allowed',
          message: 'A reload or sync flush is mid-cycle; retry once it completes.',
        });
      } finally {
        await locker.query('UNLOCK TABLES');
        await locker.end();
      }
      await expect.poll(() => instance.controller.busy, { timeout: 30_000 }).toBe(false);
    });

    it('pauses and resumes replication on the instance and in the store', async () => {
      const paused = await cp.request('POST', `/v1/databases/${databaseId}/pause-replication`, {
        token: alice.token,
      });
      expect(paused.status).toBe(200);
      expect(paused.body).toEqual({ replication_paused: true });
      expect((await row(databaseId)).replication_paused).toBe(true);
      expect(instance.scheduler.paused).toBe(true);

      const twice = await cp.request('POST', `/v1/databases/${databaseId}/pause-replication`, {
        token: alice.token,
      });
      expect(twice.status).toBe(409);
      expect(twice.body.message).toBe(
        'Replication is already paused: use Resume replication instead.',
      );

      const resumed = await cp.request('POST', `/v1/databases/${databaseId}/resume-replication`, {
        token: alice.token,
      });
      expect(resumed.status).toBe(200);
      expect(resumed.body).toEqual({ replication_paused: false });
      expect((await row(databaseId)).replication_paused).toBe(false);
      expect(instance.scheduler.paused).toBe(false);
      expect(await audit(databaseId, 'database.pause_replication')).toHaveLength(1);
      expect(await audit(databaseId, 'database.resume_replication')).toHaveLength(1);
    });

    it('answers 503 instance_unavailable when the instance does not answer, and changes nothing', async () => {
      const { id } = await insertDatabase(cp, alice, { status: 'running', withBuild: true });
      await insertInstance(cp, id, 'http://127.0.0.1:1');
      for (const action of ['reload', 'pause-replication']) {
        const response = await cp.request('POST', `/v1/databases/${id}/${action}`, {
          token: alice.token,
        });
        expect(response.status, action).toBe(503);
        expect(response.body).toEqual({
          error: 'instance_unavailable',
          message: 'The instance did not answer; retry when its status is running.',
        });
      }
      expect((await row(id)).replication_paused).toBe(false);
      const running = await insertDatabase(cp, alice, { status: 'running', withBuild: true });
      const none = await cp.request('POST', `/v1/databases/${running.id}/reload`, {
        token: alice.token,
      });
      expect(none.status).toBe(503);
      expect(none.body.message).toBe('The database has no running instance.');
    });
  });
});

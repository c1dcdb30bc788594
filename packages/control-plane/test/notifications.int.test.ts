import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { notify, UNSEEN_NOTIFICATION_CAP } from '../src/adapters/events/notifications.ts';
import {
  POSTGRES_STORE,
  startTestControlPlane,
  type TestControlPlane,
} from './control-plane-harness.ts';
import { caller, insertDatabase } from './lifecycle-fixtures.ts';

describe.each(POSTGRES_STORE)('notifications on the %s store', (kind) => {
  let cp: TestControlPlane;
  beforeAll(async () => {
    cp = await startTestControlPlane(kind);
  });
  afterAll(() => cp?.close());

  async function setUp(email: string) {
    const { token, accountId } = await caller(cp, email);
    const { id: databaseId } = await insertDatabase(
      cp,
      { accountId },
      { name: 'shop', status: 'running' },
    );
    const add = (
      message: string,
      extra: { sticky?: boolean; severity?: 'success' | 'error' | 'info' } = {},
    ) =>
      notify(cp.context.db, {
        accountId,
        databaseId,
        eventType: 'build.failed',
        message,
        detail: extra.severity === 'error' ? 'column x is missing' : null,
        severity: extra.severity ?? 'info',
        sticky: extra.sticky ?? false,
      });
    const list = () => cp.request('GET', `/v1/databases/${databaseId}/notifications`, { token });
    const seen = (body?: unknown) =>
      cp.request('POST', `/v1/databases/${databaseId}/notifications/seen`, { token, body });
    return { token, accountId, databaseId, add, list, seen };
  }

  it('lists unseen notifications newest first with their counts', async () => {
    const { add, list } = await setUp('notes@example.com');
    expect((await list()).body).toEqual({ notifications: [], unseenCount: 0, skippedCount: 0 });
    await add('first');
    await add('build failed', { severity: 'error', sticky: true });
    const response = await list();
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      notifications: [
        {
          id: expect.any(String),
          eventType: 'build.failed',
          message: 'build failed',
          detail: 'column x is missing',
          severity: 'error',
          sticky: true,
          createdAt: expect.any(String),
        },
        {
          id: expect.any(String),
          eventType: 'build.failed',
          message: 'first',
          detail: null,
          severity: 'info',
          sticky: false,
          createdAt: expect.any(String),
        },
      ],
      unseenCount: 2,
      skippedCount: 0,
    });
  });

  it('shows platform events as notifications', async () => {
    const { accountId, databaseId, list } = await setUp('platform@example.com');
    await cp.context.events.emit(cp.context.db, {
      type: 'build.completed',
      accountId,
      databaseId,
      databaseName: 'shop',
      fields: { endpointUrl: 'http://127.0.0.1:1' },
      message: 'shop is running.',
      severity: 'success',
    });
    expect((await list()).body.notifications).toEqual([
      expect.objectContaining({ eventType: 'build.completed', severity: 'success', sticky: false }),
    ]);
  });

  it(`keeps ${UNSEEN_NOTIFICATION_CAP} unseen and counts the older ones as skipped`, async () => {
    const { add, list, seen } = await setUp('many@example.com');
    await add('sticky and old', { sticky: true });
    for (let n = 1; n <= UNSEEN_NOTIFICATION_CAP + 4; n++) await add(`note ${n}`);
    const response = await list();
    expect(response.body.notifications).toHaveLength(UNSEEN_NOTIFICATION_CAP);
    expect(response.body.notifications[0].message).toBe(`note ${UNSEEN_NOTIFICATION_CAP + 4}`);
    expect(response.body.unseenCount).toBe(UNSEEN_NOTIFICATION_CAP);
    expect(response.body.skippedCount).toBe(5);
    // Marking all seen clears the skipped ones too (sticky or not: they cannot be named).
    const after = await seen();
    expect(after).toMatchObject({ status: 200, body: { unseenCount: 0, skippedCount: 0 } });
    expect((await list()).body.notifications).toEqual([]);
  });

  it('marks the named ones seen; "all" leaves sticky ones until named', async () => {
    const { databaseId, add, list, seen } = await setUp('seen@example.com');
    await add('a');
    await add('b');
    await add('sticky', { sticky: true });
    await add('c');
    const ids = Object.fromEntries(
      (await list()).body.notifications.map((n: { id: string; message: string }) => [
        n.message,
        n.id,
      ]),
    );
    const named = await seen({ ids: [ids.a] });
    expect(named).toMatchObject({ status: 200, body: { unseenCount: 3, skippedCount: 0 } });
    const all = await seen({});
    expect(all.body).toEqual({ unseenCount: 1, skippedCount: 0 });
    expect((await list()).body.notifications.map((n: { id: string }) => n.id)).toEqual([
      ids.sticky,
    ]);
    expect((await seen()).body).toEqual({ unseenCount: 1, skippedCount: 0 });
    expect((await seen({ ids: [ids.sticky, ids.b, randomUUID()] })).body).toEqual({
      unseenCount: 0,
      skippedCount: 0,
    });
    expect((await seen({ ids: [] })).body).toEqual({ unseenCount: 0, skippedCount: 0 });
    // Each call that marked something is audited (calls that changed nothing are not).
    const audit = await cp.context.db
      .selectFrom('audit_events')
      .select(['event_type', 'payload'])
      .where('database_id', '=', databaseId)
      .orderBy('created_at')
      .execute();
    expect(audit).toEqual([
      { event_type: 'notification.seen', payload: { count: 1, all: false } },
      { event_type: 'notification.seen', payload: { count: 2, all: true } },
      { event_type: 'notification.seen', payload: { count: 1, all: false } },
    ]);
  });

  it('rejects bad bodies with validation_failed', async () => {
    const { seen, databaseId, token } = await setUp('bad-notes@example.com');
    for (const body of [{ ids: ['nope'] }, { ids: 'all' }, { everything: true }, [1]]) {
      const response = await seen(body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body).toEqual({ error: 'validation_failed', message: expect.any(String) });
    }
    for (const method of ['GET', 'POST']) {
      const suffix = method === 'GET' ? '' : '/seen';
      const response = await cp.request(method, `/v1/databases/not-a-uuid/notifications${suffix}`, {
        token,
      });
      expect(response).toMatchObject({ status: 400, body: { error: 'validation_failed' } });
    }
    expect(databaseId).toBeTruthy();
  });

  it('answers 401 without a valid token', async () => {
    const id = randomUUID();
    for (const [method, path] of [
      ['GET', `/v1/databases/${id}/notifications`],
      ['POST', `/v1/databases/${id}/notifications/seen`],
    ]) {
      const response = await cp.request(method as string, path as string, { token: 'x' });
      expect(response.status).toBe(401);
      expect(response.body).toEqual({ error: 'unauthorized', message: expect.any(String) });
    }
  });

  it("reports another account's database as not found and leaves its notifications alone", async () => {
    const owner = await setUp('note-owner@example.com');
    const other = await setUp('note-other@example.com');
    await owner.add('private');
    const [note] = (await owner.list()).body.notifications;
    for (const [method, suffix] of [
      ['GET', ''],
      ['POST', '/seen'],
    ]) {
      const response = await cp.request(
        method as string,
        `/v1/databases/${owner.databaseId}/notifications${suffix}`,
        { token: other.token, body: method === 'POST' ? {} : undefined },
      );
      expect(response).toMatchObject({ status: 404, body: { error: 'not_found' } });
    }
    // Naming the owner's notification in one's own database marks nothing.
    expect((await other.seen({ ids: [note.id] })).body).toEqual({
      unseenCount: 0,
      skippedCount: 0,
    });
    expect((await owner.list()).body.unseenCount).toBe(1);
  });
});

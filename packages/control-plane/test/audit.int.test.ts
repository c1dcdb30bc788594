import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  STORE_KINDS,
  startTestControlPlane,
  type TestControlPlane,
} from './control-plane-harness.ts';
import { caller, insertDatabase } from './lifecycle-fixtures.ts';

const at = (minute: number) => new Date(Date.UTC(2026, 0, 1, 12, minute));

describe.each(STORE_KINDS)('the audit log on the %s store', (kind) => {
  let cp: TestControlPlane;
  let owner: { token: string; accountId: string };
  let shop: string;
  let gone: string;
  /** Event ids by minute, for shop (minutes 0..29) and gone (minutes 30..34). */
  const ids = new Map<number, string>();

  beforeAll(async () => {
    cp = await startTestControlPlane(kind);
    owner = await caller(cp, 'audit@example.com');
    shop = (await insertDatabase(cp, owner, { name: 'shop', status: 'running' })).id;
    gone = (await insertDatabase(cp, owner, { name: 'gone', status: 'running' })).id;
    const rows = [];
    for (let minute = 0; minute < 35; minute++) {
      const id = randomUUID();
      ids.set(minute, id);
      const databaseId = minute < 30 ? shop : gone;
      rows.push({
        id,
        account_id: owner.accountId,
        database_id: databaseId,
        entity_type: 'database',
        entity_id: databaseId,
        event_type: minute % 3 === 0 ? 'database.updated' : 'database.rebuild',
        payload: minute % 2 === 0 ? JSON.stringify({ minute, nested: { a: [1, 2] } }) : null,
        created_at: at(minute),
      });
    }
    await cp.context.db.insertInto('audit_events').values(rows).execute();
    await cp.context.db
      .updateTable('databases')
      .set({ deleted_at: new Date() })
      .where('id', '=', gone)
      .execute();
  });
  afterAll(() => cp?.close());

  it("pages a database's events newest first with the total", async () => {
    const first = await cp.request('GET', `/v1/databases/${shop}/audit-log`, {
      token: owner.token,
    });
    expect(first.status).toBe(200);
    expect(first.body.total).toBe(30);
    expect(first.body.events).toHaveLength(25);
    // Recorded without an actor (as events were before actors were kept): none is made up.
    expect(first.body.events[0]).toEqual({
      id: ids.get(29),
      entityType: 'database',
      entityId: shop,
      entityName: 'shop',
      eventType: 'database.rebuild',
      createdAt: at(29).toISOString(),
    });
    expect(first.body.events[1]).toEqual({
      id: ids.get(28),
      entityType: 'database',
      entityId: shop,
      entityName: 'shop',
      eventType: 'database.rebuild',
      payload: { minute: 28, nested: { a: [1, 2] } },
      createdAt: at(28).toISOString(),
    });
    const second = await cp.request('GET', `/v1/databases/${shop}/audit-log?limit=25&offset=25`, {
      token: owner.token,
    });
    expect(second.body.total).toBe(30);
    expect(second.body.events.map((event: { id: string }) => event.id)).toEqual(
      [4, 3, 2, 1, 0].map((minute) => ids.get(minute)),
    );
    const wide = await cp.request('GET', `/v1/databases/${shop}/audit-log?limit=50`, {
      token: owner.token,
    });
    expect(wide.body.events).toHaveLength(30);
    const hundred = await cp.request('GET', `/v1/databases/${shop}/audit-log?limit=100&offset=40`, {
      token: owner.token,
    });
    expect(hundred.body).toEqual({ events: [], total: 30 });
  });

  it('filters by event type and time; total counts the matches, not the page', async () => {
    const query = new URLSearchParams({
      eventType: 'database.updated',
      after: at(3).toISOString(),
      before: at(27).toISOString(),
      limit: '25',
    });
    const response = await cp.request('GET', `/v1/databases/${shop}/audit-log?${query}`, {
      token: owner.token,
    });
    expect(response.status).toBe(200);
    // Minutes 6, 9, …, 24: strictly after 3 and strictly before 27.
    expect(response.body.total).toBe(7);
    expect(response.body.events.map((event: { id: string }) => event.id)).toEqual(
      [24, 21, 18, 15, 12, 9, 6].map((minute) => ids.get(minute)),
    );
    const paged = await cp.request('GET', `/v1/databases/${shop}/audit-log?${query}&offset=5`, {
      token: owner.token,
    });
    expect(paged.body.total).toBe(7);
    expect(paged.body.events).toHaveLength(2);
  });

  it('lists the account log with database ids and names, deleted databases included', async () => {
    // An event that concerns no database: a management key.
    await cp.request('POST', '/v1/management-keys', { token: owner.token, body: { name: 'ci' } });
    const response = await cp.request('GET', '/v1/account/audit-log?limit=100', {
      token: owner.token,
    });
    expect(response.status).toBe(200);
    expect(response.body.total).toBe(36);
    const [newest, ...rest] = response.body.events;
    expect(newest).toEqual({
      id: expect.any(String),
      entityType: 'management_key',
      entityId: expect.any(String),
      entityName: 'ci',
      eventType: 'management_key.created',
      payload: { name: 'ci', prefix: expect.any(String) },
      createdAt: expect.any(String),
      actor: { type: 'user', id: expect.any(String), name: 'audit@example.com' },
    });
    expect(rest[0]).toMatchObject({ id: ids.get(34), databaseId: gone, databaseName: 'gone' });
    expect(rest[5]).toMatchObject({ id: ids.get(29), databaseId: shop, databaseName: 'shop' });

    const onlyGone = await cp.request('GET', `/v1/account/audit-log?databaseId=${gone}`, {
      token: owner.token,
    });
    expect(onlyGone.body.total).toBe(5);
    expect(onlyGone.body.events.every((e: { databaseId: string }) => e.databaseId === gone)).toBe(
      true,
    );
  });

  it('rejects bad query parameters with validation_failed', async () => {
    for (const path of [
      `/v1/databases/${shop}/audit-log?limit=30`,
      `/v1/databases/${shop}/audit-log?limit=ten`,
      `/v1/databases/${shop}/audit-log?offset=-1`,
      `/v1/databases/${shop}/audit-log?offset=1.5`,
      `/v1/databases/${shop}/audit-log?after=yesterday`,
      `/v1/databases/${shop}/audit-log?before=2026-13-01`,
      `/v1/databases/${shop}/audit-log?unknown=1`,
      '/v1/databases/not-a-uuid/audit-log',
      '/v1/account/audit-log?limit=30',
      '/v1/account/audit-log?after=not-a-date',
      '/v1/account/audit-log?databaseId=not-a-uuid',
    ]) {
      const response = await cp.request('GET', path, { token: owner.token });
      expect(response.status, path).toBe(400);
      expect(response.body).toEqual({ error: 'validation_failed', message: expect.any(String) });
    }
    const limit = await cp.request('GET', '/v1/account/audit-log?limit=30', { token: owner.token });
    expect(limit.body.message).toContain('limit');
  });

  it('answers 401 without a valid token', async () => {
    for (const path of [`/v1/databases/${shop}/audit-log`, '/v1/account/audit-log']) {
      for (const token of [undefined, 'nonsense']) {
        const response = await cp.request('GET', path, { token });
        expect(response.status).toBe(401);
        expect(response.body).toEqual({ error: 'unauthorized', message: expect.any(String) });
      }
    }
  });

  it("hides another account's events: 404 for its database, nothing in the account log", async () => {
    const other = await caller(cp, 'audit-other@example.com');
    for (const id of [shop, gone, randomUUID()]) {
      const response = await cp.request('GET', `/v1/databases/${id}/audit-log`, {
        token: other.token,
      });
      expect(response).toMatchObject({ status: 404, body: { error: 'not_found' } });
    }
    const account = await cp.request('GET', `/v1/account/audit-log?databaseId=${shop}`, {
      token: other.token,
    });
    expect(account.body).toEqual({ events: [], total: 0 });
    const all = await cp.request('GET', '/v1/account/audit-log', { token: other.token });
    expect(all.body).toEqual({ events: [], total: 0 });
  });
});

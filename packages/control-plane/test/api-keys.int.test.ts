import { randomUUID } from 'node:crypto';
import { ApiKeyVerifier } from '@replix/instance';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyIdsOf } from '../src/application/reconciler/instance-launch-for.ts';
import {
  EMBEDDED_STORE,
  startTestControlPlane,
  type TestControlPlane,
} from './control-plane-harness.ts';
import { caller, insertDatabase } from './lifecycle-fixtures.ts';

/** A token for a fresh account and one database of it, inserted straight into the store. */
async function accountWithDatabase(cp: TestControlPlane, email: string) {
  const owner = await caller(cp, email);
  const { id } = await insertDatabase(cp, owner, { name: 'shop', status: 'running' });
  return { ...owner, databaseId: id };
}

describe.each(EMBEDDED_STORE)('API keys on the %s store', (kind) => {
  let cp: TestControlPlane;
  beforeAll(async () => {
    cp = await startTestControlPlane(kind);
  });
  afterAll(() => cp?.close());

  const keysVersion = async (databaseId: string) =>
    (
      await cp.context.db
        .selectFrom('databases')
        .select('keys_version')
        .where('id', '=', databaseId)
        .executeTakeFirstOrThrow()
    ).keys_version;

  it('creates a key shown once that the instance accepts, lists it without the key, deletes it', async () => {
    const { token, databaseId } = await accountWithDatabase(cp, 'keys@example.com');
    const path = `/v1/databases/${databaseId}/api-keys`;
    expect(await cp.request('GET', path, { token })).toMatchObject({ status: 200, body: [] });
    const version = await keysVersion(databaseId);

    const created = await cp.request('POST', path, { token, body: { name: 'reporting' } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      keyId: expect.stringMatching(/^[0-9a-f]{16}$/),
      name: 'reporting',
      prefix: `rxk_${created.body.keyId}`,
      scope: 'query',
      createdAt: expect.any(String),
      key: expect.stringMatching(new RegExp(`^rxk_${created.body.keyId}\\.[\\w-]{43}$`)),
    });
    expect(await keysVersion(databaseId)).toBe(version + 1);

    // The key verifies against the database's (sealed) key secret, as the instance checks it.
    const { key_secret_enc } = await cp.context.db
      .selectFrom('databases')
      .select('key_secret_enc')
      .where('id', '=', databaseId)
      .executeTakeFirstOrThrow();
    const verifier = new ApiKeyVerifier(cp.context.secrets.openBuffer(key_secret_enc), [
      created.body.keyId,
    ]);
    expect(verifier.verifyHeader(`Bearer ${created.body.key}`)).toBe(true);

    const list = await cp.request('GET', path, { token });
    expect(list.status).toBe(200);
    expect(list.body).toEqual([
      {
        id: created.body.id,
        keyId: created.body.keyId,
        name: 'reporting',
        prefix: created.body.prefix,
        scope: 'query',
        createdAt: created.body.createdAt,
      },
    ]);
    expect(JSON.stringify(list.body)).not.toContain(created.body.key);

    const deleted = await cp.request('DELETE', `${path}/${created.body.keyId}`, { token });
    expect(deleted.status).toBe(204);
    expect(await keysVersion(databaseId)).toBe(version + 2);
    expect((await cp.request('GET', path, { token })).body).toEqual([]);
    const again = await cp.request('DELETE', `${path}/${created.body.keyId}`, { token });
    expect(again).toMatchObject({ status: 404, body: { error: 'not_found' } });
    expect(await keysVersion(databaseId)).toBe(version + 2);

    // Both changes are audited, with the key id and name but never the key.
    const audit = await cp.context.db
      .selectFrom('audit_events')
      .select(['event_type', 'entity_type', 'entity_id', 'payload', 'database_id'])
      .where('database_id', '=', databaseId)
      .orderBy('created_at')
      .execute();
    expect(audit).toEqual([
      {
        event_type: 'api_key.created',
        entity_type: 'api_key',
        entity_id: created.body.id,
        database_id: databaseId,
        payload: { keyId: created.body.keyId, name: 'reporting', scope: 'query' },
      },
      {
        event_type: 'api_key.deleted',
        entity_type: 'api_key',
        entity_id: created.body.id,
        database_id: databaseId,
        payload: { keyId: created.body.keyId, name: 'reporting', scope: 'query' },
      },
    ]);
    expect(JSON.stringify(audit)).not.toContain(created.body.key);
  });

  it('creates admin keys on request, lists each key with its scope, and hands the scopes to the instance', async () => {
    const { token, databaseId } = await accountWithDatabase(cp, 'scoped-keys@example.com');
    const path = `/v1/databases/${databaseId}/api-keys`;
    const query = await cp.request('POST', path, { token, body: { name: 'web app' } });
    const explicit = await cp.request('POST', path, {
      token,
      body: { name: 'reports', scope: 'query' },
    });
    const admin = await cp.request('POST', path, { token, body: { name: 'ops', scope: 'admin' } });
    expect([query.status, explicit.status, admin.status]).toEqual([201, 201, 201]);
    expect(query.body.scope).toBe('query');
    expect(explicit.body.scope).toBe('query');
    expect(admin.body).toMatchObject({
      name: 'ops',
      scope: 'admin',
      prefix: `rxk_${admin.body.keyId}`,
    });

    const list = await cp.request('GET', path, { token });
    expect(
      (list.body as Array<{ name: string; scope: string }>).map(({ name, scope }) => ({
        name,
        scope,
      })),
    ).toEqual(
      expect.arrayContaining([
        { name: 'web app', scope: 'query' },
        { name: 'reports', scope: 'query' },
        { name: 'ops', scope: 'admin' },
      ]),
    );

    // The instance gets query keys in keyIds and admin keys, with the control key, in adminKeyIds.
    const controlKeyId = '0123456789abcdef';
    const { keys } = await keyIdsOf(cp.context, databaseId, controlKeyId);
    expect([...keys.keyIds].sort()).toEqual([query.body.keyId, explicit.body.keyId].sort());
    expect(keys.adminKeyIds).toEqual([controlKeyId, admin.body.keyId]);

    const audit = await cp.context.db
      .selectFrom('audit_events')
      .select(['event_type', 'payload'])
      .where('database_id', '=', databaseId)
      .where('entity_id', '=', admin.body.id)
      .execute();
    expect(audit).toEqual([
      {
        event_type: 'api_key.created',
        payload: { keyId: admin.body.keyId, name: 'ops', scope: 'admin' },
      },
    ]);
    const deleted = await cp.request('DELETE', `${path}/${admin.body.keyId}`, { token });
    expect(deleted.status).toBe(204);
    expect((await keyIdsOf(cp.context, databaseId, controlKeyId)).keys.adminKeyIds).toEqual([
      controlKeyId,
    ]);
  });

  it('rejects bad input with validation_failed', async () => {
    const { token, databaseId } = await accountWithDatabase(cp, 'bad-keys@example.com');
    const path = `/v1/databases/${databaseId}/api-keys`;
    for (const body of [
      {},
      { name: '' },
      { name: 'x'.repeat(101) },
      { name: 'a', extra: 1 },
      { name: 'a', scope: 'owner' },
      { name: 'a', scope: null },
    ]) {
      const response = await cp.request('POST', path, { token, body });
      expect(response.status).toBe(400);
      expect(response.body).toEqual({ error: 'validation_failed', message: expect.any(String) });
    }
    const badId = await cp.request('GET', '/v1/databases/not-a-uuid/api-keys', { token });
    expect(badId).toMatchObject({ status: 400, body: { error: 'validation_failed' } });
    expect(await keysVersion(databaseId)).toBe(1);
  });

  it('answers 401 without a valid token', async () => {
    const id = randomUUID();
    for (const [method, path] of [
      ['GET', `/v1/databases/${id}/api-keys`],
      ['POST', `/v1/databases/${id}/api-keys`],
      ['DELETE', `/v1/databases/${id}/api-keys/0123456789abcdef`],
    ] as const) {
      const response = await cp.request(method, path, {
        body: method === 'POST' ? { name: 'x' } : undefined,
      });
      expect(response.status).toBe(401);
      expect(response.body).toEqual({ error: 'unauthorized', message: expect.any(String) });
    }
  });

  it("reports another account's database and keys as not found", async () => {
    const owner = await accountWithDatabase(cp, 'key-owner@example.com');
    const other = await accountWithDatabase(cp, 'key-other@example.com');
    const path = `/v1/databases/${owner.databaseId}/api-keys`;
    const created = await cp.request('POST', path, { token: owner.token, body: { name: 'mine' } });
    const version = await keysVersion(owner.databaseId);
    for (const [method, url, body] of [
      ['GET', path, undefined],
      ['POST', path, { name: 'theirs' }],
      ['DELETE', `${path}/${created.body.keyId}`, undefined],
      // Their own database with the owner's key id: still not found.
      ['DELETE', `/v1/databases/${other.databaseId}/api-keys/${created.body.keyId}`, undefined],
    ] as const) {
      const response = await cp.request(method, url, { token: other.token, body });
      expect(response).toMatchObject({ status: 404, body: { error: 'not_found' } });
    }
    expect(await keysVersion(owner.databaseId)).toBe(version);
    const list = await cp.request('GET', path, { token: owner.token });
    expect(list.body).toHaveLength(1);
  });

  it('answers 404 for a deleted database', async () => {
    const { token, databaseId } = await accountWithDatabase(cp, 'gone-keys@example.com');
    await cp.context.db
      .updateTable('databases')
      .set({ deleted_at: new Date() })
      .where('id', '=', databaseId)
      .execute();
    const response = await cp.request('GET', `/v1/databases/${databaseId}/api-keys`, { token });
    expect(response).toMatchObject({ status: 404, body: { error: 'not_found' } });
  });
});

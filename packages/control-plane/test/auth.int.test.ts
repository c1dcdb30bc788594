import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  POSTGRES_STORE,
  startTestControlPlane,
  type TestControlPlane,
} from './control-plane-harness.ts';

describe.each(POSTGRES_STORE)('auth on the %s store', (kind) => {
  let cp: TestControlPlane;
  beforeAll(async () => {
    cp = await startTestControlPlane(kind);
  });
  afterAll(() => cp?.close());

  it('answers 401 with the flat envelope without a token or with a bad one', async () => {
    for (const token of [undefined, 'not-a-jwt', 'rmk_unknown']) {
      const response = await cp.request('GET', '/v1/management-keys', { token });
      expect(response.status).toBe(401);
      expect(response.body).toEqual({ error: 'unauthorized', message: expect.any(String) });
    }
  });

  it('serves the OpenAPI document without a token', async () => {
    const response = await cp.request('GET', '/v1/openapi.json');
    expect(response.status).toBe(200);
    expect(response.body.openapi).toBe('3.1.0');
  });

  it('answers unknown routes with not_found in the envelope', async () => {
    const token = await cp.token('someone@example.com');
    const response = await cp.request('GET', '/v1/nowhere', { token });
    expect(response.status).toBe(404);
    expect(response.body.error).toBe('not_found');
  });
});

describe.each(POSTGRES_STORE)('management keys on the %s store', (kind) => {
  let cp: TestControlPlane;
  beforeAll(async () => {
    cp = await startTestControlPlane(kind);
  });
  afterAll(() => cp?.close());

  it('creates a key shown once, which then works like a token until revoked', async () => {
    const token = await cp.token('keys@example.com');
    const created = await cp.request('POST', '/v1/management-keys', {
      token,
      body: { name: 'ci' },
    });
    expect(created.status).toBe(201);
    expect(created.body.key).toMatch(/^rmk_[\w-]{43}$/);
    const list = await cp.request('GET', '/v1/management-keys', { token: created.body.key });
    expect(list.status).toBe(200);
    expect(list.body).toEqual([
      expect.objectContaining({
        id: created.body.id,
        name: 'ci',
        prefix: created.body.key.slice(0, 12),
      }),
    ]);
    expect(JSON.stringify(list.body)).not.toContain(created.body.key);
    const revoked = await cp.request('DELETE', `/v1/management-keys/${created.body.id}`, { token });
    expect(revoked.status).toBe(204);
    expect(
      (await cp.request('GET', '/v1/management-keys', { token: created.body.key })).status,
    ).toBe(401);
  });

  it("reports another account's key as not found", async () => {
    const owner = await cp.token('owner@example.com');
    const other = await cp.token('other@example.com');
    const created = await cp.request('POST', '/v1/management-keys', {
      token: owner,
      body: { name: 'mine' },
    });
    const response = await cp.request('DELETE', `/v1/management-keys/${created.body.id}`, {
      token: other,
    });
    expect(response.status).toBe(404);
    expect(response.body.error).toBe('not_found');
  });

  it('rejects a bad body with validation_failed naming the field', async () => {
    const token = await cp.token('bad@example.com');
    const response = await cp.request('POST', '/v1/management-keys', { token, body: { name: '' } });
    expect(response.status).toBe(400);
    expect(response.body.error).toBe('validation_failed');
    expect(response.body.message).toContain('name');
    const malformed = await cp.request('POST', '/v1/management-keys', { token, body: '{"name":' });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error).toBe('validation_failed');
  });
});

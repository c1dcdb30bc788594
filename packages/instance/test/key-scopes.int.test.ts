import { deriveApiKey, newKeyId } from '@replix/instance-protocol';
import { testMariaDb } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startTestInstance, type TestInstance } from './instance-helpers.ts';

type Caller = 'no key' | 'query key' | 'admin key' | 'revoked admin key' | 'revoked query key';

interface Endpoint {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly body?: string;
  /** The scope it needs; none for public endpoints. */
  readonly scope?: 'query' | 'admin';
  /** The status an allowed caller gets. */
  readonly ok: number;
}

const ENDPOINTS: readonly Endpoint[] = [
  { method: 'GET', path: '/health', ok: 200 },
  { method: 'GET', path: '/openapi.json', ok: 200 },
  { method: 'POST', path: '/query', body: 't { id }', scope: 'query', ok: 200 },
  { method: 'GET', path: `/query?q=${encodeURIComponent('t { id }')}`, scope: 'query', ok: 200 },
  { method: 'GET', path: '/schema', scope: 'query', ok: 200 },
  { method: 'GET', path: '/metrics', scope: 'admin', ok: 200 },
  { method: 'GET', path: '/health/detail', scope: 'admin', ok: 200 },
  { method: 'POST', path: '/replication/pause', scope: 'admin', ok: 200 },
  { method: 'POST', path: '/replication/resume', scope: 'admin', ok: 200 },
  // `wait=true` so one reload ends before the next caller's starts (no reload_busy).
  { method: 'POST', path: '/reload?wait=true', scope: 'admin', ok: 200 },
];

/** What a caller should get: the endpoint's answer, or the code of the refusal. */
function expected(endpoint: Endpoint, caller: Caller): number | 'unauthorized' | 'forbidden' {
  if (!endpoint.scope) return endpoint.ok;
  if (caller === 'no key' || caller.startsWith('revoked')) return 'unauthorized';
  if (endpoint.scope === 'admin' && caller === 'query key') return 'forbidden';
  return endpoint.ok;
}

describe('key scopes on every endpoint', () => {
  let served: TestInstance;
  let revokedQueryKey: string;
  let revokedAdminKey: string;

  beforeAll(async () => {
    const db = await testMariaDb().createDatabase(
      'CREATE TABLE t (id INT PRIMARY KEY); INSERT INTO t VALUES (1), (2);',
    );
    served = await startTestInstance(db.url);
    // Two more keys, one per scope, accepted and then revoked (removed from the allowed sets).
    const idOf = (key: string) => key.slice(4, 20);
    const [queryId, adminId] = [newKeyId(), newKeyId()];
    revokedQueryKey = deriveApiKey(served.keySecret, queryId);
    revokedAdminKey = deriveApiKey(served.keySecret, adminId);
    const keys = served.instance.keys;
    keys.setAllowed({
      keyIds: [idOf(served.key), queryId],
      adminKeyIds: [idOf(served.adminKey), adminId],
    });
    expect(keys.scopeOf(`Bearer ${revokedQueryKey}`)).toBe('query');
    expect(keys.scopeOf(`Bearer ${revokedAdminKey}`)).toBe('admin');
    keys.setAllowed({ keyIds: [idOf(served.key)], adminKeyIds: [idOf(served.adminKey)] });
  });
  afterAll(() => served?.close());

  const keyOf = (caller: Caller): string | undefined =>
    ({
      'no key': undefined,
      'query key': served.key,
      'admin key': served.adminKey,
      'revoked admin key': revokedAdminKey,
      'revoked query key': revokedQueryKey,
    })[caller];

  async function call(endpoint: Endpoint, caller: Caller) {
    const key = keyOf(caller);
    return fetch(`${served.url}${endpoint.path}`, {
      method: endpoint.method,
      ...(endpoint.body ? { body: endpoint.body } : {}),
      headers: key ? { Authorization: `Bearer ${key}` } : {},
    });
  }

  const cases = ENDPOINTS.flatMap((endpoint) =>
    (['no key', 'query key', 'admin key', 'revoked query key', 'revoked admin key'] as const).map(
      (caller) => [`${endpoint.method} ${endpoint.path}`, caller, endpoint] as const,
    ),
  );
  it.each(cases)('%s (%s)', async (_name, caller, endpoint) => {
    const response = await call(endpoint, caller);
    const want = expected(endpoint, caller);
    expect(response.headers.get('x-service-version')).toMatch(/-testbuild000$/);
    if (typeof want === 'number') {
      expect(response.status).toBe(want);
      await response.arrayBuffer();
      return;
    }
    expect({ status: response.status, body: await json(response) }).toEqual({
      status: want === 'unauthorized' ? 401 : 403,
      body: { error: { code: want, message: expect.stringContaining('key') } },
    });
  });
});

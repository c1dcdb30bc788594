import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  STORE_KINDS,
  startTestControlPlane,
  type TestControlPlane,
} from './control-plane-harness.ts';
import { caller, insertConnection, insertDatabase } from './lifecycle-fixtures.ts';

const ESCAPE = '1=1) UNION SELECT id, secret, secret FROM items WHERE (1=1';

describe.each(STORE_KINDS)('schema-config where predicates on the %s store', (kind) => {
  let cp: TestControlPlane;
  beforeAll(async () => {
    cp = await startTestControlPlane(kind);
  });
  afterAll(() => cp?.close());

  it('refuses the UNION escape and its kin on create and update, naming the key path and position', async () => {
    const owner = await caller(cp, 'where@example.com');
    const mysql = await insertConnection(cp, owner);
    const postgres = await insertConnection(cp, owner, {
      host: '127.0.0.1',
      port: 1,
      user: 'nobody',
      password: 'pw',
      backend: 'postgres',
    });
    const cases: [string, unknown, string, RegExp][] = [
      [
        mysql,
        { tables: [{ name: 'a' }, { name: 'b' }, { name: 'items', where: ESCAPE }] },
        'tables[2].where',
        /closes a parenthesis the predicate did not open \(at position 4\)/,
      ],
      [
        mysql,
        { where: 'account_id = 1; DROP TABLE x', where_columns: ['account_id'] },
        'where',
        /";" is not allowed \(at position 15\)/,
      ],
      [
        mysql,
        { tables: [{ name: 'items', where: 'id IN (SELECT id FROM secrets)' }] },
        'tables[0].where',
        /subqueries are not allowed.*\(at position 8\)/,
      ],
      [
        mysql,
        { tables: [{ name: 'items', where: 'id > 1 -- )' }] },
        'tables[0].where',
        /comments are not allowed/,
      ],
      [
        postgres,
        { tables: [{ name: 'items', where: "pg_read_file('/etc/passwd') <> ''" }] },
        'tables[0].where',
        /function pg_read_file is not allowed/,
      ],
      [
        postgres,
        { tables: [{ name: 'items', where: 'EXISTS (SELECT 1 FROM secrets)' }] },
        'tables[0].where',
        /subqueries are not allowed/,
      ],
    ];
    for (const [connectionId, schemaConfig, path, problem] of cases) {
      const created = await cp.request('POST', '/v1/databases', {
        token: owner.token,
        body: { name: 'shop', connectionId, sourceSchema: 'app', schemaConfig },
      });
      expect(created.status, path).toBe(400);
      expect(created.body.error).toBe('invalid_schema_config');
      expect(created.body.message).toContain(`${path}: `);
      expect(created.body.message).toMatch(problem);

      const { id } = await insertDatabase(cp, owner, { connectionId });
      const updated = await cp.request('PATCH', `/v1/databases/${id}`, {
        token: owner.token,
        body: { schemaConfig },
      });
      expect(updated.status, path).toBe(400);
      expect(updated.body.message).toMatch(problem);
      const stored = await cp.request('GET', `/v1/databases/${id}`, { token: owner.token });
      expect(stored.body.schemaConfig).toEqual({});
    }
    const list = await cp.request('GET', '/v1/databases', { token: owner.token });
    expect(list.body.map((d: { name: string }) => d.name)).not.toContain('shop');
  });

  it('saves ordinary predicates in either dialect', async () => {
    const owner = await caller(cp, 'where-ok@example.com');
    const connectionId = await insertConnection(cp, owner);
    const schemaConfig = {
      where: 'account_id = 7',
      where_columns: ['account_id'],
      tables: [
        {
          name: 'items',
          where: "status IN ('live', 'sold') AND (price BETWEEN 1 AND 9 OR note LIKE 'x%')",
        },
        {
          name: 'orders',
          where: 'placed_at > DATE_SUB(NOW(), INTERVAL 30 DAY) AND `shipped at` IS NULL',
        },
      ],
    };
    const created = await cp.request('POST', '/v1/databases', {
      token: owner.token,
      body: { name: 'shop', connectionId, sourceSchema: 'app', schemaConfig },
    });
    expect(created.status).toBe(201);
    expect(created.body.schemaConfig).toEqual(schemaConfig);
  });
});

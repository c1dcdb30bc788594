import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  STORE_KINDS,
  startTestControlPlane,
  type TestControlPlane,
} from './control-plane-harness.ts';
import { insertConnection, insertDatabase } from './lifecycle-fixtures.ts';

type Json = Record<string, unknown>;
type Segment = string | number;

const MUTATING = ['post', 'put', 'patch', 'delete'] as const;
const ALL_METHODS = ['get', ...MUTATING] as const;
const PLACEHOLDER_ID = '00000000-0000-4000-8000-000000000000';

/** The two kinds of string PostgreSQL refuses: NUL anywhere, a lone surrogate in `jsonb`. */
const POISONS = [
  { name: 'NUL', value: 'a\u0000b', reason: /NUL character/ },
  { name: 'lone surrogate', value: 'a\ud800b', reason: /lone UTF-16 surrogate/ },
] as const;

function resolve(schema: Json | undefined, components: Json): Json | undefined {
  const ref = schema?.$ref;
  if (typeof ref !== 'string') return schema;
  return components[ref.replace('#/components/schemas/', '')] as Json | undefined;
}

/** Every path to a string in a JSON schema: properties, array items and unions, nested. */
function stringPaths(
  schema: Json | undefined,
  components: Json,
  prefix: Segment[] = [],
  depth = 0,
): Segment[][] {
  const resolved = resolve(schema, components);
  if (!resolved || depth > 8) return [];
  const found: Segment[][] = [];
  const types = [resolved.type].flat();
  if (types.includes('string')) found.push(prefix);
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    for (const part of (resolved[key] as Json[] | undefined) ?? []) {
      found.push(...stringPaths(part, components, prefix, depth + 1));
    }
  }
  for (const [name, child] of Object.entries((resolved.properties as Json | undefined) ?? {})) {
    found.push(...stringPaths(child as Json, components, [...prefix, name], depth + 1));
  }
  if (resolved.items) {
    found.push(...stringPaths(resolved.items as Json, components, [...prefix, 0], depth + 1));
  }
  const unique = new Map(found.map((path) => [JSON.stringify(path), path]));
  return [...unique.values()];
}

/** A value holding `leaf` at `path`, e.g. ['tables', 0, 'name'] → {tables: [{name: leaf}]}. */
function nest(path: Segment[], leaf: unknown): unknown {
  return path.reduceRight<unknown>(
    (inner, segment) => (typeof segment === 'number' ? [inner] : { [segment]: inner }),
    leaf,
  );
}

/** The field as the API names it: `body.schemaConfig.tables[0].name`. */
function fieldName(part: string, path: Segment[]): string {
  return path.reduce<string>(
    (name, segment) => (typeof segment === 'number' ? `${name}[${segment}]` : `${name}.${segment}`),
    part,
  );
}

interface Case {
  readonly method: string;
  readonly path: string;
  readonly query?: string;
  readonly body?: unknown;
  readonly field: string;
}

/** One request per string field of every route in the OpenAPI document, poisoned with `value`. */
function casesFromOpenApi(document: Json, value: string, withQueryAndPath: boolean): Case[] {
  const components = ((document.components as Json | undefined)?.schemas as Json) ?? {};
  const cases: Case[] = [];
  for (const [template, operations] of Object.entries(document.paths as Json)) {
    for (const method of ALL_METHODS) {
      const operation = (operations as Json)[method] as Json | undefined;
      if (!operation) continue;
      const parameters = (operation.parameters as Json[] | undefined) ?? [];
      const concrete = template.replace(/\{\w+\}/g, PLACEHOLDER_ID);
      if (withQueryAndPath) {
        for (const parameter of parameters) {
          const name = parameter.name as string;
          if (parameter.in === 'query') {
            cases.push({
              method,
              path: concrete,
              query: `${name}=${encodeURIComponent(value)}`,
              field: `query.${name}`,
            });
          } else if (parameter.in === 'path' && method !== 'get') {
            const poisoned = template
              .replace(`{${name}}`, encodeURIComponent(value))
              .replace(/\{\w+\}/g, PLACEHOLDER_ID);
            cases.push({ method, path: poisoned, field: `params.${name}` });
          }
        }
      }
      if (!(MUTATING as readonly string[]).includes(method)) continue;
      const content = (operation.requestBody as Json | undefined)?.content as Json | undefined;
      const schema = (content?.['application/json'] as Json | undefined)?.schema as Json;
      for (const path of stringPaths(schema, components)) {
        if (path.length === 0) continue;
        cases.push({
          method,
          path: concrete,
          body: nest(path, value),
          field: fieldName('body', path),
        });
      }
    }
  }
  return cases;
}

/** Free-form JSON the OpenAPI document cannot list: the schema config and its nested keys. */
function schemaConfigCases(databasePath: string, value: string): Case[] {
  const configs: [unknown, string][] = [
    [{ tables: [{ name: value }] }, 'body.schemaConfig.tables[0].name'],
    [{ tables: [{ name: 'items', where: value }] }, 'body.schemaConfig.tables[0].where'],
    [
      { tables: [{ name: 'items', where_columns: ['id', value] }] },
      'body.schemaConfig.tables[0].where_columns[1]',
    ],
    [{ field_aliases: { [`items${value}`]: 'things' } }, 'body.schemaConfig.field_aliases'],
    [{ sync: { change_column: value } }, 'body.schemaConfig.sync.change_column'],
  ];
  return configs.flatMap(([schemaConfig, field]) => [
    { method: 'patch', path: databasePath, body: { schemaConfig }, field },
    {
      method: 'post',
      path: '/v1/databases',
      body: { name: 'shop', connectionId: PLACEHOLDER_ID, schemaConfig },
      field,
    },
  ]);
}

/** Row counts of every table in the store, to prove a refused request wrote nothing. */
async function rowCounts(cp: TestControlPlane): Promise<Record<string, number>> {
  const tables = await sql<{ table_name: string }>`
    select table_name from information_schema.tables
    where table_schema = current_schema() and table_type = 'BASE TABLE'
    order by table_name`.execute(cp.context.db);
  const counts: Record<string, number> = {};
  for (const { table_name } of tables.rows) {
    const result = await sql<{
      n: string;
    }>`select count(*) as n from ${sql.table(table_name)}`.execute(cp.context.db);
    counts[table_name] = Number(result.rows[0]?.n);
  }
  return counts;
}

describe.each(STORE_KINDS)('strings PostgreSQL cannot store, on the %s store', (kind) => {
  let cp: TestControlPlane;
  let token: string;
  let databaseId: string;
  let connectionId: string;
  let document: Json;

  beforeAll(async () => {
    cp = await startTestControlPlane(kind);
    token = await cp.token('nul@example.com', { admin: true });
    expect((await cp.request('GET', '/v1/management-keys', { token })).status).toBe(200);
    const user = await cp.context.db
      .selectFrom('users')
      .select('account_id')
      .where('email', '=', 'nul@example.com')
      .executeTakeFirstOrThrow();
    const owner = { accountId: user.account_id };
    connectionId = await insertConnection(cp, owner);
    databaseId = (await insertDatabase(cp, owner, { name: 'shop', connectionId })).id;
    document = (await cp.request('GET', '/v1/openapi.json')).body;
  });
  afterAll(() => cp?.close());

  async function expectRefused(test: Case, reason: RegExp): Promise<void> {
    const url = test.query ? `${test.path}?${test.query}` : test.path;
    const response = await cp.request(test.method.toUpperCase(), url, {
      token,
      ...(test.body === undefined ? {} : { body: test.body }),
    });
    const label = `${test.method.toUpperCase()} ${url} (${test.field})`;
    expect(response.status, label).toBe(400);
    expect(response.body.error, label).toBe('validation_failed');
    expect(response.body.message, label).toContain(test.field);
    expect(response.body.message, label).toMatch(reason);
  }

  it('covers the routes that took the NUL attack: names, schemas, config and key names', () => {
    const fields = casesFromOpenApi(document, 'x', true).map(
      (c) => `${c.method} ${c.path} ${c.field}`,
    );
    for (const expected of [
      /^post \/v1\/connections body\.name$/,
      /^post \/v1\/databases body\.name$/,
      /^post \/v1\/databases body\.sourceSchema$/,
      /^post \/v1\/databases\/\S+\/api-keys body\.name$/,
      /^post \/v1\/management-keys body\.name$/,
    ]) {
      expect(
        fields.some((field) => expected.test(field)),
        String(expected),
      ).toBe(true);
    }
  });

  for (const poison of POISONS) {
    it(`refuses a ${poison.name} in every body string field, query parameter and path parameter, storing nothing`, async () => {
      const before = await rowCounts(cp);
      // Lone surrogates cannot be spelled in a URL (its percent-encoding is UTF-8), so they are
      // tried in bodies only.
      const cases = [
        ...casesFromOpenApi(document, poison.value, poison.name === 'NUL'),
        ...schemaConfigCases(`/v1/databases/${databaseId}`, poison.value),
      ];
      expect(cases.length).toBeGreaterThan(50);
      for (const test of cases) await expectRefused(test, poison.reason);
      expect(await rowCounts(cp)).toEqual(before);
    });
  }

  it('refuses a NUL in a body that would otherwise be accepted, leaving the resource unchanged', async () => {
    const path = `/v1/databases/${databaseId}`;
    const original = (await cp.request('GET', path, { token })).body;
    for (const body of [
      { name: 'shop\u0000two' },
      { schemaConfig: { tables: [{ name: 'items\u0000' }] } },
      { schemaConfig: { tables: [{ name: 'items', where: 'id > 1\u0000' }] } },
    ]) {
      const response = await cp.request('PATCH', path, { token, body });
      expect(response.status).toBe(400);
      expect(response.body.error).toBe('validation_failed');
    }
    expect((await cp.request('GET', path, { token })).body).toEqual(original);

    const keys = await cp.request('POST', `${path}/api-keys`, { token, body: { name: 'k\u0000' } });
    expect(keys).toMatchObject({ status: 400, body: { error: 'validation_failed' } });
    expect((await cp.request('GET', `${path}/api-keys`, { token })).body).toEqual([]);

    const management = await cp.request('POST', '/v1/management-keys', {
      token,
      body: { name: 'ci\u0000' },
    });
    expect(management).toMatchObject({ status: 400, body: { error: 'validation_failed' } });
  });

  it('still accepts ordinary non-ASCII text, emoji included', async () => {
    const response = await cp.request('PATCH', `/v1/databases/${databaseId}`, {
      token,
      body: { name: 'café-🛒' },
    });
    expect(response.status).toBe(200);
    expect(response.body.name).toBe('café-🛒');
  });
});

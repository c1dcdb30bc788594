import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApi } from '../src/api/build-api.ts';
import {
  EMBEDDED_STORE,
  startTestControlPlane,
  type TestControlPlane,
} from './control-plane-harness.ts';

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'] as const;

interface RegisteredRoute {
  readonly method: string;
  /** Every spelling of the path: routes sharing a param position print as `:dbId|:id`. */
  readonly paths: string[];
}

/**
 * The routes a Fastify app registered, read from `printRoutes()` (Fastify has no other public
 * route list once routes are in). Each tree line is a path piece; depth is the indent / 4.
 */
function registeredRoutes(tree: string): RegisteredRoute[] {
  const routes: RegisteredRoute[] = [];
  const stack: string[] = [];
  for (const line of tree.split('\n')) {
    const match = /^((?:│ {3}| {4})*)(?:├── |└── )(\S+)(?: \(([A-Z, ]+)\))?/.exec(line);
    if (!match) continue;
    const depth = (match[1] as string).length / 4;
    stack.length = depth;
    stack.push(match[2] as string);
    if (!match[3]) continue;
    const path = stack.join('');
    for (const method of match[3].split(', ')) {
      if (method === 'HEAD') continue; // Fastify adds HEAD for every GET by itself.
      routes.push({ method: method.toLowerCase(), paths: spellings(path) });
    }
  }
  return routes;
}

/** `/a/:x|:y/b` → [`/a/{x}/b`, `/a/{y}/b`], in OpenAPI's template syntax. */
function spellings(path: string): string[] {
  let results = [''];
  for (const [index, segment] of path.split('/').entries()) {
    const options = segment.split('|').map((part) => part.replace(/^:(\w+)$/, '{$1}'));
    results = results.flatMap((prefix) =>
      options.map((option) => (index === 0 ? option : `${prefix}/${option}`)),
    );
  }
  return results;
}

type Json = Record<string, unknown>;

function expectErrorEnvelope(response: Json | undefined, where: string): void {
  const schema = (response?.content as Json | undefined)?.['application/json'] as
    | { schema?: Json }
    | undefined;
  expect(schema?.schema, `${where}: no JSON schema`).toBeDefined();
  const envelope = schema?.schema as Json;
  expect(envelope.type, where).toBe('object');
  expect(envelope.required, where).toEqual(expect.arrayContaining(['error', 'message']));
  // An envelope may carry more beside them: connection_test_failed carries the test result.
  const { error, message, ...more } = envelope.properties as Json;
  expect({ error, message }, where).toEqual({
    error: expect.objectContaining({ type: 'string' }),
    message: expect.objectContaining({ type: 'string' }),
  });
  expect(Object.keys(more), where).toEqual(where.endsWith(' 422') ? ['test'] : []);
}

describe.each(EMBEDDED_STORE)('the OpenAPI document on the %s store', (kind) => {
  let cp: TestControlPlane;
  let document: Json;
  let routes: RegisteredRoute[];

  beforeAll(async () => {
    cp = await startTestControlPlane(kind);
    document = (await cp.request('GET', '/v1/openapi.json')).body;
    // The same app as the one serving, built again to read its route table.
    const app = await buildApi(cp.context);
    await app.ready();
    routes = registeredRoutes(app.printRoutes());
    await app.close();
  });
  afterAll(() => cp?.close());

  it('is valid OpenAPI 3.1', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(document));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('documents every /v1 route the app registered, with a response schema', () => {
    const paths = document.paths as Record<string, Json>;
    const v1 = routes.filter(
      (route) => route.paths[0]?.startsWith('/v1/') && route.paths[0] !== '/v1/openapi.json',
    );
    // The resources of this brief at least; others add theirs and are checked the same way.
    expect(v1.length).toBeGreaterThanOrEqual(9);
    for (const route of v1) {
      const documented = route.paths.find((path) => paths[path]?.[route.method]);
      expect(documented, `${route.method.toUpperCase()} ${route.paths.join(' | ')}`).toBeDefined();
      const operation = paths[documented as string]?.[route.method] as Json;
      const responses = operation.responses as Record<string, Json>;
      const success = Object.keys(responses).filter((status) => /^2\d\d$/.test(status));
      expect(success.length, `${route.method} ${documented}: no 2xx response`).toBeGreaterThan(0);
      for (const status of success) {
        if (status === '204') continue;
        const content = responses[status]?.content as Json | undefined;
        expect(
          (content?.['application/json'] as Json | undefined)?.schema,
          `${route.method} ${documented} ${status}: no response schema`,
        ).toBeDefined();
      }
    }
    // And nothing is documented that the app does not serve.
    const served = new Set(v1.flatMap((route) => route.paths.map((p) => `${route.method} ${p}`)));
    for (const [path, item] of Object.entries(paths)) {
      for (const method of METHODS) if (item[method]) expect(served).toContain(`${method} ${path}`);
    }
  });

  it('documents 401 and the flat error envelope on every operation', async () => {
    const validator = new Validator();
    await validator.validate(structuredClone(document));
    const resolved = validator.resolveRefs() as Json;
    for (const [path, item] of Object.entries(resolved.paths as Record<string, Json>)) {
      for (const method of METHODS) {
        const operation = item[method] as Json | undefined;
        if (!operation) continue;
        const responses = operation.responses as Record<string, Json>;
        expectErrorEnvelope(responses['401'], `${method} ${path} 401`);
        for (const [status, response] of Object.entries(responses)) {
          if (/^[45]\d\d$/.test(status))
            expectErrorEnvelope(response, `${method} ${path} ${status}`);
        }
      }
    }
  });

  it('reads the route table correctly', () => {
    expect(
      registeredRoutes(
        [
          '└── /v1/',
          '    ├── databases/:dbId|:id/api-keys (GET, HEAD, POST)',
          '    │   └── /:keyId (DELETE)',
          '    └── system/health (GET, HEAD)',
        ].join('\n'),
      ),
    ).toEqual([
      { method: 'get', paths: ['/v1/databases/{dbId}/api-keys', '/v1/databases/{id}/api-keys'] },
      { method: 'post', paths: ['/v1/databases/{dbId}/api-keys', '/v1/databases/{id}/api-keys'] },
      {
        method: 'delete',
        paths: ['/v1/databases/{dbId}/api-keys/{keyId}', '/v1/databases/{id}/api-keys/{keyId}'],
      },
      { method: 'get', paths: ['/v1/system/health'] },
    ]);
  });
});

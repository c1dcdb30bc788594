import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { EndpointRouter } from '../src/adapters/drivers/process/endpoint-router.ts';
import { RouteTable } from '../src/adapters/drivers/process/route-table.ts';
import { startRouter } from '../src/adapters/drivers/process/router-process.ts';
import {
  type EndpointRoute,
  parseRoutes,
  ROUTES_FILE,
  RoutesFileError,
  routesText,
  writeRoutesFile,
} from '../src/adapters/drivers/process/router-routes.ts';

const log = pino({ level: 'silent' });
const target = (port: number) => ({ instanceId: 'inst-1', backends: [`http://127.0.0.1:${port}`] });
const file = (endpoints: Record<string, unknown>, version = 1) =>
  JSON.stringify({ version, endpoints });

describe('parseRoutes', () => {
  it('reads what the driver writes', () => {
    const endpoints = new Map<string, EndpointRoute>([
      ['db-1', { port: 40_001, target: target(40_100), message: 'paused' }],
      ['db-2', { port: 0, target: null, message: 'not deployed' }],
    ]);
    const parsed = parseRoutes(routesText({ version: 7, endpoints }));
    expect(parsed.version).toBe(7);
    expect([...parsed.endpoints]).toEqual([...endpoints]);
  });

  it.each<[string, string, string]>([
    ['not JSON', '{"version":', 'the file is not JSON'],
    ['an array', '[]', 'the file is not an object'],
    ['a negative version', file({}, -1), 'version must be a non-negative integer'],
    ['endpoints as a list', '{"version":1,"endpoints":[]}', 'endpoints must be an object'],
    [
      'a key that climbs out',
      file({ '../etc': { port: 1, target: null, message: '' } }),
      'an endpoint key is not a database id',
    ],
    [
      'a prototype key',
      '{"version":1,"endpoints":{"__proto__":{"port":1,"target":null,"message":""}}}',
      'an endpoint key is not a database id',
    ],
    [
      'a port out of range',
      file({ db: { port: 70_000, target: null, message: '' } }),
      'endpoint db: port must be 0 to 65535',
    ],
    [
      'two endpoints on one port',
      file({
        a: { port: 5000, target: null, message: '' },
        b: { port: 5000, target: null, message: '' },
      }),
      'endpoint b: port 5000 is another endpoint',
    ],
    [
      'a target on another host',
      file({
        db: {
          port: 5000,
          target: { instanceId: 'i', backends: ['http://10.0.0.1:80'] },
          message: '',
        },
      }),
      'endpoint db: a backend is not an http://127.0.0.1:<port> URL',
    ],
    [
      'a target with a path',
      file({
        db: {
          port: 5000,
          target: { instanceId: 'i', backends: ['http://127.0.0.1:80/x'] },
          message: '',
        },
      }),
      'a backend is not an http://127.0.0.1:<port> URL',
    ],
    [
      'a target without replicas',
      file({ db: { port: 5000, target: { instanceId: 'i', backends: [] }, message: '' } }),
      'target.backends must list 1 to 16 URLs',
    ],
    [
      'a message of megabytes',
      file({ db: { port: 5000, target: null, message: 'x'.repeat(5000) } }),
      'message must be a string of at most 1000 characters',
    ],
  ])('refuses %s', (_what, text, problem) => {
    expect(() => parseRoutes(text)).toThrow(RoutesFileError);
    expect(() => parseRoutes(text)).toThrow(problem);
  });
});

describe('RouteTable', () => {
  const servers: Server[] = [];
  let router: EndpointRouter | undefined;
  afterEach(async () => {
    await router?.closeAll();
    for (const server of servers.splice(0)) server.close();
  });

  /** A stand-in instance answering with its name. */
  async function instance(name: string): Promise<number> {
    const server = createServer((_req, res) => res.end(name));
    servers.push(server);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const address = server.address();
    return typeof address === 'object' && address ? address.port : 0;
  }

  const ask = async (port: number) => {
    const response = await fetch(`http://127.0.0.1:${port}/query`);
    return `${response.status} ${await response.text()}`;
  };

  it('opens, points, re-points, unroutes and closes endpoints as the routes say', async () => {
    router = new EndpointRouter({ log, portWaitMs: 0 });
    const table = new RouteTable(router, log);
    const [a, b] = [await instance('a'), await instance('b')];
    const routes = (version: number, endpoints: Record<string, unknown>) =>
      parseRoutes(file(endpoints, version));

    await table.apply(routes(1, { db: { port: 0, target: target(a), message: 'none' } }));
    const status = table.status('r', 1);
    const port = (status.endpoints.db as { port: number }).port;
    expect(status.version).toBe(1);
    expect(await ask(port)).toBe('200 a');

    await table.apply(routes(2, { db: { port, target: target(b), message: 'none' } }));
    expect(await ask(port)).toBe('200 b');

    await table.apply(
      routes(3, { db: { port, target: null, message: 'The database is paused.' } }),
    );
    expect(await ask(port)).toBe(
      '503 {"error":{"code":"service_unavailable","message":"The database is paused."}}',
    );

    await table.apply(routes(4, {}));
    expect(table.status('r', 1)).toEqual({ release: 'r', pid: 1, version: 4, endpoints: {} });
    await expect(ask(port)).rejects.toThrow();
  });

  it('reports an endpoint whose port is taken, serves the others, and opens it once free', async () => {
    router = new EndpointRouter({ log, portWaitMs: 0 });
    const table = new RouteTable(router, log);
    const a = await instance('a');
    // Last made: the one closed below.
    const taken = await instance('someone else');
    const routes = parseRoutes(
      file({
        blocked: { port: taken, target: target(a), message: '' },
        free: { port: 0, target: target(a), message: '' },
      }),
    );
    await table.apply(routes);
    const status = table.status('r', 1);
    expect(status.endpoints.blocked).toEqual({ error: 'EADDRINUSE' });
    expect(await ask((status.endpoints.free as { port: number }).port)).toBe('200 a');

    await new Promise((resolve) => servers.pop()?.close(resolve));
    await table.apply(routes);
    expect(table.status('r', 1).endpoints.blocked).toEqual({ port: taken });
    expect(await ask(taken)).toBe('200 a');
  });
});

describe('the router process', () => {
  it('applies the routes file when asked, keeps the last good routes when a file is refused, and stops when its folder goes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'replix-router-unit-'));
    const upstream = createServer((_req, res) => res.end('instance'));
    upstream.listen(0, '127.0.0.1');
    await once(upstream, 'listening');
    const address = upstream.address();
    const upstreamPort = typeof address === 'object' && address ? address.port : 0;
    try {
      writeRoutesFile(dir, {
        version: 1,
        endpoints: new Map([['db', { port: 0, target: target(upstreamPort), message: '' }]]),
      });
      const running = await startRouter({ dir, log });
      const admin = (method: string, path: string) =>
        fetch(`http://127.0.0.1:${running.adminPort}${path}`, { method }).then((response) =>
          response.json(),
        );
      expect(Number(readFileSync(join(dir, 'admin-port'), 'utf8'))).toBe(running.adminPort);
      const port = (running.status().endpoints.db as { port: number }).port;
      expect(await (await fetch(`http://127.0.0.1:${port}/query`)).text()).toBe('instance');

      writeFileSync(join(dir, ROUTES_FILE), '{"version": 2, "endpoints": {"db": {"port": -1}}}');
      const refused = await admin('POST', '/apply');
      expect(refused).toMatchObject({
        version: 1,
        endpoints: { db: { port } },
        problem: 'endpoint db: port must be 0 to 65535',
      });
      expect(await (await fetch(`http://127.0.0.1:${port}/query`)).text()).toBe('instance');

      writeRoutesFile(dir, {
        version: 3,
        endpoints: new Map([['db', { port, target: null, message: 'Paused.' }]]),
      });
      expect(await admin('POST', '/apply')).toMatchObject({
        version: 3,
        endpoints: { db: { port } },
      });
      expect((await fetch(`http://127.0.0.1:${port}/query`)).status).toBe(503);
      expect(await admin('GET', '/status')).not.toHaveProperty('problem');

      rmSync(dir, { recursive: true, force: true });
      await running.stopped;
      await expect(fetch(`http://127.0.0.1:${port}/query`)).rejects.toThrow();
    } finally {
      upstream.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
  it('hands its ports to a router started with --take-over without refusing a request', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'replix-router-takeover-'));
    const upstream = createServer((_req, res) => res.end('instance'));
    upstream.listen(0, '127.0.0.1');
    await once(upstream, 'listening');
    const address = upstream.address();
    const upstreamPort = typeof address === 'object' && address ? address.port : 0;
    const running: Array<{ stop(): Promise<void> }> = [];
    try {
      writeRoutesFile(dir, {
        version: 1,
        endpoints: new Map([['db', { port: 0, target: target(upstreamPort), message: '' }]]),
      });
      const old = await startRouter({ dir, log });
      running.push(old);
      const port = (old.status().endpoints.db as { port: number }).port;
      // The driver writes a picked port down, as it does for a router it keeps.
      writeRoutesFile(dir, {
        version: 2,
        endpoints: new Map([['db', { port, target: target(upstreamPort), message: '' }]]),
      });
      await fetch(`http://127.0.0.1:${old.adminPort}/apply`, { method: 'POST' });

      // Queries one after another, on kept-alive connections, through the whole hand-over.
      const failures: string[] = [];
      let answered = 0;
      let querying = true;
      const queries = (async () => {
        while (querying) {
          try {
            const response = await fetch(`http://127.0.0.1:${port}/query`);
            if ((await response.text()) === 'instance') answered++;
            else failures.push(String(response.status));
          } catch (error) {
            failures.push(String((error as Error).cause ?? error));
          }
        }
      })();
      const until = async (count: number) => {
        while (answered < count) await new Promise((resolve) => setTimeout(resolve, 10));
      };
      await until(20);

      const next = await startRouter({ dir, log, takeOver: true });
      running.push(next);
      expect(next.status().endpoints.db).toEqual({ port });
      expect(Number(readFileSync(join(dir, 'admin-port'), 'utf8'))).toBe(next.adminPort);
      await until(answered + 20);
      await old.stop({ handOver: true });
      running.shift();
      await until(answered + 50);
      querying = false;
      await queries;
      expect(failures).toEqual([]);
    } finally {
      for (const router of running) await router.stop();
      upstream.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

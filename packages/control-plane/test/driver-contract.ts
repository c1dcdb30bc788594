import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileSchema, parseSchemaConfig } from '@replix/engine';
import { deriveApiKey, newKeyId, newKeySecret } from '@replix/instance-protocol';
import { connectorFromUrl } from '@replix/sources';
import type { TestDatabase } from '@replix/testkit';
import { testMariaDb } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Driver } from '../src/adapters/drivers/driver.ts';
import type { InstanceKeySet } from '../src/adapters/drivers/instance-key-set.ts';
import type { InstanceLaunch } from '../src/adapters/drivers/instance-launch.ts';
import { instanceBundle } from '../src/application/builder/instance-bundle.ts';
import { writeArtifact } from '../src/application/builder/write-artifact.ts';
import { eventually } from './reconciler-fixtures.ts';

/**
 * The contract every driver passes (issue 16), through the `Driver` interface only, with real
 * instances: a real artifact built from a tiny MariaDB source. `makeDriver` returns a new driver
 * object on the same data each call: a second call is a control plane that crashed and
 * restarted.
 */
export interface DriverContractOptions {
  /**
   * What a control-plane crash takes with it besides the driver object. Default: the endpoints
   * it listens on (the process driver's live in the control plane's process); the instances
   * stay running.
   */
  readonly crash?: (driver: Driver, openDatabaseIds: readonly string[]) => Promise<void>;
  /**
   * Kills one replica of a running instance outright, as a crash of its machine or process
   * would (the process driver: SIGKILL to its pid; a cluster: deleting its pod or Deployment).
   */
  readonly killReplica: (driver: Driver, instanceId: string, ordinal: number) => Promise<void>;
  /**
   * How the test sends a GET to an instance's or an endpoint's URL. Default: fetch. A driver
   * whose endpoint URLs name a host the test cannot resolve (Kubernetes: `<scheme>://<host>`
   * behind a gateway) connects to its gateway with that `Host`.
   */
  readonly request?: (url: string, headers: Record<string, string>) => Promise<Response>;
  /**
   * What a closed endpoint answers: default 0 (nothing listens); behind a shared gateway, its
   * status for a host with no route (404).
   */
  readonly closedEndpointStatus?: number;
}

const QUERY = 'item { id name } ORDER BY id';
const ROWS = [
  { id: 1, name: 'one' },
  { id: 2, name: 'two' },
];
const PAUSED = 'The database is paused: resume it to serve queries.';

async function closeEndpoints(driver: Driver, databaseIds: readonly string[]): Promise<void> {
  for (const databaseId of databaseIds) await driver.closeEndpoint(databaseId);
}

/** The source's login: its password is a secret of every launch, never to be seen in logs. */
interface Source {
  readonly db: TestDatabase;
  readonly url: string;
  readonly password: string;
  readonly user: string;
}

async function createSource(): Promise<Source> {
  const admin = testMariaDb();
  const db = await admin.createDatabase(
    "CREATE TABLE item (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL); INSERT INTO item VALUES (1, 'one'), (2, 'two')",
  );
  const user = `u_${db.name.slice(-8)}`;
  const password = `Pw-${randomBytes(9).toString('hex')}`;
  await admin.exec(
    `CREATE USER '${user}'@'%' IDENTIFIED BY '${password}'; GRANT ALL ON \`${db.name}\`.* TO '${user}'@'%'`,
  );
  const url = new URL(db.url);
  url.username = user;
  url.password = password;
  return { db, url: url.href, password, user };
}

/** A build's artifact for the source, written as the builder writes it. */
async function buildArtifact(dataDir: string, sourceUrl: string): Promise<string> {
  const connector = connectorFromUrl(sourceUrl);
  try {
    const sourceSchema = await connector.introspect();
    const schemaConfig = parseSchemaConfig({ sync: { mode: 'poll', interval: 5 } });
    const bundle = await instanceBundle(dataDir);
    return writeArtifact({
      dataDir,
      buildId: randomUUID(),
      databaseId: randomUUID(),
      programPath: bundle.path,
      schemaConfig,
      sourceSchema,
      schema: compileSchema(sourceSchema, schemaConfig),
    }).dir;
  } finally {
    await connector.close();
  }
}

export function runDriverContract(
  name: string,
  makeDriver: () => Driver,
  options: DriverContractOptions,
): void {
  const crash = options.crash ?? closeEndpoints;
  const request = options.request ?? ((url, headers) => fetch(url, { headers }));

  describe(`the driver contract: ${name}`, () => {
    const buildDir = mkdtempSync(join(tmpdir(), 'replix-driver-contract-'));
    const drivers: Driver[] = [];
    let source: Source;
    let artifactDir: string;
    let driver: Driver;

    /** A driver as a restarted control plane makes it. */
    const restarted = () => {
      const made = makeDriver();
      drivers.push(made);
      return made;
    };

    function launch(overrides: Partial<InstanceLaunch> = {}): InstanceLaunch {
      return {
        instanceId: randomUUID(),
        databaseId: randomUUID(),
        buildId: randomUUID(),
        artifactDir,
        sourceUrl: source.url,
        ssh: undefined,
        keySecretHex: newKeySecret().toString('hex'),
        keys: { keyIds: [newKeyId()], adminKeyIds: [newKeyId()] },
        replicationId: 'rx_contract',
        replicas: 1,
        settings: {
          instanceSize: 'xs',
          taskCpu: 0.25,
          taskMemoryMb: 512,
          syncMode: 'poll',
          syncInterval: 5,
          logLevel: 'info',
          safetyNet: 3600,
        },
        replicationPaused: false,
        ...overrides,
      };
    }

    const apiKey = (of: InstanceLaunch, keyId: string) =>
      deriveApiKey(Buffer.from(of.keySecretHex, 'hex'), keyId);

    /** Queries `url` with `key`: the status and body, or status 0 when nothing answers. */
    async function query(url: string, key: string): Promise<{ status: number; body: unknown }> {
      try {
        const response = await request(`${url}/query?q=${encodeURIComponent(QUERY)}`, {
          authorization: `Bearer ${key}`,
        });
        return { status: response.status, body: await response.json() };
      } catch {
        return { status: 0, body: null };
      }
    }

    /** Waits until the instance behind `url` serves the rows (its snapshot is in). */
    async function serving(url: string, key: string): Promise<void> {
      await eventually(
        async () => {
          const { status, body } = await query(url, key);
          return (
            status === 200 &&
            JSON.stringify((body as { data?: unknown }).data) === JSON.stringify(ROWS)
          );
        },
        30_000,
        `answers from ${url}`,
      );
    }
    const okAnswer = () => ({ status: 200, body: expect.objectContaining({ data: ROWS }) });

    beforeAll(async () => {
      source = await createSource();
      artifactDir = await buildArtifact(buildDir, source.url);
      driver = restarted();
    });
    afterAll(async () => {
      for (const made of drivers) await made.shutdown();
      rmSync(buildDir, { recursive: true, force: true });
      if (source) {
        await testMariaDb().exec(`DROP USER IF EXISTS '${source.user}'@'%'`);
        await source.db.drop();
      }
    });

    it('starts an instance: start resolves once it listens, and it is alive', async () => {
      const one = launch();
      const handle = await driver.start(one);
      expect(handle.instanceId).toBe(one.instanceId);
      expect(await driver.isAlive(one.instanceId)).toBe(true);
      // Listening: an answer, not a refused connection.
      const health = await request(`${handle.privateUrl}/health`, {});
      expect(health.status).toBeGreaterThan(0);
      await serving(handle.privateUrl, apiKey(one, one.keys.keyIds[0] as string));
      await driver.stop(one.instanceId);
    });

    it('adopts a running instance on a second start, also from a new driver object', async () => {
      const one = launch();
      const first = await driver.start(one);
      const again = await driver.start(one);
      expect(again).toEqual(first);
      const successor = restarted();
      const adopted = await successor.start(one);
      expect(adopted).toEqual(first);
      // One instance started: its log has one ready line.
      const { lines } = await successor.readLogs(one.instanceId, undefined);
      expect(lines.filter((line) => line.message.startsWith('ready at '))).toHaveLength(1);
      await successor.stop(one.instanceId);
      expect(await driver.isAlive(one.instanceId)).toBe(false);
    });

    it('stops an instance; stopping again, or an unknown id, is fine', async () => {
      const one = launch();
      const handle = await driver.start(one);
      await driver.stop(one.instanceId);
      expect(await driver.isAlive(one.instanceId)).toBe(false);
      expect(
        (await query(handle.privateUrl, apiKey(one, one.keys.keyIds[0] as string))).status,
      ).toBe(0);
      await driver.stop(one.instanceId);
      await driver.stop(randomUUID());
      expect(await driver.isAlive(randomUUID())).toBe(false);
    });

    it('updates the keys of a running instance without restarting it', async () => {
      const kept = newKeyId();
      const removed = newKeyId();
      const added = newKeyId();
      const one = launch({ keys: { keyIds: [kept, removed], adminKeyIds: [newKeyId()] } });
      const handle = await driver.start(one);
      await serving(handle.privateUrl, apiKey(one, removed));
      expect((await query(handle.privateUrl, apiKey(one, added))).status).toBe(401);
      const keys: InstanceKeySet = { keyIds: [kept, added], adminKeyIds: one.keys.adminKeyIds };
      await driver.updateKeys(one.instanceId, keys);
      await eventually(
        async () => (await query(handle.privateUrl, apiKey(one, added))).status === 200,
        5000,
        'the added key to be accepted',
      );
      expect((await query(handle.privateUrl, apiKey(one, removed))).status).toBe(401);
      expect((await query(handle.privateUrl, apiKey(one, kept))).status).toBe(200);
      // The same instance: a start adopts it rather than starting another.
      expect(await driver.start({ ...one, keys })).toEqual(handle);
      await driver.stop(one.instanceId);
    });

    it('reads the logs in pages with its token, never with a secret of the launch', async () => {
      // Debug logs the most; no poll comes within the test to write lines of its own.
      const one = launch({
        settings: { ...launch().settings, logLevel: 'debug', syncInterval: 3600 },
      });
      const handle = await driver.start(one);
      const key = apiKey(one, one.keys.keyIds[0] as string);
      await serving(handle.privateUrl, key);
      const first = await driver.readLogs(one.instanceId, undefined);
      expect(first.lines.length).toBeGreaterThan(0);
      expect(first.lines.length).toBeLessThanOrEqual(200);
      const rest = await driver.readLogs(one.instanceId, first.nextToken);
      // Nothing happened since: the next page is empty and the token stays.
      const quiet = await driver.readLogs(one.instanceId, rest.nextToken);
      expect(quiet).toEqual({ lines: [], nextToken: rest.nextToken });
      // A request (carrying the key) writes lines: they come after the token, once.
      await request(`${handle.privateUrl}/health`, { authorization: `Bearer ${key}` });
      const after = await eventually(
        async () => {
          const page = await driver.readLogs(one.instanceId, rest.nextToken);
          return page.lines.length > 0 && page;
        },
        5000,
        'the lines after the token',
      );
      expect(after.lines.map((line) => line.message)).not.toContain('snapshot loaded');
      expect(await driver.readLogs(one.instanceId, after.nextToken)).toEqual({
        lines: [],
        nextToken: after.nextToken,
      });
      await driver.stop(one.instanceId);
      const everything = JSON.stringify([first, rest, after]);
      for (const secret of [one.keySecretHex, source.password, key, source.url]) {
        expect(everything).not.toContain(secret);
      }
      expect((await driver.readLogs(randomUUID(), undefined)).lines).toEqual([]);
    });

    it('reaps instances the store does not list, and keeps the listed ones', async () => {
      const live = launch();
      const orphan = launch();
      const late = launch();
      await driver.start(live);
      await driver.start(orphan);
      // A control plane that crashed mid-deploy left `orphan`; the next one reaps.
      const successor = restarted();
      expect(successor.reapOrphans).toBeDefined();
      const reaped = await successor.reapOrphans?.(async () => {
        // A deploy records and starts `late` while the store is asked: not an orphan.
        await successor.start(late);
        return [live.instanceId];
      });
      expect(reaped).toEqual([orphan.instanceId]);
      expect(await successor.isAlive(orphan.instanceId)).toBe(false);
      expect(await successor.isAlive(live.instanceId)).toBe(true);
      expect(await successor.isAlive(late.instanceId)).toBe(true);
      await successor.stop(live.instanceId);
      await successor.stop(late.instanceId);
    });

    it('serves a database on one endpoint: 503 unrouted, routed, switched with no failed request, unrouted, closed', async () => {
      const databaseId = randomUUID();
      const keys = { keyIds: [newKeyId()], adminKeyIds: [newKeyId()] };
      const keySecretHex = newKeySecret().toString('hex');
      const a = launch({ databaseId, keys, keySecretHex });
      const b = launch({ databaseId, keys, keySecretHex });
      const key = apiKey(a, keys.keyIds[0] as string);
      const endpoint = await driver.openEndpoint(databaseId, null);
      expect(await driver.openEndpoint(databaseId, null)).toEqual(endpoint);
      const unrouted = await query(endpoint.url, key);
      expect(unrouted).toEqual({
        status: 503,
        body: { error: { code: 'service_unavailable', message: expect.any(String) } },
      });

      await serving((await driver.start(a)).privateUrl, key);
      await driver.route(databaseId, a.instanceId);
      expect(await query(endpoint.url, key)).toEqual(okAnswer());

      await serving((await driver.start(b)).privateUrl, key);
      // Queries one after another across the switch, and five more after it: every one answers.
      const answers: Array<{ status: number; body: unknown }> = [];
      let until = Number.POSITIVE_INFINITY;
      const load = (async () => {
        while (answers.length < until) answers.push(await query(endpoint.url, key));
      })();
      await eventually(async () => answers.length >= 5, 10_000, 'queries before the switch');
      await driver.route(databaseId, b.instanceId);
      await driver.stop(a.instanceId);
      until = answers.length + 5;
      await load;
      expect(answers.filter((answer) => answer.status !== 200)).toEqual([]);
      // `a` is gone: `b` answers.
      expect(await query(endpoint.url, key)).toEqual(okAnswer());

      await driver.unroute(databaseId, PAUSED);
      expect(await query(endpoint.url, key)).toEqual({
        status: 503,
        body: { error: { code: 'service_unavailable', message: PAUSED } },
      });
      await driver.route(databaseId, b.instanceId);
      expect(await query(endpoint.url, key)).toEqual(okAnswer());
      expect(await driver.openEndpoint(databaseId, endpoint.port)).toEqual(endpoint);

      await driver.closeEndpoint(databaseId);
      const closed = await request(`${endpoint.url}/query?q=${encodeURIComponent(QUERY)}`, {
        authorization: `Bearer ${key}`,
      }).then(
        (response) => response.status,
        () => 0,
      );
      expect(closed).toBe(options.closedEndpointStatus ?? 0);
      await driver.closeEndpoint(databaseId);
      await driver.stop(b.instanceId);
    });

    it('runs replicas: all listed and serving, one killed is restarted alone, the endpoint spreads over them', async () => {
      const two = launch({ replicas: 2 });
      const key = apiKey(two, two.keys.keyIds[0] as string);
      const handle = await driver.start(two);
      const listed = await driver.replicas(two.instanceId);
      expect(listed.map(({ ordinal, alive }) => ({ ordinal, alive }))).toEqual([
        { ordinal: 0, alive: true },
        { ordinal: 1, alive: true },
      ]);
      const urls = listed.map((replica) => replica.url as string);
      expect(new Set(urls).size).toBe(2);
      for (const url of urls) await serving(url, key);

      const endpoint = await driver.openEndpoint(two.databaseId, null);
      await driver.route(two.databaseId, two.instanceId);
      for (let i = 0; i < 4; i++) expect(await query(endpoint.url, key)).toEqual(okAnswer());

      await options.killReplica(driver, two.instanceId, 1);
      await eventually(
        async () => !(await driver.isAlive(two.instanceId)),
        10_000,
        'the instance to be seen as not alive',
      );
      const afterKill = await driver.replicas(two.instanceId);
      expect(afterKill.map(({ ordinal, alive }) => ({ ordinal, alive }))).toEqual([
        { ordinal: 0, alive: true },
        { ordinal: 1, alive: false },
      ]);
      // The endpoint keeps answering from the replica left.
      for (let i = 0; i < 4; i++) expect(await query(endpoint.url, key)).toEqual(okAnswer());

      // start restarts replica 1 only: replica 0 (the handle) is the same process.
      expect(await driver.start(two)).toEqual(handle);
      expect(await driver.isAlive(two.instanceId)).toBe(true);
      const restarted = await driver.replicas(two.instanceId);
      expect(restarted.every((replica) => replica.alive)).toBe(true);
      await serving(restarted[1]?.url as string, key);
      await driver.route(two.databaseId, two.instanceId);
      for (let i = 0; i < 4; i++) expect(await query(endpoint.url, key)).toEqual(okAnswer());

      await driver.closeEndpoint(two.databaseId);
      await driver.stop(two.instanceId);
      expect(await driver.isAlive(two.instanceId)).toBe(false);
      for (const url of urls) expect((await query(url, key)).status).toBe(0);
    });

    describe('idempotence after a crash half-way', () => {
      it('start: the next control plane starts it again and finds the same instance', async () => {
        const one = launch();
        const crashed = restarted();
        const halfWay = crashed.start(one);
        await eventually(() => crashed.isAlive(one.instanceId), 30_000, 'the instance to run');
        await crash(crashed, []);
        const successor = restarted();
        const handle = await successor.start(one);
        expect(await halfWay).toEqual(handle);
        expect(await successor.start(one)).toEqual(handle);
        await successor.stop(one.instanceId);
      });

      it('route: the next control plane opens the same endpoint and routes it again', async () => {
        const one = launch();
        const key = apiKey(one, one.keys.keyIds[0] as string);
        const crashed = restarted();
        const endpoint = await crashed.openEndpoint(one.databaseId, null);
        await serving((await crashed.start(one)).privateUrl, key);
        await crashed.route(one.databaseId, one.instanceId);
        expect(await query(endpoint.url, key)).toEqual(okAnswer());
        await crash(crashed, [one.databaseId]);

        const successor = restarted();
        expect(await successor.openEndpoint(one.databaseId, endpoint.port)).toEqual(endpoint);
        await successor.start(one);
        await successor.route(one.databaseId, one.instanceId);
        await successor.route(one.databaseId, one.instanceId);
        expect(await query(endpoint.url, key)).toEqual(okAnswer());
        await successor.closeEndpoint(one.databaseId);
        await successor.stop(one.instanceId);
      });

      it('stop: the next control plane stops it again and it is gone', async () => {
        const one = launch();
        const crashed = restarted();
        await crashed.start(one);
        const halfWay = crashed.stop(one.instanceId);
        await crash(crashed, []);
        const successor = restarted();
        await successor.stop(one.instanceId);
        await halfWay;
        expect(await successor.isAlive(one.instanceId)).toBe(false);
        await successor.stop(one.instanceId);
        expect(await successor.isAlive(one.instanceId)).toBe(false);
      });
    });
  });
}

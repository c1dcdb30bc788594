import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { testMariaDb, testPostgres } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BuiltInIssuer } from '../src/application/identity/built-in-issuer.ts';
import { eventually, instanceProcesses, killInstanceProcesses } from './reconciler-fixtures.ts';

const REPLIX = fileURLToPath(new URL('../../cli/bin/replix.js', import.meta.url));

/** Starts `replix <role>` and resolves with its ready line. */
function startRole(
  role: string,
  env: NodeJS.ProcessEnv,
): Promise<{ child: ChildProcess; ready: { url?: string; probeUrl?: string } }> {
  const child = spawn(process.execPath, [REPLIX, role], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  return new Promise((resolve, reject) => {
    let stdout = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const line = stdout.split('\n').find((l) => l.includes('"ready"'));
      if (line) resolve({ child, ready: JSON.parse(line) });
    });
    child.once('exit', (code) =>
      reject(new Error(`replix ${role} exited with ${code}: ${stderr}`)),
    );
  });
}

describe('the control plane as separate processes against one PostgreSQL', () => {
  const children: ChildProcess[] = [];
  let dataDir: string;
  let api: string;
  let token: string;
  /** Where each process answers /ready: the api on its port, the others on their listener. */
  let probes: string[] = [];
  let drop: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'replix-roles-'));
    const store = await testPostgres().createDatabase();
    drop.push(() => store.drop());
    const env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      REPLIX_BUNDLE_CACHE_DIR: process.env.REPLIX_BUNDLE_CACHE_DIR,
      DATABASE_URL: store.url,
      REPLIX_SECRET_KEY: randomBytes(32).toString('hex'),
      REPLIX_DATA_DIR: dataDir,
      REPLIX_API_PORT: '0',
      REPLIX_LOG_LEVEL: 'warn',
      REPLIX_RECONCILE_INTERVAL_MS: '200',
      REPLIX_HEALTH_INTERVAL_MS: '500',
    };
    // The API first: it migrates the store; the others find it migrated.
    const started = [await startRole('api', env)];
    started.push(
      ...(await Promise.all(
        ['reconciler', 'builder', 'builder', 'health-monitor'].map((role) =>
          startRole(role, { ...env, REPLIX_PROBE_PORT: '0' }),
        ),
      )),
    );
    children.push(...started.map((s) => s.child));
    probes = started.map((s) => s.ready.probeUrl ?? (s.ready.url as string));
    api = `${started[0]?.ready.url}/v1`;
    token = await (await BuiltInIssuer.open(dataDir)).sign({ email: 'roles@example.com' });
  }, 120_000);

  afterAll(async () => {
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGTERM');
          }),
      ),
    );
    killInstanceProcesses(dataDir);
    for (const step of drop.reverse()) await step();
    drop = [];
    rmSync(dataDir, { recursive: true, force: true });
  });

  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${api}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body ? { 'content-type': 'application/json' } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
    });
    // biome-ignore lint/suspicious/noExplicitAny: tests assert response bodies field by field
    return { status: response.status, body: (await response.json().catch(() => undefined)) as any };
  };

  it('every process answers its readiness probe', { timeout: 60_000 }, async () => {
    expect(probes).toHaveLength(5);
    for (const base of probes) {
      expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      await eventually(
        async () => (await fetch(`${base}/ready`)).status === 200,
        30_000,
        `${base}/ready`,
      );
      expect((await fetch(`${base}/live`)).status).toBe(200);
    }
  });

  it('builds once, deploys once, and reports every process in system health', {
    timeout: 240_000,
  }, async () => {
    const source = await testMariaDb().createDatabase(
      'CREATE TABLE item (id INT PRIMARY KEY); INSERT INTO item VALUES (1), (2)',
    );
    drop.push(() => source.drop());
    const url = new URL(source.url);
    await testMariaDb().exec(
      `CREATE USER IF NOT EXISTS 'roles'@'%' IDENTIFIED BY 'pw'; GRANT SELECT, REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO 'roles'@'%'`,
    );
    const connection = await call('POST', '/connections', {
      name: 'src',
      host: url.hostname,
      port: Number(url.port),
      user: 'roles',
      password: 'pw',
    });
    expect(connection.status).toBe(201);
    const database = await call('POST', '/databases', {
      name: 'items',
      connectionId: connection.body.id,
      sourceSchema: source.name,
      schemaConfig: {},
    });
    expect(database.status).toBe(201);
    expect((await call('POST', `/databases/${database.body.id}/provision`)).status).toBe(202);

    const running = await eventually(
      async () => {
        const { body } = await call('GET', `/databases/${database.body.id}/instance`);
        if (body.database.status === 'failed') throw new Error(body.database.lastError);
        return body.database.status === 'running' && body.instance?.healthStatus === 'ok'
          ? body
          : undefined;
      },
      180_000,
      'the database to run and be healthy',
    );
    const builds = (await call('GET', `/databases/${database.body.id}/builds`)).body;
    expect(builds).toHaveLength(1);
    expect(builds[0].status).toBe('succeeded');
    expect(instanceProcesses(dataDir)).toHaveLength(1);
    expect(running.instance.endpointUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    const health = (await call('GET', '/system/health')).body;
    const count = (name: string) =>
      health.services.find((s: { name: string }) => s.name === name)?.runningCount;
    expect({
      api: count('api'),
      reconciler: count('reconciler'),
      builder: count('builder'),
      monitor: count('health-monitor'),
    }).toEqual({
      api: 1,
      reconciler: 1,
      builder: 2,
      monitor: 1,
    });
    expect(
      health.builderServices.find((s: { region: string }) => s.region === 'eu-west-1').runningCount,
    ).toBe(2);
    await testMariaDb().exec(`DROP USER IF EXISTS 'roles'@'%'`);
  });
});

import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type DatabaseServer, startDedicatedServer } from '@replix/testkit';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from './control-plane-harness.ts';
import { caller, pollUntil, reachStatus } from './lifecycle-fixtures.ts';
import { killInstanceProcesses } from './reconciler-fixtures.ts';

// A build and two deploys take seconds each; a slow machine gets room.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 120_000 });

const run = promisify(execFile);
const REPLIX = fileURLToPath(new URL('../../cli/bin/replix.js', import.meta.url));

const USER = 'rx_nobinlog';
const PASSWORD = 'No-binlog-9';

/**
 * Issue 15, point 2: a MariaDB whose binary log is off. A new database on it polls (and says
 * why); one that insists on CDC fails its first deploy with the dashboard's words, and
 * following them (Sync mode → poll, Save changes, Reconfigure) ends in a running database.
 */
describe('a failed first deploy on a source without a binary log', () => {
  let server: DatabaseServer;
  let cp: TestControlPlane;
  let token: string;
  let connectionId: string;

  beforeAll(async () => {
    server = await startDedicatedServer('mariadb', { binlog: false });
    const admin = await mysql.createConnection({ uri: server.url, multipleStatements: true });
    try {
      await admin.query(
        `CREATE DATABASE shop;
         CREATE TABLE shop.item (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL);
         INSERT INTO shop.item VALUES (1, 'one'), (2, 'two');
         CREATE USER '${USER}'@'%' IDENTIFIED BY '${PASSWORD}';
         GRANT ALL PRIVILEGES ON *.* TO '${USER}'@'%';`,
      );
    } finally {
      await admin.end();
    }
    cp = await startTestControlPlane('pglite', { roles: ['api', 'reconciler', 'builder'] });
    ({ token } = await caller(cp, 'no-binlog@example.com'));
    const created = await cp.request('POST', '/v1/connections', {
      token,
      body: {
        name: 'no binlog',
        host: '127.0.0.1',
        port: server.port,
        user: USER,
        password: PASSWORD,
      },
    });
    expect(created.status).toBe(201);
    connectionId = created.body.id;
  });
  afterAll(async () => {
    const dataDir = cp?.dataDir;
    await cp?.close();
    if (dataDir) killInstanceProcesses(dataDir);
    await server?.stop();
  });

  const instanceStatus = async (id: string) =>
    (await cp.request('GET', `/v1/databases/${id}/instance`, { token })).body;

  it('defaults a new database to poll at the plan’s minimum and says why', async () => {
    const created = await cp.request('POST', '/v1/databases', {
      token,
      body: { name: 'polled', connectionId, sourceSchema: 'shop' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      syncMode: 'poll',
      syncInterval: 60,
      syncModeReason:
        'Poll: the source’s binary log (replication) is off, so CDC is not available.',
    });
  });

  it('explains a CDC deploy failure and gets out of it by the way it names', async () => {
    const created = await cp.request('POST', '/v1/databases', {
      token,
      body: { name: 'insists', connectionId, sourceSchema: 'shop', syncMode: 'cdc' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ syncMode: 'cdc', syncInterval: 1, syncModeReason: null });
    const id: string = created.body.id;
    expect((await cp.request('POST', `/v1/databases/${id}/provision`, { token })).status).toBe(202);

    const failed = await pollUntil(
      () => instanceStatus(id),
      (s) => s.database.status === 'failed' || s.database.status === 'running',
      150_000,
      'the deploy to fail',
    );
    expect(failed.database.status).toBe('failed');
    expect(failed.latestBuild.status).toBe('succeeded');
    expect(failed.database.lastError).toBe(
      `Sync mode is CDC (change data capture), but the source’s binary log (replication) is off, so its changes cannot be followed. On the Schema config tab, set Sync mode to poll and click Save changes, then click Reconfigure on the Overview tab. (Or change the source, then click Reconfigure.) With the CLI: replix databases update ${id} --sync-mode poll, then replix db reconfigure ${id}.`,
    );
    // The repairs are offered; nothing offered would fail for want of a build.
    const actions = failed.allowedActions;
    expect(actions.reconfigure).toEqual({ allowed: true, mode: 'queued' });
    expect(actions.provision).toEqual({ allowed: true, mode: 'queued' });
    expect(actions.rebuild).toEqual({ allowed: true, mode: 'queued' });
    expect(actions.resume.reason).toBe(
      'Resume needs a paused database; this one is failed: use Reconfigure instead.',
    );

    // "set Sync mode to poll and click Save changes": the interval follows the plan.
    const saved = await cp.request('PATCH', `/v1/databases/${id}`, {
      token,
      body: { syncMode: 'poll' },
    });
    expect(saved.status).toBe(200);
    expect(saved.body).toMatchObject({ syncMode: 'poll', syncInterval: 60 });

    // "then click Reconfigure": it deploys the build that succeeded.
    const reconfigure = await cp.request('POST', `/v1/databases/${id}/reconfigure`, { token });
    expect(reconfigure.status).toBe(202);
    const running = await reachStatus(cp, token, id, 'running');
    expect(running.deployedInstanceConfig).toMatchObject({ syncMode: 'poll', syncInterval: 60 });
    expect(running.database.currentBuildId).toBe(failed.latestBuild.id);
    expect(running.instance.endpointUrl).toEqual(expect.any(String));
  });

  it('gets out the same way with the CLI lines the error gives', async () => {
    const replix = async (args: string[]) =>
      run(process.execPath, [REPLIX, ...args], {
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          REPLIX_DATA_DIR: cp.dataDir,
          REPLIX_API_URL: cp.url as string,
          REPLIX_TOKEN: token,
        },
      });
    const created = await cp.request('POST', '/v1/databases', {
      token,
      body: { name: 'cli-insists', connectionId, sourceSchema: 'shop', syncMode: 'cdc' },
    });
    const id: string = created.body.id;
    await replix(['db', 'provision', id]);
    await pollUntil(
      () => instanceStatus(id),
      (s) => s.database.status === 'failed',
      150_000,
      'the deploy to fail',
    );
    const shown = (await replix(['databases', 'get', id])).stdout;
    const lines = shown.match(/With the CLI: (replix .+), then (replix .+)\.$/m);
    expect(lines?.slice(1)).toEqual([
      `replix databases update ${id} --sync-mode poll`,
      `replix db reconfigure ${id}`,
    ]);
    for (const line of lines?.slice(1) ?? []) await replix(line.split(' ').slice(1));
    const running = await reachStatus(cp, token, id, 'running');
    expect(running.deployedInstanceConfig).toMatchObject({ syncMode: 'poll', syncInterval: 60 });
  });
});

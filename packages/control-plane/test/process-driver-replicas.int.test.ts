import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testMariaDb } from '@replix/testkit/vitest';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProcessDriver } from '../src/adapters/drivers/process/process-driver.ts';
import { processesUnder } from '../src/adapters/drivers/process-identity.ts';
import { serveSourceArgs, serveSourceLaunch } from './fixtures/serve-source-launch.ts';

const log = pino({ level: 'silent' });

const launchFor = (sourceUrl: string, replicas: number) =>
  serveSourceLaunch(sourceUrl, {
    replicationId: 'rx_replicas',
    replicas,
    settings: { ...serveSourceLaunch(sourceUrl).settings, syncMode: 'poll', syncInterval: 3600 },
  });

const environOf = (pid: number) => readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');

describe('the process driver with replicas', () => {
  let dataDir: string;
  let driver: ProcessDriver;
  let source: Awaited<ReturnType<ReturnType<typeof testMariaDb>['createDatabase']>>;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'replix-replicas-'));
    driver = new ProcessDriver({ dataDir, log, programArgs: serveSourceArgs });
    source = await testMariaDb().createDatabase(
      "CREATE TABLE item (id INT PRIMARY KEY, name VARCHAR(20)); INSERT INTO item VALUES (1, 'one')",
    );
  });
  afterAll(async () => {
    await driver?.shutdown();
    for (const pid of processesUnder(join(dataDir, 'instances'))) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {}
    }
    rmSync(dataDir, { recursive: true, force: true });
    await source?.drop();
  });

  it('runs each replica in its own folder, on its own port, under its own replication id, with one keys file', async () => {
    const launch = launchFor(source.url, 3);
    const handle = await driver.start(launch);
    const folder = join(dataDir, 'instances', launch.instanceId);
    const folders = [folder, join(folder, 'replicas', '1'), join(folder, 'replicas', '2')];
    expect(readFileSync(join(folder, 'replica-count'), 'utf8')).toBe('3');
    const pids = folders.map((each) => Number(readFileSync(join(each, 'pid'), 'utf8')));
    const ports = folders.map((each) => Number(readFileSync(join(each, 'port'), 'utf8')));
    // The handle is replica 0's.
    expect(handle.pid).toBe(pids[0]);
    expect(handle.port).toBe(ports[0]);
    expect(new Set(ports).size).toBe(3);
    for (const [ordinal, pid] of pids.entries()) {
      expect(processesUnder(folders[ordinal] as string)).toContain(pid);
      const environ = environOf(pid);
      expect(environ).toContain(
        `REPLIX_REPLICATION_ID=${ordinal === 0 ? 'rx_replicas' : `rx_replicas_r${ordinal}`}`,
      );
      expect(environ).toContain(`REPLIX_KEYS_FILE=${join(folder, 'keys.json')}`);
      expect(environ).toContain(`REPLIX_PORT_FILE=${join(folders[ordinal] as string, 'port')}`);
    }
    expect(existsSync(join(folder, 'replicas', '1', 'keys.json'))).toBe(false);
    expect((await driver.replicas(launch.instanceId)).map((replica) => replica.url)).toEqual(
      ports.map((port) => `http://127.0.0.1:${port}`),
    );

    await driver.stop(launch.instanceId);
    for (const each of folders) {
      expect(existsSync(join(each, 'pid'))).toBe(false);
      expect(processesUnder(each)).toEqual([]);
    }
  });

  it('merges the replicas logs in time order, each line naming its replica, with one token for all', async () => {
    const launch = launchFor(source.url, 2);
    const handle = await driver.start(launch);
    const replicas = await driver.replicas(launch.instanceId);
    for (const replica of replicas) {
      const url = replica.url as string;
      for (let i = 0; i < 50 && (await fetch(`${url}/health`)).status !== 200; i++)
        await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const first = await driver.readLogs(launch.instanceId, undefined);
    const messages = first.lines.map((line) => line.message);
    expect(messages).toContain('[replica 0] snapshot loaded');
    expect(messages).toContain('[replica 1] snapshot loaded');
    expect(messages.every((message) => /^\[replica [01]\] /.test(message))).toBe(true);
    const times = first.lines.map((line) => line.timestamp);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(first.nextToken).toMatch(/^\d+\.\d+$/);
    expect(await driver.readLogs(launch.instanceId, first.nextToken)).toEqual({
      lines: [],
      nextToken: first.nextToken,
    });
    // A hostile token reads the tails, never fails.
    expect(
      (await driver.readLogs(launch.instanceId, '../x.-1.99e999')).lines.length,
    ).toBeGreaterThan(0);
    expect(handle.privateUrl).toBe(replicas[0]?.url);

    // One replica stops on its own: its lines stay, the other goes on.
    process.kill(
      Number(readFileSync(join(driver.replicaFolderOf(launch.instanceId, 1), 'pid'), 'utf8')),
      'SIGTERM',
    );
    await expect
      .poll(async () => (await driver.replicas(launch.instanceId)).map((replica) => replica.alive))
      .toEqual([true, false]);
    expect(await driver.isAlive(launch.instanceId)).toBe(false);
    await driver.stop(launch.instanceId);
  });

  it('stops replicas beyond a smaller count on start, and reaps every replica of an orphan', async () => {
    const launch = launchFor(source.url, 2);
    await driver.start(launch);
    const replicaOne = driver.replicaFolderOf(launch.instanceId, 1);
    expect(processesUnder(replicaOne)).toHaveLength(1);
    await driver.start({ ...launch, replicas: 1 });
    expect(processesUnder(replicaOne)).toEqual([]);
    expect(await driver.isAlive(launch.instanceId)).toBe(true);

    const orphan = launchFor(source.url, 2);
    await driver.start(orphan);
    expect(await driver.reapOrphans(async () => [launch.instanceId])).toEqual([orphan.instanceId]);
    expect(processesUnder(join(dataDir, 'instances', orphan.instanceId))).toEqual([]);
    expect(existsSync(join(dataDir, 'instances', orphan.instanceId))).toBe(false);
    await driver.stop(launch.instanceId);
  });

  it('refuses a replica count outside 1 … 16', async () => {
    await expect(driver.start(launchFor(source.url, 0))).rejects.toThrow('1 to 16 replicas');
    await expect(driver.start(launchFor(source.url, 1.5))).rejects.toThrow('1 to 16 replicas');
  });
});

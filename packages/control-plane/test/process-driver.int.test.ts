import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newKeyId } from '@replix/instance-protocol';
import { ConfigError } from '@replix/runtime';
import { testMariaDb } from '@replix/testkit/vitest';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDriver } from '../src/adapters/drivers/create-driver.ts';
import type { InstanceLaunch } from '../src/adapters/drivers/instance-launch.ts';
import {
  InstanceStartError,
  ProcessDriver,
} from '../src/adapters/drivers/process/process-driver.ts';
import { processesUnder } from '../src/adapters/drivers/process-identity.ts';
import { resolveControlPlaneConfig } from '../src/config.ts';
import { serveSourceArgs, serveSourceLaunch } from './fixtures/serve-source-launch.ts';

const log = pino({ level: 'silent' });

/** The ports the driver passed to the programs it started, in order. */
const givenPorts: number[] = [];

function serveSource(launch: InstanceLaunch, port: number): string[] {
  givenPorts.push(port);
  return serveSourceArgs(launch, port);
}

const launchFor = serveSourceLaunch;

async function waitFor(check: () => Promise<boolean> | boolean, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('the process driver', () => {
  let dataDir: string;
  let driver: ProcessDriver;
  let source: Awaited<ReturnType<ReturnType<typeof testMariaDb>['createDatabase']>>;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'replix-driver-'));
    driver = new ProcessDriver({ dataDir, log, programArgs: serveSource });
    source = await testMariaDb().createDatabase(
      "CREATE TABLE item (id INT PRIMARY KEY, name VARCHAR(20)); INSERT INTO item VALUES (1, 'one'), (2, 'two')",
    );
  });
  afterAll(async () => {
    await driver?.shutdown();
    // Whatever a failed test left running.
    for (const pid of processesUnder(join(dataDir, 'instances'))) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {}
    }
    rmSync(dataDir, { recursive: true, force: true });
    await source?.drop();
  });

  it('runs an instance in its folder with only the launch environment; stop removes its pid file', async () => {
    process.env.REPLIX_DRIVER_TEST_MARKER = 'parent-only';
    const launch = launchFor(source.url);
    const handle = await driver.start(launch);
    delete process.env.REPLIX_DRIVER_TEST_MARKER;
    const folder = join(dataDir, 'instances', launch.instanceId);
    expect(handle).toEqual({
      instanceId: launch.instanceId,
      privateUrl: `http://127.0.0.1:${handle.port}`,
      containerRef: `process:${handle.pid}`,
      port: expect.any(Number),
      pid: expect.any(Number),
    });
    expect(readFileSync(join(folder, 'pid'), 'utf8')).toBe(String(handle.pid));
    // The port is the one the instance bound and wrote itself, not one picked beforehand.
    expect(readFileSync(join(folder, 'port'), 'utf8')).toBe(String(handle.port));
    expect(givenPorts.at(-1)).toBe(0);
    expect(JSON.parse(readFileSync(join(folder, 'keys.json'), 'utf8'))).toEqual({
      keyIds: launch.keys.keyIds,
      adminKeyIds: launch.keys.adminKeyIds,
    });
    const environ = readFileSync(`/proc/${handle.pid}/environ`, 'utf8').split('\0');
    expect(environ).toContain(`REPLIX_KEY_IDS=${launch.keys.keyIds[0]}`);
    expect(environ).toContain(`REPLIX_ADMIN_KEY_IDS=${launch.keys.adminKeyIds[0]}`);
    expect(environ.some((entry) => entry.startsWith('REPLIX_DRIVER_TEST_MARKER='))).toBe(false);

    await driver.stop(launch.instanceId);
    expect(existsSync(join(folder, 'pid'))).toBe(false);
    expect(processesUnder(folder)).toEqual([]);
  });

  it('adopts by the folder: one process, which shutdown stops', async () => {
    const launch = launchFor(source.url);
    const first = await driver.start(launch);
    // A new control plane (its own driver) finds the process by its folder.
    const successor = new ProcessDriver({ dataDir, log, programArgs: serveSource });
    const adopted = await successor.start(launch);
    expect(adopted.pid).toBe(first.pid);
    expect(processesUnder(join(dataDir, 'instances', launch.instanceId))).toEqual([first.pid]);
    await successor.shutdown();
    expect(await driver.isAlive(launch.instanceId)).toBe(false);
  });

  it('stops a process its folder holds but no pid file names before starting the replica', async () => {
    // What a control plane killed between spawning a replica and recording its pid leaves.
    const launch = launchFor(source.url);
    const folder = driver.replicaFolderOf(launch.instanceId, 0);
    mkdirSync(folder, { recursive: true });
    const stray = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], {
      cwd: folder,
      detached: true,
      stdio: 'ignore',
    });
    stray.unref();
    await waitFor(() => processesUnder(folder).includes(stray.pid as number));
    const handle = await driver.start(launch);
    expect(processesUnder(join(dataDir, 'instances', launch.instanceId))).toEqual([handle.pid]);
    await driver.stop(launch.instanceId);
  });

  it('sees a killed instance as dead and restarts it on the same port', async () => {
    const launch = launchFor(source.url);
    const first = await driver.start(launch);
    process.kill(first.pid as number, 'SIGKILL');
    await waitFor(async () => !(await driver.isAlive(launch.instanceId)));
    const second = await driver.start(launch);
    expect(second.pid).not.toBe(first.pid);
    expect(second.port).toBe(first.port);
    await driver.stop(launch.instanceId);
  });

  it('takes an instance as listening only once its own process wrote its port, whatever answers HTTP', async () => {
    // A program that answers HTTP but never writes REPLIX_PORT_FILE: an answer alone proves
    // nothing (another program may hold a port picked beforehand), so the start times out.
    const silent = new ProcessDriver({
      dataDir,
      log,
      listenTimeoutMs: 3000,
      programArgs: () => [
        '-e',
        "require('node:http').createServer((_q, r) => r.end('ok')).listen(0, '127.0.0.1')",
      ],
    });
    const launch = launchFor(source.url);
    await expect(silent.start(launch)).rejects.toThrow('The instance did not listen within 3 s.');
    expect(await silent.isAlive(launch.instanceId)).toBe(false);
  });

  it('reads the ready line at the time the instance became ready, from the tail', async () => {
    const launch = launchFor(source.url);
    const startingAt = Date.now();
    const handle = await driver.start(launch);
    await waitFor(async () => (await fetch(`${handle.privateUrl}/health`)).status === 200);
    const first = await driver.readLogs(launch.instanceId, undefined);
    for (const line of first.lines) {
      expect(typeof line.message).toBe('string');
      expect(line.timestamp).toBeGreaterThan(Date.now() - 120_000);
    }
    expect(first.lines.map((line) => line.message)).toContain('snapshot loaded');
    // The ready line reads as words, at the time the instance became ready: the same time on
    // a later read, not the time the log was read.
    const readyLine = `ready at ${handle.privateUrl}`;
    const ready = first.lines.find((line) => line.message === readyLine);
    expect(ready?.timestamp).toBeGreaterThanOrEqual(startingAt);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const again = await driver.readLogs(launch.instanceId, undefined);
    expect(again.lines.find((line) => line.message === readyLine)?.timestamp).toBe(
      ready?.timestamp,
    );
    await driver.stop(launch.instanceId);
    expect(await driver.readLogs(randomUUID(), undefined)).toEqual({ lines: [], nextToken: '0' });
  });

  it('replaces the key ids file atomically', async () => {
    const instanceId = randomUUID();
    const keys = { keyIds: [newKeyId(), newKeyId()], adminKeyIds: [newKeyId()] };
    await driver.updateKeys(instanceId, keys);
    const file = join(dataDir, 'instances', instanceId, 'keys.json');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(keys);
    await driver.updateKeys(instanceId, { keyIds: [], adminKeyIds: [] });
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ keyIds: [], adminKeyIds: [] });
  });

  it('rejects with the last log lines, without secrets, when the instance cannot start', async () => {
    const launch = launchFor('mysql://root:s3cret-Pa55@127.0.0.1:1/nowhere');
    const error = await driver.start(launch).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InstanceStartError);
    const message = (error as Error).message;
    expect(message).toMatch(/exited before it listened/);
    expect(message).toMatch(/Last log lines/);
    expect(message).not.toContain('s3cret-Pa55');
    expect(message).not.toContain(launch.keySecretHex);
    expect(await driver.isAlive(launch.instanceId)).toBe(false);
  });

  it('removes the folder of an instance it reaps', async () => {
    const orphan = launchFor(source.url);
    await driver.start(orphan);
    expect(await driver.reapOrphans(async () => [])).toEqual([orphan.instanceId]);
    expect(existsSync(join(dataDir, 'instances', orphan.instanceId))).toBe(false);
  });
});

describe('createDriver', () => {
  const config = (driver?: string) =>
    resolveControlPlaneConfig({
      REPLIX_DATA_DIR: join(tmpdir(), 'replix-create-driver'),
      REPLIX_SECRET_KEY: '00'.repeat(32),
      ...(driver ? { REPLIX_DRIVER: driver } : {}),
    });

  it('makes the process driver by default', async () => {
    expect(await createDriver(config(), log)).toBeInstanceOf(ProcessDriver);
    expect((await createDriver(config('process'), log)).name).toBe('process');
  });

  it('refuses kubernetes without its settings, and unknown drivers, with a config error', () => {
    expect(() => createDriver(config('kubernetes'), log)).toThrow(ConfigError);
    expect(() => createDriver(config('kubernetes'), log)).toThrow(/REPLIX_K8S_IMAGE is required/);
    expect(() => createDriver(config('docker'), log)).toThrow(
      'REPLIX_DRIVER must be "process" or "kubernetes", not "docker".',
    );
  });
});

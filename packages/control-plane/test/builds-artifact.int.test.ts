import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { deriveApiKey, newKeyId, newKeySecret } from '@replix/instance-protocol';
import { testMariaDb } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startThrowawaySshd } from '../../sources/test/throwaway-sshd.ts';
import { type InstanceKeySet, keysFileText } from '../src/adapters/drivers/instance-key-set.ts';
import {
  launchEnvironment,
  type SshTunnelLaunch,
} from '../src/adapters/drivers/instance-launch.ts';
import { queueBuild } from '../src/application/resources/builds/queue-build.ts';
import { finishedBuild, testSourceDatabase } from './builder-helpers.ts';
import {
  childProcessEnv,
  startTestControlPlane,
  type TestControlPlane,
} from './control-plane-harness.ts';
import { caller } from './lifecycle-fixtures.ts';

const bin = fileURLToPath(new URL('../../cli/bin/replix.js', import.meta.url));

/** Writes the keys file the way drivers do: a temporary file renamed over it. */
function writeKeysFile(path: string, keys: InstanceKeySet): void {
  writeFileSync(`${path}.tmp`, keysFileText(keys));
  renameSync(`${path}.tmp`, path);
}

describe('an artifact run with replix serve --artifact', () => {
  let cp: TestControlPlane;
  let source: Awaited<ReturnType<ReturnType<typeof testMariaDb>['createDatabase']>>;
  let artifactDir: string;
  let buildHash: string;
  let work: string;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    source = await testMariaDb().createDatabase(
      "CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(20)); INSERT INTO items VALUES (1, 'one');",
    );
    cp = await startTestControlPlane('pglite', { roles: ['builder'] });
    const { accountId } = await caller(cp, 'artifact@example.com');
    const database = await testSourceDatabase(cp, accountId, source.url);
    const build = await finishedBuild(cp, await queueBuild(cp.context.db, database));
    expect(build, JSON.stringify(build)).toMatchObject({ status: 'succeeded' });
    // Run it from a copy outside the repository: the program must need nothing from it.
    work = mkdtempSync(join(tmpdir(), 'replix-artifact-'));
    artifactDir = join(work, 'artifact');
    cpSync(fileURLToPath(build.image_uri as string), artifactDir, { recursive: true });
    buildHash = JSON.parse(readFileSync(join(artifactDir, 'manifest.json'), 'utf8')).buildHash;
  }, 120_000);

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await cp?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  async function serveArtifact(options: {
    paused: boolean;
    keyIds: string[];
    secret: Buffer;
    ssh?: SshTunnelLaunch;
    taskCpu?: number;
  }) {
    const keysFile = join(work, `keys-${children.length}.json`);
    // An admin key beside the query keys, as the control plane's own key is.
    const adminKeyId = newKeyId();
    const keys = { keyIds: options.keyIds, adminKeyIds: [adminKeyId] };
    writeKeysFile(keysFile, keys);
    const env = launchEnvironment(
      {
        instanceId: 'i',
        databaseId: 'd',
        buildId: 'b',
        artifactDir,
        sourceUrl: source.url,
        ssh: options.ssh,
        keySecretHex: options.secret.toString('hex'),
        keys,
        replicationId: 'artifact_test',
        replicas: 1,
        settings: {
          instanceSize: 'xs',
          taskCpu: options.taskCpu ?? 0.25,
          taskMemoryMb: 512,
          syncMode: 'poll',
          syncInterval: 0.2,
          logLevel: 'info',
          safetyNet: 0,
        },
        replicationPaused: options.paused,
      },
      keysFile,
    );
    const child = spawn(
      process.execPath,
      [bin, 'serve', '--artifact', artifactDir, '--port', '0'],
      {
        env: childProcessEnv(env),
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    children.push(child);
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk;
    });
    const ready = await new Promise<Record<string, string>>((resolve, reject) => {
      createInterface({ input: child.stdout as NodeJS.ReadableStream }).once('line', (line) =>
        resolve(JSON.parse(line)),
      );
      child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
    });
    return {
      ready,
      keysFile,
      adminKeyId,
      adminKey: deriveApiKey(options.secret, adminKeyId),
      stderr: () => stderr,
    };
  }

  const query = (url: string, key: string, text = 'items { id name }') =>
    fetch(`${url}/query`, {
      method: 'POST',
      body: text,
      headers: { authorization: `Bearer ${key}` },
    });

  it('serves with the launch keys, reports the build hash, and drops a key removed from the keys file', async () => {
    const secret = newKeySecret();
    const [kept, removed] = [newKeyId(), newKeyId()];
    const { ready, keysFile, adminKeyId, adminKey } = await serveArtifact({
      paused: false,
      keyIds: [kept, removed],
      secret,
    });
    // No key on the ready line when the launch gives the keys; the time it became ready.
    expect(Object.keys(ready).sort()).toEqual(['event', 'time', 'url']);
    const removedKey = deriveApiKey(secret, removed);
    const response = await query(ready.url, removedKey);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { data: unknown; meta: { version: string } };
    expect(body.data).toEqual([{ id: 1, name: 'one' }]);
    expect(body.meta.version.endsWith(`-${buildHash}`)).toBe(true);
    expect(response.headers.get('x-service-version')).toBe(body.meta.version);

    // The launch settings override the artifact's: poll mode, the task memory as the cap.
    const detail = await fetch(`${ready.url}/health/detail`, {
      headers: { authorization: `Bearer ${adminKey}` },
    });
    const health = (await detail.json()) as {
      replication: { mode: string; paused: boolean };
      memory: { cap_mb: number };
    };
    expect(health.replication).toMatchObject({ mode: 'poll', paused: false });
    expect(health.memory.cap_mb).toBe(512);

    writeKeysFile(keysFile, { keyIds: [kept], adminKeyIds: [adminKeyId] });
    const changed = Date.now();
    let status = 200;
    while (status === 200 && Date.now() - changed < 3000) {
      status = (await query(ready.url, removedKey)).status;
      if (status === 200) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(status).toBe(401);
    expect(Date.now() - changed).toBeLessThan(2000);
    expect((await query(ready.url, deriveApiKey(secret, kept))).status).toBe(200);

    // A malformed file keeps the current keys.
    writeFileSync(keysFile, '{not json');
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expect((await query(ready.url, deriveApiKey(secret, kept))).status).toBe(200);
  }, 60_000);

  it("runs the size's query threads from the bundled program, each following the keys file", async () => {
    const secret = newKeySecret();
    const [kept, removed] = [newKeyId(), newKeyId()];
    const { ready, keysFile, adminKeyId, adminKey } = await serveArtifact({
      paused: false,
      keyIds: [kept, removed],
      secret,
      taskCpu: 2,
    });
    // New connections each: the kernel spreads them over the threads listening on the port.
    const onFreshConnections = (key: string) =>
      Promise.all(
        Array.from({ length: 20 }, () =>
          fetch(`${ready.url}/query`, {
            method: 'POST',
            body: 'items { id }',
            headers: { authorization: `Bearer ${key}`, connection: 'close' },
          }).then((response) => response.status),
        ),
      );
    expect(await onFreshConnections(deriveApiKey(secret, removed))).toEqual(Array(20).fill(200));
    const metrics = await fetch(`${ready.url}/metrics`, {
      headers: { authorization: `Bearer ${adminKey}` },
    });
    const text = await metrics.text();
    expect(text).toMatch(/^replix_thread_queries_total\{thread="0"\} [1-9]/m);
    expect(text).toMatch(/^replix_thread_queries_total\{thread="1"\} [1-9]/m);

    writeKeysFile(keysFile, { keyIds: [kept], adminKeyIds: [adminKeyId] });
    const changed = Date.now();
    let statuses: number[] = [];
    while (Date.now() - changed < 3000) {
      statuses = await onFreshConnections(deriveApiKey(secret, removed));
      if (statuses.every((status) => status === 401)) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(statuses).toEqual(Array(20).fill(401));
  }, 60_000);

  it('starts with replication paused when the launch says so', async () => {
    const secret = newKeySecret();
    const keyId = newKeyId();
    const key = deriveApiKey(secret, keyId);
    const { ready, adminKey } = await serveArtifact({ paused: true, keyIds: [keyId], secret });
    await source.exec("INSERT INTO items VALUES (2, 'two')");
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const body = (await (await query(ready.url, key)).json()) as { data: unknown[] };
    expect(body.data).toHaveLength(1);
    const resumed = await fetch(`${ready.url}/replication/resume`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminKey}` },
    });
    expect(resumed.status).toBe(200);
    const deadline = Date.now() + 5000;
    let rows = 1;
    while (rows === 1 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      rows = ((await (await query(ready.url, key)).json()) as { data: unknown[] }).data.length;
    }
    expect(rows).toBe(2);
  }, 60_000);

  it('reaches the source through an SSH tunnel when the launch names one', async () => {
    const sshd = await startThrowawaySshd();
    try {
      const secret = newKeySecret();
      const keyId = newKeyId();
      const ssh = {
        host: sshd.host,
        port: sshd.port,
        user: sshd.user,
        privateKey: sshd.privateKey,
      };
      const { ready, stderr } = await serveArtifact({
        paused: false,
        keyIds: [keyId],
        secret,
        ssh,
      });
      const response = await query(ready.url, deriveApiKey(secret, keyId));
      expect(response.status).toBe(200);
      expect(stderr()).toContain('SSH tunnel to the source open');
      const refused = serveArtifact({
        paused: false,
        keyIds: [keyId],
        secret,
        ssh: { ...ssh, privateKey: sshd.strangerKey },
      });
      await expect(refused).rejects.toThrow(
        'The SSH server refused the tunnel user or private key.',
      );
      await expect(refused).rejects.not.toThrow(sshd.strangerKey.slice(40, 80));
    } finally {
      await sshd.stop();
    }
  }, 60_000);
});

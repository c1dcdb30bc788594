import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deriveApiKey } from '@replix/instance-protocol';
import { testMariaDb, testPostgres } from '@replix/testkit/vitest';
import { afterEach, describe, expect, it } from 'vitest';
import { processesUnder, processRuns } from '../src/adapters/drivers/process-identity.ts';
import { openStore } from '../src/adapters/store/open-store.ts';
import { SecretBox } from '../src/adapters/store/secret-box.ts';
import { childProcessEnv } from './control-plane-harness.ts';
import {
  addApiKey,
  databaseRow,
  eventually,
  killInstanceProcesses,
  requestAction,
  seedProvision,
} from './reconciler-fixtures.ts';

const CHILD = fileURLToPath(new URL('./fixtures/control-plane-child.ts', import.meta.url));

interface DatabaseState {
  readonly event: 'database';
  readonly status: string;
  readonly phase: string | null;
  readonly liveInstances: string[];
}

/** `replix start` as a child process (the crash test's fixture), and the states it prints. */
function startControlPlane(env: Record<string, string>) {
  const child: ChildProcess = spawn(process.execPath, [CHILD], {
    env: childProcessEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const states: DatabaseState[] = [];
  let stderr = '';
  let buffered = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) {
      try {
        const event = JSON.parse(line) as DatabaseState;
        if (event.event === 'database') states.push(event);
      } catch {}
    }
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-8000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    /** Waits for a running database with no goal left, whose instances pass `check`. */
    settled(check: (state: DatabaseState) => boolean = () => true) {
      return eventually(
        async () => {
          if (child.exitCode !== null) throw new Error(`the control plane exited: ${stderr}`);
          return states.find((s) => s.status === 'running' && s.phase === null && check(s));
        },
        120_000,
        'the database to run',
      );
    },
    kill(signal: NodeJS.Signals) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Queries one after another until stopped; counts the answers that were not 200. */
function queryLoop(url: string, key: string) {
  const failures: string[] = [];
  let answered = 0;
  let running = true;
  const done = (async () => {
    while (running) {
      try {
        const response = await fetch(`${url}/query?q=${encodeURIComponent('item { id name }')}`, {
          headers: { authorization: `Bearer ${key}` },
        });
        const body = await response.text();
        if (response.status === 200) answered++;
        else failures.push(`${response.status} ${body.slice(0, 200)}`);
      } catch (error) {
        failures.push(String((error as Error).cause ?? error));
      }
    }
  })();
  return {
    get answered() {
      return answered;
    },
    async stop() {
      running = false;
      await done;
      return failures;
    },
  };
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('the endpoint router, a process of its own', () => {
  it('keeps answering through a kill -9 of the control plane and a stop that keeps instances, is adopted by the next one, and switches a redeploy', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'replix-router-'));
    const routerDir = join(dataDir, 'router');
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    cleanups.push(() => killInstanceProcesses(dataDir));
    cleanups.push(() => {
      for (const pid of processesUnder(routerDir)) process.kill(pid, 'SIGKILL');
    });
    const storeDb = await testPostgres().createDatabase();
    cleanups.push(() => storeDb.drop());
    const source = await testMariaDb().createDatabase(
      "CREATE TABLE item (id INT PRIMARY KEY, name VARCHAR(20)); INSERT INTO item VALUES (1, 'one')",
    );
    cleanups.push(() => source.drop());
    const secretKey = randomBytes(32);
    const store = await openStore({ databaseUrl: storeDb.url });
    cleanups.push(() => store.close());
    const seeded = await seedProvision(store.db, new SecretBox(secretKey), source.url);
    const key = deriveApiKey(seeded.keySecret, await addApiKey(store.db, seeded));
    const env = {
      DATABASE_URL: storeDb.url,
      REPLIX_DATA_DIR: dataDir,
      REPLIX_SECRET_KEY: secretKey.toString('hex'),
      REPLIX_API_PORT: '0',
      REPLIX_RECONCILE_INTERVAL_MS: '200',
      REPLIX_HEALTH_INTERVAL_MS: '500',
      REPLIX_TEST_WATCH_DATABASE: seeded.databaseId,
    };
    const routerPid = () => Number(readFileSync(join(routerDir, 'pid'), 'utf8'));

    const first = startControlPlane(env);
    cleanups.push(() => first.kill('SIGKILL'));
    const running = await first.settled();
    const endpointUrl = (await databaseRow(store.db, seeded.databaseId)).endpoint_url as string;
    const router = routerPid();
    const load = queryLoop(endpointUrl, key);
    await eventually(async () => load.answered >= 20, 30_000, 'queries before the kill');

    // The control plane dies outright under load: its endpoint does not notice.
    await first.kill('SIGKILL');
    const answeredAtKill = load.answered;
    await eventually(async () => load.answered >= answeredAtKill + 50, 30_000, 'queries after');
    expect(await load.stop()).toEqual([]);

    // The next control plane adopts the same router process, and a redeploy switches the
    // endpoint to the new instance while queries keep coming, every one answered.
    const second = startControlPlane({ ...env, REPLIX_KEEP_INSTANCES_ON_STOP: 'true' });
    cleanups.push(() => second.kill('SIGKILL'));
    await second.settled();
    const during = queryLoop(endpointUrl, key);
    const before = (await databaseRow(store.db, seeded.databaseId)).current_build_id as string;
    await requestAction(store.db, seeded.databaseId, 'redeploy', 'deploying', {
      buildId: before,
    });
    const redeployed = await second.settled(
      (state) =>
        state.liveInstances.length === 1 && state.liveInstances[0] !== running.liveInstances[0],
    );
    const answeredAtSwitch = during.answered;
    await eventually(async () => during.answered >= answeredAtSwitch + 20, 30_000, 'queries');
    expect(await during.stop()).toEqual([]);
    expect(redeployed.liveInstances).not.toEqual(running.liveInstances);
    expect(routerPid()).toBe(router);
    expect(processRuns(router)).toBe(true);

    // With REPLIX_KEEP_INSTANCES_ON_STOP a graceful stop (an upgrade's) leaves the instance and
    // the router serving: queries through it and the next start are all answered.
    const across = queryLoop(endpointUrl, key);
    await eventually(async () => across.answered >= 20, 30_000, 'queries before the stop');
    await second.kill('SIGTERM');
    expect(processRuns(router)).toBe(true);
    const third = startControlPlane(env);
    cleanups.push(() => third.kill('SIGKILL'));
    await third.settled((state) => state.liveInstances[0] === redeployed.liveInstances[0]);
    const answeredAtAdoption = across.answered;
    await eventually(async () => across.answered >= answeredAtAdoption + 20, 30_000, 'queries');
    expect(await across.stop()).toEqual([]);
    expect(routerPid()).toBe(router);

    // A plain graceful stop stops the instances and, with nothing left to serve, the router.
    await third.kill('SIGTERM');
    await eventually(async () => !processRuns(router), 20_000, 'the router to stop');
  }, 300_000);
});

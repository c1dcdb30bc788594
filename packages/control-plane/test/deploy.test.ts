import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InstanceStartError } from '../src/adapters/drivers/instance-start-error.ts';
import { PlatformEvents } from '../src/adapters/events/platform-events.ts';
import type { DatabaseRow } from '../src/adapters/store/database-store.ts';
import { claimGoal, releaseLease } from '../src/adapters/store/goal-store.ts';
import { type OpenStore, openStore } from '../src/adapters/store/open-store.ts';
import { SecretBox } from '../src/adapters/store/secret-box.ts';
import { advanceGoal } from '../src/application/reconciler/advance-goal.ts';
import type { GoalOutcome, GoalRun } from '../src/application/reconciler/goal-run.ts';
import type { ControlPlaneConfig } from '../src/config.ts';
import { SNAPSHOT_LOAD_TIMEOUT_MS } from '../src/domain/deploy-steps.ts';
import type { Goal } from '../src/domain/goal.ts';
import type { RoleContext } from '../src/roles/role.ts';
import {
  insertAccount,
  insertBuild,
  insertConnection,
  insertDatabase,
  type StoreAccess,
} from './lifecycle-fixtures.ts';
import { FakeClock, MemoryDriver } from './memory-driver.ts';
import {
  auditTypes,
  goal,
  liveInstances as liveInstancesIn,
  databaseRow as rowIn,
} from './reconciler-fixtures.ts';

// Every branch of a deploy, run by the real reconciler code against an in-memory store
// (PGlite), an in-memory driver that can fail any call, and a clock that moves only when slept
// on. The real drivers have their own suites (process-driver*.int, kubernetes-driver*.int).

let store: OpenStore;
let access: StoreAccess;
const secrets = new SecretBox(randomBytes(32));
let owners = 0;

beforeAll(async () => {
  store = await openStore({ inMemory: true });
  access = { context: { db: store.db, secrets } } as StoreAccess;
});

afterAll(async () => {
  await store?.close();
});

/** A control plane's reconciler: its driver, clock and identity; it can die and be replaced. */
class Reconciler {
  readonly owner = `reconciler-${++owners}`;
  readonly abort = new AbortController();
  readonly context: RoleContext;
  readonly driver: MemoryDriver;
  readonly clock: FakeClock;

  constructor(driver: MemoryDriver, clock = new FakeClock()) {
    this.driver = driver;
    this.clock = clock;
    this.context = {
      db: store.db,
      config: { tracing: undefined, replicationDropRetryScale: 1 } as ControlPlaneConfig,
      secrets,
      verifyToken: undefined as never,
      issuer: undefined,
      events: new PlatformEvents(),
      driver,
      log: pino({ level: 'silent' }),
      processId: this.owner,
    };
  }

  /** Claims the database's goal as the reconciler role does and advances it once. */
  async pass(databaseId: string): Promise<GoalOutcome> {
    const database = await claimGoal(store.db, this.owner);
    expect(database?.id).toBe(databaseId);
    const run: GoalRun = {
      context: this.context,
      ports: { clock: this.clock, healthStatusOf: this.driver.healthStatusOf },
      owner: this.owner,
      signal: this.abort.signal,
      database: database as DatabaseRow,
    };
    return advanceGoal(run);
  }

  /** Dies at the driver's `nth` call of `method` from now (that call does not happen). */
  dieAt(method: string, nth = 1): void {
    let calls = 0;
    this.driver.beforeCall = (called) => {
      if (called !== method || this.abort.signal.aborted || ++calls < nth) return;
      this.abort.abort(new Error('the control plane died'));
      throw this.abort.signal.reason;
    };
  }

  /** After dying: the lease ends (a dead process's leases are freed), and the driver calms. */
  async buried(databaseId: string): Promise<void> {
    this.driver.beforeCall = undefined;
    await releaseLease(store.db, this.owner, databaseId);
  }
}

interface Seeded {
  readonly databaseId: string;
  readonly buildId: string;
  readonly accountId: string;
}

/** A database with a succeeded build and a goal to deploy it for the first time. */
async function seedFirstDeploy(
  options: { replicas?: number; backend?: 'mysql' | 'postgres' } = {},
): Promise<Seeded> {
  const accountId = await insertAccount(access, 'business');
  const owner = { accountId };
  const source = {
    host: '127.0.0.1',
    port: 1,
    user: 'app',
    password: 'pw',
    backend: options.backend ?? 'mysql',
  } as const;
  const connectionId = await insertConnection(access, owner, source);
  const { id: databaseId } = await insertDatabase(access, owner, {
    connectionId,
    status: 'deploying',
    ...(options.replicas ? { replicas: options.replicas } : {}),
  });
  const buildId = await insertBuild(access, owner, databaseId, 'succeeded');
  await setGoal(databaseId, { ...goal('provision', 'draft'), phase: 'deploy', buildId } as Goal);
  return { databaseId, buildId, accountId };
}

async function setGoal(databaseId: string, value: Goal, status = 'deploying'): Promise<void> {
  await store.db
    .updateTable('databases')
    .set({ goal: JSON.stringify(value), status, updated_at: new Date() })
    .where('id', '=', databaseId)
    .execute();
}

const databaseRow = (databaseId: string) => rowIn(store.db, databaseId);
const liveInstances = (databaseId: string) => liveInstancesIn(store.db, databaseId);
const auditEvents = (databaseId: string) => auditTypes(store.db, databaseId);

async function deployments(databaseId: string) {
  return store.db
    .selectFrom('deployments')
    .select(['id', 'status', 'action'])
    .where('database_id', '=', databaseId)
    .orderBy('started_at')
    .execute();
}

async function logOf(deploymentId: string): Promise<string[]> {
  const lines = await store.db
    .selectFrom('log_lines')
    .select('message')
    .where('stream_id', '=', deploymentId)
    .orderBy('id')
    .execute();
  return lines.map((line) => line.message);
}

/** A first deploy, done: the database runs its instance. */
async function deployed(
  options: { replicas?: number; backend?: 'mysql' | 'postgres' } = {},
): Promise<Seeded & { readonly driver: MemoryDriver; readonly instanceId: string }> {
  const seeded = await seedFirstDeploy(options);
  const driver = new MemoryDriver();
  expect(await new Reconciler(driver).pass(seeded.databaseId)).toEqual({ kind: 'done' });
  const [instance] = await liveInstances(seeded.databaseId);
  expect((await databaseRow(seeded.databaseId)).status).toBe('running');
  return { ...seeded, driver, instanceId: instance?.id as string };
}

describe('a first deploy', () => {
  it('records the instance, starts it, waits for its snapshot, routes the endpoint to it and runs', async () => {
    const { databaseId, buildId } = await seedFirstDeploy();
    const driver = new MemoryDriver();
    const outcome = await new Reconciler(driver).pass(databaseId);

    expect(outcome).toEqual({ kind: 'done' });
    const row = await databaseRow(databaseId);
    expect(row).toMatchObject({ status: 'running', current_build_id: buildId, goal: null });
    expect(row.lease_owner).toBeNull();
    const [instance, ...others] = await liveInstances(databaseId);
    expect(others).toEqual([]);
    expect(instance?.standby).toBe(false);
    const endpoint = driver.endpoints.get(databaseId);
    expect(row.endpoint_url).toBe(endpoint?.url);
    expect(driver.routes.get(databaseId)).toEqual({ instanceId: instance?.id });
    const [deployment] = await deployments(databaseId);
    expect(deployment).toMatchObject({ status: 'succeeded', action: 'provision' });
    const { port } = await store.db
      .selectFrom('instances')
      .select('port')
      .where('id', '=', instance?.id as string)
      .executeTakeFirstOrThrow();
    expect(await logOf(deployment?.id as string)).toEqual([
      `Deploying build ${buildId} (provision)`,
      `Starting instance ${instance?.id}`,
      `Instance ${instance?.id} started on private port ${port} (memory:${instance?.id})`,
      'Waiting for the snapshot to load',
      `The endpoint now sends queries to instance ${instance?.id}`,
      `Instance is serving at ${endpoint?.url}`,
    ]);
    expect(await auditEvents(databaseId)).toEqual(
      expect.arrayContaining(['deploy.succeeded', 'database.provisioned', 'build.completed']),
    );
  });

  it('fails without a deployment when there is no build to deploy', async () => {
    const { databaseId } = await seedFirstDeploy();
    await store.db.deleteFrom('builds').where('database_id', '=', databaseId).execute();
    await setGoal(databaseId, goal('reconfigure', 'failed'));
    const driver = new MemoryDriver();
    await new Reconciler(driver).pass(databaseId);

    const row = await databaseRow(databaseId);
    expect(row).toMatchObject({ status: 'failed', goal: null });
    expect(row.last_error).toBe('There is no succeeded build to deploy: use Rebuild instead.');
    expect(await deployments(databaseId)).toEqual([]);
    expect(driver.calls).toEqual([]);
  });
});

describe('a redeploy', () => {
  it('starts a standby, switches the endpoint to it once loaded, then stops the old instance', async () => {
    const { databaseId, buildId, driver, instanceId: old } = await deployed();
    await setGoal(databaseId, goal('redeploy', 'running', { buildId }));
    driver.calls.length = 0;
    await new Reconciler(driver).pass(databaseId);

    const [serving, ...others] = await liveInstances(databaseId);
    expect(others).toEqual([]);
    expect(serving?.id).not.toBe(old);
    expect(driver.aliveIds()).toEqual([serving?.id]);
    // No moment without a serving instance: the route moves before the old one stops.
    const routed = driver.calls.indexOf(`route ${databaseId} ${serving?.id}`);
    const stopped = driver.calls.indexOf(`stop ${old}`);
    expect(routed).toBeGreaterThanOrEqual(0);
    expect(stopped).toBeGreaterThan(routed);
    expect(driver.calls).not.toContain(`unroute ${databaseId}`);
    const [, second] = await deployments(databaseId);
    expect(second).toMatchObject({ status: 'succeeded', action: 'redeploy' });
    expect(await logOf(second?.id as string)).toContain(
      `Stopping the previous instance ${old} once its queries in flight finish`,
    );
    expect((await databaseRow(databaseId)).status).toBe('running');
  });

  it('keeps the endpoint on the same port', async () => {
    const { databaseId, buildId, driver } = await deployed();
    const before = (await databaseRow(databaseId)).endpoint_url;
    await setGoal(databaseId, goal('redeploy', 'running', { buildId }));
    await new Reconciler(driver).pass(databaseId);
    expect((await databaseRow(databaseId)).endpoint_url).toBe(before);
  });
});

describe('a resize', () => {
  it('up to 3 replicas waits for every replica, then records the new count', async () => {
    const { databaseId, driver } = await deployed();
    await setGoal(databaseId, goal('resize', 'running', { replicas: 3, instanceSize: 's' }));
    await new Reconciler(driver).pass(databaseId);

    const row = await databaseRow(databaseId);
    expect(row).toMatchObject({ status: 'running', replicas: 3, instance_size: 's' });
    expect(row.deployed_config).toMatchObject({ replicas: 3, instanceSize: 's' });
    const [serving] = await liveInstances(databaseId);
    expect(driver.instances.get(serving?.id as string)?.launch.replicas).toBe(3);
    const [, resize] = await deployments(databaseId);
    const log = await logOf(resize?.id as string);
    expect(log).toContain('Waiting for every replica to load its snapshot');
    expect(log.find((line) => line.startsWith(`Instance ${serving?.id} started`))).toMatch(
      / with 3 replicas$/,
    );
  });

  it('down to 1 replica drops the source state of the replicas gone', async () => {
    const { databaseId, driver } = await deployed({ replicas: 3, backend: 'postgres' });
    await setGoal(databaseId, goal('resize', 'running', { replicas: 1 }));
    await new Reconciler(driver).pass(databaseId);

    expect(await databaseRow(databaseId)).toMatchObject({ status: 'running', replicas: 1 });
    // The source (a closed port) cannot be reached now: the drop of ordinals 1 and 2 waits.
    const source = await store.db
      .selectFrom('replication_sources')
      .select(['drop_from', 'replicas_launched', 'drop_attempts'])
      .where('database_id', '=', databaseId)
      .executeTakeFirstOrThrow();
    expect(source).toMatchObject({ drop_from: 1, replicas_launched: 3, drop_attempts: 1 });
  });

  it('that fails leaves the size and replicas the serving instance runs at', async () => {
    const { databaseId, driver, instanceId: old } = await deployed();
    await setGoal(databaseId, goal('resize', 'running', { replicas: 2, instanceSize: 'm' }));
    driver.failNext('start', new InstanceStartError('The instance process could not start.'));
    await new Reconciler(driver).pass(databaseId);

    const row = await databaseRow(databaseId);
    expect(row).toMatchObject({ status: 'running', replicas: 1, instance_size: 'xs' });
    expect((await liveInstances(databaseId)).map((instance) => instance.id)).toEqual([old]);
    expect(driver.routes.get(databaseId)).toEqual({ instanceId: old });
  });
});

describe('a deploy that fails', () => {
  it('when the instance never listens: a first deploy leaves the database failed', async () => {
    const { databaseId } = await seedFirstDeploy();
    const driver = new MemoryDriver();
    const reason = 'The instance did not listen within 60 seconds.';
    driver.failNext('start', new InstanceStartError(reason));
    await new Reconciler(driver).pass(databaseId);

    const row = await databaseRow(databaseId);
    expect(row).toMatchObject({ status: 'failed', goal: null });
    // The source is asked again and explains in the user's words; the log keeps the instance's.
    expect(row.last_error).toMatch(/^Replix cannot reach the source/);
    const [deployment] = await deployments(databaseId);
    expect(deployment?.status).toBe('failed');
    expect(await logOf(deployment?.id as string)).toContain(`Deploy failed: ${reason}`);
    expect(await liveInstances(databaseId)).toEqual([]);
    expect(driver.routes.get(databaseId)).toMatchObject({ unrouted: expect.any(String) });
    expect(await auditEvents(databaseId)).toContain('deploy.failed');
  });

  it('when the instance never listens: a redeploy keeps the old instance serving', async () => {
    const { databaseId, buildId, driver, instanceId: old } = await deployed();
    await setGoal(databaseId, goal('redeploy', 'running', { buildId }));
    driver.failNext('start', new InstanceStartError('The instance did not listen.'));
    await new Reconciler(driver).pass(databaseId);

    expect((await databaseRow(databaseId)).status).toBe('running');
    expect((await liveInstances(databaseId)).map((instance) => instance.id)).toEqual([old]);
    expect(driver.aliveIds()).toEqual([old]);
    expect(driver.routes.get(databaseId)).toEqual({ instanceId: old });
  });

  it('when a start throws something unknown, says only that it could not start', async () => {
    const { databaseId, buildId, driver } = await deployed();
    await setGoal(databaseId, goal('redeploy', 'running', { buildId }));
    driver.failNext('start', new Error('ECONNREFUSED 10.0.0.7:6443'));
    await new Reconciler(driver).pass(databaseId);
    const [, failed] = await deployments(databaseId);
    const log = await logOf(failed?.id as string);
    expect(log).toContain('Deploy failed: The instance could not be started.');
    expect(log.join('\n')).not.toContain('10.0.0.7');
  });

  it('when the health check never passes: after the load timeout, by the clock', async () => {
    const { databaseId, buildId, driver, instanceId: old } = await deployed();
    await setGoal(databaseId, goal('redeploy', 'running', { buildId }));
    driver.behaviours.push({ kind: 'never' });
    const clock = new FakeClock();
    const started = clock.now();
    await new Reconciler(driver, clock).pass(databaseId);

    expect(clock.now() - started).toBeGreaterThan(SNAPSHOT_LOAD_TIMEOUT_MS);
    const [, failed] = await deployments(databaseId);
    expect(await logOf(failed?.id as string)).toContain(
      'Deploy failed: The instance did not load its snapshot within 5 minutes.',
    );
    expect(driver.aliveIds()).toEqual([old]);
    expect((await databaseRow(databaseId)).status).toBe('running');
  });

  it('when the instance exits while loading: quotes its last log lines without credentials', async () => {
    const { databaseId, buildId, driver } = await deployed();
    await setGoal(databaseId, goal('redeploy', 'running', { buildId }));
    const lines = Array.from({ length: 12 }, (_, i) => `line ${i}`);
    lines.push('cannot connect to mysql://app:s3cret@db.internal:3306/app');
    driver.behaviours.push({ kind: 'exits', logLines: lines });
    await new Reconciler(driver).pass(databaseId);

    const [, failed] = await deployments(databaseId);
    const log = (await logOf(failed?.id as string)).join('\n');
    expect(log).toContain('The instance exited before its snapshot loaded. Last log lines:');
    expect(log).toContain('mysql://app:***@db.internal');
    expect(log).not.toContain('s3cret');
    expect(log).not.toContain('line 2\n');
    expect(log).toContain('line 3');
  });

  it('when stopping the old instance fails: the goal stays in deploy:retire and the next pass ends it', async () => {
    const { databaseId, buildId, driver, instanceId: old } = await deployed();
    await setGoal(databaseId, goal('redeploy', 'running', { buildId }));
    const reconciler = new Reconciler(driver);
    driver.failNext('stop', new Error('the node is gone'));
    await expect(reconciler.pass(databaseId)).rejects.toThrow('the node is gone');

    const halfway = await databaseRow(databaseId);
    expect(halfway.goal?.phase).toBe('deploy:retire');
    const [serving] = await liveInstances(databaseId);
    expect(driver.routes.get(databaseId)).toEqual({ instanceId: serving?.id });
    await reconciler.buried(databaseId);

    await new Reconciler(driver).pass(databaseId);
    expect(await databaseRow(databaseId)).toMatchObject({ status: 'running', goal: null });
    expect(driver.aliveIds()).toEqual([serving?.id]);
    expect(driver.aliveIds()).not.toContain(old);
    const all = await deployments(databaseId);
    expect(all.map((deployment) => deployment.status)).toEqual(['succeeded', 'succeeded']);
  });
});

describe('a control plane that restarts mid-deploy', () => {
  // Where the first control plane dies (its next driver call of that kind does not happen), and
  // the phase its goal is left in: the next one resumes there.
  const deaths = [
    { at: 'openEndpoint', nth: 1, phase: 'deploy:prepare' },
    { at: 'start', nth: 1, phase: 'deploy:start' },
    // The first call reads the started replicas' addresses; the second is the first health check.
    { at: 'replicas', nth: 2, phase: 'deploy:wait' },
    { at: 'route', nth: 1, phase: 'deploy:wait' },
    { at: 'stop', nth: 1, phase: 'deploy:retire' },
  ] as const;

  for (const death of deaths) {
    for (const exit of ['crash', 'graceful'] as const) {
      it(`resumes a redeploy from ${death.phase} (${exit} exit at ${death.at})`, async () => {
        const { databaseId, buildId, driver, instanceId: old } = await deployed();
        await setGoal(databaseId, goal('redeploy', 'running', { buildId }));
        const first = new Reconciler(driver);
        first.dieAt(death.at, death.nth);
        await expect(first.pass(databaseId)).rejects.toThrow('the control plane died');
        expect((await databaseRow(databaseId)).goal?.phase).toBe(death.phase);
        await first.buried(databaseId);
        // A graceful exit stops the instances and closes the endpoints; a crash leaves them.
        if (exit === 'graceful') await driver.shutdown();

        expect(await new Reconciler(driver).pass(databaseId)).toEqual({ kind: 'done' });
        const row = await databaseRow(databaseId);
        expect(row).toMatchObject({ status: 'running', goal: null, current_build_id: buildId });
        const [serving, ...others] = await liveInstances(databaseId);
        expect(others).toEqual([]);
        expect(serving?.id).not.toBe(old);
        expect(serving?.standby).toBe(false);
        if (exit === 'graceful' && death.phase === 'deploy:retire') {
          // Switched before the exit stopped it: the deploy is done, and the maintenance pass
          // starts the serving instance again like any stopped one (reconciler.int).
          expect(driver.aliveIds()).toEqual([]);
        } else {
          expect(driver.routes.get(databaseId)).toEqual({ instanceId: serving?.id });
          expect(driver.aliveIds()).toEqual([serving?.id]);
        }
        const all = await deployments(databaseId);
        expect(all.map((deployment) => deployment.status)).toEqual(['succeeded', 'succeeded']);
      });
    }
  }

  it('resumes a first deploy whose instance was started by the control plane that died', async () => {
    const { databaseId } = await seedFirstDeploy();
    const driver = new MemoryDriver();
    driver.behaviours.push({ kind: 'loads', loadPolls: 3 });
    const first = new Reconciler(driver);
    first.dieAt('isAlive');
    await expect(first.pass(databaseId)).rejects.toThrow('the control plane died');
    expect((await databaseRow(databaseId)).goal?.phase).toBe('deploy:wait');
    await first.buried(databaseId);

    await new Reconciler(driver).pass(databaseId);
    const [serving] = await liveInstances(databaseId);
    // Adopted, not started again: the driver saw one start.
    expect(driver.calls.filter((call) => call.startsWith('start '))).toHaveLength(1);
    expect(driver.aliveIds()).toEqual([serving?.id]);
    expect((await databaseRow(databaseId)).status).toBe('running');
  });
});

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { deriveApiKey, InstanceClient, parseInstanceMetrics } from '@replix/instance-protocol';
import { testPostgres } from '@replix/testkit/vitest';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queueResize } from '../src/application/resources/databases/database-actions-service.ts';
import { instanceStatus } from '../src/application/resources/instance/instance-service.ts';
import { replicationIdFor } from '../src/domain/replication-id.ts';
import { startTestControlPlane, type TestControlPlane } from './control-plane-harness.ts';
import {
  addApiKey,
  databaseRow,
  eventually,
  killInstanceProcesses,
  liveInstances,
  requestAction,
  type SeededSource,
  seedProvision,
  statusReached,
} from './reconciler-fixtures.ts';

const QUERIES = 40;

/**
 * Read replicas end to end on the process driver (issues 16 and 29): a database with two
 * replicas serves one endpoint and both replicas answer, replica 0 alone following the
 * PostgreSQL source (one slot) and replica 1 following replica 0; a killed replica is restarted
 * alone; terminate leaves no slot or publication behind.
 */
describe('read replicas', () => {
  let cp: TestControlPlane;
  let source: Awaited<ReturnType<ReturnType<typeof testPostgres>['createDatabase']>>;
  let seeded: SeededSource;
  /** A query through the database's endpoint with an API key (set by the first test). */
  let query: () => Promise<Response>;

  beforeAll(async () => {
    source = await testPostgres().createDatabase(
      "CREATE TABLE item (id INT PRIMARY KEY, name TEXT); INSERT INTO item VALUES (1, 'one'), (2, 'two')",
    );
    cp = await startTestControlPlane('pglite', {
      roles: ['api', 'reconciler', 'builder', 'health-monitor'],
      env: { REPLIX_HEALTH_INTERVAL_MS: '500' },
    });
  });
  afterAll(async () => {
    const dataDir = cp?.dataDir;
    await cp?.close();
    if (dataDir) killInstanceProcesses(dataDir);
    await source?.drop();
  });

  const slotNames = async () =>
    (
      await source.query<{ slot_name: string }>(
        `SELECT slot_name FROM pg_replication_slots WHERE slot_name LIKE 'replix_${replicationIdFor(seeded.databaseId)}%' ORDER BY slot_name`,
      )
    ).map((row) => row.slot_name);
  const publicationNames = async () =>
    (
      await source.query<{ pubname: string }>(
        `SELECT pubname FROM pg_publication WHERE pubname LIKE 'replix_${replicationIdFor(seeded.databaseId)}%' ORDER BY pubname`,
      )
    ).map((row) => row.pubname);

  /** Each replica's count of answered queries, from its own /metrics. */
  async function queriesPerReplica(): Promise<number[]> {
    const [instance] = await liveInstances(cp.context.db, seeded.databaseId);
    const urls = (instance?.replica_urls ?? []) as string[];
    return Promise.all(
      urls.map(async (url) => {
        const client = new InstanceClient(
          url,
          seeded.keySecret,
          instance?.control_key_id as string,
        );
        const response = await client.call('GET', '/metrics');
        return parseInstanceMetrics(response.text).queriesOk;
      }),
    );
  }

  it('serves one endpoint from two replicas, replica 1 following replica 0 on one slot', async () => {
    const { db, secrets } = cp.context;
    seeded = await seedProvision(db, secrets, source.url, { replicas: 2 });
    const keyId = await addApiKey(db, seeded);
    await statusReached(db, seeded.databaseId, 'running', 110_000);
    const [instance] = await liveInstances(db, seeded.databaseId);
    expect(instance?.replica_urls).toHaveLength(2);
    const database = await databaseRow(db, seeded.databaseId);
    expect(database.deployed_config?.replicas).toBe(2);
    const base = `replix_${replicationIdFor(seeded.databaseId)}`;
    // Replicas cost the source nothing: one slot and one publication, whatever their count.
    expect(await slotNames()).toEqual([base]);
    expect(await publicationNames()).toEqual([base]);

    const key = deriveApiKey(seeded.keySecret, keyId);
    query = () =>
      fetch(
        `${database.endpoint_url}/query?q=${encodeURIComponent('item { id name } ORDER BY id')}`,
        {
          headers: { authorization: `Bearer ${key}` },
        },
      );
    // The key reaches the replicas through the shared keys file within a tick or two.
    await eventually(async () => (await query()).status === 200, 20_000, 'the key to work');
    const start = await queriesPerReplica();
    for (let i = 0; i < QUERIES; i++) {
      const response = await query();
      expect(response.status).toBe(200);
      expect(((await response.json()) as { data: unknown }).data).toEqual([
        { id: 1, name: 'one' },
        { id: 2, name: 'two' },
      ]);
    }
    const after = await queriesPerReplica();
    const served = after.map((count, ordinal) => count - (start[ordinal] ?? 0));
    // One at a time, so least-in-flight alternates: both replicas answered, evenly.
    expect(served.reduce((a, b) => a + b, 0)).toBe(QUERIES);
    for (const count of served) expect(count).toBe(QUERIES / 2);
    expect(served).toHaveLength(2);

    // A change reaches both replicas: replica 0 from the source, replica 1 from replica 0.
    await source.exec("INSERT INTO item VALUES (3, 'three')");
    await eventually(
      async () => {
        const [a, b] = await Promise.all([query(), query()]);
        const rows = await Promise.all([a.json(), b.json()]);
        return rows.every((body) => (body as { data: unknown[] }).data.length === 3);
      },
      30_000,
      'both replicas to see the insert',
    );
  }, 150_000);

  it('shows each replica in the instance status, and restarts a killed replica alone', async () => {
    const { db } = cp.context;
    const status = await eventually(async () => {
      const answer = await instanceStatus(cp.context, seeded.accountId, seeded.databaseId);
      return answer.instance?.healthStatus === 'ok' && answer;
    }, 20_000);
    expect(status.database.replicas).toBe(2);
    expect(status.deployedInstanceConfig.replicas).toBe(2);
    expect(status.instance?.replicaCount).toBe(2);
    expect(status.instance?.replicas).toEqual([
      {
        ordinal: 0,
        healthStatus: 'ok',
        snapshotAgeMs: expect.any(Number),
        swapCount: expect.any(Number),
      },
      {
        ordinal: 1,
        healthStatus: 'ok',
        snapshotAgeMs: expect.any(Number),
        swapCount: expect.any(Number),
      },
    ]);

    const [instance] = await liveInstances(db, seeded.databaseId);
    const folder = join(cp.dataDir, 'instances', instance?.id as string);
    const pidOf = (replicaFolder: string) =>
      Number(readFileSync(join(replicaFolder, 'pid'), 'utf8'));
    const replicaZero = pidOf(folder);
    const replicaOne = pidOf(join(folder, 'replicas', '1'));
    process.kill(replicaOne, 'SIGKILL');
    await eventually(
      async () => {
        const [row] = await liveInstances(db, seeded.databaseId);
        return row?.restarts === 1 && row;
      },
      30_000,
      'the maintenance restart',
    );
    expect(pidOf(folder)).toBe(replicaZero);
    expect(pidOf(join(folder, 'replicas', '1'))).not.toBe(replicaOne);
    await eventually(async () => {
      const answer = await instanceStatus(cp.context, seeded.accountId, seeded.databaseId);
      return answer.instance?.replicas.every((replica) => replica.healthStatus === 'ok');
    }, 30_000);
  }, 90_000);

  it('a resize to one replica fails no query and keeps the one slot; terminate drops every slot and publication', async () => {
    const { db } = cp.context;
    const log = pino({ level: 'silent' });
    // Queries one after another through the whole resize: every one answers.
    const statuses: number[] = [];
    let resizing = true;
    const load = (async () => {
      while (resizing)
        statuses.push(
          await query().then(
            (response) => response.status,
            () => 0,
          ),
        );
    })();
    await queueResize({ ...cp.context, log }, seeded.accountId, seeded.databaseId, {
      replicas: 1,
    });
    await statusReached(db, seeded.databaseId, 'running', 110_000);
    resizing = false;
    await load;
    expect(statuses.length).toBeGreaterThan(0);
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    const [instance] = await liveInstances(db, seeded.databaseId);
    expect(instance?.replica_urls).toHaveLength(1);
    const base = `replix_${replicationIdFor(seeded.databaseId)}`;
    expect(await slotNames()).toEqual([base]);
    expect(await publicationNames()).toEqual([base]);

    await requestAction(db, seeded.databaseId, 'terminate', 'terminating');
    await statusReached(db, seeded.databaseId, 'terminated');
    expect(await liveInstances(db, seeded.databaseId)).toEqual([]);
    expect(await slotNames()).toEqual([]);
    expect(await publicationNames()).toEqual([]);
  }, 150_000);
});

import { testPostgres } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replicationIdFor } from '../src/domain/replication-id.ts';
import { startTestControlPlane, type TestControlPlane } from './control-plane-harness.ts';
import {
  killInstanceProcesses,
  liveInstances,
  requestAction,
  seedProvision,
  statusReached,
} from './reconciler-fixtures.ts';

// The store does not matter here; the source does: PostgreSQL keeps a slot per database.
describe('the reconciler with a PostgreSQL source', () => {
  let cp: TestControlPlane;
  let source: Awaited<ReturnType<ReturnType<typeof testPostgres>['createDatabase']>>;

  beforeAll(async () => {
    source = await testPostgres().createDatabase(
      "CREATE TABLE item (id INT PRIMARY KEY, name TEXT); INSERT INTO item VALUES (1, 'one')",
    );
    cp = await startTestControlPlane('pglite', {
      roles: ['api', 'reconciler', 'builder', 'health-monitor'],
    });
  });
  afterAll(async () => {
    const dataDir = cp?.dataDir;
    await cp?.close();
    if (dataDir) killInstanceProcesses(dataDir);
    await source?.drop();
  });

  it('runs the instance on its own slot; pause keeps it, terminate drops slot and publication', async () => {
    const { db, secrets } = cp.context;
    const seeded = await seedProvision(db, secrets, source.url);
    await statusReached(db, seeded.databaseId, 'running', 110_000);
    expect(await liveInstances(db, seeded.databaseId)).toHaveLength(1);
    const name = `replix_${replicationIdFor(seeded.databaseId)}`;
    const slots = async () =>
      (await source.query(`SELECT slot_name FROM pg_replication_slots WHERE slot_name = '${name}'`))
        .length;
    const publications = async () =>
      (await source.query(`SELECT pubname FROM pg_publication WHERE pubname = '${name}'`)).length;
    expect(await slots()).toBe(1);
    expect(await publications()).toBe(1);

    // A pause keeps them (resume continues from the slot); stopping an instance drops nothing.
    await requestAction(db, seeded.databaseId, 'pause', 'pausing');
    await statusReached(db, seeded.databaseId, 'paused');
    expect(await slots()).toBe(1);
    expect(await publications()).toBe(1);

    await requestAction(db, seeded.databaseId, 'terminate', 'terminating');
    await statusReached(db, seeded.databaseId, 'terminated');
    expect(await liveInstances(db, seeded.databaseId)).toEqual([]);
    expect(await slots()).toBe(0);
    expect(await publications()).toBe(0);
  }, 120_000);
});

import { spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  claimGoal,
  freeDeadLocalLeases,
  releaseLease,
  renewLease,
} from '../src/adapters/store/goal-store.ts';
import { replicationIdFor } from '../src/domain/replication-id.ts';
import {
  STORE_KINDS,
  startTestControlPlane,
  type TestControlPlane,
} from './control-plane-harness.ts';
import { databaseRow, seedProvision } from './reconciler-fixtures.ts';

const SOURCE = 'mysql://nobody:pw@127.0.0.1:1/app';

describe.each(STORE_KINDS)('reconciler leases on the %s store', (kind) => {
  let cp: TestControlPlane;
  beforeAll(async () => {
    // No reconciler runs: the test is the only claimer.
    cp = await startTestControlPlane(kind, { roles: ['api'] });
  });
  afterAll(() => cp?.close());

  it('claims one goal at a time, marks it claimed, and skips held leases', async () => {
    const { db, secrets } = cp.context;
    const first = await seedProvision(db, secrets, SOURCE);
    const second = await seedProvision(db, secrets, SOURCE);
    const claimed = await claimGoal(db, 'me');
    expect(claimed?.id).toBe(first.databaseId);
    expect(claimed?.lease_owner).toBe('me');
    expect(claimed?.goal?.claimedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(claimed?.lease_until?.getTime()).toBeGreaterThan(Date.now() + 20_000);
    // The held one is skipped: the next claim takes the other.
    expect((await claimGoal(db, 'other'))?.id).toBe(second.databaseId);
    expect(await claimGoal(db, 'third')).toBeUndefined();

    expect(await renewLease(db, 'me', first.databaseId)).toBe(true);
    expect(await renewLease(db, 'other', first.databaseId)).toBe(false);

    // Released with a retry delay: not claimable until then; claimedAt is kept.
    await releaseLease(db, 'me', first.databaseId, 1000);
    expect(await claimGoal(db, 'third')).toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const again = await claimGoal(db, 'third');
    expect(again?.id).toBe(first.databaseId);
    expect(again?.goal?.claimedAt).toBe(claimed?.goal?.claimedAt);
    // Releasing someone else's lease does nothing.
    await releaseLease(db, 'me', first.databaseId);
    expect((await databaseRow(db, first.databaseId)).lease_owner).toBe('third');
    for (const id of [first.databaseId, second.databaseId])
      await db.updateTable('databases').set({ goal: null }).where('id', '=', id).execute();
  });

  it('never claims a deleted database or one without a goal', async () => {
    const { db, secrets } = cp.context;
    const deleted = await seedProvision(db, secrets, SOURCE);
    await db
      .updateTable('databases')
      .set({ deleted_at: new Date() })
      .where('id', '=', deleted.databaseId)
      .execute();
    const idle = await seedProvision(db, secrets, SOURCE);
    await db
      .updateTable('databases')
      .set({ goal: null })
      .where('id', '=', idle.databaseId)
      .execute();
    expect(await claimGoal(db, 'me')).toBeUndefined();
  });

  it('frees the leases of dead control planes of this machine only', async () => {
    const { db, secrets } = cp.context;
    const exited = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
    const deadPid = Number(exited.stdout.toString());
    const owners = {
      dead: `${hostname()}:${deadPid}:0123abcd:reconciler`,
      alive: `${hostname()}:${process.pid}:0123abcd:reconciler`,
      remote: `elsewhere.example:${deadPid}:0123abcd:reconciler`,
    };
    const ids: Record<string, string> = {};
    for (const [name, owner] of Object.entries(owners)) {
      const seeded = await seedProvision(db, secrets, SOURCE);
      ids[name] = seeded.databaseId;
      await db
        .updateTable('databases')
        .set({ lease_owner: owner, lease_until: new Date(Date.now() + 30_000) })
        .where('id', '=', seeded.databaseId)
        .execute();
    }
    expect(await freeDeadLocalLeases(db)).toBe(1);
    expect((await databaseRow(db, ids.dead as string)).lease_owner).toBeNull();
    expect((await databaseRow(db, ids.alive as string)).lease_owner).toBe(owners.alive);
    expect((await databaseRow(db, ids.remote as string)).lease_owner).toBe(owners.remote);
  });
});

describe('replication ids', () => {
  it('are stable per database and valid PostgreSQL slot names within the connector limit', () => {
    const id = replicationIdFor('0F8FAD5B-D9CB-469F-A165-70867728950E');
    expect(id).toBe('rx_0f8fad5bd9cb469fa16570867728950e');
    expect(id).toMatch(/^[a-z0-9_]{1,56}$/);
  });
});

import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { deriveApiKey } from '@replix/instance-protocol';
import { testMariaDb } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  STORE_KINDS,
  startTestControlPlane,
  type TestControlPlane,
} from './control-plane-harness.ts';
import {
  addApiKey,
  auditTypes,
  bumpKeysVersion,
  databaseRow,
  eventually,
  instanceProcesses,
  killInstanceProcesses,
  liveInstances,
  requestAction,
  type SeededSource,
  seedProvision,
  statusReached,
} from './reconciler-fixtures.ts';

// Builds and deploys take seconds each; a slow machine gets room.
vi.setConfig({ testTimeout: 120_000 });

const SHOP = `
  CREATE TABLE item (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL);
  INSERT INTO item VALUES (1, 'one'), (2, 'two'), (3, 'three');
`;

async function query(endpointUrl: string, keySecret: Buffer, keyId: string) {
  const response = await fetch(`${endpointUrl}/query`, {
    method: 'POST',
    headers: { authorization: `Bearer ${deriveApiKey(keySecret, keyId)}` },
    body: 'item { id name } ORDER BY id',
  });
  return { status: response.status, body: (await response.json()) as { data?: unknown[] } };
}

describe.each(STORE_KINDS)('the reconciler on the %s store', (kind) => {
  let cp: TestControlPlane;
  let source: Awaited<ReturnType<ReturnType<typeof testMariaDb>['createDatabase']>>;
  let seeded: SeededSource;
  /** Rows of `item` the source had given up to reads when the first deploy had run. */
  let readAtFirstDeploy = 0;

  /** Rows of `item` read at the source so far (MariaDB's per-table statistics). */
  const itemRowsRead = async () => {
    const [row] = await source.query<{ read: string }>(
      "SELECT ROWS_READ AS `read` FROM information_schema.TABLE_STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'item'",
    );
    return Number(row?.read ?? 0);
  };
  /**
   * Where the serving instance's snapshot came from; and that no start since the first deploy
   * read the table (nothing else reads it: no write needs a row looked up).
   */
  const expectStartFromCheckpoint = async () => {
    const [live] = await liveInstances(cp.context.db, seeded.databaseId);
    const response = await fetch(`${live?.endpoint_url}/health/detail`, {
      headers: {
        authorization: `Bearer ${deriveApiKey(seeded.keySecret, live?.control_key_id as string)}`,
      },
    });
    const detail = (await response.json()) as { snapshot: { origin: string } };
    expect(detail.snapshot.origin).toBe('checkpoint');
    expect(await itemRowsRead()).toBe(readAtFirstDeploy);
  };

  beforeAll(async () => {
    // Per-table read counters, to tell a start that read the source from one that did not.
    await testMariaDb().exec('SET GLOBAL userstat = 1');
    source = await testMariaDb().createDatabase(SHOP);
    cp = await startTestControlPlane(kind, {
      roles: ['api', 'reconciler', 'builder', 'health-monitor'],
    });
    seeded = await seedProvision(cp.context.db, cp.context.secrets, source.url);
  });
  afterAll(async () => {
    const dataDir = cp?.dataDir;
    await cp?.close();
    if (dataDir) killInstanceProcesses(dataDir);
    await source?.drop();
  });

  it('provisions: builds, deploys and runs the instance, and reports it', async () => {
    const db = cp.context.db;
    const row = await statusReached(db, seeded.databaseId, 'running');
    expect(row.lease_owner).toBeNull();
    expect(row.last_error).toBeNull();
    expect(row.current_build_id).toEqual(expect.any(String));
    expect(row.deployed_config).toEqual({
      instanceSize: 'xs',
      taskCpu: 0.25,
      taskMemoryMb: 512,
      syncMode: 'cdc',
      syncInterval: 1,
      logLevel: 'info',
      safetyNet: 0,
      replicas: 1,
    });
    const [instance, ...others] = await liveInstances(db, seeded.databaseId);
    expect(others).toEqual([]);
    expect(instance?.build_id).toBe(row.current_build_id);
    expect(instance?.endpoint_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(instanceProcesses(cp.dataDir)).toEqual([instance?.pid]);
    // The first deploy read the table whole, and checkpoints what it read for the next start.
    readAtFirstDeploy = await itemRowsRead();
    expect(readAtFirstDeploy).toBeGreaterThanOrEqual(3);
    await eventually(
      async () => readdirSync(join(cp.dataDir, 'checkpoints', seeded.databaseId, '0')).length > 0,
      10_000,
      'the first checkpoint',
    );
    // The control key works; the instance serves the source's rows.
    const answer = await query(
      instance?.endpoint_url as string,
      seeded.keySecret,
      instance?.control_key_id as string,
    );
    expect(answer.status).toBe(200);
    expect(answer.body.data).toEqual([
      { id: 1, name: 'one' },
      { id: 2, name: 'two' },
      { id: 3, name: 'three' },
    ]);
    const types = await auditTypes(db, seeded.databaseId);
    for (const type of ['build.queued', 'deploy.succeeded', 'database.provisioned'])
      expect(types).toContain(type);
    expect(types.filter((type) => type === 'build.completed')).toHaveLength(1);
    const completed = await db
      .selectFrom('audit_events')
      .select('payload')
      .where('database_id', '=', seeded.databaseId)
      .where('event_type', '=', 'build.completed')
      .executeTakeFirstOrThrow();
    expect(completed.payload).toMatchObject({
      databaseId: seeded.databaseId,
      endpointUrl: instance?.endpoint_url,
    });
    const deployment = await db
      .selectFrom('deployments')
      .selectAll()
      .where('database_id', '=', seeded.databaseId)
      .executeTakeFirstOrThrow();
    expect(deployment).toMatchObject({ status: 'succeeded', action: 'provision' });
    const lines = await db
      .selectFrom('log_lines')
      .select('message')
      .where('stream_id', '=', deployment.id)
      .orderBy('id')
      .execute();
    expect(lines.map((line) => line.message)).toEqual([
      `Deploying build ${row.current_build_id} (provision)`,
      `Starting instance ${instance?.id}`,
      expect.stringMatching(/^Instance .* started on private port \d+/),
      'Waiting for the snapshot to load',
      `The endpoint now sends queries to instance ${instance?.id}`,
      `Instance is serving at ${instance?.endpoint_url}`,
    ]);
    // The health monitor's first reading emits nothing.
    await eventually(
      async () => (await liveInstances(db, seeded.databaseId))[0]?.health_status === 'ok',
      10_000,
      'a health reading',
    );
    const checked = (await liveInstances(db, seeded.databaseId))[0];
    expect(checked?.row_counts).toEqual({ item: 3 });
    expect(checked?.swap_count).toEqual(expect.any(Number));
    expect(checked?.last_health_check).toBeInstanceOf(Date);
    expect(await auditTypes(db, seeded.databaseId)).not.toContain('instance.unhealthy');
  });

  it('syncs API keys into the running instance: added keys work, deleted ones stop within 5 s', async () => {
    const db = cp.context.db;
    const [instance] = await liveInstances(db, seeded.databaseId);
    const endpoint = instance?.endpoint_url as string;
    const keyId = await addApiKey(db, seeded);
    await eventually(
      async () => (await query(endpoint, seeded.keySecret, keyId)).status === 200,
      5000,
      'the new key to work',
    );
    await db.deleteFrom('api_keys').where('key_id', '=', keyId).execute();
    await bumpKeysVersion(db, seeded.databaseId);
    const deleted = Date.now();
    await eventually(
      async () => (await query(endpoint, seeded.keySecret, keyId)).status === 401,
      5000,
      'the deleted key to stop working',
    );
    expect(Date.now() - deleted).toBeLessThan(5000);
    // The control key still works.
    expect(
      (await query(endpoint, seeded.keySecret, instance?.control_key_id as string)).status,
    ).toBe(200);
  });

  it('restarts a killed instance process with the same id and port, and reports health', async () => {
    const db = cp.context.db;
    const [before] = await liveInstances(db, seeded.databaseId);
    process.kill(before?.pid as number, 'SIGKILL');
    const after = await eventually(
      async () => {
        const [row] = await liveInstances(db, seeded.databaseId);
        return row && row.restarts === 1 && row.pid !== before?.pid ? row : undefined;
      },
      30_000,
      'the restart',
    );
    expect(after.id).toBe(before?.id);
    expect(after.port).toBe(before?.port);
    expect(after.endpoint_url).toBe(before?.endpoint_url);
    expect(instanceProcesses(cp.dataDir)).toEqual([after.pid]);
    await eventually(
      async () => (await auditTypes(db, seeded.databaseId)).includes('instance.recovered'),
      30_000,
      'instance.recovered',
    );
    const types = await auditTypes(db, seeded.databaseId);
    expect(types).toContain('instance.restarted');
    expect(types.indexOf('instance.unhealthy')).toBeGreaterThan(-1);
    expect(types.indexOf('instance.unhealthy')).toBeLessThan(types.indexOf('instance.recovered'));
    await expectStartFromCheckpoint();
    const unhealthy = await db
      .selectFrom('notifications')
      .select(['message', 'severity'])
      .where('database_id', '=', seeded.databaseId)
      .where('event_type', '=', 'instance.unhealthy')
      .executeTakeFirstOrThrow();
    expect(unhealthy.severity).toBe('error');
    expect((await databaseRow(db, seeded.databaseId)).status).toBe('running');
  });

  it('resizes: a new instance with the new size replaces the old one', async () => {
    const db = cp.context.db;
    const [before] = await liveInstances(db, seeded.databaseId);
    await requestAction(db, seeded.databaseId, 'resize', 'deploying', { instanceSize: 's' });
    const row = await statusReached(db, seeded.databaseId, 'running');
    expect(row.instance_size).toBe('s');
    expect(row.deployed_config).toMatchObject({ instanceSize: 's', taskMemoryMb: 1024 });
    const [after, ...others] = await liveInstances(db, seeded.databaseId);
    expect(others).toEqual([]);
    expect(after?.id).not.toBe(before?.id);
    expect(instanceProcesses(cp.dataDir)).toEqual([after?.pid]);
    const old = await db
      .selectFrom('instances')
      .select('removed_at')
      .where('id', '=', before?.id as string)
      .executeTakeFirstOrThrow();
    expect(old.removed_at).toBeInstanceOf(Date);
    expect(await auditTypes(db, seeded.databaseId)).toContain('database.resized');
    await expectStartFromCheckpoint();
  });

  it('pauses and resumes', async () => {
    const db = cp.context.db;
    await requestAction(db, seeded.databaseId, 'pause', 'pausing');
    await statusReached(db, seeded.databaseId, 'paused');
    expect(await liveInstances(db, seeded.databaseId)).toEqual([]);
    expect(instanceProcesses(cp.dataDir)).toEqual([]);
    await requestAction(db, seeded.databaseId, 'resume', 'deploying');
    await statusReached(db, seeded.databaseId, 'running');
    const [instance] = await liveInstances(db, seeded.databaseId);
    expect(instanceProcesses(cp.dataDir)).toEqual([instance?.pid]);
    const types = await auditTypes(db, seeded.databaseId);
    expect(types).toContain('database.paused');
    expect(types).toContain('database.resumed');
    await expectStartFromCheckpoint();
  });

  it('fails a deploy whose instance cannot start, with the reason and without the password; the old instance keeps serving', async () => {
    const db = cp.context.db;
    const [serving] = await liveInstances(db, seeded.databaseId);
    const keyId = await addApiKey(db, seeded);
    await db
      .updateTable('connections')
      .set({ password_enc: cp.context.secrets.seal('wrong-Pa55word') })
      .where('id', '=', seeded.connectionId)
      .execute();
    await requestAction(db, seeded.databaseId, 'reconfigure', 'deploying');
    const row = await eventually(
      async () => {
        const current = await databaseRow(db, seeded.databaseId);
        return current.goal === null && current.last_error ? current : undefined;
      },
      90_000,
      'the failed deploy',
    );
    expect(row.status).toBe('running');
    // The source is asked again, and its answer is put in the dashboard's words.
    expect(row.last_error).toMatch(
      /^The source refused the connection’s user or password: Authentication to the source database failed\. On the Connections page, edit “.+”, correct its user or password and save it, then click Reconfigure on the Overview tab\. With the CLI: replix connections update [-0-9a-f]{36} --user <user> --password <password>, then replix db reconfigure [-0-9a-f]{36}\.$/,
    );
    const deployLog = await db
      .selectFrom('log_lines')
      .select('message')
      .where('message', 'like', 'Deploy failed:%')
      .execute();
    expect(deployLog.map((line) => line.message)).toContain(
      'Deploy failed: The instance process exited before it listened. Last log lines:\nreplix serve: Authentication to the source database failed. (source_auth_failed)',
    );
    expect(row.last_error).not.toContain('wrong-Pa55word');
    // The instance that served before still does, on the same endpoint.
    expect((await liveInstances(db, seeded.databaseId)).map((instance) => instance.id)).toEqual([
      serving?.id,
    ]);
    expect(instanceProcesses(cp.dataDir)).toEqual([serving?.pid]);
    await eventually(
      async () => (await query(row.endpoint_url as string, seeded.keySecret, keyId)).status === 200,
      30_000,
      'a query answered by the old instance',
    );
    const types = await auditTypes(db, seeded.databaseId);
    expect(types).toContain('deploy.failed');
    const notification = await db
      .selectFrom('notifications')
      .select(['severity', 'detail'])
      .where('database_id', '=', seeded.databaseId)
      .where('event_type', '=', 'deploy.failed')
      .executeTakeFirstOrThrow();
    expect(notification.severity).toBe('error');
    const deployment = await db
      .selectFrom('deployments')
      .select('status')
      .where('database_id', '=', seeded.databaseId)
      .where('action', '=', 'reconfigure')
      .executeTakeFirstOrThrow();
    expect(deployment.status).toBe('failed');
    // A resize that fails leaves the database at the size its serving instance runs at.
    const sizeBefore = (await databaseRow(db, seeded.databaseId)).instance_size;
    const otherSize = sizeBefore === 's' ? 'xs' : 's';
    await requestAction(db, seeded.databaseId, 'resize', 'deploying', { instanceSize: otherSize });
    const resized = await eventually(
      async () => {
        const current = await databaseRow(db, seeded.databaseId);
        return current.goal === null ? current : undefined;
      },
      90_000,
      'the failed resize',
    );
    expect(resized.status).toBe('running');
    expect(resized.instance_size).toBe(sizeBefore);
    // Back to the right password: redeploying the current build brings it back.
    await db
      .updateTable('connections')
      .set({ password_enc: cp.context.secrets.seal('') })
      .where('id', '=', seeded.connectionId)
      .execute();
    await requestAction(db, seeded.databaseId, 'redeploy', 'deploying', {
      buildId: row.current_build_id as string,
    });
    await statusReached(db, seeded.databaseId, 'running');
  });

  it('terminates, then deletes', async () => {
    const db = cp.context.db;
    await requestAction(db, seeded.databaseId, 'terminate', 'terminating');
    await statusReached(db, seeded.databaseId, 'terminated');
    expect(await liveInstances(db, seeded.databaseId)).toEqual([]);
    expect(instanceProcesses(cp.dataDir)).toEqual([]);
    // Its checkpoints went with it: a deploy after a terminate reads the source.
    expect(existsSync(join(cp.dataDir, 'checkpoints', seeded.databaseId))).toBe(false);
    await requestAction(db, seeded.databaseId, 'delete', 'deleting');
    const row = await eventually(
      async () => {
        const current = await databaseRow(db, seeded.databaseId);
        return current.deleted_at ? current : undefined;
      },
      30_000,
      'the delete',
    );
    expect(row).toMatchObject({ status: 'deleting', goal: null, lease_owner: null });
    const types = await auditTypes(db, seeded.databaseId);
    expect(types).toContain('database.terminated');
    expect(types).toContain('database.deleted');
  });

  it('fails a provision whose build fails, and reports build.failed', async () => {
    const db = cp.context.db;
    const broken = await seedProvision(db, cp.context.secrets, source.url, {
      sourceSchema: 'no_such_schema',
    });
    const row = await statusReached(db, broken.databaseId, 'failed');
    expect(row.last_error).toEqual(expect.any(String));
    expect(await liveInstances(db, broken.databaseId)).toEqual([]);
    const failed = await db
      .selectFrom('audit_events')
      .select('payload')
      .where('database_id', '=', broken.databaseId)
      .where('event_type', '=', 'build.failed')
      .where('entity_type', '=', 'database')
      .executeTakeFirstOrThrow();
    expect(failed.payload).toMatchObject({ error: row.last_error });
  });
});

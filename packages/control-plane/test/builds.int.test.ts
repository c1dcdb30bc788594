import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { testMariaDb } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILDER_LOST_ERROR } from '../src/adapters/store/build-queue.ts';
import { artifactDirFor } from '../src/application/builder/artifact-paths.ts';
import { queueBuild } from '../src/application/resources/builds/queue-build.ts';
import { finishedBuild, testSourceDatabase } from './builder-helpers.ts';
import {
  EMBEDDED_STORE,
  startTestControlPlane,
  type TestControlPlane,
} from './control-plane-harness.ts';
import { caller } from './lifecycle-fixtures.ts';

const SOURCE_SQL = `
  CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL);
  CREATE TABLE orders (id INT PRIMARY KEY, customer_id INT NOT NULL,
    FOREIGN KEY (customer_id) REFERENCES customers(id));
  INSERT INTO customers VALUES (1, 'Ada');
  INSERT INTO orders VALUES (10, 1);`;

const BUILD_KEYS = [
  'id',
  'databaseId',
  'builderJobId',
  'imageUri',
  'status',
  'logsUrl',
  'startedAt',
  'finishedAt',
  'buildDurationSeconds',
  'computeTypeUsed',
  'costEstimateCents',
  'createdAt',
].sort();

describe.each(EMBEDDED_STORE)('builds on the %s store', (kind) => {
  let cp: TestControlPlane;
  let sourceUrl: string;
  beforeAll(async () => {
    sourceUrl = (await testMariaDb().createDatabase(SOURCE_SQL)).url;
    cp = await startTestControlPlane(kind, { roles: ['api', 'builder'] });
  });
  afterAll(() => cp?.close());

  const auditTypes = async (buildId: string) =>
    (
      await cp.context.db
        .selectFrom('audit_events')
        .select('event_type')
        .where('entity_id', '=', buildId)
        .orderBy('created_at')
        .execute()
    ).map((row) => row.event_type);

  it('builds a queued build into an artifact and serves its log and resource', async () => {
    const { token, accountId } = await caller(cp, `ok-${kind}@example.com`);
    const database = await testSourceDatabase(cp, accountId, sourceUrl, {
      field_aliases: { customers: 'clients' },
    });
    const buildId = await queueBuild(cp.context.db, database);
    const row = await finishedBuild(cp, buildId);
    expect(row).toMatchObject({ status: 'succeeded', attempts: 1, error: null });
    expect(row.config_hash).toMatch(/^[0-9a-f]{64}$/);

    // The artifact: every file, a manifest with their hashes and the build hash.
    const dir = fileURLToPath(row.image_uri as string);
    expect(dir).toBe(artifactDirFor(cp.dataDir, buildId));
    expect(readdirSync(dir).sort()).toEqual([
      'instance.mjs',
      'manifest.json',
      'openapi.json',
      'schema-config.json',
      'source-schema.json',
    ]);
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
    expect(manifest).toMatchObject({
      buildId,
      databaseId: database.id,
      buildHash: row.artifact_hash,
      release: expect.any(String),
    });
    expect(Object.keys(manifest.files).sort()).toEqual([
      'instance.mjs',
      'openapi.json',
      'schema-config.json',
      'source-schema.json',
    ]);
    const schemaConfig = JSON.parse(readFileSync(join(dir, 'schema-config.json'), 'utf8'));
    expect(schemaConfig.sync).toMatchObject({ mode: 'poll', interval: 2, safety_net: 0 });
    expect(schemaConfig.field_aliases).toEqual({ customers: 'clients' });
    const openapi = JSON.parse(readFileSync(join(dir, 'openapi.json'), 'utf8'));
    expect(JSON.stringify(openapi)).toContain('clients');
    expect(openapi.info.version).toBe(`${manifest.release}-${manifest.buildHash}`);

    // The Build resource, exactly the fields of spec §2.
    const got = await cp.request('GET', `/v1/builds/${buildId}`, { token });
    expect(got.status).toBe(200);
    expect(Object.keys(got.body).sort()).toEqual(BUILD_KEYS);
    expect(got.body).toMatchObject({
      id: buildId,
      databaseId: database.id,
      status: 'succeeded',
      imageUri: row.image_uri,
      logsUrl: `/v1/builds/${buildId}/logs`,
      computeTypeUsed: 'process.small',
      builderJobId: expect.stringMatching(/^builder-[0-9a-f]{10}\/1$/),
    });
    expect(got.body.costEstimateCents).toBeGreaterThanOrEqual(1);
    expect(Number.isInteger(got.body.buildDurationSeconds)).toBe(true);
    expect(Date.parse(got.body.finishedAt)).toBeGreaterThanOrEqual(Date.parse(got.body.startedAt));

    // The log, then an empty page from the last token, both done.
    const logs = await cp.request('GET', `/v1/builds/${buildId}/logs`, { token });
    expect(logs.status).toBe(200);
    const messages = logs.body.lines.map((line: { message: string }) => line.message);
    expect(messages).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^Introspecting source/),
        'Compiled 2 tables',
        expect.stringMatching(/^Bundled instance program \((cache hit|bundled anew)\)$/),
        `Artifact ${manifest.buildHash} written`,
        'Build succeeded',
      ]),
    );
    expect(logs.body.done).toBe(true);
    expect(typeof logs.body.lines[0].timestamp).toBe('number');
    const after = await cp.request(
      'GET',
      `/v1/builds/${buildId}/logs?nextToken=${logs.body.nextToken}`,
      { token },
    );
    expect(after.body).toEqual({ lines: [], nextToken: logs.body.nextToken, done: true });

    // A second build of the same engine reuses the bundle and gets the same build hash.
    const second = await finishedBuild(cp, await queueBuild(cp.context.db, database));
    expect(second.artifact_hash).toBe(row.artifact_hash);
    const secondLog = await cp.request('GET', `/v1/builds/${second.id}/logs`, { token });
    expect(secondLog.body.lines.map((l: { message: string }) => l.message)).toContain(
      'Bundled instance program (cache hit)',
    );

    const list = await cp.request('GET', `/v1/databases/${database.id}/builds`, { token });
    expect(list.status).toBe(200);
    expect(list.body.map((b: { id: string }) => b.id)).toEqual([second.id, buildId]);
    expect(await auditTypes(buildId)).toEqual(['build.queued', 'build.started', 'build.succeeded']);
  });

  it('fails a build whose schema config does not fit the source, with a clear error', async () => {
    const { token, accountId } = await caller(cp, `bad-${kind}@example.com`);
    const database = await testSourceDatabase(cp, accountId, sourceUrl, {
      tables: [{ name: 'no_such_table' }],
    });
    const buildId = await queueBuild(cp.context.db, database);
    const row = await finishedBuild(cp, buildId);
    expect(row.status).toBe('failed');
    expect(row.error).toMatch(/^Invalid schema config: tables\[0\]\.name: .*no_such_table/);
    expect(row.image_uri).toBeNull();
    expect(existsSync(artifactDirFor(cp.dataDir, buildId))).toBe(false);
    const logs = await cp.request('GET', `/v1/builds/${buildId}/logs`, { token });
    expect(logs.body.done).toBe(true);
    expect(logs.body.lines.at(-1).message).toBe(`Build failed: ${row.error}`);
    expect(await auditTypes(buildId)).toEqual(['build.queued', 'build.started', 'build.failed']);
  });

  it('fails at once on an invalid schema config key, before reaching the source', async () => {
    const { accountId } = await caller(cp, `key-${kind}@example.com`);
    const database = await testSourceDatabase(cp, accountId, sourceUrl, { tabels: [] });
    const row = await finishedBuild(cp, await queueBuild(cp.context.db, database));
    expect(row).toMatchObject({
      status: 'failed',
      error: 'Invalid schema config: tabels: unknown key',
    });
  });

  it('re-claims a build whose builder was lost, and fails one lost three times', async () => {
    const { accountId } = await caller(cp, `lost-${kind}@example.com`);
    const database = await testSourceDatabase(cp, accountId, sourceUrl);
    const lostBuild = async (attempts: number) => {
      const id = randomUUID();
      await cp.context.db
        .insertInto('builds')
        .values({
          id,
          database_id: database.id,
          account_id: accountId,
          region: 'eu-west-1',
          status: 'in_progress',
          attempts,
          lease_owner: 'gone-host:1:dead:builder',
          lease_until: new Date(Date.now() - 1000),
          started_at: new Date(Date.now() - 60_000),
          builder_job_id: `gone-host:1:dead:builder/${attempts}`,
        })
        .execute();
      return id;
    };
    const onceLost = await lostBuild(1);
    const thriceLost = await lostBuild(3);
    const retried = await finishedBuild(cp, onceLost);
    expect(retried).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect(retried.builder_job_id).toMatch(/^builder-[0-9a-f]{10}\/2$/);
    expect(retried.builder_job_id).not.toContain('gone-host');
    const dead = await finishedBuild(cp, thriceLost);
    expect(dead).toMatchObject({ status: 'failed', attempts: 3, error: BUILDER_LOST_ERROR });
    expect(await auditTypes(thriceLost)).toEqual(['build.failed']);
  });
});

describe.each(EMBEDDED_STORE)('builds routes on the %s store', (kind) => {
  let cp: TestControlPlane;
  beforeAll(async () => {
    cp = await startTestControlPlane(kind);
  });
  afterAll(() => cp?.close());

  it("answers 401 without a token and 404 for another account's builds", async () => {
    const owner = await caller(cp, 'owner@example.com');
    const other = await caller(cp, 'other@example.com');
    const database = await testSourceDatabase(cp, owner.accountId, 'mysql://u:p@127.0.0.1:1/shop');
    const buildId = await queueBuild(cp.context.db, database);
    const paths = [
      `/v1/databases/${database.id}/builds`,
      `/v1/builds/${buildId}`,
      `/v1/builds/${buildId}/logs`,
    ];
    for (const path of paths) {
      const anonymous = await cp.request('GET', path);
      expect(anonymous.status).toBe(401);
      expect(anonymous.body.error).toBe('unauthorized');
      const foreign = await cp.request('GET', path, { token: other.token });
      expect(foreign.status).toBe(404);
      expect(foreign.body).toEqual({ error: 'not_found', message: expect.any(String) });
      expect((await cp.request('GET', path, { token: owner.token })).status).toBe(200);
    }
    expect(
      (await cp.request('GET', `/v1/builds/${randomUUID()}`, { token: owner.token })).status,
    ).toBe(404);
  });

  it('reports a queued build with an open log, and rejects a malformed token', async () => {
    const { token, accountId } = await caller(cp, 'queued@example.com');
    const database = await testSourceDatabase(cp, accountId, 'mysql://u:p@127.0.0.1:1/shop');
    const buildId = await queueBuild(cp.context.db, database);
    const build = await cp.request('GET', `/v1/builds/${buildId}`, { token });
    expect(build.body).toMatchObject({
      status: 'queued',
      startedAt: null,
      finishedAt: null,
      imageUri: null,
      builderJobId: null,
    });
    const logs = await cp.request('GET', `/v1/builds/${buildId}/logs`, { token });
    expect(logs.body).toEqual({ lines: [], nextToken: '0', done: false });
    const bad = await cp.request('GET', `/v1/builds/${buildId}/logs?nextToken=abc`, { token });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('validation_failed');
    const badId = await cp.request('GET', '/v1/builds/not-a-uuid', { token });
    expect(badId.status).toBe(400);
  });
});

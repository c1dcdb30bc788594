import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { TestDatabase } from '@replix/testkit';
import { testMariaDb } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimBuild } from '../../control-plane/src/adapters/store/build-queue.ts';
import { artifactDirFor } from '../../control-plane/src/application/builder/artifact-paths.ts';
import { queueBuild } from '../../control-plane/src/application/resources/builds/queue-build.ts';
import { testSourceDatabase } from '../../control-plane/test/builder-helpers.ts';
import {
  startTestControlPlane,
  type TestControlPlane,
} from '../../control-plane/test/control-plane-harness.ts';
import { caller } from '../../control-plane/test/lifecycle-fixtures.ts';

const run = promisify(execFile);
const bin = fileURLToPath(new URL('../bin/replix.js', import.meta.url));

const SOURCE_SQL = `
  CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL);
  INSERT INTO customers VALUES (1, 'Ada');`;
const USER = 'rx_build_job';
const PASSWORD = 'bj-Pa$$word-9f1c';

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * `replix build-job` as a child process against a PostgreSQL store (a control plane with the
 * api role only, so no builder takes the builds first) and a MariaDB source whose user has a
 * password, sealed in the store.
 */
describe('replix build-job', () => {
  let cp: TestControlPlane;
  let source: TestDatabase;
  let accountId: string;
  let sourceUrl: string;

  async function buildJob(env: Record<string, string>): Promise<Result> {
    try {
      const { stdout, stderr } = await run(process.execPath, [bin, 'build-job'], {
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          REPLIX_DATA_DIR: cp.dataDir,
          DATABASE_URL: cp.context.config.databaseUrl as string,
          REPLIX_SECRET_KEY: cp.context.config.secretKey.toString('hex'),
          REPLIX_LOG_LEVEL: 'warn',
          ...env,
        },
      });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const failed = error as { code: number; stdout: string; stderr: string };
      return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
    }
  }
  const buildRow = (id: string) =>
    cp.context.db.selectFrom('builds').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const logOf = async (id: string) =>
    (
      await cp.context.db
        .selectFrom('log_lines')
        .select('message')
        .where('stream_id', '=', id)
        .orderBy('ts')
        .execute()
    ).map((line) => line.message);
  const queued = async (url: string) =>
    queueBuild(cp.context.db, await testSourceDatabase(cp, accountId, url));

  beforeAll(async () => {
    source = await testMariaDb().createDatabase(SOURCE_SQL);
    await testMariaDb().exec(
      `DROP USER IF EXISTS '${USER}'@'%'; CREATE USER '${USER}'@'%' IDENTIFIED BY '${PASSWORD}'; GRANT SELECT ON *.* TO '${USER}'@'%'`,
    );
    const url = new URL(source.url);
    url.username = USER;
    url.password = PASSWORD;
    sourceUrl = url.href;
    cp = await startTestControlPlane('postgres', { roles: ['api'] });
    ({ accountId } = await caller(cp, 'build-job@example.com'));
  });
  afterAll(async () => {
    await cp?.close();
    await source?.drop();
    await testMariaDb().exec(`DROP USER IF EXISTS '${USER}'@'%'`);
  });

  it('runs a queued build to its artifact, records it, and exits 0', async () => {
    const buildId = await queued(sourceUrl);
    const result = await buildJob({
      REPLIX_BUILD_ID: buildId,
      REPLIX_BUILD_COMPUTE_TYPE: 'kubernetes.job',
    });
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(result.stdout)).toEqual({
      event: 'build-finished',
      buildId,
      result: 'succeeded',
    });
    const row = await buildRow(buildId);
    expect(row).toMatchObject({ status: 'succeeded', attempts: 1, compute_type: 'kubernetes.job' });
    expect(existsSync(join(artifactDirFor(cp.dataDir, buildId), 'instance.mjs'))).toBe(true);
    const log = await logOf(buildId);
    expect(log[0]).toMatch(/^Build started \(attempt 1, builder-[0-9a-f]{10}\/1\)$/);
    expect(log).toContain('Found 1 tables in the source');
    expect(log.at(-1)).toBe('Build succeeded');

    // Finished: there is nothing to run any more.
    const again = await buildJob({ REPLIX_BUILD_ID: buildId });
    expect(again).toEqual({
      code: 2,
      stdout: '',
      stderr: `replix build-job: Build ${buildId} has already succeeded.\n`,
    });
  });

  it('records a build whose source is unreachable as failed, exits 1, and shows no secret', async () => {
    const unreachable = new URL(sourceUrl);
    unreachable.port = '1';
    const buildId = await queued(unreachable.href);
    const result = await buildJob({ REPLIX_BUILD_ID: buildId });
    expect(result.code).toBe(1);
    const row = await buildRow(buildId);
    expect(row.status).toBe('failed');
    expect(row.error).toBeTruthy();
    expect(JSON.parse(result.stdout)).toEqual({
      event: 'build-finished',
      buildId,
      result: 'failed',
      error: row.error,
    });
    const everything = [result.stdout, result.stderr, row.error, ...(await logOf(buildId))];
    for (const text of everything) {
      expect(text).not.toContain(PASSWORD);
      expect(text).not.toContain(cp.context.config.secretKey.toString('hex'));
    }
    expect((await logOf(buildId)).at(-1)).toBe(`Build failed: ${row.error}`);
  });

  it('refuses an unknown build, a malformed id and a missing id with exit code 2', async () => {
    const unknown = randomUUID();
    expect(await buildJob({ REPLIX_BUILD_ID: unknown })).toEqual({
      code: 2,
      stdout: '',
      stderr: `replix build-job: There is no build "${unknown}".\n`,
    });
    expect(await buildJob({ REPLIX_BUILD_ID: "x'; DROP TABLE builds; --" })).toMatchObject({
      code: 2,
      stderr: `replix build-job: There is no build "x'; DROP TABLE builds; --".\n`,
    });
    const missing = await buildJob({});
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^replix build-job: .*REPLIX_BUILD_ID/);
  });

  it("works under a builder's claim only when handed its attempt", async () => {
    const buildId = await queued(sourceUrl);
    const claim = await claimBuild(cp.context.db, `launcher:${randomUUID()}`);
    expect(claim?.build.id).toBe(buildId);

    // Someone else's build: not this job's to take.
    const refused = await buildJob({ REPLIX_BUILD_ID: buildId });
    expect(refused).toMatchObject({
      code: 2,
      stderr: `replix build-job: Build ${buildId} is being run by a builder (attempt 1).\n`,
    });
    const wrongAttempt = await buildJob({ REPLIX_BUILD_ID: buildId, REPLIX_BUILD_ATTEMPT: '2' });
    expect(wrongAttempt).toMatchObject({
      code: 2,
      stderr: `replix build-job: Attempt 2 of build ${buildId} is not running (the build is in_progress, attempt 1).\n`,
    });

    const handed = await buildJob({ REPLIX_BUILD_ID: buildId, REPLIX_BUILD_ATTEMPT: '1' });
    expect(handed).toMatchObject({ code: 0, stderr: '' });
    expect(await buildRow(buildId)).toMatchObject({ status: 'succeeded', attempts: 1 });
  });
});

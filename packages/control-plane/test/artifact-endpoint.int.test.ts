import { execFile } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { testMariaDb } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { artifactFetchScript } from '../src/adapters/drivers/kubernetes/artifact-fetch-script.ts';
import { queueBuild } from '../src/application/resources/builds/queue-build.ts';
import { artifactToken } from '../src/domain/artifact-token.ts';
import { finishedBuild, testSourceDatabase } from './builder-helpers.ts';
import { startTestControlPlane, type TestControlPlane } from './control-plane-harness.ts';
import { caller } from './lifecycle-fixtures.ts';

// The api role's artifact endpoint, as the Kubernetes driver's init container uses it: a real
// build, its files fetched with the build's token by the real fetch script.

const run = promisify(execFile);
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('the artifact endpoint (GET /internal/artifacts/<buildId>/<file>)', () => {
  let cp: TestControlPlane;
  let source: Awaited<ReturnType<ReturnType<typeof testMariaDb>['createDatabase']>>;
  let buildId: string;
  let artifactDir: string;
  let token: string;
  const work = mkdtempSync(join(tmpdir(), 'replix-artifact-endpoint-'));

  beforeAll(async () => {
    source = await testMariaDb().createDatabase(
      "CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(20)); INSERT INTO items VALUES (1, 'one');",
    );
    cp = await startTestControlPlane('pglite', { roles: ['api', 'builder'] });
    const { accountId } = await caller(cp, 'artifacts@example.com');
    const database = await testSourceDatabase(cp, accountId, source.url);
    const build = await finishedBuild(cp, await queueBuild(cp.context.db, database));
    expect(build, JSON.stringify(build)).toMatchObject({ status: 'succeeded' });
    buildId = build.id as string;
    artifactDir = fileURLToPath(build.image_uri as string);
    token = artifactToken(cp.context.config.secretKey, buildId);
  }, 120_000);

  afterAll(async () => {
    await cp?.close();
    await source?.drop();
    rmSync(work, { recursive: true, force: true });
  });

  const get = (path: string, bearer?: string) =>
    cp.request('GET', path, { headers: bearer ? { authorization: `Bearer ${bearer}` } : {} });

  it('serves the manifest and every file it lists to the build token', async () => {
    const manifest = JSON.parse(readFileSync(join(artifactDir, 'manifest.json'), 'utf8')) as {
      files: Record<string, { sha256: string }>;
    };
    const answer = await fetch(`${cp.url}/internal/artifacts/${buildId}/manifest.json`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(answer.status).toBe(200);
    expect(Buffer.from(await answer.arrayBuffer())).toEqual(
      readFileSync(join(artifactDir, 'manifest.json')),
    );
    for (const [name, file] of Object.entries(manifest.files)) {
      const response = await fetch(`${cp.url}/internal/artifacts/${buildId}/${name}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(response.status, name).toBe(200);
      expect(sha256(Buffer.from(await response.arrayBuffer())), name).toBe(file.sha256);
    }
  });

  it('refuses a missing or wrong token with 401, before saying whether the build exists', async () => {
    const other = randomUUID();
    for (const bearer of [
      undefined,
      'rxa_wrong',
      artifactToken(cp.context.config.secretKey, other),
      `${token}x`,
    ]) {
      const response = await get(`/internal/artifacts/${buildId}/manifest.json`, bearer);
      expect(response.status, String(bearer)).toBe(401);
      expect(response.body).toEqual({ error: 'unauthorized', message: expect.any(String) });
    }
    // A valid token of a build that does not exist (or has no artifact): 404.
    const unknown = await get(
      `/internal/artifacts/${other}/manifest.json`,
      artifactToken(cp.context.config.secretKey, other),
    );
    expect(unknown.status).toBe(404);
    const notUuid = await get(
      '/internal/artifacts/not-a-build/manifest.json',
      artifactToken(cp.context.config.secretKey, 'not-a-build'),
    );
    expect(notUuid.status).toBe(404);
  });

  it('serves nothing outside the files the manifest lists', async () => {
    for (const file of [
      'secret.key',
      '..%2F..%2Fsecret.key',
      '..',
      '.',
      'MANIFEST.json',
      '%2Fetc%2Fpasswd',
    ]) {
      const response = await get(`/internal/artifacts/${buildId}/${file}`, token);
      expect(response.status, file).toBe(404);
      expect(JSON.stringify(response.body)).not.toContain(cp.dataDir);
    }
  });

  it('is what the init container fetches: every file checked and written', async () => {
    const manifestSha = sha256(readFileSync(join(artifactDir, 'manifest.json')));
    const target = join(work, 'fetched');
    const env = {
      PATH: process.env.PATH ?? '',
      REPLIX_ARTIFACT_URL: `${cp.url}/internal/artifacts/${buildId}`,
      REPLIX_ARTIFACT_SHA256: manifestSha,
      REPLIX_ARTIFACT_TOKEN: token,
      REPLIX_ARTIFACT_DIR: target,
    };
    const { stdout } = await run(
      process.execPath,
      ['--input-type=module', '-e', artifactFetchScript()],
      { env },
    );
    expect(stdout).toMatch(/^artifact fetched: \d+ files/);
    expect(readdirSync(target).sort()).toEqual(readdirSync(artifactDir).sort());
    // A wrong token: the script fails without printing the token.
    const failed = await run(
      process.execPath,
      ['--input-type=module', '-e', artifactFetchScript()],
      {
        env: { ...env, REPLIX_ARTIFACT_TOKEN: 'rxa_stolen', REPLIX_ARTIFACT_DIR: join(work, 'no') },
      },
    ).catch((error: { code: number; stderr: string }) => error);
    expect(failed).toMatchObject({
      code: 1,
      stderr: 'artifact fetch failed: manifest.json: HTTP 401\n',
    });
  });
});

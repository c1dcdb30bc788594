import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import type { TestDatabase } from '@replix/testkit';
import { type FakeKubernetes, startFakeKubernetes } from '@replix/testkit';
import { testMariaDb } from '@replix/testkit/vitest';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildJobName } from '../src/adapters/drivers/kubernetes/build-job-manifest.ts';
import { KubernetesApi } from '../src/adapters/drivers/kubernetes/kubernetes-api.ts';
import { KubernetesBuildRunner } from '../src/adapters/drivers/kubernetes/kubernetes-build-runner.ts';
import {
  type KubernetesObject,
  secretData,
} from '../src/adapters/drivers/kubernetes/kubernetes-object.ts';
import { BUILDER_PERMISSIONS } from '../src/adapters/drivers/kubernetes/permissions.ts';
import { artifactDirFor } from '../src/application/builder/artifact-paths.ts';
import { credentialFromStore } from '../src/application/builder/build-source-credential.ts';
import { startBuilder } from '../src/application/builder/builder-role.ts';
import { introspectSource } from '../src/application/builder/introspect-source.ts';
import { queueBuild } from '../src/application/resources/builds/queue-build.ts';
import { artifactToken } from '../src/domain/artifact-token.ts';
import type { RunningRole } from '../src/roles/role.ts';
import { finishedBuild, testSourceDatabase } from './builder-helpers.ts';
import { startTestControlPlane, type TestControlPlane } from './control-plane-harness.ts';
import { apiCallsOf, callsNotGranted, REPLIX_BIN } from './kubernetes-test-cluster.ts';
import { caller } from './lifecycle-fixtures.ts';
import { eventually } from './reconciler-fixtures.ts';

const NAMESPACE = 'replix-system';
const CLAIM = 'replix-data';
const STORE_SECRET = 'replix-secrets';
/** Where the Job mounts the claim, as the cluster's roles do (deploy/kubernetes). */
const MOUNT_PATH = '/var/lib/replix';
const USER = 'rx_k8s_build';
const PASSWORD = 'k8s-build-Pa$$-7d2e';
const SOURCE_SQL = `
  CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL);
  CREATE TABLE orders (id INT PRIMARY KEY, customer_id INT NOT NULL,
    FOREIGN KEY (customer_id) REFERENCES customers(id));
  INSERT INTO customers VALUES (1, 'Ada');`;

/**
 * The builder role with the Kubernetes build runner against the fake API server in its
 * runPods mode: each build is a Job whose pod is a real local `replix build-job` process of
 * this checkout, against a real PostgreSQL store and MariaDB source, with the artifacts claim
 * mapped to the control plane's data folder (the api role serves artifacts from there).
 */
describe('builds as Kubernetes Jobs', () => {
  let cp: TestControlPlane;
  let fake: FakeKubernetes;
  let api: KubernetesApi;
  let source: TestDatabase;
  let sourceUrl: string;
  let accountId: string;
  const builders: RunningRole[] = [];
  /** Requests before this index are the test's own set-up, not the builder's. */
  let firstBuilderRequest = 0;

  const runner = (overrides: { storeSecretName?: string; deadlineSeconds?: number } = {}) =>
    new KubernetesBuildRunner({
      api,
      db: cp.context.db,
      log: pino({ level: 'silent' }),
      job: {
        image: 'replix-runtime:test',
        replixBin: REPLIX_BIN,
        namespace: NAMESPACE,
        storeSecretName: overrides.storeSecretName ?? STORE_SECRET,
        artifactsClaim: CLAIM,
        dataDir: MOUNT_PATH,
        deadlineSeconds: overrides.deadlineSeconds ?? 300,
      },
      credentialOf: credentialFromStore(cp.context.db, cp.context.secrets),
      leaseMs: 10_000,
    });
  const startBuilderWith = async (buildRunner: KubernetesBuildRunner) => {
    const builder = await startBuilder(cp.context, {
      introspect: introspectSource,
      runner: buildRunner,
      pollMs: 100,
    });
    builders.push(builder);
    return builder;
  };
  const logOf = async (buildId: string) =>
    (
      await cp.context.db
        .selectFrom('log_lines')
        .select('message')
        .where('stream_id', '=', buildId)
        .orderBy('ts')
        .execute()
    ).map((line) => line.message);
  const jobsOf = (buildId: string) =>
    api.list('batch/v1', 'Job', `replix.dev/build-id=${buildId}`, NAMESPACE);
  /**
   * The credential Secret of the build's Job, read from the fake's store (not through the API,
   * so the builder's recorded calls stay its own); undefined while there is none.
   */
  const credentialOf = async (buildId: string) => {
    const [job] = await jobsOf(buildId);
    return job ? fake.object('Secret', NAMESPACE, `${job.metadata.name}-source`) : undefined;
  };
  /** The build's credential Secret as it is while its Job runs (found as soon as it exists). */
  const credentialWhileRunning = async (buildId: string) => {
    for (;;) {
      const secret = await credentialOf(buildId);
      if (secret) return secret;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  /** The build's one Job, once it has ended with `condition` (its process exits after recording). */
  const endedJob = async (buildId: string, condition: 'Complete' | 'Failed') => {
    for (;;) {
      const jobs = await jobsOf(buildId);
      expect(jobs).toHaveLength(1);
      const conditions =
        (jobs[0]?.status as { conditions?: { type: string; status: string }[] } | undefined)
          ?.conditions ?? [];
      const ended = conditions.find((c) => c.status === 'True');
      if (ended) {
        expect(ended.type).toBe(condition);
        return jobs[0] as NonNullable<(typeof jobs)[0]>;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

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
    ({ accountId } = await caller(cp, 'k8s-builds@example.com'));
    fake = await startFakeKubernetes({
      runPods: true,
      probeIntervalMs: 100,
      claimDirs: { [`${NAMESPACE}/${CLAIM}`]: cp.dataDir },
    });
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(fake.kubeconfig);
    api = new KubernetesApi(kubeConfig);
    await api.apply({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: NAMESPACE, labels: {} } as unknown as KubernetesObject['metadata'],
    });
    // The operator's Secret (docs/deploy/kubernetes.md) as the Jobs see it: the store's
    // address only. Without the secret key, a build runs only on its own credential.
    await api.apply({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: STORE_SECRET, namespace: NAMESPACE, labels: {} },
      type: 'Opaque',
      data: secretData({
        DATABASE_URL: cp.context.config.databaseUrl as string,
      }),
    });
    firstBuilderRequest = fake.requests.length;
  });
  afterAll(async () => {
    for (const builder of builders) await builder.close();
    await fake?.close();
    await cp?.close();
    await source?.drop();
    await testMariaDb().exec(`DROP USER IF EXISTS '${USER}'@'%'`);
  });

  it('runs a queued build as a Job whose artifact lands in the claim and is served by the api', async () => {
    const builder = await startBuilderWith(runner());
    const database = await testSourceDatabase(cp, accountId, sourceUrl);
    const buildId = await queueBuild(cp.context.db, database);
    const credential = credentialWhileRunning(buildId);
    const row = await finishedBuild(cp, buildId, 180_000);
    // The builder deletes the credential once it sees the build recorded.
    await eventually(
      async () => (await credentialOf(buildId)) === undefined,
      30_000,
      'no credential',
    );
    await builder.close();

    expect(row).toMatchObject({ status: 'succeeded', attempts: 1, compute_type: 'kubernetes.job' });
    // The builder counts the Job's build in its metrics, as it would one it ran itself.
    expect(await cp.context.metrics?.exposition()).toMatch(
      /^replix_control_plane_builds_finished_total\{outcome="succeeded"\} 1$/m,
    );
    // The Job's credential: this build's source URL alone, owned by the Job, gone once it ended.
    const secret = await credential;
    const jobs = await jobsOf(buildId);
    expect(jobs).toHaveLength(1);
    const [ran] = jobs as [(typeof jobs)[0]];
    expect(secret.metadata.name).toBe(`${ran.metadata.name}-source`);
    expect(secret.metadata.ownerReferences).toEqual([
      expect.objectContaining({
        apiVersion: 'batch/v1',
        kind: 'Job',
        name: ran.metadata.name,
        uid: ran.metadata.uid,
      }),
    ]);
    const data = (secret as unknown as { data: Record<string, string> }).data;
    expect(Object.keys(data)).toEqual(['REPLIX_BUILD_SOURCE_URL']);
    const opened = new URL(
      Buffer.from(data.REPLIX_BUILD_SOURCE_URL as string, 'base64').toString(),
    );
    expect(decodeURIComponent(opened.password)).toBe(PASSWORD);
    const artifactDir = artifactDirFor(cp.dataDir, buildId);
    expect(row.image_uri).toBe(pathToFileURL(artifactDir).href);
    expect(existsSync(join(artifactDir, 'instance.mjs'))).toBe(true);
    const log = await logOf(buildId);
    expect(log[0]).toMatch(/^Build started \(attempt 1, builder-[0-9a-f]{10}\/1\)$/);
    expect(log).toContain('Found 2 tables in the source');
    expect(log.at(-1)).toBe('Build succeeded');

    // The api role serves the artifact the Job wrote to the claim.
    const manifest = await cp.request('GET', `/internal/artifacts/${buildId}/manifest.json`, {
      headers: { authorization: `Bearer ${artifactToken(cp.context.config.secretKey, buildId)}` },
    });
    expect(manifest.status).toBe(200);
    expect(manifest.body).toEqual(
      JSON.parse(readFileSync(join(artifactDir, 'manifest.json'), 'utf8')),
    );

    // The Job: labelled, in the control plane's namespace, complete, and no secret literal in it.
    const job = await endedJob(buildId, 'Complete');
    expect(job.metadata.name).toMatch(
      new RegExp(`^${buildJobName({ buildId, attempt: 1, launchId: 'x' }).slice(0, -2)}`),
    );
    expect(job.metadata.labels).toMatchObject({
      'app.kubernetes.io/managed-by': 'replix',
      'app.kubernetes.io/component': 'build',
      'replix.dev/build-id': buildId,
      'replix.dev/database-id': database.id,
      'replix.dev/account-id': accountId,
    });
    const text = JSON.stringify(job);
    expect(text).not.toContain(cp.context.config.databaseUrl as string);
    expect(text).not.toContain(cp.context.config.secretKey.toString('hex'));
    expect(text).not.toContain('REPLIX_SECRET_KEY');
    expect(text).not.toContain(PASSWORD);
  });

  it('records the reason of a build whose source is unreachable, as the Job found it', async () => {
    const builder = await startBuilderWith(runner());
    const unreachable = new URL(sourceUrl);
    unreachable.port = '1';
    const database = await testSourceDatabase(cp, accountId, unreachable.href);
    const buildId = await queueBuild(cp.context.db, database);
    const row = await finishedBuild(cp, buildId, 180_000);
    await builder.close();

    expect(row.status).toBe('failed');
    // The Job's own reason, not the runner's "ended without recording".
    expect(row.error).toBeTruthy();
    expect(row.error).not.toMatch(/build job/);
    expect(row.error).not.toContain(PASSWORD);
    expect((await logOf(buildId)).at(-1)).toBe(`Build failed: ${row.error}`);
    // Its process exited 1 after recording: the Job failed, and the builder wrote nothing more.
    await endedJob(buildId, 'Failed');
    expect((await logOf(buildId)).at(-1)).toBe(`Build failed: ${row.error}`);
  });

  it('fails the build itself when its Job never runs and reaches its deadline', async () => {
    // The pod waits for a Secret that is not there (CreateContainerConfigError) until the deadline.
    const builder = await startBuilderWith(
      runner({ storeSecretName: 'no-such-secret', deadlineSeconds: 3 }),
    );
    const database = await testSourceDatabase(cp, accountId, sourceUrl);
    const buildId = await queueBuild(cp.context.db, database);
    const row = await finishedBuild(cp, buildId, 60_000);
    await builder.close();

    expect(row).toMatchObject({
      status: 'failed',
      attempts: 1,
      compute_type: 'kubernetes.job',
      error: "The build did not finish within 3 s (the build job's deadline).",
    });
    expect((await logOf(buildId)).at(-1)).toBe(`Build failed: ${row.error}`);
  });

  it('leaves a running Job to record its build when the builder stops, and replaces an earlier Job', async () => {
    const database = await testSourceDatabase(cp, accountId, sourceUrl);
    const buildId = await queueBuild(cp.context.db, database);
    // A Job of an earlier launch of this build (an attempt given back, say): it goes.
    await api.apply({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: {
        name: 'replix-build-earlier',
        namespace: NAMESPACE,
        labels: { 'app.kubernetes.io/managed-by': 'replix', 'replix.dev/build-id': buildId },
      },
      spec: {
        template: {
          spec: {
            restartPolicy: 'Never',
            containers: [{ name: 'idle', image: 'node:24', command: ['node', '-e', ''] }],
          },
        },
      },
    });
    const builder = await startBuilderWith(runner());
    for (;;) {
      const names = (await jobsOf(buildId)).map((job) => job.metadata.name);
      if (names.length === 1 && names[0] !== 'replix-build-earlier') break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await builder.close();

    const row = await finishedBuild(cp, buildId, 180_000);
    expect(row).toMatchObject({ status: 'succeeded', attempts: 1 });
    expect((await logOf(buildId)).at(-1)).toBe('Build succeeded');
    // finishedBuild's own limit, with room for the Job's start on a loaded machine.
  }, 240_000);

  // Last: every call the builders made.
  it('stays within BUILDER_PERMISSIONS (the Role the builder needs)', () => {
    const calls = apiCallsOf(fake.requests.slice(firstBuilderRequest));
    expect([...calls].sort()).toEqual(
      [
        'batch|jobs|create',
        'batch|jobs|delete',
        'batch|jobs|get',
        'batch|jobs|list',
        'batch|jobs|patch',
        '|secrets|create',
        '|secrets|patch',
        '|secrets|delete',
      ].sort(),
    );
    expect(callsNotGranted(calls, BUILDER_PERMISSIONS)).toEqual([]);
  });
});

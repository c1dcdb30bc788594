import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { deriveApiKey } from '@replix/instance-protocol';
import { type FakeKubernetes, freePort, startFakeKubernetes } from '@replix/testkit';
import { testMariaDb, testPostgres } from '@replix/testkit/vitest';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { KubernetesApi } from '../src/adapters/drivers/kubernetes/kubernetes-api.ts';
import {
  type KubernetesObject,
  secretData,
} from '../src/adapters/drivers/kubernetes/kubernetes-object.ts';
import { openStore } from '../src/adapters/store/open-store.ts';
import { resolveControlPlaneConfig } from '../src/config.ts';
import { type RunningControlPlane, startControlPlane } from '../src/start-control-plane.ts';
import { createOperatorNamespaces, REPLIX_BIN, throughGateway } from './kubernetes-test-cluster.ts';
import {
  addApiKey,
  databaseRow,
  eventually,
  liveInstances,
  requestAction,
  type SeededSource,
  seedProvision,
  statusReached,
} from './reconciler-fixtures.ts';

/** The operator's namespace and store Secret, which build Jobs take their settings from. */
async function storeSecretForBuildJobs(fake: FakeKubernetes, storeUrl: string, secretKey: string) {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(fake.kubeconfig);
  const api = new KubernetesApi(kubeConfig);
  await api.apply({
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'replix-system', labels: {} } as unknown as KubernetesObject['metadata'],
  });
  await api.apply({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'replix-secrets', namespace: 'replix-system', labels: {} },
    type: 'Opaque',
    data: secretData({ DATABASE_URL: storeUrl, REPLIX_SECRET_KEY: secretKey }),
  });
}

// The whole control plane with REPLIX_DRIVER=kubernetes against the fake API server with
// running pods: instance pods fetch their artifact from this control plane's api role, users
// query the endpoint's host through the fake's gateway, deploys switch the database's Service.

vi.setConfig({ testTimeout: 300_000, hookTimeout: 180_000 });

const SHOP = `
  CREATE TABLE item (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL);
  INSERT INTO item VALUES (1, 'one'), (2, 'two'), (3, 'three');
`;
const QUERY = 'item { id name } ORDER BY id';
const EXPECTED = [
  { id: 1, name: 'one' },
  { id: 2, name: 'two' },
  { id: 3, name: 'three' },
];
const LOAD_INTERVAL_MS = 50;

describe('the control plane on the Kubernetes driver', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'replix-k8s-cp-'));
  const keepAlive = new Agent({ keepAlive: true });
  let fake: FakeKubernetes;
  let cp: RunningControlPlane;
  let source: Awaited<ReturnType<ReturnType<typeof testMariaDb>['createDatabase']>>;
  let seeded: SeededSource;
  let apiKey: string;
  let endpointUrl: string;
  const kubeconfigBefore = process.env.KUBECONFIG;
  const secretKey = randomBytes(32).toString('hex');
  let port: number;
  let storeUrl: string;
  let dropStore = async () => {};

  /** A control plane on the same store each time: a restart. */
  async function startCp(): Promise<RunningControlPlane> {
    const config = resolveControlPlaneConfig({
      REPLIX_BUNDLE_CACHE_DIR: process.env.REPLIX_BUNDLE_CACHE_DIR,
      REPLIX_DATA_DIR: dataDir,
      REPLIX_API_PORT: String(port),
      REPLIX_SECRET_KEY: secretKey,
      REPLIX_HEALTH_INTERVAL_MS: '500',
      REPLIX_RECONCILE_INTERVAL_MS: '200',
      DATABASE_URL: storeUrl,
      REPLIX_DRIVER: 'kubernetes',
      REPLIX_K8S_IMAGE: 'replix-runtime:test',
      REPLIX_K8S_REPLIX_BIN: REPLIX_BIN,
      REPLIX_K8S_ENDPOINT_HOSTS: JSON.stringify({
        'eu-west-1': '{database}.eu-west-1.db.test',
        'us-east-1': '{database}.us-east-1.db.test',
      }),
      REPLIX_K8S_ROUTE: 'ingress:test',
      REPLIX_K8S_ENDPOINT_SCHEME: 'http',
      REPLIX_K8S_ARTIFACT_URL: `http://127.0.0.1:${port}`,
    });
    return startControlPlane(config, {
      roles: ['api', 'reconciler', 'builder', 'health-monitor'],
      store: await openStore({ databaseUrl: storeUrl }),
      log: pino({ level: process.env.REPLIX_TEST_LOG_LEVEL ?? 'silent' }),
    });
  }

  const query = async () => {
    try {
      const response = await throughGateway(
        fake.gatewayUrl as string,
        `${endpointUrl}/query?q=${encodeURIComponent(QUERY)}`,
        { authorization: `Bearer ${apiKey}` },
        keepAlive,
      );
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    } catch (error) {
      return { status: 0, body: { error: String(error) } };
    }
  };

  beforeAll(async () => {
    // Builds run as Jobs mounting the artifacts claim: here, the control plane's data folder.
    fake = await startFakeKubernetes({
      runPods: true,
      probeIntervalMs: 100,
      claimDirs: { 'replix-system/replix-data': dataDir },
    });
    // loadFromDefault reads KUBECONFIG, as in a deployment outside the cluster.
    writeFileSync(join(dataDir, 'kubeconfig'), fake.kubeconfig);
    process.env.KUBECONFIG = join(dataDir, 'kubeconfig');
    source = await testMariaDb().createDatabase(SHOP);
    port = await freePort();
    const store = await testPostgres().createDatabase();
    storeUrl = store.url;
    dropStore = () => store.drop();
    await storeSecretForBuildJobs(fake, storeUrl, secretKey);
    await createOperatorNamespaces(fake.kubeconfig);
    cp = await startCp();
    seeded = await seedProvision(cp.context.db, cp.context.secrets, source.url);
    const row = await statusReached(cp.context.db, seeded.databaseId, 'running', 180_000);
    endpointUrl = row.endpoint_url as string;
    expect(endpointUrl).toMatch(/^http:\/\/replix-db-[a-z0-9-]+\.eu-west-1\.db\.test$/);
    apiKey = deriveApiKey(seeded.keySecret, await addApiKey(cp.context.db, seeded));
    await eventually(async () => (await query()).status === 200, 30_000, 'the first answer');
  });
  afterAll(async () => {
    await cp?.close();
    keepAlive.destroy();
    await fake?.close();
    await source?.drop();
    await dropStore();
    if (kubeconfigBefore === undefined) delete process.env.KUBECONFIG;
    else process.env.KUBECONFIG = kubeconfigBefore;
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers every query of a steady load through redeploy, resize and a resize to two replicas, on one URL', async () => {
    const db = cp.context.db;
    const answers: Promise<{ status: number; body: Record<string, unknown> }>[] = [];
    const timer = setInterval(() => answers.push(query()), LOAD_INTERVAL_MS);
    try {
      const actions: Array<[string, () => Promise<Record<string, string | number>>]> = [
        [
          'redeploy',
          async () => ({
            buildId: (await databaseRow(db, seeded.databaseId)).current_build_id as string,
          }),
        ],
        ['resize', async () => ({ instanceSize: 's' })],
        ['resize', async () => ({ replicas: 2 })],
      ];
      for (const [action, extra] of actions) {
        const [before] = await liveInstances(db, seeded.databaseId);
        await requestAction(db, seeded.databaseId, action, 'deploying', await extra());
        await eventually(
          async () => {
            const serving = (await liveInstances(db, seeded.databaseId)).find(
              (instance) => !instance.standby,
            );
            return serving && serving.id !== before?.id;
          },
          180_000,
          `the switch of ${action}`,
        );
        const row = await statusReached(db, seeded.databaseId, 'running', 180_000);
        expect(row.endpoint_url).toBe(endpointUrl);
      }
    } finally {
      clearInterval(timer);
    }
    const settled = await Promise.all(answers);
    const failed = settled.filter(
      (answer) =>
        answer.status !== 200 || JSON.stringify(answer.body.data) !== JSON.stringify(EXPECTED),
    );
    console.log(
      `kubernetes endpoint under ${1000 / LOAD_INTERVAL_MS} queries/s: ${settled.length} queries, ${failed.length} failed`,
    );
    expect(failed.slice(0, 3)).toEqual([]);
    expect(settled.length).toBeGreaterThan(20);
    // One instance left, with its two replicas: the previous ones' Deployments are gone.
    const instances = await liveInstances(db, seeded.databaseId);
    expect(instances).toHaveLength(1);
    const replicas = await cp.context.driver.replicas(instances[0]?.id as string);
    expect(replicas.map(({ ordinal, alive }) => ({ ordinal, alive }))).toEqual([
      { ordinal: 0, alive: true },
      { ordinal: 1, alive: true },
    ]);
    expect(new Set(replicas.map((replica) => replica.url)).size).toBe(2);
    // The builds ran as Jobs whose pods recorded them (`kubernetes.job`).
    const builds = await db
      .selectFrom('builds')
      .select(['status', 'compute_type'])
      .where('database_id', '=', seeded.databaseId)
      .execute();
    expect(builds.length).toBeGreaterThan(0);
    for (const build of builds) {
      expect(build).toEqual({ status: 'succeeded', compute_type: 'kubernetes.job' });
    }
    expect(
      fake.requests.some(
        (request) =>
          request.method === 'PATCH' &&
          request.path.startsWith('/apis/batch/v1/namespaces/replix-system/jobs/'),
      ),
    ).toBe(true);
  });

  it('keeps serving while the control plane is down, and adopts the instance when it is back', async () => {
    const [serving] = await liveInstances(cp.context.db, seeded.databaseId);
    await cp.close();
    // The cluster runs the instance and its route: no control plane is needed to answer.
    expect(await query()).toEqual({
      status: 200,
      body: expect.objectContaining({ data: EXPECTED }),
    });
    cp = await startCp();
    await statusReached(cp.context.db, seeded.databaseId, 'running', 60_000);
    expect(await query()).toEqual({
      status: 200,
      body: expect.objectContaining({ data: EXPECTED }),
    });
    const [after] = await liveInstances(cp.context.db, seeded.databaseId);
    expect(after?.id).toBe(serving?.id);
    expect(await cp.context.driver.isAlive(serving?.id as string)).toBe(true);
  });

  it('answers 503 with the envelope once terminated', async () => {
    const db = cp.context.db;
    const [serving] = await liveInstances(db, seeded.databaseId);
    await requestAction(db, seeded.databaseId, 'terminate', 'terminating');
    await statusReached(db, seeded.databaseId, 'terminated', 180_000);
    await eventually(
      async () => (await query()).status === 503,
      30_000,
      'the endpoint to answer 503',
    );
    expect(await query()).toEqual({
      status: 503,
      body: {
        error: {
          code: 'service_unavailable',
          message: 'The database is terminated: provision it again to serve queries.',
        },
      },
    });
    expect(await cp.context.driver.isAlive(serving?.id as string)).toBe(false);
  });
});

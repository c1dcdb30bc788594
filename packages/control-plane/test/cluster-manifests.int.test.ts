import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import { deriveApiKey } from '@replix/instance-protocol';
import { type FakeKubernetes, startFakeKubernetes } from '@replix/testkit';
import { testMariaDb, testPostgres } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type RenderedObject, renderKustomization } from '../../../tools/render-kustomization.ts';
import { KubernetesApi } from '../src/adapters/drivers/kubernetes/kubernetes-api.ts';
import { LABELS, labelValue } from '../src/adapters/drivers/kubernetes/kubernetes-names.ts';
import type { KubernetesObject } from '../src/adapters/drivers/kubernetes/kubernetes-object.ts';
import { type OpenStore, openStore } from '../src/adapters/store/open-store.ts';
import { SecretBox } from '../src/adapters/store/secret-box.ts';
import { artifactDirFor } from '../src/application/builder/artifact-paths.ts';
import { ROLE_NAMES } from '../src/domain/role-names.ts';
import { REPLIX_BIN, throughGateway } from './kubernetes-test-cluster.ts';
import { addApiKey, eventually, seedProvision, statusReached } from './reconciler-fixtures.ts';

// deploy/kubernetes applied to the fake API server with running pods: the four role
// Deployments start as the kubelet starts them, get ready through their own /ready probes, and
// provision a database whose endpoint answers through the gateway, its build run as a Job the
// builder applies from the base's own settings. What the fake cannot do is changed, and only
// that: no ServiceAccount, RBAC or PersistentVolumeClaim kinds (the kubelet binds the
// replix-data claim to a local folder, which the api, the reconciler and the build Jobs share;
// the namespaced RBAC is checked by tools/deploy-kubernetes.test.ts and the driver's tests),
// the image's entry point given as the container's command (and the Jobs' through
// REPLIX_K8S_REPLIX_BIN), the driver's settings pointed at the fake (its kubeconfig, the api
// Service's cluster IP, an Ingress class, plain HTTP), and no OIDC discovery (no token is
// verified here).

vi.setConfig({ testTimeout: 300_000, hookTimeout: 240_000 });

const BASE = fileURLToPath(new URL('../../../deploy/kubernetes', import.meta.url));
const NAMESPACE = 'replix-system';
const SHOP = `
  CREATE TABLE item (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL);
  INSERT INTO item VALUES (1, 'one'), (2, 'two');
`;

interface PodSpec {
  containers: Array<{
    command?: string[];
    env: Array<{ name: string; value?: string }>;
    volumeMounts: Array<{ name: string; mountPath: string }>;
  }>;
  volumes: Array<{ name: string; persistentVolumeClaim?: { claimName: string } }>;
}
const podOf = (deployment: RenderedObject) =>
  (deployment.spec as { template: { spec: PodSpec } }).template.spec;

describe('deploy/kubernetes on the fake API server with running pods', () => {
  // Not under /tmp: the pods mount an emptyDir there, and the kubelet rewrites paths under it.
  const outside = fileURLToPath(new URL('../../../test-output/', import.meta.url));
  mkdirSync(outside, { recursive: true });
  const dir = mkdtempSync(join(outside, 'replix-cluster-'));
  // The folder the replix-data claim stands for.
  const dataDir = join(dir, 'data');
  const secretKey = randomBytes(32).toString('hex');
  let fake: FakeKubernetes;
  let api: KubernetesApi;
  let store: OpenStore;
  const cleanup: Array<() => Promise<void>> = [];

  const apply = (object: RenderedObject) =>
    api.apply(object as unknown as KubernetesObject, 'operator');
  const readyReplicas = (name: string) =>
    (fake.object('Deployment', NAMESPACE, name)?.status as { readyReplicas?: number } | undefined)
      ?.readyReplicas ?? 0;

  beforeAll(async () => {
    fake = await startFakeKubernetes({
      runPods: true,
      probeIntervalMs: 200,
      claimDirs: { [`${NAMESPACE}/replix-data`]: dataDir },
    });
    cleanup.push(() => fake.close());
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, fake.kubeconfig);
    const config = new KubeConfig();
    config.loadFromString(fake.kubeconfig);
    api = new KubernetesApi(config);
    const database = await testPostgres().createDatabase();
    cleanup.push(() => database.drop());

    const objects = renderKustomization(BASE);
    const served = (kind: string) =>
      ['Namespace', 'ConfigMap', 'Service', 'Deployment'].includes(kind);
    for (const object of objects.filter((o) => o.kind === 'Namespace' || o.kind === 'Service'))
      await apply(object);
    const apiService = fake.object('Service', NAMESPACE, 'replix-api')?.spec as {
      clusterIP: string;
    };
    // The operator's Secret (docs/deploy/kubernetes.md, step 2).
    await apply({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'replix-secrets', namespace: NAMESPACE },
      stringData: { DATABASE_URL: database.url, REPLIX_SECRET_KEY: secretKey },
    } as RenderedObject);
    const settings: Record<string, Record<string, string>> = {
      'replix-config': {
        REPLIX_OIDC_JWKS_URL: 'http://127.0.0.1:9/jwks',
        REPLIX_LOG_LEVEL: 'warn',
        REPLIX_RECONCILE_INTERVAL_MS: '200',
        REPLIX_HEALTH_INTERVAL_MS: '500',
      },
      'replix-driver': {
        KUBECONFIG: kubeconfig,
        REPLIX_K8S_REPLIX_BIN: REPLIX_BIN,
        REPLIX_K8S_ENDPOINT_HOSTS: JSON.stringify({ 'eu-west-1': '{database}.eu-west-1.db.test' }),
        REPLIX_K8S_ROUTE: 'ingress:test',
        REPLIX_K8S_ENDPOINT_SCHEME: 'http',
        REPLIX_K8S_ARTIFACT_URL: `http://${apiService.clusterIP}:4000`,
      },
    };
    for (const object of objects.filter((o) => served(o.kind) && o.kind !== 'Namespace')) {
      if (object.kind === 'Service') continue;
      if (object.kind === 'ConfigMap') {
        const data = (object as RenderedObject & { data: Record<string, string> }).data;
        Object.assign(data, settings[object.metadata.name]);
      }
      if (object.kind === 'Deployment') {
        const pod = podOf(object);
        for (const container of pod.containers) container.command = ['node', REPLIX_BIN];
        // The fake serves no ServiceAccounts.
        delete (pod as { serviceAccountName?: string }).serviceAccountName;
      }
      await apply(object);
    }
    store = await openStore({ databaseUrl: database.url });
    cleanup.push(() => store.close());
  });

  afterAll(async () => {
    for (const step of cleanup.reverse()) await step().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs every role until its readiness probe passes', async () => {
    for (const role of ROLE_NAMES) {
      const name = `replix-${role}`;
      const wanted = (
        fake.object('Deployment', NAMESPACE, name)?.spec as { replicas?: number } | undefined
      )?.replicas;
      expect(wanted, name).toBe(role === 'api' ? 2 : 1);
      await eventually(async () => readyReplicas(name) === wanted, 120_000, `${name} ready`).catch(
        async (error: unknown) => {
          // What the pods said, to see why one is not ready.
          for (const pod of await api.list(
            'v1',
            'Pod',
            'app.kubernetes.io/name=replix',
            NAMESPACE,
          )) {
            console.log(pod.metadata.name, JSON.stringify(pod.status));
            console.log(await api.podLog(NAMESPACE, pod.metadata.name, { tailLines: 20 }));
          }
          throw error;
        },
      );
    }
  });

  it('provisions a database whose endpoint answers through the gateway', async () => {
    const source = await testMariaDb().createDatabase(SHOP);
    cleanup.push(() => source.drop());
    const seeded = await seedProvision(
      store.db,
      new SecretBox(Buffer.from(secretKey, 'hex')),
      source.url,
    );
    const row = await statusReached(store.db, seeded.databaseId, 'running', 180_000);
    expect(row.endpoint_url).toMatch(/^http:\/\/replix-db-[a-z0-9-]+\.eu-west-1\.db\.test$/);
    const apiKey = deriveApiKey(seeded.keySecret, await addApiKey(store.db, seeded));
    const answer = await eventually(
      async () => {
        const response = await throughGateway(
          fake.gatewayUrl as string,
          `${row.endpoint_url}/query?q=${encodeURIComponent('item { id name } ORDER BY id')}`,
          { authorization: `Bearer ${apiKey}` },
        );
        return response.status === 200 ? ((await response.json()) as { data: unknown }) : undefined;
      },
      60_000,
      'the first answer',
    );
    expect(answer.data).toEqual([
      { id: 1, name: 'one' },
      { id: 2, name: 'two' },
    ]);

    // The build ran as a Job in replix-system, not in the builder's process: the Job recorded
    // it, and wrote the artifact on the claim, where the api served it from.
    const build = await store.db
      .selectFrom('builds')
      .selectAll()
      .where('database_id', '=', seeded.databaseId)
      .executeTakeFirstOrThrow();
    expect(build).toMatchObject({ status: 'succeeded', compute_type: 'kubernetes.job' });
    expect(build.image_uri).toBe(pathToFileURL(artifactDirFor(dataDir, build.id)).href);
    const jobs = await api.list(
      'batch/v1',
      'Job',
      `${LABELS.buildId}=${labelValue(build.id)}`,
      NAMESPACE,
    );
    expect(jobs).toHaveLength(1);
    const [job] = jobs as [KubernetesObject & { spec: unknown; status: unknown }];
    expect(
      (job.status as { conditions?: Array<{ type: string; status: string }> }).conditions,
    ).toContainEqual(expect.objectContaining({ type: 'Complete', status: 'True' }));
    // It ran on its own build's credential, never the master key, which is gone with the build.
    expect(JSON.stringify(job)).not.toContain('REPLIX_SECRET_KEY');
    await eventually(
      async () => fake.object('Secret', NAMESPACE, `${job.metadata.name}-source`) === undefined,
      30_000,
      "the build credential's removal",
    );
    const jobPod = (job.spec as { template: { spec: PodSpec } }).template.spec;
    expect(jobPod.volumes.find((volume) => volume.name === 'data')?.persistentVolumeClaim).toEqual({
      claimName: 'replix-data',
    });
  });
});

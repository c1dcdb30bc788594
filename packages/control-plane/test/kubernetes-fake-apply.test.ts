import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  AppsV1Api,
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  type V1Deployment,
} from '@kubernetes/client-node';
import { type FakeKubernetes, startFakeKubernetes } from '@replix/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildJobManifest } from '../src/adapters/drivers/kubernetes/build-job-manifest.ts';
import { endpointManifests } from '../src/adapters/drivers/kubernetes/endpoint-manifests.ts';
import {
  type InstanceManifestInput,
  instanceManifests,
} from '../src/adapters/drivers/kubernetes/instance-manifests.ts';
import { LABELS, replicaObjectName } from '../src/adapters/drivers/kubernetes/kubernetes-names.ts';
import {
  type KubernetesObject,
  ownedBy,
} from '../src/adapters/drivers/kubernetes/kubernetes-object.ts';
import { sampleLaunch } from './fixtures/sample-launch.ts';

// The driver's real manifests, applied to the fake API server (testkit) the way the driver
// will apply them: server-side, as the `replix` field manager.

const NAMESPACE = 'replix-eu-west-1';
const MANAGER = 'replix';
const run = promisify(execFile);

const launch = () => sampleLaunch();

const instanceInput: InstanceManifestInput = {
  launch: launch(),
  accountId: 'ac_1',
  region: 'eu-west-1',
  replicas: 2,
  artifact: {
    kind: 'fetch',
    url: 'https://control.example.com/v1/internal/artifacts/bd_1',
    manifestSha256: 'f'.repeat(64),
    token: 'rxa_token',
  },
};
const instanceOptions = {
  image: 'registry.example.com/replix/runtime:1.0.0',
  replixBin: '/app/replix.js',
  namespacePattern: 'replix-{region}',
};
const endpointInput = {
  accountId: 'ac_1',
  databaseId: 'db_1',
  region: 'eu-west-1',
  servingInstanceId: 'in_1',
};
const endpointOptions = {
  namespacePattern: 'replix-{region}',
  hostPatterns: { 'eu-west-1': '{database}.eu-west-1.db.example.com' },
  route: { kind: 'httproute', gateway: { name: 'replix', namespace: 'replix-system' } },
} as const;
const buildJob = () =>
  buildJobManifest(
    { buildId: 'bd_1', attempt: 1, launchId: 'a1b2c3', databaseId: 'db_1', accountId: 'ac_1' },
    {
      image: instanceOptions.image,
      replixBin: instanceOptions.replixBin,
      namespace: NAMESPACE,
      storeSecretName: 'replix-secrets',
      artifactsClaim: 'replix-data',
      dataDir: '/var/lib/replix',
      deadlineSeconds: 1800,
    },
  );

let fake: FakeKubernetes;
let objects: KubernetesObjectApi;
let apps: AppsV1Api;

const apply = (object: KubernetesObject) =>
  objects.patch(
    object,
    undefined,
    undefined,
    MANAGER,
    false,
    PatchStrategy.ServerSideApply,
  ) as Promise<KubernetesObject>;

beforeEach(async () => {
  fake = await startFakeKubernetes({ readyDelayMs: 10 });
  const config = new KubeConfig();
  config.loadFromString(fake.kubeconfig);
  objects = KubernetesObjectApi.makeApiClient(config);
  apps = config.makeApiClient(AppsV1Api);
  const namespace = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } };
  await objects.patch(
    namespace,
    undefined,
    undefined,
    MANAGER,
    false,
    PatchStrategy.ServerSideApply,
  );
});

afterEach(async () => {
  await fake.close();
});

/** What a manifest sets, without the metadata the server adds. */
function applied(object: KubernetesObject) {
  const { metadata, status: _status, ...rest } = object;
  return {
    ...rest,
    metadata: {
      name: metadata.name,
      namespace: metadata.namespace,
      labels: metadata.labels,
      annotations: metadata.annotations,
      ownerReferences: metadata.ownerReferences,
    },
  };
}

describe('the Kubernetes driver manifests on the fake API server', () => {
  it('apply and read back as written: instance, endpoint (HTTPRoute and Ingress) and build Job', async () => {
    const manifests = [
      ...instanceManifests(instanceInput, instanceOptions),
      ...endpointManifests(endpointInput, endpointOptions),
      ...endpointManifests(endpointInput, {
        ...endpointOptions,
        route: { kind: 'ingress', ingressClassName: 'nginx' },
      }),
      buildJob(),
    ];
    expect(manifests.map((m) => m.kind)).toEqual([
      'Secret',
      'Secret',
      'Service',
      'Deployment',
      'Deployment',
      'Service',
      'HTTPRoute',
      'Service',
      'Ingress',
      'Job',
    ]);
    for (const manifest of manifests) {
      await apply(manifest);
      const read = (await objects.read(manifest)) as KubernetesObject;
      expect(JSON.parse(JSON.stringify(applied(read)))).toEqual(
        JSON.parse(JSON.stringify(applied(manifest))),
      );
      expect(read.metadata).toMatchObject({
        uid: expect.any(String),
        resourceVersion: expect.any(String),
      });
    }
    const patches = fake.requests.filter((request) => request.method === 'PATCH').slice(1);
    expect(patches.map((request) => [request.path, request.fieldManager])).toEqual([
      [`/api/v1/namespaces/${NAMESPACE}/secrets/${manifests[0]?.metadata.name}`, MANAGER],
      [`/api/v1/namespaces/${NAMESPACE}/secrets/${manifests[1]?.metadata.name}`, MANAGER],
      [`/api/v1/namespaces/${NAMESPACE}/services/${manifests[2]?.metadata.name}`, MANAGER],
      [`/apis/apps/v1/namespaces/${NAMESPACE}/deployments/${manifests[3]?.metadata.name}`, MANAGER],
      [`/apis/apps/v1/namespaces/${NAMESPACE}/deployments/${manifests[4]?.metadata.name}`, MANAGER],
      [`/api/v1/namespaces/${NAMESPACE}/services/${manifests[5]?.metadata.name}`, MANAGER],
      [
        `/apis/gateway.networking.k8s.io/v1/namespaces/${NAMESPACE}/httproutes/${manifests[6]?.metadata.name}`,
        MANAGER,
      ],
      [`/api/v1/namespaces/${NAMESPACE}/services/${manifests[7]?.metadata.name}`, MANAGER],
      [
        `/apis/networking.k8s.io/v1/namespaces/${NAMESPACE}/ingresses/${manifests[8]?.metadata.name}`,
        MANAGER,
      ],
      [`/apis/batch/v1/namespaces/${NAMESPACE}/jobs/${manifests[9]?.metadata.name}`, MANAGER],
    ]);
  });

  it('the instance Deployment becomes ready, and deleting it takes the Secrets it owns', async () => {
    const [secret, keys, , deployment] = instanceManifests(instanceInput, instanceOptions) as [
      KubernetesObject,
      KubernetesObject,
      KubernetesObject,
      KubernetesObject,
    ];
    await apply(secret);
    await apply(keys);
    const created = await apply(deployment);
    const owner = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: created.metadata.name,
      uid: (created.metadata as unknown as { uid: string }).uid,
    };
    await apply(ownedBy(secret, owner));
    await apply(ownedBy(keys, owner));

    const name = replicaObjectName('in_1', 0);
    let ready: V1Deployment;
    for (;;) {
      ready = await apps.readNamespacedDeployment({ name, namespace: NAMESPACE });
      if (ready.status?.readyReplicas === 1) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(ready.status?.observedGeneration).toBe(1);

    await apps.deleteNamespacedDeployment({
      name,
      namespace: NAMESPACE,
      propagationPolicy: 'Foreground',
    });
    expect(fake.object('Secret', NAMESPACE, secret.metadata.name)).toBeUndefined();
    expect(fake.object('Secret', NAMESPACE, keys.metadata.name)).toBeUndefined();
  });

  it('kubectl applies the instance Deployment server-side and lists it as the client does', async () => {
    const deployment = instanceManifests(instanceInput, instanceOptions)[3] as KubernetesObject;
    const dir = await mkdtemp(join(tmpdir(), 'replix-kubectl-'));
    try {
      await writeFile(join(dir, 'config'), fake.kubeconfig);
      await writeFile(join(dir, 'deployment.json'), JSON.stringify(deployment));
      const kubectl = async (...args: string[]) =>
        (
          await run('kubectl', ['--kubeconfig', join(dir, 'config'), ...args], {
            env: { ...process.env, HOME: dir },
          })
        ).stdout;
      // --validate=false: kubectl's schema validation needs OpenAPI documents the fake does not serve.
      await kubectl(
        'apply',
        '--server-side',
        '--validate=false',
        `--field-manager=${MANAGER}`,
        '-f',
        join(dir, 'deployment.json'),
      );
      const selector = `${LABELS.instanceId}=${deployment.metadata.labels[LABELS.instanceId]}`;
      const listed = JSON.parse(
        await kubectl('get', 'deploy', '-n', NAMESPACE, '-l', selector, '-o', 'json'),
      ) as { items: KubernetesObject[] };
      const viaClient = await apps.listNamespacedDeployment({
        namespace: NAMESPACE,
        labelSelector: selector,
      });
      expect(listed.items.map((item) => item.metadata.name)).toEqual([deployment.metadata.name]);
      expect(listed.items.map((item) => (item.metadata as { uid?: string }).uid)).toEqual(
        viaClient.items.map((item) => item.metadata?.uid),
      );
      expect(JSON.parse(JSON.stringify(applied(listed.items[0] as KubernetesObject)))).toEqual(
        JSON.parse(JSON.stringify(applied(deployment))),
      );
      // The driver re-applying what kubectl applied changes no field: same generation, one manager.
      const again = await apply(deployment);
      expect((again.metadata as { generation?: number }).generation).toBe(1);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

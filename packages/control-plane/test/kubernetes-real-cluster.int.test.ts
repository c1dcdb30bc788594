import { randomUUID } from 'node:crypto';
import { KubeConfig } from '@kubernetes/client-node';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubernetesApi } from '../src/adapters/drivers/kubernetes/kubernetes-api.ts';
import { KubernetesDriver } from '../src/adapters/drivers/kubernetes/kubernetes-driver.ts';
import { sampleLaunch } from './fixtures/sample-launch.ts';

/**
 * Opt-in: the Kubernetes driver's lifecycle against a real cluster. Nothing here runs unless
 * both are set:
 *
 *   KUBECONFIG=~/.kube/config \
 *   REPLIX_K8S_TEST_IMAGE=registry.example.com/replix/runtime-with-artifact:dev \
 *   REPLIX_K8S_TEST_SOURCE_URL='mysql://user:password@mariadb.default.svc:3306/shop' \
 *   npx vitest run packages/control-plane/test/kubernetes-real-cluster.int.test.ts
 *
 * REPLIX_K8S_TEST_IMAGE is the runtime image (Node 24, the `replix` CLI at
 * /app/packages/cli/bin/replix.js) with a build's artifact at /artifact (the `image` delivery);
 * REPLIX_K8S_TEST_SOURCE_URL the source that artifact was built for, as pods reach it. The
 * context's user needs the rules of KUBERNETES_PERMISSIONS. It makes the namespace
 * `replix-test-<random>` and deletes what it made; the namespace stays (delete it by hand). The
 * endpoint's host is not resolved: the test checks the cluster's objects, not HTTP through the
 * gateway, and reaches no cluster IP from outside the cluster.
 */
const image = process.env.REPLIX_K8S_TEST_IMAGE;
const sourceUrl = process.env.REPLIX_K8S_TEST_SOURCE_URL;
const enabled = Boolean(process.env.KUBECONFIG && image && sourceUrl);

describe.runIf(enabled)('the Kubernetes driver on a real cluster (opt-in)', () => {
  const region = `test-${randomUUID().slice(0, 8)}`;
  // Made in beforeAll: the describe body runs (to collect) even when the suite is off.
  let driver: KubernetesDriver;
  beforeAll(async () => {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromDefault();
    // The operator's step: the driver creates no namespace.
    await new KubernetesApi(kubeConfig).apply(
      {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: `replix-${region}`, labels: { 'app.kubernetes.io/part-of': 'replix' } },
      } as unknown as Parameters<KubernetesApi['apply']>[0],
      'replix-test',
    );
    driver = new KubernetesDriver({
      api: new KubernetesApi(kubeConfig),
      log: pino({ level: 'info' }),
      instances: {
        image: image as string,
        replixBin: '/app/packages/cli/bin/replix.js',
        namespacePattern: 'replix-{region}',
        imagePullPolicy: 'IfNotPresent',
      },
      endpoints: {
        hostPatterns: { [region]: '{database}.replix-test.invalid' },
        route: { kind: 'ingress', ingressClassName: 'replix-test' },
        scheme: 'https',
      },
      artifactDelivery: async () => ({ kind: 'image', imageUri: image as string }),
      placeOf: async () => ({ accountId: 'ac-test', region }),
      startTimeoutMs: 300_000,
    });
  });
  const launch = sampleLaunch('xs', {
    instanceId: randomUUID(),
    databaseId: randomUUID(),
    sourceUrl: sourceUrl as string,
    replicas: 2,
  });

  afterAll(async () => {
    if (!driver) return;
    await driver.stop(launch.instanceId);
    await driver.closeEndpoint(launch.databaseId);
  }, 300_000);

  it('starts two replicas, reports them, updates keys, routes, stops', async () => {
    const handle = await driver.start(launch);
    expect(handle.privateUrl).toMatch(/^http:\/\/[0-9a-f.:]+:8080$/);
    expect(await driver.start(launch)).toEqual(handle);
    expect(await driver.isAlive(launch.instanceId)).toBe(true);
    const replicas = await driver.replicas(launch.instanceId);
    expect(replicas.map((replica) => [replica.ordinal, replica.alive])).toEqual([
      [0, true],
      [1, true],
    ]);
    expect((await driver.readLogs(launch.instanceId, undefined)).lines.length).toBeGreaterThan(0);
    await driver.updateKeys(launch.instanceId, { keyIds: ['2222222222222222'], adminKeyIds: [] });

    const endpoint = await driver.openEndpoint(launch.databaseId, null);
    expect(endpoint).toEqual({ port: 443, url: expect.stringMatching(/^https:\/\/replix-db-/) });
    await driver.route(launch.databaseId, launch.instanceId);
    await driver.unroute(launch.databaseId, 'The database is paused: resume it to serve queries.');

    await driver.stop(launch.instanceId);
    expect(await driver.isAlive(launch.instanceId)).toBe(false);
    expect(await driver.replicas(launch.instanceId)).toEqual([]);
  }, 600_000);
});

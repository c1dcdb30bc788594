import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import { type FakeKubernetes, startFakeKubernetes } from '@replix/testkit';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubernetesApi } from '../src/drivers/kubernetes/kubernetes-api.ts';
import { KubernetesDriver } from '../src/drivers/kubernetes/kubernetes-driver.ts';
import { LOG_READ_PERMISSIONS } from '../src/drivers/kubernetes/permissions.ts';
import { grantsOfPermissions, grantsOfRequests } from './fixtures/kubernetes-grants.ts';
import { sampleLaunch } from './fixtures/sample-launch.ts';

// The api role serves `instance-logs` through the driver's readLogs, under a service account
// that may do only LOG_READ_PERMISSIONS (deploy/kubernetes/rbac.yaml): every call readLogs makes
// must be one of them.

const FAKE_INSTANCE = fileURLToPath(new URL('./fixtures/fake-instance.mjs', import.meta.url));

let fake: FakeKubernetes;
beforeAll(async () => {
  fake = await startFakeKubernetes({ runPods: true, probeIntervalMs: 50 });
});
afterAll(async () => {
  await fake?.close();
});

describe("the api role's Kubernetes permissions", () => {
  it('cover every call readLogs makes, first page and next', { timeout: 60_000 }, async () => {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(fake.kubeconfig);
    const driver = new KubernetesDriver({
      api: new KubernetesApi(kubeConfig),
      log: pino({ level: 'silent' }),
      instances: {
        image: 'replix-runtime:test',
        replixBin: FAKE_INSTANCE,
        namespacePattern: 'replix-{region}',
      },
      endpoints: {
        hostPatterns: { 'eu-west-1': '{database}.eu-west-1.db.test' },
        route: { kind: 'ingress', ingressClassName: 'test' },
        scheme: 'http',
      },
      artifactDelivery: async () => ({ kind: 'image', imageUri: 'replix-build:test' }),
      placeOf: async () => ({ accountId: 'ac-1', region: 'eu-west-1' }),
    });
    const launch = sampleLaunch('xs', {
      instanceId: `in-logs-${Date.now()}`,
      databaseId: 'db-logs',
      sourceUrl: 'mysql://reader:pw@db.internal:3306/shop',
    });
    await driver.start(launch);
    try {
      const from = fake.requests.length;
      const first = await driver.readLogs(launch.instanceId, undefined);
      expect(first.lines.length).toBeGreaterThan(0);
      await driver.readLogs(launch.instanceId, first.nextToken);
      const needed = grantsOfRequests(fake.requests.slice(from));
      // The test sees the log and event reads it is about.
      expect(needed).toContain('|pods/log|get');
      expect(needed).toContain('|events|list');
      const granted = grantsOfPermissions(LOG_READ_PERMISSIONS);
      expect([...needed].filter((grant) => !granted.has(grant))).toEqual([]);
    } finally {
      await driver.stop(launch.instanceId);
    }
  });
});

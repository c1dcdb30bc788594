import { type FakeKubernetes, startFakeKubernetes } from '@replix/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOG_READ_PERMISSIONS } from '../src/adapters/drivers/kubernetes/permissions.ts';
import { sampleLaunch } from './fixtures/sample-launch.ts';
import {
  apiCallsOf,
  callsNotGranted,
  createOperatorNamespaces,
  standInDriver,
} from './kubernetes-test-cluster.ts';

// The api role serves `instance-logs` through the driver's readLogs, under a service account
// that may do only LOG_READ_PERMISSIONS (deploy/kubernetes/rbac.yaml): every call readLogs makes
// must be one of them.

let fake: FakeKubernetes;
beforeAll(async () => {
  fake = await startFakeKubernetes({ runPods: true, probeIntervalMs: 50 });
  await createOperatorNamespaces(fake.kubeconfig);
});
afterAll(async () => {
  await fake?.close();
});

describe("the api role's Kubernetes permissions", () => {
  it('cover every call readLogs makes, first page and next', { timeout: 60_000 }, async () => {
    const driver = standInDriver(fake.kubeconfig);
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
      const needed = apiCallsOf(fake.requests.slice(from));
      // The test sees the log and event reads it is about.
      expect(needed).toContain('|pods/log|get');
      expect(needed).toContain('|events|list');
      expect(callsNotGranted(needed, LOG_READ_PERMISSIONS)).toEqual([]);
    } finally {
      await driver.stop(launch.instanceId);
    }
  });
});

import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { type FakeKubernetes, startFakeKubernetes } from '@replix/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InstanceLaunch } from '../src/adapters/drivers/instance-launch.ts';
import { InstanceStartError } from '../src/adapters/drivers/instance-start-error.ts';
import { KubernetesApi } from '../src/adapters/drivers/kubernetes/kubernetes-api.ts';
import type { KubernetesDriver } from '../src/adapters/drivers/kubernetes/kubernetes-driver.ts';
import {
  instanceKeysName,
  instanceObjectName,
  instanceSecretName,
  replicaObjectName,
} from '../src/adapters/drivers/kubernetes/kubernetes-names.ts';
import { replicaReplicationId } from '../src/domain/replication-id.ts';
import { sampleLaunch } from './fixtures/sample-launch.ts';
import {
  apiCallsOf,
  callsNotGranted,
  createOperatorNamespaces,
  killReplica,
  standInDriver,
} from './kubernetes-test-cluster.ts';

// The Kubernetes driver against the fake API server with running pods, with a stand-in
// instance program (fixtures/fake-instance.mjs) delivered as an image: what the driver applies,
// how, and what it makes of the cluster's answers. The driver contract
// (kubernetes-driver-contract.int.test.ts) runs the real instance.

const NAMESPACE = 'replix-eu-west-1';
const PASSWORD = 'Sup3r-s3cret-pw';
const run = promisify(execFile);

let fake: FakeKubernetes;
let counter = 0;
/** Requests before this index are the operator's set-up (the namespace), not the driver's. */
let firstDriverRequest = 0;
/** Ranges of requests the test made itself (kubectl), left out of the permission check. */
const testOwnRequests: Array<[number, number]> = [];

function makeDriver(options: { startTimeoutMs?: number } = {}): KubernetesDriver {
  return standInDriver(fake.kubeconfig, options);
}

function launchOf(overrides: Partial<InstanceLaunch> = {}): InstanceLaunch {
  counter += 1;
  return sampleLaunch('xs', {
    instanceId: `in-${counter}-${Date.now()}`,
    databaseId: `db-${counter}`,
    sourceUrl: `mysql://reader:${PASSWORD}@db.internal:3306/shop`,
    ...overrides,
  });
}

const text = async (url: string) => (await fetch(url)).text();

beforeAll(async () => {
  fake = await startFakeKubernetes({
    runPods: true,
    probeIntervalMs: 50,
    progressDeadlineMs: 3000,
  });
  await createOperatorNamespaces(fake.kubeconfig);
  firstDriverRequest = fake.requests.length;
});
afterAll(async () => {
  await fake?.close();
});

describe('the Kubernetes driver on the fake API server', () => {
  it('applies as the replix field manager with force, Secrets and Service owned by replica 0, one Deployment per replica', async () => {
    const driver = makeDriver();
    const launch = launchOf({ replicas: 2 });
    const handle = await driver.start(launch);
    expect(handle.privateUrl).toMatch(/^http:\/\/127\.\d+\.\d+\.\d+:8080$/);
    expect(handle.containerRef).toBe(
      `kubernetes:${NAMESPACE}/${instanceObjectName(launch.instanceId)}`,
    );
    const applies = fake.requests
      .slice(firstDriverRequest)
      .filter((request) => request.method === 'PATCH');
    expect(applies.length).toBeGreaterThan(0);
    for (const request of applies) {
      expect(request.query.force).toBe('true');
      expect(request.fieldManager).toMatch(/^replix(-endpoint-.+)?$/);
    }
    const r0 = fake.object('Deployment', NAMESPACE, replicaObjectName(launch.instanceId, 0));
    const r1 = fake.object('Deployment', NAMESPACE, replicaObjectName(launch.instanceId, 1));
    expect(r0 && r1).toBeTruthy();
    for (const [kind, name] of [
      ['Secret', instanceSecretName(launch.instanceId)],
      ['Secret', instanceKeysName(launch.instanceId)],
      ['Service', instanceObjectName(launch.instanceId)],
    ] as const) {
      expect(fake.object(kind, NAMESPACE, name)?.metadata.ownerReferences, name).toEqual([
        expect.objectContaining({
          kind: 'Deployment',
          name: r0?.metadata.name,
          uid: r0?.metadata.uid,
        }),
      ]);
    }
    // Each replica runs its own pod and follows the source under its own replication id.
    const replicas = await driver.replicas(launch.instanceId);
    expect(replicas.map(({ ordinal, alive }) => ({ ordinal, alive }))).toEqual([
      { ordinal: 0, alive: true },
      { ordinal: 1, alive: true },
    ]);
    expect(new Set(replicas.map((replica) => replica.url)).size).toBe(2);
    expect(
      await Promise.all(replicas.map((replica) => text(`${replica.url}/replication`))),
    ).toEqual([launch.replicationId, replicaReplicationId(launch.replicationId, 1)]);
    expect(await driver.isAlive(launch.instanceId)).toBe(true);
    expect((await fetch(`${handle.privateUrl}/health`)).status).toBe(200);

    // Fewer replicas: the extra Deployment goes (foreground: it stays, being deleted, until its
    // pod is gone).
    expect(await driver.start({ ...launch, replicas: 1 })).toEqual(handle);
    const removed = fake.object('Deployment', NAMESPACE, replicaObjectName(launch.instanceId, 1));
    expect(removed === undefined || removed.metadata.deletionTimestamp !== undefined).toBe(true);
    expect((await driver.replicas(launch.instanceId)).map((replica) => replica.ordinal)).toEqual([
      0,
    ]);
    await driver.stop(launch.instanceId);
  });

  it('lists a lost replica as not running, and start brings back only that one', async () => {
    const driver = makeDriver();
    const launch = launchOf({ replicas: 2 });
    const handle = await driver.start(launch);
    const [zero] = await driver.replicas(launch.instanceId);
    await killReplica(fake.kubeconfig, launch.instanceId, 1);
    expect(await driver.isAlive(launch.instanceId)).toBe(false);
    expect(
      (await driver.replicas(launch.instanceId)).map(({ ordinal, alive }) => ({ ordinal, alive })),
    ).toEqual([
      { ordinal: 0, alive: true },
      { ordinal: 1, alive: false },
    ]);
    expect(await driver.start(launch)).toEqual(handle);
    const after = await driver.replicas(launch.instanceId);
    expect(after.map((replica) => replica.alive)).toEqual([true, true]);
    // Replica 0 is the same pod: same address, never restarted.
    expect(after[0]?.url).toBe(zero?.url);
    expect(await text(`${after[1]?.url}/replication`)).toBe(
      replicaReplicationId(launch.replicationId, 1),
    );
    await driver.stop(launch.instanceId);
  });

  it('takes back a field another manager changed on the next start, without a new rollout when nothing changed', async () => {
    const driver = makeDriver();
    const launch = launchOf();
    await driver.start(launch);
    const name = replicaObjectName(launch.instanceId, 0);
    const before = fake.object('Deployment', NAMESPACE, name);
    // Someone edits the Deployment: another field manager, forced over ours.
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(fake.kubeconfig);
    const other = new KubernetesApi(kubeConfig);
    await other.apply(
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name, namespace: NAMESPACE, labels: {} },
        spec: { revisionHistoryLimit: 9 },
      } as never,
      'someone-else',
    );
    expect(
      (fake.object('Deployment', NAMESPACE, name)?.spec as { revisionHistoryLimit?: number })
        ?.revisionHistoryLimit,
    ).toBe(9);
    await driver.start(launch);
    const after = fake.object('Deployment', NAMESPACE, name);
    expect((after?.spec as { revisionHistoryLimit?: number })?.revisionHistoryLimit).toBe(1);
    const managers = ((after?.metadata.managedFields ?? []) as Array<{ manager: string }>).map(
      (entry) => entry.manager,
    );
    expect(managers).toContain('replix');
    // The same launch again changes nothing more: same generation.
    await driver.start(launch);
    expect(fake.object('Deployment', NAMESPACE, name)?.metadata.generation).toBe(
      after?.metadata.generation,
    );
    expect(after?.metadata.uid).toBe(before?.metadata.uid);
    await driver.stop(launch.instanceId);
  });

  it('updates the mounted keys file of running pods without restarting them', async () => {
    const driver = makeDriver();
    const launch = launchOf();
    const handle = await driver.start(launch);
    const pod = (await driver.replicas(launch.instanceId))[0];
    await driver.updateKeys(launch.instanceId, {
      keyIds: ['2222222222222222'],
      adminKeyIds: ['dddddddddddddddd'],
    });
    await expect
      .poll(() => text(`${pod?.url}/keys`), { timeout: 5000 })
      .toContain('2222222222222222');
    // The same pod (same address), and the keys Secret keeps its owner.
    expect((await driver.replicas(launch.instanceId))[0]?.url).toBe(pod?.url);
    expect(
      fake.object('Secret', NAMESPACE, instanceKeysName(launch.instanceId))?.metadata
        .ownerReferences,
    ).toHaveLength(1);
    expect(
      await driver.start({
        ...launch,
        keys: { keyIds: ['2222222222222222'], adminKeyIds: ['dddddddddddddddd'] },
      }),
    ).toEqual(handle);
    await driver.updateKeys('in-unknown', launch.keys);
    await driver.stop(launch.instanceId);
  });

  it('runs replicas that follow with a checkpoint bucket: replica 1 reaches replica 0 alone through the leader Service', async () => {
    const driver = standInDriver(fake.kubeconfig, {
      instances: {
        image: 'replix-runtime:test',
        replixBin: fileURLToPath(new URL('./fixtures/fake-instance.mjs', import.meta.url)),
        namespacePattern: 'replix-{region}',
        // The stand-in keeps no checkpoints: only the manifests and addresses are tested here.
        checkpoints: { bucket: 'replix-checkpoints', prefix: 'replix/' },
      },
    });
    const launch = launchOf({ replicas: 2 });
    const handle = await driver.start(launch);
    const leaderName = replicaObjectName(launch.instanceId, 0);
    const leader = fake.object('Service', NAMESPACE, leaderName);
    const r0 = fake.object('Deployment', NAMESPACE, leaderName);
    expect(leader?.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'Deployment', name: leaderName, uid: r0?.metadata.uid }),
    ]);
    const envOf = (ordinal: number) => {
      const deployment = fake.object(
        'Deployment',
        NAMESPACE,
        replicaObjectName(launch.instanceId, ordinal),
      ) as unknown as {
        spec: { template: { spec: { containers: Array<{ env: Array<Record<string, string>> }> } } };
      };
      const env = deployment.spec.template.spec.containers[0]?.env ?? [];
      return (name: string) => env.find((variable) => variable.name === name)?.value;
    };
    const clusterIp = (leader?.spec as { clusterIP?: string } | undefined)?.clusterIP;
    expect(envOf(0)('REPLIX_CHANGE_FEED')).toBe('1');
    expect(envOf(0)('REPLIX_FOLLOW_URL')).toBeUndefined();
    const followUrl = envOf(1)('REPLIX_FOLLOW_URL') as string;
    expect(followUrl).toBe(`http://${clusterIp}:8080`);
    expect(followUrl).not.toBe(handle.privateUrl);
    for (const ordinal of [0, 1]) {
      expect(envOf(ordinal)('REPLIX_CHECKPOINT_S3_PREFIX')).toBe(`replix/${launch.databaseId}/0/`);
    }
    // Every connection to the follow address reaches replica 0 (its stand-in answers its
    // replication id), none replica 1, while the instance Service spreads over both.
    const answers = new Set<string>();
    for (let i = 0; i < 8; i++) answers.add(await text(`${followUrl}/replication`));
    expect([...answers]).toEqual([launch.replicationId]);

    // Started again (adoption): the same address, nothing rolled out.
    const generation = r0?.metadata.generation;
    expect(await driver.start(launch)).toEqual(handle);
    expect(envOf(1)('REPLIX_FOLLOW_URL')).toBe(followUrl);
    expect(fake.object('Deployment', NAMESPACE, leaderName)?.metadata.generation).toBe(generation);

    // Down to one replica: nobody follows, the leader Service goes, replica 0 keeps its prefix.
    expect(await driver.start({ ...launch, replicas: 1 })).toEqual(handle);
    expect(fake.object('Service', NAMESPACE, leaderName)).toBeUndefined();
    expect(envOf(0)('REPLIX_CHANGE_FEED')).toBeUndefined();
    expect(envOf(0)('REPLIX_CHECKPOINT_S3_PREFIX')).toBe(`replix/${launch.databaseId}/0/`);

    await driver.stop(launch.instanceId);
  });

  it('stops with foreground deletion and waits until the pods are gone', async () => {
    const driver = makeDriver();
    const launch = launchOf({ replicas: 2 });
    await driver.start(launch);
    const from = fake.requests.length;
    await driver.stop(launch.instanceId);
    const deletes = fake.requests.slice(from).filter((request) => request.method === 'DELETE');
    // The Deployments, and whatever of the Secrets and Service garbage collection (they are
    // owned by replica 0) had not taken yet.
    expect(deletes.filter((request) => request.path.includes('/deployments/'))).toHaveLength(2);
    // The disruption budget of its two replicas went too.
    expect(deletes.some((request) => request.path.includes('/poddisruptionbudgets/'))).toBe(true);
    for (const request of deletes) expect(request.query.propagationPolicy).toBe('Foreground');
    for (const [kind, name] of [
      ['Deployment', replicaObjectName(launch.instanceId, 0)],
      ['Deployment', replicaObjectName(launch.instanceId, 1)],
      ['Secret', instanceSecretName(launch.instanceId)],
      ['Secret', instanceKeysName(launch.instanceId)],
      ['Service', instanceObjectName(launch.instanceId)],
      ['PodDisruptionBudget', instanceObjectName(launch.instanceId)],
    ] as const) {
      expect(fake.object(kind, NAMESPACE, name), name).toBeUndefined();
    }
    expect(await driver.isAlive(launch.instanceId)).toBe(false);
    expect(await driver.replicas(launch.instanceId)).toEqual([]);
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(fake.kubeconfig);
    const left = await new KubernetesApi(kubeConfig).list(
      'v1',
      'Pod',
      `replix.dev/instance-id=${launch.instanceId}`,
      NAMESPACE,
    );
    expect(left).toEqual([]);
  });

  it('fails a start whose container exits, quoting its log without the secrets', async () => {
    const driver = makeDriver();
    const launch = launchOf({ sourceUrl: `mysql://reader:${PASSWORD}@fail.internal:3306/shop` });
    const error = await driver.start(launch).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(InstanceStartError);
    const message = (error as Error).message;
    expect(message).toMatch(/^The container instance exited with code 1\. Last log lines:\n/);
    expect(message).toContain('cannot reach the source ***');
    expect(message).not.toContain(PASSWORD);
    expect(message).not.toContain('fail.internal');
    await driver.stop(launch.instanceId);
  });

  it('fails a start whose pods never become ready with the rollout condition', async () => {
    const driver = makeDriver();
    const launch = launchOf({ sourceUrl: 'mysql://reader:pw@unready.internal:3306/shop' });
    await expect(driver.start(launch)).rejects.toThrow(/ProgressDeadlineExceeded/);
    await driver.stop(launch.instanceId);
  });

  it('reads pod logs and infra events in pages', async () => {
    const driver = makeDriver();
    const launch = launchOf();
    const handle = await driver.start(launch);
    const first = await driver.readLogs(launch.instanceId, undefined);
    expect(first.lines.map((line) => line.message)).toContain('listening');
    // Events about the instance's objects come as infra lines.
    expect(first.lines.some((line) => /^(Normal|Warning) /.test(line.message))).toBe(true);
    await fetch(`${handle.privateUrl}/replication`);
    await expect
      .poll(
        async () =>
          (await driver.readLogs(launch.instanceId, first.nextToken)).lines.map(
            (line) => line.message,
          ),
        { timeout: 5000 },
      )
      .toEqual(['request /replication']);
    expect((await driver.readLogs('in-unknown', undefined)).lines).toEqual([]);
    await driver.stop(launch.instanceId);
  });

  it('kubectl reads what the driver applied as the client does', async () => {
    const driver = makeDriver();
    const launch = launchOf();
    await driver.start(launch);
    // An instance of one replica has no disruption budget.
    expect(
      fake.object('PodDisruptionBudget', NAMESPACE, instanceObjectName(launch.instanceId)),
    ).toBeUndefined();
    const dir = await mkdtemp(join(tmpdir(), 'replix-kubectl-'));
    const from = fake.requests.length;
    try {
      await writeFile(join(dir, 'config'), fake.kubeconfig);
      const { stdout } = await run(
        'kubectl',
        [
          '--kubeconfig',
          join(dir, 'config'),
          'get',
          'deploy,svc,secret',
          '-n',
          NAMESPACE,
          '-l',
          `replix.dev/instance-id=${launch.instanceId}`,
          '-o',
          'json',
        ],
        { env: { ...process.env, HOME: dir } },
      );
      testOwnRequests.push([from, fake.requests.length]);
      const items = (
        JSON.parse(stdout) as { items: Array<{ kind: string; metadata: { name: string } }> }
      ).items;
      expect(items.map((item) => `${item.kind}/${item.metadata.name}`).sort()).toEqual(
        [
          `Deployment/${replicaObjectName(launch.instanceId, 0)}`,
          `Secret/${instanceKeysName(launch.instanceId)}`,
          `Secret/${instanceSecretName(launch.instanceId)}`,
          `Service/${instanceObjectName(launch.instanceId)}`,
        ].sort(),
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
      await driver.stop(launch.instanceId);
    }
  });

  it('keeps a disruption budget of one eviction for two replicas, and drops it at one', async () => {
    const driver = makeDriver();
    const launch = launchOf({ replicas: 2 });
    await driver.start(launch);
    const name = instanceObjectName(launch.instanceId);
    try {
      const budget = fake.object('PodDisruptionBudget', NAMESPACE, name);
      expect(budget?.spec).toMatchObject({ maxUnavailable: 1 });
      // Owned by replica 0's Deployment, as the instance's other objects.
      const first = fake.object('Deployment', NAMESPACE, replicaObjectName(launch.instanceId, 0));
      expect(budget?.metadata.ownerReferences).toEqual([
        expect.objectContaining({ kind: 'Deployment', uid: first?.metadata.uid }),
      ]);
      await driver.start({ ...launch, replicas: 1 });
      expect(fake.object('PodDisruptionBudget', NAMESPACE, name)).toBeUndefined();
    } finally {
      await driver.stop(launch.instanceId);
    }
  });

  it('fails a start in a namespace the operator has not created, saying what to create', async () => {
    const driver = standInDriver(fake.kubeconfig, {
      endpoints: {
        hostPatterns: {
          'eu-west-1': '{database}.eu-west-1.db.test',
          'us-east-1': '{database}.us-east-1.db.test',
        },
        route: { kind: 'ingress', ingressClassName: 'test' },
        scheme: 'http',
      },
      placeOf: async () => ({ accountId: 'ac-1', region: 'us-east-1' }),
    });
    const launch = launchOf();
    await expect(driver.start(launch)).rejects.toThrow(
      /^The Kubernetes namespace "replix-us-east-1" is missing: create it with the Role and RoleBinding of deploy\/kubernetes/,
    );
    // Nothing was made anywhere, and no namespace.
    expect(fake.object('Namespace', undefined, 'replix-us-east-1')).toBeUndefined();
    expect(await driver.isAlive(launch.instanceId)).toBe(false);
  });

  // Last: every call this file's driver made.
  it('stays within KUBERNETES_PERMISSIONS (the RBAC rules the chart grants)', () => {
    const calls = apiCallsOf(
      fake.requests.filter(
        (_, index) =>
          index >= firstDriverRequest &&
          !testOwnRequests.some(([from, to]) => index >= from && index < to),
      ),
    );
    expect(calls.size).toBeGreaterThan(10);
    expect(callsNotGranted(calls)).toEqual([]);
  });
});

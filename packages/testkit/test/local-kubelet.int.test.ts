import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  AppsV1Api,
  CoreV1Api,
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  type V1Container,
  type V1Deployment,
  type V1Pod,
} from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeKubernetes, startFakeKubernetes } from '../src/index.ts';

const NS = 'apps';
const MANAGER = 'kubelet-test';

/**
 * A tiny HTTP server as a container: it listens on the address given as its argument (the
 * manifest says 0.0.0.0, the kubelet substitutes the pod IP), answers `/health` with the
 * status in $HEALTH_FILE (200 when absent), and anything else with what it sees.
 */
const SERVER = `
const http = require('node:http');
const fs = require('node:fs');
const read = (file) => { try { return fs.readFileSync(file, 'utf8'); } catch { return null; } };
const server = http.createServer((req, res) => {
  if (req.url === '/health') {
    res.statusCode = Number(read(process.env.HEALTH_FILE || '/nonexistent') || 200);
    res.end('health');
    return;
  }
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({
    pod: process.env.POD_NAME,
    podIP: process.env.POD_IP,
    namespace: process.env.POD_NAMESPACE,
    secret: process.env.SECRET_VALUE,
    version: process.env.VERSION,
    keys: read(process.env.KEYS_FILE || '/nonexistent'),
    path: req.url,
    host: req.headers.host,
  }));
});
server.listen(8080, process.argv[1], () => console.log('listening on ' + process.argv[1]));
process.on('SIGTERM', () => { console.log('got SIGTERM'); server.close(() => process.exit(0)); });
`;

function serverContainer(extra: Partial<V1Container> = {}): V1Container {
  return {
    name: 'web',
    image: 'node:24',
    command: ['node', '-e', SERVER, '0.0.0.0'],
    ports: [{ name: 'http', containerPort: 8080 }],
    env: [
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
      { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
      ...(extra.env ?? []),
    ],
    readinessProbe: { httpGet: { path: '/health', port: 'http' }, periodSeconds: 1 },
    lifecycle: { preStop: { sleep: { seconds: 1 } } },
    ...Object.fromEntries(Object.entries(extra).filter(([key]) => key !== 'env')),
  };
}

function deployment(
  name: string,
  replicas: number,
  containers: V1Container[],
  spec: Partial<NonNullable<V1Deployment['spec']>> = {},
  podSpec: Record<string, unknown> = {},
): V1Deployment {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: NS },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
      template: {
        metadata: { labels: { app: name } },
        spec: { terminationGracePeriodSeconds: 5, containers, ...podSpec },
      },
      ...spec,
    },
  };
}

function service(name: string, selector: Record<string, string>) {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: NS },
    spec: {
      type: 'ClusterIP',
      selector,
      ports: [{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }],
    },
  };
}

let fake: FakeKubernetes;
let objects: KubernetesObjectApi;
let apps: AppsV1Api;
let core: CoreV1Api;

async function apply<T extends { metadata?: object }>(object: T): Promise<T> {
  const spec = object as T & { metadata: { name: string } };
  return objects.patch(spec, undefined, undefined, MANAGER, true, PatchStrategy.ServerSideApply);
}

/** Retries `check` until it stops throwing (the test's timeout bounds it). */
async function eventually<T>(check: () => Promise<T> | T): Promise<T> {
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (error instanceof Error && error.name === 'AbortError') throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

async function podsOf(app: string): Promise<V1Pod[]> {
  const list = await core.listNamespacedPod({ namespace: NS, labelSelector: `app=${app}` });
  return list.items;
}

async function readyPods(app: string, count: number): Promise<V1Pod[]> {
  return eventually(async () => {
    const pods = (await podsOf(app)).filter(
      (pod) =>
        !pod.metadata?.deletionTimestamp &&
        pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
    );
    expect(pods).toHaveLength(count);
    return pods;
  });
}

/** GET over a fresh connection; rejects when the connection fails or closes without answer. */
function get(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const call = request(url, { headers, agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => {
        body += chunk;
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      response.on('error', reject);
    });
    call.on('error', reject);
    call.end();
  });
}

async function getJson(url: string, headers: Record<string, string> = {}) {
  const answer = await get(url, headers);
  expect(answer.status).toBe(200);
  return JSON.parse(answer.body) as Record<string, string | null>;
}

beforeEach(async () => {
  fake = await startFakeKubernetes({ runPods: true, probeIntervalMs: 50 });
  const config = new KubeConfig();
  config.loadFromString(fake.kubeconfig);
  objects = KubernetesObjectApi.makeApiClient(config);
  apps = config.makeApiClient(AppsV1Api);
  core = config.makeApiClient(CoreV1Api);
  await apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
});

afterEach(async () => {
  await fake.close();
});

describe('the local kubelet', () => {
  it('runs a Deployment’s pods with env from a Secret, the pod’s fields and a secret volume that updates in place', async () => {
    await apply({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'creds', namespace: NS },
      data: {
        password: Buffer.from('s3cret').toString('base64'),
        'keys.json': Buffer.from('{"version":1}').toString('base64'),
      },
    });
    await apply(
      deployment(
        'web',
        2,
        [
          serverContainer({
            env: [
              {
                name: 'SECRET_VALUE',
                valueFrom: { secretKeyRef: { name: 'creds', key: 'password' } },
              },
              { name: 'KEYS_FILE', value: '/etc/keys/keys.json' },
            ],
            volumeMounts: [{ name: 'keys', mountPath: '/etc/keys', readOnly: true }],
          }),
        ],
        {},
        { volumes: [{ name: 'keys', secret: { secretName: 'creds' } }] },
      ),
    );

    const pods = await readyPods('web', 2);
    const addresses = pods.map((pod) => pod.status?.podIP);
    expect(new Set(addresses).size).toBe(2);
    for (const pod of pods) {
      expect(pod.status?.podIP).toMatch(/^127\.77\.\d+\.\d+$/);
      const answer = await getJson(`http://${pod.status?.podIP}:8080/`);
      expect(answer).toMatchObject({
        pod: pod.metadata?.name,
        podIP: pod.status?.podIP,
        namespace: NS,
        secret: 's3cret',
        keys: '{"version":1}',
      });
      expect(pod.status?.containerStatuses?.[0]).toMatchObject({
        name: 'web',
        ready: true,
        restartCount: 0,
      });
    }
    const status = await eventually(async () => {
      const current = await apps.readNamespacedDeployment({ name: 'web', namespace: NS });
      expect(current.status).toMatchObject({ readyReplicas: 2, availableReplicas: 2 });
      return current.status;
    });
    expect(status).toMatchObject({ replicas: 2, updatedReplicas: 2, observedGeneration: 1 });
    expect(status?.conditions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'Available', status: 'True' }),
        expect.objectContaining({
          type: 'Progressing',
          status: 'True',
          reason: 'NewReplicaSetAvailable',
        }),
      ]),
    );

    // The Secret changes: the mounted file follows, the processes stay the same.
    await apply({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'creds', namespace: NS },
      data: {
        password: Buffer.from('s3cret').toString('base64'),
        'keys.json': Buffer.from('{"version":2}').toString('base64'),
      },
    });
    for (const address of addresses) {
      await eventually(async () => {
        expect((await getJson(`http://${address}:8080/`)).keys).toBe('{"version":2}');
      });
    }
    expect((await podsOf('web')).map((pod) => pod.metadata?.name).sort()).toEqual(
      pods.map((pod) => pod.metadata?.name).sort(),
    );
  });

  it('mounts a PersistentVolumeClaim as one folder every pod of the namespace shares, which outlives them', async () => {
    const job = (name: string, script: string, claimName = 'shared') => ({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name, namespace: NS },
      spec: {
        backoffLimit: 0,
        template: {
          spec: {
            restartPolicy: 'Never',
            containers: [
              {
                name: 'main',
                image: 'node:24',
                command: ['node', '-e', script],
                env: [{ name: 'DATA', value: '/var/lib/data' }],
                volumeMounts: [{ name: 'data', mountPath: '/var/lib/data' }],
              },
            ],
            volumes: [{ name: 'data', persistentVolumeClaim: { claimName } }],
          },
        },
      },
    });
    const completed = (name: string) =>
      eventually(async () => {
        const live = (await objects.read({
          apiVersion: 'batch/v1',
          kind: 'Job',
          metadata: { name, namespace: NS },
        })) as { status?: { conditions?: { type: string; status: string }[] } };
        expect(live.status?.conditions).toContainEqual(
          expect.objectContaining({ type: 'Complete', status: 'True' }),
        );
      });
    const fs = "const fs = require('node:fs'); const path = require('node:path');";
    await apply(
      job('writer', `${fs} fs.writeFileSync(path.join(process.env.DATA, 'a.txt'), 'from a');`),
    );
    await completed('writer');
    await apply(
      job(
        'reader',
        `${fs} const a = fs.readFileSync(path.join(process.env.DATA, 'a.txt'), 'utf8');
         fs.writeFileSync(path.join(process.env.DATA, 'b.txt'), a + ' and b');`,
      ),
    );
    await completed('reader');
    const shared = fake.claimDir(NS, 'shared');
    expect(readFileSync(join(shared, 'b.txt'), 'utf8')).toBe('from a and b');
    // Another claim is another folder.
    await apply(
      job(
        'elsewhere',
        `${fs} fs.writeFileSync(path.join(process.env.DATA, 'c.txt'), 'c');`,
        'other',
      ),
    );
    await completed('elsewhere');
    expect(existsSync(join(fake.claimDir(NS, 'other'), 'c.txt'))).toBe(true);
    expect(existsSync(join(shared, 'c.txt'))).toBe(false);
  });

  it('maps a claim named in claimDirs to the given folder', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'replix-claim-'));
    const mapped = await startFakeKubernetes({
      runPods: true,
      claimDirs: { [`${NS}/data`]: folder },
    });
    try {
      expect(mapped.claimDir(NS, 'data')).toBe(folder);
      expect(mapped.claimDir('other', 'data')).not.toBe(folder);
    } finally {
      await mapped.close();
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('leaves a pod whose Secret lacks a key waiting, with an event that says which', async () => {
    await apply({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'creds', namespace: NS },
      data: { other: Buffer.from('x').toString('base64') },
    });
    await apply(
      deployment('web', 1, [
        serverContainer({
          env: [
            {
              name: 'SECRET_VALUE',
              valueFrom: { secretKeyRef: { name: 'creds', key: 'password' } },
            },
          ],
        }),
      ]),
    );
    const pod = await eventually(async () => {
      const [pod] = await podsOf('web');
      expect(pod?.status?.containerStatuses?.[0]?.state?.waiting).toMatchObject({
        reason: 'CreateContainerConfigError',
        message: `couldn't find key password in Secret ${NS}/creds`,
      });
      return pod as V1Pod;
    });
    const events = await eventually(async () => {
      const list = await core.listNamespacedEvent({ namespace: NS });
      const failed = list.items.filter(
        (event) =>
          event.involvedObject.name === pod.metadata?.name &&
          event.reason === 'Failed' &&
          event.type === 'Warning',
      );
      expect(failed).not.toHaveLength(0);
      return failed;
    });
    expect(events[0]?.message).toContain("couldn't find key password in Secret");
    expect(pod.status?.conditions).toContainEqual(
      expect.objectContaining({ type: 'Ready', status: 'False' }),
    );
  });
});

describe('the local kube-proxy', () => {
  it('gives a Service a loopback clusterIP that spreads connections over ready pods and follows its selector', async () => {
    await apply(deployment('blue', 2, [serverContainer()]));
    await apply(deployment('green', 1, [serverContainer()]));
    const created = await apply(service('db', { app: 'blue' }));
    const clusterIP = (created as unknown as { spec: { clusterIP: string } }).spec.clusterIP;
    expect(clusterIP).toMatch(/^127\.88\.\d+\.\d+$/);
    const blue = (await readyPods('blue', 2)).map((pod) => pod.metadata?.name);
    const green = (await readyPods('green', 1)).map((pod) => pod.metadata?.name);

    const answered = await eventually(async () => {
      const seen: string[] = [];
      for (let i = 0; i < 4; i++) seen.push((await getJson(`http://${clusterIP}/`)).pod as string);
      return seen;
    });
    // Round-robin: consecutive connections alternate between the two pods.
    expect(new Set(answered)).toEqual(new Set(blue));
    expect(answered[0]).not.toBe(answered[1]);
    expect(answered[0]).toBe(answered[2]);

    // An open connection stays on its pod; new ones follow the new selector at once.
    const open = connect({ host: clusterIP, port: 80 });
    await new Promise((resolve) => open.once('connect', resolve));
    await apply(service('db', { app: 'green' }));
    expect((await getJson(`http://${clusterIP}/`)).pod).toBe(green[0]);
    const onOpen = await new Promise<string>((resolve) => {
      let text = '';
      open.setEncoding('utf8');
      open.on('data', (chunk) => {
        text += chunk;
      });
      open.on('end', () => resolve(text));
      open.end('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    });
    expect(blue).toContain(JSON.parse(onOpen.slice(onOpen.indexOf('{'))).pod);

    // No ready pod: the connection is closed.
    await apply(service('db', { app: 'nothing' }));
    await expect(get(`http://${clusterIP}/`)).rejects.toThrow();
  });
});

describe('pods', () => {
  it('runs init containers one after another before the containers, sharing an emptyDir', async () => {
    const step = (n: number): V1Container => ({
      name: `init-${n}`,
      image: 'busybox',
      command: [
        'node',
        '-e',
        `require('node:fs').appendFileSync('/work/order', '${n}'); console.log('init ${n} done')`,
      ],
      volumeMounts: [{ name: 'work', mountPath: '/work' }],
    });
    await apply(
      deployment(
        'web',
        1,
        [
          serverContainer({
            env: [{ name: 'KEYS_FILE', value: '/work/order' }],
            volumeMounts: [{ name: 'work', mountPath: '/work' }],
          }),
        ],
        {},
        { initContainers: [step(1), step(2)], volumes: [{ name: 'work', emptyDir: {} }] },
      ),
    );
    const [pod] = await readyPods('web', 1);
    expect((await getJson(`http://${pod?.status?.podIP}:8080/`)).keys).toBe('12');
    expect(pod?.status?.initContainerStatuses?.map((s) => s.state?.terminated?.exitCode)).toEqual([
      0, 0,
    ]);
    const name = pod?.metadata?.name as string;
    expect(await core.readNamespacedPodLog({ name, namespace: NS, container: 'init-2' })).toBe(
      'init 2 done\n',
    );
  });

  it('keeps a pod whose init container fails not ready, restarting it, its log readable', async () => {
    await apply(
      deployment(
        'web',
        1,
        [serverContainer()],
        {},
        {
          initContainers: [
            {
              name: 'migrate',
              image: 'busybox',
              command: ['node', '-e', "console.error('migration failed'); process.exit(3)"],
            },
          ],
        },
      ),
    );
    const pod = await eventually(async () => {
      const [pod] = await podsOf('web');
      const init = pod?.status?.initContainerStatuses?.[0];
      expect(init?.restartCount).toBeGreaterThanOrEqual(1);
      expect(init?.lastState?.terminated?.exitCode).toBe(3);
      return pod as V1Pod;
    });
    expect(pod.status?.phase).toBe('Pending');
    expect(pod.status?.conditions).toContainEqual(
      expect.objectContaining({ type: 'Initialized', status: 'False' }),
    );
    expect(pod.status?.containerStatuses?.[0]?.state?.waiting?.reason).toBe('PodInitializing');
    const log = await core.readNamespacedPodLog({
      name: pod.metadata?.name as string,
      namespace: NS,
      container: 'migrate',
    });
    expect(log).toContain('migration failed\n');
  });

  it('restarts a container that exits, counting restarts', async () => {
    await apply(
      deployment('crashy', 1, [
        {
          name: 'main',
          image: 'x',
          command: ['node', '-e', "console.log('started'); process.exit(1)"],
        },
      ]),
    );
    const pod = await eventually(async () => {
      const [pod] = await podsOf('crashy');
      expect(pod?.status?.containerStatuses?.[0]?.restartCount).toBeGreaterThanOrEqual(2);
      return pod as V1Pod;
    });
    expect(pod.status?.containerStatuses?.[0]?.lastState?.terminated?.exitCode).toBe(1);
    const log = await core.readNamespacedPodLog({
      name: pod.metadata?.name as string,
      namespace: NS,
    });
    expect(log.split('\n').filter((line) => line === 'started').length).toBeGreaterThanOrEqual(2);
  });

  it('restarts a container whose liveness probe keeps failing', async () => {
    await apply(
      deployment('web', 1, [
        serverContainer({
          // Nothing listens on 9999: after periodSeconds × failureThreshold the kubelet kills it.
          livenessProbe: { tcpSocket: { port: 9999 }, periodSeconds: 1, failureThreshold: 1 },
        }),
      ]),
    );
    const [pod] = await eventually(async () => {
      const pods = await podsOf('web');
      expect(pods[0]?.status?.containerStatuses?.[0]?.restartCount).toBeGreaterThanOrEqual(1);
      return pods;
    });
    const events = (await core.listNamespacedEvent({ namespace: NS })).items.filter(
      (event) => event.involvedObject.name === pod?.metadata?.name,
    );
    expect(events).toContainEqual(
      expect.objectContaining({
        reason: 'Unhealthy',
        message: 'Liveness probe failed',
        type: 'Warning',
      }),
    );
  });

  it('waits for a secret volume’s Secret, then starts', async () => {
    await apply(
      deployment(
        'web',
        1,
        [
          serverContainer({
            env: [{ name: 'KEYS_FILE', value: '/keys/k' }],
            volumeMounts: [{ name: 'keys', mountPath: '/keys' }],
          }),
        ],
        {},
        { volumes: [{ name: 'keys', secret: { secretName: 'later' } }] },
      ),
    );
    await eventually(async () => {
      const events = (await core.listNamespacedEvent({ namespace: NS })).items;
      expect(events).toContainEqual(
        expect.objectContaining({
          reason: 'FailedMount',
          message: 'MountVolume.SetUp failed for volume "keys" : secret "later" not found',
        }),
      );
    });
    expect((await podsOf('web'))[0]?.status?.phase).toBe('Pending');
    await apply({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'later', namespace: NS },
      stringData: { k: 'here' },
    });
    const [pod] = await readyPods('web', 1);
    expect((await getJson(`http://${pod?.status?.podIP}:8080/`)).keys).toBe('here');
  });

  it('serves logs with timestamps, tailLines and sinceTime', async () => {
    await apply(
      deployment('talker', 1, [
        {
          name: 'main',
          image: 'x',
          command: [
            'node',
            '-e',
            "console.log('one'); console.error('two'); setTimeout(() => console.log('three'), 300); setInterval(() => {}, 1000)",
          ],
        },
      ]),
    );
    const [pod] = await eventually(async () => {
      const pods = await podsOf('talker');
      const name = pods[0]?.metadata?.name as string;
      expect(await core.readNamespacedPodLog({ name, namespace: NS })).toBe('one\ntwo\nthree\n');
      return pods;
    });
    const name = pod?.metadata?.name as string;
    const stamped = await core.readNamespacedPodLog({ name, namespace: NS, timestamps: true });
    const lines = stamped.trim().split('\n');
    expect(lines).toHaveLength(3);
    for (const line of lines) expect(line).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z (one|two|three)$/);
    expect(await core.readNamespacedPodLog({ name, namespace: NS, tailLines: 1 })).toBe('three\n');
    const third = (lines[2] as string).split(' ')[0] as string;
    const since = await get(
      `${fake.url}/api/v1/namespaces/${NS}/pods/${name}/log?sinceTime=${encodeURIComponent(third)}`,
    );
    expect(since.body).toBe('three\n');
    const wrong = await get(`${fake.url}/api/v1/namespaces/${NS}/pods/${name}/log?container=nope`);
    expect(wrong.status).toBe(400);
  });

  it('runs a Job’s pod to completion', async () => {
    await apply({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'build', namespace: NS },
      spec: {
        backoffLimit: 0,
        template: {
          metadata: { labels: { app: 'build' } },
          spec: {
            restartPolicy: 'Never',
            containers: [
              { name: 'build', image: 'x', command: ['node', '-e', "console.log('built')"] },
            ],
          },
        },
      },
    });
    const job = await eventually(async () => {
      const job = await objects.read({
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name: 'build', namespace: NS },
      });
      expect((job as { status?: { succeeded?: number } }).status?.succeeded).toBe(1);
      return job as { status: { conditions: { type: string; status: string }[] } };
    });
    expect(job.status.conditions).toContainEqual(
      expect.objectContaining({ type: 'Complete', status: 'True' }),
    );
    const [pod] = await podsOf('build');
    expect(pod?.status?.phase).toBe('Succeeded');
    expect(
      await core.readNamespacedPodLog({ name: pod?.metadata?.name as string, namespace: NS }),
    ).toBe('built\n');
  });
});

describe('jobs', () => {
  const job = (name: string, spec: object, script: string) => ({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace: NS },
    spec: {
      backoffLimit: 0,
      ...spec,
      template: {
        metadata: { labels: { app: name } },
        spec: {
          restartPolicy: 'Never',
          terminationGracePeriodSeconds: 1,
          containers: [{ name: 'main', image: 'x', command: ['node', '-e', script] }],
        },
      },
    },
  });
  const readJob = (name: string) =>
    objects.read({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name, namespace: NS },
    }) as Promise<{
      status?: { conditions?: { type: string; reason?: string }[]; failed?: number };
    }>;

  it('fails a Job that runs past activeDeadlineSeconds, stopping its pod', async () => {
    await apply(job('slow', { activeDeadlineSeconds: 1 }, 'setInterval(() => {}, 1000)'));
    const status = await eventually(async () => {
      const { status } = await readJob('slow');
      expect(status?.conditions).toContainEqual(
        expect.objectContaining({ type: 'Failed', reason: 'DeadlineExceeded' }),
      );
      return status;
    });
    expect(status?.conditions?.some((c) => c.type === 'Complete')).toBe(false);
    await eventually(async () => expect(await podsOf('slow')).toEqual([]));
  });

  it('deletes a finished Job after ttlSecondsAfterFinished', async () => {
    await apply(job('quick', { ttlSecondsAfterFinished: 0 }, "console.log('done')"));
    await eventually(async () => {
      const list = await objects.list('batch/v1', 'Job', NS);
      expect(list.items.map((item) => item.metadata?.name)).not.toContain('quick');
    });
  });
});

describe('deployments', () => {
  it('rolls a changed template out with a ready pod behind the Service at every moment', async () => {
    const version = (v: string) =>
      deployment('web', 1, [serverContainer({ env: [{ name: 'VERSION', value: v }] })]);
    await apply(version('1'));
    const created = await apply(service('web', { app: 'web' }));
    const clusterIP = (created as unknown as { spec: { clusterIP: string } }).spec.clusterIP;
    const [first] = await readyPods('web', 1);
    await eventually(async () => expect((await getJson(`http://${clusterIP}/`)).version).toBe('1'));

    await apply(version('2'));
    const versions: string[] = [];
    const failures: unknown[] = [];
    for (;;) {
      try {
        versions.push((await getJson(`http://${clusterIP}/`)).version as string);
      } catch (error) {
        failures.push(error);
      }
      const pods = await podsOf('web');
      if (versions.at(-1) === '2' && pods.length === 1) break;
    }
    expect(failures).toEqual([]);
    expect(versions[0]).toBe('1');
    const [second] = await readyPods('web', 1);
    expect(second?.metadata?.name).not.toBe(first?.metadata?.name);
    const status = await eventually(async () => {
      const current = await apps.readNamespacedDeployment({ name: 'web', namespace: NS });
      expect(current.status?.conditions).toContainEqual(
        expect.objectContaining({ type: 'Progressing', reason: 'NewReplicaSetAvailable' }),
      );
      return current.status;
    });
    expect(status).toMatchObject({
      observedGeneration: 2,
      replicas: 1,
      updatedReplicas: 1,
      readyReplicas: 1,
    });
  });

  it('recreates: the old pods are gone before a pod of the new template starts', async () => {
    const version = (v: string) =>
      deployment('web', 2, [serverContainer({ env: [{ name: 'VERSION', value: v }] })], {
        strategy: { type: 'Recreate' },
      });
    await apply(version('1'));
    const before = (await readyPods('web', 2)).map((pod) => pod.metadata?.name);
    await apply(version('2'));
    const snapshots: V1Pod[][] = [];
    const after = await eventually(async () => {
      const pods = await podsOf('web');
      snapshots.push(pods);
      const ready = pods.filter((pod) =>
        pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
      );
      expect(ready).toHaveLength(2);
      expect(ready.every((pod) => !before.includes(pod.metadata?.name))).toBe(true);
      return ready;
    });
    for (const pods of snapshots) {
      const old = pods.filter((pod) => before.includes(pod.metadata?.name));
      if (old.length > 0)
        expect(pods.filter((pod) => !before.includes(pod.metadata?.name))).toEqual([]);
    }
    for (const pod of after)
      expect((await getJson(`http://${pod.status?.podIP}:8080/`)).version).toBe('2');
  });

  it('reports ProgressDeadlineExceeded when pods never get ready', async () => {
    await fake.close();
    fake = await startFakeKubernetes({
      runPods: true,
      probeIntervalMs: 50,
      progressDeadlineMs: 500,
    });
    const config = new KubeConfig();
    config.loadFromString(fake.kubeconfig);
    objects = KubernetesObjectApi.makeApiClient(config);
    apps = config.makeApiClient(AppsV1Api);
    await apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    await apply(
      deployment('web', 1, [
        serverContainer({
          // Nothing listens there: the pod never gets ready.
          readinessProbe: { httpGet: { path: '/health', port: 9999 } },
        }),
      ]),
    );
    const status = await eventually(async () => {
      const current = await apps.readNamespacedDeployment({ name: 'web', namespace: NS });
      expect(current.status?.conditions).toContainEqual(
        expect.objectContaining({
          type: 'Progressing',
          status: 'False',
          reason: 'ProgressDeadlineExceeded',
        }),
      );
      return current.status;
    });
    expect(status?.readyReplicas).toBeUndefined();
    expect(status?.conditions).toContainEqual(
      expect.objectContaining({ type: 'Available', status: 'False' }),
    );
  });

  it('deletes in the foreground only once the pods’ processes are gone', async () => {
    await apply(deployment('web', 2, [serverContainer()]));
    const pods = await readyPods('web', 2);
    const pids = pods.map((pod) =>
      Number(pod.status?.containerStatuses?.[0]?.containerID?.replace('local://', '')),
    );
    for (const pid of pids) expect(() => process.kill(pid, 0)).not.toThrow();
    const created = await apply(service('web', { app: 'web' }));
    const clusterIP = (created as unknown as { spec: { clusterIP: string } }).spec.clusterIP;
    await eventually(async () => expect((await getJson(`http://${clusterIP}/`)).pod).toBeTruthy());

    await apps.deleteNamespacedDeployment({
      name: 'web',
      namespace: NS,
      body: { propagationPolicy: 'Foreground' },
    });
    // At once: the Deployment waits with its finalizer, the pods terminate, the Service has
    // no endpoint left (the preStop sleep keeps the processes alive meanwhile).
    const waiting = await apps.readNamespacedDeployment({ name: 'web', namespace: NS });
    expect(waiting.metadata?.deletionTimestamp).toBeDefined();
    expect(waiting.metadata?.finalizers).toEqual(['foregroundDeletion']);
    await expect(get(`http://${clusterIP}/`)).rejects.toThrow();
    const terminating = await podsOf('web');
    expect(terminating.every((pod) => pod.metadata?.deletionTimestamp)).toBe(true);

    await eventually(async () => {
      const list = await apps.listNamespacedDeployment({ namespace: NS });
      expect(list.items).toHaveLength(0);
    });
    for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow();
    expect(await podsOf('web')).toEqual([]);
  });

  it('replaces a deleted pod, killing a process that ignores SIGTERM after its grace period', async () => {
    await apply(
      deployment(
        'stubborn',
        1,
        [
          {
            name: 'main',
            image: 'x',
            command: [
              'node',
              '-e',
              "process.on('SIGTERM', () => console.log('ignoring SIGTERM')); console.log('up'); setInterval(() => {}, 1000)",
            ],
          },
        ],
        {},
        { terminationGracePeriodSeconds: 3 },
      ),
    );
    const [pod] = await eventually(async () => {
      const pods = await podsOf('stubborn');
      expect(pods[0]?.status?.containerStatuses?.[0]?.state?.running).toBeDefined();
      return pods;
    });
    const name = pod?.metadata?.name as string;
    const pid = Number(pod?.status?.containerStatuses?.[0]?.containerID?.replace('local://', ''));
    await eventually(async () =>
      expect(await core.readNamespacedPodLog({ name, namespace: NS })).toBe('up\n'),
    );
    await core.deleteNamespacedPod({ name, namespace: NS });
    const marked = await core.readNamespacedPod({ name, namespace: NS });
    expect(marked.metadata?.deletionTimestamp).toBeDefined();
    expect(marked.metadata?.deletionGracePeriodSeconds).toBe(3);
    await eventually(async () =>
      expect(await core.readNamespacedPodLog({ name, namespace: NS })).toBe(
        'up\nignoring SIGTERM\n',
      ),
    );
    // The process outlives SIGTERM until the grace period ends; then the pod goes.
    expect(() => process.kill(pid, 0)).not.toThrow();
    const replacement = await eventually(async () => {
      const pods = await podsOf('stubborn');
      expect(pods.map((p) => p.metadata?.name)).not.toContain(name);
      expect(pods).toHaveLength(1);
      return pods[0];
    });
    expect(() => process.kill(pid, 0)).toThrow();
    expect(replacement?.metadata?.name).toMatch(/^stubborn-[0-9a-f]{10}-[a-z0-9]{5}$/);

    const events = (await core.listNamespacedEvent({ namespace: NS })).items;
    const about = (pod: string, reason: string) =>
      events.filter((e) => e.involvedObject.name === pod && e.reason === reason);
    expect(about(name, 'Killing')[0]?.message).toBe('Stopping container main');
    expect(about(name, 'Started')).toHaveLength(1);
    expect(about('stubborn', 'ScalingReplicaSet').length).toBeGreaterThanOrEqual(1);
  });

  it('kills every process it started when it closes, pods in their grace period too', async () => {
    const stubborn =
      "process.on('SIGTERM', () => console.log('ignoring SIGTERM')); console.log('handler set'); setInterval(() => {}, 1000)";
    await apply(deployment('web', 1, [serverContainer({ lifecycle: {} })]));
    // Longer than the test's timeout: close() must not wait for it.
    await apply(
      deployment(
        'stubborn',
        1,
        [{ name: 'main', image: 'x', command: ['node', '-e', stubborn] }],
        {},
        {
          terminationGracePeriodSeconds: 120,
        },
      ),
    );
    const [pod] = await readyPods('web', 1);
    const [stuck] = await readyPods('stubborn', 1);
    const pidOf = (p: V1Pod | undefined) =>
      Number(p?.status?.containerStatuses?.[0]?.containerID?.replace('local://', ''));
    const stuckLog = () =>
      core.readNamespacedPodLog({ name: stuck?.metadata?.name as string, namespace: NS });
    // Ready means started, not yet past its first line: a SIGTERM before the handler is set
    // would end it, and it would never say it ignores one.
    await eventually(async () => expect(await stuckLog()).toContain('handler set'));
    await core.deleteNamespacedPod({ name: stuck?.metadata?.name as string, namespace: NS });
    await eventually(async () => expect(await stuckLog()).toContain('ignoring SIGTERM'));
    for (const p of [pod, stuck]) expect(() => process.kill(pidOf(p), 0)).not.toThrow();
    await fake.close();
    for (const p of [pod, stuck]) expect(() => process.kill(pidOf(p), 0)).toThrow();
    fake = await startFakeKubernetes();
  });
});

describe('the local gateway', () => {
  it('routes by host to the Services of HTTPRoutes and Ingresses', async () => {
    await apply(deployment('blue', 1, [serverContainer()]));
    await apply(deployment('green', 1, [serverContainer()]));
    await apply(service('blue', { app: 'blue' }));
    await apply(service('green', { app: 'green' }));
    await apply(service('empty', { app: 'nothing' }));
    await apply({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: { name: 'blue', namespace: NS },
      spec: {
        parentRefs: [{ name: 'gateway', namespace: 'gateways' }],
        hostnames: ['blue.db.example.test'],
        rules: [{ backendRefs: [{ name: 'blue', port: 80 }] }],
      },
    });
    await apply({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name: 'green', namespace: NS },
      spec: {
        ingressClassName: 'nginx',
        rules: [
          {
            host: 'green.db.example.test',
            http: {
              paths: [
                {
                  path: '/',
                  pathType: 'Prefix',
                  backend: { service: { name: 'green', port: { name: 'http' } } },
                },
              ],
            },
          },
          {
            host: 'empty.db.example.test',
            http: {
              paths: [
                {
                  path: '/',
                  pathType: 'Prefix',
                  backend: { service: { name: 'empty', port: { number: 80 } } },
                },
              ],
            },
          },
        ],
      },
    });
    const [blue] = await readyPods('blue', 1);
    const [green] = await readyPods('green', 1);
    const gateway = fake.gatewayUrl as string;
    expect(gateway).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    const viaBlue = await getJson(`${gateway}/v1/query?x=1`, { host: 'blue.db.example.test' });
    expect(viaBlue).toMatchObject({
      pod: blue?.metadata?.name,
      path: '/v1/query?x=1',
      host: 'blue.db.example.test',
    });
    const viaGreen = await getJson(`${gateway}/`, { host: 'GREEN.db.example.test:443' });
    expect(viaGreen.pod).toBe(green?.metadata?.name);
    expect((await get(`${gateway}/`, { host: 'other.example.test' })).status).toBe(404);
    expect((await get(`${gateway}/`, { host: 'empty.db.example.test' })).status).toBe(503);
  });
});

describe('hostile manifests', () => {
  it('skip what cannot work and keep the rest running', async () => {
    await apply(
      deployment('web', 1, [
        serverContainer({
          ports: [
            { name: 'http', containerPort: 8080 },
            { name: 'bogus', containerPort: 70_000 },
          ],
        }),
      ]),
    );
    await apply(
      deployment('never', 1, [
        serverContainer({
          readinessProbe: { httpGet: { path: '/with space', port: 99_999 }, timeoutSeconds: -1 },
        }),
      ]),
    );
    const created = await apply({
      ...service('web', { app: 'web' }),
      spec: {
        selector: { app: 'web' },
        ports: [
          { name: 'bad', port: 70_000, targetPort: 1 },
          { name: 'http', port: 80, targetPort: 'http' },
        ],
      },
    });
    const clusterIP = (created as unknown as { spec: { clusterIP: string } }).spec.clusterIP;
    const [pod] = await readyPods('web', 1);
    await eventually(async () =>
      expect((await getJson(`http://${clusterIP}/`)).pod).toBe(pod?.metadata?.name),
    );
    const [never] = await podsOf('never');
    expect(never?.status?.conditions).toContainEqual(
      expect.objectContaining({ type: 'Ready', status: 'False' }),
    );

    // A request target that is not a path: 400 from the gateway, which keeps serving.
    const gateway = new URL(fake.gatewayUrl as string);
    const answer = await new Promise<string>((resolve) => {
      const socket = connect({ host: gateway.hostname, port: Number(gateway.port) });
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk) => {
        text += chunk;
      });
      socket.on('end', () => resolve(text));
      socket.end('GET http://[bad HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    });
    expect(answer).toMatch(/^HTTP\/1\.1 (400)/);
    expect((await get(`${fake.gatewayUrl}/`, { host: 'nothing.test' })).status).toBe(404);
  });
});

const run = promisify(execFile);
const kubectlMissing = await run('kubectl', ['version', '--client']).then(
  () => undefined,
  () => 'kubectl is not installed (apt-get install -y kubectl)',
);

describe.skipIf(kubectlMissing !== undefined)('kubectl against the local kubelet', () => {
  it('lists the running pods as the client does', async () => {
    await apply(deployment('web', 1, [serverContainer()]));
    const [pod] = await readyPods('web', 1);
    const dir = await mkdtemp(join(tmpdir(), 'replix-kubectl-'));
    try {
      await writeFile(join(dir, 'config'), fake.kubeconfig);
      const { stdout } = await run(
        'kubectl',
        ['--kubeconfig', join(dir, 'config'), 'get', 'pods', '-n', NS, '-o', 'json'],
        { env: { ...process.env, HOME: dir } },
      );
      const listed = JSON.parse(stdout) as { items: V1Pod[] };
      expect(listed.items.map((item) => item.metadata?.name)).toEqual([pod?.metadata?.name]);
      expect(listed.items[0]?.status).toMatchObject({
        phase: 'Running',
        podIP: pod?.status?.podIP,
        conditions: expect.arrayContaining([
          expect.objectContaining({ type: 'Ready', status: 'True' }),
        ]),
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

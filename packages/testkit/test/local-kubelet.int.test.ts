import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

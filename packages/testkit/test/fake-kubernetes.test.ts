import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  ApiException,
  AppsV1Api,
  BatchV1Api,
  CoreV1Api,
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  type V1Deployment,
  Watch,
} from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeKubernetes, startFakeKubernetes } from '../src/index.ts';

const NS = 'replix-test';
const MANAGER = 'replix';

function deployment(replicas: number, image = 'runtime:1', labels = { app: 'web' }): V1Deployment {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: NS, labels },
    spec: {
      replicas,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'main', image }] },
      },
    },
  };
}

let fake: FakeKubernetes;
let objects: KubernetesObjectApi;
let apps: AppsV1Api;
let core: CoreV1Api;

async function apply<T extends { apiVersion?: string; kind?: string; metadata?: object }>(
  object: T,
  manager = MANAGER,
  force = false,
): Promise<T> {
  const spec = object as T & { metadata: { name: string } };
  return objects.patch(spec, undefined, undefined, manager, force, PatchStrategy.ServerSideApply);
}

/** The Status a failed call carried: the client throws an ApiException with it as the body. */
async function failure(
  call: Promise<unknown>,
): Promise<{ code: number; status: Record<string, unknown> }> {
  try {
    await call;
  } catch (error) {
    if (!(error instanceof ApiException)) throw error;
    const status = typeof error.body === 'string' ? JSON.parse(error.body) : error.body;
    return { code: error.code, status };
  }
  throw new Error('the call succeeded');
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

beforeEach(async () => {
  fake = await startFakeKubernetes({ readyDelayMs: 20 });
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

describe('server-side apply through @kubernetes/client-node', () => {
  it('creates the object with the server-set metadata and the manager fields', async () => {
    const created = await apply(deployment(2));
    expect(created.metadata).toMatchObject({
      name: 'web',
      namespace: NS,
      generation: 1,
      labels: { app: 'web' },
    });
    expect(created.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.metadata?.creationTimestamp).toBeInstanceOf(Date);
    const [managed] = created.metadata?.managedFields ?? [];
    expect(managed).toMatchObject({ manager: MANAGER, operation: 'Apply', fieldsType: 'FieldsV1' });
    expect(managed?.fieldsV1).toMatchObject({ 'f:spec': { 'f:replicas': {} } });
    const read = await apps.readNamespacedDeployment({ name: 'web', namespace: NS });
    expect(read.spec?.replicas).toBe(2);
    expect(fake.requests.filter((request) => request.method === 'PATCH').at(-1)).toEqual({
      method: 'PATCH',
      path: `/apis/apps/v1/namespaces/${NS}/deployments/web`,
      query: { fieldManager: MANAGER, force: 'false' },
      fieldManager: MANAGER,
    });
  });

  it('leaves resourceVersion and generation alone when the same configuration is applied again', async () => {
    await apply(deployment(2));
    // The simulated rollout writes the status (a new resourceVersion) after readyDelayMs, so
    // compare against the settled object, not the apply's answer, whatever the machine's speed.
    const first = await until(
      () => apps.readNamespacedDeployment({ name: 'web', namespace: NS }),
      (read) => read.status?.readyReplicas === 2,
    );
    const again = await apply(deployment(2));
    expect(again.metadata?.resourceVersion).toBe(first.metadata?.resourceVersion);
    expect(again.metadata?.generation).toBe(1);
    const changed = await apply(deployment(3));
    expect(Number(changed.metadata?.resourceVersion)).toBeGreaterThan(
      Number(first.metadata?.resourceVersion),
    );
    expect(changed.metadata?.generation).toBe(2);
  });

  it('drops a label the manager stops applying; a labels-only change keeps the generation', async () => {
    await apply(deployment(2, 'runtime:1', { app: 'web', tier: 'front' } as { app: string }));
    const next = await apply(deployment(2));
    expect(next.metadata?.labels).toEqual({ app: 'web' });
    expect(next.metadata?.generation).toBe(1);
  });

  it('answers 409 Conflict when another manager owns a field with a different value, and force takes it over', async () => {
    await apply(deployment(2));
    const { code, status } = await failure(apply(deployment(5), 'autoscaler'));
    expect(code).toBe(409);
    expect(status).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'Conflict',
      code: 409,
      details: {
        causes: [
          {
            type: 'FieldManagerConflict',
            message: 'conflict with "replix"',
            field: '.spec.replicas',
          },
        ],
      },
    });
    expect(fake.object('Deployment', NS, 'web')?.spec).toMatchObject({ replicas: 2 });

    const forced = await apply(deployment(5), 'autoscaler', true);
    expect(forced.spec?.replicas).toBe(5);
    const owners = Object.fromEntries(
      (forced.metadata?.managedFields ?? []).map((m) => [m.manager, m.fieldsV1]),
    );
    expect(owners.autoscaler).toMatchObject({ 'f:spec': { 'f:replicas': {} } });
    expect(owners.replix).not.toMatchObject({ 'f:spec': { 'f:replicas': {} } });
  });

  it('lets a second manager apply the same value without a conflict', async () => {
    await apply(deployment(2));
    const shared = await apply(deployment(2), 'other');
    expect(shared.metadata?.managedFields?.map((m) => m.manager).sort()).toEqual([
      'other',
      'replix',
    ]);
  });

  it('refuses bad input with Status objects: unknown namespace, bad name, unknown object', async () => {
    const elsewhere = { ...deployment(1), metadata: { name: 'web', namespace: 'nowhere' } };
    expect(await failure(apply(elsewhere))).toMatchObject({
      code: 404,
      status: { reason: 'NotFound' },
    });
    const badName = { ...deployment(1), metadata: { name: 'web_1', namespace: NS } };
    expect(await failure(apply(badName))).toMatchObject({
      code: 422,
      status: { reason: 'Invalid', details: { causes: [{ field: 'metadata.name' }] } },
    });
    expect(
      await failure(apps.readNamespacedDeployment({ name: 'absent', namespace: NS })),
    ).toMatchObject({
      code: 404,
      status: {
        kind: 'Status',
        reason: 'NotFound',
        message: 'deployments.apps "absent" not found',
      },
    });
  });
});

describe('reads and deletes', () => {
  it('lists by label with equality and set selectors', async () => {
    for (const [name, tier] of [
      ['a', 'front'],
      ['b', 'back'],
      ['c', 'batch'],
    ]) {
      await apply({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, namespace: NS, labels: { tier } },
        data: { k: 'v' },
      });
    }
    const names = async (labelSelector: string) =>
      (await core.listNamespacedConfigMap({ namespace: NS, labelSelector })).items.map(
        (item) => item.metadata?.name,
      );
    expect(await names('tier=front')).toEqual(['a']);
    expect(await names('tier in (front, back)')).toEqual(['a', 'b']);
    expect(await names('tier!=front')).toEqual(['b', 'c']);
    expect(
      await failure(
        core.listNamespacedConfigMap({ namespace: NS, labelSelector: 'tier in front' }),
      ),
    ).toMatchObject({
      code: 400,
      status: { reason: 'BadRequest' },
    });
  });

  it('deletes owned objects with foreground propagation', async () => {
    const owner = await apply(deployment(1));
    const reference = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: 'web',
      uid: owner.metadata?.uid as string,
      controller: true,
    };
    await apply({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'web-env', namespace: NS, ownerReferences: [reference] },
    });
    await apply({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'unrelated', namespace: NS },
    });
    await until(
      () => core.listNamespacedPod({ namespace: NS }),
      (pods) => pods.items.length === 1,
    );

    await apps.deleteNamespacedDeployment({
      name: 'web',
      namespace: NS,
      propagationPolicy: 'Foreground',
    });
    expect(fake.object('Deployment', NS, 'web')).toBeUndefined();
    expect(fake.object('Secret', NS, 'web-env')).toBeUndefined();
    expect(fake.object('Secret', NS, 'unrelated')).toBeDefined();
    expect((await core.listNamespacedPod({ namespace: NS })).items).toEqual([]);
    expect(fake.requests.at(-2)).toMatchObject({
      method: 'DELETE',
      path: `/apis/apps/v1/namespaces/${NS}/deployments/web`,
    });
  });

  it("orphans a Job's pods by default, as the API server does", async () => {
    await apply({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'build', namespace: NS },
      spec: { template: { spec: { containers: [] } } },
    });
    await objects.delete({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'build', namespace: NS },
    });
    const pod = fake.object('Pod', NS, 'build-0');
    expect(pod?.metadata.ownerReferences).toEqual([]);
  });
});

describe('watch', () => {
  it('streams the current objects, then each write the selector matches, until aborted', async () => {
    const config = new KubeConfig();
    config.loadFromString(fake.kubeconfig);
    const events: string[] = [];
    const path = `/apis/apps/v1/namespaces/${NS}/deployments`;
    await apply(deployment(1));
    const watch = await new Watch(config).watch(
      path,
      { labelSelector: 'app=web' },
      (type, object: V1Deployment) =>
        events.push(`${type} ${object.metadata?.name} ready=${object.status?.readyReplicas ?? 0}`),
      () => {},
    );
    await until(
      async () => events,
      (seen) => seen.includes('MODIFIED web ready=1'),
    );
    await apply({
      ...deployment(1),
      metadata: { name: 'other', namespace: NS, labels: { app: 'other' } },
    });
    await apps.deleteNamespacedDeployment({ name: 'web', namespace: NS });
    await until(
      async () => events,
      (seen) => seen.some((event) => event.startsWith('DELETED')),
    );
    watch.abort();
    expect(events[0]).toMatch(/^ADDED web ready=[01]$/);
    expect(events.at(-1)).toBe('DELETED web ready=1');
    expect(events.some((event) => event.includes('other'))).toBe(false);
    expect(fake.requests).toContainEqual(
      expect.objectContaining({
        method: 'GET',
        path,
        query: expect.objectContaining({ watch: 'true' }),
      }),
    );
  });
});

describe('the simulated controller', () => {
  it("makes a Deployment's pods and reports it ready", async () => {
    await apply(deployment(2));
    const ready = await until(
      () => apps.readNamespacedDeployment({ name: 'web', namespace: NS }),
      (d) => d.status?.readyReplicas === 2,
    );
    expect(ready.status).toMatchObject({ observedGeneration: 1, updatedReplicas: 2, replicas: 2 });
    expect(ready.status?.conditions?.find((c) => c.type === 'Available')?.status).toBe('True');
    const pods = await core.listNamespacedPod({ namespace: NS, labelSelector: 'app=web' });
    expect(pods.items.map((pod) => pod.metadata?.name)).toEqual([
      expect.stringMatching(/^web-[0-9a-f]{10}-0$/),
      expect.stringMatching(/^web-[0-9a-f]{10}-1$/),
    ]);
    expect(pods.items.every((pod) => pod.status?.phase === 'Running')).toBe(true);
  });

  it('rolls a changed template out to new pods, and observes the new generation', async () => {
    await apply(deployment(1));
    await until(
      () => apps.readNamespacedDeployment({ name: 'web', namespace: NS }),
      (d) => d.status?.readyReplicas === 1,
    );
    const [before] = (await core.listNamespacedPod({ namespace: NS })).items;
    await apply(deployment(1, 'runtime:2'));
    const ready = await until(
      () => apps.readNamespacedDeployment({ name: 'web', namespace: NS }),
      (d) => d.status?.observedGeneration === 2 && d.status?.readyReplicas === 1,
    );
    expect(ready.metadata?.generation).toBe(2);
    const after = (await core.listNamespacedPod({ namespace: NS })).items.map(
      (pod) => pod.metadata?.name,
    );
    expect(after).toHaveLength(1);
    expect(after).not.toContain(before?.metadata?.name);
  });

  it('never readies a Deployment a test fails', async () => {
    fake.failDeployment(NS, 'web');
    await apply(deployment(1));
    const status = (await apps.readNamespacedDeployment({ name: 'web', namespace: NS })).status;
    expect(status?.readyReplicas).toBeUndefined();
    expect(status?.conditions?.find((c) => c.type === 'Progressing')).toMatchObject({
      status: 'False',
      reason: 'ProgressDeadlineExceeded',
    });
  });

  it('finishes a Job with the outcome a test gives', async () => {
    await apply({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'build', namespace: NS },
      spec: { template: { spec: { containers: [] } } },
    });
    const config = new KubeConfig();
    config.loadFromString(fake.kubeconfig);
    const batch = config.makeApiClient(BatchV1Api);
    expect((await batch.readNamespacedJob({ name: 'build', namespace: NS })).status?.active).toBe(
      1,
    );
    fake.finishJob(NS, 'build', 'failed');
    const job = await batch.readNamespacedJob({ name: 'build', namespace: NS });
    expect(job.status).toMatchObject({ failed: 1, active: 0 });
    expect(job.status?.conditions?.[0]).toMatchObject({ type: 'Failed', status: 'True' });
    expect((await core.readNamespacedPod({ name: 'build-0', namespace: NS })).status?.phase).toBe(
      'Failed',
    );
  });

  it('serves pod logs with sinceTime and tailLines', async () => {
    await apply(deployment(1));
    const [pod] = (await core.listNamespacedPod({ namespace: NS })).items;
    const name = pod?.metadata?.name as string;
    fake.appendLog(NS, name, 'starting', new Date('2026-01-01T00:00:00Z'));
    fake.appendLog(NS, name, 'listening', new Date('2026-01-01T00:00:10Z'));
    fake.appendLog(NS, name, 'ready', new Date('2026-01-01T00:00:20Z'));
    expect(await core.readNamespacedPodLog({ name, namespace: NS })).toBe(
      'starting\nlistening\nready\n',
    );
    expect(await core.readNamespacedPodLog({ name, namespace: NS, tailLines: 1 })).toBe('ready\n');
    const since = await fetch(
      `${fake.url}/api/v1/namespaces/${NS}/pods/${name}/log?sinceTime=2026-01-01T00:00:10Z`,
    );
    expect(await since.text()).toBe('listening\nready\n');
    expect(
      await failure(core.readNamespacedPodLog({ name: 'absent', namespace: NS })),
    ).toMatchObject({ code: 404 });
  });

  it('serves the pod log of the last sinceSeconds', async () => {
    await apply(deployment(1));
    const [pod] = (await core.listNamespacedPod({ namespace: NS })).items;
    const name = pod?.metadata?.name as string;
    fake.appendLog(NS, name, 'an hour ago', new Date(Date.now() - 3_600_000));
    fake.appendLog(NS, name, 'a minute ago', new Date(Date.now() - 60_000));
    expect(await core.readNamespacedPodLog({ name, namespace: NS, sinceSeconds: 600 })).toBe(
      'a minute ago\n',
    );
    expect(
      await failure(core.readNamespacedPodLog({ name, namespace: NS, sinceSeconds: 0 })),
    ).toMatchObject({ code: 400 });
    const both = await fetch(
      `${fake.url}/api/v1/namespaces/${NS}/pods/${name}/log?sinceSeconds=5&sinceTime=2026-01-01T00:00:10Z`,
    );
    expect(both.status).toBe(400);
  });
});

const run = promisify(execFile);

/** `kubectl` on the PATH (the image installs it), or the reason this part is skipped. */
const kubectlMissing = await run('kubectl', ['version', '--client']).then(
  () => undefined,
  () => 'kubectl is not installed (apt-get install -y kubectl)',
);
if (kubectlMissing) console.warn(`Skipping the kubectl cross-check: ${kubectlMissing}`);

describe.skipIf(kubectlMissing !== undefined)('kubectl against the fake', () => {
  it('applies a manifest server-side and lists what the client lists', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'replix-kubectl-'));
    try {
      await writeFile(join(dir, 'config'), fake.kubeconfig);
      await writeFile(join(dir, 'deployment.json'), JSON.stringify(deployment(2)));
      // HOME keeps kubectl's discovery cache out of the user's home.
      const kubectl = async (...args: string[]) =>
        (
          await run('kubectl', ['--kubeconfig', join(dir, 'config'), ...args], {
            env: { ...process.env, HOME: dir },
          })
        ).stdout;
      // --validate=false: kubectl's schema validation downloads OpenAPI documents the fake does not serve.
      const applied = await kubectl(
        'apply',
        '--server-side',
        '--validate=false',
        `--field-manager=${MANAGER}`,
        '-f',
        join(dir, 'deployment.json'),
      );
      expect(applied).toContain('deployment.apps/web serverside-applied');
      expect(fake.requests).toContainEqual(
        expect.objectContaining({
          method: 'PATCH',
          path: `/apis/apps/v1/namespaces/${NS}/deployments/web`,
          fieldManager: MANAGER,
        }),
      );

      const listed = JSON.parse(
        await kubectl('get', 'deploy', '-n', NS, '-l', 'app=web', '-o', 'json'),
      ) as {
        items: V1Deployment[];
      };
      const viaClient = await apps.listNamespacedDeployment({
        namespace: NS,
        labelSelector: 'app=web',
      });
      const summary = (items: V1Deployment[]) =>
        items.map((item) => [
          item.metadata?.name,
          item.metadata?.uid,
          item.metadata?.resourceVersion,
          item.spec?.replicas,
        ]);
      expect(summary(listed.items)).toEqual(summary(viaClient.items));
      expect(summary(listed.items)).toEqual([['web', expect.any(String), expect.any(String), 2]]);

      // The client re-applying what kubectl applied, as the same manager, changes no field.
      const again = await apply(deployment(2));
      expect(again.metadata?.generation).toBe(1);
      expect(again.metadata?.managedFields?.map((managed) => managed.manager)).toEqual([MANAGER]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('hostile or unsupported requests', () => {
  const send = async (path: string, init: RequestInit = {}) => {
    const response = await fetch(`${fake.url}${path}`, init);
    return { code: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const patch = (path: string, body: string, contentType = 'application/apply-patch+yaml') =>
    send(path, { method: 'PATCH', headers: { 'content-type': contentType }, body });
  const web = `/apis/apps/v1/namespaces/${NS}/deployments/web`;

  it("answers each with a Status object and the API server's code", async () => {
    const json = JSON.stringify(deployment(1));
    expect(
      await patch(`${web}?fieldManager=x`, json, 'application/merge-patch+json'),
    ).toMatchObject({
      code: 415,
      body: { kind: 'Status', reason: 'UnsupportedMediaType' },
    });
    expect(await patch(web, json)).toMatchObject({ code: 400, body: { reason: 'BadRequest' } });
    expect(await patch(`${web}?fieldManager=x`, 'spec: [unclosed')).toMatchObject({
      code: 400,
      body: { reason: 'BadRequest' },
    });
    expect(await patch(`${web}?fieldManager=x`, '- a list')).toMatchObject({
      code: 400,
      body: { reason: 'BadRequest' },
    });
    expect(
      await patch(`/apis/apps/v1/namespaces/${NS}/deployments/other?fieldManager=x`, json),
    ).toMatchObject({
      code: 400,
      body: { message: 'the name of the object (web) does not match the name on the URL (other)' },
    });
    expect(await send(`/apis/apps/v1/namespaces/${NS}/widgets`)).toMatchObject({
      code: 404,
      body: { reason: 'NotFound' },
    });
    expect(await send(`/api/v1/namespaces/${NS}/pods/x`, { method: 'PATCH' })).toMatchObject({
      code: 405,
    });
    await patch(`${web}?fieldManager=x`, json);
    expect(await send(`${web}?propagationPolicy=Sideways`, { method: 'DELETE' })).toMatchObject({
      code: 422,
      body: { reason: 'Invalid', details: { causes: [{ field: 'propagationPolicy' }] } },
    });
    expect(fake.object('Deployment', NS, 'web')).toBeDefined();
    expect(await send(`${web}`, { method: 'DELETE', body: 'null' })).toMatchObject({
      code: 200,
      body: { status: 'Success' },
    });
    expect(await send(`/api/v1/namespaces/${NS}/secrets/%E0%A4%A`)).toMatchObject({
      code: 400,
      body: { reason: 'BadRequest' },
    });
  });

  it('reports a conflict once when another manager owns the whole map a configuration fills', async () => {
    const configMap = (data: Record<string, string>) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c', namespace: NS },
      data,
    });
    await apply(configMap({}), 'one');
    const { status } = await failure(apply(configMap({ a: '1', b: '2' }), 'two'));
    expect(status.details).toEqual({
      causes: [{ type: 'FieldManagerConflict', message: 'conflict with "one"', field: '.data' }],
    });
  });
});

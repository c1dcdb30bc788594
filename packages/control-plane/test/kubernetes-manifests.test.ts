import { HTTPRoute } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { Job } from 'kubernetes-models/batch/v1';
import { Ingress } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Namespace, Secret, Service } from 'kubernetes-models/v1';
import { describe, expect, it } from 'vitest';
import type { InstanceLaunch } from '../src/adapters/drivers/instance-launch.ts';
import { buildJobManifest } from '../src/adapters/drivers/kubernetes/build-job-manifest.ts';
import {
  CHECKPOINT_DIR,
  type CheckpointBucket,
} from '../src/adapters/drivers/kubernetes/checkpoint-bucket.ts';
import {
  type EndpointInput,
  type EndpointManifestOptions,
  endpointManifests,
} from '../src/adapters/drivers/kubernetes/endpoint-manifests.ts';
import {
  followsLeader,
  type InstanceManifestInput,
  type InstanceManifestOptions,
  instanceManifests,
  KEYS_FILE,
  leaderService,
  TERMINATION_GRACE_SECONDS,
} from '../src/adapters/drivers/kubernetes/instance-manifests.ts';
import {
  DNS_LABEL,
  databaseObjectName,
  instanceKeysName,
  instanceObjectName,
  instanceSecretName,
  LABEL_VALUE,
  namespaceFor,
  replicaObjectName,
  replicaPodSelector,
} from '../src/adapters/drivers/kubernetes/kubernetes-names.ts';
import {
  type KubernetesObject,
  ownedBy,
} from '../src/adapters/drivers/kubernetes/kubernetes-object.ts';
import {
  unroutedManifests,
  unroutedMessageConfigMap,
} from '../src/adapters/drivers/kubernetes/unrouted-backend.ts';
import { INSTANCE_SIZE_NAMES, INSTANCE_SIZES } from '../src/domain/plans.ts';
import { replicaReplicationId } from '../src/domain/replication-id.ts';
import { sampleLaunch } from './fixtures/sample-launch.ts';

const PASSWORD = 'pa55:w/ord@secret';
const KEY_SECRET = 'ab'.repeat(32);
const SSH_KEY =
  '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjE=\n-----END OPENSSH PRIVATE KEY-----';
const ARTIFACT_TOKEN = 'rxa_artifact-token-0123456789';

/** A launch whose secrets (a password that needs escaping, an SSH key, the key secret) are all set. */
function launchOf(
  size: keyof typeof INSTANCE_SIZES = 'xs',
  ids = { i: 'in_1', d: 'db_1' },
): InstanceLaunch {
  return sampleLaunch(size, {
    instanceId: ids.i,
    databaseId: ids.d,
    sourceUrl: `mysql://reader:${encodeURIComponent(PASSWORD)}@db.internal:3306/shop`,
    ssh: { host: 'bastion.internal', port: 22, user: 'tunnel', privateKey: SSH_KEY },
    keySecretHex: KEY_SECRET,
  });
}

const instanceOptions: InstanceManifestOptions = {
  image: 'registry.example.com/replix/runtime:1.0.0',
  replixBin: '/app/packages/cli/bin/replix.js',
  namespacePattern: 'replix-{region}',
};

function inputOf(launch = launchOf(), replicas = 1): InstanceManifestInput {
  return {
    launch,
    accountId: 'ac_1',
    region: 'eu-west-1',
    replicas,
    artifact: {
      kind: 'fetch',
      url: 'https://control.example.com/v1/internal/artifacts/bd_1',
      manifestSha256: 'f'.repeat(64),
      token: ARTIFACT_TOKEN,
    },
  };
}

const endpointOptions: EndpointManifestOptions = {
  namespacePattern: 'replix-{region}',
  hostPatterns: { 'eu-west-1': '{database}.eu-west-1.db.example.com' },
  route: { kind: 'httproute', gateway: { name: 'replix', namespace: 'replix-system' } },
};

const endpointInput: EndpointInput = {
  accountId: 'ac_1',
  databaseId: 'db_1',
  region: 'eu-west-1',
  servingInstanceId: 'in_1',
};

/** Validates `object` against its kind's OpenAPI schema; throws what is wrong. */
function validate(object: KubernetesObject): void {
  const models: Record<string, new (data: never) => { validate(): void }> = {
    Namespace,
    ConfigMap,
    Secret,
    Service,
    Deployment,
    Job,
    Ingress,
    HTTPRoute,
    PodDisruptionBudget,
  };
  const Model = models[object.kind];
  if (!Model) throw new Error(`no schema for ${object.kind}`);
  new Model(structuredClone(object) as never).validate();
}

function allObjects(): KubernetesObject[] {
  return [
    ...instanceManifests(inputOf(), instanceOptions),
    ...instanceManifests(
      { ...inputOf(), artifact: { kind: 'image', imageUri: 'registry.example.com/db_1:bd_1' } },
      instanceOptions,
    ),
    ...endpointManifests(endpointInput, endpointOptions),
    ...endpointManifests(endpointInput, {
      ...endpointOptions,
      route: { kind: 'ingress', ingressClassName: 'nginx' },
    }),
    buildJobManifest(
      { buildId: 'bd_1', attempt: 1, launchId: 'a1b2c3', databaseId: 'db_1', accountId: 'ac_1' },
      {
        image: instanceOptions.image,
        replixBin: instanceOptions.replixBin,
        namespace: 'replix-system',
        storeSecretName: 'replix-secrets',
        artifactsClaim: 'replix-data',
        dataDir: '/var/lib/replix',
        deadlineSeconds: 1800,
      },
    ),
  ];
}

type Container = {
  name: string;
  image: string;
  env: Array<{ name: string; value?: string; valueFrom?: unknown }>;
  resources: { requests: Record<string, string>; limits: Record<string, string> };
  volumeMounts: Array<{ name: string; mountPath: string; subPath?: string }>;
  lifecycle?: unknown;
};
type PodSpec = {
  containers: Container[];
  initContainers: Container[];
  terminationGracePeriodSeconds: number;
  volumes: Array<{
    name: string;
    secret?: { secretName: string };
    emptyDir?: { sizeLimit?: string; medium?: string };
  }>;
  securityContext: { runAsNonRoot: boolean };
};
type DeploymentShape = {
  spec: {
    replicas: number;
    selector: { matchLabels: Record<string, string> };
    template: { metadata: { labels: Record<string, string> }; spec: PodSpec };
  };
};

function deploymentOf(objects: KubernetesObject[]) {
  const found = objects.find((object) => object.kind === 'Deployment');
  if (!found) throw new Error('no Deployment');
  return found as KubernetesObject & DeploymentShape;
}

function matches(selector: Record<string, string>, labels: Record<string, string>): boolean {
  return Object.entries(selector).every(([key, value]) => labels[key] === value);
}

describe('Kubernetes manifests', () => {
  it('validate against the Kubernetes and Gateway API OpenAPI schemas', () => {
    const objects = allObjects();
    expect(objects.map((object) => object.kind).sort()).toEqual(
      [
        'Deployment',
        'Deployment',
        'HTTPRoute',
        'Ingress',
        'Job',
        'Secret',
        'Secret',
        'Secret',
        'Secret',
        'Service',
        'Service',
        'Service',
        'Service',
      ].sort(),
    );
    for (const object of objects) expect(() => validate(object), object.kind).not.toThrow();
    const owned = ownedBy(objects[0] as KubernetesObject, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: instanceObjectName('in_1'),
      uid: '6b8f0c3e-0d1f-4c55-9a43-2f0b6c1d8e77',
    });
    expect(() => validate(owned)).not.toThrow();
  });

  it("validate the instance namespace and its unrouted server's objects too", () => {
    const namespace = namespaceFor('replix-{region}', { region: 'eu-west-1' });
    const objects = [
      ...unroutedManifests(namespace, instanceOptions),
      unroutedMessageConfigMap(namespace, 'replix-db-db-1.eu-west-1.db.example.com', 'Paused.'),
      unroutedMessageConfigMap(namespace, 'replix-db-db-1.eu-west-1.db.example.com', null),
    ];
    expect(objects.map((object) => object.kind)).toEqual([
      ...unroutedManifests(namespace, instanceOptions).map((object) => object.kind),
      'ConfigMap',
      'ConfigMap',
    ]);
    expect(objects.map((object) => object.kind)).toContain('Deployment');
    for (const object of objects) expect(() => validate(object), object.kind).not.toThrow();
  });

  it('the schema check catches a broken manifest (it can fail)', () => {
    const deployment = deploymentOf(instanceManifests(inputOf(), instanceOptions));
    const broken = structuredClone(deployment);
    (broken.spec as { replicas: unknown }).replicas = 'two';
    expect(() => validate(broken)).toThrow();
  });

  it('keep every secret value inside a Secret data field, and nowhere else', () => {
    const objects = allObjects();
    const secrets = [PASSWORD, encodeURIComponent(PASSWORD), KEY_SECRET, SSH_KEY, ARTIFACT_TOKEN];
    const forms = secrets.flatMap((secret) => [
      secret,
      Buffer.from(secret).toString('base64'),
      launchOf().sourceUrl,
      Buffer.from(launchOf().sourceUrl).toString('base64'),
    ]);
    const outsideSecretData = objects.map((object) =>
      JSON.stringify(object.kind === 'Secret' ? { ...object, data: undefined } : object),
    );
    for (const text of outsideSecretData)
      for (const form of forms) expect(text).not.toContain(form);
    // …and they are there, for the pod to read through secretKeyRef.
    const envSecret = objects.find((object) => object.kind === 'Secret') as KubernetesObject & {
      data: Record<string, string>;
    };
    const decoded = Object.fromEntries(
      Object.entries(envSecret.data).map(([key, value]) => [
        key,
        Buffer.from(value, 'base64').toString(),
      ]),
    );
    expect(decoded).toEqual({
      REPLIX_ARTIFACT_TOKEN: ARTIFACT_TOKEN,
      REPLIX_KEY_SECRET: KEY_SECRET,
      REPLIX_SOURCE_URL: launchOf().sourceUrl,
      REPLIX_SSH_PRIVATE_KEY: SSH_KEY,
    });
    const container = deploymentOf(objects).spec.template.spec.containers[0] as Container;
    const source = container.env.find((variable) => variable.name === 'REPLIX_SOURCE_URL');
    expect(source).toEqual({
      name: 'REPLIX_SOURCE_URL',
      valueFrom: { secretKeyRef: { name: envSecret.metadata.name, key: 'REPLIX_SOURCE_URL' } },
    });
  });

  it("pass the control plane's tracing to the instance, the collector's headers through the Secret", () => {
    const headers = 'authorization=Bearer%20collector-token';
    const objects = instanceManifests(
      inputOf({
        ...launchOf(),
        tracing: { tracesUrl: 'http://collector:4318/v1/traces', headers, serviceName: 'cp' },
      }),
      instanceOptions,
    );
    const container = deploymentOf(objects).spec.template.spec.containers[0] as Container;
    const envSecret = objects.find((object) => object.kind === 'Secret') as KubernetesObject & {
      data: Record<string, string>;
    };
    expect(container.env).toContainEqual({ name: 'OTEL_TRACES_EXPORTER', value: 'otlp' });
    expect(container.env).toContainEqual({
      name: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
      value: 'http://collector:4318/v1/traces',
    });
    expect(container.env).toContainEqual({
      name: 'OTEL_EXPORTER_OTLP_HEADERS',
      valueFrom: {
        secretKeyRef: { name: envSecret.metadata.name, key: 'OTEL_EXPORTER_OTLP_HEADERS' },
      },
    });
    expect(Buffer.from(envSecret.data.OTEL_EXPORTER_OTLP_HEADERS ?? '', 'base64').toString()).toBe(
      headers,
    );
  });

  it("run a build as a Job in the control plane's namespace, mounting the artifacts claim, its secrets by reference", () => {
    const job = buildJobManifest(
      { buildId: 'bd_1', attempt: 2, launchId: 'a1b2c3', databaseId: 'db_1', accountId: 'ac_1' },
      {
        image: instanceOptions.image,
        replixBin: instanceOptions.replixBin,
        namespace: 'replix-system',
        storeSecretName: 'replix-secrets',
        artifactsClaim: 'replix-data',
        dataDir: '/var/lib/replix',
        deadlineSeconds: 900,
      },
    ) as KubernetesObject & {
      spec: { backoffLimit: number; activeDeadlineSeconds: number; template: { spec: PodSpec } };
    };
    expect(job.metadata.namespace).toBe('replix-system');
    // The build id, the attempt and the launch, with a hash: `bd_1` is no DNS label as it is.
    expect(job.metadata.name).toMatch(/^replix-build-bd-1-2-a1b2c3-[0-9a-f]{8}$/);
    expect(job.spec).toMatchObject({ backoffLimit: 0, activeDeadlineSeconds: 900 });
    const pod = job.spec.template.spec;
    const [container] = pod.containers as [Container & { command: string[] }];
    expect(container.command).toEqual(['node', instanceOptions.replixBin, 'build-job']);
    expect(container.env).toEqual([
      {
        name: 'DATABASE_URL',
        valueFrom: { secretKeyRef: { name: 'replix-secrets', key: 'DATABASE_URL' } },
      },
      // Its own build's credential, from the Job's own Secret; never the master key.
      {
        name: 'REPLIX_BUILD_SOURCE_URL',
        valueFrom: {
          secretKeyRef: { name: `${job.metadata.name}-source`, key: 'REPLIX_BUILD_SOURCE_URL' },
        },
      },
      {
        name: 'REPLIX_BUILD_SSH_PRIVATE_KEY',
        valueFrom: {
          secretKeyRef: {
            name: `${job.metadata.name}-source`,
            key: 'REPLIX_BUILD_SSH_PRIVATE_KEY',
            optional: true,
          },
        },
      },
      { name: 'HOME', value: '/tmp' },
      { name: 'REPLIX_DATA_DIR', value: '/var/lib/replix' },
      { name: 'REPLIX_BUILD_ID', value: 'bd_1' },
      { name: 'REPLIX_BUILD_ATTEMPT', value: '2' },
      { name: 'REPLIX_BUILD_COMPUTE_TYPE', value: 'kubernetes.job' },
    ]);
    expect(container.volumeMounts).toContainEqual({ name: 'data', mountPath: '/var/lib/replix' });
    expect(pod.volumes).toContainEqual({
      name: 'data',
      persistentVolumeClaim: { claimName: 'replix-data' },
    });
  });

  it('request and limit exactly the CPU and memory of each size', () => {
    for (const size of INSTANCE_SIZE_NAMES) {
      const deployment = deploymentOf(instanceManifests(inputOf(launchOf(size)), instanceOptions));
      const { resources } = deployment.spec.template.spec.containers[0] as Container;
      const expected = {
        cpu: `${INSTANCE_SIZES[size].taskCpu * 1000}m`,
        memory: `${INSTANCE_SIZES[size].taskMemoryMb}Mi`,
      };
      expect(resources, size).toEqual({ requests: expected, limits: expected });
    }
  });

  it('run the pods non-root, for longer than the drain bound when stopped, one Deployment per replica', () => {
    const objects = instanceManifests(inputOf(launchOf(), 3), instanceOptions);
    const deployments = objects.filter((object) => object.kind === 'Deployment') as Array<
      KubernetesObject & DeploymentShape
    >;
    expect(deployments.map((deployment) => deployment.metadata.name)).toEqual([
      replicaObjectName('in_1', 0),
      replicaObjectName('in_1', 1),
      replicaObjectName('in_1', 2),
    ]);
    const replicationIds = deployments.map((deployment) => {
      const pod = deployment.spec.template.spec;
      expect(deployment.spec.replicas).toBe(1);
      expect(pod.securityContext.runAsNonRoot).toBe(true);
      expect(pod.terminationGracePeriodSeconds).toBe(TERMINATION_GRACE_SECONDS);
      const env = (pod.containers[0] as Container).env;
      return env.find((variable) => variable.name === 'REPLIX_REPLICATION_ID')?.value;
    });
    // Each replica follows the source itself, under its own replication id.
    const replicationId = launchOf().replicationId;
    expect(replicationIds).toEqual([
      replicationId,
      replicaReplicationId(replicationId, 1),
      replicaReplicationId(replicationId, 2),
    ]);
    // Each Deployment owns only its replica's pod; both Services select every replica.
    const podLabels = deployments.map((deployment) => deployment.spec.template.metadata.labels);
    expect(podLabels.map((labels) => labels['replix.dev/replica'])).toEqual(['0', '1', '2']);
    for (const [ordinal, deployment] of deployments.entries()) {
      expect(
        podLabels.map((labels) => matches(deployment.spec.selector.matchLabels, labels)),
      ).toEqual([0, 1, 2].map((other) => other === ordinal));
    }
    const instanceService = objects.find(
      (object) => object.kind === 'Service',
    ) as KubernetesObject & {
      spec: { selector: Record<string, string> };
    };
    expect(instanceService.metadata.name).toBe(instanceObjectName('in_1'));
    const [databaseService] = endpointManifests(endpointInput, endpointOptions) as [
      KubernetesObject & { spec: { selector: Record<string, string> } },
    ];
    for (const labels of podLabels) {
      expect(matches(instanceService.spec.selector, labels)).toBe(true);
      expect(matches(databaseService.spec.selector, labels)).toBe(true);
    }
    expect(TERMINATION_GRACE_SECONDS).toBeGreaterThan(8 + 5);
    expect(() => instanceManifests(inputOf(launchOf(), 0), instanceOptions)).toThrow(/replica/);
  });

  it('mount the keys Secret whole as REPLIX_KEYS_FILE, so key changes reach running pods', () => {
    const objects = instanceManifests(inputOf(), instanceOptions);
    const pod = deploymentOf(objects).spec.template.spec;
    const container = pod.containers[0] as Container;
    expect(container.env.find((variable) => variable.name === 'REPLIX_KEYS_FILE')?.value).toBe(
      KEYS_FILE,
    );
    const mount = container.volumeMounts.find((volumeMount) => volumeMount.name === 'keys');
    expect(mount).toBeDefined();
    expect(mount?.subPath).toBeUndefined();
    expect(KEYS_FILE.startsWith(`${mount?.mountPath}/`)).toBe(true);
    const keysSecret = objects[1] as KubernetesObject & { data: Record<string, string> };
    expect(pod.volumes.find((volume) => volume.name === 'keys')?.secret?.secretName).toBe(
      keysSecret.metadata.name,
    );
    const keysJson = Buffer.from(keysSecret.data['keys.json'] as string, 'base64').toString();
    expect(JSON.parse(keysJson)).toEqual({
      keyIds: ['1111111111111111'],
      adminKeyIds: ['cccccccccccccccc'],
    });
  });

  it('fetch the artifact in an init container, or run the build image that holds it', () => {
    const fetched = deploymentOf(instanceManifests(inputOf(), instanceOptions)).spec.template.spec;
    expect(fetched.initContainers.map((container) => container.name)).toEqual(['fetch-artifact']);
    expect((fetched.containers[0] as Container).image).toBe(instanceOptions.image);
    const image = deploymentOf(
      instanceManifests(
        { ...inputOf(), artifact: { kind: 'image', imageUri: 'registry.example.com/db_1:bd_1' } },
        instanceOptions,
      ),
    ).spec.template.spec;
    expect(image.initContainers).toEqual([]);
    const container = image.containers[0] as Container;
    expect(container.image).toBe('registry.example.com/db_1:bd_1');
    expect(container.volumeMounts.map((volumeMount) => volumeMount.mountPath)).not.toContain(
      '/artifact',
    );
  });

  it("select exactly the serving instance's pods of the database", () => {
    const pods = (databaseId: string, instanceId: string) =>
      deploymentOf(
        instanceManifests(
          inputOf(launchOf('xs', { i: instanceId, d: databaseId })),
          instanceOptions,
        ),
      ).spec.template.metadata.labels;
    const [service] = endpointManifests(endpointInput, endpointOptions) as [
      KubernetesObject & { spec: { selector: Record<string, string> } },
    ];
    const deployment = deploymentOf(instanceManifests(inputOf(), instanceOptions));
    expect(matches(service.spec.selector, pods('db_1', 'in_1'))).toBe(true);
    expect(matches(service.spec.selector, pods('db_1', 'in_2'))).toBe(false);
    expect(matches(service.spec.selector, pods('db_2', 'in_1'))).toBe(false);
    expect(matches(deployment.spec.selector.matchLabels, pods('db_1', 'in_1'))).toBe(true);
    expect(matches(deployment.spec.selector.matchLabels, pods('db_1', 'in_2'))).toBe(false);
    expect(pods('db_1', 'in_1')).toMatchObject({
      'app.kubernetes.io/name': 'replix-instance',
      'app.kubernetes.io/managed-by': 'replix',
      'replix.dev/account-id': 'ac_1',
      'replix.dev/database-id': 'db_1',
      'replix.dev/instance-id': 'in_1',
    });
  });

  it('route the region host to the database Service', () => {
    const [service, route] = endpointManifests(endpointInput, endpointOptions) as [
      KubernetesObject,
      KubernetesObject & {
        spec: { hostnames: string[]; rules: Array<{ backendRefs: Array<{ name: string }> }> };
      },
    ];
    expect(route.spec.hostnames).toEqual([
      `${databaseObjectName('db_1')}.eu-west-1.db.example.com`,
    ]);
    expect(route.spec.hostnames[0]).toMatch(/^replix-db-[a-z0-9-]+\.eu-west-1\.db\.example\.com$/);
    expect(route.spec.rules[0]?.backendRefs[0]?.name).toBe(service.metadata.name);
    expect(() =>
      endpointManifests({ ...endpointInput, region: 'us-east-1' }, endpointOptions),
    ).toThrow(/us-east-1/);
    expect(() =>
      endpointManifests(endpointInput, {
        ...endpointOptions,
        hostPatterns: { 'eu-west-1': 'Bad_Host/{database}' },
      }),
    ).toThrow(/DNS/);
    expect(() =>
      endpointManifests(endpointInput, {
        ...endpointOptions,
        hostPatterns: { 'eu-west-1': 'db.example.com' },
      }),
    ).toThrow(/\{database\}/);
  });

  it('name everything with valid DNS-1123 labels and label values, even for hostile ids', () => {
    const hostile = [
      'x'.repeat(300),
      'UPPER_case_ID',
      'ünïcödé-数据库-🚀',
      '---',
      '.',
      '',
      '../../etc/passwd',
      'a'.repeat(63),
    ];
    const names = new Set<string>();
    for (const id of hostile) {
      const launch = launchOf('xs', { i: id, d: id });
      const objects = [
        ...instanceManifests({ ...inputOf(launch), accountId: id }, instanceOptions),
        ...endpointManifests(
          { ...endpointInput, accountId: id, databaseId: id, servingInstanceId: id },
          endpointOptions,
        ),
      ];
      for (const object of objects) {
        expect(object.metadata.name, id).toMatch(DNS_LABEL);
        expect(object.metadata.name.length).toBeLessThanOrEqual(63);
        expect(object.metadata.namespace).toMatch(DNS_LABEL);
        for (const value of Object.values(object.metadata.labels)) {
          expect(value, id).toMatch(LABEL_VALUE);
          expect(value.length).toBeLessThanOrEqual(63);
        }
        expect(() => validate(object)).not.toThrow();
      }
      names.add(databaseObjectName(id));
    }
    // Different ids never collapse onto one name.
    expect(names.size).toBe(hostile.length);
    expect(databaseObjectName('db_1')).not.toBe(databaseObjectName('DB_1'));
    expect(namespaceFor('replix-{region}', { region: 'EU_Wést-1' })).toMatch(DNS_LABEL);
    expect(() => namespaceFor('Replix_{region}', { region: 'eu-west-1' })).toThrow(/DNS-1123/);
    // Namespaces are the operator's, one per region: a per-account pattern is refused.
    expect(() => namespaceFor('replix-{account}', { region: 'eu-west-1' })).toThrow(
      /created by the operator, one per region/,
    );
  });

  describe('with a checkpoint bucket', () => {
    const bucket: CheckpointBucket = {
      bucket: 'replix-checkpoints',
      prefix: 'replix/',
      endpoint: 'http://minio.storage.svc:9000',
      region: 'eu-west-1',
      pathStyle: true,
      secret: 'replix-checkpoint-keys',
    };
    const withBucket = { ...instanceOptions, checkpoints: bucket };
    /** The leader Service's address, as the driver reads it from the API. */
    const LEADER_URL = 'http://10.96.0.17:8080';
    const following = (replicas: number, launch = launchOf()) => ({
      ...inputOf(launch, replicas),
      leaderUrl: LEADER_URL,
    });
    const podsOf = (objects: KubernetesObject[]) =>
      objects
        .filter((object) => object.kind === 'Deployment')
        .map((object) => (object as KubernetesObject & DeploymentShape).spec.template.spec);

    it('give each replica a checkpoint folder on disk; replicas that follow load the leader’s', () => {
      const objects = instanceManifests(following(2, launchOf('m')), withBucket);
      for (const object of objects) expect(() => validate(object), object.kind).not.toThrow();
      const memoryMb = INSTANCE_SIZES.m.taskMemoryMb;
      for (const [ordinal, pod] of podsOf(objects).entries()) {
        const container = pod.containers[0] as Container;
        const literal = (name: string) =>
          container.env.find((variable) => variable.name === name)?.value;
        expect(literal('REPLIX_CHECKPOINT_DIR')).toBe(CHECKPOINT_DIR);
        expect(literal('REPLIX_CHECKPOINT_S3_BUCKET')).toBe('replix-checkpoints');
        // Replica 0 writes them; replica 1 follows it and starts from them.
        expect(literal('REPLIX_CHECKPOINT_S3_PREFIX'), String(ordinal)).toBe('replix/db_1/0/');
        expect(literal('REPLIX_CHECKPOINT_S3_ENDPOINT')).toBe('http://minio.storage.svc:9000');
        expect(literal('REPLIX_CHECKPOINT_S3_REGION')).toBe('eu-west-1');
        expect(literal('REPLIX_CHECKPOINT_S3_PATH_STYLE')).toBe('true');
        expect(container.volumeMounts).toContainEqual({
          name: 'checkpoints',
          mountPath: CHECKPOINT_DIR,
        });
        // Disk-backed (no `medium: Memory`), room for three checkpoints of a full snapshot.
        expect(pod.volumes).toContainEqual({
          name: 'checkpoints',
          emptyDir: { sizeLimit: `${3 * memoryMb}Mi` },
        });
        // /tmp stays as it was: the checkpoints are not there.
        expect(pod.volumes).toContainEqual({ name: 'tmp', emptyDir: { sizeLimit: '256Mi' } });
        // The init container fetching the artifact has nothing to do with the bucket.
        for (const init of pod.initContainers) {
          expect(JSON.stringify(init)).not.toMatch(/CHECKPOINT|AWS_/);
        }
      }
    });

    it("take the bucket's credentials from the named Secret by reference, never as values", () => {
      const objects = instanceManifests(following(2), withBucket);
      for (const pod of podsOf(objects)) {
        const env = (pod.containers[0] as Container).env;
        for (const key of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY']) {
          expect(env.filter((variable) => variable.name === key)).toEqual([
            { name: key, valueFrom: { secretKeyRef: { name: 'replix-checkpoint-keys', key } } },
          ]);
        }
        // The Secret is not mounted: only those two keys are read from it.
        expect(JSON.stringify(pod.volumes)).not.toContain('replix-checkpoint-keys');
      }
      // The control plane neither copies the Secret nor puts its keys in the instance's.
      const secrets = objects.filter((object) => object.kind === 'Secret') as Array<
        KubernetesObject & { data: Record<string, string> }
      >;
      expect(secrets.map((secret) => secret.metadata.name)).not.toContain('replix-checkpoint-keys');
      for (const secret of secrets)
        expect(Object.keys(secret.data)).not.toContain('AWS_ACCESS_KEY_ID');
      // Without a Secret the pod's own identity reaches the bucket: no AWS_* variable at all.
      const { secret: _, ...identity } = bucket;
      for (const pod of podsOf(
        instanceManifests(inputOf(), { ...instanceOptions, checkpoints: identity }),
      )) {
        const names = (pod.containers[0] as Container).env.map((variable) => variable.name);
        expect(names.filter((name) => name.startsWith('AWS_'))).toEqual([]);
        expect(names).toContain('REPLIX_CHECKPOINT_S3_BUCKET');
      }
    });

    it('run replicas that follow: replica 0 keeps the feed, the others follow it through the leader Service', () => {
      const input = following(3);
      const objects = instanceManifests(input, withBucket);
      for (const object of objects) expect(() => validate(object), object.kind).not.toThrow();
      expect(followsLeader(input, withBucket)).toBe(true);
      const roles = podsOf(objects).map((pod) =>
        (pod.containers[0] as Container).env
          .filter((variable) =>
            /^REPLIX_(CHANGE_FEED|FOLLOW_URL|CHECKPOINT_S3_PREFIX|REPLICATION_ID)$/.test(
              variable.name,
            ),
          )
          .map(({ name, value }) => `${name}=${value}`),
      );
      const replicationId = launchOf().replicationId;
      expect(roles).toEqual([
        [
          'REPLIX_CHANGE_FEED=1',
          'REPLIX_CHECKPOINT_S3_PREFIX=replix/db_1/0/',
          `REPLIX_REPLICATION_ID=${replicationId}`,
        ],
        ...[1, 2].map((ordinal) => [
          'REPLIX_CHECKPOINT_S3_PREFIX=replix/db_1/0/',
          `REPLIX_FOLLOW_URL=${LEADER_URL}`,
          `REPLIX_REPLICATION_ID=${replicaReplicationId(replicationId, ordinal)}`,
        ]),
      ]);
      // The leader Service: after the instance Service, before the Deployments; replica 0's
      // pods only, on the instance port, with the instance's labels (stop and reap find it).
      expect(objects.map((object) => `${object.kind}/${object.metadata.name}`)).toEqual([
        `Secret/${instanceSecretName('in_1')}`,
        `Secret/${instanceKeysName('in_1')}`,
        `Service/${instanceObjectName('in_1')}`,
        `Service/${replicaObjectName('in_1', 0)}`,
        ...[0, 1, 2].map((ordinal) => `Deployment/${replicaObjectName('in_1', ordinal)}`),
      ]);
      const leader = leaderService(input, withBucket) as KubernetesObject & {
        spec: { type: string; selector: Record<string, string>; ports: unknown[] };
      };
      expect(objects[3]).toEqual(leader);
      expect(leader.metadata.namespace).toBe('replix-eu-west-1');
      expect(leader.metadata.labels).toMatchObject({
        'app.kubernetes.io/managed-by': 'replix',
        'app.kubernetes.io/component': 'instance',
        'replix.dev/instance-id': 'in_1',
        'replix.dev/replica': '0',
      });
      expect(leader.spec).toEqual({
        type: 'ClusterIP',
        selector: replicaPodSelector('db_1', 'in_1', 0),
        ports: [{ name: 'http', port: 8080, targetPort: 'http', protocol: 'TCP' }],
      });
      const podLabels = podsOf(objects).map(
        (_, ordinal) =>
          (objects[4 + ordinal] as KubernetesObject & DeploymentShape).spec.template.metadata
            .labels,
      );
      expect(podLabels.map((labels) => matches(leader.spec.selector, labels))).toEqual([
        true,
        false,
        false,
      ]);
      // The followers' address is the driver's to give: without it the manifests are refused.
      expect(() => instanceManifests(inputOf(launchOf(), 2), withBucket)).toThrow(
        "Follower replicas need the leader Service's address (leaderUrl).",
      );
    });

    it('keep each replica on its own without a bucket or with one replica', () => {
      const roleVariables = (objects: KubernetesObject[]) =>
        JSON.stringify(objects).match(/REPLIX_(CHANGE_FEED|FOLLOW_URL)/g);
      // One replica with a bucket: its own prefix, no feed, no leader Service.
      const one = instanceManifests(following(1), withBucket);
      expect(followsLeader(following(1), withBucket)).toBe(false);
      expect(leaderService(following(1), withBucket)).toBeNull();
      expect(roleVariables(one)).toBeNull();
      expect(one.filter((object) => object.kind === 'Service')).toHaveLength(1);
      // Several without a bucket: each follows the source under its own replication id, the
      // address given or not.
      const three = instanceManifests(following(3), instanceOptions);
      expect(followsLeader(following(3), instanceOptions)).toBe(false);
      expect(roleVariables(three)).toBeNull();
      expect(three.filter((object) => object.kind === 'Service')).toHaveLength(1);
      expect(JSON.stringify(three)).toBe(
        JSON.stringify(instanceManifests(inputOf(launchOf(), 3), instanceOptions)),
      );
    });

    it('leave out the settings not given, the instance then uses its defaults', () => {
      const minimal: CheckpointBucket = { bucket: 'replix-checkpoints', prefix: '' };
      const pod = podsOf(
        instanceManifests(inputOf(), { ...instanceOptions, checkpoints: minimal }),
      )[0] as PodSpec;
      const checkpointEnv = (pod.containers[0] as Container).env.filter((variable) =>
        /CHECKPOINT|^AWS_/.test(variable.name),
      );
      expect(checkpointEnv).toEqual([
        { name: 'REPLIX_CHECKPOINT_DIR', value: CHECKPOINT_DIR },
        { name: 'REPLIX_CHECKPOINT_S3_BUCKET', value: 'replix-checkpoints' },
        { name: 'REPLIX_CHECKPOINT_S3_PREFIX', value: 'db_1/0/' },
      ]);
    });

    it('size the checkpoint disk by each instance size', () => {
      for (const size of INSTANCE_SIZE_NAMES) {
        const pod = podsOf(instanceManifests(inputOf(launchOf(size)), withBucket))[0] as PodSpec;
        const volume = pod.volumes.find((one) => one.name === 'checkpoints');
        expect(volume?.emptyDir, size).toEqual({
          sizeLimit: `${3 * INSTANCE_SIZES[size].taskMemoryMb}Mi`,
        });
      }
    });

    it('refuse a database id that is no single key segment', () => {
      for (const id of ['../db_1', 'db/1', '', 'db 1']) {
        expect(() =>
          instanceManifests(inputOf(launchOf('xs', { i: 'in_1', d: id })), withBucket),
        ).toThrow('Invalid database id.');
      }
    });

    it('change nothing without a bucket', () => {
      const without = JSON.stringify(allObjects());
      const undefinedBucket = { ...instanceOptions, checkpoints: undefined };
      expect(JSON.stringify(instanceManifests(inputOf(launchOf(), 2), undefinedBucket))).toBe(
        JSON.stringify(instanceManifests(inputOf(launchOf(), 2), instanceOptions)),
      );
      expect(without).not.toMatch(/CHECKPOINT|AWS_|"checkpoints"/);
      expect(JSON.stringify(instanceManifests(following(2), withBucket))).not.toBe(
        JSON.stringify(instanceManifests(inputOf(launchOf(), 2), instanceOptions)),
      );
    });
  });

  it('give byte-identical output for the same input (server-side apply stays idempotent)', () => {
    const first = JSON.stringify(allObjects());
    const second = JSON.stringify(allObjects());
    expect(second).toBe(first);
    expect(first).not.toMatch(/creationTimestamp|resourceVersion|"status"/);
  });
});

// The kustomize base in deploy/kubernetes: every object valid against the Kubernetes OpenAPI
// schemas, each role's Deployment decodable by the control plane's own configuration, probes on
// the paths and ports the roles serve, RBAC equal to the driver's list of API calls, and no
// secret in a manifest.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Deployment } from 'kubernetes-models/apps/v1';
import { Job } from 'kubernetes-models/batch/v1';
import { Role, RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1';
import {
  ConfigMap,
  Namespace,
  PersistentVolumeClaim,
  Service,
  ServiceAccount,
} from 'kubernetes-models/v1';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { buildJobManifest } from '../packages/control-plane/src/adapters/drivers/kubernetes/build-job-manifest.ts';
import { instanceNamespaces } from '../packages/control-plane/src/adapters/drivers/kubernetes/kubernetes-names.ts';
import { buildJobOptionsOf } from '../packages/control-plane/src/adapters/drivers/kubernetes/kubernetes-setup.ts';
import {
  BUILDER_PERMISSIONS,
  KUBERNETES_PERMISSIONS,
  type KubernetesPermission,
  LOG_READ_PERMISSIONS,
} from '../packages/control-plane/src/adapters/drivers/kubernetes/permissions.ts';
import { PROBE_PATHS } from '../packages/control-plane/src/api/process-probes.ts';
import {
  CONTROL_PLANE_VARIABLES,
  type ControlPlaneConfig,
  resolveControlPlaneConfig,
} from '../packages/control-plane/src/config.ts';
import { ROLE_NAMES } from '../packages/control-plane/src/domain/role-names.ts';
import { rbacYaml } from './kubernetes-rbac.ts';
import { type RenderedObject, renderKustomization } from './render-kustomization.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BASE = join(ROOT, 'deploy/kubernetes');
const objects = renderKustomization(BASE);

/** What the operator's Secret holds, standing in for it when a role's settings are decoded. */
const SECRET_STAND_INS: Record<string, string> = {
  DATABASE_URL: 'postgres://replix@postgres.example.com:5432/replix',
  REPLIX_SECRET_KEY: 'ab'.repeat(32),
};

const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  Namespace,
  ServiceAccount,
  Role,
  RoleBinding,
  PersistentVolumeClaim,
  ConfigMap,
  Deployment,
  Service,
};

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string } };
}
interface Probe {
  httpGet: { path: string; port: string };
}
interface Container {
  name: string;
  image: string;
  args: string[];
  ports: Array<{ name: string; containerPort: number }>;
  env: EnvVar[];
  envFrom: Array<{ configMapRef: { name: string } }>;
  startupProbe: Probe;
  readinessProbe: Probe;
  livenessProbe: Probe;
  resources: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext: Record<string, unknown>;
  volumeMounts: Array<{ name: string; mountPath: string; readOnly?: boolean }>;
}
interface PodSpec {
  serviceAccountName: string;
  automountServiceAccountToken?: boolean;
  securityContext: Record<string, unknown>;
  containers: Container[];
  volumes: Array<{
    name: string;
    persistentVolumeClaim?: { claimName: string; readOnly?: boolean };
    emptyDir?: object;
  }>;
}

const ofKind = (kind: string) => objects.filter((object) => object.kind === kind);
const named = (kind: string, name: string) => {
  const found = objects.find((object) => object.kind === kind && object.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name}`);
  return found;
};
const podOf = (role: string) =>
  (named('Deployment', `replix-${role}`).spec as { template: { spec: PodSpec } }).template.spec;
const containerOf = (role: string) => {
  const [container, ...others] = podOf(role).containers;
  expect(others, `${role} runs one container`).toEqual([]);
  return container as Container;
};
const configMapData = (name: string) =>
  (named('ConfigMap', name) as RenderedObject & { data: Record<string, string> }).data;

/** The environment a role's container starts with: its literals, ConfigMaps and Secret refs. */
function environmentOf(role: string): Record<string, string> {
  const container = containerOf(role);
  const env: Record<string, string> = {};
  for (const { configMapRef } of container.envFrom)
    Object.assign(env, configMapData(configMapRef.name));
  for (const variable of container.env) {
    const fromSecret = variable.valueFrom?.secretKeyRef;
    env[variable.name] = fromSecret
      ? (SECRET_STAND_INS[fromSecret.key] as string)
      : (variable.value as string);
  }
  return env;
}

function configOf(role: string): ControlPlaneConfig {
  return resolveControlPlaneConfig({ ...environmentOf(role), HOME: '/tmp' });
}

/** RBAC rules as `group/resource:verb` strings, one per verb. */
const grants = (rules: Array<{ apiGroups: string[]; resources: string[]; verbs: string[] }>) =>
  rules
    .flatMap((rule) =>
      rule.apiGroups.flatMap((group) =>
        rule.resources.flatMap((resource) =>
          rule.verbs.map((verb) => `${group}/${resource}:${verb}`),
        ),
      ),
    )
    .sort();
const permitted = (permissions: readonly KubernetesPermission[]) =>
  permissions
    .flatMap(({ apiGroup, resource, verbs }) =>
      verbs.map((verb) => `${apiGroup}/${resource}:${verb}`),
    )
    .sort();

describe('deploy/kubernetes', () => {
  it('holds only kinds it means to, each valid against its OpenAPI schema', () => {
    expect(objects.length).toBeGreaterThan(10);
    for (const object of objects) {
      const Model = MODELS[object.kind];
      expect(Model, `a schema for ${object.kind}`).toBeDefined();
      expect(
        () => new (Model as NonNullable<typeof Model>)(structuredClone(object) as never).validate(),
        `${object.kind}/${object.metadata.name}`,
      ).not.toThrow();
    }
    // The validation is real: a broken Deployment fails it.
    const broken = structuredClone(named('Deployment', 'replix-api')) as RenderedObject & {
      spec: { replicas: unknown };
    };
    broken.spec.replicas = 'two';
    expect(() => new Deployment(broken as never).validate()).toThrow();
  });

  it('declares the namespaces the driver needs and puts the control plane in replix-system, labelled as part of Replix', () => {
    const driver = configOf('reconciler').kubernetes as NonNullable<
      ControlPlaneConfig['kubernetes']
    >;
    const instanceSpaces = instanceNamespaces(
      driver.namespacePattern,
      Object.keys(driver.hostPatterns),
    );
    expect(instanceSpaces).toEqual(['replix-eu-west-1']);
    expect(
      ofKind('Namespace')
        .map((namespace) => namespace.metadata.name)
        .sort(),
    ).toEqual(['replix-system', ...instanceSpaces].sort());
    for (const namespace of ofKind('Namespace')) {
      expect(
        namespace.metadata.labels?.['pod-security.kubernetes.io/enforce'],
        namespace.metadata.name,
      ).toBe('restricted');
    }
    for (const object of objects) {
      expect(object.metadata.labels?.['app.kubernetes.io/part-of'], object.metadata.name).toBe(
        'replix',
      );
      if (object.kind === 'Namespace') continue;
      // In the instance namespaces only the driver's Roles; everything else is the control plane's.
      const expected = ['Role', 'RoleBinding'].includes(object.kind)
        ? [...instanceSpaces, 'replix-system']
        : ['replix-system'];
      expect(expected, `${object.kind}/${object.metadata.name}`).toContain(
        object.metadata.namespace,
      );
    }
  });

  it('runs each role as its own Deployment of the runtime image', () => {
    expect(
      ofKind('Deployment')
        .map((d) => d.metadata.name)
        .sort(),
    ).toEqual(ROLE_NAMES.map((role) => `replix-${role}`).sort());
    const images = new Set<string>();
    for (const role of ROLE_NAMES) {
      const container = containerOf(role);
      expect(container.args).toEqual([role]);
      images.add(container.image);
    }
    expect([...images]).toEqual([`registry.example.com/replix/runtime@sha256:${'0'.repeat(64)}`]);
  });

  it('pins every image by digest, the instances’ image (REPLIX_K8S_IMAGE) the same one', () => {
    const pinned = /^[^@\s]+@sha256:[0-9a-f]{64}$/;
    const images = objects.flatMap((object) => {
      const spec = (
        object.spec as { template?: { spec?: PodSpec & { initContainers?: Container[] } } }
      )?.template?.spec;
      return [...(spec?.containers ?? []), ...(spec?.initContainers ?? [])].map((c) => c.image);
    });
    expect(images.length).toBe(ROLE_NAMES.length);
    for (const image of images) expect(image).toMatch(pinned);
    // The check is real: a tag, or a short digest, fails it.
    expect('registry.example.com/replix/runtime:0.1.0').not.toMatch(pinned);
    expect(`registry.example.com/replix/runtime@sha256:${'0'.repeat(63)}`).not.toMatch(pinned);
    for (const role of ['api', 'reconciler', 'builder'])
      expect(configOf(role).kubernetes?.image, role).toBe(images[0]);
  });

  it("decodes each role's environment with the control plane's own configuration", () => {
    const known = Object.keys(CONTROL_PLANE_VARIABLES.properties);
    for (const role of ROLE_NAMES) {
      for (const name of Object.keys(environmentOf(role))) {
        if (name === 'HOME') continue;
        expect(known, `${role}: ${name}`).toContain(name);
      }
      const config = configOf(role);
      // The built-in issuer is off: tokens come from the OIDC issuer.
      expect(config.oidc?.issuer, role).toBe('https://issuer.example.com');
      expect(config.databaseUrl, role).toBe(SECRET_STAND_INS.DATABASE_URL);
      expect(config.dataDir, role).toBe('/var/lib/replix');
    }
    // The roles that call the cluster run the Kubernetes driver; the other needs no driver.
    for (const role of ['api', 'reconciler', 'builder'])
      expect(configOf(role).kubernetes, role).toMatchObject({
        image: `registry.example.com/replix/runtime@sha256:${'0'.repeat(64)}`,
        artifactUrl: 'http://replix-api.replix-system.svc:4000',
      });
    expect(configOf('health-monitor').driver).toBe('process');
  });

  it("points every probe at the paths and ports the role's process serves", () => {
    for (const role of ROLE_NAMES) {
      const container = containerOf(role);
      const config = configOf(role);
      // The api answers on its own port; the other roles on their probe listener.
      const served =
        role === 'api'
          ? { host: config.host, port: config.port }
          : (config.probe as NonNullable<ControlPlaneConfig['probe']>);
      expect(served.host, `${role} listens where the kubelet reaches it`).toBe('0.0.0.0');
      for (const [probe, path] of [
        ['startupProbe', PROBE_PATHS.live],
        ['livenessProbe', PROBE_PATHS.live],
        ['readinessProbe', PROBE_PATHS.ready],
      ] as const) {
        const { httpGet } = container[probe];
        expect(httpGet.path, `${role} ${probe}`).toBe(path);
        const port = container.ports.find((p) => p.name === httpGet.port);
        expect(port?.containerPort, `${role} ${probe} port`).toBe(served.port);
      }
    }
  });

  it('serves the api through a Service that the instance pods fetch artifacts from', () => {
    const service = named('Service', 'replix-api') as RenderedObject & {
      spec: {
        selector: Record<string, string>;
        ports: Array<{ port: number; targetPort: string }>;
      };
    };
    const template = named('Deployment', 'replix-api').spec as {
      template: { metadata: { labels: Record<string, string> } };
    };
    expect(template.template.metadata.labels).toMatchObject(service.spec.selector);
    const [port] = service.spec.ports;
    expect(containerOf('api').ports.map((p) => p.name)).toContain(port?.targetPort);
    expect(configOf('reconciler').kubernetes?.artifactUrl).toBe(
      `http://replix-api.replix-system.svc:${port?.port}`,
    );
  });

  it('shares the data folder between the build Jobs and the api on a ReadWriteMany volume', () => {
    const claim = named('PersistentVolumeClaim', 'replix-data') as RenderedObject & {
      spec: { accessModes: string[] };
    };
    expect(claim.spec.accessModes).toEqual(['ReadWriteMany']);
    const dataMount = (role: string) => {
      const volume = podOf(role).volumes.find((v) => v.persistentVolumeClaim);
      const mount = containerOf(role).volumeMounts.find((m) => m.name === volume?.name);
      return volume && { claim: volume.persistentVolumeClaim?.claimName, mount };
    };
    const apiData = { claim: 'replix-data', mount: { name: 'data', mountPath: '/var/lib/replix' } };
    expect(dataMount('api')).toEqual(apiData);
    expect(configOf('api').dataDir).toBe(apiData.mount.mountPath);
    expect(dataMount('reconciler')?.mount?.readOnly).toBe(true);
    // The builder writes no artifact: its Jobs do.
    expect(dataMount('builder')).toBeUndefined();
    expect(dataMount('health-monitor')).toBeUndefined();

    // The Job the builder applies for a build, from the builder's own settings.
    const job = buildJobManifest(
      { buildId: 'b1', attempt: 1, launchId: 'abc123', databaseId: 'd1', accountId: 'a1' },
      buildJobOptionsOf(configOf('builder')),
    ) as unknown as RenderedObject & { spec: { template: { spec: PodSpec } } };
    expect(() => new Job(structuredClone(job) as never).validate()).not.toThrow();
    // Beside the claim and the Secret it mounts, which are namespaced.
    expect(job.metadata.namespace).toBe(claim.metadata.namespace);
    const pod = job.spec.template.spec;
    const [container] = pod.containers as [Container];
    const jobData = pod.volumes.find((v) => v.persistentVolumeClaim);
    expect(jobData?.persistentVolumeClaim?.claimName).toBe(claim.metadata.name);
    const jobMount = container.volumeMounts.find((m) => m.name === jobData?.name);
    // The artifact's file path (the build's image_uri) is one the api finds on its mount.
    expect(jobMount?.mountPath).toBe(apiData.mount.mountPath);
    expect(container.env.find((v) => v.name === 'REPLIX_DATA_DIR')?.value).toBe(
      apiData.mount.mountPath,
    );
    const secretRefs = (env: EnvVar[]) =>
      env.filter((v) => v.valueFrom?.secretKeyRef).map((v) => [v.name, v.valueFrom?.secretKeyRef]);
    // The store's URL from the operator's Secret, as the roles have it; the source from the
    // Job's own credential Secret; never the master key.
    const storeRef = secretRefs(containerOf('api').env).find(([name]) => name === 'DATABASE_URL');
    expect(secretRefs(container.env)).toEqual([
      storeRef,
      [
        'REPLIX_BUILD_SOURCE_URL',
        { name: `${job.metadata.name}-source`, key: 'REPLIX_BUILD_SOURCE_URL' },
      ],
      [
        'REPLIX_BUILD_SSH_PRIVATE_KEY',
        {
          name: `${job.metadata.name}-source`,
          key: 'REPLIX_BUILD_SSH_PRIVATE_KEY',
          optional: true,
        },
      ],
    ]);
    expect(JSON.stringify(job)).not.toContain('REPLIX_SECRET_KEY');
    expect(container.env.filter((v) => v.value !== undefined).map((v) => v.name)).not.toContain(
      'DATABASE_URL',
    );
  });

  it('grants, by namespaced Roles only, the reconciler exactly the API calls the driver makes, the api its log reads and the builder its Jobs', () => {
    type Rules = Array<{ apiGroups: string[]; resources: string[]; verbs: string[] }>;
    const rules = (name: string, namespace: string) => {
      const role = ofKind('Role').find(
        (one) => one.metadata.name === name && one.metadata.namespace === namespace,
      );
      if (!role) throw new Error(`no Role ${namespace}/${name}`);
      return (role as RenderedObject & { rules: Rules }).rules;
    };
    // rbac.yaml is what tools/kubernetes-rbac.ts writes from permissions.ts.
    expect(readFileSync(join(BASE, 'rbac.yaml'), 'utf8')).toBe(rbacYaml());
    const driver = configOf('reconciler').kubernetes as NonNullable<
      ControlPlaneConfig['kubernetes']
    >;
    const instanceSpaces = instanceNamespaces(
      driver.namespacePattern,
      Object.keys(driver.hostPatterns),
    );
    // Nothing cluster-wide.
    expect(objects.filter((o) => o.kind.startsWith('Cluster'))).toEqual([]);
    for (const namespace of instanceSpaces) {
      expect(grants(rules('replix-reconciler', namespace))).toEqual(
        permitted(KUBERNETES_PERMISSIONS),
      );
      expect(grants(rules('replix-api', namespace))).toEqual(permitted(LOG_READ_PERMISSIONS));
    }
    const all = new Set(permitted(KUBERNETES_PERMISSIONS));
    expect(permitted(LOG_READ_PERMISSIONS).filter((grant) => !all.has(grant))).toEqual([]);
    // The builder's only in the build namespace (REPLIX_K8S_BUILD_NAMESPACE).
    const buildNamespace = configOf('builder').kubernetes?.builds.namespace as string;
    expect(grants(rules('replix-builder', buildNamespace))).toEqual(permitted(BUILDER_PERMISSIONS));
    expect(
      ofKind('Role')
        .map((role) => `${role.metadata.namespace}/${role.metadata.name}`)
        .sort(),
    ).toEqual(
      [
        ...instanceSpaces.flatMap((ns) => [`${ns}/replix-api`, `${ns}/replix-reconciler`]),
        `${buildNamespace}/replix-builder`,
      ].sort(),
    );
    for (const role of ofKind('Role')) {
      expect(JSON.stringify(role)).not.toContain('*');
      expect(JSON.stringify(role)).not.toContain('resourceNames');
      // No one reads a Secret through the API: the driver applies and deletes its own by name.
      const secretVerbs = grants((role as RenderedObject & { rules: Rules }).rules).filter((g) =>
        g.startsWith('/secrets:'),
      );
      expect(secretVerbs, role.metadata.name).not.toContainEqual(
        expect.stringMatching(/:(get|list|watch)$/),
      );
    }
    // Each binding names the account its role's pods run as; no one else gets a token.
    const bound = ofKind('RoleBinding').map((binding) => {
      const { roleRef, subjects, metadata } = binding as RenderedObject & {
        roleRef: { kind: string; name: string };
        subjects: Array<{ kind: string; name: string; namespace: string }>;
      };
      expect(roleRef.name).toBe(metadata.name);
      return { namespace: metadata.namespace, role: `${roleRef.kind}/${roleRef.name}`, subjects };
    });
    const account = (name: string) => [
      { kind: 'ServiceAccount', name, namespace: 'replix-system' },
    ];
    const key = (b: { namespace?: string; role: string }) => `${b.namespace}/${b.role}`;
    expect(bound.sort((a, b) => key(a).localeCompare(key(b)))).toEqual(
      [
        ...instanceSpaces.flatMap((namespace) => [
          { namespace, role: 'Role/replix-api', subjects: account('replix-api') },
          { namespace, role: 'Role/replix-reconciler', subjects: account('replix-reconciler') },
        ]),
        {
          namespace: buildNamespace,
          role: 'Role/replix-builder',
          subjects: account('replix-builder'),
        },
      ].sort((a, b) => key(a).localeCompare(key(b))),
    );
    for (const role of ['api', 'reconciler', 'builder']) {
      expect(podOf(role).serviceAccountName).toBe(`replix-${role}`);
      expect(podOf(role).automountServiceAccountToken, role).toBeUndefined();
      const account = named('ServiceAccount', `replix-${role}`) as RenderedObject & {
        automountServiceAccountToken?: boolean;
      };
      expect(account.automountServiceAccountToken, role).toBeUndefined();
    }
    expect(podOf('health-monitor').serviceAccountName).toBe('replix-worker');
    expect(podOf('health-monitor').automountServiceAccountToken).toBe(false);
  });

  it('holds no secret: the Secret is the operator’s, referred to by name', () => {
    expect(ofKind('Secret')).toEqual([]);
    for (const role of ROLE_NAMES) {
      const secretRefs = containerOf(role)
        .env.filter((variable) => variable.valueFrom?.secretKeyRef)
        .map((variable) => [variable.name, variable.valueFrom?.secretKeyRef]);
      expect(secretRefs, role).toEqual([
        ['DATABASE_URL', { name: 'replix-secrets', key: 'DATABASE_URL' }],
        ['REPLIX_SECRET_KEY', { name: 'replix-secrets', key: 'REPLIX_SECRET_KEY' }],
      ]);
    }
    const literals = [
      ...ofKind('ConfigMap').flatMap((map) =>
        Object.entries((map as RenderedObject & { data: object }).data),
      ),
      ...ROLE_NAMES.flatMap((role) =>
        containerOf(role)
          .env.filter((variable) => variable.value !== undefined)
          .map((variable) => [variable.name, variable.value]),
      ),
    ];
    for (const [name, value] of literals) {
      expect(name).not.toMatch(/SECRET|PASSWORD|TOKEN|DATABASE_URL|STRIPE/);
      expect(String(value), name).not.toMatch(/:\/\/[^/\s]*@/);
    }
  });

  it('runs every container as non-root on a read-only root with no capabilities, within limits', () => {
    for (const role of ROLE_NAMES) {
      const pod = podOf(role);
      expect(pod.securityContext, role).toMatchObject({
        runAsNonRoot: true,
        runAsUser: 10001,
        runAsGroup: 10001,
        seccompProfile: { type: 'RuntimeDefault' },
      });
      const container = containerOf(role);
      expect(container.securityContext, role).toEqual({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
      });
      expect(Object.keys(container.resources.requests ?? {}).sort(), role).toEqual([
        'cpu',
        'memory',
      ]);
      expect(container.resources.limits?.memory, role).toBeDefined();
      // The only writable places: the data folder and /tmp (HOME).
      expect(container.volumeMounts.map((m) => m.mountPath).sort(), role).toEqual([
        '/tmp',
        '/var/lib/replix',
      ]);
    }
  });

  const kustomizeVersion = (() => {
    try {
      const out = execFileSync('kubectl', ['version', '--client'], { encoding: 'utf8' });
      return /Kustomize Version: v(\d+)/.exec(out)?.[1];
    } catch {
      return undefined;
    }
  })();
  it.skipIf(Number(kustomizeVersion ?? 0) < 5)(
    'renders the same objects as kubectl kustomize (skipped without a kubectl embedding kustomize 5)',
    () => {
      const rendered = parseAllDocuments(
        execFileSync('kubectl', ['kustomize', BASE], { encoding: 'utf8' }),
      ).map((document) => document.toJS() as RenderedObject);
      // kustomize names generated ConfigMaps (and every reference to them) by a content hash.
      const unhashed = JSON.parse(
        JSON.stringify(rendered).replace(/"(replix-(?:config|driver))-[a-z0-9]{10}"/g, '"$1"'),
      ) as RenderedObject[];
      const key = (object: RenderedObject) =>
        `${object.kind}/${object.metadata.namespace ?? ''}/${object.metadata.name}`;
      const byKey = (list: RenderedObject[]) =>
        Object.fromEntries(list.map((object) => [key(object), object]));
      expect(byKey(unhashed)).toEqual(byKey(objects));
    },
  );

  it.skipIf(Number(kustomizeVersion ?? 0) < 5)(
    "renders the operator guide's overlay over the base (skipped without a kubectl embedding kustomize 5)",
    () => {
      const guide = readFileSync(join(ROOT, 'docs/deploy/kubernetes.md'), 'utf8');
      const overlay = /```yaml\n# my-replix\/kustomization\.yaml\n([\s\S]*?)```/.exec(guide)?.[1];
      expect(overlay, 'the guide shows my-replix/kustomization.yaml').toBeDefined();
      // The overlay names the base as ../deploy/kubernetes: beside a checkout.
      const beside = mkdtempSync(join(tmpdir(), 'replix-overlay-'));
      try {
        symlinkSync(join(ROOT, 'deploy'), join(beside, 'deploy'));
        mkdirSync(join(beside, 'my-replix'));
        writeFileSync(join(beside, 'my-replix/kustomization.yaml'), overlay as string);
        const rendered = parseAllDocuments(
          execFileSync('kubectl', ['kustomize', join(beside, 'my-replix')], { encoding: 'utf8' }),
        ).map((document) => document.toJS() as RenderedObject);
        for (const object of rendered) {
          const Model = MODELS[object.kind] as NonNullable<(typeof MODELS)[string]>;
          expect(() => new Model(structuredClone(object) as never).validate()).not.toThrow();
        }
        const data = (prefix: string) =>
          (
            rendered.find(
              (o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith(prefix),
            ) as RenderedObject & { data: Record<string, string> }
          ).data;
        expect(data('replix-config-')).toMatchObject({
          REPLIX_OIDC_ISSUER: 'https://login.example.com/realms/replix',
          REPLIX_LOG_LEVEL: 'info',
        });
        expect(JSON.parse(data('replix-driver-').REPLIX_K8S_ENDPOINT_HOSTS as string)).toEqual({
          'eu-west-1': '{database}.eu-west-1.db.example.com',
        });
        expect(data('replix-driver-').REPLIX_DRIVER).toBe('kubernetes');
        // The guide's settings are ones the control plane accepts.
        const config = resolveControlPlaneConfig({
          ...data('replix-config-'),
          ...data('replix-driver-'),
          ...SECRET_STAND_INS,
          HOME: '/tmp',
        });
        expect(config.kubernetes?.route).toEqual({
          kind: 'httproute',
          gateway: { namespace: 'gateways', name: 'public' },
        });
        const claim = rendered.find((o) => o.kind === 'PersistentVolumeClaim') as RenderedObject & {
          spec: { storageClassName: string };
        };
        expect(claim.spec.storageClassName).toBe('nfs');
      } finally {
        rmSync(beside, { recursive: true, force: true });
      }
    },
  );
});

import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '@replix/runtime';
import { describe, expect, it } from 'vitest';
import { resolveControlPlaneConfig } from '../src/config.ts';

const BASE = {
  REPLIX_DATA_DIR: join(tmpdir(), 'replix-kubernetes-settings'),
  REPLIX_SECRET_KEY: '00'.repeat(32),
  REPLIX_DRIVER: 'kubernetes',
  REPLIX_K8S_IMAGE: 'registry.example.com/replix/runtime:1.0.0',
  REPLIX_K8S_ENDPOINT_HOSTS: JSON.stringify({ 'eu-west-1': '{database}.eu-west-1.db.example.com' }),
  REPLIX_K8S_ROUTE: 'httproute:replix-system/replix',
  REPLIX_K8S_ARTIFACT_URL: 'http://replix-api.replix-system.svc:4000/',
};

const resolve = (overrides: Record<string, string | undefined>) =>
  resolveControlPlaneConfig({ ...BASE, ...overrides } as Record<string, string>);

describe('REPLIX_DRIVER=kubernetes settings', () => {
  it('decodes every variable, with the defaults', () => {
    const config = resolve({});
    expect(config.driver).toBe('kubernetes');
    expect(config.kubernetes).toEqual({
      image: BASE.REPLIX_K8S_IMAGE,
      replixBin: '/app/packages/cli/bin/replix.js',
      namespacePattern: 'replix-{region}',
      hostPatterns: { 'eu-west-1': '{database}.eu-west-1.db.example.com' },
      route: { kind: 'httproute', gateway: { namespace: 'replix-system', name: 'replix' } },
      endpointScheme: 'https',
      artifactUrl: 'http://replix-api.replix-system.svc:4000',
      builds: {
        namespace: 'replix-system',
        artifactsClaim: 'replix-data',
        storeSecret: 'replix-secrets',
        deadlineSeconds: 1800,
      },
    });
    expect(
      resolve({
        REPLIX_K8S_BUILD_NAMESPACE: 'builds',
        REPLIX_K8S_ARTIFACTS_CLAIM: 'shared.data',
        REPLIX_K8S_STORE_SECRET: 'store',
        REPLIX_K8S_BUILD_DEADLINE_SECONDS: '600',
      }).kubernetes?.builds,
    ).toEqual({
      namespace: 'builds',
      artifactsClaim: 'shared.data',
      storeSecret: 'store',
      deadlineSeconds: 600,
    });
    const ingress = resolve({
      REPLIX_K8S_ROUTE: 'ingress:nginx',
      REPLIX_K8S_ENDPOINT_SCHEME: 'http',
      REPLIX_K8S_NAMESPACE_PATTERN: 'dbs-{region}',
    });
    expect(ingress.kubernetes).toMatchObject({
      route: { kind: 'ingress', ingressClassName: 'nginx' },
      endpointScheme: 'http',
      namespacePattern: 'dbs-{region}',
    });
    // The process driver needs none of them.
    expect(
      resolveControlPlaneConfig({
        REPLIX_DATA_DIR: BASE.REPLIX_DATA_DIR,
        REPLIX_SECRET_KEY: BASE.REPLIX_SECRET_KEY,
      }).kubernetes,
    ).toBeUndefined();
  });

  it('refuses missing and bad values with a ConfigError naming the variable', () => {
    const cases: Array<[Record<string, string | undefined>, RegExp]> = [
      // The operator creates the namespaces, so they cannot depend on accounts.
      [
        { REPLIX_K8S_NAMESPACE_PATTERN: 'replix-{account}' },
        /^REPLIX_K8S_NAMESPACE_PATTERN: .*\{account\}/,
      ],
      [{ REPLIX_K8S_IMAGE: undefined }, /^REPLIX_K8S_IMAGE is required/],
      [{ REPLIX_K8S_IMAGE: '  ' }, /^REPLIX_K8S_IMAGE is required/],
      [{ REPLIX_K8S_ENDPOINT_HOSTS: undefined }, /^REPLIX_K8S_ENDPOINT_HOSTS is required/],
      [
        { REPLIX_K8S_ENDPOINT_HOSTS: '{not json' },
        /^REPLIX_K8S_ENDPOINT_HOSTS must be a JSON object/,
      ],
      [{ REPLIX_K8S_ENDPOINT_HOSTS: '["a"]' }, /^REPLIX_K8S_ENDPOINT_HOSTS must be a JSON object/],
      [{ REPLIX_K8S_ENDPOINT_HOSTS: '{}' }, /^REPLIX_K8S_ENDPOINT_HOSTS must name at least one/],
      [
        { REPLIX_K8S_ENDPOINT_HOSTS: '{"eu-west-1": 5}' },
        /^REPLIX_K8S_ENDPOINT_HOSTS: the pattern/,
      ],
      [
        { REPLIX_K8S_ENDPOINT_HOSTS: '{"eu-west-1": "db.example.com"}' },
        /^REPLIX_K8S_ENDPOINT_HOSTS: .*\{database\}/,
      ],
      [
        { REPLIX_K8S_ENDPOINT_HOSTS: '{"eu-west-1": "Bad_Host/{database}"}' },
        /^REPLIX_K8S_ENDPOINT_HOSTS: .*DNS/,
      ],
      [{ REPLIX_K8S_ROUTE: undefined }, /^REPLIX_K8S_ROUTE is required/],
      [{ REPLIX_K8S_ROUTE: 'gateway:x' }, /^REPLIX_K8S_ROUTE must be/],
      [{ REPLIX_K8S_ROUTE: 'httproute:Bad_NS/gw' }, /^REPLIX_K8S_ROUTE must be/],
      [{ REPLIX_K8S_ROUTE: 'ingress:' }, /^REPLIX_K8S_ROUTE must be/],
      [{ REPLIX_K8S_ARTIFACT_URL: undefined }, /^REPLIX_K8S_ARTIFACT_URL is required/],
      [{ REPLIX_K8S_ARTIFACT_URL: 'ftp://x' }, /^REPLIX_K8S_ARTIFACT_URL must be/],
      [{ REPLIX_K8S_ARTIFACT_URL: 'http://user:pw@x' }, /^REPLIX_K8S_ARTIFACT_URL must be/],
      [{ REPLIX_K8S_ARTIFACT_URL: 'not a url' }, /^REPLIX_K8S_ARTIFACT_URL must be/],
      [{ REPLIX_K8S_NAMESPACE_PATTERN: 'Replix_{region}' }, /^REPLIX_K8S_NAMESPACE_PATTERN: /],
      [{ REPLIX_K8S_BUILD_NAMESPACE: 'Bad_NS' }, /^REPLIX_K8S_BUILD_NAMESPACE must be a DNS-1123/],
      [{ REPLIX_K8S_ARTIFACTS_CLAIM: 'data/..' }, /^REPLIX_K8S_ARTIFACTS_CLAIM must be/],
      [{ REPLIX_K8S_STORE_SECRET: 'Store_Secret' }, /^REPLIX_K8S_STORE_SECRET must be/],
      [{ REPLIX_K8S_BUILD_DEADLINE_SECONDS: '5' }, /REPLIX_K8S_BUILD_DEADLINE_SECONDS must be/],
      [
        { REPLIX_K8S_ENDPOINT_SCHEME: 'ftp' },
        /REPLIX_K8S_ENDPOINT_SCHEME must be "https" or "http"/,
      ],
    ];
    for (const [overrides, message] of cases) {
      let thrown: unknown;
      try {
        resolve(overrides);
      } catch (error) {
        thrown = error;
      }
      expect(thrown, JSON.stringify(overrides)).toBeInstanceOf(ConfigError);
      expect((thrown as Error).message, JSON.stringify(overrides)).toMatch(message);
    }
    expect(() => resolve({ REPLIX_DRIVER: 'docker' })).toThrow(
      'REPLIX_DRIVER must be "process" or "kubernetes", not "docker".',
    );
  });

  it('keep no checkpoints without a bucket, whatever else is set', () => {
    expect(resolve({}).kubernetes).not.toHaveProperty('checkpoints');
    const others = resolve({
      REPLIX_K8S_CHECKPOINT_PREFIX: '/not/read',
      REPLIX_K8S_CHECKPOINT_ENDPOINT: 'not a url',
      REPLIX_K8S_CHECKPOINT_SECRET: 'Not_Read',
    });
    expect(others.kubernetes).not.toHaveProperty('checkpoints');
    expect(resolve({ REPLIX_K8S_CHECKPOINT_BUCKET: '  ' }).kubernetes).not.toHaveProperty(
      'checkpoints',
    );
  });

  it('decode the checkpoint bucket, with its defaults', () => {
    expect(resolve({ REPLIX_K8S_CHECKPOINT_BUCKET: 'replix-checkpoints' }).kubernetes).toEqual(
      expect.objectContaining({
        checkpoints: { bucket: 'replix-checkpoints', prefix: 'replix/' },
      }),
    );
    expect(
      resolve({
        REPLIX_K8S_CHECKPOINT_BUCKET: 'replix-checkpoints',
        REPLIX_K8S_CHECKPOINT_PREFIX: 'prod/eu',
        REPLIX_K8S_CHECKPOINT_ENDPOINT: 'http://minio.storage.svc:9000',
        REPLIX_K8S_CHECKPOINT_REGION: 'eu-west-1',
        REPLIX_K8S_CHECKPOINT_PATH_STYLE: 'true',
        REPLIX_K8S_CHECKPOINT_SECRET: 'replix-checkpoints',
      }).kubernetes?.checkpoints,
    ).toEqual({
      bucket: 'replix-checkpoints',
      // A folder: the keys of prod/eu are not those of prod/eu-2.
      prefix: 'prod/eu/',
      endpoint: 'http://minio.storage.svc:9000',
      region: 'eu-west-1',
      pathStyle: true,
      secret: 'replix-checkpoints',
    });
    expect(
      resolve({
        REPLIX_K8S_CHECKPOINT_BUCKET: 'replix-checkpoints',
        REPLIX_K8S_CHECKPOINT_PATH_STYLE: 'false',
      }).kubernetes?.checkpoints?.pathStyle,
    ).toBe(false);
  });

  it('refuse a checkpoint setting S3 or Kubernetes would refuse, naming the variable', () => {
    const bucket = { REPLIX_K8S_CHECKPOINT_BUCKET: 'replix-checkpoints' };
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ REPLIX_K8S_CHECKPOINT_BUCKET: 'Bad_Bucket' }, /^REPLIX_K8S_CHECKPOINT_BUCKET: .*bucket/],
      [{ REPLIX_K8S_CHECKPOINT_BUCKET: 'a..b' }, /^REPLIX_K8S_CHECKPOINT_BUCKET: /],
      [{ ...bucket, REPLIX_K8S_CHECKPOINT_PREFIX: '/replix' }, /^REPLIX_K8S_CHECKPOINT_PREFIX: /],
      [
        { ...bucket, REPLIX_K8S_CHECKPOINT_ENDPOINT: 'ftp://minio' },
        /^REPLIX_K8S_CHECKPOINT_ENDPOINT: .*http/,
      ],
      [
        { ...bucket, REPLIX_K8S_CHECKPOINT_PATH_STYLE: 'yes' },
        /REPLIX_K8S_CHECKPOINT_PATH_STYLE must be "true" or "false"/,
      ],
      [
        { ...bucket, REPLIX_K8S_CHECKPOINT_SECRET: 'S3_Keys' },
        /^REPLIX_K8S_CHECKPOINT_SECRET must be a Kubernetes object name/,
      ],
    ];
    for (const [overrides, message] of cases) {
      let thrown: unknown;
      try {
        resolve(overrides);
      } catch (error) {
        thrown = error;
      }
      expect(thrown, JSON.stringify(overrides)).toBeInstanceOf(ConfigError);
      expect((thrown as Error).message, JSON.stringify(overrides)).toMatch(message);
    }
    // An endpoint can carry credentials: the message does not repeat it.
    expect(() =>
      resolve({ ...bucket, REPLIX_K8S_CHECKPOINT_ENDPOINT: 'minio:s3cr3t@storage' }),
    ).toThrow(expect.objectContaining({ message: expect.not.stringContaining('s3cr3t') }));
  });
});

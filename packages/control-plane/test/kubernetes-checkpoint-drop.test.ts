import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadS3Sdk } from '@replix/instance';
import { type LocalS3, type S3Event, startLocalS3, startPagingLocalS3 } from '@replix/testkit';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CheckpointBucket } from '../src/adapters/drivers/kubernetes/checkpoint-bucket.ts';
import { dropCheckpointObjects } from '../src/adapters/drivers/kubernetes/drop-checkpoint-objects.ts';
import type { KubernetesApi } from '../src/adapters/drivers/kubernetes/kubernetes-api.ts';
import { KubernetesDriver } from '../src/adapters/drivers/kubernetes/kubernetes-driver.ts';

// The Kubernetes driver's dropCheckpoints against a local S3 server (s3rver, in this process,
// on 127.0.0.1), with the real S3 client and the credentials of the process's environment, as
// the control plane's pods give them.

const BUCKET = 'checkpoints';
/** s3rver's own access key; the SDK's default chain reads it from the environment. */
const CREDENTIALS = { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' };
const SAVED_ENV = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN'] as const;

type S3Sdk = Awaited<ReturnType<typeof loadS3Sdk>>;

let root: string;
let server: LocalS3;
let endpoint: string;
let sdk: S3Sdk;
let raw: InstanceType<S3Sdk['S3Client']>;
const saved: Record<string, string | undefined> = {};
/** What the server did, in order: `ObjectCreated:Put`, `ObjectRemoved:Delete`… */
let events: readonly S3Event[] = [];
/** The log lines of the drivers made here. */
const logged: string[] = [];
const log = pino({ level: 'info' }, { write: (line: string) => logged.push(line) });

function bucketAt(url: string, overrides: Partial<CheckpointBucket> = {}): CheckpointBucket {
  return { bucket: BUCKET, prefix: 'replix/', endpoint: url, pathStyle: true, ...overrides };
}

/** A driver whose only part in use is its checkpoint bucket: no Kubernetes API is called. */
function driverWith(checkpoints: CheckpointBucket | undefined): KubernetesDriver {
  const unused = () => {
    throw new Error('dropCheckpoints must not call the Kubernetes API');
  };
  return new KubernetesDriver({
    api: new Proxy({}, { get: unused }) as KubernetesApi,
    log,
    instances: {
      image: 'replix:test',
      replixBin: 'replix.js',
      namespacePattern: 'replix-{region}',
      checkpoints,
    },
    endpoints: {
      hostPatterns: { 'eu-west-1': '{database}.eu-west-1.db.test' },
      route: { kind: 'ingress', ingressClassName: 'test' },
      scheme: 'http',
    },
    artifactDelivery: unused,
    placeOf: unused,
  });
}

async function put(keys: readonly string[], client = raw): Promise<void> {
  for (const key of keys) {
    await client.send(new sdk.PutObjectCommand({ Bucket: BUCKET, Key: key, Body: key }));
  }
}

async function keysUnder(prefix: string, client = raw): Promise<string[]> {
  const page = await client.send(new sdk.ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix }));
  return (page.Contents ?? []).map((object) => object.Key ?? '').sort();
}

/** A replica's finished checkpoint (its three files) under `folder`. */
const checkpointKeys = (folder: string, name: string) =>
  ['structure.json', 'buffers.bin', 'manifest.json'].map((file) => `${folder}${name}/${file}`);

/** What `promise` rejects with. */
async function failure(promise: Promise<unknown>): Promise<Error> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!(error instanceof Error)) throw new Error('expected a rejection with an Error');
  return error;
}

/** The address of a port on 127.0.0.1 that nothing listens on (any more). */
async function closedUrl(): Promise<string> {
  const listener = createServer();
  await once(listener.listen(0, '127.0.0.1'), 'listening');
  const { port } = listener.address() as AddressInfo;
  await new Promise((resolve) => listener.close(resolve));
  return `http://127.0.0.1:${port}`;
}

beforeAll(async () => {
  for (const name of SAVED_ENV) saved[name] = process.env[name];
  Object.assign(process.env, CREDENTIALS);
  delete process.env.AWS_SESSION_TOKEN;
  root = mkdtempSync(join(tmpdir(), 'replix-kubernetes-checkpoints-'));
  server = await startLocalS3(join(root, 's3'), [BUCKET]);
  events = server.events;
  endpoint = server.endpoint;
  sdk = await loadS3Sdk();
  raw = new sdk.S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true });
});

afterAll(async () => {
  raw?.destroy();
  await server?.close();
  if (root) rmSync(root, { recursive: true, force: true });
  for (const name of SAVED_ENV) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
});

describe("the Kubernetes driver's dropCheckpoints", () => {
  it("removes every replica's objects of the database, manifests first, and nothing else", async () => {
    const dropped = [
      ...checkpointKeys('replix/db_1/0/', '000000000001-1'),
      ...checkpointKeys('replix/db_1/0/', '000000000002-2'),
      ...checkpointKeys('replix/db_1/1/', '000000000001-1'),
      // An upload cut short: its manifest never went up.
      'replix/db_1/1/000000000003-3/buffers.bin',
    ];
    const kept = [
      // Another database, one whose id begins like this one's, and another prefix.
      ...checkpointKeys('replix/db_2/0/', '000000000001-1'),
      ...checkpointKeys('replix/db_12/0/', '000000000001-1'),
      ...checkpointKeys('other/db_1/0/', '000000000001-1'),
    ];
    await put([...dropped, ...kept]);
    const before = events.length;

    await driverWith(bucketAt(endpoint)).dropCheckpoints('db_1');

    expect(await keysUnder('replix/db_1/')).toEqual([]);
    const left = [...(await keysUnder('replix/')), ...(await keysUnder('other/'))];
    expect(left.sort()).toEqual([...kept].sort());
    const removed = events.slice(before).filter((event) => event.name.startsWith('ObjectRemoved'));
    expect(removed.map((event) => event.key).sort()).toEqual([...dropped].sort());
    // A checkpoint half removed is never listed: every manifest went before any other file.
    const isManifest = removed.map((event) => event.key.endsWith('/manifest.json'));
    expect(isManifest).toEqual([...isManifest].sort((a, b) => Number(b) - Number(a)));
    expect(logged.some((line) => line.includes('"objects":10'))).toBe(true);
  });

  it('is done at once when nothing is left (a repeated terminate)', async () => {
    const before = events.length;
    await driverWith(bucketAt(endpoint)).dropCheckpoints('db_1');
    await driverWith(bucketAt(endpoint)).dropCheckpoints('db_never_deployed');
    expect(events.slice(before)).toEqual([]);
  });

  it('removes under the bucket root when the prefix is empty, other databases kept', async () => {
    await put([...checkpointKeys('db_3/0/', 'a'), ...checkpointKeys('db_4/0/', 'a')]);
    await driverWith(bucketAt(endpoint, { prefix: '' })).dropCheckpoints('db_3');
    expect(await keysUnder('db_3/')).toEqual([]);
    expect(await keysUnder('db_4/')).toHaveLength(3);
  });

  it('touches no bucket without one', async () => {
    const before = events.length;
    await expect(driverWith(undefined).dropCheckpoints('db_2')).resolves.toBeUndefined();
    expect(events.slice(before)).toEqual([]);
    expect(await keysUnder('replix/db_2/')).toHaveLength(3);
  });

  it('refuses a database id that would reach outside its folder', async () => {
    for (const id of ['../other', 'db_1/0', '']) {
      await expect(driverWith(bucketAt(endpoint)).dropCheckpoints(id)).rejects.toThrow(
        'Invalid database id.',
      );
    }
    expect(await keysUnder('other/')).toHaveLength(3);
  });

  it('logs and throws a failure with its S3 code, never the endpoint or the credentials', async () => {
    const missing = await failure(
      driverWith(bucketAt(endpoint, { bucket: 'no-such-bucket' })).dropCheckpoints('db_2'),
    );
    expect(missing.message).toBe(
      'Removing the checkpoints of database db_2 from the S3 bucket failed while listing them (NoSuchBucket).',
    );
    // A port nothing listens on: the network's code.
    const refused = await failure(driverWith(bucketAt(await closedUrl())).dropCheckpoints('db_2'));
    expect(refused.message).toMatch(/failed while listing them \(ECONNREFUSED\)\.$/);
    for (const error of [missing, refused]) {
      expect(error.cause).toBeUndefined();
      expect(error.message).not.toContain('127.0.0.1');
    }
    const failures = logged.filter((line) => line.includes('removing the checkpoints failed'));
    expect(failures).toHaveLength(2);
    for (const line of failures) {
      expect(line).not.toContain('127.0.0.1');
      expect(line).not.toContain('S3RVER');
    }
  });

  it('lists page after page', { timeout: 30_000 }, async () => {
    const paging = await startPagingLocalS3(join(root, 's3-paging'), BUCKET);
    const client = new sdk.S3Client({
      region: 'us-east-1',
      endpoint: paging.endpoint,
      forcePathStyle: true,
    });
    try {
      const keys = [0, 1, 2].flatMap((ordinal) =>
        checkpointKeys(`replix/db_5/${ordinal}/`, '000000000001-1'),
      );
      await put([...keys, ...checkpointKeys('replix/db_6/0/', 'a')], client);
      const removed = await dropCheckpointObjects(bucketAt(paging.endpoint), 'db_5', log, {
        listPageSize: 2,
      });
      expect(removed).toBe(9);
      expect(await keysUnder('replix/', client)).toEqual(
        checkpointKeys('replix/db_6/0/', 'a').sort(),
      );
    } finally {
      client.destroy();
      await paging.close();
    }
  });
});

import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { ConfigError } from '@replix/runtime';
import { type LocalS3, type S3Event, startLocalS3, startPagingLocalS3 } from '@replix/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type S3CheckpointSettings,
  s3CheckpointSettingsFromEnv,
} from '../src/snapshot/s3-checkpoint-settings.ts';
import { type S3CheckpointOptions, S3Checkpoints } from '../src/snapshot/s3-checkpoints.ts';

const BUCKET = 'checkpoints';
const MIB = 1024 * 1024;
const PART_SIZE = 5 * MIB;

let root: string;
let server: LocalS3;
let endpoint: string;
/** What the server stored, in order: `ObjectCreated:Put`, `ObjectCreated:Post` (multipart)… */
let events: readonly S3Event[] = [];
const opened: S3Checkpoints[] = [];
let raw: S3Client;
let prefixes = 0;

function settings(prefix: string, bucket = BUCKET): S3CheckpointSettings {
  return {
    bucket,
    prefix,
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  };
}

/** Checkpoints under a prefix no other test uses. */
function checkpoints(options: S3CheckpointOptions = {}, prefix = `replix/db_${++prefixes}/`) {
  const store = new S3Checkpoints(settings(prefix), { partSizeBytes: PART_SIZE, ...options });
  opened.push(store);
  return { store, prefix };
}

/** A local checkpoint folder with the three files; `bufferBytes` of random buffers. */
function checkpointFolder(name: string, bufferBytes = 1024): string {
  const folder = join(root, 'local', name);
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, 'structure.json'), JSON.stringify({ tables: ['t'], name }));
  writeFileSync(join(folder, 'buffers.bin'), randomBytes(bufferBytes));
  writeFileSync(join(folder, 'manifest.json'), JSON.stringify({ format: 1, name }));
  return folder;
}

async function keysUnder(prefix: string): Promise<string[]> {
  const page = await raw.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix }));
  return (page.Contents ?? []).map((object) => object.Key ?? '').sort();
}

/** The message of what `promise` rejects with. */
async function failure(promise: Promise<unknown>): Promise<Error> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!(error instanceof Error)) throw new Error('expected a rejection with an Error');
  return error;
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'replix-s3-checkpoints-'));
  server = await startLocalS3(join(root, 's3'), [BUCKET]);
  events = server.events;
  endpoint = server.endpoint;
  const { bucket: _, prefix: __, ...client } = settings('');
  raw = new S3Client(client);
});

afterAll(async () => {
  for (const store of opened) store.close();
  raw?.destroy();
  await server?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

describe('S3Checkpoints', () => {
  it('uploads a checkpoint, buffers in parts and the manifest last, and downloads it byte for byte', async () => {
    const { store, prefix } = checkpoints();
    const name = '000000000042-1764571234567';
    const folder = checkpointFolder(name, 2 * PART_SIZE + 123_457);
    const before = events.length;

    await store.upload(folder, name);

    const stored = events.slice(before);
    expect(stored.map((event) => event.key)).toEqual([
      expect.not.stringMatching(/manifest/),
      expect.not.stringMatching(/manifest/),
      `${prefix}${name}/manifest.json`,
    ]);
    // Completing a multipart upload is a POST; a small file is one PUT.
    expect(stored.find((event) => event.key.endsWith('buffers.bin'))?.name).toBe(
      'ObjectCreated:Post',
    );
    expect(stored.find((event) => event.key.endsWith('structure.json'))?.name).toBe(
      'ObjectCreated:Put',
    );
    expect(await store.list()).toEqual([name]);

    const copy = join(root, 'downloaded', name);
    await store.download(name, copy);
    expect(readdirSync(copy).sort()).toEqual(['buffers.bin', 'manifest.json', 'structure.json']);
    for (const file of readdirSync(folder)) {
      expect(readFileSync(join(copy, file)).equals(readFileSync(join(folder, file))), file).toBe(
        true,
      );
    }
  });

  it('does not list a checkpoint whose manifest never went up, nor download it', async () => {
    const { store, prefix } = checkpoints();
    await store.upload(checkpointFolder('000000000001-1'), '000000000001-1');
    // An upload interrupted after its buffers.
    await raw.send(
      new PutObjectCommand({
        Bucket: BUCKET,
        Key: `${prefix}000000000002-2/buffers.bin`,
        Body: 'partial',
      }),
    );

    expect(await store.list()).toEqual(['000000000001-1']);
    const error = await failure(store.download('000000000002-2', join(root, 'unfinished')));
    expect(error.message).toContain('000000000002-2');
    expect(error.message).toContain('manifest.json');
  });

  it('refuses to upload a folder without a manifest', async () => {
    const { store, prefix } = checkpoints();
    const folder = checkpointFolder('000000000003-3');
    rmSync(join(folder, 'manifest.json'));

    await expect(store.upload(folder, '000000000003-3')).rejects.toThrow(/unfinished/);
    expect(await keysUnder(prefix)).toEqual([]);
  });

  it('lists page after page', async () => {
    const paging = await startPagingLocalS3(join(root, 's3-paging'), BUCKET);
    const store = new S3Checkpoints(
      { ...settings('replix/paged/'), endpoint: paging.endpoint },
      { listPageSize: 2 },
    );
    try {
      const names = ['000000000001-1', '000000000002-2', '000000000003-3'];
      for (const name of names.toReversed()) await store.upload(checkpointFolder(name), name);

      // Nine keys in pages of two: five pages, the manifests on several of them.
      expect(await store.list()).toEqual(names);
    } finally {
      store.close();
      await paging.close();
    }
  });

  it('prunes all but the newest checkpoints, every object of the others', async () => {
    const { store, prefix } = checkpoints();
    const names = ['000000000007-10', '000000000008-20', '000000000009-30', '000000000010-40'];
    for (const name of names) await store.upload(checkpointFolder(name), name);

    expect(await store.prune(2)).toEqual(names.slice(0, 2));
    expect(await store.list()).toEqual(names.slice(2));
    const left = await keysUnder(prefix);
    expect(left).toHaveLength(6);
    expect(
      left.every((key) => names.slice(2).some((name) => key.startsWith(`${prefix}${name}/`))),
    ).toBe(true);

    expect(await store.prune(5)).toEqual([]);
    await expect(store.prune(-1)).rejects.toThrow(RangeError);
  });

  it('removes every object of a checkpoint, the manifest first', async () => {
    const { store, prefix } = checkpoints();
    await store.upload(checkpointFolder('000000000001-1'), '000000000001-1');
    await store.upload(checkpointFolder('000000000002-2'), '000000000002-2');
    const before = events.length;

    await store.remove('000000000001-1');

    const deleted = events.slice(before).filter((event) => event.name === 'ObjectRemoved:Delete');
    expect(deleted.map((event) => event.key)).toHaveLength(3);
    expect(deleted[0]?.key).toBe(`${prefix}000000000001-1/manifest.json`);
    expect(await store.list()).toEqual(['000000000002-2']);
    expect((await keysUnder(prefix)).filter((key) => key.includes('000000000001-1'))).toEqual([]);
  });

  it('sees only the checkpoints under its own prefix', async () => {
    const one = checkpoints({}, 'replix/db_1x/').store;
    const other = checkpoints({}, 'replix/db_1x2/').store;
    const atRoot = checkpoints({}, '').store;
    await one.upload(checkpointFolder('000000000001-1'), '000000000001-1');
    await other.upload(checkpointFolder('000000000002-2'), '000000000002-2');
    await atRoot.upload(checkpointFolder('000000000003-3'), '000000000003-3');

    expect(await one.list()).toEqual(['000000000001-1']);
    expect(await other.list()).toEqual(['000000000002-2']);
    expect(await atRoot.list()).toEqual(['000000000003-3']);
  });

  it('refuses a name that could leave its key or folder', async () => {
    const { store, prefix } = checkpoints();
    const folder = checkpointFolder('good');
    for (const name of ['..', '.', 'a/b', '../x', 'a b', '']) {
      await expect(store.upload(folder, name), name).rejects.toThrow(/Invalid checkpoint name/);
      await expect(store.download(name, join(root, 'bad')), name).rejects.toThrow(
        /Invalid checkpoint name/,
      );
      await expect(store.remove(name), name).rejects.toThrow(/Invalid checkpoint name/);
    }
    expect(await keysUnder(prefix)).toEqual([]);
  });

  it('says which checkpoint is missing when downloading one that is not there', async () => {
    const { store } = checkpoints();
    const error = await failure(store.download('000000000099-9', join(root, 'missing')));
    expect(error.message).toMatch(/Checkpoint "000000000099-9" has no manifest\.json/);
  });

  it('names the operation and the S3 error code, not the endpoint, when S3 refuses', async () => {
    const store = new S3Checkpoints(settings('', 'no-such-bucket'));
    opened.push(store);

    const listing = await failure(store.list());
    expect(listing.message).toBe('S3 checkpoints: listing the checkpoints failed (NoSuchBucket).');
    expect(listing.cause).toBeInstanceOf(Error);

    const upload = await failure(
      store.upload(checkpointFolder('000000000005-5'), '000000000005-5'),
    );
    expect(upload.message).toMatch(
      /^S3 checkpoints: uploading checkpoint "000000000005-5" .*\(NoSuchBucket\)\.$/,
    );
    expect(upload.message).not.toContain('127.0.0.1');
  });

  it('names the network error code, not the address, when S3 cannot be reached', async () => {
    const closed = await startLocalS3(join(root, 's3-closed'));
    await closed.close();
    const store = new S3Checkpoints({ ...settings(''), endpoint: closed.endpoint });
    opened.push(store);

    const error = await failure(store.list());
    expect(error.message).toBe('S3 checkpoints: listing the checkpoints failed (ECONNREFUSED).');
    expect(String((error.cause as Error).message)).toContain('127.0.0.1');
  });
});

describe('s3CheckpointSettingsFromEnv', () => {
  const good = {
    REPLIX_CHECKPOINT_S3_BUCKET: 'replix-checkpoints.prod',
    REPLIX_CHECKPOINT_S3_PREFIX: 'replix/db_123/',
    REPLIX_CHECKPOINT_S3_ENDPOINT: 'https://minio.storage.svc:9000',
    REPLIX_CHECKPOINT_S3_PATH_STYLE: 'true',
  };

  it('reads the variables, with us-east-1 as the default region', () => {
    expect(s3CheckpointSettingsFromEnv(good)).toEqual({
      bucket: 'replix-checkpoints.prod',
      prefix: 'replix/db_123/',
      endpoint: 'https://minio.storage.svc:9000',
      region: 'us-east-1',
      forcePathStyle: true,
    });
    expect(
      s3CheckpointSettingsFromEnv({
        REPLIX_CHECKPOINT_S3_BUCKET: 'abc',
        REPLIX_CHECKPOINT_S3_REGION: 'eu-west-3',
      }),
    ).toEqual({
      bucket: 'abc',
      prefix: '',
      endpoint: undefined,
      region: 'eu-west-3',
      forcePathStyle: undefined,
    });
  });

  it('is undefined without a bucket', () => {
    const { REPLIX_CHECKPOINT_S3_BUCKET: _, ...rest } = good;
    expect(s3CheckpointSettingsFromEnv(rest)).toBeUndefined();
    expect(
      s3CheckpointSettingsFromEnv({ ...good, REPLIX_CHECKPOINT_S3_BUCKET: '' }),
    ).toBeUndefined();
  });

  it.each([
    [
      'a bucket with capitals',
      { REPLIX_CHECKPOINT_S3_BUCKET: 'Replix' },
      /REPLIX_CHECKPOINT_S3_BUCKET "Replix"/,
    ],
    ['a bucket too short', { REPLIX_CHECKPOINT_S3_BUCKET: 'ab' }, /REPLIX_CHECKPOINT_S3_BUCKET/],
    [
      'a bucket too long',
      { REPLIX_CHECKPOINT_S3_BUCKET: 'a'.repeat(64) },
      /REPLIX_CHECKPOINT_S3_BUCKET/,
    ],
    [
      'a bucket with an underscore',
      { REPLIX_CHECKPOINT_S3_BUCKET: 'my_bucket' },
      /REPLIX_CHECKPOINT_S3_BUCKET/,
    ],
    [
      'a bucket ending in a hyphen',
      { REPLIX_CHECKPOINT_S3_BUCKET: 'bucket-' },
      /REPLIX_CHECKPOINT_S3_BUCKET/,
    ],
    [
      'an endpoint without a scheme',
      { REPLIX_CHECKPOINT_S3_ENDPOINT: 'minio:9000' },
      /REPLIX_CHECKPOINT_S3_ENDPOINT/,
    ],
    [
      'an ftp endpoint',
      { REPLIX_CHECKPOINT_S3_ENDPOINT: 'ftp://minio' },
      /REPLIX_CHECKPOINT_S3_ENDPOINT/,
    ],
    [
      'a prefix from the root',
      { REPLIX_CHECKPOINT_S3_PREFIX: '/replix/' },
      /REPLIX_CHECKPOINT_S3_PREFIX/,
    ],
    [
      'a path style that is no boolean',
      { REPLIX_CHECKPOINT_S3_PATH_STYLE: 'yes' },
      /REPLIX_CHECKPOINT_S3_PATH_STYLE/,
    ],
  ])('refuses %s with a ConfigError', (_, change, message) => {
    const read = () => s3CheckpointSettingsFromEnv({ ...good, ...change });
    expect(read).toThrow(ConfigError);
    expect(read).toThrow(message);
  });

  it('does not repeat a refused endpoint, which can carry credentials', () => {
    const read = () =>
      s3CheckpointSettingsFromEnv({
        ...good,
        REPLIX_CHECKPOINT_S3_ENDPOINT: 'minio://user:secret@host',
      });
    expect(read).toThrow(ConfigError);
    expect(read).not.toThrow(/secret/);
  });
});

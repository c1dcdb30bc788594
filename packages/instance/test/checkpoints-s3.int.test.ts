import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type LocalS3, startLocalS3 } from '@replix/testkit';
import { testPostgres } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { S3CheckpointSettings } from '../src/snapshot/s3-checkpoint-settings.ts';
import { S3Checkpoints } from '../src/snapshot/s3-checkpoints.ts';
import { json, startTestInstance, type TestInstance } from './instance-helpers.ts';
import {
  createReplicationDatabase,
  eventually,
  instanceRows,
  RandomWriter,
  replicationConfig,
  sourceRows,
} from './replication-harness.ts';

const BUCKET = 'checkpoints';
let root: string;
let server: LocalS3;
let endpoint: string;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'replix-s3-instance-'));
  server = await startLocalS3(join(root, 's3'), [BUCKET]);
  endpoint = server.endpoint;
});
afterAll(async () => {
  await server?.close();
  rmSync(root, { recursive: true, force: true });
});

const detailOf = (served: TestInstance) =>
  json(
    fetch(`${served.url}/health/detail`, {
      headers: { Authorization: `Bearer ${served.adminKey}` },
    }),
  );

describe('checkpoints in an S3 bucket', () => {
  it('a replica on another node, with an empty folder, starts from the checkpoint another wrote', {
    timeout: 60_000,
  }, async () => {
    const db = await createReplicationDatabase(testPostgres(), 'postgres');
    const writer = new RandomWriter(db, 'postgres', 37);
    for (let i = 0; i < 30; i++) await writer.transaction();
    const s3: S3CheckpointSettings = {
      bucket: BUCKET,
      prefix: `replix/${db.name}/`,
      endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    };
    const checkpoints = (node: string) => ({
      dir: join(root, node),
      schedule: { intervalMs: 1000, changes: 1000 },
      s3,
    });
    const converged = (served: TestInstance) =>
      eventually(async () =>
        expect(await instanceRows(served, 'items')).toEqual(await sourceRows(db, 'items')),
      );

    const first = await startTestInstance(db.url, replicationConfig('postgres'), {
      replicationId: db.name,
      checkpoints: checkpoints('node-a'),
    });
    try {
      expect((await detailOf(first)).snapshot.origin).toBe('source');
      await writer.runFor(1000);
      await converged(first);
    } finally {
      await first.close();
    }
    const bucket = new S3Checkpoints(s3);
    try {
      const names = await bucket.list();
      expect(names.length).toBeGreaterThanOrEqual(1);
      // What node A wrote last is what went up last.
      expect(names.at(-1)).toBe(readdirSync(join(root, 'node-a')).sort().at(-1));
    } finally {
      bucket.close();
    }

    await writer.runFor(500);
    const second = await startTestInstance(db.url, replicationConfig('postgres'), {
      replicationId: db.name,
      checkpoints: checkpoints('node-b'),
    });
    try {
      const detail = await detailOf(second);
      expect(detail.snapshot.origin).toBe('checkpoint');
      await converged(second);
      await writer.runFor(500);
      await converged(second);
    } finally {
      await second.close();
    }

    // The bucket out of reach: node B's own folder still serves its start.
    const third = await startTestInstance(db.url, replicationConfig('postgres'), {
      replicationId: db.name,
      checkpoints: { ...checkpoints('node-b'), s3: { ...s3, endpoint: 'http://127.0.0.1:9' } },
    });
    try {
      expect((await detailOf(third)).snapshot.origin).toBe('checkpoint');
      await converged(third);
    } finally {
      await third.close();
    }
  });
});

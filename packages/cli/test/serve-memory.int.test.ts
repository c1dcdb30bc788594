import { spawn } from 'node:child_process';
import { testMariaDb } from '@replix/testkit/vitest';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPLIX_BIN, serveProcess } from './serve-process.ts';

async function memoryOf(ready: Record<string, string>): Promise<Record<string, unknown>> {
  const response = await fetch(`${ready.url}/health/detail`, {
    headers: { Authorization: `Bearer ${ready.adminKey}` },
  });
  return ((await response.json()) as { memory: Record<string, unknown> }).memory;
}

describe('replix serve --memory-mb', () => {
  let sourceUrl: string;

  beforeAll(async () => {
    const db = await testMariaDb().createDatabase(
      'CREATE TABLE t (id INT PRIMARY KEY); INSERT INTO t VALUES (1);',
    );
    sourceUrl = db.url;
  });

  it('bounds the heap to 70% of the size and caps the snapshot at it', async () => {
    const server = await serveProcess(['--source', sourceUrl, '--memory-mb', '512']);
    try {
      expect(await memoryOf(server.ready)).toMatchObject({ heap_limit_mb: 358, cap_mb: 512 });
    } finally {
      // SIGTERM reaches the instance through the launcher, which exits as it does.
      expect(await server.stop()).toBe(0);
    }
  });

  it('takes the size from REPLIX_MEMORY_MB too', async () => {
    const server = await serveProcess(['--source', sourceUrl], {
      ...process.env,
      REPLIX_MEMORY_MB: '1024',
    });
    try {
      expect(await memoryOf(server.ready)).toMatchObject({ heap_limit_mb: 716, cap_mb: 1024 });
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  it('refuses a size that is not a whole number of MB of at least 128', async () => {
    const child = spawn(
      process.execPath,
      [REPLIX_BIN, 'serve', '--source', sourceUrl, '--memory-mb', '64'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk;
    });
    const code = await new Promise((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    expect(stderr).toContain('--memory-mb (or REPLIX_MEMORY_MB) must be a whole number of MB');
  });
});

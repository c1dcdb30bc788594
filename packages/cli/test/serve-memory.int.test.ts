import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { testMariaDb } from '@replix/testkit/vitest';
import { beforeAll, describe, expect, it } from 'vitest';

const bin = fileURLToPath(new URL('../bin/replix.js', import.meta.url));

/** Runs `replix serve` and waits for its ready line. */
async function serve(args: string[], env: NodeJS.ProcessEnv = process.env) {
  const child = spawn(process.execPath, [bin, 'serve', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env,
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  const ready = await new Promise<Record<string, string>>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', (line) => resolve(JSON.parse(line)));
    exited.then((code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
  });
  return {
    ready,
    async stop() {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

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
    const server = await serve(['--source', sourceUrl, '--memory-mb', '512']);
    try {
      expect(await memoryOf(server.ready)).toMatchObject({ heap_limit_mb: 358, cap_mb: 512 });
    } finally {
      // SIGTERM reaches the instance through the launcher, which exits as it does.
      expect(await server.stop()).toBe(0);
    }
  });

  it('takes the size from REPLIX_MEMORY_MB too', async () => {
    const server = await serve(['--source', sourceUrl], {
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
      [bin, 'serve', '--source', sourceUrl, '--memory-mb', '64'],
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

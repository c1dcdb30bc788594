import { spawn } from 'node:child_process';
import { testMariaDb, testPostgres } from '@replix/testkit/vitest';
import { describe, expect, it } from 'vitest';
import { REPLIX_BIN, serveProcess } from './serve-process.ts';

describe('replix serve', () => {
  it.each([
    ['MariaDB', () => testMariaDb()],
    ['PostgreSQL', () => testPostgres()],
  ])('serves a %s source and prints one ready line with a working key', async (_name, admin) => {
    const db = await admin().createDatabase(
      "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10)); INSERT INTO t VALUES (1, 'a');",
    );
    const server = await serveProcess(['--source', db.url, '--port', '0']);
    try {
      const started = Date.now();
      expect(Object.keys(server.ready).sort()).toEqual([
        'adminKey',
        'apiKey',
        'event',
        'time',
        'url',
      ]);
      // When it became ready (before this line was read), in milliseconds since the epoch.
      expect(server.ready.time).toBeLessThanOrEqual(started);
      expect(server.ready.time).toBeGreaterThan(1_600_000_000_000);
      expect(server.ready.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(server.ready.apiKey).toMatch(/^rxk_[0-9a-f]{16}\.[A-Za-z0-9_-]{43}$/);
      expect(server.ready.adminKey).toMatch(/^rxk_[0-9a-f]{16}\.[A-Za-z0-9_-]{43}$/);
      const response = await fetch(`${server.ready.url}/query`, {
        method: 'POST',
        body: 't { id v }',
        headers: { Authorization: `Bearer ${server.ready.apiKey}` },
      });
      expect(((await response.json()) as { data: unknown }).data).toEqual([{ id: 1, v: 'a' }]);
      // The query key may not reload; the admin key may.
      const reload = (key: string | undefined) =>
        fetch(`${server.ready.url}/reload`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${key}` },
        });
      expect((await reload(server.ready.apiKey)).status).toBe(403);
      expect((await reload(server.ready.adminKey)).status).toBe(202);
    } finally {
      expect(await server.stop()).toBe(0);
    }
    // Logs are JSON lines on stderr.
    const logLines = server
      .stderr()
      .split('\n')
      .filter((line) => line.startsWith('{'));
    expect(logLines.length).toBeGreaterThan(0);
    for (const line of logLines) expect(() => JSON.parse(line)).not.toThrow();
  });

  it('fails with a clear message and exit code 1 for a bad source, leaking no password', async () => {
    const child = spawn(
      process.execPath,
      [REPLIX_BIN, 'serve', '--source', 'mysql://root:s3cret@127.0.0.1:1/db'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk;
    });
    const code = await new Promise((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    expect(stderr).toContain('replix serve:');
    expect(stderr).not.toContain('s3cret');
  });
});

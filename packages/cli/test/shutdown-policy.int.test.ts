import { spawn } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { mariaDbAdmin, startDedicatedServer } from '@replix/testkit';
import { describe, expect, it } from 'vitest';

const bin = fileURLToPath(new URL('../bin/replix.js', import.meta.url));

describe('cdc_reconnect_policy: shutdown', () => {
  it('exits non-zero with a clear log line when the source goes away', {
    timeout: 60_000,
  }, async () => {
    const server = await startDedicatedServer('mariadb');
    try {
      const db = await mariaDbAdmin(server.url).createDatabase(
        'CREATE TABLE t (id INT PRIMARY KEY); INSERT INTO t VALUES (1);',
      );
      const config = join(tmpdir(), `replix-shutdown-${process.pid}.json`);
      writeFileSync(
        config,
        JSON.stringify({ cdc_reconnect_policy: 'shutdown', sync: { interval: 0.1 } }),
      );
      const child = spawn(
        process.execPath,
        [bin, 'serve', '--source', db.url, '--config', config],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk;
      });
      const exited = new Promise<number | null>((resolve) =>
        child.once('exit', (code) => resolve(code)),
      );
      await new Promise<void>((resolve, reject) => {
        createInterface({ input: child.stdout }).once('line', () => resolve());
        child.once('exit', () => reject(new Error(`serve exited early: ${stderr}`)));
      });
      await server.stop();
      expect(await exited).toBe(1);
      const lines = stderr
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line));
      expect(lines).toContainEqual(
        expect.objectContaining({
          level: 50,
          msg: 'lost the source change stream; cdc_reconnect_policy is shutdown',
        }),
      );
      expect(stderr).toContain('replix serve: stopping:');
    } finally {
      await server.stop().catch(() => {});
      rmSync(join(tmpdir(), `replix-shutdown-${process.pid}.json`), { force: true });
    }
  });
});

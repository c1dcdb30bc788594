import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, type StartedReplix, startEnvironment, startReplix } from './replix-start.ts';

describe('the walkthrough (docs/walkthrough.md) against npx replix start', () => {
  let running: StartedReplix;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    env = await startEnvironment();
    running = await startReplix(env);
  }, 120_000);

  afterAll(async () => {
    await running?.stop();
    if (env?.REPLIX_DATA_DIR) rmSync(env.REPLIX_DATA_DIR, { recursive: true, force: true });
  });

  it('runs from token to delete with curl, as documented', { timeout: 300_000 }, async () => {
    const { stdout } = await promisify(execFile)('bash', [join(ROOT, 'tools/walkthrough.sh')], {
      env,
      cwd: ROOT,
      maxBuffer: 16 * 1024 * 1024,
      timeout: 280_000,
    }).catch((error: { stdout?: string; stderr?: string; message: string }) => {
      throw new Error(`${error.message}\n${error.stdout ?? ''}\n${error.stderr ?? ''}`);
    });
    expect(stdout).toContain('deleted key: 401');
    expect(stdout).toContain('walkthrough: done');
    expect(stdout).toContain('database.provision');
  });
});

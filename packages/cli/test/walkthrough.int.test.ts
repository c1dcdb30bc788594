import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort } from '@replix/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const bin = join(root, 'packages/cli/bin/replix.js');

/** Waits for the line `replix start` prints when the control plane listens. */
function waitForBanner(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ctrl-C stops it.')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`replix start exited with ${code}`)));
  });
}

describe('the walkthrough (docs/walkthrough.md) against npx replix start', () => {
  let child: ChildProcess;
  let dataDir: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'replix-walkthrough-'));
    const [apiPort, demoPort] = [await freePort(), await freePort()];
    env = {
      ...process.env,
      PATH: `${dirname(process.execPath)}:${join(root, 'node_modules/.bin')}:${process.env.PATH}`,
      REPLIX_DATA_DIR: dataDir,
      REPLIX_API_PORT: String(apiPort),
      REPLIX_DEMO_PORT: String(demoPort),
      API: `http://127.0.0.1:${apiPort}/v1`,
      DEMO_PORT: String(demoPort),
      REPLIX_LOG_LEVEL: 'warn',
    };
    child = spawn(process.execPath, [bin, 'start'], {
      env,
      cwd: root,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await waitForBanner(child);
  }, 60_000);

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('runs from token to delete with curl, as documented', { timeout: 300_000 }, async () => {
    const { stdout } = await promisify(execFile)('bash', [join(root, 'tools/walkthrough.sh')], {
      env,
      cwd: root,
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

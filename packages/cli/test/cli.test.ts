import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const bin = fileURLToPath(new URL('../bin/replix.js', import.meta.url));

async function replix(...args: string[]) {
  try {
    const { stdout, stderr } = await run(process.execPath, [bin, ...args]);
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

// Each test starts a CLI process: on a loaded 2-core machine that can
// pass Vitest's 5 s default, so these allow 30 s.
describe('replix command', { timeout: 30_000 }, () => {
  it('prints usage with --help and exits 0', async () => {
    const result = await replix('--help');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Usage: replix \[options\] \[command\]/);
    expect(result.stdout).toContain('start');
  });

  it('rejects an unknown command with a usage error and exit code 2', async () => {
    const result = await replix('frobnicate');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("unknown command 'frobnicate'");
  });
});

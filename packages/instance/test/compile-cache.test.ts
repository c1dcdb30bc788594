import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const SHARE = new URL('../src/compile-cache.ts', import.meta.url).href;
/** Any TypeScript module: a worker importing it must strip its types or find them stripped. */
const MODULE = new URL('../src/snapshot/instance-memory.ts', import.meta.url).href;

/**
 * In a fresh Node process whose compile cache is named in the environment (as bin/replix.js
 * names it): loads a module, shares the cache or not, then starts a worker that loads the same
 * module, and answers whether the worker loaded Node's TypeScript stripper.
 */
async function workerLoadsStripper(cacheDir: string, share: boolean): Promise<boolean> {
  const script = `
    import { Worker } from 'node:worker_threads';
    await import(${JSON.stringify(MODULE)});
    if (${share}) (await import(${JSON.stringify(SHARE)})).shareCompileCache();
    const worker = new Worker(
      \`import { parentPort } from 'node:worker_threads';
      await import(${JSON.stringify(MODULE)});
      parentPort.postMessage(process.moduleLoadList.some((m) => m.includes('amaro')));\`,
      { eval: true },
    );
    const loaded = await new Promise((resolve) => worker.once('message', resolve));
    await worker.terminate();
    process.stdout.write(JSON.stringify(loaded));
  `;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...process.env, NODE_COMPILE_CACHE: cacheDir },
  });
  return JSON.parse(stdout) as boolean;
}

describe('shareCompileCache', () => {
  const dirs: string[] = [];
  const freshDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'replix-compile-cache-'));
    dirs.push(dir);
    return dir;
  };
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('lets a worker find the modules stripped already, even when the cache started empty', async () => {
    expect(await workerLoadsStripper(freshDir(), false)).toBe(true);
    expect(await workerLoadsStripper(freshDir(), true)).toBe(false);
  });
});

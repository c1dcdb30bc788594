import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ROOT, startEnvironment } from './replix-start.ts';

const run = promisify(execFile);

function holdPort(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

async function startFails(env: NodeJS.ProcessEnv) {
  try {
    await run(process.execPath, [join(ROOT, 'packages/cli/bin/replix.js'), 'start'], {
      env,
      cwd: ROOT,
      timeout: 60_000,
    });
    return { code: 0, stderr: '' };
  } catch (error) {
    const failed = error as { code: number; stderr: string };
    return { code: failed.code, stderr: failed.stderr };
  }
}

// What a second `npm start` meets: the ports the first one holds.
describe('replix start on a port another process holds', { timeout: 90_000 }, () => {
  it('names the API port and how to choose another', async () => {
    const env = await startEnvironment();
    const held = await holdPort(Number(env.REPLIX_API_PORT));
    try {
      const { code, stderr } = await startFails(env);
      expect(code).toBe(1);
      expect(stderr).toContain(`port ${env.REPLIX_API_PORT}, wanted by the API, is in use`);
      expect(stderr).toContain('--port or REPLIX_API_PORT');
      expect(stderr).not.toMatch(/\n\s+at /);
      // Said before anything starts (the check comes first, not after the control plane's start).
      expect(stderr).not.toContain('Starting the control plane');
    } finally {
      held.close();
    }
  });

  it('names the demo source port and its variable', async () => {
    const env = await startEnvironment();
    const held = await holdPort(Number(env.REPLIX_DEMO_PORT));
    try {
      const { code, stderr } = await startFails(env);
      expect(code).toBe(1);
      expect(stderr).toContain(
        `port ${env.REPLIX_DEMO_PORT}, wanted by the demo source, is in use`,
      );
      expect(stderr).toContain('REPLIX_DEMO_PORT');
      expect(stderr).not.toMatch(/\n\s+at /);
      expect(stderr).not.toContain('Starting the control plane');
    } finally {
      held.close();
    }
  });
});

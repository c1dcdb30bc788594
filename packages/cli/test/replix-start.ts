import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '@replix/testkit';

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const BIN = join(ROOT, 'packages/cli/bin/replix.js');

/** The environment of a `replix start` of its own: a fresh data folder and free ports. */
export async function startEnvironment(): Promise<NodeJS.ProcessEnv> {
  const [apiPort, demoPort] = [await freePort(), await freePort()];
  return {
    ...process.env,
    PATH: `${dirname(process.execPath)}:${join(ROOT, 'node_modules/.bin')}:${process.env.PATH}`,
    REPLIX_DATA_DIR: mkdtempSync(join(tmpdir(), 'replix-start-')),
    REPLIX_API_PORT: String(apiPort),
    REPLIX_DEMO_PORT: String(demoPort),
    API: `http://127.0.0.1:${apiPort}/v1`,
    DEMO_PORT: String(demoPort),
    REPLIX_LOG_LEVEL: 'warn',
  };
}

export interface StartedReplix {
  readonly child: ChildProcess;
  /** Everything `replix start` printed on stdout: its banner. */
  readonly banner: string;
  /** What it printed on stderr so far (the last 4,000 characters): progress and warnings. */
  stderr(): string;
  /** Stops it like Ctrl-C and resolves with its exit code. */
  stop(): Promise<number | null>;
}

/** Runs `replix start` and resolves once its banner is printed. */
export function startReplix(env: NodeJS.ProcessEnv): Promise<StartedReplix> {
  const child = spawn(process.execPath, [BIN, 'start'], {
    env,
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  return new Promise((resolve, reject) => {
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ctrl-C stops it.')) {
        resolve({
          child,
          banner: output,
          stderr: () => stderr,
          stop() {
            if (child.exitCode === null) child.kill('SIGINT');
            return exited;
          },
        });
      }
    });
    child.once('exit', (code) => reject(new Error(`replix start exited with ${code}: ${stderr}`)));
  });
}

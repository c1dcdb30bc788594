import { spawn } from 'node:child_process';
import { expect, test } from 'vitest';

const mainModule = new URL('../src/main.ts', import.meta.url).href;

// What `replix logs --json | head -3` does to the CLI: the reader takes a little and closes
// the pipe while the CLI still writes.
test('a reader that closes the pipe early ends the CLI quietly with exit code 0', async () => {
  const script = `
    const { endQuietlyWhenStdoutCloses } = await import(${JSON.stringify(mainModule)});
    endQuietlyWhenStdoutCloses();
    const line = 'x'.repeat(1023) + '\\n';
    const write = () => { while (process.stdout.write(line)) {} process.stdout.once('drain', write); };
    write();
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  child.stdout.once('data', () => child.stdout.destroy());
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  expect(stderr).toBe('');
  expect(code).toBe(0);
}, 30_000);

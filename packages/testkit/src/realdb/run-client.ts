import type { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';

/** Runs a database command-line client with `input` on stdin, failing with the end of its output. */
export function runClient(command: string, args: string[], input: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    const collect = (chunk: Buffer) => {
      output = (output + chunk).slice(-4000);
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code === 0) resolve();
      else reject(new Error(`${command} exited with ${code}:\n${output}`));
    });
    child.stdin.on('error', () => {
      // The exit handler reports the client's own error, which is the useful one.
    });
    child.stdin.end(input);
  });
}

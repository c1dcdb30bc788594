import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const MAIN = new URL('../src/main.ts', import.meta.url).href;

/** Runs `replix <args>` through `main` in a child Node process: what it printed, what it loaded. */
function run(args: string[]): { output: string; loaded: string[] } {
  const program = `
    import { registerHooks } from 'node:module';
    const loaded = [];
    registerHooks({ load(url, context, next) { loaded.push(url); return next(url, context); } });
    const { main } = await import(${JSON.stringify(MAIN)});
    await main(['node', 'replix', ...${JSON.stringify(args)}]);
    process.stderr.write(JSON.stringify(loaded));
  `;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', program], {
    encoding: 'utf8',
  });
  return { output: child.stdout, loaded: JSON.parse(child.stderr) as string[] };
}

/** What only the commands over the control-plane API and sign-in load. */
const API_COMMAND_MODULES =
  /\/packages\/(client|sdk|control-plane)\/|\/node_modules\/(jose|oauth4webapi)\//;

describe('the commands a long-running process is started with', () => {
  it.each(['serve', 'router'])(
    'replix %s loads its own command, not the whole command tree',
    (name) => {
      const { output, loaded } = run([name, '--help']);
      expect(output).toContain(`Usage: replix ${name} [options]`);
      expect(loaded.filter((url) => API_COMMAND_MODULES.test(url))).toEqual([]);
    },
  );

  it('every other command still has the whole tree, in its help and its errors', () => {
    const { output, loaded } = run(['--help']);
    expect(output).toContain('serve [options]');
    expect(output).toContain('databases|db');
    expect(loaded.some((url) => url.includes('/packages/client/'))).toBe(true);
  });
});

import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { expect, it } from 'vitest';
import { artifactFetchScript } from '../src/adapters/drivers/kubernetes/artifact-fetch-script.ts';
import { unroutedScript } from '../src/adapters/drivers/kubernetes/unrouted-backend.ts';

// The programs pods run with `node -e` on an image with Node and nothing of ours: plain
// JavaScript made from programs/*.ts, importing Node's built-ins only. (What they do is run by
// kubernetes-artifact-fetch.test.ts and kubernetes-unrouted.int.test.ts.)

const PROGRAMS = { artifactFetch: artifactFetchScript(), unroutedServer: unroutedScript() };

it.each(Object.entries(PROGRAMS))('%s imports Node built-ins only, as JavaScript', (_, code) => {
  const imports = [...code.matchAll(/^import\s[^'"]*['"]([^'"]+)['"]/gm)].map((m) => m[1]);
  expect(imports.length).toBeGreaterThan(1);
  for (const name of imports) {
    expect(name).toMatch(/^node:/);
    expect(builtinModules).toContain(name?.slice('node:'.length));
  }
  // Types are gone: Node parses it as a JavaScript module (`--check` runs nothing).
  const file = join(mkdtempSync(join(tmpdir(), 'replix-program-')), 'program.mjs');
  writeFileSync(file, code);
  expect(() => execFileSync(process.execPath, ['--check', file], { stdio: 'pipe' })).not.toThrow();
});

it('are not made when the configuration loads: reading it starts no process', async () => {
  // The configuration imports the Kubernetes manifests' names; every process reads it, an
  // instance launched by `replix serve` included.
  const { execFileSync: run } = await import('node:child_process');
  const script = `await import(${JSON.stringify(new URL('../src/config.ts', import.meta.url).href)});
    const { readdirSync, readFileSync } = await import('node:fs');
    const parentOf = (pid) => readFileSync('/proc/' + pid + '/stat', 'utf8').split(') ')[1].split(' ')[1];
    const children = readdirSync('/proc').filter((pid) => {
      try { return Number(parentOf(pid)) === process.pid; } catch { return false; }
    });
    console.log(children.length);`;
  const output = run(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  expect(output.trim()).toBe('0');
  // A new Node process loads the whole configuration module graph: seconds on a busy machine.
}, 30_000);

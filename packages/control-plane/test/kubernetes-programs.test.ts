import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { expect, it } from 'vitest';
import { ARTIFACT_FETCH_SCRIPT } from '../src/drivers/kubernetes/artifact-fetch-script.ts';
import { UNROUTED_SCRIPT } from '../src/drivers/kubernetes/unrouted-backend.ts';

// The programs pods run with `node -e` on an image with Node and nothing of ours: plain
// JavaScript made from programs/*.ts, importing Node's built-ins only. (What they do is run by
// kubernetes-artifact-fetch.test.ts and kubernetes-unrouted.int.test.ts.)

const PROGRAMS = { ARTIFACT_FETCH_SCRIPT, UNROUTED_SCRIPT };

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

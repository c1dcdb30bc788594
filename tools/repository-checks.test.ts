import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));

// Biome's rules include noImportCycles (type-only imports counted), so this also keeps the
// import graph free of cycles: a cycle fails here with the files it runs through.
test('the repository passes Biome (lint, format, import order, no import cycles)', () => {
  const biome = spawnSync('npx', ['biome', 'ci', '--colors=off', '.'], {
    cwd: root,
    encoding: 'utf8',
    timeout: 120_000,
  });
  expect(biome.status, `${biome.stdout}\n${biome.stderr}`).toBe(0);
}, 150_000);

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

// The tests start hundreds of Node processes (control planes, instances, the CLI), which inherit
// this: with Node's compile cache each compiles (and strips the types of) a module once, not once
// per process. The cache is keyed by content, so a stale entry is never used.
process.env.NODE_COMPILE_CACHE ??= join(tmpdir(), 'replix-vitest-compile-cache');
// Every control plane the tests start builds with one bundle cache, so the instance program is
// bundled once per run's code, not once per test's data folder (esbuild, seconds of CPU each).
// A bundle is named by the engine's source hash; the folder by the lock file's, for the rest.
const lockHash = createHash('sha256')
  .update(readFileSync(new URL('package-lock.json', import.meta.url)))
  .digest('hex')
  .slice(0, 12);
process.env.REPLIX_BUNDLE_CACHE_DIR ??= join(tmpdir(), `replix-vitest-bundles-${lockHash}`);

export default defineConfig({
  test: {
    // Integration tests mostly wait on servers and child processes: two files at a time halve
    // the suite's time on a 2-core machine (Vitest's default there is one).
    maxWorkers: 2,
    // Test files load as Node loads the code (its own type stripping), not through Vite's module
    // runner: no esbuild transform per module, and imports several times faster. Nothing here
    // mocks modules, which is what the runner would be needed for.
    experimental: { viteModuleRunner: false, nodeLoader: false },
    reporters: ['default', './tools/summary-reporter.ts'],
    projects: [
      {
        test: {
          name: 'unit',
          include: ['packages/*/test/**/*.test.ts', 'tools/**/*.test.ts'],
          exclude: ['**/*.int.test.ts', '**/node_modules/**'],
          // Unit tests restore what they change (environment, timers): they share their worker
          // processes instead of starting one per file, which took a third of their time.
          isolate: false,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['packages/*/test/**/*.int.test.ts', 'tools/**/*.int.test.ts'],
          globalSetup: ['packages/testkit/src/global-setup.ts', 'tools/ensure-dashboard.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});

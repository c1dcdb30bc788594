import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    reporters: ['default', './tools/summary-reporter.ts'],
    projects: [
      {
        test: {
          name: 'unit',
          include: ['packages/*/test/**/*.test.ts'],
          exclude: ['**/*.int.test.ts', '**/node_modules/**'],
        },
      },
      {
        test: {
          name: 'integration',
          include: ['packages/*/test/**/*.int.test.ts'],
          globalSetup: ['packages/testkit/src/global-setup.ts', 'tools/ensure-dashboard.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});

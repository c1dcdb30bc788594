import type { Reporter, TestModule } from 'vitest/node';

/**
 * Ends the run with the plain totals line `N passed, N failed[, N skipped]`, which CI and
 * readers look for whatever the other reporters print.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>) {
    let passed = 0;
    let failed = unhandledErrors.length;
    let skipped = 0;
    for (const module of testModules) {
      // A file that fails to load has no tests but is still a failure.
      if (module.state() === 'failed' && module.children.size === 0) failed += 1;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed += 1;
        else if (state === 'failed') failed += 1;
        else skipped += 1;
      }
    }
    const totals = `${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`;
    process.stdout.write(`\n${totals}\n`);
  }
}

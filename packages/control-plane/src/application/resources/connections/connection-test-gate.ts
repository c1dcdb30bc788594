import type { StoredConnectionTest } from '../../../adapters/store/schema.ts';
import { ApiError } from '../../../domain/errors.ts';
import {
  type TestConnectionInput,
  type TestConnectionResult,
  testConnection,
} from '../../source-access/test-connection.ts';

/**
 * Tests a connection before it is saved or changed: a failing test is a 422
 * `connection_test_failed` whose envelope carries the result, so nothing wrong is stored
 * silently. Callers that mean to save it anyway skip this (`skipTest`).
 */
export async function requirePassingTest(
  input: TestConnectionInput,
): Promise<TestConnectionResult> {
  const result = await testConnection(input);
  if (!result.ok) {
    throw new ApiError(
      'connection_test_failed',
      `The connection test failed${result.failedCheck ? ` (${result.failedCheck})` : ''}: ${result.error ?? 'no reason given'} Fix the settings, or save it anyway with skipTest: true.`,
      { test: result },
    );
  }
  return result;
}

/** The columns that keep a test's result; no result (an untested save) clears them. */
export function lastTestColumns(result: TestConnectionResult | undefined, at: Date) {
  if (!result) return { last_test: null, last_tested_at: null };
  const stored: StoredConnectionTest = {
    ok: result.ok,
    ...(result.error === undefined ? {} : { error: result.error }),
    ...(result.failedCheck === undefined ? {} : { failedCheck: result.failedCheck }),
    ...(result.latencyMs === undefined ? {} : { latencyMs: result.latencyMs }),
    ...(result.binlog === undefined ? {} : { binlog: result.binlog }),
  };
  return { last_test: JSON.stringify(stored), last_tested_at: at };
}

import { ReplixApiError } from '../api.ts';
import type { TestResult } from './connection-queries.ts';
import { GuardedButton } from './guarded-button.tsx';

/** Which check failed, in words (the API's `failedCheck`). */
const FAILED_CHECK_WORDS: Record<string, string> = {
  ssh: 'the SSH tunnel could not be opened',
  network: 'the server could not be reached',
  login: 'the server refused the user or password',
  database: 'the login database does not exist or is not accessible',
  server: 'a query on the server failed',
};

/** The test result a save was refused with (422 `connection_test_failed`), if it was. */
export function refusedTest(error: unknown): TestResult | undefined {
  if (!(error instanceof ReplixApiError) || error.error !== 'connection_test_failed') {
    return undefined;
  }
  return error.details.test as TestResult | undefined;
}

/**
 * A save refused because the connection's test failed: the reason, and a distinct choice to
 * save it anyway (for a source not reachable from here yet).
 */
export function RefusedConnectionTest(props: {
  result: TestResult;
  onSaveAnyway: () => void;
  busy: boolean;
  disabledReason?: string | undefined;
}) {
  const { result } = props;
  const check = result.failedCheck ? FAILED_CHECK_WORDS[result.failedCheck] : undefined;
  return (
    <div className="notice notice-error stack" role="alert">
      <p>
        <strong>Not saved: the connection test failed</strong>
        {check ? ` (${check})` : ''}. {result.error}
      </p>
      <p>
        Fix the settings and try again, or save it anyway: its databases cannot build until the
        connection works.
      </p>
      <div className="row">
        <GuardedButton
          className="button"
          onClick={props.onSaveAnyway}
          disabledReason={props.disabledReason}
          busy={props.busy}
        >
          Save anyway
        </GuardedButton>
      </div>
    </div>
  );
}

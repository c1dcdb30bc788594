import { SOURCE_DIALECTS } from '@replix/sources/dialect';
import { type FormEvent, useState } from 'react';
import { errorMessage, isApiError } from '../api.ts';
import { Time } from './bits.tsx';
import {
  type Connection,
  useSavedConnectionRetest,
  useSavedConnectionTest,
} from './connection-queries.ts';
import { ConnectionTestResult } from './connection-test-result.tsx';
import { TextField } from './fields.tsx';
import { GuardedButton } from './guarded-button.tsx';
import { Panel } from './page.tsx';

/**
 * Tests a saved connection again with its stored credentials, TLS mode and SSH tunnel: the
 * API opens the sealed password and key itself, so nothing secret is typed in here. Shows the
 * connection's last test of this session (also one made just before saving it).
 */
export function ConnectionRetest(props: { connection: Connection; blocked: string | undefined }) {
  const { connection } = props;
  const dialect = SOURCE_DIALECTS[connection.backend];
  const [database, setDatabase] = useState('');
  // Never runs by itself here (enabled: false): it only shows the cached answer.
  const last = useSavedConnectionTest(connection.id, false);
  const retest = useSavedConnectionRetest(connection.id);
  // A 400 on the login database belongs under that field.
  const databaseError =
    isApiError(retest.error, 'validation_failed') && errorMessage(retest.error).includes('database')
      ? errorMessage(retest.error)
      : undefined;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    retest.mutate(database.trim());
  };

  return (
    <Panel title="Test connection">
      <form className="stack" onSubmit={submit} noValidate>
        <p className="muted conn-note">
          Checks the saved settings with the stored password
          {connection.ssh ? ' and SSH key' : ''}: that Replix can log in, the schemas it can read
          and whether the server is ready for change data capture.
        </p>
        {dialect.loginDatabase && (
          <div className="form-grid">
            <TextField
              label="Login database"
              value={database}
              onChange={(event) => setDatabase(event.target.value)}
              placeholder={dialect.serverDatabase}
              hint={
                dialect.loginDatabase.checksChangeCapture
                  ? 'Optional: the database whose change data capture is checked.'
                  : 'Optional: the database to log in to.'
              }
              error={databaseError}
              disabled={Boolean(props.blocked)}
            />
          </div>
        )}
        <div className="row">
          <GuardedButton
            type="submit"
            className="button"
            disabledReason={props.blocked}
            busy={retest.isPending}
          >
            {retest.isPending ? 'Testing…' : 'Test again'}
          </GuardedButton>
          {last.data && !retest.isPending && (
            <span className="muted">
              Last tested <Time value={new Date(last.dataUpdatedAt).toISOString()} />
            </span>
          )}
        </div>
        <ConnectionTestResult
          pending={retest.isPending}
          result={last.data}
          error={databaseError ? undefined : retest.error}
          backend={connection.backend}
        />
      </form>
    </Panel>
  );
}

import { useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect, useState } from 'react';
import { errorMessage } from '../api.ts';
import {
  draftFromConnection,
  type FieldErrors,
  fieldOfApiError,
  validateDraft,
} from './connection-draft.ts';
import { type Connection, keys } from './connection-queries.ts';
import { ConnectionTestResult } from './connection-test-result.tsx';
import { useConnectionTest } from './connection-tester.ts';
import { TextArea, TextField } from './fields.tsx';
import { Panel } from './page.tsx';

/**
 * Tests a saved connection again. The API tests raw credentials only and never returns the
 * stored secrets, so the password (and SSH key) must be typed in.
 */
export function ConnectionRetest(props: {
  connection: Connection;
  canWrite: boolean;
  reason: string;
}) {
  const { connection } = props;
  const queryClient = useQueryClient();
  const [password, setPassword] = useState('');
  const [sshPrivateKey, setSshPrivateKey] = useState('');
  const [database, setDatabase] = useState('');
  const [errors, setErrors] = useState<FieldErrors>({});
  const tester = useConnectionTest();
  const draft = { ...draftFromConnection(connection), password, sshPrivateKey, database };
  const testField = fieldOfApiError(tester.test.error);
  const shownErrors: FieldErrors = { ...errors };
  if (testField) shownErrors[testField] = errorMessage(tester.test.error);

  const result = tester.test.data;
  useEffect(() => {
    if (result?.ok) {
      queryClient.setQueryData(keys.testedSchemas(connection.id), result.availableSchemas ?? []);
    }
  }, [result, connection.id, queryClient]);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const found = validateDraft(draft, 'test', connection);
    setErrors(found);
    if (Object.keys(found).length === 0) tester.run(draft);
  };

  return (
    <Panel title="Test connection">
      <form className="stack" onSubmit={submit} noValidate>
        <p className="muted conn-note">
          Checks the saved settings: that Replix can log in, the schemas it can read and whether
          the server is ready for change data capture. The stored password is never sent back to
          the browser, so enter it here{connection.ssh ? ' with the SSH private key' : ''}.
        </p>
        <div className="form-grid">
          <TextField
            label="Password"
            type="password"
            autoComplete="current-password"
            value={password}
            onChange={(event) => setPassword(event.target.value)}
            error={shownErrors.password}
            disabled={!props.canWrite}
          />
          {connection.backend !== 'mysql' && (
            <TextField
              label="Login database"
              value={database}
              onChange={(event) => setDatabase(event.target.value)}
              placeholder={connection.backend === 'postgres' ? 'postgres' : 'master'}
              error={shownErrors.database}
              disabled={!props.canWrite}
            />
          )}
        </div>
        {connection.ssh && (
          <TextArea
            label="SSH private key"
            className="code"
            rows={4}
            value={sshPrivateKey}
            onChange={(event) => setSshPrivateKey(event.target.value)}
            error={shownErrors.sshPrivateKey}
            disabled={!props.canWrite}
          />
        )}
        <div className="row">
          <button
            type="submit"
            className="button"
            disabled={!props.canWrite || tester.test.isPending}
            title={props.canWrite ? undefined : props.reason}
          >
            {tester.test.isPending ? 'Testing…' : 'Test connection'}
          </button>
        </div>
        <ConnectionTestResult
          pending={tester.test.isPending}
          result={result}
          error={testField ? undefined : tester.test.error}
          backend={connection.backend}
        />
      </form>
    </Panel>
  );
}

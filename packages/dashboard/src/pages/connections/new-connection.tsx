import { postV1Connections } from '@replix/client';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { hasRole, useAccount } from '../../account.ts';
import { api, errorMessage, unwrap } from '../../api.ts';
import {
  type ConnectionDraft,
  createBody,
  emptyDraft,
  type FieldErrors,
  fieldOfApiError,
  validateDraft,
} from '../../components/connection-draft.ts';
import { ConnectionFields } from '../../components/connection-fields.tsx';
import { keys, MEMBER_REASON } from '../../components/connection-queries.ts';
import { ConnectionTestResult } from '../../components/connection-test-result.tsx';
import { useConnectionTest } from '../../components/connection-tester.ts';
import { ErrorNotice, Page, Panel } from '../../components/page.tsx';
import '../connections-databases.css';

/** A new connection: fill in the source's address and credentials, test them, save. */
export function NewConnectionPage() {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const { data: account } = useAccount();
  const canWrite = hasRole(account, 'admin');
  const [draft, setDraft] = useState<ConnectionDraft>(emptyDraft);
  const [errors, setErrors] = useState<FieldErrors>({});
  const tester = useConnectionTest();

  const create = useMutation({
    mutationFn: (current: ConnectionDraft) =>
      unwrap(postV1Connections({ client: api, body: createBody(current) })),
    onSuccess: (connection, current) => {
      queryClient.setQueryData(keys.connection(connection.id), connection);
      void queryClient.invalidateQueries({ queryKey: keys.connections });
      // A test of these very settings is the saved connection's test: the connection page
      // shows it and the new-database form suggests its schemas, without testing again.
      const tested = tester.test.data;
      if (tested && tester.isCurrent(current)) {
        queryClient.setQueryData(keys.savedTest(connection.id), tested);
      }
      navigate(`/connections/${connection.id}`);
    },
  });
  // A 400 naming a field is shown under that field; anything else as a notice.
  const createField = fieldOfApiError(create.error);
  const testField = fieldOfApiError(tester.test.error);
  const shownErrors: FieldErrors = { ...errors };
  if (createField) shownErrors[createField] = errorMessage(create.error);
  if (testField) shownErrors[testField] = errorMessage(tester.test.error);

  const change = (patch: Partial<ConnectionDraft>) => {
    setDraft((current) => ({ ...current, ...patch }));
    // An edited field's message no longer applies.
    setErrors((current) => {
      const next = { ...current };
      for (const field of Object.keys(patch) as (keyof ConnectionDraft)[]) delete next[field];
      return next;
    });
  };
  const runTest = () => {
    create.reset();
    const found = validateDraft(draft, 'test');
    setErrors(found);
    if (Object.keys(found).length === 0) tester.run(draft);
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    // A failed test's field message must not linger under a field the user has since fixed.
    if (tester.test.error) tester.test.reset();
    const found = validateDraft(draft, 'create');
    setErrors(found);
    if (Object.keys(found).length === 0) create.mutate(draft);
  };

  return (
    <Page title="New connection">
      <p className="muted conn-lead">
        A connection is a source server and the credentials Replix reads it with. Test it first: the
        test shows the schemas the user can read and whether the server is ready for change data
        capture. <Link to="/connections">Back to connections</Link>
      </p>
      {!canWrite && account && <div className="notice notice-info">{MEMBER_REASON}</div>}
      <form className="stack" onSubmit={submit} noValidate>
        <Panel title="Source server">
          <ConnectionFields
            draft={draft}
            onChange={change}
            errors={shownErrors}
            account={account}
            disabled={!canWrite}
          />
        </Panel>
        {create.error && !createField && (
          <ErrorNotice error={create.error} title="Could not create the connection" />
        )}
        <div className="row">
          <button
            type="button"
            className="button"
            onClick={runTest}
            disabled={!canWrite || tester.test.isPending}
            title={canWrite ? undefined : MEMBER_REASON}
          >
            {tester.test.isPending ? 'Testing…' : 'Test connection'}
          </button>
          <button
            type="submit"
            className="button button-primary"
            disabled={!canWrite || create.isPending}
            title={canWrite ? undefined : MEMBER_REASON}
          >
            {create.isPending ? 'Creating…' : 'Create connection'}
          </button>
          <Link className="button" to="/connections">
            Cancel
          </Link>
        </div>
        {tester.test.data && !tester.test.isPending && !tester.isCurrent(draft) && (
          <p className="muted conn-note">The settings have changed since this test.</p>
        )}
        <ConnectionTestResult
          pending={tester.test.isPending}
          result={tester.test.data}
          error={testField ? undefined : tester.test.error}
          backend={tester.test.variables?.backend ?? draft.backend}
        />
      </form>
    </Page>
  );
}

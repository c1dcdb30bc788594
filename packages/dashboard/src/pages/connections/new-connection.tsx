import { postV1Connections } from '@replix/client';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { FormEvent } from 'react';
import { Link, useNavigate } from 'react-router';
import { useAccount } from '../../account.ts';
import { api, unwrap } from '../../api.ts';
import {
  type ConnectionDraft,
  createBody,
  emptyDraft,
  fieldOfApiError,
} from '../../components/connection-draft.ts';
import { ConnectionFields } from '../../components/connection-fields.tsx';
import { useConnectionForm } from '../../components/connection-form-state.ts';
import { keys } from '../../components/connection-queries.ts';
import { ConnectionTestResult } from '../../components/connection-test-result.tsx';
import { useConnectionTest } from '../../components/connection-tester.ts';
import { GuardedButton } from '../../components/guarded-button.tsx';
import { ErrorNotice, Page, Panel } from '../../components/page.tsx';
import { RefusedConnectionTest, refusedTest } from '../../components/refused-connection-test.tsx';
import { ReadOnlyNotice, useWriteBlock } from '../../components/write-access.tsx';
import '../connections-databases.css';

/**
 * A new connection: fill in the source's address and credentials, test them, save. Saving
 * tests them too; a failing test saves nothing unless the user chooses "Save anyway".
 */
export function NewConnectionPage() {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const { data: account } = useAccount();
  const blocked = useWriteBlock();
  const form = useConnectionForm(emptyDraft);
  const tester = useConnectionTest();

  const create = useMutation({
    mutationFn: ({ draft, skipTest }: { draft: ConnectionDraft; skipTest: boolean }) =>
      unwrap(postV1Connections({ client: api, body: createBody(draft, skipTest) })),
    onSuccess: (connection, { draft: current }) => {
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

  const runTest = () => {
    create.reset();
    if (form.validate('test')) tester.run(form.draft);
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    // A failed test's field message must not linger under a field the user has since fixed.
    if (tester.test.error) tester.test.reset();
    if (form.validate('create')) create.mutate({ draft: form.draft, skipTest: false });
  };
  const refused = refusedTest(create.error);

  return (
    <Page title="New connection">
      <p className="muted conn-lead">
        A connection is a source server and the credentials Replix reads it with. Creating it tests
        it first; the test shows the schemas the user can read and whether the server is ready for
        change data capture. <Link to="/connections">Back to connections</Link>
      </p>
      <ReadOnlyNotice reason={blocked} />
      <form className="stack" onSubmit={submit} noValidate>
        <Panel title="Source server">
          <ConnectionFields
            draft={form.draft}
            onChange={form.change}
            // A 400 naming a field is shown under that field; anything else as a notice.
            errors={form.shownErrors(create.error, tester.test.error)}
            account={account}
            disabled={Boolean(blocked)}
          />
        </Panel>
        {create.error && !fieldOfApiError(create.error) && !refused && (
          <ErrorNotice error={create.error} title="Could not create the connection" />
        )}
        {refused && (
          <RefusedConnectionTest
            result={refused}
            onSaveAnyway={() => create.mutate({ draft: form.draft, skipTest: true })}
            busy={create.isPending}
            disabledReason={blocked}
          />
        )}
        <div className="row">
          <GuardedButton
            className="button"
            onClick={runTest}
            disabledReason={blocked}
            busy={tester.test.isPending}
          >
            {tester.test.isPending ? 'Testing…' : 'Test connection'}
          </GuardedButton>
          <GuardedButton
            type="submit"
            className="button button-primary"
            disabledReason={blocked}
            busy={create.isPending}
          >
            {create.isPending ? 'Testing and creating…' : 'Create connection'}
          </GuardedButton>
          <Link className="button" to="/connections">
            Cancel
          </Link>
        </div>
        {tester.test.data && !tester.test.isPending && !tester.isCurrent(form.draft) && (
          <p className="muted conn-note">The settings have changed since this test.</p>
        )}
        <ConnectionTestResult
          pending={tester.test.isPending}
          result={tester.test.data}
          error={fieldOfApiError(tester.test.error) ? undefined : tester.test.error}
          backend={tester.test.variables?.backend ?? form.draft.backend}
        />
      </form>
    </Page>
  );
}

import { patchV1ConnectionsById } from '@replix/client';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { FormEvent } from 'react';
import type { Account } from '../account.ts';
import { api, unwrap } from '../api.ts';
import { draftFromConnection, fieldOfApiError, patchBody } from './connection-draft.ts';
import { ConnectionFields } from './connection-fields.tsx';
import { useConnectionForm } from './connection-form-state.ts';
import { type Connection, forgetConnectionReads, keys } from './connection-queries.ts';
import { ConnectionTestResult } from './connection-test-result.tsx';
import { useConnectionTest } from './connection-tester.ts';
import { GuardedButton } from './guarded-button.tsx';
import { ErrorNotice, Panel } from './page.tsx';
import { RefusedConnectionTest, refusedTest } from './refused-connection-test.tsx';

/**
 * Edits a saved connection (PATCH with only the changed fields); can test the edited values.
 * The API tests a new server or credentials before saving; a failing test offers "Save anyway".
 */
export function ConnectionEditForm(props: {
  connection: Connection;
  account: Account | undefined;
  onDone: () => void;
}) {
  const { connection } = props;
  const queryClient = useQueryClient();
  const form = useConnectionForm(() => draftFromConnection(connection), connection);
  const tester = useConnectionTest();
  const save = useMutation({
    mutationFn: (body: ReturnType<typeof patchBody>) =>
      unwrap(patchV1ConnectionsById({ client: api, path: { id: connection.id }, body })),
    onSuccess: (saved) => {
      queryClient.setQueryData(keys.connection(saved.id), saved);
      void queryClient.invalidateQueries({ queryKey: keys.connections });
      // A test or schema read with the old settings no longer says anything.
      forgetConnectionReads(queryClient, saved.id);
      props.onDone();
    },
  });
  const body = patchBody(form.draft, connection);
  const unchanged = Object.keys(body).length === 0;
  const refused = refusedTest(save.error);

  const runTest = () => {
    if (form.validate('test')) tester.run(form.draft);
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (form.validate('edit') && !unchanged) save.mutate(body);
  };

  return (
    <form className="stack" onSubmit={submit} noValidate>
      <Panel title="Edit connection">
        <p className="muted conn-note">
          Running databases keep the settings they started with until their next rebuild,
          reconfigure or redeploy.
        </p>
        <ConnectionFields
          draft={form.draft}
          onChange={form.change}
          errors={form.shownErrors(save.error, tester.test.error)}
          account={props.account}
          saved={connection}
        />
        {save.error && !fieldOfApiError(save.error) && !refused && (
          <ErrorNotice error={save.error} title="Could not save" />
        )}
        {refused && (
          <RefusedConnectionTest
            result={refused}
            onSaveAnyway={() => save.mutate({ ...body, skipTest: true })}
            busy={save.isPending}
          />
        )}
        <div className="row">
          <button
            type="button"
            className="button"
            onClick={runTest}
            disabled={tester.test.isPending}
          >
            {tester.test.isPending ? 'Testing…' : 'Test connection'}
          </button>
          <GuardedButton
            type="submit"
            className="button button-primary"
            disabledReason={unchanged ? 'Nothing has changed yet.' : undefined}
            busy={save.isPending}
          >
            {save.isPending ? 'Saving…' : 'Save changes'}
          </GuardedButton>
          <button type="button" className="button" onClick={props.onDone}>
            Cancel
          </button>
        </div>
        <ConnectionTestResult
          pending={tester.test.isPending}
          result={tester.test.data}
          error={fieldOfApiError(tester.test.error) ? undefined : tester.test.error}
          backend={connection.backend}
        />
      </Panel>
    </form>
  );
}

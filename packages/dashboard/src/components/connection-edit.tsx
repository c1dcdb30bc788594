import { patchV1ConnectionsById } from '@replix/client';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import type { Account } from '../account.ts';
import { api, errorMessage, unwrap } from '../api.ts';
import {
  type ConnectionDraft,
  draftFromConnection,
  type FieldErrors,
  fieldOfApiError,
  patchBody,
  validateDraft,
} from './connection-draft.ts';
import { ConnectionFields } from './connection-fields.tsx';
import { type Connection, forgetConnectionReads, keys } from './connection-queries.ts';
import { ConnectionTestResult } from './connection-test-result.tsx';
import { useConnectionTest } from './connection-tester.ts';
import { ErrorNotice, Panel } from './page.tsx';

/** Edits a saved connection (PATCH with only the changed fields); can test the edited values. */
export function ConnectionEditForm(props: {
  connection: Connection;
  account: Account | undefined;
  onDone: () => void;
}) {
  const { connection } = props;
  const queryClient = useQueryClient();
  const [draft, setDraft] = useState<ConnectionDraft>(() => draftFromConnection(connection));
  const [errors, setErrors] = useState<FieldErrors>({});
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
  const saveField = fieldOfApiError(save.error);
  const testField = fieldOfApiError(tester.test.error);
  const shownErrors: FieldErrors = { ...errors };
  if (saveField) shownErrors[saveField] = errorMessage(save.error);
  if (testField) shownErrors[testField] = errorMessage(tester.test.error);
  const body = patchBody(draft, connection);
  const unchanged = Object.keys(body).length === 0;

  const change = (patch: Partial<ConnectionDraft>) => {
    setDraft((current) => ({ ...current, ...patch }));
    setErrors((current) => {
      const next = { ...current };
      for (const field of Object.keys(patch) as (keyof ConnectionDraft)[]) delete next[field];
      return next;
    });
  };
  const runTest = () => {
    const found = validateDraft(draft, 'test', connection);
    setErrors(found);
    if (Object.keys(found).length === 0) tester.run(draft);
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const found = validateDraft(draft, 'edit', connection);
    setErrors(found);
    if (Object.keys(found).length === 0 && !unchanged) save.mutate(body);
  };

  return (
    <form className="stack" onSubmit={submit} noValidate>
      <Panel title="Edit connection">
        <p className="muted conn-note">
          Running databases keep the settings they started with until their next rebuild,
          reconfigure or redeploy.
        </p>
        <ConnectionFields
          draft={draft}
          onChange={change}
          errors={shownErrors}
          account={props.account}
          saved={connection}
        />
        {save.error && !saveField && <ErrorNotice error={save.error} title="Could not save" />}
        <div className="row">
          <button
            type="button"
            className="button"
            onClick={runTest}
            disabled={tester.test.isPending}
          >
            {tester.test.isPending ? 'Testing…' : 'Test connection'}
          </button>
          <button
            type="submit"
            className="button button-primary"
            disabled={save.isPending || unchanged}
            title={unchanged ? 'Nothing has changed yet.' : undefined}
          >
            {save.isPending ? 'Saving…' : 'Save changes'}
          </button>
          <button type="button" className="button" onClick={props.onDone}>
            Cancel
          </button>
        </div>
        <ConnectionTestResult
          pending={tester.test.isPending}
          result={tester.test.data}
          error={testField ? undefined : tester.test.error}
          backend={connection.backend}
        />
      </Panel>
    </form>
  );
}

import { postV1DatabasesByDbIdApiKeys } from '@replix/client';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api, unwrap } from '../api.ts';
import { SecretOnce } from './bits.tsx';
import { TextField } from './fields.tsx';
import { GuardedButton } from './guarded-button.tsx';
import { ErrorNotice } from './page.tsx';
import { API_KEY_PATTERN, keyPrefix, markKeyFresh, usePlaygroundKey } from './query-key-store.ts';
import { useWriteBlock } from './write-access.tsx';

/**
 * Which API key the playground sends. Existing keys cannot be read back, so: paste one, or
 * have a new one made for the playground. Either is kept for this tab only.
 */
export function QueryKeyPicker(props: { databaseId: string; databaseName: string }) {
  const [key, setKey] = usePlaygroundKey(props.databaseId);
  const [created, setCreated] = useState<string | null>(null);
  const [pasted, setPasted] = useState('');
  const [pasteError, setPasteError] = useState<string>();
  const blocked = useWriteBlock();
  const queryClient = useQueryClient();

  const create = useMutation({
    mutationFn: () =>
      unwrap(
        postV1DatabasesByDbIdApiKeys({
          client: api,
          path: { dbId: props.databaseId },
          body: { name: 'playground' },
        }),
      ),
    onSuccess: (made) => {
      markKeyFresh(made.key);
      setKey(made.key);
      setCreated(made.key);
      queryClient.invalidateQueries({ queryKey: ['api-keys', props.databaseId] });
    },
  });

  function applyPasted(event: FormEvent) {
    event.preventDefault();
    const value = pasted.trim();
    if (!API_KEY_PATTERN.test(value)) {
      setPasteError('An API key looks like rxk_<16 hex digits>.<43 characters>.');
      return;
    }
    setPasteError(undefined);
    setPasted('');
    // Often a key just made on the API keys tab: give the instance its seconds to learn it.
    markKeyFresh(value);
    setKey(value);
  }

  if (key) {
    return (
      <div className="stack">
        {created === key && (
          <SecretOnce label="The playground's new API key (named “playground”)" value={key} />
        )}
        <div className="row">
          <span>
            Using key <code>{keyPrefix(key)}…</code>{' '}
            <span className="muted">(kept in this browser tab until it closes)</span>
          </span>
          <button
            type="button"
            className="button button-small"
            onClick={() => {
              setKey(null);
              setCreated(null);
            }}
          >
            Forget this key
          </button>
        </div>
      </div>
    );
  }

  return (
    <div className="stack">
      <p className="muted">
        The instance needs one of {props.databaseName}’s API keys. A key is shown only when it is
        made, so paste one you kept, or make a new one for the playground.
      </p>
      <form className="query-key-paste" onSubmit={applyPasted}>
        <TextField
          label="API key"
          type="password"
          autoComplete="off"
          placeholder="rxk_…"
          value={pasted}
          error={pasteError}
          onChange={(event) => setPasted(event.target.value)}
        />
        <button type="submit" className="button" disabled={pasted.trim() === ''}>
          Use this key
        </button>
      </form>
      <div className="row">
        <GuardedButton
          className="button"
          disabledReason={blocked}
          busy={create.isPending}
          onClick={() => create.mutate()}
        >
          {create.isPending ? 'Creating…' : 'Create a key for the playground'}
        </GuardedButton>
        <span className="muted">It is listed under the database’s API keys as “playground”.</span>
      </div>
      {create.error && <ErrorNotice error={create.error} title="The key was not created" />}
    </div>
  );
}

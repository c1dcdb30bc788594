import {
  deleteV1DatabasesByDbIdApiKeysByKeyId,
  getV1DatabasesByDbIdApiKeys,
  postV1DatabasesByDbIdApiKeys,
} from '@replix/client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link } from 'react-router';
import { hasRole, useAccount } from '../../account.ts';
import { api, unwrap } from '../../api.ts';
import { SecretOnce, Time } from '../../components/bits.tsx';
import { TextField } from '../../components/fields.tsx';
import { ConfirmDeleteButton } from '../../components/keys-webhooks-confirm.tsx';
import { Empty, ErrorNotice, Panel, QueryState } from '../../components/page.tsx';
import { useDatabase } from './database-layout.tsx';
import './keys-webhooks.css';

const ADMIN_ONLY = 'Only admins and owners can create or delete API keys.';

/** The database's API keys: the instance accepts any of them (no scopes). */
export function KeysTab() {
  const database = useDatabase();
  const { data: account } = useAccount();
  const canWrite = hasRole(account, 'admin');
  const keys = useQuery({
    queryKey: ['api-keys', database.id],
    queryFn: () =>
      unwrap(getV1DatabasesByDbIdApiKeys({ client: api, path: { dbId: database.id } })),
  });

  return (
    <div className="stack">
      <CreateKey databaseId={database.id} canWrite={canWrite} />
      <Panel title="Keys">
        <p className="muted">
          Clients send a key as <code>Authorization: Bearer rxk_…</code> to the database’s instance.
          Every key may run every query. A key is shown only when it is made; here you see its
          start, to recognise it. Try one in the{' '}
          <Link to={`/query?database=${database.id}`}>query playground</Link>.
        </p>
        {!keys.data ? (
          <QueryState query={keys} what="API keys" />
        ) : keys.data.length === 0 ? (
          <Empty title="No API keys yet">
            Create one above; clients need it to query {database.name}’s instance.
          </Empty>
        ) : (
          <div className="table-wrap keys-table-wrap">
            <table className="table">
              <caption className="visually-hidden">API keys of {database.name}</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Key starts with</th>
                  <th scope="col">Created</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {keys.data.map((key) => (
                  <tr key={key.keyId}>
                    <td>{key.name}</td>
                    <td>
                      <code>{key.prefix}…</code>
                    </td>
                    <td>
                      <Time value={key.createdAt} />
                    </td>
                    <td className="cell-actions">
                      <DeleteKey
                        databaseId={database.id}
                        keyId={key.keyId}
                        name={key.name}
                        canWrite={canWrite}
                      />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Panel>
    </div>
  );
}

function CreateKey(props: { databaseId: string; canWrite: boolean }) {
  const [name, setName] = useState('');
  const [created, setCreated] = useState<{ name: string; key: string } | null>(null);
  const queryClient = useQueryClient();
  const create = useMutation({
    mutationFn: (keyName: string) =>
      unwrap(
        postV1DatabasesByDbIdApiKeys({
          client: api,
          path: { dbId: props.databaseId },
          body: { name: keyName },
        }),
      ),
    onSuccess: (made) => {
      setCreated({ name: made.name, key: made.key });
      setName('');
      queryClient.invalidateQueries({ queryKey: ['api-keys', props.databaseId] });
    },
  });

  function submit(event: FormEvent) {
    event.preventDefault();
    const trimmed = name.trim();
    if (trimmed) create.mutate(trimmed);
  }

  return (
    <Panel title="Create an API key">
      {created && (
        <div className="stack">
          <SecretOnce label={`API key “${created.name}”`} value={created.key} />
          <div>
            <button type="button" className="button button-small" onClick={() => setCreated(null)}>
              I have stored it
            </button>
          </div>
        </div>
      )}
      {!props.canWrite && <p className="muted">{ADMIN_ONLY}</p>}
      <form className="inline-form" onSubmit={submit}>
        <TextField
          label="Key name"
          value={name}
          maxLength={100}
          required
          hint="What uses it, e.g. “reporting” or “storefront”. 1 to 100 characters."
          disabled={!props.canWrite}
          onChange={(event) => setName(event.target.value)}
        />
        <button
          type="submit"
          className="button button-primary"
          disabled={!props.canWrite || create.isPending || name.trim() === ''}
          title={props.canWrite ? undefined : ADMIN_ONLY}
        >
          {create.isPending ? 'Creating…' : 'Create key'}
        </button>
      </form>
      {create.error && <ErrorNotice error={create.error} title="The key was not created" />}
    </Panel>
  );
}

function DeleteKey(props: { databaseId: string; keyId: string; name: string; canWrite: boolean }) {
  const queryClient = useQueryClient();
  const remove = useMutation({
    mutationFn: () =>
      unwrap(
        deleteV1DatabasesByDbIdApiKeysByKeyId({
          client: api,
          path: { dbId: props.databaseId, keyId: props.keyId },
        }),
      ),
    onSettled: () => queryClient.invalidateQueries({ queryKey: ['api-keys', props.databaseId] }),
  });
  return (
    <>
      <ConfirmDeleteButton
        label="Delete"
        target={`key “${props.name}”`}
        question={`Delete the key “${props.name}”? Clients using it are refused within seconds.`}
        pending={remove.isPending}
        disabledReason={props.canWrite ? undefined : ADMIN_ONLY}
        onConfirm={() => remove.mutate()}
      />
      {remove.error && <ErrorNotice error={remove.error} title="Not deleted" />}
    </>
  );
}

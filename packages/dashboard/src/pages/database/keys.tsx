import {
  deleteV1DatabasesByDbIdApiKeysByKeyId,
  getV1DatabasesByDbIdApiKeys,
  postV1DatabasesByDbIdApiKeys,
} from '@replix/client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link } from 'react-router';
import { api, unwrap } from '../../api.ts';
import { Time } from '../../components/bits.tsx';
import { ConfirmDeleteButton } from '../../components/confirm.tsx';
import { ACTIONS, DataTable } from '../../components/data-table.tsx';
import { TextField } from '../../components/fields.tsx';
import { GuardedButton } from '../../components/guarded-button.tsx';
import {
  type KeyScope,
  KeyScopeBadge,
  KeyScopeChoice,
} from '../../components/key-scope-choice.tsx';
import { Empty, ErrorNotice, Panel, QueryList } from '../../components/page.tsx';
import { StoredSecret } from '../../components/stored-secret.tsx';
import { ReadOnlyNotice, useWriteBlock } from '../../components/write-access.tsx';
import { useDatabase } from './database-layout.tsx';
import './keys-webhooks.css';

/** The database's API keys: query keys (for browsers and apps) and admin keys (for servers). */
export function KeysTab() {
  const database = useDatabase();
  const blocked = useWriteBlock();
  const keys = useQuery({
    queryKey: ['api-keys', database.id],
    queryFn: () =>
      unwrap(getV1DatabasesByDbIdApiKeys({ client: api, path: { dbId: database.id } })),
  });

  return (
    <div className="stack">
      <CreateKey databaseId={database.id} blocked={blocked} />
      <Panel title="Keys">
        <p className="muted">
          Clients send a key as <code>Authorization: Bearer rxk_…</code> to the database’s instance.
          A query key may run every query and read the schema; an admin key may also reload the
          instance, pause replication and read its metrics, so it must stay on servers. A key is
          shown only when it is made; here you see its start, to recognise it. Try one in the{' '}
          <Link to={`/query?database=${database.id}`}>query playground</Link>.
        </p>
        <QueryList
          query={keys}
          what="API keys"
          empty={
            <Empty title="No API keys yet">
              Create one above; clients need it to query {database.name}’s instance.
            </Empty>
          }
        >
          {(list) => (
            <DataTable
              caption={`API keys of ${database.name}`}
              columns={['Name', 'Key starts with', 'Scope', 'Created', ACTIONS]}
            >
              {list.map((key) => (
                <tr key={key.keyId}>
                  <td>{key.name}</td>
                  <td>
                    <code>{key.prefix}…</code>
                  </td>
                  <td>
                    <KeyScopeBadge scope={key.scope} />
                  </td>
                  <td>
                    <Time value={key.createdAt} />
                  </td>
                  <td className="cell-actions">
                    <DeleteKey
                      databaseId={database.id}
                      keyId={key.keyId}
                      name={key.name}
                      blocked={blocked}
                    />
                  </td>
                </tr>
              ))}
            </DataTable>
          )}
        </QueryList>
      </Panel>
    </div>
  );
}

function CreateKey(props: { databaseId: string; blocked: string | undefined }) {
  const [name, setName] = useState('');
  const [scope, setScope] = useState<KeyScope>('query');
  const [created, setCreated] = useState<{ name: string; key: string; scope: KeyScope } | null>(
    null,
  );
  const queryClient = useQueryClient();
  const create = useMutation({
    mutationFn: (keyName: string) =>
      unwrap(
        postV1DatabasesByDbIdApiKeys({
          client: api,
          path: { dbId: props.databaseId },
          body: { name: keyName, scope },
        }),
      ),
    onSuccess: (made) => {
      setCreated({ name: made.name, key: made.key, scope: made.scope });
      setName('');
      setScope('query');
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
        <StoredSecret
          label={`${created.scope === 'admin' ? 'Admin API key' : 'API key'} “${created.name}”`}
          value={created.key}
          onStored={() => setCreated(null)}
        />
      )}
      <ReadOnlyNotice reason={props.blocked} />
      <form className="inline-form" onSubmit={submit}>
        <TextField
          label="Key name"
          value={name}
          maxLength={100}
          required
          hint="What uses it, e.g. “reporting” or “storefront”. 1 to 100 characters."
          disabled={Boolean(props.blocked)}
          onChange={(event) => setName(event.target.value)}
        />
        <KeyScopeChoice value={scope} disabled={Boolean(props.blocked)} onChange={setScope} />
        <GuardedButton
          type="submit"
          className="button button-primary"
          disabledReason={props.blocked}
          busy={create.isPending}
          disabled={name.trim() === ''}
        >
          {create.isPending ? 'Creating…' : 'Create key'}
        </GuardedButton>
      </form>
      {create.error && <ErrorNotice error={create.error} title="The key was not created" />}
    </Panel>
  );
}

function DeleteKey(props: {
  databaseId: string;
  keyId: string;
  name: string;
  blocked: string | undefined;
}) {
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
        disabledReason={props.blocked}
        onConfirm={() => remove.mutate()}
      />
      {remove.error && <ErrorNotice error={remove.error} title="Not deleted" />}
    </>
  );
}

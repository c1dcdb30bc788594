import {
  deleteV1ManagementKeysById,
  type GetV1ManagementKeysResponse,
  getV1ManagementKeys,
  postV1ManagementKeys,
} from '@replix/client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link } from 'react-router';
import { type Account, useAccount } from '../account.ts';
import { api, unwrap } from '../api.ts';
import { CopyButton, SecretOnce, Time } from '../components/bits.tsx';
import { ConfirmDeleteButton } from '../components/confirm.tsx';
import { ACTIONS, DataTable } from '../components/data-table.tsx';
import { TextField } from '../components/fields.tsx';
import { Empty, ErrorNotice, Page, Panel, QueryList, QueryState } from '../components/page.tsx';
import { TwoFactorPanel } from '../components/two-factor-panel.tsx';
import './account.css';

/** The signed-in user: who they are, their second factor, their management keys. */
export function SettingsPage() {
  const account = useAccount();
  return (
    <Page title="Settings">
      <QueryState query={account} what="your account" />
      {account.data && <ProfilePanel account={account.data} />}
      <TwoFactorPanel />
      {account.data && <ManagementKeysPanel account={account.data} />}
    </Page>
  );
}

function ProfilePanel(props: { account: Account }) {
  const { account } = props;
  return (
    <Panel title="Profile">
      <dl className="stats profile-stats">
        <div className="profile-email">
          <dt>Email</dt>
          <dd>{account.user.email}</dd>
        </div>
        <div>
          <dt>Role</dt>
          <dd>
            {account.user.role}
            {account.user.admin && <span className="badge badge-busy"> service admin</span>}
          </dd>
        </div>
        <div>
          <dt>Plan</dt>
          <dd>
            <Link to="/billing">{account.plan}</Link>
          </dd>
        </div>
        <div>
          <dt>Terms accepted</dt>
          <dd>
            {account.tosAcceptedVersion === null ? (
              'not yet'
            ) : (
              <>
                <Time value={account.tosAcceptedAt} /> (version {account.tosAcceptedVersion},{' '}
                <Link to="/terms">read the terms</Link>)
              </>
            )}
          </dd>
        </div>
        <div className="profile-id">
          <dt>Account id</dt>
          <dd className="secret-row">
            <code>{account.id}</code>
            <CopyButton text={account.id} label="Copy account id" />
          </dd>
        </div>
      </dl>
      <p className="muted">
        The account belongs to {account.email} (its first user); manage its users on the{' '}
        <Link to="/team">Team</Link> page.
      </p>
    </Panel>
  );
}

type ManagementKey = GetV1ManagementKeysResponse[number];
const KEYS_KEY = ['management-keys'] as const;

/** Long-lived `rmk_` keys for scripts and the CLI: they act as the user who made them. */
function ManagementKeysPanel(props: { account: Account }) {
  const keys = useQuery({
    queryKey: KEYS_KEY,
    queryFn: () => unwrap(getV1ManagementKeys({ client: api })),
  });
  const member = props.account.user.role === 'member';
  return (
    <Panel title="Management keys">
      <p className="muted">
        A management key (<code>rmk_…</code>) calls the control-plane API as you, with your current
        role (never as a service admin), until it is revoked or you leave the account. Send it as{' '}
        <code>Authorization: Bearer rmk_…</code>.
      </p>
      <CreateKeyForm listed={keys.data?.map((key) => key.id)} />
      <QueryList
        query={keys}
        what="the management keys"
        empty={
          <Empty title="No management keys">
            Create one above for a script, CI job or the <code>replix</code> command line.
          </Empty>
        }
      >
        {(list) => (
          <DataTable
            caption="Management keys"
            className="account-table"
            columns={['Name', 'Key', 'Created', 'Last used', ACTIONS]}
          >
            {list.map((key) => (
              <KeyRow key={key.id} managementKey={key} member={member} />
            ))}
          </DataTable>
        )}
      </QueryList>
    </Panel>
  );
}

function KeyRow(props: { managementKey: ManagementKey; member: boolean }) {
  const { managementKey } = props;
  const queryClient = useQueryClient();
  const revoke = useMutation({
    mutationFn: () =>
      unwrap(deleteV1ManagementKeysById({ client: api, path: { id: managementKey.id } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: KEYS_KEY }),
  });
  return (
    <tr>
      <td>{managementKey.name}</td>
      <td>
        <code>{managementKey.prefix}…</code>
      </td>
      <td>
        <Time value={managementKey.createdAt} />
      </td>
      <td>
        <Time value={managementKey.lastUsedAt} />
      </td>
      <td className="cell-actions">
        <ConfirmDeleteButton
          label="Revoke"
          pendingLabel="Revoking…"
          target={managementKey.name}
          question={`Revoke “${managementKey.name}”? It stops working at once.`}
          pending={revoke.isPending}
          hint={props.member ? 'Members can revoke only the keys they made.' : undefined}
          onConfirm={() => revoke.mutate()}
        />
        {revoke.error && <ErrorNotice error={revoke.error} />}
      </td>
    </tr>
  );
}

/** `listed`: the keys still valid; a revoked key's secret is no use, so it stops showing. */
function CreateKeyForm(props: { listed: string[] | undefined }) {
  const queryClient = useQueryClient();
  const [name, setName] = useState('');
  const create = useMutation({
    mutationFn: () => unwrap(postV1ManagementKeys({ client: api, body: { name: name.trim() } })),
    onSuccess: () => {
      setName('');
      return queryClient.invalidateQueries({ queryKey: KEYS_KEY });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  return (
    <div className="stack">
      <form className="row key-form" onSubmit={submit} aria-label="Create a management key">
        <TextField
          label="Key name"
          placeholder="What it is for, e.g. CI deploys"
          value={name}
          maxLength={100}
          onChange={(event) => setName(event.target.value)}
          required
        />
        <button
          type="submit"
          className="button button-primary"
          disabled={create.isPending || !name.trim()}
        >
          Create key
        </button>
      </form>
      {create.error && <ErrorNotice error={create.error} />}
      {create.data && (props.listed?.includes(create.data.id) ?? true) && (
        <SecretOnce label={`Management key "${create.data.name}"`} value={create.data.key} />
      )}
    </div>
  );
}

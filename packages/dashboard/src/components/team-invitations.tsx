import {
  deleteV1TeamInvitationsById,
  type GetV1TeamInvitationsResponse,
  getV1TeamInvitations,
  type PostV1TeamInvitationsResponse,
  postV1TeamInvitations,
} from '@replix/client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api, unwrap } from '../api.ts';
import { SecretOnce, StatusBadge, Time } from './bits.tsx';
import { ConfirmDeleteButton } from './confirm.tsx';
import { ACTIONS, DataTable } from './data-table.tsx';
import { SelectField, TextField } from './fields.tsx';
import { GuardedButton } from './guarded-button.tsx';
import { Empty, ErrorNotice, Panel, QueryList } from './page.tsx';
import {
  grantableRoles,
  invitationDeleteBlock,
  ROLE_LABELS,
  ROLE_SUMMARIES,
  type TeamCaller,
  type TeamRole,
  teamWriteBlock,
} from './team-rules.ts';

type TeamInvitation = GetV1TeamInvitationsResponse[number];

const INVITATIONS_KEY = ['team', 'invitations'] as const;

/** Pending and expired invitations, and the form that makes one. */
export function TeamInvitationsPanel(props: { caller: TeamCaller }) {
  const invitations = useQuery({
    queryKey: INVITATIONS_KEY,
    queryFn: () => unwrap(getV1TeamInvitations({ client: api })),
  });
  return (
    <Panel title="Invitations">
      <InviteForm caller={props.caller} />
      <h3>Open invitations</h3>
      <QueryList
        query={invitations}
        what="the invitations"
        empty={
          <Empty title="No open invitations">
            Invite someone by email above. An invitation stays open for 7 days, until it is accepted
            or deleted.
          </Empty>
        }
      >
        {(list) => (
          <DataTable
            caption="Open invitations"
            className="account-table"
            columns={['Email', 'Role', 'Status', 'Invited by', 'Sent', 'Expires', ACTIONS]}
          >
            {list.map((invitation) => (
              <InvitationRow key={invitation.id} invitation={invitation} caller={props.caller} />
            ))}
          </DataTable>
        )}
      </QueryList>
    </Panel>
  );
}

function InvitationRow(props: { invitation: TeamInvitation; caller: TeamCaller }) {
  const { invitation } = props;
  const queryClient = useQueryClient();
  const blocked = invitationDeleteBlock(props.caller, invitation.role);
  const remove = useMutation({
    mutationFn: () =>
      unwrap(deleteV1TeamInvitationsById({ client: api, path: { id: invitation.id } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: INVITATIONS_KEY }),
  });
  return (
    <tr>
      <td>{invitation.email}</td>
      <td>{ROLE_LABELS[invitation.role]}</td>
      <td>
        <StatusBadge status={invitation.status} />
      </td>
      <td>{invitation.invitedBy ?? <span className="muted">unknown</span>}</td>
      <td>
        <Time value={invitation.createdAt} />
      </td>
      <td>
        <Time value={invitation.expiresAt} />
      </td>
      <td className="cell-actions">
        <ConfirmDeleteButton
          label="Delete"
          target={`the invitation for ${invitation.email}`}
          question={`Delete the invitation for ${invitation.email}? Its token stops working.`}
          pending={remove.isPending}
          disabledReason={blocked}
          onConfirm={() => remove.mutate()}
        />
        {remove.error && <ErrorNotice error={remove.error} />}
      </td>
    </tr>
  );
}

function InviteForm(props: { caller: TeamCaller }) {
  const queryClient = useQueryClient();
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<TeamRole>('member');
  const blocked = teamWriteBlock(props.caller);
  const invite = useMutation({
    mutationFn: () =>
      unwrap(postV1TeamInvitations({ client: api, body: { email: email.trim(), role } })),
    onSuccess: () => {
      setEmail('');
      return queryClient.invalidateQueries({ queryKey: INVITATIONS_KEY });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    invite.mutate();
  };
  return (
    <div className="stack">
      <h3>Invite someone</h3>
      <form className="stack" onSubmit={submit} aria-label="Invite someone">
        <div className="form-grid">
          <TextField
            label="Email"
            type="email"
            value={email}
            onChange={(event) => setEmail(event.target.value)}
            required
            disabled={Boolean(blocked)}
            autoComplete="off"
          />
          <SelectField
            label="Role"
            value={role}
            onChange={(event) => setRole(event.target.value as TeamRole)}
            disabled={Boolean(blocked)}
            hint={ROLE_SUMMARIES[role]}
            options={grantableRoles(props.caller).map((value) => ({
              value,
              label: ROLE_LABELS[value],
            }))}
          />
        </div>
        <div className="row">
          <GuardedButton
            type="submit"
            className="button button-primary"
            disabledReason={blocked}
            busy={invite.isPending}
            disabled={!email.trim()}
          >
            Create invitation
          </GuardedButton>
          {blocked && <span className="muted">{blocked}</span>}
        </div>
        {invite.error && <ErrorNotice error={invite.error} />}
      </form>
      {invite.data && <CreatedInvitation invitation={invite.data} />}
    </div>
  );
}

/** The new invitation's token, shown once, and how to hand it over (Replix sends no mail). */
function CreatedInvitation(props: { invitation: PostV1TeamInvitationsResponse }) {
  const { invitation } = props;
  return (
    <div className="stack">
      <SecretOnce label={`Invitation token for ${invitation.email}`} value={invitation.token} />
      <div className="notice notice-info">
        <p>
          Replix sends no email: give this token to <strong>{invitation.email}</strong> yourself,
          over a channel you trust (a chat message, a password manager). They sign in to Replix with
          that email address, open <strong>Team → Accept an invitation</strong> and paste it; they
          join as {ROLE_LABELS[invitation.role].toLowerCase()}. It works once and expires{' '}
          <Time value={invitation.expiresAt} />.
        </p>
      </div>
    </div>
  );
}

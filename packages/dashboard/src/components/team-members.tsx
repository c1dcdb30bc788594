import {
  deleteV1TeamMembersByUserId,
  type GetV1TeamMembersResponse,
  getV1TeamMembers,
  patchV1TeamMembersByUserId,
} from '@replix/client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../api.ts';
import { Time } from './bits.tsx';
import { ConfirmDeleteButton, ConfirmDialogButton } from './confirm.tsx';
import { ACTIONS, DataTable } from './data-table.tsx';
import { SelectField } from './fields.tsx';
import { Empty, ErrorNotice, Panel, QueryList } from './page.tsx';
import {
  grantableRoles,
  ROLE_LABELS,
  removalBlock,
  roleChangeBlock,
  type TeamCaller,
  type TeamRole,
} from './team-rules.ts';

type TeamMember = GetV1TeamMembersResponse[number];

export const MEMBERS_KEY = ['team', 'members'] as const;

export function useTeamMembers() {
  return useQuery({
    queryKey: MEMBERS_KEY,
    queryFn: () => unwrap(getV1TeamMembers({ client: api })),
  });
}

/** The users of the account, with their role, second factor and activity. */
export function TeamMembersPanel(props: { caller: TeamCaller }) {
  const members = useTeamMembers();
  const [status, setStatus] = useState('');
  const ownerCount = members.data?.filter((member) => member.role === 'owner').length ?? 0;
  return (
    <Panel title="Members">
      <QueryList
        query={members}
        what="the members"
        empty={
          <Empty title="No members">Invite people below; they appear here once they accept.</Empty>
        }
      >
        {(list) => (
          <DataTable
            caption="Members"
            className="account-table"
            columns={['Email', 'Role', 'Two-factor', 'Joined', 'Last seen', ACTIONS]}
          >
            {list.map((member) => (
              <MemberRow
                key={member.userId}
                member={member}
                caller={props.caller}
                ownerCount={ownerCount}
                onDone={setStatus}
              />
            ))}
          </DataTable>
        )}
      </QueryList>
      <p className="visually-hidden" role="status">
        {status}
      </p>
    </Panel>
  );
}

function MemberRow(props: {
  member: TeamMember;
  caller: TeamCaller;
  ownerCount: number;
  onDone: (message: string) => void;
}) {
  const { member, caller } = props;
  const queryClient = useQueryClient();
  const self = member.userId === caller.userId;
  // A role picked and not saved yet; otherwise the select follows the member's current role.
  const [picked, setPicked] = useState<TeamRole>();
  const draft = picked ?? member.role;
  const changeBlock = roleChangeBlock(caller, member, props.ownerCount);
  const removeBlock = removalBlock(caller, member, props.ownerCount);

  const changeRole = useMutation({
    mutationFn: (role: TeamRole) =>
      unwrap(
        patchV1TeamMembersByUserId({
          client: api,
          path: { userId: member.userId },
          body: { role },
        }),
      ),
    onSuccess: async (updated) => {
      setPicked(undefined);
      props.onDone(`${updated.email} is now ${ROLE_LABELS[updated.role].toLowerCase()}.`);
      await queryClient.invalidateQueries({ queryKey: MEMBERS_KEY });
      if (self) await queryClient.invalidateQueries({ queryKey: ['account'] });
    },
  });
  const remove = useMutation({
    mutationFn: () =>
      unwrap(deleteV1TeamMembersByUserId({ client: api, path: { userId: member.userId } })),
    onSuccess: async () => {
      props.onDone(`${member.email} was removed from the account.`);
      // Leaving moves the caller to a new account of their own: nothing cached still applies.
      if (self) await queryClient.invalidateQueries();
      else await queryClient.invalidateQueries({ queryKey: MEMBERS_KEY });
    },
  });

  // An admin sees an owner's role but cannot give it; keep it listed so the select shows it.
  const roles = grantableRoles(caller).includes(member.role)
    ? grantableRoles(caller)
    : [member.role, ...grantableRoles(caller)];
  return (
    <tr>
      <td>
        {member.email}
        {self && <span className="muted"> (you)</span>}
      </td>
      <td>
        <form
          className="team-role-form"
          onSubmit={(event) => {
            event.preventDefault();
            changeRole.mutate(draft);
          }}
        >
          <SelectField
            label={`Role of ${member.email}`}
            value={draft}
            disabled={Boolean(changeBlock) || changeRole.isPending}
            title={changeBlock}
            onChange={(event) => setPicked(event.target.value as TeamRole)}
            options={roles.map((role) => ({ value: role, label: ROLE_LABELS[role] }))}
          />
          {draft !== member.role && (
            <>
              <button
                type="submit"
                className="button button-small button-primary"
                disabled={changeRole.isPending}
              >
                Save role
              </button>
              <button
                type="button"
                className="button button-small"
                onClick={() => setPicked(undefined)}
              >
                Undo
              </button>
            </>
          )}
        </form>
        {changeRole.error && <ErrorNotice error={changeRole.error} />}
      </td>
      <td>
        {member.twoFactorEnabled ? (
          <span className="badge badge-good">on</span>
        ) : (
          <span className="badge badge-neutral">off</span>
        )}
      </td>
      <td>
        <Time value={member.createdAt} />
      </td>
      <td>
        <Time value={member.lastSeenAt} />
      </td>
      <td className="cell-actions">
        {self ? (
          // Leaving is a big step (the caller lands in a new empty account): a dialog asks.
          <ConfirmDialogButton
            label={
              <>
                Leave<span className="visually-hidden"> the account</span>
              </>
            }
            pending={remove.isPending}
            pendingLabel="Leaving…"
            className="button button-small button-danger"
            disabledReason={removeBlock}
            title="Leave this account?"
            confirmLabel="Yes, leave"
            onConfirm={() => remove.mutate()}
          >
            <p>
              You will keep signing in, to a new empty account of your own, and your management keys
              of this account are revoked.
            </p>
          </ConfirmDialogButton>
        ) : (
          <ConfirmDeleteButton
            label="Remove"
            pendingLabel="Removing…"
            target={member.email}
            question={`Remove ${member.email} from the account? They keep signing in, to a new empty account of their own, and their management keys of this account are revoked.`}
            pending={remove.isPending}
            disabledReason={removeBlock}
            onConfirm={() => remove.mutate()}
          />
        )}
        {remove.error && <ErrorNotice error={remove.error} />}
      </td>
    </tr>
  );
}

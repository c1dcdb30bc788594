import { useAccount } from '../account.ts';
import { Page, QueryState } from '../components/page.tsx';
import { TeamAcceptPanel } from '../components/team-accept.tsx';
import { TeamInvitationsPanel } from '../components/team-invitations.tsx';
import { TeamMembersPanel } from '../components/team-members.tsx';
import { asTeamRole } from '../components/team-rules.ts';
import './account.css';

/** The account's users and roles, its invitations, and joining another account. */
export function TeamPage() {
  const account = useAccount();
  if (!account.data) {
    return (
      <Page title="Team">
        <QueryState query={account} what="your account" />
      </Page>
    );
  }
  const caller = { userId: account.data.user.id, role: asTeamRole(account.data.user.role) };
  return (
    <Page title="Team">
      <p className="muted">
        You are {caller.role === 'member' ? 'a' : 'an'} {caller.role} of the account of{' '}
        {account.data.email}. Owners may do everything; admins everything except billing and owners;
        members read and manage only their own keys and second factor.
      </p>
      <TeamMembersPanel caller={caller} />
      <TeamInvitationsPanel caller={caller} />
      <TeamAcceptPanel email={account.data.user.email} accountEmail={account.data.email} />
    </Page>
  );
}

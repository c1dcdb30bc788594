/**
 * The team rules of docs/control-plane/teams-and-2fa.md, as the dashboard needs them: which
 * controls a caller may use, and in words why not. The API checks the same rules; these only
 * disable what it would refuse.
 */
import { MEMBER_REASON } from './write-access.tsx';

export type TeamRole = 'owner' | 'admin' | 'member';

export const TEAM_ROLES: readonly TeamRole[] = ['owner', 'admin', 'member'];

export const ROLE_LABELS: Record<TeamRole, string> = {
  owner: 'Owner',
  admin: 'Admin',
  member: 'Member',
};

export const ROLE_SUMMARIES: Record<TeamRole, string> = {
  owner: 'everything, including billing and owners',
  admin: 'everything except billing and owners',
  member: 'reads everything; few writes',
};

export interface TeamCaller {
  readonly userId: string;
  readonly role: TeamRole;
}

export interface TeamMemberLike {
  readonly userId: string;
  readonly role: TeamRole;
}

export function asTeamRole(role: string | undefined): TeamRole {
  return role === 'owner' || role === 'admin' ? role : 'member';
}

const LAST_OWNER = 'An account always keeps one owner: make someone else an owner first.';

/** Why the caller may not write to the team at all, or undefined when they may. */
export function teamWriteBlock(caller: TeamCaller): string | undefined {
  return caller.role === 'member' ? MEMBER_REASON : undefined;
}

/** The roles the caller may give someone (by invitation or role change). */
export function grantableRoles(caller: TeamCaller): readonly TeamRole[] {
  return caller.role === 'owner' ? TEAM_ROLES : TEAM_ROLES.filter((role) => role !== 'owner');
}

/** The rules that guard a member's place: only owners touch owners, and one owner stays. */
function memberChangeBlock(
  caller: TeamCaller,
  member: TeamMemberLike,
  ownerCount: number,
  ownersOnly: string,
): string | undefined {
  const blocked = teamWriteBlock(caller);
  if (blocked) return blocked;
  if (member.role === 'owner' && caller.role !== 'owner') return ownersOnly;
  if (member.role === 'owner' && ownerCount <= 1) return LAST_OWNER;
  return undefined;
}

/** Why the caller may not change `member`'s role, or undefined when they may. */
export function roleChangeBlock(
  caller: TeamCaller,
  member: TeamMemberLike,
  ownerCount: number,
): string | undefined {
  return memberChangeBlock(caller, member, ownerCount, "Only owners can change an owner's role.");
}

/** Why the caller may not remove `member` (or leave, as `member`), or undefined when they may. */
export function removalBlock(
  caller: TeamCaller,
  member: TeamMemberLike,
  ownerCount: number,
): string | undefined {
  return memberChangeBlock(caller, member, ownerCount, 'Only owners can remove owners.');
}

/** Why the caller may not delete an invitation with `role`, or undefined when they may. */
export function invitationDeleteBlock(caller: TeamCaller, role: TeamRole): string | undefined {
  const blocked = teamWriteBlock(caller);
  if (blocked) return blocked;
  if (role === 'owner' && caller.role !== 'owner') {
    return 'Only owners can delete owner invitations.';
  }
  return undefined;
}

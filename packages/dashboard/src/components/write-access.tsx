import { hasRole, useAccount } from '../account.ts';

/** Members read everything and write almost nothing (docs/control-plane/teams-and-2fa.md). */
export const MEMBER_REASON = 'Members have read-only access; ask an admin or owner.';

/** Why the signed-in user may not make the account's writes, or undefined when they may. */
export function useWriteBlock(): string | undefined {
  const { data: account } = useAccount();
  return hasRole(account, 'admin') ? undefined : MEMBER_REASON;
}

/** Says once, above a form, why its controls are off. */
export function ReadOnlyNotice(props: { reason: string | undefined }) {
  return props.reason ? <div className="notice notice-info">{props.reason}</div> : null;
}

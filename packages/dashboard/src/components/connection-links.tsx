import { Link } from 'react-router';
import { hasRole, useAccount } from '../account.ts';
import { MEMBER_REASON } from './connection-queries.ts';

/**
 * A link to a create page for those who may create; for members a disabled button saying why
 * (a link cannot be disabled).
 */
export function WriteLink(props: { to: string; children: string; primary?: boolean }) {
  const { data: account } = useAccount();
  const className = props.primary ? 'button button-primary' : 'button';
  if (account && !hasRole(account, 'admin')) {
    return (
      <button type="button" className={className} disabled title={MEMBER_REASON}>
        {props.children}
      </button>
    );
  }
  return (
    <Link className={className} to={props.to}>
      {props.children}
    </Link>
  );
}

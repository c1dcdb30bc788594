import { Link } from 'react-router';
import { GuardedButton } from './guarded-button.tsx';
import { useWriteBlock } from './write-access.tsx';

/**
 * A link to a create page for those who may create; for members a disabled button saying why
 * (a link cannot be disabled).
 */
export function WriteLink(props: { to: string; children: string; primary?: boolean }) {
  const blocked = useWriteBlock();
  const className = props.primary ? 'button button-primary' : 'button';
  if (blocked) {
    return (
      <GuardedButton className={className} disabledReason={blocked}>
        {props.children}
      </GuardedButton>
    );
  }
  return (
    <Link className={className} to={props.to}>
      {props.children}
    </Link>
  );
}

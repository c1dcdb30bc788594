import { GuardedButton } from './guarded-button.tsx';
import { ACTION_TEXT } from './instance-action-calls.ts';
import type { ActionName, InstanceStatus } from './instance-queries.ts';

/** Why a button is off: the caller's role first, then the API's own reason. */
export function blockedReason(
  availability: InstanceStatus['allowedActions'][ActionName],
  roleReason: string | undefined,
): string | undefined {
  if (roleReason) return roleReason;
  return availability.allowed ? undefined : (availability.reason ?? 'Not available now.');
}

/** One action button, on or off as the API's allowedActions says, with the reason it is off. */
export function ActionButton(props: {
  action: ActionName;
  status: InstanceStatus;
  roleReason: string | undefined;
  busy: boolean;
  tone?: 'primary' | 'danger';
  onClick: () => void;
}) {
  const tone = props.tone ? ` button-${props.tone}` : '';
  return (
    <GuardedButton
      className={`button${tone}`}
      disabledReason={blockedReason(props.status.allowedActions[props.action], props.roleReason)}
      busy={props.busy}
      onClick={props.onClick}
    >
      {ACTION_TEXT[props.action].label}
    </GuardedButton>
  );
}

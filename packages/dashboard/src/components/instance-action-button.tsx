import { useId } from 'react';
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

/**
 * One action button, on or off as the API's allowedActions says. A disabled button keeps
 * its reason in `title` (hover) and in a description screen readers announce with it.
 */
export function ActionButton(props: {
  action: ActionName;
  status: InstanceStatus;
  roleReason: string | undefined;
  busy: boolean;
  tone?: 'primary' | 'danger';
  onClick: () => void;
}) {
  const reasonId = useId();
  const reason = blockedReason(props.status.allowedActions[props.action], props.roleReason);
  const tone = props.tone ? ` button-${props.tone}` : '';
  return (
    <>
      <button
        type="button"
        className={`button${tone}`}
        disabled={reason !== undefined || props.busy}
        title={reason}
        aria-describedby={reason ? reasonId : undefined}
        onClick={props.onClick}
      >
        {ACTION_TEXT[props.action].label}
      </button>
      {reason && (
        <span id={reasonId} className="visually-hidden">
          {reason}
        </span>
      )}
    </>
  );
}

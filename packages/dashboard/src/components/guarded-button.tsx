import type { ComponentProps } from 'react';
import { useId } from 'react';

/**
 * A button that may be off for a reason the user should know (their role, a form that is not
 * ready): the reason is its tooltip and its accessible description. `busy` turns it off while
 * its own request runs; `hint` is the tooltip while it is on.
 */
export function GuardedButton(
  props: ComponentProps<'button'> & {
    disabledReason?: string | undefined;
    busy?: boolean;
    hint?: string | undefined;
  },
) {
  const { disabledReason, busy = false, hint, disabled, type = 'button', ...button } = props;
  const reasonId = useId();
  return (
    <>
      <button
        type={type}
        {...button}
        disabled={Boolean(disabled || busy || disabledReason)}
        title={disabledReason || hint}
        aria-describedby={disabledReason ? reasonId : undefined}
      />
      {/* Hidden, yet a description: aria-describedby reads hidden elements too. */}
      {disabledReason && (
        <span id={reasonId} hidden>
          {disabledReason}
        </span>
      )}
    </>
  );
}

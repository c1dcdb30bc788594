import type { ReactNode } from 'react';
import { useEffect, useId, useRef } from 'react';

/**
 * A modal question before an action that stops or replaces something. A native <dialog>:
 * it traps focus, Escape cancels, and the page behind it is inert.
 */
export function ConfirmDialog(props: {
  open: boolean;
  title: string;
  confirmLabel: string;
  danger?: boolean;
  children: ReactNode;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const { open, onCancel } = props;

  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open]);

  return (
    <dialog
      ref={ref}
      className="ops-dialog"
      aria-labelledby={titleId}
      // Escape closes the dialog natively; keep the state in step.
      onClose={() => {
        if (open) onCancel();
      }}
    >
      <form
        className="stack"
        onSubmit={(event) => {
          event.preventDefault();
          props.onConfirm();
        }}
      >
        <h2 id={titleId}>{props.title}</h2>
        {props.children}
        <div className="row ops-dialog-buttons">
          <button type="button" className="button" onClick={onCancel}>
            Cancel
          </button>
          <button
            type="submit"
            className={`button ${props.danger ? 'button-danger' : 'button-primary'}`}
          >
            {props.confirmLabel}
          </button>
        </div>
      </form>
    </dialog>
  );
}

import type { ReactNode } from 'react';
import { useEffect, useId, useRef, useState } from 'react';
import { GuardedButton } from './guarded-button.tsx';
import './confirm.css';

/*
 * The two ways the dashboard asks before doing something that cannot be undone (never
 * window.confirm): ConfirmDialog (and ConfirmDialogButton, a button that opens one), a modal,
 * before a big action (stopping an instance, deprovisioning a customer, leaving the account);
 * ConfirmDeleteButton, in place, before removing one row of a list. In both the confirm button
 * takes the focus and Escape cancels.
 */

/**
 * A modal question. A native <dialog>: it traps focus, Escape cancels, the page behind is inert,
 * and closing it gives the focus back to the button that opened it. The focus starts on the
 * dialog's first field when it asks for a choice, else on the confirm button.
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
  const confirmRef = useRef<HTMLButtonElement>(null);
  const titleId = useId();
  const { open, onCancel } = props;

  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) {
      dialog.showModal();
      const field = dialog.querySelector<HTMLElement>('input, select, textarea');
      (field ?? confirmRef.current)?.focus();
    }
    if (!open && dialog.open) dialog.close();
  }, [open]);

  return (
    <dialog
      ref={ref}
      className="confirm-dialog"
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
        <div className="row confirm-dialog-buttons">
          <button type="button" className="button" onClick={onCancel}>
            Cancel
          </button>
          <button
            ref={confirmRef}
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

/** A button for a big action that asks in a ConfirmDialog first (always a dangerous one). */
export function ConfirmDialogButton(props: {
  /** The button's content; `pending` while the request runs. */
  label: ReactNode;
  pending?: boolean;
  pendingLabel?: string;
  className: string;
  disabledReason?: string | undefined;
  title: string;
  confirmLabel: string;
  /** What happens, said in the dialog. */
  children: ReactNode;
  onConfirm: () => void;
}) {
  const [asking, setAsking] = useState(false);
  return (
    <>
      <GuardedButton
        className={props.className}
        disabledReason={props.disabledReason}
        busy={props.pending}
        onClick={() => setAsking(true)}
      >
        {props.pending && props.pendingLabel ? props.pendingLabel : props.label}
      </GuardedButton>
      <ConfirmDialog
        open={asking}
        danger
        title={props.title}
        confirmLabel={props.confirmLabel}
        onCancel={() => setAsking(false)}
        onConfirm={() => {
          setAsking(false);
          props.onConfirm();
        }}
      >
        {props.children}
      </ConfirmDialog>
    </>
  );
}

/**
 * A button that removes one row of a list (a key, a webhook, an invitation…), asking first in
 * place: the first press swaps it for the question, a confirm and a cancel button. Cancelling
 * gives the focus back to the button.
 */
export function ConfirmDeleteButton(props: {
  /** The button's text: "Delete", "Revoke", "Remove"; the confirm button says "Yes, delete". */
  label: string;
  /** Shown while the request runs; "Deleting…" unless told. */
  pendingLabel?: string;
  /** Said to screen readers after the label, to name the row: "key “reporting”". */
  target?: string;
  /** What pressing it does, asked before it is done: "Delete the key “reporting”? …". */
  question: string;
  onConfirm: () => void;
  pending?: boolean;
  disabledReason?: string | undefined;
  /** The tooltip while the button is on. */
  hint?: string | undefined;
  /** Small (in a table row or a panel header) unless said otherwise. */
  size?: 'small' | 'normal';
}) {
  const [asking, setAsking] = useState(false);
  const confirmRef = useRef<HTMLButtonElement>(null);
  const triggerRef = useRef<HTMLButtonElement>(null);
  const refocus = useRef(false);
  useEffect(() => {
    if (asking) confirmRef.current?.focus();
    else if (refocus.current) triggerRef.current?.focus();
    refocus.current = false;
  }, [asking]);
  const cancel = () => {
    refocus.current = true;
    setAsking(false);
  };
  const size = props.size === 'normal' ? '' : ' button-small';

  if (!asking) {
    return (
      <GuardedButton
        ref={triggerRef}
        className={`button button-danger${size}`}
        busy={props.pending}
        disabledReason={props.disabledReason}
        hint={props.hint}
        onClick={() => setAsking(true)}
      >
        {props.pending ? (props.pendingLabel ?? 'Deleting…') : props.label}
        {props.target && <span className="visually-hidden"> {props.target}</span>}
      </GuardedButton>
    );
  }
  return (
    <fieldset
      className="confirm-delete"
      onKeyDown={(event) => {
        if (event.key === 'Escape') cancel();
      }}
    >
      <legend>{props.question}</legend>
      <button
        ref={confirmRef}
        type="button"
        className={`button button-danger${size}`}
        onClick={() => {
          setAsking(false);
          props.onConfirm();
        }}
      >
        Yes, {props.label.toLowerCase()}
      </button>
      <button type="button" className={`button${size}`} onClick={cancel}>
        Cancel
      </button>
    </fieldset>
  );
}

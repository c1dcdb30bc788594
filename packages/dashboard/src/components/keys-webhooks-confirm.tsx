import { useEffect, useRef, useState } from 'react';

/**
 * A delete button that asks first, in place (no browser dialog): the first press shows what
 * will go and a confirm and a cancel button; the confirm button takes the focus.
 */
export function ConfirmDeleteButton(props: {
  /** The button's text, e.g. "Delete". */
  label: string;
  /** Said to screen readers after the label: what is deleted (" key “reporting”"). */
  target?: string;
  /** What pressing it does, said before it is done: "Delete the key “reporting”?". */
  question: string;
  onConfirm: () => void;
  pending?: boolean;
  disabledReason?: string | undefined;
}) {
  const [asking, setAsking] = useState(false);
  const confirmRef = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (asking) confirmRef.current?.focus();
  }, [asking]);

  if (!asking) {
    return (
      <button
        type="button"
        className="button button-small button-danger"
        disabled={props.pending || Boolean(props.disabledReason)}
        title={props.disabledReason}
        onClick={() => setAsking(true)}
      >
        {props.pending ? 'Deleting…' : props.label}
        {props.target && <span className="visually-hidden"> {props.target}</span>}
      </button>
    );
  }
  return (
    <fieldset
      className="confirm-delete"
      onKeyDown={(event) => {
        if (event.key === 'Escape') setAsking(false);
      }}
    >
      <legend>{props.question}</legend>
      <button
        ref={confirmRef}
        type="button"
        className="button button-small button-danger"
        onClick={() => {
          setAsking(false);
          props.onConfirm();
        }}
      >
        Yes, {props.label.toLowerCase()}
      </button>
      <button type="button" className="button button-small" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </fieldset>
  );
}

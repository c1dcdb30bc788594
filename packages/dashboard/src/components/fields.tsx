import type {
  InputHTMLAttributes,
  ReactNode,
  SelectHTMLAttributes,
  TextareaHTMLAttributes,
} from 'react';
import { useId } from 'react';

interface FieldFrame {
  label: string;
  hint?: ReactNode;
  /** Shown under the field and announced; marks the field invalid. */
  error?: string | undefined;
}

function Frame(props: FieldFrame & { id: string; children: ReactNode }) {
  return (
    <div className="field">
      <label htmlFor={props.id}>{props.label}</label>
      {props.children}
      {props.hint && (
        <div className="field-hint" id={`${props.id}-hint`}>
          {props.hint}
        </div>
      )}
      {props.error && (
        <div className="field-error" id={`${props.id}-error`} role="alert">
          {props.error}
        </div>
      )}
    </div>
  );
}

function describedBy(id: string, frame: FieldFrame): string | undefined {
  const ids = [frame.hint ? `${id}-hint` : '', frame.error ? `${id}-error` : ''].filter(Boolean);
  return ids.length > 0 ? ids.join(' ') : undefined;
}

export function TextField(props: FieldFrame & Omit<InputHTMLAttributes<HTMLInputElement>, 'id'>) {
  const id = useId();
  const { label, hint, error, ...input } = props;
  return (
    <Frame id={id} label={label} hint={hint} error={error}>
      <input
        id={id}
        aria-invalid={error ? true : undefined}
        aria-describedby={describedBy(id, props)}
        {...input}
      />
    </Frame>
  );
}

export function TextArea(
  props: FieldFrame & Omit<TextareaHTMLAttributes<HTMLTextAreaElement>, 'id'>,
) {
  const id = useId();
  const { label, hint, error, ...area } = props;
  return (
    <Frame id={id} label={label} hint={hint} error={error}>
      <textarea
        id={id}
        aria-invalid={error ? true : undefined}
        aria-describedby={describedBy(id, props)}
        spellCheck={false}
        {...area}
      />
    </Frame>
  );
}

export function SelectField(
  props: FieldFrame &
    Omit<SelectHTMLAttributes<HTMLSelectElement>, 'id'> & {
      options: ReadonlyArray<{ value: string; label: string }>;
    },
) {
  const id = useId();
  const { label, hint, error, options, ...select } = props;
  return (
    <Frame id={id} label={label} hint={hint} error={error}>
      <select id={id} aria-describedby={describedBy(id, props)} {...select}>
        {options.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </select>
    </Frame>
  );
}

export function Checkbox(props: {
  label: string;
  checked: boolean;
  onChange: (checked: boolean) => void;
}) {
  const id = useId();
  return (
    <div className="checkbox">
      <input
        id={id}
        type="checkbox"
        checked={props.checked}
        onChange={(event) => props.onChange(event.target.checked)}
      />
      <label htmlFor={id}>{props.label}</label>
    </div>
  );
}

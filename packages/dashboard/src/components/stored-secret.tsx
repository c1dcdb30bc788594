import type { ReactNode } from 'react';
import { SecretOnce } from './bits.tsx';

/** A just-made secret, how to use it (`children`), and the button that puts it away. */
export function StoredSecret(props: {
  label: string;
  value: string;
  onStored: () => void;
  children?: ReactNode;
}) {
  return (
    <div className="stack">
      <SecretOnce label={props.label} value={props.value} />
      {props.children}
      <div>
        <button type="button" className="button button-small" onClick={props.onStored}>
          I have stored it
        </button>
      </div>
    </div>
  );
}

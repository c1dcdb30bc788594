import { useSyncExternalStore } from 'react';
import { sessionToken } from '../session.ts';
import { CopyButton } from './bits.tsx';

/**
 * The recovery codes of a just-confirmed enrolment. Confirming switches the session to a new
 * token, which clears every query and remounts the page while the account reloads; the codes
 * are kept here, outside React, so the page can still show them once. They belong to the
 * session that received them, and are forgotten when dismissed or on a reload.
 */
interface Shown {
  readonly codes: readonly string[];
  readonly token: string;
}

let shown: Shown | undefined;
const listeners = new Set<() => void>();

function notify(): void {
  for (const listener of listeners) listener();
}

export function keepRecoveryCodes(codes: readonly string[], token: string): void {
  shown = { codes, token };
  notify();
}

function dismiss(): void {
  shown = undefined;
  notify();
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function current(): Shown | undefined {
  return shown;
}

/** The ten recovery codes, shown once with a copy button, until the user says they saved them. */
export function RecoveryCodesOnce() {
  const kept = useSyncExternalStore(subscribe, current);
  if (!kept || kept.token !== sessionToken()) return null;
  const text = kept.codes.join('\n');
  return (
    <div className="notice notice-secret" role="status">
      <p>
        <strong>Recovery codes</strong> (shown once: save them now)
      </p>
      <p>
        Each code signs you in once instead of a code from your app, if you lose your phone. Keep
        them somewhere safe, such as a password manager.
      </p>
      <ul className="recovery-codes" aria-label="Recovery codes">
        {kept.codes.map((code) => (
          <li key={code}>{code}</li>
        ))}
      </ul>
      <div className="row">
        <CopyButton text={text} label="Copy recovery codes" />
        <button type="button" className="button button-small" onClick={dismiss}>
          I have saved them
        </button>
      </div>
    </div>
  );
}

import { useId } from 'react';

export type KeyScope = 'query' | 'admin';

const CHOICES: ReadonlyArray<{ scope: KeyScope; label: string; what: string }> = [
  {
    scope: 'query',
    label: 'Query key',
    what: 'runs queries and reads the schema; fit for browsers and apps',
  },
  {
    scope: 'admin',
    label: 'Admin key',
    what: 'also reloads the instance, pauses and resumes replication, reads metrics and health detail',
  },
];

/** The scope of a new API key, with the warning an admin key needs. */
export function KeyScopeChoice(props: {
  value: KeyScope;
  disabled: boolean;
  onChange: (scope: KeyScope) => void;
}) {
  const name = useId();
  return (
    <fieldset className="key-scope" disabled={props.disabled}>
      <legend>Scope</legend>
      {CHOICES.map((choice) => (
        <label key={choice.scope} className="key-scope-choice">
          <input
            type="radio"
            name={name}
            value={choice.scope}
            checked={props.value === choice.scope}
            onChange={() => props.onChange(choice.scope)}
          />
          <span>
            {choice.label} <span className="muted">— {choice.what}</span>
          </span>
        </label>
      ))}
      {props.value === 'admin' && (
        <div className="notice notice-warn" role="note">
          Never ship an admin key to a browser or an app: anyone who reads it can reload the
          instance (a full re-read of your source) and pause its replication. Keep it on your
          servers; give browsers and apps a query key.
        </div>
      )}
    </fieldset>
  );
}

/** A key's scope in a list: admin keys stand out. */
export function KeyScopeBadge(props: { scope: KeyScope }) {
  return props.scope === 'admin' ? (
    <span className="badge badge-warn">admin</span>
  ) : (
    <span className="badge badge-neutral">query</span>
  );
}

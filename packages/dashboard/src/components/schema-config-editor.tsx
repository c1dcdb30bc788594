import { useRef } from 'react';
import { errorMessage, isApiError } from '../api.ts';
import { TextArea } from './fields.tsx';
import { configProblems, formatConfig, type ParsedConfig } from './schema-config-json.ts';

/** The API's refusal of a config, one key path per line (400 invalid_schema_config). */
function ServerProblems(props: { error: unknown }) {
  const message = errorMessage(props.error);
  const problems = isApiError(props.error, 'invalid_schema_config')
    ? configProblems(message)
    : [message];
  return (
    <div className="notice notice-error schema-problems" role="alert">
      <strong>
        {isApiError(props.error, 'invalid_schema_config')
          ? 'The API refused the schema config:'
          : 'The API refused the change:'}
      </strong>
      <ul>
        {problems.map((problem) => (
          <li key={problem}>
            <code>{problem}</code>
          </li>
        ))}
      </ul>
    </div>
  );
}

/**
 * The schema config as JSON text. Syntax errors are found as you type (with line and column,
 * and a button that puts the cursor there); the API's own validation errors appear beneath.
 */
export function SchemaConfigEditor(props: {
  text: string;
  onChange: (text: string) => void;
  parsed: ParsedConfig;
  /** The last save's error, when it was about the config. */
  serverError?: unknown;
  readOnly?: boolean;
}) {
  const wrapper = useRef<HTMLDivElement>(null);
  const { parsed } = props;
  const goTo = (offset: number) => {
    const area = wrapper.current?.querySelector('textarea');
    if (!area) return;
    area.focus();
    area.setSelectionRange(offset, Math.min(offset + 1, props.text.length));
  };
  return (
    <div className="schema-editor stack" ref={wrapper}>
      <TextArea
        label="Schema config (JSON)"
        className="code schema-editor-text"
        rows={22}
        value={props.text}
        onChange={(event) => props.onChange(event.target.value)}
        readOnly={props.readOnly}
        error={parsed.ok ? undefined : parsed.message}
        hint={
          <>
            Which tables and columns are served, filters, renames, sync. <code>{'{}'}</code> serves
            every table with every default. Reference: <code>docs/schema-config.md</code>.
          </>
        }
      />
      <div className="row">
        {!parsed.ok && parsed.offset !== undefined && (
          <button
            type="button"
            className="button button-small"
            onClick={() => goTo(parsed.offset ?? 0)}
          >
            Go to the error
          </button>
        )}
        <button
          type="button"
          className="button button-small"
          disabled={!parsed.ok || props.readOnly}
          title={parsed.ok ? undefined : 'Fix the JSON first.'}
          onClick={() => parsed.ok && props.onChange(formatConfig(parsed.value))}
        >
          Format JSON
        </button>
      </div>
      {props.serverError !== undefined && props.serverError !== null && (
        <ServerProblems error={props.serverError} />
      )}
    </div>
  );
}

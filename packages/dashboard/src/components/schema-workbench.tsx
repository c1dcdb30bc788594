import type { UseQueryResult } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { errorMessage, isApiError } from '../api.ts';
import type { SchemaIntrospection } from './connection-queries.ts';
import { ErrorNotice, Loading } from './page.tsx';
import { SchemaBrowser } from './schema-browser.tsx';
import { SchemaConfigEditor } from './schema-config-editor.tsx';
import { formatConfig, listedTables, type ParsedConfig, withTable } from './schema-config-json.ts';

/** Where the browser's tables come from: a live introspection, or why there is none. */
export type SchemaSource =
  | { query: UseQueryResult<SchemaIntrospection>; note?: ReactNode }
  | { unavailable: ReactNode };

function BrowserPane(props: {
  source: SchemaSource;
  parsed: ParsedConfig;
  onAdd: ((table: string) => void) | undefined;
  addReason: string | undefined;
}) {
  const { source } = props;
  if ('unavailable' in source) return <div className="muted schema-note">{source.unavailable}</div>;
  const { query } = source;
  return (
    <>
      {source.note && <p className="muted schema-note">{source.note}</p>}
      {query.isPending ? (
        <Loading what="the source schema" />
      ) : query.error ? (
        <ErrorNotice error={query.error} title="Could not read the source schema" />
      ) : (
        <SchemaBrowser
          schema={query.data}
          listed={props.parsed.ok ? listedTables(props.parsed.value) : undefined}
          onAdd={props.onAdd}
          addReason={props.addReason}
        />
      )}
    </>
  );
}

/** Why a save waits for the editor: its JSON does not parse. */
export const FIX_JSON = 'Fix the JSON first.';

/** A save's error when it is about the schema config (it belongs under the editor). */
export function schemaConfigError(error: unknown): unknown {
  const aboutConfig =
    isApiError(error, 'invalid_schema_config') || errorMessage(error).includes('schemaConfig');
  return error && aboutConfig ? error : undefined;
}

/** The schema config editor beside the source schema browser (stacked on narrow screens). */
export function SchemaWorkbench(props: {
  text: string;
  onChange: (text: string) => void;
  parsed: ParsedConfig;
  serverError?: unknown;
  source: SchemaSource;
  /** Why the config cannot be edited (a member), if so. */
  readOnlyReason?: string | undefined;
}) {
  const { parsed } = props;
  const readOnly = props.readOnlyReason !== undefined;
  const addReason = readOnly ? props.readOnlyReason : parsed.ok ? undefined : FIX_JSON;
  const onAdd =
    parsed.ok && !readOnly
      ? (table: string) => props.onChange(formatConfig(withTable(parsed.value, table)))
      : undefined;
  const query = 'query' in props.source ? props.source.query : undefined;
  return (
    <div className="schema-layout">
      <SchemaConfigEditor
        text={props.text}
        onChange={props.onChange}
        parsed={parsed}
        serverError={props.serverError}
        readOnly={readOnly}
      />
      <section className="schema-pane stack" aria-labelledby="schema-pane-title">
        <div className="row schema-pane-header">
          <h3 id="schema-pane-title">Source tables</h3>
          {query && (
            <button
              type="button"
              className="button button-small"
              onClick={() => void query.refetch()}
              disabled={query.isFetching}
            >
              {query.isFetching ? 'Reading…' : 'Read again'}
            </button>
          )}
        </div>
        <BrowserPane source={props.source} parsed={parsed} onAdd={onAdd} addReason={addReason} />
      </section>
    </div>
  );
}

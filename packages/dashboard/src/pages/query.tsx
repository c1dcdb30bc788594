import { getV1Databases, getV1DatabasesByIdInstance } from '@replix/client';
import { useMutation, useQuery } from '@tanstack/react-query';
import { lazy, Suspense, useEffect, useId, useRef, useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { api, errorMessage, unwrap } from '../api.ts';
import { CopyButton, StatusBadge } from '../components/bits.tsx';
import { Checkbox, SelectField } from '../components/fields.tsx';
import { useInstanceSchema } from '../components/instance-schema.ts';
import { Empty, Page, Panel, QueryState } from '../components/page.tsx';
import { isDemoDatabase, QueryExamples } from '../components/query-examples.tsx';
import { QueryKeyPicker } from '../components/query-key-picker.tsx';
import { isKeyFresh, usePlaygroundKey } from '../components/query-key-store.ts';
import { QueryResults } from '../components/query-results.tsx';
import {
  curlCommand,
  offsetOf,
  type QueryOutcome,
  type QueryRequest,
  runWithFreshKey,
} from '../components/query-run.ts';
import { QueryTables } from '../components/query-tables.tsx';
import { exampleQuery } from '../query-editor/example-query.ts';
import type { QueryCodeEditorHandle } from '../query-editor/query-code-editor.tsx';
import './query.css';

// CodeMirror and the query parser come with the playground only: other pages never load them.
const QueryCodeEditor = lazy(() => import('../query-editor/query-code-editor.tsx'));

type DatabaseSummary = Awaited<ReturnType<typeof loadDatabases>>[number];

function loadDatabases() {
  return unwrap(getV1Databases({ client: api }));
}

/** Query playground: pick a running database and a key, run queries against its instance. */
export function QueryPage() {
  const [params, setParams] = useSearchParams();
  const chosenId = params.get('database') ?? '';
  const databases = useQuery({ queryKey: ['databases'], queryFn: loadDatabases });

  const running = (databases.data ?? []).filter((database) => database.status === 'running');
  const chosen = databases.data?.find((database) => database.id === chosenId);
  // With nothing chosen, one running database is the obvious choice.
  const selected = chosen ?? (chosenId === '' && running.length === 1 ? running[0] : undefined);

  return (
    <Page title="Query playground">
      <p className="muted">
        Queries go from this browser straight to the database’s instance, with one of its API keys,
        exactly as your application would send them.
      </p>
      {!databases.data ? (
        <QueryState query={databases} what="databases" />
      ) : running.length === 0 && !chosen ? (
        <Empty title="No running database">
          A database serves queries once it is provisioned and running. See{' '}
          <Link to="/databases">Databases</Link>.
        </Empty>
      ) : (
        <>
          <SelectField
            label="Database"
            value={selected?.id ?? ''}
            options={[
              ...(selected ? [] : [{ value: '', label: 'Choose a database…' }]),
              ...(chosen && chosen.status !== 'running'
                ? [{ value: chosen.id, label: `${chosen.name} (${chosen.status})` }]
                : []),
              ...running.map((database) => ({ value: database.id, label: database.name })),
            ]}
            hint="Only running databases serve queries."
            onChange={(event) => setParams({ database: event.target.value }, { replace: true })}
          />
          {chosenId !== '' && !chosen && (
            <div className="notice notice-warn" role="status">
              There is no database with the id in this address (it may have been deleted). Choose
              one above.
            </div>
          )}
          {selected && <Playground key={selected.id} database={selected} />}
        </>
      )}
    </Page>
  );
}

function Playground(props: { database: DatabaseSummary }) {
  const { database } = props;
  const instance = useQuery({
    queryKey: ['database', database.id, 'instance'],
    queryFn: () => unwrap(getV1DatabasesByIdInstance({ client: api, path: { id: database.id } })),
    refetchInterval: 15_000,
  });
  const [apiKey] = usePlaygroundKey(database.id);

  if (database.status !== 'running') {
    return (
      <div className="notice notice-warn" role="status">
        {database.name} is {database.status}: only a running database serves queries.{' '}
        <Link to={`/databases/${database.id}`}>Open {database.name}</Link>
      </div>
    );
  }
  if (!instance.data) return <QueryState query={instance} what="the instance" />;
  const endpoint = instance.data.instance?.endpointUrl;
  if (!endpoint) {
    return (
      <div className="notice notice-warn" role="status">
        {database.name} has no instance address yet. Try again in a moment.
      </div>
    );
  }
  return (
    <>
      <div className="grid-2">
        <Panel title="Instance">
          <div className="row">
            <code className="query-endpoint">{endpoint}</code>
            <CopyButton text={endpoint} label="Copy URL" />
          </div>
          <p className="row">
            <span className="muted">Health</span>
            <StatusBadge status={instance.data.instance?.healthStatus ?? 'unknown'} />
          </p>
        </Panel>
        <Panel title="Credentials">
          <QueryKeyPicker databaseId={database.id} databaseName={database.name} />
        </Panel>
      </div>
      <QueryEditor database={database} endpoint={endpoint} apiKey={apiKey} />
    </>
  );
}

/** Replaces the query's `AFTER '…'` cursor (the next page of a keyset walk). */
function withCursor(text: string, cursor: string): string {
  const literal = `AFTER '${cursor.replaceAll("'", "''")}'`;
  const pattern = /AFTER\s+'(?:[^']|'')*'/i;
  return pattern.test(text) ? text.replace(pattern, literal) : `${text.trimEnd()} ${literal}`;
}

function QueryEditor(props: {
  database: DatabaseSummary;
  endpoint: string;
  apiKey: string | null;
}) {
  const demo = isDemoDatabase(props.database);
  const [text, setText] = useState('');
  const [useGet, setUseGet] = useState(false);
  const editor = useRef<QueryCodeEditorHandle>(null);
  const editorId = useId();
  const schema = useInstanceSchema(props.endpoint, props.apiKey);
  const run = useMutation<QueryOutcome, Error, QueryRequest>({
    mutationFn: (request) => runWithFreshKey(request, isKeyFresh),
  });
  const resultRef = useRef<HTMLDivElement>(null);
  // Below the editor the answer would land out of sight: bring it into view when it arrives
  // (each run passes through pending, so each answer scrolls).
  const answered = run.isSuccess || run.isError;
  useEffect(() => {
    if (answered) resultRef.current?.scrollIntoView({ block: 'start' });
  }, [answered]);

  const request = (query: string): QueryRequest | null =>
    props.apiKey && query.trim() !== ''
      ? {
          instanceUrl: props.endpoint,
          apiKey: props.apiKey,
          text: query,
          method: useGet ? 'GET' : 'POST',
        }
      : null;
  const current = request(text);

  function runText(query: string) {
    const next = request(query);
    if (next && !run.isPending) run.mutate(next);
  }

  function showPosition(position: { line: number; column: number }) {
    const offset = offsetOf(text, position);
    editor.current?.select(offset, Math.min(offset + 1, text.length));
  }

  function pick(query: string) {
    setText(query);
    editor.current?.focus();
  }

  return (
    <>
      <Panel title="Editor">
        {demo && <QueryExamples onPick={pick} />}
        {props.apiKey && <QueryTables schema={schema.data} onPick={pick} />}
        <div className="field">
          <div className="query-field-label" id={`${editorId}-label`}>
            Query
          </div>
          <Suspense fallback={<p className="muted">Loading the editor…</p>}>
            <QueryCodeEditor
              ref={editor}
              value={text}
              onChange={setText}
              onRun={() => runText(text)}
              schema={schema.data}
              labelId={`${editorId}-label`}
              hintId={`${editorId}-hint`}
              placeholder={exampleQuery(schema.data)}
            />
          </Suspense>
          <div className="field-hint" id={`${editorId}-hint`}>
            Ctrl+Enter (⌘+Enter on a Mac) runs it; Ctrl+Space lists the tables, fields and relations
            that fit where the cursor is. Syntax errors are underlined as you type. The language is
            described in <code>docs/instance-api.md</code>.
          </div>
        </div>
        <Checkbox
          label="Send as GET (cacheable: the answer carries an ETag)"
          checked={useGet}
          onChange={setUseGet}
        />
        <div className="row">
          <button
            type="button"
            className="button button-primary"
            disabled={!current || run.isPending}
            title={props.apiKey ? undefined : 'Choose an API key first.'}
            onClick={() => runText(text)}
          >
            {run.isPending ? 'Running…' : 'Run'}
          </button>
          {current ? (
            <CopyButton text={curlCommand(current)} label="Copy as curl" />
          ) : (
            <button
              type="button"
              className="button button-small"
              disabled
              title="Choose an API key and write a query first."
            >
              Copy as curl
            </button>
          )}
          {!props.apiKey && <span className="muted">Choose an API key above to run queries.</span>}
        </div>
      </Panel>
      <div ref={resultRef} className="query-result">
        <Panel title="Result">
          <p className="visually-hidden" aria-live="polite">
            {runStatus(run)}
          </p>
          {run.isPending && <p className="muted">Running…</p>}
          {run.error && (
            <div className="notice notice-error" role="alert">
              {errorMessage(run.error)}
            </div>
          )}
          {run.data && !run.isPending && (
            <QueryResults
              outcome={run.data}
              onShowPosition={showPosition}
              onNextPage={(cursor) => {
                const next = withCursor(text, cursor);
                setText(next);
                runText(next);
              }}
            />
          )}
          {run.isIdle && <p className="muted">Run a query to see its rows here.</p>}
        </Panel>
      </div>
    </>
  );
}

/** One sentence for screen readers when a run starts or ends. */
function runStatus(run: {
  isPending: boolean;
  error: Error | null;
  data: QueryOutcome | undefined;
}): string {
  if (run.isPending) return 'Running the query…';
  if (run.error) return 'The query could not be sent.';
  const outcome = run.data;
  if (!outcome) return '';
  if (outcome.kind === 'rows') return `${outcome.rows.length} rows returned.`;
  if (outcome.kind === 'error') return `The query failed: ${outcome.code}.`;
  return `The instance answered HTTP ${outcome.status}.`;
}

import { useState } from 'react';
import { CopyButton, formatNumber } from './bits.tsx';
import {
  cellText,
  errorPosition,
  isExactNumber,
  parseExact,
  type QueryMeta,
  type QueryOutcome,
  type QueryRow,
} from './query-run.ts';

/** The answer to a playground query: rows (table or raw JSON), meta, or the error. */
export function QueryResults(props: {
  outcome: QueryOutcome;
  onShowPosition: (position: { line: number; column: number }) => void;
  onNextPage: (cursor: string) => void;
}) {
  const { outcome } = props;
  switch (outcome.kind) {
    case 'rows':
      return <QueryRows outcome={outcome} onNextPage={props.onNextPage} />;
    case 'error':
      return <QueryError outcome={outcome} onShowPosition={props.onShowPosition} />;
    case 'unavailable':
      return (
        <div className="stack">
          <div className="notice notice-warn" role="alert">
            The instance is not serving queries yet (HTTP 503): it is loading its snapshot or failed
            to start. Its status document:
          </div>
          <pre className="code-block">{outcome.rawText}</pre>
        </div>
      );
    case 'not-modified':
      return (
        <div className="notice notice-info" role="status">
          HTTP 304: the answer has not changed since the ETag sent.
        </div>
      );
    default:
      return (
        <div className="stack">
          <div className="notice notice-error" role="alert">
            An unexpected answer from the instance (HTTP {outcome.status}).
          </div>
          {outcome.rawText && <pre className="code-block">{outcome.rawText}</pre>}
        </div>
      );
  }
}

type RowsOutcome = Extract<QueryOutcome, { kind: 'rows' }>;

function QueryRows(props: { outcome: RowsOutcome; onNextPage: (cursor: string) => void }) {
  const [view, setView] = useState<'table' | 'json'>('table');
  const { rows, meta } = props.outcome;
  const cursor = meta.pagination?.next_cursor;
  return (
    <div className="stack">
      <QueryMetaStats outcome={props.outcome} />
      <div className="row query-result-bar">
        <fieldset className="query-view-toggle">
          <legend className="visually-hidden">Show the answer as</legend>
          {(['table', 'json'] as const).map((option) => (
            <button
              key={option}
              type="button"
              className={`button button-small${view === option ? ' button-primary' : ''}`}
              aria-pressed={view === option}
              onClick={() => setView(option)}
            >
              {option === 'table' ? 'Table' : 'Raw JSON'}
            </button>
          ))}
        </fieldset>
        <CopyButton text={props.outcome.rawText} label="Copy JSON" />
        {cursor && (
          <>
            <button
              type="button"
              className="button button-small"
              onClick={() => props.onNextPage(cursor)}
            >
              Next page
            </button>
            <span className="muted">
              next cursor <code>{cursor}</code>
            </span>
          </>
        )}
      </div>
      {view === 'json' ? (
        <pre className="code-block query-json">{formatRaw(props.outcome.rawText)}</pre>
      ) : rows.length === 0 ? (
        <p className="empty">No rows matched.</p>
      ) : (
        <RowsTable rows={rows} table={meta.table} />
      )}
    </div>
  );
}

/** Indented, but with every number exactly as the instance wrote it. */
function formatRaw(rawText: string): string {
  const parsed = parseExact(rawText);
  return parsed === undefined ? rawText : JSON.stringify(parsed, null, 2);
}

function columnsOf(rows: QueryRow[]): string[] {
  const seen = new Set<string>();
  for (const row of rows) for (const key of Object.keys(row)) seen.add(key);
  return [...seen];
}

/** A column whose values are all numbers (or null) is right-aligned, header included. */
function isNumeric(rows: QueryRow[], column: string): boolean {
  return rows.every((row) => {
    const value = row[column];
    return (
      value === null || value === undefined || typeof value === 'number' || isExactNumber(value)
    );
  });
}

function RowsTable(props: { rows: QueryRow[]; table: string | undefined }) {
  const columns = columnsOf(props.rows);
  const numeric = new Set(columns.filter((column) => isNumeric(props.rows, column)));
  return (
    <div className="table-wrap query-table-wrap">
      <table className="table query-table">
        <caption className="visually-hidden">
          {props.rows.length} rows{props.table ? ` of ${props.table}` : ''}
        </caption>
        <thead>
          <tr>
            {columns.map((column) => (
              <th key={column} scope="col" className={numeric.has(column) ? 'number' : undefined}>
                {column}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {props.rows.map((row, index) => (
            // Rows have no guaranteed key column; their order is the answer's.
            // biome-ignore lint/suspicious/noArrayIndexKey: positional rows
            <tr key={index}>
              {columns.map((column) => (
                <Cell key={column} value={row[column]} />
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Cell(props: { value: unknown }) {
  const { value } = props;
  if (value === null) return <td className="muted">null</td>;
  if (typeof value === 'number' || isExactNumber(value)) {
    return <td className="number">{cellText(value)}</td>;
  }
  if (typeof value === 'object') {
    return (
      <td>
        <code className="query-nested">{cellText(value)}</code>
      </td>
    );
  }
  return <td>{cellText(value)}</td>;
}

function QueryMetaStats(props: { outcome: RowsOutcome }) {
  const { meta, status, roundTripMs, etag, serviceVersion } = props.outcome;
  const page: NonNullable<QueryMeta['pagination']> = meta.pagination ?? {};
  const items: Array<[string, string]> = [
    ['Rows', formatNumber(page.count ?? props.outcome.rows.length)],
    ['Matched', formatNumber(page.total_matched)],
    ['More rows', page.has_more === undefined ? '–' : page.has_more ? 'yes' : 'no'],
    ['Limit', formatNumber(page.limit)],
    ['Query time', meta.timing_ms === undefined ? '–' : `${meta.timing_ms} ms`],
    ['Round trip', `${Math.round(roundTripMs)} ms`],
    [
      'Snapshot',
      meta.snapshot
        ? `swap ${meta.snapshot.swap_count ?? '–'}, age ${formatAge(meta.snapshot.age_ms)}`
        : '–',
    ],
    ['HTTP status', String(status)],
  ];
  if (meta.table) items.unshift(['Table', meta.table]);
  return (
    <div className="stack">
      <dl className="stats" aria-label="Query meta">
        {items.map(([label, value]) => (
          <div key={label}>
            <dt>{label}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
      <p className="muted query-meta-line">
        Version <code>{meta.version ?? serviceVersion ?? 'unknown'}</code>
        {etag && (
          <>
            {' '}
            · ETag <code>{etag}</code>
          </>
        )}
      </p>
    </div>
  );
}

function formatAge(ms: number | undefined): string {
  if (ms === undefined) return '–';
  return ms < 10_000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`;
}

type ErrorOutcome = Extract<QueryOutcome, { kind: 'error' }>;

function QueryError(props: {
  outcome: ErrorOutcome;
  onShowPosition: (position: { line: number; column: number }) => void;
}) {
  const { code, message, status } = props.outcome;
  const position = errorPosition(message);
  return (
    <div className="notice notice-error query-error" role="alert">
      <p>
        <strong>{code}</strong> <span>(HTTP {status})</span>
        {position && (
          <>
            {' '}
            at line {position.line}, column {position.column}
          </>
        )}
      </p>
      <pre className="query-error-message">{message}</pre>
      {code === 'unauthorized' && (
        <p>
          The instance refused the key: it may have been deleted, or belong to another database.
          Forget it and paste or create another.
        </p>
      )}
      {position && (
        <button
          type="button"
          className="button button-small"
          onClick={() => props.onShowPosition(position)}
        >
          Show the position in the editor
        </button>
      )}
    </div>
  );
}

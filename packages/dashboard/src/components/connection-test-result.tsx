import { SOURCE_DIALECTS } from '@replix/sources/dialect';
import { formatBytes } from './bits.tsx';
import type { Backend, TestResult } from './connection-queries.ts';
import { ErrorNotice } from './page.tsx';

function latencyText(ms: number | undefined): string {
  if (ms === undefined) return '–';
  return ms < 10 ? `${ms.toFixed(2)} ms` : `${Math.round(ms)} ms`;
}

/** The answer of a connection test: the reason it failed, or what the source looks like. */
function TestAnswer(props: { result: TestResult; backend: Backend }) {
  const { result } = props;
  const { changeLog } = SOURCE_DIALECTS[props.backend];
  if (!result.ok) {
    return (
      <div className="notice notice-error">
        <strong>Connection failed: </strong>
        {result.error ?? 'the source did not answer.'}
      </div>
    );
  }
  const binlog = result.binlog;
  const schemas = result.availableSchemas ?? [];
  return (
    <div className="conn-test stack">
      <p className="conn-test-ok">
        <strong>Connection succeeded.</strong> Replix could log in and read the server.
      </p>
      <dl className="stats">
        <div>
          <dt>Latency</dt>
          <dd>{latencyText(result.latencyMs)}</dd>
        </div>
        <div>
          <dt>Estimated size</dt>
          <dd>
            {result.estimatedSizeGb === undefined
              ? 'unknown'
              : formatBytes(result.estimatedSizeGb * 1e9)}
          </dd>
        </div>
        <div>
          <dt>Schemas</dt>
          <dd>{schemas.length}</dd>
        </div>
      </dl>
      <div>
        <h3>Schemas this user can read</h3>
        {schemas.length === 0 ? (
          <p className="muted">None: the user cannot read any database on this server.</p>
        ) : (
          <ul className="conn-chips" aria-label="Available schemas">
            {schemas.map((schema) => (
              <li key={schema}>
                <code>{schema}</code>
              </li>
            ))}
          </ul>
        )}
      </div>
      {binlog && (
        <div>
          <h3>
            {changeLog.name}:{' '}
            <span className={`badge ${binlog.ready ? 'badge-good' : 'badge-warn'}`}>
              {binlog.ready ? 'ready' : 'not ready'}
            </span>
          </h3>
          <p className="muted conn-note">
            Change data capture needs this; without it a database can still poll for changes.
          </p>
          <dl className="stats">
            <div>
              <dt>Enabled</dt>
              <dd>{binlog.logBin ? 'yes' : 'no'}</dd>
            </div>
            <div>
              <dt>{changeLog.formatLabel}</dt>
              <dd>{binlog.format ?? '–'}</dd>
            </div>
            {changeLog.hasServerId && (
              <div>
                <dt>Server id</dt>
                <dd>{binlog.serverId ?? '–'}</dd>
              </div>
            )}
          </dl>
          {binlog.issues.length > 0 && (
            <ul className="conn-issues" aria-label="Replication issues">
              {binlog.issues.map((issue) => (
                <li key={issue}>{issue}</li>
              ))}
            </ul>
          )}
        </div>
      )}
    </div>
  );
}

/** A polite live region with the latest test: running, its answer, or the call's error. */
export function ConnectionTestResult(props: {
  pending: boolean;
  result: TestResult | undefined;
  error: unknown;
  backend: Backend;
}) {
  return (
    <section className="conn-test-region" aria-live="polite" aria-label="Connection test result">
      {props.pending ? (
        <p className="muted" aria-busy="true">
          Testing the connection…
        </p>
      ) : props.error ? (
        <ErrorNotice error={props.error} title="Test failed" />
      ) : props.result ? (
        <TestAnswer result={props.result} backend={props.backend} />
      ) : null}
    </section>
  );
}

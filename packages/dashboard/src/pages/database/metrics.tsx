import { isApiError } from '../../api.ts';
import { formatBytes, formatNumber } from '../../components/bits.tsx';
import { formatDateTime } from '../../components/date-time.ts';
import {
  deriveSeries,
  latest,
  type MetricsSample,
  useMetricsHistory,
  WINDOW_MS,
} from '../../components/instance-metrics-history.ts';
import { formatSeconds } from '../../components/instance-queries.ts';
import { MetricsChart } from '../../components/metrics-chart.tsx';
import { ErrorNotice, Loading, Panel } from '../../components/page.tsx';
import { useDatabase } from './database-layout.tsx';
import './operations.css';

const perSecond = (value: number) => `${value < 10 ? value.toFixed(2) : value.toFixed(1)}/s`;
const milliseconds = (value: number) => `${value < 10 ? value.toFixed(2) : value.toFixed(0)} ms`;
const rows = (value: number) => formatNumber(Math.round(value));
/** For sentences: "3.58 queries per second", not "3.58/s queries per second". */
const decimal = (value: number) => (value < 10 ? value.toFixed(2) : value.toFixed(1));

function said(value: number | null, format: (value: number) => string, none: string): string {
  return value === null ? none : format(value);
}

/**
 * Charts of the live instance over the last 15 minutes (read every 5 s while this tab is
 * open) and its current counters. Rates come from the change between two readings.
 */
export function MetricsTab() {
  const database = useDatabase();
  const history = useMetricsHistory(database.id);
  const samples = history.data ?? [];
  const now = samples.at(-1);
  const unavailable = isApiError(history.error, 'instance_unavailable');

  return (
    <div className="stack">
      {unavailable && (
        <p className="notice notice-info" role="status">
          Metrics come from the running instance, and {database.name} has none answering now (status{' '}
          {database.status}). They resume when it runs again.
        </p>
      )}
      {history.error !== null && !unavailable && <ErrorNotice error={history.error} />}
      {history.isPending && <Loading what="metrics" />}
      {now && <CurrentValues sample={now} />}
      {samples.length > 0 && <Charts samples={samples} />}
    </div>
  );
}

function CurrentValues(props: { sample: MetricsSample }) {
  const { sample } = props;
  const totalRows = Object.values(sample.tableRows).reduce((sum, count) => sum + count, 0);
  const meanMs =
    sample.queryDurationCount > 0
      ? milliseconds((sample.queryDurationSum / sample.queryDurationCount) * 1000)
      : '–';
  return (
    <Panel title="Now">
      <p className="muted ops-small">
        Counters since the instance started; read {formatDateTime(sample.at)}.
      </p>
      <dl className="stats">
        <div>
          <dt>Queries answered</dt>
          <dd>{formatNumber(sample.queriesOk)}</dd>
        </div>
        <div>
          <dt>Queries failed</dt>
          <dd>{formatNumber(sample.queriesErr)}</dd>
        </div>
        <div>
          <dt>Mean latency since start</dt>
          <dd>{meanMs}</dd>
        </div>
        <div>
          <dt>Snapshot size</dt>
          <dd>{formatBytes(sample.snapshotBytes)}</dd>
        </div>
        <div>
          <dt>Snapshot age</dt>
          <dd>{formatSeconds(sample.snapshotAgeSeconds)}</dd>
        </div>
        <div>
          <dt>Swaps</dt>
          <dd>{formatNumber(sample.swapCount)}</dd>
        </div>
        <div>
          <dt>Rows</dt>
          <dd>{formatNumber(totalRows)}</dd>
        </div>
        {Object.entries(sample.tableRows)
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([table, count]) => (
            <div key={table}>
              <dt>
                Rows in <code>{table}</code>
              </dt>
              <dd>{formatNumber(count)}</dd>
            </div>
          ))}
      </dl>
    </Panel>
  );
}

function Charts(props: { samples: MetricsSample[] }) {
  const series = deriveSeries(props.samples);
  const waiting = props.samples.length < 2 ? ' Rates appear after the second reading (5 s).' : '';
  const queryRate = latest(series.queryRate);
  const errorRate = latest(series.errorRate);
  const latency = latest(series.latencyMs);
  const tables = Object.entries(series.rowsByTable);
  const rowsNow = tables.map(([table, values]) => `${table} ${said(latest(values), rows, '–')}`);
  return (
    <>
      <p className="muted ops-small">
        The last {WINDOW_MS / 60_000} minutes while this page is open, one reading every 5 seconds.
        {waiting}
      </p>
      <div className="ops-charts">
        <MetricsChart
          title="Query rate"
          summary={`Latest: ${said(queryRate, (v) => `${decimal(v)} queries per second`, 'no rate yet')}.`}
          x={series.x}
          series={[{ label: 'Queries/s', values: series.queryRate }]}
          format={perSecond}
        />
        <MetricsChart
          title="Errors"
          summary={`Latest: ${said(errorRate, (v) => `${decimal(v)} failed queries per second`, 'no rate yet')}.`}
          x={series.x}
          series={[{ label: 'Errors/s', values: series.errorRate }]}
          format={perSecond}
        />
        <MetricsChart
          title="Latency"
          summary={`Latest: ${said(latency, (v) => `${milliseconds(v)} mean per query`, 'no queries yet')}.`}
          x={series.x}
          series={[{ label: 'Mean latency', values: series.latencyMs }]}
          format={milliseconds}
        />
        <MetricsChart
          title="Snapshot size"
          summary={`Latest: ${formatBytes(latest(series.snapshotBytes))}.`}
          x={series.x}
          series={[{ label: 'Snapshot', values: series.snapshotBytes }]}
          format={(value) => formatBytes(value)}
        />
      </div>
      <MetricsChart
        title="Rows"
        summary={`Latest: ${rowsNow.join(', ') || 'no tables'}.`}
        x={series.x}
        series={tables.map(([table, values]) => ({ label: table, values }))}
        format={rows}
      />
    </>
  );
}

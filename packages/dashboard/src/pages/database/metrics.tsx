import { isApiError } from '../../api.ts';
import { formatBytes, formatNumber } from '../../components/bits.tsx';
import { formatDateTime } from '../../components/date-time.ts';
import {
  deriveSeries,
  latest,
  type MetricsSample,
  useLiveMetrics,
  useStoredMetrics,
  withLive,
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
 * Charts of the last 24 hours, from the readings the control plane keeps (whether or not this
 * page was open), ending with the live reading; and the live counters, read every 5 s.
 */
export function MetricsTab() {
  const database = useDatabase();
  const live = useLiveMetrics(database.id);
  const stored = useStoredMetrics(database.id);
  const now = live.data;
  const unavailable = isApiError(live.error, 'instance_unavailable');
  const samples = withLive(stored.data?.samples ?? [], now);

  return (
    <div className="stack">
      {unavailable && (
        <p className="notice notice-info" role="status">
          Live metrics come from the running instance, and {database.name} has none answering now
          (status {database.status}). They resume when it runs again; the charts keep the last 24
          hours.
        </p>
      )}
      {live.error !== null && !unavailable && <ErrorNotice error={live.error} />}
      {stored.error !== null && <ErrorNotice error={stored.error} />}
      {live.isPending && stored.isPending && <Loading what="metrics" />}
      {now && <CurrentValues sample={now} />}
      {stored.data && <Charts samples={samples} intervalMs={stored.data.intervalMs} />}
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

function Charts(props: { samples: MetricsSample[]; intervalMs: number }) {
  const series = deriveSeries(props.samples, props.intervalMs);
  const waiting = props.samples.length < 2 ? ' Rates appear from the second reading.' : '';
  const queryRate = latest(series.queryRate);
  const errorRate = latest(series.errorRate);
  const latency = latest(series.latencyMs);
  const tables = Object.entries(series.rowsByTable);
  const rowsNow = tables.map(([table, values]) => `${table} ${said(latest(values), rows, '–')}`);
  return (
    <>
      <p className="muted ops-small">
        The last 24 hours, one reading every {props.intervalMs / 1000} seconds kept by the control
        plane whether or not this page is open, and the live one.{waiting}
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

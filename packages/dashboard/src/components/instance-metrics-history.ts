import { getV1DatabasesByIdMetrics, getV1DatabasesByIdMetricsHistory } from '@replix/client';
import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../api.ts';

type InstanceMetrics = Awaited<ReturnType<typeof loadMetrics>>;

/** One reading of the instance's counters and gauges, and when it was taken (epoch ms). */
export type MetricsSample = Omit<InstanceMetrics, 'at'> & { at: number };

/** How much history the charts show: what the control plane keeps (its retention). */
export const WINDOW_MS = 24 * 3600_000;
/** How often the live reading ("Now") is refreshed. */
export const POLL_MS = 5000;

function loadMetrics(id: string) {
  return unwrap(getV1DatabasesByIdMetrics({ client: api, path: { id } }));
}

/** The instance's live metrics, read every 5 s: the "Now" panel and the charts' newest point. */
export function useLiveMetrics(id: string) {
  return useQuery({
    queryKey: ['database', id, 'metrics'],
    queryFn: async (): Promise<MetricsSample> => ({ ...(await loadMetrics(id)), at: Date.now() }),
    refetchInterval: POLL_MS,
    // The next reading is 5 s away anyway; an unavailable instance should say so at once.
    retry: false,
  });
}

/**
 * The readings the control plane kept over the last 24 hours (its health monitor takes one
 * every `intervalMs` whether or not a page is open), refreshed at that interval.
 */
export function useStoredMetrics(id: string) {
  return useQuery({
    queryKey: ['database', id, 'metrics-history'],
    queryFn: async () => {
      const history = await unwrap(getV1DatabasesByIdMetricsHistory({ client: api, path: { id } }));
      return {
        intervalMs: history.intervalSeconds * 1000,
        samples: history.samples.map(
          (sample): MetricsSample => ({
            ...sample,
            at: Date.parse(sample.at),
          }),
        ),
      };
    },
    refetchInterval: 30_000,
  });
}

/** The stored readings with the live one after them (when it is newer). */
export function withLive(
  stored: MetricsSample[],
  live: MetricsSample | undefined,
): MetricsSample[] {
  const last = stored.at(-1);
  return live && (!last || live.at > last.at) ? [...stored, live] : stored;
}

/** Per-second change of a counter between two readings; null across a restart (it fell). */
function rate(current: number, previous: number, seconds: number): number | null {
  const delta = current - previous;
  return delta < 0 || seconds <= 0 ? null : delta / seconds;
}

export interface MetricsSeries {
  /** Seconds since the epoch, one per reading (uPlot's time axis). */
  x: number[];
  queryRate: Array<number | null>;
  errorRate: Array<number | null>;
  /** Mean latency of the queries between two readings, ms; null when there were none. */
  latencyMs: Array<number | null>;
  snapshotBytes: Array<number | null>;
  rowsByTable: Record<string, Array<number | null>>;
}

/**
 * Chart series from the readings: rates and mean latency from counter deltas. Readings further
 * apart than three intervals (no instance answering) break the lines there.
 */
export function deriveSeries(samples: MetricsSample[], intervalMs: number): MetricsSeries {
  const tables = [...new Set(samples.flatMap((sample) => Object.keys(sample.tableRows)))].sort();
  const series: MetricsSeries = {
    x: [],
    queryRate: [],
    errorRate: [],
    latencyMs: [],
    snapshotBytes: [],
    rowsByTable: Object.fromEntries(tables.map((table) => [table, []])),
  };
  samples.forEach((sample, index) => {
    const gapBefore = samples[index - 1];
    if (gapBefore && sample.at - gapBefore.at > 3 * intervalMs) {
      series.x.push((gapBefore.at + intervalMs) / 1000);
      series.snapshotBytes.push(null);
      for (const table of tables) series.rowsByTable[table]?.push(null);
      series.queryRate.push(null);
      series.errorRate.push(null);
      series.latencyMs.push(null);
    }
    series.x.push(sample.at / 1000);
    series.snapshotBytes.push(sample.snapshotBytes);
    for (const table of tables) series.rowsByTable[table]?.push(sample.tableRows[table] ?? null);
    const before = samples[index - 1];
    if (!before) {
      series.queryRate.push(null);
      series.errorRate.push(null);
      series.latencyMs.push(null);
      return;
    }
    const seconds = (sample.at - before.at) / 1000;
    const ok = rate(sample.queriesOk, before.queriesOk, seconds);
    const err = rate(sample.queriesErr, before.queriesErr, seconds);
    series.queryRate.push(ok === null || err === null ? null : ok + err);
    series.errorRate.push(err);
    const count = sample.queryDurationCount - before.queryDurationCount;
    const sum = sample.queryDurationSum - before.queryDurationSum;
    series.latencyMs.push(count > 0 && sum >= 0 ? (sum / count) * 1000 : null);
  });
  return series;
}

/** The newest non-null value of a series. */
export function latest(values: Array<number | null>): number | null {
  for (let index = values.length - 1; index >= 0; index -= 1) {
    const value = values[index];
    if (value !== null && value !== undefined) return value;
  }
  return null;
}

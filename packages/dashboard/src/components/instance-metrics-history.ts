import { getV1DatabasesByIdMetrics } from '@replix/client';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../api.ts';

type InstanceMetrics = Awaited<ReturnType<typeof loadMetrics>>;

/** One reading of the instance's counters and gauges, and when it was taken (epoch ms). */
export type MetricsSample = InstanceMetrics & { at: number };

/** How much history the charts keep. */
export const WINDOW_MS = 15 * 60_000;
export const POLL_MS = 5000;

function loadMetrics(id: string) {
  return unwrap(getV1DatabasesByIdMetrics({ client: api, path: { id } }));
}

/**
 * The instance's metrics, read every 5 s, as a rolling window of readings. The window lives in
 * the query cache (not the page), so switching tabs and back keeps it; signing out clears it.
 */
export function useMetricsHistory(id: string) {
  const queryClient = useQueryClient();
  const queryKey = ['database', id, 'metrics-history'];
  return useQuery({
    queryKey,
    queryFn: async (): Promise<MetricsSample[]> => {
      const metrics = await loadMetrics(id);
      const at = Date.now();
      const previous = queryClient.getQueryData<MetricsSample[]>(queryKey) ?? [];
      return [...previous.filter((sample) => sample.at > at - WINDOW_MS), { ...metrics, at }];
    },
    refetchInterval: POLL_MS,
    // The next reading is 5 s away anyway; an unavailable instance should say so at once.
    retry: false,
    structuralSharing: false,
  });
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

/** Chart series from the readings: rates and mean latency from counter deltas. */
export function deriveSeries(samples: MetricsSample[]): MetricsSeries {
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
    // Readings missed (no instance, tab hidden): a null point breaks the lines there.
    if (gapBefore && sample.at - gapBefore.at > 3 * POLL_MS) {
      series.x.push((gapBefore.at + POLL_MS) / 1000);
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

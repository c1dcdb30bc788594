/** Spec §2 InstanceMetrics: what the API reports from an instance's Prometheus metrics. */
export interface InstanceMetricsReport {
  queriesOk: number;
  queriesErr: number;
  snapshotBytes: number;
  snapshotAgeSeconds: number;
  swapCount: number;
  tableRows: Record<string, number>;
  queryDurationSum: number;
  queryDurationCount: number;
}

interface Sample {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly value: number;
}

const SAMPLE = /^([A-Za-z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+-?\d+)?$/;
const LABEL = /([A-Za-z_]\w*)="((?:[^"\\]|\\.)*)"/g;

function unescapeLabel(value: string): string {
  return value.replace(/\\(.)/g, (_match, char: string) => (char === 'n' ? '\n' : char));
}

/** The samples of a Prometheus text exposition (version 0.0.4); comments and junk are skipped. */
function samplesOf(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const match = SAMPLE.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const label of (match[2] ?? '').matchAll(LABEL)) {
      labels[label[1] as string] = unescapeLabel(label[2] as string);
    }
    const value = Number(match[3]);
    if (Number.isFinite(value)) samples.push({ name: match[1] as string, labels, value });
  }
  return samples;
}

/**
 * Maps an instance's `GET /metrics` text to InstanceMetrics, by the metric names of
 * packages/instance/src/threads/metrics.ts. A metric the instance did not report counts as 0, so an
 * older instance still gives a complete answer.
 */
export function parseInstanceMetrics(text: string): InstanceMetricsReport {
  const samples = samplesOf(text);
  const value = (name: string, labels: Record<string, string> = {}): number =>
    samples.find(
      (sample) =>
        sample.name === name &&
        Object.entries(labels).every(([key, wanted]) => sample.labels[key] === wanted),
    )?.value ?? 0;
  const tableRows: Record<string, number> = {};
  for (const sample of samples) {
    const table = sample.labels.table;
    if (sample.name === 'replix_table_rows' && table !== undefined) tableRows[table] = sample.value;
  }
  return {
    queriesOk: value('replix_queries_total', { outcome: 'ok' }),
    queriesErr: value('replix_queries_total', { outcome: 'error' }),
    snapshotBytes: value('replix_snapshot_bytes'),
    snapshotAgeSeconds: value('replix_snapshot_age_seconds'),
    // replix_swap_count: its name in artifacts built before it became a counter.
    swapCount: value('replix_swaps_total') || value('replix_swap_count'),
    tableRows,
    queryDurationSum: value('replix_query_duration_seconds_sum'),
    queryDurationCount: value('replix_query_duration_seconds_count'),
  };
}

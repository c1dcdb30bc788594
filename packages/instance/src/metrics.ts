import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { SnapshotController } from './snapshot-controller.ts';

/**
 * The instance's Prometheus metrics. The control plane derives InstanceMetrics (spec §2) from
 * them: queriesOk/queriesErr ← `replix_queries_total{outcome}`, snapshotBytes ←
 * `replix_snapshot_bytes`, snapshotAgeSeconds ← `replix_snapshot_age_seconds`, swapCount ←
 * `replix_swap_count`, tableRows ← `replix_table_rows{table}`, queryDurationSum/Count ←
 * `replix_query_duration_seconds_sum` / `_count`.
 */
export class InstanceMetrics {
  readonly registry = new Registry();
  readonly #queries: Counter<'outcome'>;
  readonly #duration: Histogram;

  constructor(controller: SnapshotController) {
    const registers = [this.registry];
    this.#queries = new Counter({
      name: 'replix_queries_total',
      help: 'Queries answered since start, by outcome (ok or error).',
      labelNames: ['outcome'],
      registers,
    });
    this.#queries.inc({ outcome: 'ok' }, 0);
    this.#queries.inc({ outcome: 'error' }, 0);
    this.#duration = new Histogram({
      name: 'replix_query_duration_seconds',
      help: 'Server-side query execution time.',
      buckets: [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    });
    new Gauge({
      name: 'replix_snapshot_bytes',
      help: 'Bytes held by the served snapshot.',
      registers,
      collect() {
        this.set(controller.current()?.generation.byteSize() ?? 0);
      },
    });
    new Gauge({
      name: 'replix_snapshot_age_seconds',
      help: 'Seconds since the served snapshot was last synced.',
      registers,
      collect() {
        this.set((controller.current()?.ageMs ?? 0) / 1000);
      },
    });
    new Gauge({
      name: 'replix_swap_count',
      help: 'Atomic snapshot swaps since start.',
      registers,
      collect() {
        this.set(controller.current()?.swapCount ?? 0);
      },
    });
    new Gauge({
      name: 'replix_table_rows',
      help: 'Rows per table in the served snapshot.',
      labelNames: ['table'],
      registers,
      collect() {
        const counts = controller.current()?.generation.rowCounts() ?? {};
        for (const [table, rows] of Object.entries(counts)) this.set({ table }, rows);
      },
    });
  }

  recordQuery(ok: boolean, seconds: number): void {
    this.#queries.inc({ outcome: ok ? 'ok' : 'error' });
    if (ok) this.#duration.observe(seconds);
  }
}

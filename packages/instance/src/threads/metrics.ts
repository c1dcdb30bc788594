import { getHeapStatistics } from 'node:v8';
import { Counter, Gauge, Registry } from 'prom-client';
import type { ClientMemory } from '../http/client-memory.ts';
import { DurationHistogram } from './duration-histogram.ts';
import type { QueryAdmission } from './query-admission.ts';
import type { ServedState } from './served-state.ts';

/**
 * With query threads, each thread keeps its own registry; `/metrics` on any of them answers the
 * instance's totals, gathered from every thread (`query-threads.ts`). Counters and histograms
 * add up; a gauge that describes the one shared snapshot keeps the first thread's value.
 */
export interface ThreadMetrics {
  /** This thread's index (0 is the main thread): the `thread` label of `replix_thread_queries_total`. */
  readonly thread: number;
  /** Called once with this thread's registry, so the others can gather it. */
  attach(registry: Registry): void;
  /** The exposition text of every thread's metrics together. */
  gather(): Promise<string>;
}

/**
 * The instance's Prometheus metrics. The control plane derives InstanceMetrics from
 * them: queriesOk/queriesErr ← `replix_queries_total{outcome}`, snapshotBytes ←
 * `replix_snapshot_bytes`, snapshotAgeSeconds ← `replix_snapshot_age_seconds`, swapCount ←
 * `replix_swaps_total`, tableRows ← `replix_table_rows{table}`, queryDurationSum/Count ←
 * `replix_query_duration_seconds_sum` / `_count`. With the admission gate: queries running and
 * queued, and the working memory they hold against what they may hold.
 */
export class InstanceMetrics {
  readonly registry = new Registry();
  readonly #queries: Counter<'outcome'>;
  readonly #duration: DurationHistogram;
  // prom-client hashes labels on every count: a query adds to plain numbers instead, which the
  // counters take when they are read.
  #okCount = 0;
  #errorCount = 0;

  readonly #byThread: Counter<'thread'>;
  readonly #thread: string;
  readonly #sendTimeouts: Counter;

  constructor(
    controller: ServedState,
    admission?: QueryAdmission,
    thread = 0,
    clientMemory?: ClientMemory,
  ) {
    const registers = [this.registry];
    const flushCounts = () => this.#flushCounts();
    this.#queries = new Counter({
      name: 'replix_queries_total',
      help: 'Queries answered since start, by outcome (ok or error).',
      labelNames: ['outcome'],
      registers,
      collect: flushCounts,
    });
    this.#queries.inc({ outcome: 'ok' }, 0);
    this.#queries.inc({ outcome: 'error' }, 0);
    this.#thread = String(thread);
    this.#byThread = new Counter({
      name: 'replix_thread_queries_total',
      help: 'Queries answered since start by each query thread (0 is the main thread).',
      labelNames: ['thread'],
      registers,
      collect: flushCounts,
    });
    this.#byThread.inc({ thread: this.#thread }, 0);
    this.#duration = new DurationHistogram({
      name: 'replix_query_duration_seconds',
      help: 'Server-side query execution time.',
      buckets: [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    });
    new Gauge({
      name: 'replix_snapshot_bytes',
      help: 'Bytes held by the served snapshot.',
      registers,
      aggregator: 'first',
      collect() {
        this.set(controller.current()?.generation.byteSize() ?? 0);
      },
    });
    new Gauge({
      name: 'replix_snapshot_age_seconds',
      help: 'Seconds since the served snapshot was last synced.',
      registers,
      aggregator: 'first',
      collect() {
        this.set((controller.current()?.ageMs ?? 0) / 1000);
      },
    });
    new Counter({
      name: 'replix_swaps_total',
      help: 'Atomic snapshot swaps since start.',
      registers,
      aggregator: 'first',
      collect() {
        // The controller keeps the count: the counter shows it as it is at the scrape.
        this.reset();
        this.inc(controller.current()?.swapCount ?? 0);
      },
    });
    new Gauge({
      name: 'replix_table_rows',
      help: 'Rows per table in the served snapshot.',
      labelNames: ['table'],
      registers,
      aggregator: 'first',
      collect() {
        const counts = controller.current()?.generation.rowCounts() ?? {};
        for (const [table, rows] of Object.entries(counts)) this.set({ table }, rows);
      },
    });
    this.#admissionGauges(controller, admission, registers);
    this.#sendTimeouts = new Counter({
      name: 'replix_send_timeouts_total',
      help: 'Connections closed because their client took none of the bytes waiting for it for http.send_timeout_ms.',
      registers,
    });
    new Gauge({
      name: 'replix_client_held_bytes',
      help: 'Bytes held for clients after their answers were computed: answers in send buffers, live-query events and texts.',
      registers,
      collect() {
        this.set(clientMemory?.totalBytes ?? 0);
      },
    });
  }

  #admissionGauges(
    controller: ServedState,
    admission: QueryAdmission | undefined,
    registers: Registry[],
  ): void {
    new Gauge({
      name: 'replix_queries_running',
      help: 'Queries running now.',
      registers,
      collect() {
        this.set(admission?.running ?? 0);
      },
    });
    new Gauge({
      name: 'replix_queries_queued',
      help: 'Queries waiting for a slot.',
      registers,
      collect() {
        this.set(admission?.queued ?? 0);
      },
    });
    new Gauge({
      name: 'replix_query_working_bytes',
      help: 'Estimated working memory held by the queries running now.',
      registers,
      collect() {
        this.set(admission?.inFlightBytes ?? 0);
      },
    });
    new Gauge({
      name: 'replix_query_working_limit_bytes',
      help: 'Working memory queries may hold together: min(heap limit, cap) - snapshot - headroom.',
      registers,
      aggregator: 'first',
      collect() {
        this.set(controller.queryWorkingBytes());
      },
    });
    new Gauge({
      name: 'replix_heap_limit_bytes',
      help: "V8's heap limit (70% of the instance size when it is given).",
      registers,
      aggregator: 'first',
      collect() {
        this.set(getHeapStatistics().heap_size_limit);
      },
    });
  }

  /** A connection cut by the send timeout (rare: counted as it happens). */
  recordSendTimeout(): void {
    this.#sendTimeouts.inc();
  }

  recordQuery(ok: boolean, seconds: number): void {
    if (!ok) {
      this.#errorCount += 1;
      return;
    }
    this.#okCount += 1;
    this.#duration.observe(seconds);
  }

  #flushCounts(): void {
    const answered = this.#okCount + this.#errorCount;
    if (answered > 0) this.#byThread.inc({ thread: this.#thread }, answered);
    if (this.#okCount > 0) this.#queries.inc({ outcome: 'ok' }, this.#okCount);
    if (this.#errorCount > 0) this.#queries.inc({ outcome: 'error' }, this.#errorCount);
    this.#okCount = 0;
    this.#errorCount = 0;
  }
}

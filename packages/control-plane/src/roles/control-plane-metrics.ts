import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { readStoreGauges } from '../adapters/store/control-plane-gauges.ts';
import type { StoreDb } from '../adapters/store/open-store.ts';
import type { DeliveryStatus } from '../application/webhook-delivery/delivery-status.ts';
import type { Goal } from '../domain/goal.ts';

/** How long a scrape waits for the store's counts before answering without them. */
export const STORE_READ_TIMEOUT_MS = 2000;

/** How a finished goal ended: the database `failed`, or the action done. */
export type GoalOutcomeLabel = 'succeeded' | 'failed';
/** How a claimed build ended in this process (`run-claimed-build.ts`). */
export type BuildOutcomeLabel = 'succeeded' | 'failed' | 'released' | 'lost';

/** The instance health values the monitor records; anything else counts as `unknown`. */
const INSTANCE_HEALTH = new Set(['ok', 'degraded', 'cap_exceeded', 'unreachable']);
const HTTP_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
/** A goal takes seconds (a stop) to many minutes (a large snapshot's deploy). */
const GOAL_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600];
const REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * One control-plane process's Prometheus metrics, in a registry of its own (never prom-client's
 * global one: tests run many control planes in one process). What the roles record as it happens
 * (requests, goals, builds, webhook attempts) counts only in the process that ran it; what the
 * store holds (instances by health, the goal queue's lag) is read at each scrape, the same in
 * every process, so a dashboard takes its `max`. Served at `/metrics` with the scrape token
 * (`api/metrics-endpoint.ts`); the names are `deploy/monitoring/`'s.
 */
export class ControlPlaneMetrics {
  readonly registry = new Registry();
  readonly #db: StoreDb;
  readonly #requests: Counter<'route' | 'method' | 'status_class'>;
  readonly #requestDuration: Histogram<'route' | 'method'>;
  readonly #goals: Counter<'action' | 'outcome'>;
  readonly #goalDuration: Histogram<'action' | 'outcome'>;
  readonly #builds: Counter<'outcome'>;
  readonly #buildDuration: Histogram<'outcome'>;
  readonly #deliveries: Counter<'outcome'>;
  readonly #instances: Gauge<'health'>;
  readonly #goalsWaiting: Gauge;
  readonly #reconcilerLag: Gauge;
  readonly #storeReadable: Gauge;

  constructor(db: StoreDb) {
    this.#db = db;
    const registers = [this.registry];
    this.#requests = new Counter({
      name: 'replix_control_plane_http_requests_total',
      help: 'HTTP requests answered, by route template, method and status class (2xx, 4xx, ...).',
      labelNames: ['route', 'method', 'status_class'],
      registers,
    });
    this.#requestDuration = new Histogram({
      name: 'replix_control_plane_http_request_duration_seconds',
      help: 'Time from a request to its answer, by route template and method.',
      labelNames: ['route', 'method'],
      buckets: REQUEST_BUCKETS,
      registers,
    });
    this.#goals = new Counter({
      name: 'replix_control_plane_goals_finished_total',
      help: 'Goals this process finished, by action and outcome (succeeded or failed).',
      labelNames: ['action', 'outcome'],
      registers,
    });
    this.#goalDuration = new Histogram({
      name: 'replix_control_plane_goal_duration_seconds',
      help: 'Time from the request that queued a goal to its end, by action and outcome.',
      labelNames: ['action', 'outcome'],
      buckets: GOAL_BUCKETS,
      registers,
    });
    this.#builds = new Counter({
      name: 'replix_control_plane_builds_finished_total',
      help: 'Builds this process ran to an end, by outcome (succeeded, failed, released, lost).',
      labelNames: ['outcome'],
      registers,
    });
    this.#buildDuration = new Histogram({
      name: 'replix_control_plane_build_duration_seconds',
      help: "A build attempt's time in this process, by outcome.",
      labelNames: ['outcome'],
      buckets: GOAL_BUCKETS,
      registers,
    });
    this.#deliveries = new Counter({
      name: 'replix_control_plane_webhook_attempts_total',
      help: "Webhook delivery attempts, by the delivery's state after it (delivered, retrying, failed).",
      labelNames: ['outcome'],
      registers,
    });
    this.#instances = new Gauge({
      name: 'replix_control_plane_instances',
      help: 'Instances not removed, by their last recorded health (unknown: not read yet).',
      labelNames: ['health'],
      registers,
    });
    this.#goalsWaiting = new Gauge({
      name: 'replix_control_plane_goals_waiting',
      help: 'Goals a reconciler could claim now.',
      registers,
    });
    this.#reconcilerLag = new Gauge({
      name: 'replix_control_plane_reconciler_lag_seconds',
      help: 'How long the goal claimable longest has waited for a reconciler; 0 when none waits.',
      registers,
    });
    this.#storeReadable = new Gauge({
      name: 'replix_control_plane_store_read_ok',
      help: '1 when this scrape read the store gauges, 0 when the store did not answer in time.',
      registers,
    });
    for (const outcome of ['succeeded', 'failed'] as const) this.#builds.inc({ outcome }, 0);
    for (const outcome of ['delivered', 'retrying', 'failed'] as const)
      this.#deliveries.inc({ outcome }, 0);
  }

  /**
   * One answered request. `route` is the route's template (`/v1/databases/:id`), never the URL
   * asked, so the labels stay bounded; undefined for a request no route matched.
   */
  recordRequest(route: string | undefined, method: string, status: number, seconds: number): void {
    const labels = {
      route: route ?? 'unmatched',
      method: HTTP_METHODS.has(method) ? method : 'other',
    };
    this.#requests.inc({ ...labels, status_class: `${Math.floor(status / 100)}xx` });
    this.#requestDuration.observe(labels, seconds);
  }

  /** A goal finished: its duration is counted from the request that queued it. */
  recordGoal(goal: Goal, outcome: GoalOutcomeLabel, now = Date.now()): void {
    const labels = { action: goal.action, outcome };
    this.#goals.inc(labels);
    const seconds = (now - Date.parse(goal.requestedAt)) / 1000;
    if (Number.isFinite(seconds) && seconds >= 0) this.#goalDuration.observe(labels, seconds);
  }

  recordBuild(outcome: BuildOutcomeLabel, seconds: number): void {
    this.#builds.inc({ outcome });
    this.#buildDuration.observe({ outcome }, seconds);
  }

  /** A webhook attempt, by the delivery's state after it (`record-attempt.ts`). */
  recordDelivery(outcome: DeliveryStatus): void {
    this.#deliveries.inc({ outcome });
  }

  /** The exposition text, with the store's gauges read now (within STORE_READ_TIMEOUT_MS). */
  async exposition(timeoutMs = STORE_READ_TIMEOUT_MS): Promise<string> {
    await this.#readStore(timeoutMs);
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  async #readStore(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), timeoutMs);
    });
    const reading = await Promise.race([
      readStoreGauges(this.#db).catch(() => undefined),
      timeout,
    ]).finally(() => clearTimeout(timer));
    // Without a reading the gauges keep their last values, and store_read_ok says so.
    this.#storeReadable.set(reading ? 1 : 0);
    if (!reading) return;
    this.#instances.reset();
    for (const health of [...INSTANCE_HEALTH, 'unknown']) this.#instances.set({ health }, 0);
    for (const { health, n } of reading.instancesByHealth) {
      const label = health !== null && INSTANCE_HEALTH.has(health) ? health : 'unknown';
      this.#instances.inc({ health: label }, n);
    }
    this.#goalsWaiting.set(reading.goalsWaiting);
    this.#reconcilerLag.set(reading.oldestGoalWaitSeconds);
  }
}

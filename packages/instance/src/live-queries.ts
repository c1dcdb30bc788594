import { createHash } from 'node:crypto';
import { type Generation, planTables, type QueryAnswer, type QueryPlan } from '@replix/engine';
import { errorResponse, InstanceError } from './errors.ts';
import type { ServedSnapshot } from './served-state.ts';

/** Live-query limits of one query thread (docs/limits.md). */
export const LIVE_QUERY_LIMITS = {
  /** Open subscriptions of one key. */
  perKey: 1_000,
  /** Open subscriptions in all. */
  perThread: 10_000,
  /** A comment line this often keeps proxies from closing an idle stream. */
  heartbeatMs: 15_000,
  /** How often the served generation is looked at while anyone is subscribed. */
  pollMs: 10,
  /** A subscriber this far behind in reading its stream is closed (it reconnects). */
  maxBufferedBytes: 4 * 1024 * 1024,
  /**
   * The largest result event a group keeps for subscribers that join later; a bigger one is
   * evaluated again for each (many distinct big results must not pile up in memory).
   */
  maxKeptEventBytes: 64 * 1024,
} as const;

/** Where a subscription's events go: the response stream, written as text. */
export interface LiveSink {
  /** Writes to the stream; returns the bytes still buffered for the client, these included. */
  write(chunk: Buffer): number;
  end(): void;
  /** Whether the subscriber's key is still valid (keys can be revoked while a stream is open). */
  authorized(): boolean;
}

interface Subscriber {
  readonly key: string;
  readonly sink: LiveSink;
}

/** One distinct query text: evaluated once per swap for all its subscribers. */
interface Group {
  readonly text: string;
  readonly plan: QueryPlan;
  readonly tables: readonly string[];
  readonly subscribers: Set<Subscriber>;
  /** The generation last evaluated, its result's content hash, and since when it had it. */
  generation: Generation | null;
  hash: string;
  changedAt: number;
  /** The result's event, kept when small (`maxKeptEventBytes`); null when not kept. */
  event: Buffer | null;
  /** The evaluation in progress, which new subscribers wait for. */
  evaluating: Promise<unknown> | null;
}

/** Runs a plan against a served snapshot under the query budgets and admission. */
export type PlanRunner = (plan: QueryPlan, served: ServedSnapshot) => Promise<QueryAnswer>;

/**
 * Live queries of one query thread (`GET /query` with `Accept: text/event-stream`). Subscribers
 * of the same query text share one group, evaluated once per swap, and only when a table the
 * query reads changed (`Generation.tableStamps`). An event goes out when the result's content
 * changed: its hash leaves out `timing_ms` and `meta.snapshot`, which change on every swap.
 * Event ids are `<generation>.<boot id>`: a reconnect with `Last-Event-ID` gets no resend
 * when the result is the same as at that generation of the same boot.
 */
export class LiveQueries {
  readonly #current: () => ServedSnapshot | null;
  readonly #run: PlanRunner;
  readonly #bootId: string;
  readonly #groups = new Map<string, Group>();
  readonly #perKey = new Map<string, number>();
  #subscribers = 0;
  #timer: ReturnType<typeof setInterval> | undefined;
  #heartbeat: ReturnType<typeof setInterval> | undefined;
  #seen = -1;
  #passing = false;
  #closed = false;

  constructor(current: () => ServedSnapshot | null, run: PlanRunner, bootId: string) {
    this.#current = current;
    this.#run = run;
    this.#bootId = bootId;
  }

  get subscriptions(): number {
    return this.#subscribers;
  }

  /**
   * Opens a subscription: refuses past the limits (`too_many_requests`) before anything is
   * written, evaluates the query if its group has no current result, and sends the first
   * event unless `lastEventId` shows the client has this result already. Resolves to the
   * function that ends the subscription; `gone` ends it too, even while the first evaluation
   * runs (a client that leaves then must not keep its place).
   */
  async subscribe(
    text: string,
    plan: QueryPlan,
    key: string,
    lastEventId: string | undefined,
    sink: LiveSink,
    gone?: AbortSignal,
  ): Promise<() => void> {
    if (this.#closed)
      throw new InstanceError('service_unavailable', 'This instance is shutting down.');
    if ((this.#perKey.get(key) ?? 0) >= LIVE_QUERY_LIMITS.perKey) {
      throw new InstanceError(
        'too_many_requests',
        `This key has ${LIVE_QUERY_LIMITS.perKey} live queries open on this instance, the most it may; close one first.`,
      );
    }
    if (this.#subscribers >= LIVE_QUERY_LIMITS.perThread) {
      throw new InstanceError(
        'too_many_requests',
        'This instance has as many live queries open as it takes; retry shortly.',
      );
    }
    let group = this.#groups.get(text);
    if (!group) {
      group = {
        text,
        plan,
        tables: [...planTables(plan)],
        subscribers: new Set(),
        generation: null,
        hash: '',
        changedAt: -1,
        event: null,
        evaluating: null,
      };
      this.#groups.set(text, group);
    }
    const subscriber: Subscriber = { key, sink };
    this.#count(key, 1);
    group.subscribers.add(subscriber);
    this.#start();
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      gone?.removeEventListener('abort', end);
      this.#remove(group, subscriber);
    };
    if (gone?.aborted) end();
    gone?.addEventListener('abort', end, { once: true });
    try {
      const served = this.#current();
      if (!served)
        throw new InstanceError('service_unavailable', 'The snapshot is not loaded yet.');
      let body: string | null = null;
      if (group.generation === null || this.#readsChanged(group, served.generation)) {
        body = await this.#evaluateOnce(group, served);
      }
      if (!ended && !this.#upToDate(group, lastEventId)) {
        const event =
          group.event ??
          resultEvent(
            served.generation.id,
            this.#bootId,
            body ?? (await this.#answer(group, served)),
          );
        this.#write(group, subscriber, event);
      }
    } catch (error) {
      end();
      throw error;
    }
    return end;
  }

  /** Ends every stream (the server is closing): clients reconnect, to the next instance. */
  closeAll(): void {
    this.#closed = true;
    for (const group of this.#groups.values())
      for (const subscriber of group.subscribers) this.#drop(group, subscriber);
    this.#stop();
  }

  #count(key: string, delta: number): void {
    const count = (this.#perKey.get(key) ?? 0) + delta;
    if (count > 0) this.#perKey.set(key, count);
    else this.#perKey.delete(key);
    this.#subscribers += delta;
  }

  #remove(group: Group, subscriber: Subscriber): void {
    if (!group.subscribers.delete(subscriber)) return;
    this.#count(subscriber.key, -1);
    if (group.subscribers.size === 0 && this.#groups.get(group.text) === group)
      this.#groups.delete(group.text);
    if (this.#subscribers === 0) this.#stop();
  }

  #drop(group: Group, subscriber: Subscriber): void {
    this.#remove(group, subscriber);
    subscriber.sink.end();
  }

  #start(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => void this.#pass(), LIVE_QUERY_LIMITS.pollMs);
    this.#heartbeat = setInterval(() => this.#beat(), LIVE_QUERY_LIMITS.heartbeatMs);
    this.#timer.unref();
    this.#heartbeat.unref();
  }

  #stop(): void {
    clearInterval(this.#timer);
    clearInterval(this.#heartbeat);
    this.#timer = undefined;
    this.#heartbeat = undefined;
  }

  #beat(): void {
    for (const group of this.#groups.values())
      for (const subscriber of group.subscribers) this.#write(group, subscriber, HEARTBEAT);
  }

  /** Whether a table the group reads changed since the generation it last evaluated. */
  #readsChanged(group: Group, generation: Generation): boolean {
    const last = group.generation;
    if (last === null) return true;
    return group.tables.some(
      (table) => generation.tableStamps.get(table) !== last.tableStamps.get(table),
    );
  }

  /** Whether a client whose last event had `lastEventId` holds the group's current result. */
  #upToDate(group: Group, lastEventId: string | undefined): boolean {
    const match = /^(\d{1,15})\.(.+)$/.exec(lastEventId ?? '');
    if (!match || match[2] !== this.#bootId || !group.generation) return false;
    const seen = Number(match[1]);
    if (seen > group.generation.id) return false;
    // The result is the same since `changedAt`, or nothing it reads changed after `seen`.
    const stamps = group.generation.tableStamps;
    return seen >= group.changedAt || group.tables.every((t) => (stamps.get(t) ?? 0) <= seen);
  }

  /** One look at the served generation: re-evaluates the groups whose tables changed. */
  async #pass(): Promise<void> {
    if (this.#passing) return;
    const served = this.#current();
    if (!served || served.generation.id === this.#seen) return;
    this.#passing = true;
    try {
      this.#seen = served.generation.id;
      for (const group of [...this.#groups.values()]) {
        if (group.subscribers.size === 0) continue;
        if (this.#readsChanged(group, served.generation)) await this.#evaluateOnce(group, served);
        else group.generation = served.generation;
      }
    } finally {
      this.#passing = false;
    }
  }

  /** Evaluates a group, or waits for the evaluation already running. */
  /**
   * Evaluates a group, or waits for the evaluation already running; resolves to the result's
   * body when this call evaluated it.
   */
  async #evaluateOnce(group: Group, served: ServedSnapshot): Promise<string | null> {
    while (group.evaluating) await group.evaluating;
    if (group.generation && group.generation.id >= served.generation.id) return null;
    const evaluation = this.#evaluate(group, served);
    const settled = evaluation.finally(() => {
      group.evaluating = null;
    });
    // Those waiting see a failure; nobody waiting is no unhandled rejection.
    settled.catch(() => {});
    group.evaluating = settled;
    return evaluation;
  }

  async #evaluate(group: Group, served: ServedSnapshot): Promise<string | null> {
    let body: string;
    try {
      body = await this.#answer(group, served);
    } catch (error) {
      if (this.#groups.get(group.text) === group) this.#groups.delete(group.text);
      // A first evaluation fails its subscribers' requests, with the usual error answer.
      if (group.generation === null) throw error;
      // Later, a result that no longer fits the budgets ends its streams, with the reason.
      const event = errorEvent(error);
      for (const subscriber of group.subscribers) {
        this.#write(group, subscriber, event);
        this.#drop(group, subscriber);
      }
      return null;
    }
    const hash = contentHash(body);
    const first = group.generation === null;
    group.generation = served.generation;
    if (hash === group.hash) return body;
    // One buffer for every subscriber: the streams hold references, not copies.
    const event = resultEvent(served.generation.id, this.#bootId, body);
    group.event = event.length <= LIVE_QUERY_LIMITS.maxKeptEventBytes ? event : null;
    group.hash = hash;
    group.changedAt = served.generation.id;
    if (!first) for (const subscriber of group.subscribers) this.#write(group, subscriber, event);
    return body;
  }

  async #answer(group: Group, served: ServedSnapshot): Promise<string> {
    return (await this.#run(group.plan, served)).text();
  }

  #write(group: Group, subscriber: Subscriber, chunk: Buffer): void {
    if (!subscriber.sink.authorized()) {
      subscriber.sink.write(REVOKED);
      this.#drop(group, subscriber);
      return;
    }
    // Dropped only when it had not read what came before: one big event is let through.
    if (subscriber.sink.write(chunk) - chunk.length > LIVE_QUERY_LIMITS.maxBufferedBytes)
      this.#drop(group, subscriber);
  }
}

const HEARTBEAT = Buffer.from(': heartbeat\n\n');

/** A result event: the envelope as its data (one line of JSON), the generation and boot as id. */
function resultEvent(generation: number, bootId: string, body: string): Buffer {
  // A line break would end the data field early; the envelope's JSON has none, but be sure.
  const data = body.split(/\r\n|\r|\n/).join('\ndata: ');
  return Buffer.from(`id: ${generation}.${bootId}\ndata: ${data}\n\n`);
}

/** The event that ends a stream with an error envelope. */
function errorEvent(error: unknown): Buffer {
  return Buffer.from(`event: query-error\ndata: ${JSON.stringify(errorResponse(error).body)}\n\n`);
}

const REVOKED = errorEvent(
  new InstanceError('unauthorized', 'The API key of this live query is no longer valid.'),
);

/** The hash a result is compared by: the envelope without its timing and snapshot fields. */
export function contentHash(body: string): string {
  const end = body.lastIndexOf(',"timing_ms":');
  return createHash('sha256')
    .update(end < 0 ? body : body.slice(0, end))
    .digest('base64url');
}

import { Buffer } from 'node:buffer';
import { performance } from 'node:perf_hooks';
import { type Generation, planTables, type QueryAnswer, type QueryPlan } from '@replix/engine';
import { InstanceError } from '../errors.ts';
import type { ClientMemory, HeldBytes } from '../http/client-memory.ts';
import {
  errorEvent,
  HEARTBEAT,
  isTransient,
  REVOKED,
  resultEvent,
  resultHash,
  retryEvent,
} from '../http/live-events.ts';
import { FairQueue } from './fair-queue.ts';
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
  /** A subscriber this far behind in reading its stream is disconnected (it reconnects). */
  maxBufferedBytes: 4 * 1024 * 1024,
  /**
   * The largest result event a group keeps for subscribers that join later; a bigger one is
   * evaluated again for each (many distinct big results must not pile up in memory).
   */
  maxKeptEventBytes: 64 * 1024,
  /** Evaluation time each key with re-evaluations due gets per round of turns. */
  keyTurnMs: 20,
  /**
   * Evaluation time a key may take per swap before its re-evaluations yield to every other
   * key's (they still run when no other key has any due).
   */
  keySwapBudgetMs: 250,
  /** A re-evaluation refused for overload is tried again this much later (coalesced). */
  overloadRetryMs: 1_000,
  /** After this long refused for overload, a live query's streams end with `query-retry`. */
  overloadGiveUpMs: 30_000,
  /** How long a client waits before it reconnects (the stream's `retry:` field). */
  reconnectMs: 1_000,
  /** A held query text counts this many times its bytes: the text, its plan and its group. */
  textBytesFactor: 3,
} as const;

/** Where a subscription's events go: the response stream, written as text. */
export interface LiveSink {
  /** Writes to the stream; returns the bytes still buffered for the client, these included. */
  write(chunk: Buffer): number;
  /** The bytes buffered for the client now (the stream's and the socket's). */
  buffered(): number;
  /** Calls `listener` when the client has read some of what was buffered. */
  onDrain(listener: () => void): void;
  /** Ends the stream after what was written (the client is keeping up). */
  end(): void;
  /** Disconnects at once, dropping what was buffered (the client is not reading). */
  destroy(): void;
  /** Whether the subscriber's key is still valid (keys can be revoked while a stream is open). */
  authorized(): boolean;
}

interface Subscriber {
  readonly key: string;
  readonly sink: LiveSink;
  /** Its buffered event bytes, counted against its key's share. */
  readonly held: HeldBytes;
  /** Set once its first event is written: group events go only to subscribers past it. */
  ready: boolean;
  /**
   * Bytes it had unread at the last heartbeat (-1 before its first), and written to it since:
   * whether it read any in a whole heartbeat interval.
   */
  unreadAtBeat: number;
  writtenSinceBeat: number;
}

/** One key's part in a group: how many of its subscribers, and the group's text held for it. */
interface KeyPart {
  subscribers: number;
  readonly text: HeldBytes;
}

/** One distinct query text: evaluated once per swap for all its subscribers. */
interface Group {
  readonly text: string;
  readonly plan: QueryPlan;
  readonly tables: readonly string[];
  readonly subscribers: Set<Subscriber>;
  readonly keys: Map<string, KeyPart>;
  /** The generation last evaluated, its result's content hash, and since when it had it. */
  generation: Generation | null;
  hash: string;
  changedAt: number;
  /** The result's event, kept when small (`maxKeptEventBytes`); null when not kept. */
  event: Buffer | null;
  /** The size of the result's event (kept or not): what one more subscriber will hold. */
  eventBytes: number;
  /** The evaluation or first event in progress, which the others wait for. */
  evaluating: Promise<unknown> | null;
  /** Aborted when the last subscriber leaves: what is computed for nobody stops. */
  readonly cancel: AbortController;
  /** Refused for overload since then (0: not refused); tried again from `retryAt`. */
  refusedSince: number;
  retryAt: number;
}

/** Runs a plan against a served snapshot under the query budgets and `key`'s turns at the gate. */
export type PlanRunner = (
  plan: QueryPlan,
  served: ServedSnapshot,
  signal: AbortSignal,
  key: string,
) => Promise<QueryAnswer>;

export interface LiveQueriesOptions {
  readonly current: () => ServedSnapshot | null;
  readonly run: PlanRunner;
  readonly bootId: string;
  /** The thread's ledger of bytes held for clients: events and texts count in it, per key. */
  readonly memory: ClientMemory;
}

/** What `/health/detail` and `/metrics` report of this thread's live queries. */
export interface LiveQueriesReport {
  readonly subscriptions: number;
  readonly queries: number;
  readonly event_bytes: number;
  readonly text_bytes: number;
  readonly reevaluations_due: number;
}

/**
 * Live queries of one query thread (`GET /query` with `Accept: text/event-stream`). Subscribers
 * of the same query text share one group, evaluated once per swap, and only when a table the
 * query reads changed (`Generation.tableStamps`). An event goes out when the result's content
 * changed: its hash leaves out `timing_ms` and `meta.snapshot`, which change on every swap.
 * Event ids are `<generation>.<boot id>`: a reconnect with `Last-Event-ID` gets no resend
 * when the result is the same as at that generation of the same boot.
 *
 * Re-evaluations wait in a `FairQueue` by key, one at a time: a key whose live queries cost
 * much gets its updates later (always of the newest generation), never another key. Every
 * byte buffered for a subscriber and every text held counts in `ClientMemory` under its key;
 * a subscriber too far behind, or whose key is over its share, is disconnected at once.
 */
export class LiveQueries {
  readonly #current: () => ServedSnapshot | null;
  readonly #run: PlanRunner;
  readonly #bootId: string;
  readonly #memory: ClientMemory;
  readonly #groups = new Map<string, Group>();
  readonly #perKey = new Map<string, number>();
  readonly #queue = new FairQueue<Group>(
    LIVE_QUERY_LIMITS.keyTurnMs,
    LIVE_QUERY_LIMITS.keySwapBudgetMs,
  );
  /** Groups refused for overload, waiting for their `retryAt`. */
  readonly #refused = new Set<Group>();
  #subscribers = 0;
  #eventBytes = 0;
  #textBytes = 0;
  #timer: ReturnType<typeof setInterval> | undefined;
  #heartbeat: ReturnType<typeof setInterval> | undefined;
  #seen = -1;
  #draining = false;
  #closed = false;

  constructor(options: LiveQueriesOptions) {
    this.#current = options.current;
    this.#run = options.run;
    this.#bootId = options.bootId;
    this.#memory = options.memory;
  }

  get subscriptions(): number {
    return this.#subscribers;
  }

  report(): LiveQueriesReport {
    return {
      subscriptions: this.#subscribers,
      queries: this.#groups.size,
      event_bytes: this.#eventBytes,
      text_bytes: this.#textBytes,
      reevaluations_due: this.#queue.size + this.#refused.size,
    };
  }

  /**
   * Opens a subscription: refuses past the limits (`too_many_requests`) before anything is
   * written, evaluates the query if its group has no current result, and sends the first
   * event unless `lastEventId` shows the client has this result already. Resolves to the
   * function that ends the subscription; `gone` ends it too, even while the first evaluation
   * runs (a client that leaves then must not keep its place, nor its evaluation run on).
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
    const joined = this.#groups.get(text);
    // What the key will hold: the text unless it holds it already, and the result's event as
    // big as it was last (refused before it is evaluated again, at the key's cost).
    const needs = (joined?.keys.has(key) ? 0 : textCost(text)) + (joined?.eventBytes ?? 0);
    if (!this.#memory.keyHasRoom(key, needs)) {
      throw keyOverShare();
    }
    const group = joined ?? this.#newGroup(text, plan);
    const subscriber: Subscriber = {
      key,
      sink,
      held: this.#memory.hold(key),
      ready: false,
      unreadAtBeat: -1,
      writtenSinceBeat: 0,
    };
    this.#join(group, subscriber);
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      gone?.removeEventListener('abort', end);
      this.#remove(group, subscriber);
    };
    if (gone?.aborted) end();
    gone?.addEventListener('abort', end, { once: true });
    sink.onDrain(() => this.#recount(subscriber));
    try {
      // Under the group's lock: no re-evaluation's event can overtake this first one.
      await this.#exclusive(group, () =>
        this.#sendFirst(group, subscriber, lastEventId, () => ended),
      );
    } catch (error) {
      end();
      throw error;
    }
    return end;
  }

  /** Evaluates the group if it is behind, and writes the subscriber's first event. */
  async #sendFirst(
    group: Group,
    subscriber: Subscriber,
    lastEventId: string | undefined,
    ended: () => boolean,
  ): Promise<void> {
    // A client that left while it waited for the lock costs no evaluation, nor one whose key
    // has no room left for a result as big as the last; nor one whose stream a failed
    // re-evaluation ended meanwhile (it holds that failure's event).
    const left = () => ended() || !group.subscribers.has(subscriber);
    if (left()) return;
    if (!this.#memory.keyHasRoom(subscriber.key, group.eventBytes)) throw keyOverShare();
    const served = this.#current();
    if (!served) throw new InstanceError('service_unavailable', 'The snapshot is not loaded yet.');
    let answer: QueryAnswer | null = null;
    if (group.generation === null || this.#readsChanged(group, served.generation))
      answer = await this.#evaluate(group, served, subscriber.key);
    if (left() || this.#upToDate(group, lastEventId)) {
      subscriber.ready = true;
      return;
    }
    const event =
      group.event ??
      resultEvent(
        served.generation.id,
        this.#bootId,
        answer ?? (await this.#run(group.plan, served, group.cancel.signal, subscriber.key)),
      );
    if (!this.#memory.keyHasRoom(subscriber.key, event.length)) {
      throw keyOverShare();
    }
    subscriber.ready = true;
    if (!left()) this.#write(group, subscriber, event);
  }

  /**
   * Ends every stream (the server is closing) with `query-retry`: clients reconnect, to the
   * next instance.
   */
  closeAll(): void {
    this.#closed = true;
    const closing = retryEvent(
      new InstanceError('service_unavailable', 'This instance is closing; reconnect.'),
      LIVE_QUERY_LIMITS.reconnectMs,
    );
    for (const group of this.#groups.values())
      for (const subscriber of group.subscribers) this.#finish(group, subscriber, closing);
    this.#stop();
  }

  #newGroup(text: string, plan: QueryPlan): Group {
    const group: Group = {
      text,
      plan,
      tables: [...planTables(plan)],
      subscribers: new Set(),
      keys: new Map(),
      generation: null,
      hash: '',
      changedAt: -1,
      event: null,
      eventBytes: 0,
      evaluating: null,
      cancel: new AbortController(),
      refusedSince: 0,
      retryAt: 0,
    };
    this.#groups.set(text, group);
    return group;
  }

  #join(group: Group, subscriber: Subscriber): void {
    const { key } = subscriber;
    let part = group.keys.get(key);
    if (!part) {
      const bytes = textCost(group.text);
      part = { subscribers: 0, text: this.#memory.hold(key, bytes) };
      group.keys.set(key, part);
      this.#textBytes += bytes;
      // A re-evaluation already due now also waits in this key's turns.
      if (this.#queue.has(group)) this.#queue.add(group, [key]);
    }
    part.subscribers += 1;
    group.subscribers.add(subscriber);
    this.#perKey.set(key, (this.#perKey.get(key) ?? 0) + 1);
    this.#subscribers += 1;
    this.#start();
  }

  #remove(group: Group, subscriber: Subscriber): void {
    if (!group.subscribers.delete(subscriber)) return;
    const { key } = subscriber;
    this.#setBuffered(subscriber, 0);
    subscriber.held.release();
    const part = group.keys.get(key);
    if (part && --part.subscribers === 0) {
      this.#textBytes -= part.text.bytes;
      part.text.release();
      group.keys.delete(key);
    }
    const count = (this.#perKey.get(key) ?? 0) - 1;
    if (count > 0) this.#perKey.set(key, count);
    else {
      this.#perKey.delete(key);
      this.#queue.forget(key);
    }
    this.#subscribers -= 1;
    if (group.subscribers.size === 0) {
      // Nobody is left to send a result to: stop computing it.
      group.cancel.abort();
      this.#queue.remove(group);
      this.#refused.delete(group);
      if (this.#groups.get(group.text) === group) this.#groups.delete(group.text);
    }
    if (this.#subscribers === 0) this.#stop();
  }

  /** Disconnects a subscriber at once: its buffered bytes go with its socket. */
  #disconnect(group: Group, subscriber: Subscriber): void {
    this.#remove(group, subscriber);
    subscriber.sink.destroy();
  }

  /**
   * Ends a stream with a last event: gracefully when its client has read everything so far,
   * else by disconnecting (a stalled reader would keep the buffered bytes held).
   */
  #finish(group: Group, subscriber: Subscriber, event: Buffer): void {
    if (subscriber.sink.buffered() > 0) {
      this.#disconnect(group, subscriber);
      return;
    }
    subscriber.sink.write(event);
    this.#remove(group, subscriber);
    subscriber.sink.end();
  }

  #start(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => this.#pass(), LIVE_QUERY_LIMITS.pollMs);
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

  /**
   * A heartbeat to every subscriber; one that read nothing since the last beat while bytes
   * waited for it is disconnected (a stalled reader holds its buffered bytes for nothing).
   */
  #beat(): void {
    for (const group of this.#groups.values()) {
      for (const subscriber of group.subscribers) {
        if (!subscriber.ready) continue;
        const unread = subscriber.sink.buffered();
        const stalled = unread >= subscriber.unreadAtBeat + subscriber.writtenSinceBeat;
        if (unread > 0 && subscriber.unreadAtBeat >= 0 && stalled) {
          this.#disconnect(group, subscriber);
          continue;
        }
        subscriber.writtenSinceBeat = 0;
        subscriber.unreadAtBeat = unread;
        this.#write(group, subscriber, HEARTBEAT);
      }
    }
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

  /**
   * One look at the served generation: the groups whose tables changed are queued (once each,
   * however many swaps pass before their turn), refused ones whose wait is over too; then the
   * queue runs.
   */
  #pass(): void {
    const served = this.#current();
    if (!served) return;
    const now = Date.now();
    if (served.generation.id !== this.#seen) {
      this.#seen = served.generation.id;
      this.#queue.newWindow();
      for (const group of this.#groups.values()) {
        if (group.generation === null || group.retryAt > now) continue;
        if (this.#readsChanged(group, served.generation)) this.#queue.add(group, group.keys.keys());
        else if (!group.evaluating && !this.#queue.has(group)) group.generation = served.generation;
      }
    }
    for (const group of this.#refused) {
      if (group.retryAt > now) continue;
      this.#refused.delete(group);
      group.retryAt = 0;
      this.#queue.add(group, group.keys.keys());
    }
    if (this.#queue.size > 0) void this.#drain();
  }

  /** Runs the queued re-evaluations one at a time, each key in its turn. */
  async #drain(): Promise<void> {
    if (this.#draining) return;
    this.#draining = true;
    try {
      for (let turn = this.#queue.next(); turn; turn = this.#queue.next()) {
        const group = turn.item;
        const started = performance.now();
        await this.#exclusive(group, async () => {
          // Always the generation served now: a swap while it waited is coalesced into it.
          const served = this.#current();
          if (!served || group.subscribers.size === 0 || group.generation === null) return;
          if (group.generation.id < served.generation.id)
            await this.#evaluate(group, served, turn.keys[0] ?? '');
        }).catch(() => {
          // A failure is sent to the group's streams by #evaluate.
        });
        this.#queue.charge(turn.keys, performance.now() - started);
      }
    } finally {
      this.#draining = false;
    }
  }

  /** Runs `work` once nothing else runs for the group: its evaluations and first events. */
  async #exclusive<T>(group: Group, work: () => Promise<T>): Promise<T> {
    while (group.evaluating) await group.evaluating.catch(() => {});
    const running = work();
    const settled = running.finally(() => {
      if (group.evaluating === settled) group.evaluating = null;
    });
    // Those waiting see a failure; nobody waiting is no unhandled rejection.
    settled.catch(() => {});
    group.evaluating = settled;
    return running;
  }

  /**
   * Evaluates the group against `served` (under its lock, in `key`'s turns at the gate) and
   * sends a changed result to its subscribers; resolves to the answer, or null when a later
   * evaluation failed (its streams were told). A first evaluation's failure rejects: its
   * requests answer with it.
   */
  async #evaluate(group: Group, served: ServedSnapshot, key: string): Promise<QueryAnswer | null> {
    let answer: QueryAnswer;
    try {
      answer = await this.#run(group.plan, served, group.cancel.signal, key);
    } catch (error) {
      if (group.generation === null) {
        if (this.#groups.get(group.text) === group) this.#groups.delete(group.text);
        throw error;
      }
      if (group.subscribers.size === 0) return null;
      if (isTransient(error)) this.#refuse(group, error);
      else this.#fail(group, errorEvent(error));
      return null;
    }
    group.refusedSince = 0;
    const hash = resultHash(answer.chunks);
    group.generation = served.generation;
    if (hash === group.hash) return answer;
    // One buffer for every subscriber: the streams hold references, not copies.
    const event = resultEvent(served.generation.id, this.#bootId, answer);
    group.event = event.length <= LIVE_QUERY_LIMITS.maxKeptEventBytes ? event : null;
    group.eventBytes = event.length;
    group.hash = hash;
    group.changedAt = served.generation.id;
    for (const subscriber of group.subscribers)
      if (subscriber.ready) this.#write(group, subscriber, event);
    return answer;
  }

  /**
   * A re-evaluation refused for overload: tried again later with the newest generation, the
   * streams left open; after `overloadGiveUpMs` of refusals they end with `query-retry`.
   */
  #refuse(group: Group, error: InstanceError): void {
    const now = Date.now();
    group.refusedSince ||= now;
    if (now - group.refusedSince >= LIVE_QUERY_LIMITS.overloadGiveUpMs) {
      this.#fail(group, retryEvent(error, LIVE_QUERY_LIMITS.reconnectMs));
      return;
    }
    group.retryAt = now + LIVE_QUERY_LIMITS.overloadRetryMs;
    this.#refused.add(group);
  }

  /** Ends the group's streams with `event`; the next subscriber of its text starts afresh. */
  #fail(group: Group, event: Buffer): void {
    if (this.#groups.get(group.text) === group) this.#groups.delete(group.text);
    for (const subscriber of group.subscribers) this.#finish(group, subscriber, event);
  }

  #write(group: Group, subscriber: Subscriber, chunk: Buffer): void {
    const { sink, key } = subscriber;
    if (!sink.authorized()) {
      this.#finish(group, subscriber, REVOKED);
      return;
    }
    // Disconnected only when it had not read what came before: one big event is let through,
    // within its key's share of the memory held for clients.
    const unread = sink.buffered();
    if (
      unread > LIVE_QUERY_LIMITS.maxBufferedBytes ||
      (unread > 0 && !this.#memory.keyHasRoom(key, chunk.length))
    ) {
      this.#disconnect(group, subscriber);
      return;
    }
    subscriber.writtenSinceBeat += chunk.length;
    this.#setBuffered(subscriber, sink.write(chunk));
  }

  /** Counts a subscriber's buffered bytes again (its client read some). */
  #recount(subscriber: Subscriber): void {
    if (subscriber.held.bytes > 0) this.#setBuffered(subscriber, subscriber.sink.buffered());
  }

  #setBuffered(subscriber: Subscriber, bytes: number): void {
    const before = subscriber.held.bytes;
    subscriber.held.set(bytes);
    this.#eventBytes += subscriber.held.bytes - before;
  }
}

function keyOverShare(): InstanceError {
  return new InstanceError(
    'too_many_requests',
    "This key's live queries and answers hold as much of this instance's memory as one key may; retry once its readers catch up.",
  );
}

/** The bytes a held query text counts for. */
function textCost(text: string): number {
  return Buffer.byteLength(text) * LIVE_QUERY_LIMITS.textBytesFactor;
}

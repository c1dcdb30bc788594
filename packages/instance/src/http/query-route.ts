import { Buffer } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { PassThrough, Readable } from 'node:stream';
import {
  EngineError,
  type QueryAnswer,
  QueryCancelledError,
  type QueryEngine,
  type QueryPlan,
} from '@replix/engine';
import type { FastifyInstance, RawServerDefault } from 'fastify';
import type { Logger } from 'pino';
import { InstanceError } from '../errors.ts';
import { LIVE_QUERY_LIMITS, LiveQueries } from '../threads/live-queries.ts';
import type { InstanceMetrics } from '../threads/metrics.ts';
import { type Admission, QueryAdmission } from '../threads/query-admission.ts';
import type { ServedSnapshot, ServedState } from '../threads/served-state.ts';
import { traceQueryAnswer, traceQueryShape } from '../tracing/query-span.ts';
import type { ApiKeyVerifier } from './api-keys.ts';
import type { ClientMemory } from './client-memory.ts';
import { type EtagCache, ifNoneMatchMatches } from './etag.ts';
import { QueryExchange } from './query-exchange.ts';
import type { SendWatch } from './send-watch.ts';

/** An admitted query's context, from planning to sending. */
interface AdmittedQuery {
  readonly served: ServedSnapshot;
  readonly plan: QueryPlan;
  readonly planMs: number;
  /** When the request's handling started (`performance.now()`): the time budget's start. */
  readonly started: number;
  readonly keyId: string;
  readonly exchange: QueryExchange;
}

export interface QueryRouteOptions {
  readonly engine: QueryEngine;
  readonly controller: ServedState;
  readonly etags: EtagCache;
  readonly metrics: InstanceMetrics;
  readonly admission: QueryAdmission;
  /** Bytes held for clients once their answers are computed, per key and in all. */
  readonly clientMemory: ClientMemory;
  /** Cuts connections whose answers stop leaving (`http.send_timeout_ms`). */
  readonly sendWatch: SendWatch;
  readonly version: string;
  readonly maxBodyBytes: number;
  /** Live queries check each event's key is still valid. */
  readonly keys: ApiKeyVerifier;
}

/**
 * Working memory a query holds while it runs, as the admission gate counts it: its answer may
 * grow to the response budget, and its row lists and sort keys need room beside that.
 */
const WORKING_BYTES_BESIDE_ANSWER = 8 * 1024 * 1024;

const JSON_TYPE = 'application/json; charset=utf-8';

/** Seconds a client refused with `too_many_requests` should wait (`Retry-After`). */
const RETRY_AFTER_SECONDS = 1;

/**
 * Queries of one instance that may run at once (interleaved), that may wait for a turn, and
 * of those of one key: a quarter of the waiting places, so one key's burst leaves room for
 * others to wait their turn, and three quarters of the running ones, so another key's query
 * finds a slot at once instead of waiting for one key's long queries to end.
 */
export const QUERY_CONCURRENCY = {
  maxConcurrent: 32,
  maxQueued: 256,
  maxQueuedPerKey: 64,
  maxRunningPerKey: 24,
} as const;

/** The admission gate of one instance, over the working memory its snapshot leaves queries. */
export function defaultAdmission(workingMemoryBytes: () => number): QueryAdmission {
  return new QueryAdmission({ ...QUERY_CONCURRENCY, workingMemoryBytes });
}

/**
 * `POST /query` and `GET /query?q=`: parse and validate first (an invalid query costs no ETag
 * and no place in any cache), then wait for admission, then run the query cooperatively under
 * its budgets and send the answer's chunks as a stream, with backpressure. A client that goes
 * away cancels its query, queued or running. The admission covers computing the answer; its
 * bytes are then held for the client (`ClientMemory`, within its key's share) until they are
 * out, and a send that stops moving is cut (`SendWatch`).
 */
/** The instance's Fastify app, logging with pino. */
type InstanceApp = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, Logger>;

/** What the query routes give the server: live queries, and the route itself for the listener. */
export interface QueryRoutes {
  readonly live: LiveQueries;
  /**
   * Answers `text` on `exchange` for the key `keyId` (checked by the caller), `cacheable`: a
   * GET, with an ETag and live queries.
   */
  readonly serveQuery: (
    text: string,
    exchange: QueryExchange,
    cacheable: boolean,
    keyId: string,
  ) => void;
}

export function registerQueryRoutes(app: InstanceApp, options: QueryRouteOptions): QueryRoutes {
  const { engine, controller, etags, metrics, admission, clientMemory, sendWatch } = options;
  const { version, maxBodyBytes } = options;
  const reservation = engine.limits.maxResponseBytes + WORKING_BYTES_BESIDE_ANSWER;
  // The instance size's cap on query time is in the engine's budgets already: it lowers the
  // schema config when the artifact is read (artifact-config.ts).
  const { timeoutMs, maxResponseBytes } = engine.limits;

  /**
   * Waits for a turn of `keyId` at the admission gate (keys take turns), within the query's
   * time budget; only a query that cannot run at once pays for the timer.
   */
  async function waitForTurn(
    keyId: string,
    cancel: AbortSignal,
    timeoutMs: number,
  ): Promise<Admission> {
    const waiting = AbortSignal.any([cancel, AbortSignal.timeout(timeoutMs)]);
    return admission.acquire(reservation, waiting, keyId).catch((error: unknown) => {
      if (cancel.aborted) throw new QueryCancelledError();
      if (waiting.aborted) {
        throw new InstanceError(
          'too_many_requests',
          `This instance was busy with other queries for the whole time budget of ${timeoutMs} ms; retry shortly.`,
        );
      }
      throw error;
    });
  }

  /**
   * Answers a query on its exchange. Most queries are admitted at once and end within their
   * first slice: they are answered synchronously, with no promise, no abort signal and no
   * listener on the exchange (a bare server pays for none of them). A query that waits for a
   * turn, or runs longer, goes on asynchronously and is cancelled if its client leaves.
   */
  function serveQuery(
    text: string,
    exchange: QueryExchange,
    cacheable: boolean,
    keyId: string,
  ): void {
    const started = performance.now();
    try {
      const served = controller.current();
      if (!served) {
        exchange.header('retry-after', RETRY_AFTER_SECONDS);
        exchange.send(503, JSON.stringify(controller.detail()));
        return;
      }
      // A UTF-16 unit is at most 3 bytes of UTF-8: most texts need no count of their bytes.
      if (text.length * 3 > maxBodyBytes && Buffer.byteLength(text) > maxBodyBytes) {
        throw new InstanceError(
          'payload_too_large',
          `The query is larger than the limit of ${maxBodyBytes} bytes.`,
        );
      }
      traceQueryShape(exchange.span, text);
      // Parse and validate first: an invalid query costs no ETag and no admission.
      const plan = engine.plan(text);
      const planMs = performance.now() - started;
      const asked = exchange.requestFields;
      if (cacheable && asked.accept?.includes('text/event-stream')) {
        subscribe(text, plan, exchange).catch((error: unknown) => failed(error, exchange));
        return;
      }
      if (cacheable) {
        const etag = etags.get(served.generation.id, text);
        exchange.header('etag', etag).header('cache-control', 'private, no-cache');
        if (ifNoneMatchMatches(asked.ifNoneMatch, etag)) {
          exchange.send(304);
          return;
        }
      }
      // A key whose clients already hold its share waits for them to read: refused before
      // its query costs anything. Most keys hold nothing: one map read.
      if (clientMemory.bytesOf(keyId) > 0 && !clientMemory.keyHasRoom(keyId, 1))
        throw keyShareRefusal(keyId);
      const query: AdmittedQuery = { served, plan, planMs, started, keyId, exchange };
      const admitted = admission.tryAcquire(reservation, keyId);
      if (!admitted) {
        waitThenRun(query);
        return;
      }
      let answer: QueryAnswer | Promise<QueryAnswer>;
      try {
        answer = run(query);
      } catch (error) {
        admitted.release();
        throw error;
      }
      if (answer instanceof Promise) {
        finishLater(query, answer, admitted);
        return;
      }
      // Computed: the slot and its reservation go to the next query.
      admitted.release();
      send(query, answer);
    } catch (error) {
      failed(error, exchange);
    }
  }

  /** Runs an admitted query under its budgets: its answer, or a promise of it. */
  function run(query: AdmittedQuery): QueryAnswer | Promise<QueryAnswer> {
    const { served, keyId } = query;
    // A key that holds bytes already gets at most its room as a response budget, so an
    // answer that would take it past its share stops being written at that point. A key
    // holding nothing may take one answer up to max_response_bytes, whatever its share.
    const heldNow = clientMemory.bytesOf(keyId);
    const room = heldNow > 0 ? clientMemory.keyShareBytes() - heldNow : Infinity;
    // An answer cut short by the key's room is the key's share refusal, not response_too_large.
    const cutByRoom = room < maxResponseBytes;
    const limits = cutByRoom ? { maxResponseBytes: room } : undefined;
    try {
      const answer = engine.answer(
        served.generation,
        query.plan,
        { version, swapCount: served.swapCount, ageMs: served.ageMs },
        {
          signal: query.exchange,
          startedAt: query.started,
          planMs: query.planMs,
          ...(limits ? { limits } : {}),
        },
      );
      if (!(answer instanceof Promise) || !cutByRoom) return answer;
      return answer.catch((error: unknown) => {
        throw shareRefusalFor(error, keyId);
      });
    } catch (error) {
      throw cutByRoom ? shareRefusalFor(error, keyId) : error;
    }
  }

  /** A query that waits for a turn first: cancelled if its client leaves meanwhile. */
  async function waitThenRun(query: AdmittedQuery): Promise<void> {
    const { keyId, exchange } = query;
    const cancel = new AbortController();
    exchange.watch(() => cancel.abort());
    try {
      const admitted = await waitForTurn(keyId, cancel.signal, timeoutMs);
      if (exchange.aborted) {
        admitted.release();
        throw new QueryCancelledError();
      }
      let answer: QueryAnswer;
      try {
        answer = await run(query);
      } finally {
        admitted.release();
      }
      send(query, answer);
    } catch (error) {
      failed(error, exchange);
    }
  }

  /** A query that runs past its first slice: cancelled if its client leaves meanwhile. */
  async function finishLater(
    query: AdmittedQuery,
    pending: Promise<QueryAnswer>,
    admitted: Admission,
  ): Promise<void> {
    query.exchange.watch();
    try {
      let answer: QueryAnswer;
      try {
        answer = await pending;
      } finally {
        admitted.release();
      }
      send(query, answer);
    } catch (error) {
      failed(error, query.exchange);
    }
  }

  /**
   * Sends a computed answer. A one-chunk answer the socket takes at once is with the kernel:
   * nothing is left to hold. Otherwise its bytes are held for the client (within its key's
   * share) until they are out, and a send that stops moving is cut.
   */
  function send(query: AdmittedQuery, answer: QueryAnswer): void {
    const { keyId, exchange } = query;
    // Other answers of the key may have come in meanwhile: never past its share.
    if (clientMemory.bytesOf(keyId) > 0 && !clientMemory.keyHasRoom(keyId, answer.bytes))
      throw keyShareRefusal(keyId);
    metrics.recordQuery(true, (performance.now() - query.started) / 1000);
    traceQueryAnswer(exchange.span, answer);
    // The engine's time for developer tools and browsers' resource timing (which need
    // Timing-Allow-Origin to show it to a page of another origin): the same figure as
    // meta.timing_ms.
    exchange.header('server-timing', `engine;dur=${answer.timingMs}`);
    if (exchange.requestFields.origin !== undefined) exchange.header('timing-allow-origin', '*');
    // Most answers are one chunk: sent as it is, with no stream to set up per request.
    const { chunks } = answer;
    if (chunks.length === 1) exchange.send(200, chunks[0]);
    else {
      exchange.header('content-length', answer.bytes);
      exchange.sendStream(200, Readable.from(chunks), JSON_TYPE);
    }
    const response = exchange.response;
    const socket = response.socket;
    const written = chunks.length === 1 && socket?.writableLength === 0;
    if (written || exchange.closed || !socket || socket.destroyed) return;
    const bytes = answer.bytes;
    const holding = clientMemory.hold(keyId, bytes);
    // Watched from now: a write in progress counts as not yet sent.
    const watched = sendWatch.watch(socket, {
      what: 'query answer',
      keyId,
      onProgress: (sent) => holding.set(bytes - sent),
    });
    exchange.onEnd(() => {
      holding.release();
      watched.stop();
    });
  }

  /** Ends a failed query: a cancelled one without a response, any other with its error. */
  function failed(error: unknown, exchange: QueryExchange): void {
    // Nobody is left to answer: end the exchange without a response.
    if (error instanceof QueryCancelledError) {
      exchange.destroy();
      return;
    }
    metrics.recordQuery(false, 0);
    if (error instanceof InstanceError && error.code === 'too_many_requests')
      exchange.header('retry-after', RETRY_AFTER_SECONDS);
    exchange.fail(error);
  }

  /** A response_too_large of an answer its key's room cut short, as the key's share refusal. */
  function shareRefusalFor(error: unknown, keyId: string): unknown {
    return isResponseTooLarge(error) ? keyShareRefusal(keyId) : error;
  }

  /** The refusal of a key whose clients hold its share of answers not yet read. */
  function keyShareRefusal(keyId: string): InstanceError {
    const mib = (bytes: number) => Math.ceil(bytes / (1024 * 1024));
    return new InstanceError(
      'too_many_requests',
      `This key's clients hold ${mib(clientMemory.bytesOf(keyId))} MiB of answers not yet read, and a key may hold ${mib(clientMemory.keyShareBytes())} MiB (its share of the instance's working memory; docs/limits.md); read the answers asked for, then retry.`,
    );
  }

  /**
   * A live query's evaluation: a turn of `keyId` at the gate and the budgets, as any query;
   * `cancel` stops it (its last subscriber left) waiting or running.
   */
  async function evaluate(
    plan: QueryPlan,
    served: ServedSnapshot,
    cancel: AbortSignal,
    keyId: string,
  ) {
    const started = performance.now();
    const admitted =
      admission.tryAcquire(reservation, keyId) ?? (await waitForTurn(keyId, cancel, timeoutMs));
    try {
      return await engine.answer(
        served.generation,
        plan,
        { version, swapCount: served.swapCount, ageMs: served.ageMs },
        {
          signal: cancel,
          startedAt: started,
        },
      );
    } finally {
      admitted.release();
    }
  }
  const live = new LiveQueries({
    current: () => controller.current(),
    run: evaluate,
    bootId: controller.bootId,
    memory: options.clientMemory,
  });

  /** Answers with a stream of Server-Sent Events: the result now, then each change. */
  async function subscribe(text: string, plan: QueryPlan, exchange: QueryExchange) {
    const { request, response } = exchange;
    const authorization = request.headers.authorization;
    const stream = new PassThrough();
    // How long a client waits before it reconnects after the stream ends (a deploy, say).
    stream.write(`retry: ${LIVE_QUERY_LIMITS.reconnectMs}\n\n`);
    const lastEventId = request.headers['last-event-id'];
    // Registered before the first evaluation: a client may leave while it runs.
    const gone = new AbortController();
    response.once('close', () => gone.abort());
    // What waits for the client: in the stream, and in the response and its socket.
    const buffered = () => stream.writableLength + (response.writableLength ?? 0);
    try {
      await live.subscribe(
        text,
        plan,
        options.keys.identify(authorization)?.keyId ?? '',
        typeof lastEventId === 'string' ? lastEventId : undefined,
        {
          write: (event) => {
            stream.write(event);
            return buffered();
          },
          buffered,
          onDrain: (listener) => {
            // Counted once the stream has moved what it held on into the drained socket.
            const later = () => setImmediate(listener);
            response.on('drain', later);
            stream.on('drain', later);
          },
          end: () => stream.end(),
          destroy: () => {
            stream.destroy();
            response.destroy();
          },
          authorized: () => options.keys.scopeOf(authorization) !== null,
        },
        gone.signal,
      );
    } catch (error) {
      // Refused for a passing reason (limits, memory, overload, closing): try again shortly.
      if (error instanceof InstanceError && error.code === 'service_unavailable')
        exchange.header('retry-after', RETRY_AFTER_SECONDS);
      throw error;
    }
    exchange.header('cache-control', 'no-cache').header('x-accel-buffering', 'no');
    exchange.sendStream(200, stream, 'text/event-stream; charset=utf-8');
  }

  /** The key of a request the route's key check let through. */
  const keyIdOf = (request: { headers: { authorization?: string | undefined } }) =>
    options.keys.identify(request.headers.authorization)?.keyId ?? '';

  // The routes take their requests over: the answer is written beneath Fastify, the same way
  // as for a request the query listener takes straight off node:http.
  app.post('/query', { config: { auth: 'query' }, logLevel: 'warn' }, (request, reply) => {
    const text = typeof request.body === 'string' ? request.body : '';
    serveQuery(text, QueryExchange.takenFrom(request, reply), false, keyIdOf(request));
  });
  app.get<{ Querystring: { q?: string } }>(
    '/query',
    { config: { auth: 'query' }, logLevel: 'warn' },
    (request, reply) => {
      const text = request.query.q;
      if (typeof text !== 'string') throw missingQuery();
      serveQuery(text, QueryExchange.takenFrom(request, reply), true, keyIdOf(request));
    },
  );
  return { live, serveQuery };
}

/** The refusal of a `GET /query` without (exactly one) `q`. */
export function missingQuery(): InstanceError {
  return new InstanceError('bad_request', 'GET /query needs the query in the q parameter.');
}

function isResponseTooLarge(error: unknown): boolean {
  return error instanceof EngineError && error.code === 'response_too_large';
}

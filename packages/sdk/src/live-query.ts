import { errorFor, ReplixConnectionError, ReplixError, ReplixUnavailableError } from './errors.ts';
import { readEventStream, type StreamEvent } from './event-stream.ts';
import { LiveResultOrder } from './live-result-order.ts';
import { errorEnvelope } from './query-result.ts';
import { ReconnectBackoff, type ReconnectPolicy } from './reconnect-backoff.ts';

/** An open live query (`ReplixClient.subscribe`). */
export interface LiveQuery {
  /** Ends the subscription: no callback is called after it. */
  close(): void;
  /** Settles when the subscription has ended: closed, aborted, or ended by an error. */
  readonly ended: Promise<void>;
}

/** What a live query is doing, for an app that shows it (`LiveQueryOptions.onStatus`). */
export type LiveQueryStatus =
  | { readonly state: 'connected' }
  | {
      readonly state: 'reconnecting';
      /** The wait before the next connection. */
      readonly delayMs: number;
      /** Reconnects since the last result: 1 for the first. */
      readonly attempt: number;
      /** Why: a refusal (429, 503), the instance's `query-retry`, a lost or ended stream. */
      readonly error: ReplixError;
    };

export interface LiveQueryOptions {
  readonly signal?: AbortSignal;
  /**
   * Called with the error that ends the subscription: a refused query or key (400-class,
   * 401, 403), or an evaluation that failed later (its `query-error` event). Temporary
   * failures are not errors: the subscription reconnects by itself and resumes with
   * `Last-Event-ID`.
   */
  readonly onError?: (error: ReplixError) => void;
  /** Called when a stream opens, and when a reconnect is pending (with its wait and reason). */
  readonly onStatus?: (status: LiveQueryStatus) => void;
  /** The waits between reconnects: `{ baseDelayMs: 1000, maxDelayMs: 30000 }` by default. */
  readonly retry?: Partial<ReconnectPolicy>;
}

/** What the client gives a live query: connecting (once per call) and reading results. */
export interface LiveConnection<Result> {
  /** Opens the stream; rejects with a `ReplixError` for an answer that is not a stream. */
  connect(lastEventId: string | undefined, signal: AbortSignal): Promise<Response>;
  result(data: string): Result;
}

/**
 * Follows a live query: hands each new result to `onResult` (never one it had, never an older
 * one after a newer one: `LiveResultOrder`), reconnects after every temporary failure with
 * backoff (`ReconnectBackoff`) and the last event's id, and ends on `close`, on the signal, or
 * on a permanent error, given to `onError`.
 */
export function followLiveQuery<Result>(
  connection: LiveConnection<Result>,
  onResult: (result: Result) => void,
  options: LiveQueryOptions = {},
): LiveQuery {
  const stop = new AbortController();
  const signal = options.signal ? AbortSignal.any([stop.signal, options.signal]) : stop.signal;
  const backoff = new ReconnectBackoff(options.retry);
  const order = new LiveResultOrder();

  /** One connection, read to its end: resolves with the error that ended it. */
  const follow = async (): Promise<ReplixError> => {
    const dropped = new AbortController();
    let ending: ReplixError | undefined;
    let retryMs: number | undefined;
    let openedAt: number | undefined;
    const onEvent = (event: StreamEvent) => {
      if (ending || signal.aborted) return;
      if (event.event === 'message') {
        const result = connection.result(event.data);
        backoff.reset();
        if (order.accept(event.id, event.data)) onResult(result);
      } else if (event.event === 'query-retry' || event.event === 'query-error') {
        ending = eventError(event, retryMs);
        // The instance ends the stream after either; a client does not wait for it to.
        dropped.abort();
      }
    };
    const onRetry = (ms: number) => {
      retryMs = ms;
      backoff.advise(ms);
    };
    try {
      const open = AbortSignal.any([signal, dropped.signal]);
      const response = await connection.connect(order.lastEventId, open);
      openedAt = Date.now();
      if (!signal.aborted) options.onStatus?.({ state: 'connected' });
      await readEventStream(response.body as ReadableStream<Uint8Array>, onEvent, onRetry);
      return ending ?? lost('the instance ended the live query’s stream.');
    } catch (error) {
      if (ending) return ending;
      if (error instanceof ReplixError) return error;
      return lost('the live query’s connection was lost.', error);
    } finally {
      dropped.abort();
      // A stream that stayed open long was a success, though nothing changed to send.
      if (openedAt !== undefined && Date.now() - openedAt >= backoff.healthyAfterMs) {
        backoff.reset();
      }
    }
  };

  const ended = (async () => {
    while (!signal.aborted) {
      const error = await follow();
      if (signal.aborted) break;
      if (!isTemporary(error)) {
        options.onError?.(error);
        break;
      }
      if (error instanceof ReplixUnavailableError && error.retryAfterMs !== undefined) {
        backoff.advise(error.retryAfterMs);
      }
      const delayMs = backoff.next();
      options.onStatus?.({ state: 'reconnecting', delayMs, attempt: backoff.attempt, error });
      await delay(delayMs, signal);
    }
    stop.abort();
  })();
  return { close: () => stop.abort(), ended };
}

/**
 * Whether a later connection may succeed: refused as busy or unavailable (429, 503, or an
 * event saying so), no answer, a request timeout, or a server or proxy failure (5xx). Query
 * and key errors, and any other `query-error`, are permanent.
 */
function isTemporary(error: ReplixError): boolean {
  if (error instanceof ReplixUnavailableError) return true;
  if (error.code === 'connection_failed') return true;
  return error.status === 408 || error.status >= 500;
}

function lost(message: string, cause?: unknown): ReplixConnectionError {
  return new ReplixConnectionError('connection_failed', 0, message, { cause });
}

/**
 * The error a `query-retry` or `query-error` event carries. A `query-retry` is temporary
 * whatever its code; a `query-error` is temporary only for `too_many_requests` and
 * `service_unavailable` (what older instances sent for an overload).
 */
function eventError(event: StreamEvent, retryMs: number | undefined): ReplixError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(event.data);
  } catch {
    parsed = null;
  }
  const envelope = errorEnvelope(parsed);
  if (event.event === 'query-retry') {
    return new ReplixUnavailableError(
      envelope?.code ?? 'service_unavailable',
      200,
      envelope?.message ?? 'the instance asked the live query to reconnect later.',
      retryMs,
    );
  }
  return envelope
    ? errorFor(envelope.code, 200, envelope.message)
    : new ReplixConnectionError(
        'invalid_response',
        200,
        'a live query ended with an unreadable error event.',
      );
}

/** Waits `ms`, or less when the signal aborts first. */
function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve();
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

import { errorFor, ReplixConnectionError, ReplixError, ReplixUnavailableError } from './errors.ts';
import { readEventStream } from './event-stream.ts';
import { errorEnvelope } from './query-result.ts';

/** An open live query (`ReplixClient.subscribe`). */
export interface LiveQuery {
  /** Ends the subscription: no callback is called after it. */
  close(): void;
  /** Settles when the subscription has ended: closed, aborted, or ended by an error. */
  readonly ended: Promise<void>;
}

export interface LiveQueryOptions {
  readonly signal?: AbortSignal;
  /**
   * Called with the error that ends the subscription: a refused query or key, or an
   * evaluation that failed later (its `query-error` event). Connection losses are not errors:
   * the subscription reconnects by itself and resumes with `Last-Event-ID`.
   */
  readonly onError?: (error: ReplixError) => void;
}

/** What the client gives a live query: connecting (retries included) and reading results. */
export interface LiveConnection<Result> {
  /** Opens the stream; rejects with a `ReplixError` for an answer that is not a stream. */
  connect(lastEventId: string | undefined, signal: AbortSignal): Promise<Response>;
  result(data: string): Result;
}

/** The reconnection delay when the server asked for none, and the most a backoff grows to. */
const DEFAULT_RETRY_MS = 1000;
const MAX_RETRY_MS = 30_000;

/**
 * Follows a live query: hands each result event to `onResult`, reconnects after a lost
 * connection (the delay the server's `retry:` asked, doubling while connections keep failing)
 * with the last event's id, and ends on `close`, on the signal, or on an error the server
 * answered, given to `onError`.
 */
export function followLiveQuery<Result>(
  connection: LiveConnection<Result>,
  onResult: (result: Result) => void,
  options: LiveQueryOptions = {},
): LiveQuery {
  const stop = new AbortController();
  const signal = options.signal ? AbortSignal.any([stop.signal, options.signal]) : stop.signal;
  let lastEventId: string | undefined;
  let retryMs = DEFAULT_RETRY_MS;
  const fail = (error: ReplixError) => {
    if (!signal.aborted) options.onError?.(error);
    stop.abort();
  };
  const ended = (async () => {
    let failures = 0;
    while (!signal.aborted) {
      try {
        const response = await connection.connect(lastEventId, signal);
        failures = 0;
        await readEventStream(
          response.body as ReadableStream<Uint8Array>,
          (event) => {
            if (signal.aborted) return;
            if (event.event === 'query-error') {
              fail(eventError(event.data));
              return;
            }
            if (event.event !== 'message') return;
            if (event.id !== undefined) lastEventId = event.id;
            onResult(connection.result(event.data));
          },
          (ms) => {
            retryMs = ms;
          },
        );
      } catch (error) {
        if (signal.aborted) break;
        // An answer of the server (a refused key, a bad query) ends it; a connection lost,
        // before or while the stream is read, or a server still busy, does not.
        if (error instanceof ReplixError && !isPassing(error)) {
          fail(error);
          break;
        }
        failures += 1;
      }
      if (signal.aborted) break;
      await delay(Math.min(MAX_RETRY_MS, retryMs * 2 ** Math.min(failures, 5)), signal);
    }
  })();
  return { close: () => stop.abort(), ended };
}

/** Whether an error is one a later connection may not meet: lost, or busy and asked to wait. */
function isPassing(error: ReplixError): boolean {
  return (
    (error instanceof ReplixConnectionError && error.code === 'connection_failed') ||
    error instanceof ReplixUnavailableError
  );
}

/** The error a `query-error` event carries. */
function eventError(data: string): ReplixError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    parsed = null;
  }
  const envelope = errorEnvelope(parsed);
  return envelope
    ? errorFor(envelope.code, 200, envelope.message)
    : new ReplixConnectionError(
        'invalid_response',
        200,
        'a live query ended with an unreadable error event.',
      );
}

function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

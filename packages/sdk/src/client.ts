import {
  errorFor,
  ReplixConnectionError,
  type ReplixError,
  ReplixUnavailableError,
} from './errors.ts';
import { EtagCache, type EtagCacheOptions } from './etag-cache.ts';
import { quoteString } from './literal.ts';
import { followLiveQuery, type LiveQuery, type LiveQueryOptions } from './live-query.ts';
import { errorEnvelope, isEnvelope, type QueryResult } from './query-result.ts';
import {
  DEFAULT_RETRY_POLICY,
  isRetryableStatus,
  type RetryPolicy,
  retryAfterMs,
  retryDelay,
  sleep,
} from './retry.ts';
import { RqlQuery } from './rql.ts';

export interface ReplixClientOptions {
  /** The instance's URL (a database's endpoint URL), e.g. `http://127.0.0.1:4100`. */
  readonly url: string | URL;
  /** An API key of the instance (`rxk_…`), sent as `Authorization: Bearer`. */
  readonly key?: string;
  /** Retries after 429 and 503 answers; `{ retries: 0 }` turns them off. */
  readonly retry?: Partial<RetryPolicy>;
  /** The GET answers kept for If-None-Match; `false` keeps none. */
  readonly cache?: EtagCacheOptions | false;
  /** Reads answer bodies; JSON.parse by default, which rounds numbers past a double's digits. */
  readonly parseJson?: (text: string) => unknown;
  /** Another fetch (a test's, a proxy's); the global one by default. */
  readonly fetch?: typeof fetch;
}

export interface QueryOptions {
  /**
   * GET (cacheable with ETags) by default, POST when the URL would be longer than
   * `MAX_GET_URL_LENGTH`; POST always sends the query as the body.
   */
  readonly method?: 'GET' | 'POST';
  readonly signal?: AbortSignal;
}

/** A URL for messages: without its query string, which holds the query and may be long. */
function shown(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

/** The text to send: a string as it is, an `rql` query's text; anything else is a mistake. */
function queryText(query: QueryText): string {
  if (typeof query === 'string') return query;
  if (query instanceof RqlQuery) return query.text;
  throw new TypeError('ReplixClient: a query is a string or an rql`…` query.');
}

const NO_RETRIES: RetryPolicy = { ...DEFAULT_RETRY_POLICY, retries: 0 };

/** Longer GET URLs are sent as POST: proxies commonly refuse URLs over 8 KiB. */
export const MAX_GET_URL_LENGTH = 8000;

export type QueryText = string | RqlQuery;

/**
 * A client of one instance's query API: `query` for one answer, `pages` and `rows` to walk a
 * table with AFTER, `openapi` for the instance's description of its tables.
 *
 * @example
 * const replix = new ReplixClient({ url: 'http://127.0.0.1:4100', key: 'rxk_…' });
 * const { data } = await replix.query<{ id: number }>(rql`customers (name = ${name}) { id }`);
 */
export class ReplixClient {
  readonly #base: URL;
  readonly #key: string | undefined;
  readonly #retry: RetryPolicy;
  readonly #cache: EtagCache | undefined;
  readonly #parseJson: (text: string) => unknown;
  readonly #fetch: typeof fetch;

  constructor(options: ReplixClientOptions) {
    let base: URL;
    try {
      base = new URL(options.url);
    } catch {
      throw new TypeError('ReplixClient: url must be an absolute http:// or https:// URL.');
    }
    // fetch refuses credentials in URLs; the key goes in the Authorization header instead.
    if (!/^https?:$/.test(base.protocol) || base.username || base.password) {
      throw new TypeError(
        'ReplixClient: url must be an http:// or https:// URL without credentials (pass the key as `key`).',
      );
    }
    base.pathname = base.pathname.replace(/\/*$/, '/');
    base.search = '';
    base.hash = '';
    this.#base = base;
    this.#key = options.key;
    this.#retry = { ...DEFAULT_RETRY_POLICY, ...options.retry };
    this.#cache = options.cache === false ? undefined : new EtagCache(options.cache);
    this.#parseJson = options.parseJson ?? JSON.parse;
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
  }

  /** Runs one query. `Row` types the rows (see `replix types` for every table's). */
  async query<Row = Record<string, unknown>>(
    query: QueryText,
    options: QueryOptions = {},
  ): Promise<QueryResult<Row>> {
    const text = queryText(query);
    const get = new URL('query', this.#base);
    get.searchParams.set('q', text);
    const method = options.method ?? (get.href.length > MAX_GET_URL_LENGTH ? 'POST' : 'GET');
    const headers: Record<string, string> = this.#authorization();
    let init: RequestInit;
    const cached = method === 'GET' ? this.#cache?.get(get.href) : undefined;
    if (method === 'GET') {
      if (cached) headers['if-none-match'] = cached.etag;
      init = { method, headers, signal: options.signal };
    } else {
      headers['content-type'] = 'text/plain; charset=utf-8';
      init = { method, headers, body: text, signal: options.signal };
    }
    const url = method === 'GET' ? get : new URL('query', this.#base);
    const response = await this.#send(url, init, options.signal);
    if (response.status === 304 && cached) {
      return this.#result<Row>(url, cached.body, cached.etag, true, response.status);
    }
    const body = await this.#readBody(url, response);
    if (!response.ok) throw this.#error(url, response, body);
    const etag = response.headers.get('etag') ?? undefined;
    if (method === 'GET' && etag !== undefined) this.#cache?.set(get.href, etag, body);
    return this.#result<Row>(url, body, etag, false, response.status);
  }

  /**
   * The pages of a walk in primary-key order: the query (without AFTER) runs with `AFTER ''`,
   * then with each page's `next_cursor` until there is none. Every row comes once, even when
   * rows change between pages.
   */
  async *pages<Row = Record<string, unknown>>(
    query: QueryText,
    options: QueryOptions = {},
  ): AsyncGenerator<QueryResult<Row>, void, undefined> {
    // A line break ends a `--` comment the query may end with.
    const text = `${queryText(query)}\nAFTER `;
    let cursor = '';
    for (;;) {
      const page = await this.query<Row>(text + quoteString(cursor), options);
      yield page;
      const next = page.meta.pagination?.next_cursor;
      if (next === undefined) return;
      if (next === cursor) {
        throw new ReplixConnectionError(
          'invalid_response',
          200,
          `the instance at ${this.#base.href} answered the same cursor twice.`,
        );
      }
      cursor = next;
    }
  }

  /** Every row of the walk `pages` makes, one at a time. */
  async *rows<Row = Record<string, unknown>>(
    query: QueryText,
    options: QueryOptions = {},
  ): AsyncGenerator<Row, void, undefined> {
    for await (const page of this.pages<Row>(query, options)) yield* page.data;
  }

  /**
   * A live query: `onResult` gets the current result, then each new one whenever a change at
   * the source changes it (Server-Sent Events over `fetch`, so the key travels in a header).
   * A temporary failure (a lost connection, 429, 503, the instance's `query-retry`) is
   * reconnected by itself with backoff, resuming without a resend of a result it already had;
   * `onError` gets the permanent error that ends it, `onStatus` each connection and pending
   * reconnect.
   */
  subscribe<Row = Record<string, unknown>>(
    query: QueryText,
    onResult: (result: QueryResult<Row>) => void,
    options: LiveQueryOptions = {},
  ): LiveQuery {
    const url = new URL('query', this.#base);
    url.searchParams.set('q', queryText(query));
    return followLiveQuery(
      {
        connect: async (lastEventId, signal) => {
          const headers = { ...this.#authorization(), accept: 'text/event-stream' };
          if (lastEventId !== undefined) Object.assign(headers, { 'last-event-id': lastEventId });
          // One attempt: the live query's own backoff decides when to try again.
          const response = await this.#send(url, { headers, signal }, signal, NO_RETRIES);
          const type = response.headers.get('content-type') ?? '';
          if (response.ok && type.startsWith('text/event-stream') && response.body) return response;
          throw this.#error(url, response, await this.#readBody(url, response));
        },
        result: (data) => this.#result<Row>(url, data, undefined, false, 200),
      },
      onResult,
      options,
    );
  }

  /** The instance's OpenAPI document: its tables as models (what `replix types` reads). */
  async openapi(options: { signal?: AbortSignal } = {}): Promise<Record<string, unknown>> {
    const url = new URL('openapi.json', this.#base);
    const init = { headers: this.#authorization(), signal: options.signal };
    const response = await this.#send(url, init, options.signal);
    const body = await this.#readBody(url, response);
    if (!response.ok) throw this.#error(url, response, body);
    const document = this.#parse(url, body, response.status);
    if (document === null || typeof document !== 'object' || !('components' in document)) {
      throw invalid(url, response.status, 'an answer that is not an OpenAPI document');
    }
    return document as Record<string, unknown>;
  }

  #authorization(): Record<string, string> {
    return this.#key ? { authorization: `Bearer ${this.#key}` } : {};
  }

  /** One request, asked again after 429 and 503 as the retry policy allows. */
  async #send(
    url: URL,
    init: RequestInit,
    signal: AbortSignal | undefined,
    policy: RetryPolicy = this.#retry,
  ): Promise<Response> {
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        response = await this.#fetch(url, init);
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
        const reason = cause instanceof Error ? cause.message : String(cause);
        throw new ReplixConnectionError(
          'connection_failed',
          0,
          `could not reach the instance at ${shown(url)}: ${reason}`,
          { cause: error },
        );
      }
      if (!isRetryableStatus(response.status)) return response;
      const wait = retryDelay(policy, attempt, retryAfterMs(response.headers.get('retry-after')));
      if (wait === undefined) return response;
      await response.body?.cancel();
      await sleep(wait, signal);
    }
  }

  async #readBody(url: URL, response: Response): Promise<string> {
    try {
      return await response.text();
    } catch (error) {
      throw new ReplixConnectionError(
        'connection_failed',
        response.status,
        `the instance at ${shown(url)} closed the connection before the whole answer arrived.`,
        { cause: error },
      );
    }
  }

  #parse(url: URL, body: string, status: number): unknown {
    try {
      return this.#parseJson(body);
    } catch {
      throw invalid(url, status, 'a body that is not JSON');
    }
  }

  #result<Row>(url: URL, body: string, etag: string | undefined, cached: boolean, status: number) {
    const envelope = this.#parse(url, body, status);
    if (!isEnvelope(envelope)) throw invalid(url, status, 'a body that is not a query result');
    return { data: envelope.data as Row[], meta: envelope.meta, etag, cached, body };
  }

  #error(url: URL, response: Response, body: string): ReplixError {
    const { status } = response;
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      return invalid(url, status, 'a body that is not JSON');
    }
    const envelope = errorEnvelope(parsed);
    const asked = retryAfterMs(response.headers.get('retry-after'));
    if (envelope) {
      const error = errorFor(envelope.code, status, envelope.message);
      if (error instanceof ReplixUnavailableError) {
        return new ReplixUnavailableError(envelope.code, status, envelope.message, asked);
      }
      return error;
    }
    if (status === 503) {
      // An instance still loading (or failed) answers its status document, not an envelope.
      const state =
        parsed !== null && typeof parsed === 'object' && 'status' in parsed
          ? String(parsed.status)
          : 'unknown';
      return new ReplixUnavailableError(
        'starting',
        503,
        `the instance at ${shown(url)} is not serving yet (status ${state}); retry soon.`,
        asked,
      );
    }
    return invalid(url, status, 'an answer without an error envelope');
  }
}

function invalid(url: URL, status: number, what: string): ReplixConnectionError {
  return new ReplixConnectionError(
    'invalid_response',
    status,
    `the instance at ${shown(url)} answered HTTP ${status} with ${what}.`,
  );
}

import { SchemaNumbers } from './column-numbers.ts';
import {
  errorFor,
  ReplixConnectionError,
  type ReplixError,
  ReplixUnavailableError,
} from './errors.ts';
import { EtagCache, type EtagCacheOptions } from './etag-cache.ts';
import { exactRows, plainNumbers } from './exact-rows.ts';
import { readJson } from './json-reader.ts';
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
  /**
   * How rows carry numbers. `'exact'` (the default): BIGINT columns and sums of integers as
   * `bigint`, DECIMAL/NUMERIC columns and their SUM and AVG as strings of their exact digits,
   * other numbers as `number`, by each column's type in the instance's `/schema` (read once, on
   * the first query). `'plain'`: every number as JSON.parse reads it, rounded past a double's
   * 15 to 17 digits.
   */
  readonly numbers?: NumberMode;
  /** Reads answer bodies instead (overrides `numbers`): the rows are what it returns. */
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

/** The shortest time between two reads of `/schema` again for answers it did not cover. */
const SCHEMA_REREAD_MS = 10_000;

/** Longer GET URLs are sent as POST: proxies commonly refuse URLs over 8 KiB. */
export const MAX_GET_URL_LENGTH = 8000;

export type QueryText = string | RqlQuery;

/** `ReplixClientOptions.numbers`. */
export type NumberMode = 'exact' | 'plain';

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
  /** True when rows get exact numbers by the schema (no `parseJson`, `numbers` not plain). */
  readonly #exact: boolean;
  /** The instance's `/schema`, read once (again after an answer with a field it lacks). */
  #schema: Promise<SchemaNumbers> | undefined;
  /** The schema once read, for live results, which are read as they arrive. */
  #schemaRead: SchemaNumbers | undefined;
  #schemaStale = false;
  /** When `/schema` was last read again for a stale one (Date.now()). */
  #schemaRereadAt = Number.NEGATIVE_INFINITY;
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
    if (
      options.numbers !== undefined &&
      options.numbers !== 'exact' &&
      options.numbers !== 'plain'
    ) {
      throw new TypeError("ReplixClient: numbers must be 'exact' or 'plain'.");
    }
    this.#exact = options.parseJson === undefined && options.numbers !== 'plain';
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
  }

  /** Runs one query. `Row` types the rows (see `replix types` for every table's). */
  async query<Row = Record<string, unknown>>(
    query: QueryText,
    options: QueryOptions = {},
  ): Promise<QueryResult<Row>> {
    const text = queryText(query);
    // Read beside the first query, so exact numbers cost no extra round trip.
    const schema = this.#exact ? this.#schemaNumbers() : undefined;
    schema?.catch(() => {});
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
      return this.#answer<Row>(url, cached.body, cached.etag, true, response.status, schema);
    }
    const body = await this.#readBody(url, response);
    if (!response.ok) throw this.#error(url, response, body);
    const etag = response.headers.get('etag') ?? undefined;
    if (method === 'GET' && etag !== undefined) this.#cache?.set(get.href, etag, body);
    return this.#answer<Row>(url, body, etag, false, response.status, schema);
  }

  /** A query's result, its numbers by the schema when `schema` is given. */
  async #answer<Row>(
    url: URL,
    body: string,
    etag: string | undefined,
    cached: boolean,
    status: number,
    schema: Promise<SchemaNumbers> | undefined,
  ): Promise<QueryResult<Row>> {
    if (schema === undefined) return this.#result<Row>(url, body, etag, cached, status);
    const first = await schema;
    const result = this.#exactResult<Row>(url, body, etag, cached, status, first);
    if (result.known) return result.value;
    // A table or field the schema lacks: the instance may have been rebuilt since. Once more.
    const fresh = await this.#schemaNumbers(schema);
    return this.#exactResult<Row>(url, body, etag, cached, status, fresh).value;
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
          if (this.#exact) await this.#schemaNumbers(this.#schemaStale ? this.#schema : undefined);
          const headers = { ...this.#authorization(), accept: 'text/event-stream' };
          if (lastEventId !== undefined) Object.assign(headers, { 'last-event-id': lastEventId });
          // One attempt: the live query's own backoff decides when to try again.
          const response = await this.#send(url, { headers, signal }, signal, NO_RETRIES);
          const type = response.headers.get('content-type') ?? '';
          if (response.ok && type.startsWith('text/event-stream') && response.body) return response;
          throw this.#error(url, response, await this.#readBody(url, response));
        },
        result: (data) => {
          if (!this.#exact || this.#schemaRead === undefined) {
            return this.#result<Row>(url, data, undefined, false, 200);
          }
          const result = this.#exactResult<Row>(url, data, undefined, false, 200, this.#schemaRead);
          // Read again before the next connection; this result has plain numbers there.
          if (!result.known) this.#schemaStale = true;
          return result.value;
        },
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

  /**
   * The instance's `/schema`, read once and shared; read again when `replacing` is the promise
   * still kept (so concurrent callers that found it stale read it once), at most once per
   * `SCHEMA_REREAD_MS` (answers with a key no schema has must not double every request).
   */
  #schemaNumbers(replacing?: Promise<SchemaNumbers>): Promise<SchemaNumbers> {
    if (
      replacing !== undefined &&
      this.#schema === replacing &&
      Date.now() - this.#schemaRereadAt >= SCHEMA_REREAD_MS
    ) {
      this.#schemaRereadAt = Date.now();
      this.#schema = undefined;
      this.#schemaStale = false;
    }
    if (this.#schema === undefined) {
      const reading = this.#readSchema().then(
        (schema) => {
          this.#schemaRead = schema;
          return schema;
        },
        (error: unknown) => {
          // A failed read is not kept: the next query tries again.
          if (this.#schema === reading) this.#schema = undefined;
          throw error;
        },
      );
      this.#schema = reading;
    }
    return this.#schema;
  }

  async #readSchema(): Promise<SchemaNumbers> {
    const url = new URL('schema', this.#base);
    const response = await this.#send(url, { headers: this.#authorization() }, undefined);
    const body = await this.#readBody(url, response);
    if (!response.ok) throw this.#error(url, response, body);
    try {
      return new SchemaNumbers(JSON.parse(body));
    } catch {
      throw invalid(url, response.status, 'a body that is not its schema');
    }
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

  /** A result read with `readJson`, each field's numbers as the schema says. */
  #exactResult<Row>(
    url: URL,
    body: string,
    etag: string | undefined,
    cached: boolean,
    status: number,
    schema: SchemaNumbers,
  ): { value: QueryResult<Row>; known: boolean } {
    let envelope: unknown;
    try {
      envelope = readJson(body);
    } catch {
      throw invalid(url, status, 'a body that is not JSON');
    }
    if (!isEnvelope(envelope)) throw invalid(url, status, 'a body that is not a query result');
    plainNumbers(envelope.meta);
    const { table } = envelope.meta;
    let known = false;
    if (typeof table === 'string' && schema.table(table) !== undefined) {
      known = exactRows(envelope.data, table, schema);
    } else {
      plainNumbers(envelope.data);
    }
    const value = { data: envelope.data as Row[], meta: envelope.meta, etag, cached, body };
    return { value, known };
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
    if (status === 404) {
      // The usual cause: the control plane's address (or another server's) given as the URL.
      return new ReplixConnectionError(
        'invalid_response',
        404,
        `${shown(url)} answered HTTP 404 without an instance's error envelope: it is not a database's instance. Use the database's endpoint URL (\`npx replix databases show <database>\` prints it), not the control plane's address.`,
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
